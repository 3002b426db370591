#include "runtime/port_check.hpp"

#include <string>

#include <troupe/exception.hpp>

namespace troupe {

void check_tensor(const char* kind, const Port& p, const Tensor& t) {
  const auto& name = p.get_any_name();
  if (t.empty()) throw Exception(std::string(kind) + " '" + name + "': the tensor is empty");
  if (t.get_element_type() != p.get_element_type())
    throw Exception(std::string(kind) + " '" + name + "': wrong element type: expected " +
                    to_string(p.get_element_type()) + ", got " + to_string(t.get_element_type()));
  const auto& ps = p.get_partial_shape();
  if (!ps.rank_known) return;
  const auto& s = t.get_shape();
  bool ok = s.size() == ps.rank();
  for (std::size_t i = 0; ok && i < s.size(); ++i) ok = ps.dims[i] < 0 || ps.dims[i] == s[i];
  if (!ok)
    throw Exception(std::string(kind) + " '" + name + "': wrong shape: expected " + ps.to_string() + ", got " +
                    to_string(s));
}

} // namespace troupe
