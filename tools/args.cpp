#include "tools/args.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

namespace troupe::cli {

std::string args::get(const std::string& flag, const std::string& def) const {
  auto it = values.find(flag);
  return it == values.end() ? def : it->second.back();
}

std::string args::need(const std::string& flag) const {
  auto it = values.find(flag);
  if (it == values.end()) throw usage_error("missing " + flag);
  return it->second.back();
}

int args::get_int(const std::string& flag, int def) const {
  if (!has(flag)) return def;
  auto s = get(flag);
  std::size_t used = 0;
  int v = 0;
  try { v = std::stoi(s, &used); } catch (...) { used = 0; }
  if (used != s.size() || s.empty()) throw usage_error(flag + " needs an integer, got '" + s + "'");
  return v;
}

double args::get_double(const std::string& flag, double def) const {
  if (!has(flag)) return def;
  auto s = get(flag);
  std::size_t used = 0;
  double v = 0;
  try { v = std::stod(s, &used); } catch (...) { used = 0; }
  if (used != s.size() || s.empty()) throw usage_error(flag + " needs a number, got '" + s + "'");
  return v;
}

args parse_args(int argc, char** argv, int first, const std::vector<std::string>& value_flags,
                const std::vector<std::string>& switch_flags) {
  args a;
  for (int i = first; i < argc; ++i) {
    std::string f = argv[i];
    if (f.size() > 2 && f[0] == '-' && f[1] == '-') f = f.substr(1); // --flag == -flag
    bool takes_value = false, is_switch = false;
    for (const auto& v : value_flags) takes_value = takes_value || v == f;
    for (const auto& s : switch_flags) is_switch = is_switch || s == f;
    if (is_switch) {
      a.switches[f] = true;
    } else if (takes_value) {
      if (i + 1 >= argc) throw usage_error(f + " needs a value");
      a.values[f].push_back(argv[++i]);
    } else {
      throw usage_error("unknown argument '" + f + "'");
    }
  }
  return a;
}

std::map<std::string, PartialShape> parse_shapes(const std::string& text) {
  std::map<std::string, PartialShape> r;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto open = text.find('[', pos);
    if (open == std::string::npos) throw Exception("bad -shape '" + text + "': expected name[dims]");
    auto close = text.find(']', open);
    if (close == std::string::npos) throw Exception("bad -shape '" + text + "': missing ']'");
    std::string name = text.substr(pos, open - pos);
    if (r.count(name)) throw Exception("bad -shape '" + text + "': input '" + name + "' given twice");
    r[name] = PartialShape::parse(text.substr(open + 1, close - open - 1));
    pos = close + 1;
    if (pos < text.size()) {
      if (text[pos] != ',') throw Exception("bad -shape '" + text + "': expected ',' after ']'");
      ++pos;
    }
  }
  if (r.empty()) throw Exception("bad -shape '" + text + "': no shape");
  if (r.count("") && r.size() > 1) throw Exception("bad -shape '" + text + "': unnamed shape among several");
  return r;
}

void apply_shapes(Model& model, const std::string& text) {
  auto shapes = parse_shapes(text);
  if (shapes.count("")) {
    auto ins = model.inputs();
    if (ins.size() != 1)
      throw Exception("-shape without an input name needs a model with one input; this one has " +
                      std::to_string(ins.size()));
    model.reshape(shapes.at(""));
    return;
  }
  model.reshape(shapes); // unknown names: Model::input names them
}

uint32_t seeded_generator::next_u32() {
  // mulberry32, as tools/ort/bench.js writes it (32-bit wrap-around arithmetic).
  state_ += 0x6D2B79F5u;
  uint32_t t = (state_ ^ (state_ >> 15)) * (1u | state_);
  t = (t + ((t ^ (t >> 7)) * (61u | t))) ^ t;
  return t ^ (t >> 14);
}

void seeded_generator::fill(Tensor& t) {
  const int64_t n = t.get_size();
  auto draw = [&] { return next_float(); };
  switch (t.get_element_type()) {
  case element_type::f32: { auto* p = t.data<float>(); for (int64_t i = 0; i < n; ++i) p[i] = draw(); break; }
  case element_type::f64: { auto* p = t.data<double>(); for (int64_t i = 0; i < n; ++i) p[i] = draw(); break; }
  case element_type::i64: { auto* p = t.data<int64_t>(); for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(draw()); break; }
  case element_type::i32: { auto* p = t.data<int32_t>(); for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(draw()); break; }
  default: {
    // Other types: the draws are consumed (so later inputs stay in step) and the data stays 0.
    for (int64_t i = 0; i < n; ++i) draw();
    std::memset(t.data(), 0, t.get_byte_size());
  }
  }
}

Shape concrete_shape(const Port& p) {
  if (!p.get_partial_shape().is_static())
    throw Exception("input '" + p.get_any_name() + "' has dynamic shape " + p.get_partial_shape().to_string() +
                    "; give it with -shape " + p.get_any_name() + "[...]");
  return p.get_shape();
}

void write_file(const std::string& path, const void* data, std::size_t size) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Exception("cannot write '" + path + "': " + std::strerror(errno));
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!f) throw Exception("error writing '" + path + "'");
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Exception("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

} // namespace troupe::cli
