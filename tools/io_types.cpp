#include "tools/io_types.hpp"

#include <algorithm>

#include "tools/args.hpp"
#include "tools/element_convert.hpp"

namespace troupe::cli {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

} // namespace

element_type parse_io_type(const std::string& flag, const std::string& text) {
  // OpenVINO's names first (getPrecision2 also reads FP32/FP16/U8/... in capitals).
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "fp32") t = "f32";
  if (t == "fp16") t = "f16";
  if (t == "fp64") t = "f64";
  element_type r;
  try {
    r = element_type_from_string(t);
  } catch (const Exception&) {
    throw usage_error(flag + " takes an element type (f32, f16, bf16, f64, i8, i16, i32, i64, u8, u16, u32, u64, "
                             "boolean), got '" + text + "'");
  }
  if (!convertible(r)) throw usage_error(flag + ": troupe cannot convert values to or from " + to_string(r));
  return r;
}

std::map<std::string, element_type> parse_iop(const std::string& text) {
  std::map<std::string, element_type> r;
  for (const auto& entry : comma_items(text)) {
    auto item = trim(entry);
    auto colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
      throw usage_error("-iop takes name:type entries separated by ',' (e.g. \"x:f16, y:f32\"), got '" + text + "'");
    r[trim(item.substr(0, colon))] = parse_io_type("-iop", trim(item.substr(colon + 1)));
  }
  return r;
}

io_types resolve_io_types(const std::string& ip, const std::string& op, const std::string& iop,
                          const std::vector<Port>& inputs, const std::vector<Port>& outputs) {
  io_types r;
  if (!ip.empty()) {
    auto t = parse_io_type("-ip", ip);
    for (const auto& p : inputs) r.inputs[p.get_any_name()] = t;
  }
  if (!op.empty()) {
    auto t = parse_io_type("-op", op);
    for (const auto& p : outputs) r.outputs[p.get_any_name()] = t;
  }
  if (!iop.empty()) {
    for (const auto& entry : parse_iop(iop)) {
      const auto& [name, t] = entry;
      // Captures the pair, not its bindings: clang before 16 refuses a lambda capturing those.
      auto named = [&entry](const Port& p) { return p.get_any_name() == entry.first; };
      if (std::any_of(inputs.begin(), inputs.end(), named)) r.inputs[name] = t;
      else if (std::any_of(outputs.begin(), outputs.end(), named)) r.outputs[name] = t;
      else {
        std::string all;
        for (const auto& p : inputs) all += (all.empty() ? "'" : ", '") + p.get_any_name() + "'";
        for (const auto& p : outputs) all += (all.empty() ? "'" : ", '") + p.get_any_name() + "'";
        throw Exception("-iop: the model has no input or output '" + name + "'; it has " + all);
      }
    }
  }
  // A port whose model type cannot be converted (string) cannot take another type.
  auto check = [&](const std::vector<Port>& ports, const std::map<std::string, element_type>& types, const char* what) {
    for (const auto& p : ports)
      if (types.count(p.get_any_name()) && !convertible(p.get_element_type()))
        throw Exception(std::string(what) + " '" + p.get_any_name() + "' is " + to_string(p.get_element_type()) +
                        "; troupe cannot convert it to " + to_string(types.at(p.get_any_name())) +
                        " (-ip/-op/-iop)");
  };
  check(inputs, r.inputs, "input");
  check(outputs, r.outputs, "output");
  for (const auto* ports : {&inputs, &outputs})
    for (const auto& p : *ports) {
      auto& m = ports == &inputs ? r.inputs : r.outputs;
      if (auto it = m.find(p.get_any_name()); it != m.end() && it->second == p.get_element_type()) m.erase(it);
    }
  return r;
}

} // namespace troupe::cli
