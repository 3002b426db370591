#pragma once
/// -ip, -op and -iop: the element types a model's inputs are filled in and its outputs handed
/// back in. troupe's runtime has no pre/post-processing (OpenVINO's PrePostProcessor), so the
/// tool converts on the host (element_convert.hpp).
#include <map>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

namespace troupe::cli {

/// An element type named on the command line ("u8", "f32", "fp16", "int64", ...); usage_error
/// naming `flag` for an unknown name or a type values cannot be converted to.
element_type parse_io_type(const std::string& flag, const std::string& text);

/// -iop "x:f16, out:f32" -> name -> type (syntax only).
std::map<std::string, element_type> parse_iop(const std::string& text);

struct io_types {
  std::map<std::string, element_type> inputs;  ///< only the inputs whose type changes
  std::map<std::string, element_type> outputs; ///< only the outputs whose type changes
};

/// -iop wins over -ip/-op for the ports it names; names are checked against the model.
io_types resolve_io_types(const std::string& ip, const std::string& op, const std::string& iop,
                          const std::vector<Port>& inputs, const std::vector<Port>& outputs);

} // namespace troupe::cli
