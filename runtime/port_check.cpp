#include "runtime/port_check.hpp"

#include <map>
#include <string>
#include <utility>

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
  for (std::size_t i = 0; i < s.size(); ++i)
    if (!ps.range(i).contains(s[i]))
      throw Exception(std::string(kind) + " '" + name + "': wrong shape: expected " + ps.to_string() + ", got " +
                      to_string(s) + " (dimension " + std::to_string(i) + " is " + std::to_string(s[i]) +
                      ", outside " + PartialShape::dim_text(-1, ps.range(i)) + ")");
}

void check_named_dims(const std::vector<Port>& ports, const std::vector<Tensor>& inputs) {
  std::map<std::string, std::pair<int64_t, std::string>> seen; // dim name -> value, where
  for (std::size_t i = 0; i < ports.size() && i < inputs.size(); ++i) {
    const auto& ps = ports[i].get_partial_shape();
    if (inputs[i].empty() || !ps.rank_known) continue;
    const auto& s = inputs[i].get_shape();
    for (std::size_t d = 0; d < ps.symbols.size() && d < s.size() && d < ps.rank(); ++d) {
      const std::string& sym = ps.symbols[d];
      if (sym.empty() || ps.dims[d] >= 0) continue;
      const std::string here = "input '" + ports[i].get_any_name() + "' dim " + std::to_string(d);
      auto [it, fresh] = seen.emplace(sym, std::make_pair(s[d], here));
      if (!fresh && it->second.first != s[d])
        throw Exception("inputs disagree on the dynamic dimension '" + sym + "': " + it->second.second + " is " +
                        std::to_string(it->second.first) + ", " + here + " is " + std::to_string(s[d]));
    }
  }
}

} // namespace troupe
