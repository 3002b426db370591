#pragma once
/// The one error type of troupe. Every layer throws it (it is a leaf header with no
/// dependencies), so a message that names the file, op, node, input, device or property
/// reaches the user unchanged.
#include <troupe/export.hpp>
#include <stdexcept>
#include <string>

namespace troupe {

class TROUPE_API Exception : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace troupe
