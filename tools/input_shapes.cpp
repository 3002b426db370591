#include "tools/input_shapes.hpp"

#include <algorithm>
#include <cctype>

#include "tools/args.hpp"
#include "tools/log.hpp"

namespace troupe::cli {

std::string names_of(const std::vector<Port>& ports) {
  std::string all;
  for (const auto& p : ports) all += (all.empty() ? "'" : ", '") + p.get_any_name() + "'";
  return all;
}

std::map<std::string, std::vector<std::string>> by_input(const std::string& flag, const std::string& text,
                                                         const std::vector<Port>& ports) {
  std::map<std::string, std::vector<std::string>> r;
  if (text.empty()) return r;
  for (const auto& e : parse_per_input(flag, text)) {
    if (e.name.empty()) {
      for (const auto& p : ports) r[p.get_any_name()] = e.values;
      continue;
    }
    bool known = std::any_of(ports.begin(), ports.end(), [&](const Port& p) { return p.get_any_name() == e.name; });
    if (!known) throw Exception(flag + ": the model has no input '" + e.name + "'; its inputs: " + names_of(ports));
    r[e.name] = e.values;
  }
  return r;
}

namespace {

PartialShape parse_shape(const std::string& flag, const std::string& input, const std::string& text) {
  try {
    return PartialShape::parse(text);
  } catch (const Exception& e) {
    throw Exception(flag + " for input '" + input + "': " + e.what());
  }
}

/// benchmark_app's guess for an input without a layout: images by rank, channels-first unless
/// the last dim looks like 1-4 channels and the second does not.
std::string default_layout(const PartialShape& s) {
  if (!s.rank_known) return "";
  auto max_len = [&](std::size_t i) { return s.dims[i]; }; // dynamic: -1, as OpenVINO's max length
  if (s.rank() == 4) return max_len(3) <= 4 && max_len(1) > 4 ? "NHWC" : "NCHW";
  if (s.rank() == 3) return max_len(2) <= 4 && max_len(0) > 4 ? "HWC" : "CHW";
  return "";
}

bool compatible(const PartialShape& p, const Shape& s) {
  if (!p.rank_known) return true;
  if (p.rank() != s.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (p.dims[i] >= 0 && p.dims[i] != s[i]) return false;
  return true;
}

} // namespace

std::vector<per_input_value> parse_per_input(const std::string& flag, const std::string& text) {
  std::vector<per_input_value> r;
  std::size_t pos = 0;
  auto bad = [&](const std::string& why) -> usage_error {
    return usage_error(flag + " takes name[...] entries separated by ',' (or one [...] for every input), got '" +
                       text + "': " + why);
  };
  while (pos < text.size()) {
    auto open = text.find('[', pos);
    if (open == std::string::npos) throw bad("expected '[' after '" + text.substr(pos) + "'");
    per_input_value e;
    e.name = text.substr(pos, open - pos);
    for (const auto& other : r)
      if (other.name == e.name) throw bad("input '" + e.name + "' given twice");
    pos = open;
    while (pos < text.size() && text[pos] == '[') {
      auto close = text.find(']', pos);
      if (close == std::string::npos) throw bad("missing ']'");
      e.values.push_back(text.substr(pos + 1, close - pos - 1));
      pos = close + 1;
    }
    r.push_back(std::move(e));
    if (pos < text.size()) {
      if (text[pos] != ',') throw bad("expected ',' after ']'");
      ++pos;
      if (pos == text.size()) throw bad("nothing after the last ','");
    }
  }
  if (r.empty()) throw bad("no value");
  const bool unnamed = std::any_of(r.begin(), r.end(), [](const per_input_value& e) { return e.name.empty(); });
  if (unnamed && r.size() > 1) throw bad("an unnamed [...] applies to every input and cannot sit among named ones");
  return r;
}

std::string parse_layout(const std::string& flag, const std::string& text) {
  std::string r;
  for (char c : text) {
    if (c == ',' || c == ' ') continue;
    if (c != '?' && !std::isalpha(static_cast<unsigned char>(c)))
      throw usage_error(flag + " takes one letter per dimension (as NCHW or N,C,H,W; '?' for any), got '" + text + "'");
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (u != '?' && r.find(u) != std::string::npos)
      throw usage_error(flag + ": layout '" + text + "' names dimension " + std::string(1, u) + " twice");
    r += u;
  }
  if (r.empty()) throw usage_error(flag + " takes one letter per dimension (as NCHW), got an empty layout");
  return r;
}

std::string shape_text(const PartialShape& s) {
  if (!s.rank_known) return "[...]";
  std::string r = "[";
  for (std::size_t i = 0; i < s.dims.size(); ++i) {
    if (i) r += ',';
    r += s.dims[i] < 0 ? std::string("?") : std::to_string(s.dims[i]);
  }
  r += ']';
  return r;
}

std::string layout_text(const std::string& layout) {
  if (layout.empty()) return "[...]";
  std::string r = "[";
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (i) r += ',';
    r += layout[i];
  }
  r += ']';
  return r;
}

int input_info::batch_index() const {
  auto n = layout.find('N');
  return n == std::string::npos ? -1 : static_cast<int>(n);
}

bool input_setup::dynamic() const {
  return std::any_of(inputs.begin(), inputs.end(), [](const input_info& i) { return !i.shape.is_static(); });
}

int64_t input_setup::batch(std::size_t c) const {
  int64_t b = 0;
  for (const auto& in : inputs) {
    const int n = in.batch_index();
    if (n < 0 || in.data_shapes.empty()) continue;
    const auto& s = in.data_shapes[c % in.data_shapes.size()];
    const int64_t v = s[static_cast<std::size_t>(n)];
    if (b != 0 && v != b)
      throw Exception("cannot tell the batch size: inputs have different N (" + std::to_string(b) + " and " +
                      std::to_string(v) + " of '" + in.name + "'); set -layout so that one N is meant");
    b = v;
  }
  return b == 0 ? 1 : b;
}

std::string input_setup::data_shapes_text(std::size_t c) const {
  std::string r;
  for (const auto& in : inputs)
    if (!in.data_shapes.empty())
      r += (r.empty() ? "" : ",") + in.name + to_string(in.data_shapes[c % in.data_shapes.size()]);
  return r;
}

input_setup resolve_inputs(const std::vector<Port>& ports, const shape_flags& f, bool need_data) {
  auto shapes = by_input("-shape", f.shape, ports);
  auto data_shapes = by_input("-data_shape", f.data_shape, ports);
  auto layouts = by_input("-layout", f.layout, ports);
  input_setup r;
  bool any_batch_dim = false;
  for (const auto& p : ports) {
    input_info in;
    in.name = p.get_any_name();
    in.type = p.get_element_type();
    in.shape = p.get_partial_shape();
    if (auto it = shapes.find(in.name); it != shapes.end()) {
      if (it->second.size() != 1) throw usage_error("-shape takes one shape per input; '" + in.name + "' has " +
                                                    std::to_string(it->second.size()));
      in.shape = parse_shape("-shape", in.name, it->second[0]);
      r.reshape[in.name] = in.shape;
    }
    if (auto it = layouts.find(in.name); it != layouts.end()) {
      if (it->second.size() != 1) throw usage_error("-layout takes one layout per input; '" + in.name + "' has " +
                                                     std::to_string(it->second.size()));
      in.layout = parse_layout("-layout", it->second[0]);
      if (in.shape.rank_known && in.layout.size() != in.shape.rank())
        throw Exception("-layout " + layout_text(in.layout) + " for input '" + in.name + "' has " +
                        std::to_string(in.layout.size()) + " dimensions; the input has " +
                        std::to_string(in.shape.rank()) + ": " + shape_text(in.shape));
    } else {
      in.layout = default_layout(in.shape);
      in.layout_defaulted = true;
      if (f.warn_default_layout)
        warn("%s: layout is not set explicitly%s. Set it with -layout %s[...] when the guess is wrong.", in.name.c_str(),
           in.layout.empty() ? "" : (", so it is defaulted to " + in.layout).c_str(), in.name.c_str());
    }

    auto ds = data_shapes.find(in.name);
    if (in.shape.is_static()) {
      if (ds != data_shapes.end())
        throw Exception("-data_shape: input '" + in.name + "' is static " + shape_text(in.shape) +
                        "; use -shape for static inputs");
      in.data_shapes.push_back(in.shape.to_shape());
    } else if (ds != data_shapes.end()) {
      for (const auto& text : ds->second) {
        auto s = parse_shape("-data_shape", in.name, text);
        if (!s.is_static())
          throw Exception("-data_shape for input '" + in.name + "': " + shape_text(s) + " is dynamic; data shapes are concrete");
        if (!compatible(in.shape, s.to_shape()))
          throw Exception("-data_shape " + shape_text(s) + " for input '" + in.name +
                          "' does not fit its shape " + shape_text(in.shape));
        in.data_shapes.push_back(s.to_shape());
      }
    } else if (!data_shapes.empty()) {
      throw Exception("-data_shape gives no shape for input '" + in.name + "' (dynamic " + shape_text(in.shape) + ")");
    } else if (need_data) {
      throw Exception("input '" + in.name + "' has dynamic shape " + shape_text(in.shape) +
                      "; give the shape of its data with -data_shape " + in.name +
                      "[...] or fix it with -shape " + in.name + "[...]");
    }

    if (f.batch != 0) {
      const int n = in.batch_index();
      if (n < 0) {
        warn("Input '%s' doesn't have batch dimension in layout %s. -b option will be ignored for this input.",
             in.name.c_str(), layout_text(in.layout).c_str());
      } else {
        const auto b = static_cast<int64_t>(f.batch);
        const auto i = static_cast<std::size_t>(n);
        any_batch_dim = true;
        // A static input is reshaped; a dynamic one keeps its shape and only its data changes.
        if (in.shape.is_static() && in.shape.dims[i] != b) {
          in.shape.dims[i] = b;
          r.reshape[in.name] = in.shape;
        }
        for (auto& s : in.data_shapes) s[i] = b;
      }
    }
    r.inputs.push_back(std::move(in));
  }
  if (f.batch > 1 && !any_batch_dim)
    throw Exception("-b " + std::to_string(f.batch) +
                    ": no input has a batch dimension (N) in its layout, so the batch cannot be set; "
                    "give the layout with -layout, e.g. -layout [NCHW]");
  std::size_t groups = 1;
  for (const auto& in : r.inputs)
    if (in.data_shapes.size() > 1) {
      if (groups > 1 && in.data_shapes.size() != groups)
        throw Exception("-data_shape: every input takes 1 shape or the same number as the others (" +
                        std::to_string(groups) + "); '" + in.name + "' has " + std::to_string(in.data_shapes.size()));
      groups = in.data_shapes.size();
    }
  r.configurations = groups;
  return r;
}

} // namespace troupe::cli

namespace troupe::cli {

void apply_shapes(Model& model, const std::string& text) {
  std::map<std::string, PartialShape> r;
  for (const auto& [name, values] : by_input("-shape", text, model.inputs())) {
    if (values.size() != 1)
      throw usage_error("-shape takes one shape per input; '" + name + "' has " + std::to_string(values.size()));
    r[name] = parse_shape("-shape", name, values[0]);
  }
  model.reshape(r);
}

} // namespace troupe::cli
