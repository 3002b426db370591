/// IR element-wise ops and activations -> ONNX: binary arithmetic and comparisons (numpy
/// broadcasting), unary math, the activations, Convert, Select, FakeQuantize (as
/// QuantizeLinear + DequantizeLinear where it is one, else decomposed).
#include "graph/ir_op_mapping.hpp"

#include <cmath>
#include <limits>

namespace troupe::graph::ir {

namespace {

std::vector<std::string> v(std::initializer_list<const char*> l) { return {l.begin(), l.end()}; }

bool is_float(element_type t) {
  return t == element_type::f32 || t == element_type::f16 || t == element_type::bf16 || t == element_type::f64 ||
         t == element_type::undefined;
}

/// numpy or none broadcasting (the same for equal shapes); pdpd has no ONNX counterpart.
void check_broadcast(const builder& b) {
  std::string ab = b.str("auto_broadcast", "numpy");
  if (ab != "numpy" && ab != "none") b.fail("auto_broadcast '" + ab + "' is not supported (numpy and none are)");
}

mapper binary(const char* onnx) {
  return [onnx](builder& b) -> std::vector<ValueId> {
    check_broadcast(b);
    return {b.op(onnx, {b.input(0), b.input(1)})};
  };
}

mapper unary(const char* onnx) {
  return [onnx](builder& b) -> std::vector<ValueId> { return {b.op(onnx, {b.input(0)})}; };
}

/// Divide: ONNX's integer Div truncates; IR's python division (the default) floors. Integer
/// floors are truncation minus one where the remainder is non-zero and the signs differ.
std::vector<ValueId> divide(builder& b) {
  check_broadcast(b);
  ValueId x = b.input(0), y = b.input(1);
  ValueId q = b.op("Div", {x, y});
  if (is_float(b.in_type(0)) || !b.flag("m_pythondiv", true)) return {q};
  element_type t = b.in_type(0);
  ValueId zero = b.scalar(0, t);
  ValueId rem = b.op("Mod", {x, y}, {{"fmod", int64_t{1}}});
  ValueId nonzero = b.op("Not", {b.op("Equal", {rem, zero})});
  ValueId differ = b.op("Xor", {b.op("Less", {x, zero}), b.op("Less", {y, zero})});
  ValueId adjust = b.op("Cast", {b.op("And", {nonzero, differ})}, {{"to", static_cast<int64_t>(t)}});
  return {b.op("Sub", {q, adjust})};
}

std::vector<ValueId> squared_difference(builder& b) {
  check_broadcast(b);
  ValueId d = b.op("Sub", {b.input(0), b.input(1)});
  return {b.op("Mul", {d, d})};
}

std::vector<ValueId> floor_mod(builder& b) {
  check_broadcast(b);
  if (!is_float(b.in_type(0))) return {b.op("Mod", {b.input(0), b.input(1)}, {{"fmod", int64_t{0}}})};
  // x - floor(x / y) * y
  ValueId q = b.op("Floor", {b.op("Div", {b.input(0), b.input(1)})});
  return {b.op("Sub", {b.input(0), b.op("Mul", {q, b.input(1)})})};
}

std::vector<ValueId> not_equal(builder& b) {
  check_broadcast(b);
  return {b.op("Not", {b.op("Equal", {b.input(0), b.input(1)})})};
}

std::vector<ValueId> clamp(builder& b) {
  element_type t = b.in_type(0);
  if (t == element_type::undefined) t = element_type::f32;
  double lo = b.f64("min"), hi = b.f64("max");
  if (!is_float(t)) { // the integer bounds: min rounds up, max down (the spec's rule)
    lo = std::ceil(lo);
    hi = std::floor(hi);
  }
  return {b.op("Clip", {b.input(0), b.scalar(lo, t), b.scalar(hi, t)})};
}

std::vector<ValueId> swish(builder& b) {
  ValueId x = b.input(0);
  ValueId arg = b.inputs() > 1 ? b.op("Mul", {x, b.input(1)}) : x;
  return {b.op("Mul", {x, b.op("Sigmoid", {arg})})};
}

std::vector<ValueId> gelu(builder& b) {
  std::string mode = b.str("approximation_mode", "ERF");
  for (auto& c : mode) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (mode != "ERF" && mode != "TANH") b.fail("approximation_mode '" + mode + "' is not ERF or TANH");
  return {b.op("Gelu", {b.input(0)}, {{"approximate", std::string(mode == "TANH" ? "tanh" : "none")}})};
}

std::vector<ValueId> hsigmoid(builder& b) {
  return {b.op("HardSigmoid", {b.input(0)}, {{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}})};
}

std::vector<ValueId> hard_sigmoid(builder& b) {
  auto alpha = b.const_doubles(1, "alpha"), beta = b.const_doubles(2, "beta");
  if (alpha.size() != 1 || beta.size() != 1) b.fail("alpha and beta must be single values");
  return {b.op("HardSigmoid", {b.input(0)},
               {{"alpha", static_cast<float>(alpha[0])}, {"beta", static_cast<float>(beta[0])}})};
}

std::vector<ValueId> elu(builder& b) {
  return {b.op("Elu", {b.input(0)}, {{"alpha", static_cast<float>(b.f64("alpha"))}})};
}

/// PRelu: a 1-D slope of the channel count applies along axis 1 (IR) where ONNX would
/// broadcast it along the last axis: it becomes [C, 1, ...].
std::vector<ValueId> prelu(builder& b) {
  ValueId slope = b.input(1);
  const Tensor* s = b.constant(1);
  std::size_t rank = b.in_rank(0);
  const auto& xs = b.in_port(0).shape;
  if (s && s->get_shape().size() == 1 && rank >= 3 && s->get_shape()[0] > 1 &&
      (xs.rank_known && xs.rank() >= 2 && (xs.dims[1] == s->get_shape()[0] || xs.dims[1] < 0))) {
    Shape shape{s->get_shape()[0]};
    shape.resize(rank - 1, 1);
    slope = b.constant(s->clone().reshaped(shape));
  }
  return {b.op("PRelu", {b.input(0), slope})};
}

std::vector<ValueId> convert(builder& b) {
  auto t = parse_element_type(b.str("destination_type"));
  if (!t || *t == element_type::undefined) b.fail("destination_type '" + b.str("destination_type") + "' is not supported");
  return {b.op("Cast", {b.input(0)}, {{"to", static_cast<int64_t>(*t)}})};
}

std::vector<ValueId> select(builder& b) {
  check_broadcast(b);
  return {b.op("Where", {b.input(0), b.input(1), b.input(2)})};
}

std::vector<ValueId> softmax(builder& b) {
  return {b.op("Softmax", {b.input(0)}, {{"axis", b.i64("axis", 1)}})};
}

std::vector<ValueId> log_softmax(builder& b) {
  return {b.op("LogSoftmax", {b.input(0)}, {{"axis", b.i64("axis", 1)}})};
}

std::vector<ValueId> round(builder& b) {
  std::string mode = b.str("mode", "half_to_even");
  if (mode != "half_to_even") b.fail("Round mode '" + mode + "' is not supported (ONNX rounds half to even)");
  return {b.op("Round", {b.input(0)})};
}

/// FakeQuantize as its specification computes it: x clamped to [il, ih], scaled to
/// levels - 1 steps, rounded half to even, and mapped onto [ol, oh].
std::vector<ValueId> fake_quantize_decomposed(builder& b, int64_t levels) {
  element_type t = b.in_type(0);
  ValueId x = b.input(0), il = b.input(1), ih = b.input(2), ol = b.input(3), oh = b.input(4);
  ValueId clamped = b.op("Min", {b.op("Max", {x, il}), ih});
  ValueId steps = b.scalar(static_cast<double>(levels - 1), t);
  ValueId unit = b.op("Div", {b.op("Sub", {clamped, il}), b.op("Sub", {ih, il})});
  ValueId q = b.op("Round", {b.op("Mul", {unit, steps})});
  ValueId scaled = b.op("Mul", {b.op("Div", {q, steps}), b.op("Sub", {oh, ol})});
  return {b.op("Add", {scaled, ol})};
}

/// A 256-level FakeQuantize whose output range is its input range and whose zero lies on
/// the grid, as NNCF and POT write them for activations, is a u8 QuantizeLinear followed by
/// DequantizeLinear: x clamped to [il, ih] is q = round(x / s) + zp in [0, 255] with
/// s = (ih - il) / 255 and zp = -il / s. That is the form the devices' int8 kernels take.
/// Ranges are scalars or along one axis (per channel). nullopt when the layer is not of this form.
std::optional<ValueId> fake_quantize_as_qdq(builder& b, int64_t levels) {
  const element_type t = b.in_type(0);
  if (levels != 256 || (t != element_type::f32 && t != element_type::f16)) return std::nullopt;
  auto il = b.known_values(1), ih = b.known_values(2), ol = b.known_values(3), oh = b.known_values(4);
  if (!il || !ih || !ol || !oh || il->first != ol->first || ih->first != oh->first || il->second != ih->second)
    return std::nullopt;
  // The one axis the ranges run along (numpy broadcasting aligns them to x's last axes).
  const Shape& rs = il->second;
  const std::size_t rank = b.in_rank(0);
  if (rs.size() > rank) return std::nullopt;
  std::optional<int64_t> axis;
  for (std::size_t d = 0; d < rs.size(); ++d) {
    if (rs[d] == 1) continue;
    if (axis) return std::nullopt;
    axis = static_cast<int64_t>(rank - rs.size() + d);
  }
  const std::size_t n = il->first.size();
  if (n == 0) return std::nullopt;
  std::vector<double> scale(n), zp(n);
  for (std::size_t c = 0; c < n; ++c) {
    const double lo = il->first[c], hi = ih->first[c];
    if (!(lo <= 0 && hi >= 0 && hi > lo) || !std::isfinite(hi - lo)) return std::nullopt;
    scale[c] = static_cast<float>((hi - lo) / 255.0);
    zp[c] = -lo / scale[c];
    const double on_grid = std::nearbyint(zp[c]);
    if (!(scale[c] > 0) || std::fabs(zp[c] - on_grid) > 1e-3 || on_grid < 0 || on_grid > 255) return std::nullopt;
    zp[c] = on_grid;
  }
  const Shape qshape = axis ? Shape{static_cast<int64_t>(n)} : Shape{};
  ValueId s = b.constant(builder::make_tensor(scale, t, qshape));
  ValueId z = b.constant(builder::make_tensor(zp, element_type::u8, qshape));
  std::map<std::string, AttributeValue> attrs;
  if (axis) attrs["axis"] = *axis;
  ValueId q = b.op("QuantizeLinear", {b.input(0), s, z}, attrs);
  return b.op("DequantizeLinear", {q, s, z}, attrs);
}

std::vector<ValueId> fake_quantize(builder& b) {
  check_broadcast(b);
  int64_t levels = b.i64("levels");
  if (levels < 2) b.fail("levels " + std::to_string(levels) + " must be at least 2");
  if (auto qdq = fake_quantize_as_qdq(b, levels)) return {*qdq};
  return fake_quantize_decomposed(b, levels);
}

} // namespace

void add_elementwise_ops(op_table& t) {
  const auto all = v({"opset1", "opset2", "opset3", "opset4", "opset5", "opset6", "opset7", "opset8", "opset9", "opset10",
                      "opset11", "opset12", "opset13"});
  for (auto [ir, onnx] : std::initializer_list<std::pair<const char*, const char*>>{
           {"Add", "Add"}, {"Subtract", "Sub"}, {"Multiply", "Mul"}, {"Power", "Pow"}, {"Maximum", "Max"},
           {"Minimum", "Min"}, {"Equal", "Equal"}, {"Less", "Less"}, {"LessEqual", "LessOrEqual"},
           {"Greater", "Greater"}, {"GreaterEqual", "GreaterOrEqual"}, {"LogicalAnd", "And"}, {"LogicalOr", "Or"},
           {"LogicalXor", "Xor"}})
    t[ir].push_back({all, binary(onnx)});
  t["Mod"].push_back({all, [](builder& b) -> std::vector<ValueId> {
                        check_broadcast(b);
                        return {b.op("Mod", {b.input(0), b.input(1)}, {{"fmod", int64_t{1}}})};
                      }});
  t["Divide"].push_back({all, divide});
  t["SquaredDifference"].push_back({all, squared_difference});
  t["FloorMod"].push_back({all, floor_mod});
  t["NotEqual"].push_back({all, not_equal});
  for (auto [ir, onnx] : std::initializer_list<std::pair<const char*, const char*>>{
           {"Relu", "Relu"}, {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}, {"Exp", "Exp"}, {"Log", "Log"},
           {"Sqrt", "Sqrt"}, {"Abs", "Abs"}, {"Negative", "Neg"}, {"Floor", "Floor"}, {"Ceiling", "Ceil"},
           {"Erf", "Erf"}, {"Sin", "Sin"}, {"Cos", "Cos"}, {"Tan", "Tan"}, {"Asin", "Asin"}, {"Acos", "Acos"},
           {"Atan", "Atan"}, {"Sinh", "Sinh"}, {"Cosh", "Cosh"}, {"Asinh", "Asinh"}, {"Acosh", "Acosh"},
           {"Atanh", "Atanh"}, {"Sign", "Sign"}, {"LogicalNot", "Not"}, {"HSwish", "HardSwish"}, {"Mish", "Mish"},
           {"SoftPlus", "Softplus"}, {"SoftSign", "Softsign"}, {"IsNaN", "IsNaN"}})
    t[ir].push_back({all, unary(onnx)});
  t["Clamp"].push_back({all, clamp});
  t["Swish"].push_back({all, swish});
  t["Gelu"].push_back({v({"opset2", "opset7"}), gelu});
  t["HSigmoid"].push_back({all, hsigmoid});
  t["HardSigmoid"].push_back({all, hard_sigmoid});
  t["Elu"].push_back({all, elu});
  t["PRelu"].push_back({all, prelu});
  t["PReLU"].push_back({all, prelu}); // how OpenVINO writes it
  t["Convert"].push_back({all, convert});
  t["ConvertLike"].push_back({all, [](builder& b) -> std::vector<ValueId> {
                                return {b.op("CastLike", {b.input(0), b.input(1)})};
                              }});
  t["Select"].push_back({all, select});
  // OpenVINO writes Relu and Softmax (both versions) as ReLU and SoftMax; either spelling is read.
  t["ReLU"].push_back({all, unary("Relu")});
  t["SoftMax"].push_back({v({"opset1", "opset8"}), softmax});
  t["Softmax"].push_back({v({"opset1", "opset8"}), softmax});
  t["LogSoftmax"].push_back({v({"opset5"}), log_softmax});
  t["Round"].push_back({v({"opset5"}), round});
  t["FakeQuantize"].push_back({all, fake_quantize});
}

} // namespace troupe::graph::ir
