#include "graph/ir_op_mapping.hpp"
#include "graph/shape_inference.hpp"

#include <troupe/exception.hpp>
#include <troupe/float16.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

namespace troupe::graph::ir {

std::string describe(const layer& l) {
  return "layer " + std::to_string(l.id) + " '" + l.name + "' (" + l.type + ", " + l.version + ")";
}

builder::builder(Graph& graph, const layer& lay, std::vector<ValueId> in, std::string where)
    : l(lay), g(graph), in_(std::move(in)), where_(std::move(where)) {}

void builder::fail(const std::string& why) const { throw Exception(where_ + why); }

std::string builder::str(const std::string& k, const std::string& def) const {
  auto it = l.data.find(k);
  return it == l.data.end() ? def : it->second;
}

std::string builder::str(const std::string& k) const {
  auto it = l.data.find(k);
  if (it == l.data.end()) fail("attribute '" + k + "' is missing");
  return it->second;
}

namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::optional<int64_t> to_int(const std::string& text) {
  std::string s = trim(text);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> to_double(const std::string& text) {
  std::string s = trim(text);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

} // namespace

int64_t builder::i64(const std::string& k, int64_t def) const { return has(k) ? i64(k) : def; }

int64_t builder::i64(const std::string& k) const {
  auto v = to_int(str(k));
  if (!v) fail("attribute '" + k + "' = '" + str(k) + "' is not an integer");
  return *v;
}

double builder::f64(const std::string& k, double def) const { return has(k) ? f64(k) : def; }

double builder::f64(const std::string& k) const {
  auto v = to_double(str(k));
  if (!v) fail("attribute '" + k + "' = '" + str(k) + "' is not a number");
  return *v;
}

bool builder::flag(const std::string& k, bool def) const {
  if (!has(k)) return def;
  std::string s = trim(str(k));
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "true" || s == "1") return true;
  if (s == "false" || s == "0") return false;
  fail("attribute '" + k + "' = '" + s + "' is not a boolean");
}

std::vector<int64_t> builder::ints(const std::string& k, std::vector<int64_t> def) const {
  if (!has(k)) return def;
  return ints_required(k);
}

std::vector<int64_t> builder::ints_required(const std::string& k) const {
  std::string s = str(k);
  std::vector<int64_t> r;
  if (trim(s).empty()) return r;
  std::size_t b = 0;
  while (b <= s.size()) {
    std::size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    auto v = to_int(s.substr(b, e - b));
    if (!v) fail("attribute '" + k + "' = '" + s + "' is not a list of integers");
    r.push_back(*v);
    b = e + 1;
  }
  return r;
}

std::vector<float> builder::floats(const std::string& k) const {
  std::vector<float> r;
  if (!has(k)) return r;
  const std::string s = str(k);
  if (trim(s).empty()) return r;
  for (std::size_t b = 0; b <= s.size();) {
    std::size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    auto v = to_double(s.substr(b, e - b));
    if (!v) fail("attribute '" + k + "' = '" + s + "' is not a list of numbers");
    r.push_back(static_cast<float>(*v));
    b = e + 1;
  }
  return r;
}

ValueId builder::input(std::size_t i) const {
  if (i >= in_.size() || in_[i] == no_value) fail("input " + std::to_string(i) + " is missing");
  return in_[i];
}

element_type builder::in_type(std::size_t i) const {
  ValueId v = input(i);
  if (g.value(v).type != element_type::undefined) return g.value(v).type;
  return i < l.inputs.size() ? l.inputs[i].type : element_type::undefined;
}

std::size_t builder::in_rank(std::size_t i) const {
  ValueId v = input(i);
  if (g.value(v).shape.rank_known) return g.value(v).shape.rank();
  if (i < l.inputs.size() && l.inputs[i].shape.rank_known) return l.inputs[i].shape.rank();
  fail("the rank of input " + std::to_string(i) + " is unknown");
}

const Tensor* builder::constant(std::size_t i) const {
  if (i >= in_.size() || !g.is_constant(in_[i])) return nullptr;
  return &*g.value(in_[i]).constant;
}

const Op* producer_of(const Graph& g, ValueId v) {
  if (v == no_value) return nullptr;
  for (auto it = g.ops.rbegin(); it != g.ops.rend(); ++it)
    if (std::find(it->outputs.begin(), it->outputs.end(), v) != it->outputs.end()) return &*it;
  return nullptr;
}

std::optional<std::vector<double>> doubles_of(const Tensor& t) {
  std::vector<double> r(static_cast<std::size_t>(t.get_size()));
  for (std::size_t k = 0; k < r.size(); ++k) {
    switch (t.get_element_type()) {
    case element_type::f32: r[k] = t.data<float>()[k]; break;
    case element_type::f64: r[k] = t.data<double>()[k]; break;
    case element_type::f16: r[k] = half_bits_to_float(t.data<uint16_t>()[k]); break;
    case element_type::i64: r[k] = static_cast<double>(t.data<int64_t>()[k]); break;
    case element_type::i32: r[k] = t.data<int32_t>()[k]; break;
    case element_type::u64: r[k] = static_cast<double>(t.data<uint64_t>()[k]); break;
    case element_type::u32: r[k] = t.data<uint32_t>()[k]; break;
    case element_type::i16: r[k] = t.data<int16_t>()[k]; break;
    case element_type::u16: r[k] = t.data<uint16_t>()[k]; break;
    case element_type::i8: r[k] = t.data<int8_t>()[k]; break;
    case element_type::u8: r[k] = t.data<uint8_t>()[k]; break;
    case element_type::boolean: r[k] = t.data<bool>()[k]; break;
    default: return std::nullopt;
    }
  }
  return r;
}

std::vector<double> builder::const_doubles(std::size_t i, const std::string& what) const {
  const Tensor* t = constant(i);
  if (!t) fail(what + " (input " + std::to_string(i) + ") must be a constant");
  auto r = doubles_of(*t);
  if (!r) fail(what + " has the unsupported element type " + to_string(t->get_element_type()));
  return *r;
}

std::optional<std::pair<std::vector<double>, Shape>> builder::known_values(std::size_t i) const {
  if (i >= in_.size() || in_[i] == no_value) return std::nullopt;
  const Tensor* t = constant(i);
  if (!t) { // the Cast a Convert layer emitted
    const Op* cast = producer_of(g, in_[i]);
    const element_type to = g.value(in_[i]).type;
    if (!cast || cast->type != "Cast" || !cast->domain.empty() || cast->inputs.size() != 1 || !g.is_constant(cast->inputs[0]) ||
        (to != element_type::f32 && to != element_type::f64))
      return std::nullopt;
    t = &*g.value(cast->inputs[0]).constant;
  }
  auto r = doubles_of(*t);
  if (!r) return std::nullopt;
  return std::pair{std::move(*r), t->get_shape()};
}

std::vector<int64_t> builder::const_ints(std::size_t i, const std::string& what) const {
  const Tensor* t = constant(i);
  if (!t) fail(what + " (input " + std::to_string(i) + ") must be a constant");
  std::vector<int64_t> r(static_cast<std::size_t>(t->get_size()));
  for (std::size_t k = 0; k < r.size(); ++k) {
    switch (t->get_element_type()) {
    case element_type::i64: r[k] = t->data<int64_t>()[k]; break;
    case element_type::i32: r[k] = t->data<int32_t>()[k]; break;
    case element_type::u64: r[k] = static_cast<int64_t>(t->data<uint64_t>()[k]); break;
    case element_type::u32: r[k] = t->data<uint32_t>()[k]; break;
    case element_type::i16: r[k] = t->data<int16_t>()[k]; break;
    case element_type::u16: r[k] = t->data<uint16_t>()[k]; break;
    case element_type::i8: r[k] = t->data<int8_t>()[k]; break;
    case element_type::u8: r[k] = t->data<uint8_t>()[k]; break;
    default: fail(what + " must be integers, not " + to_string(t->get_element_type()));
    }
  }
  return r;
}

std::vector<ValueId> builder::op_n(const std::string& type, std::vector<ValueId> inputs,
                                   std::map<std::string, AttributeValue> attrs, std::size_t outputs,
                                   const std::string& domain) {
  Op o;
  o.type = type;
  o.domain = domain;
  o.name = l.name + "/" + type + "_" + std::to_string(counter_++);
  o.inputs = std::move(inputs);
  o.attrs = std::move(attrs);
  for (std::size_t k = 0; k < outputs; ++k) {
    Value v;
    v.name = o.name + ":" + std::to_string(k);
    o.outputs.push_back(g.add_value(std::move(v)));
  }
  emitted.push_back(g.ops.size());
  g.ops.push_back(std::move(o));
  // Types and shapes now, so that later layers' mappings see their inputs' ranks.
  const Op& added = g.ops.back();
  std::vector<value_info> info;
  try {
    info = infer_op(g, added);
  } catch (const Exception& e) {
    fail(e.what());
  }
  for (std::size_t k = 0; k < info.size() && k < added.outputs.size(); ++k) {
    g.value(added.outputs[k]).type = info[k].type;
    g.value(added.outputs[k]).shape = info[k].shape;
  }
  return added.outputs;
}

ValueId builder::op(const std::string& type, std::vector<ValueId> inputs, std::map<std::string, AttributeValue> attrs) {
  return op_n(type, std::move(inputs), std::move(attrs), 1).front();
}

ValueId builder::constant(Tensor t) {
  return g.add_constant(l.name + "/const_" + std::to_string(counter_++), std::move(t));
}

ValueId builder::i64s(const std::vector<int64_t>& v) {
  Tensor t(element_type::i64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return constant(std::move(t));
}

ValueId builder::i64_scalar(int64_t v) {
  Tensor t(element_type::i64, {});
  *t.data<int64_t>() = v;
  return constant(std::move(t));
}

Tensor builder::make_tensor(const std::vector<double>& v, element_type type, Shape shape) {
  Tensor t(type, std::move(shape));
  for (std::size_t k = 0; k < v.size(); ++k) {
    switch (type) {
    case element_type::f32: t.data<float>()[k] = static_cast<float>(v[k]); break;
    case element_type::f64: t.data<double>()[k] = v[k]; break;
    case element_type::f16: t.data<uint16_t>()[k] = float_to_half_bits(static_cast<float>(v[k])); break;
    case element_type::i64: t.data<int64_t>()[k] = static_cast<int64_t>(v[k]); break;
    case element_type::i32: t.data<int32_t>()[k] = static_cast<int32_t>(v[k]); break;
    case element_type::i8: t.data<int8_t>()[k] = static_cast<int8_t>(v[k]); break;
    case element_type::u8: t.data<uint8_t>()[k] = static_cast<uint8_t>(v[k]); break;
    default: throw Exception("a constant of type " + to_string(type) + " cannot be made here");
    }
  }
  return t;
}

ValueId builder::scalar(double v, element_type t) {
  if (t == element_type::undefined) t = element_type::f32;
  return constant(make_tensor({v}, t, {}));
}

std::optional<element_type> parse_element_type(const std::string& text) {
  std::string s = trim(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const std::map<std::string, element_type> m = {
      {"fp32", element_type::f32},  {"f32", element_type::f32},      {"fp16", element_type::f16},
      {"f16", element_type::f16},   {"bf16", element_type::bf16},    {"fp64", element_type::f64},
      {"f64", element_type::f64},   {"i8", element_type::i8},        {"i16", element_type::i16},
      {"i32", element_type::i32},   {"i64", element_type::i64},      {"u8", element_type::u8},
      {"u16", element_type::u16},   {"u32", element_type::u32},      {"u64", element_type::u64},
      {"bool", element_type::boolean}, {"boolean", element_type::boolean},
      {"dynamic", element_type::undefined}, {"undefined", element_type::undefined},
      {"unspecified", element_type::undefined}};
  auto it = m.find(s);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

std::string precision_name(element_type t) {
  switch (t) {
  case element_type::f32: return "FP32";
  case element_type::f16: return "FP16";
  case element_type::bf16: return "BF16";
  case element_type::f64: return "FP64";
  case element_type::boolean: return "BOOL";
  default: break;
  }
  std::string s = to_string(t);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

const op_table& ops() {
  static const op_table t = [] {
    op_table r;
    add_elementwise_ops(r);
    add_nn_ops(r);
    add_tensor_ops(r);
    add_detection_ops(r);
    add_control_ops(r);
    add_recurrent_ops(r);
    return r;
  }();
  return t;
}

const mapper* find_mapper(const std::string& type, const std::string& version) {
  auto it = ops().find(type);
  if (it == ops().end()) return nullptr;
  for (const auto& e : it->second)
    if (std::find(e.versions.begin(), e.versions.end(), version) != e.versions.end()) return &e.map;
  return nullptr;
}

} // namespace troupe::graph::ir
