/// ONNX QuantizeLinear / DequantizeLinear -> IR. OpenVINO has no such ops; it has the forms
/// its own ONNX frontend and NNCF write:
///  - a QuantizeLinear read only by a DequantizeLinear of the same scale and zero point is one
///    FakeQuantize of 256 levels over [(qmin - zp) s, (qmax - zp) s] (the reader maps it back
///    to the pair, so the int8 kernels still run it);
///  - a DequantizeLinear on its own is Convert, Subtract (the zero point), Multiply (the scale):
///    of constant int8 weights, OpenVINO's compressed weights;
///  - a QuantizeLinear on its own is Divide, Round (half to even), Add, Clamp, Convert.
/// Scales and zero points must be constants (they are in what quantizers write).
/// onnxruntime's quantize_dynamic ops as the arithmetic their definitions give (OpenVINO's ONNX
/// frontend writes them so too; troupe's reader gathers them back, ir_integer_recovery.cpp):
///  - DynamicQuantizeLinear: ReduceMin/ReduceMax over every axis, the range with 0, the scale
///    (a range of zeros divides by 1 instead: y and the zero point are 0, as ONNX's reference),
///    the rounded zero point, then x quantized as QuantizeLinear is;
///  - MatMulInteger and ConvInteger: each operand Convert to i32 minus its zero point, then
///    MatMul or (Group)Convolution on i32.
#include "graph/ir_writer.hpp"

#include <troupe/exception.hpp>

#include <algorithm>

#include "graph/ir_op_mapping.hpp"

namespace troupe::graph::ir {

namespace {

const attrs numpy{{"auto_broadcast", "numpy"}};

/// A quantizing op's scale and zero point, one or one per slice along `axis`.
struct quantization {
  std::vector<double> scale, zp;
  element_type q_type = element_type::u8; ///< the integer side
  element_type f_type = element_type::f32; ///< the float side (the scale's type)
  int64_t axis = 0;
  std::size_t rank = 0; ///< of the quantized tensor
  double qmin = 0, qmax = 255;

  bool per_channel() const { return scale.size() > 1; }
  bool operator==(const quantization& o) const { return scale == o.scale && zp == o.zp && q_type == o.q_type && axis == o.axis; }

  /// `v` (one value per channel) as a constant broadcasting along `axis` of the tensor.
  Tensor shaped(const std::vector<double>& v, element_type t) const {
    Shape s;
    if (per_channel()) {
      s.assign(rank, 1);
      s[static_cast<std::size_t>(axis)] = static_cast<int64_t>(v.size());
    }
    return builder::make_tensor(v, t, s);
  }
};

[[noreturn]] void fail(const std::string& why) { throw Exception(why); }

quantization read(const Graph& g, const Op& op) {
  const bool quantize = op.type == "QuantizeLinear";
  if (op.input_count() < 2) fail("the scale is missing");
  const ValueId q = quantize ? op.outputs.at(0) : op.inputs.at(0);
  const ValueId f = quantize ? op.inputs.at(0) : op.outputs.at(0);
  quantization p;
  p.q_type = g.value(q).type;
  p.f_type = g.value(op.inputs[1]).type;
  if (p.q_type == element_type::i8) p.qmin = -128, p.qmax = 127;
  else if (p.q_type == element_type::i32) p.qmin = -2147483648.0, p.qmax = 2147483647.0;
  else if (p.q_type != element_type::u8) fail("a " + to_string(p.q_type) + " quantized tensor has no IR form here (u8, i8 and i32 do)");
  if (p.f_type != element_type::f32 && p.f_type != element_type::f16) fail("a " + to_string(p.f_type) + " scale has no IR form here");
  if (!g.is_constant(op.inputs[1])) fail("a scale computed at run time has no IR form here");
  p.scale = *doubles_of(*g.value(op.inputs[1]).constant);
  const bool has_zp = op.input_count() > 2 && op.inputs[2] != no_value;
  if (has_zp && !g.is_constant(op.inputs[2])) fail("a zero point computed at run time has no IR form here");
  p.zp = has_zp ? *doubles_of(*g.value(op.inputs[2]).constant) : std::vector<double>(p.scale.size(), 0.0);
  if (p.zp.size() != p.scale.size()) fail("the zero point has " + std::to_string(p.zp.size()) + " values, the scale " + std::to_string(p.scale.size()));
  const PartialShape& s = g.value(f).shape;
  if (p.per_channel()) {
    if (!s.rank_known) fail("per-axis quantization of a tensor of unknown rank has no IR form here");
    p.rank = s.rank();
    p.axis = op.attr_int("axis", 1);
    if (p.axis < 0) p.axis += static_cast<int64_t>(p.rank);
    if (p.axis < 0 || p.axis >= static_cast<int64_t>(p.rank)) fail("axis " + std::to_string(op.attr_int("axis", 1)) + " is out of range");
  }
  if (g.value(op.inputs[1]).constant->get_shape().size() > 1) fail("a scale of rank > 1 (blocked quantization) has no IR form here");
  return p;
}

/// The DequantizeLinear alone reading `q`'s output with the same scale and zero point.
const Op* sole_dequantize(const Graph& g, const Op& q, const quantization& p) {
  const ValueId y = q.outputs.at(0);
  if (std::find(g.outputs.begin(), g.outputs.end(), y) != g.outputs.end()) return nullptr;
  const Op* reader = nullptr;
  for (const auto& o : g.ops)
    for (auto i : o.inputs)
      if (i == y) {
        if (reader && reader != &o) return nullptr;
        reader = &o;
      }
  if (!reader || reader->type != "DequantizeLinear" || !reader->domain.empty() || reader->inputs.at(0) != y) return nullptr;
  try {
    return read(g, *reader) == p && g.value(reader->outputs.at(0)).type == g.value(q.inputs.at(0)).type ? reader : nullptr;
  } catch (const Exception&) {
    return nullptr;
  }
}

void quantize(emitter& e, const Op& op) {
  const Graph& g = e.graph();
  const quantization p = read(g, op);
  const element_type ft = g.value(op.inputs[0]).type;
  if (const Op* dq = sole_dequantize(g, op, p); dq && p.q_type != element_type::i32) {
    std::vector<double> lo(p.scale.size()), hi(p.scale.size());
    for (std::size_t c = 0; c < lo.size(); ++c) {
      lo[c] = (p.qmin - p.zp[c]) * p.scale[c];
      hi[c] = (p.qmax - p.zp[c]) * p.scale[c];
    }
    out_ref l = e.constant(p.shaped(lo, ft)), h = e.constant(p.shaped(hi, ft));
    out_ref r = e.layer1("FakeQuantize", "opset1", {{"levels", "256"}, {"auto_broadcast", "numpy"}}, {e.value(op.inputs[0]), l, h, l, h}, ft,
                         g.value(dq->outputs[0]).shape);
    e.bind(dq->outputs[0], r);
    return;
  }
  const PartialShape& s = g.value(op.inputs[0]).shape;
  out_ref y = e.layer1("Divide", "opset1", {{"auto_broadcast", "numpy"}, {"m_pythondiv", "true"}},
                       {e.value(op.inputs[0]), e.constant(p.shaped(p.scale, ft))}, ft, s);
  y = e.layer1("Round", "opset5", {{"mode", "half_to_even"}}, {y}, ft, s);
  y = e.layer1("Add", "opset1", numpy, {y, e.constant(p.shaped(p.zp, ft))}, ft, s);
  y = e.layer1("Clamp", "opset1", {{"min", number(p.qmin)}, {"max", number(p.qmax)}}, {y}, ft, s);
  e.bind(op.outputs[0], e.layer1("Convert", "opset1", {{"destination_type", to_string(p.q_type)}}, {y}, p.q_type, s));
}

void dequantize(emitter& e, const Op& op) {
  if (e.is_bound(op.outputs.at(0))) return; // its QuantizeLinear wrote it as a FakeQuantize
  const Graph& g = e.graph();
  const quantization p = read(g, op);
  const element_type ft = g.value(op.outputs[0]).type;
  const PartialShape& s = g.value(op.outputs[0]).shape;
  out_ref x = e.layer1("Convert", "opset1", {{"destination_type", to_string(ft)}}, {e.value(op.inputs[0])}, ft, s);
  if (std::any_of(p.zp.begin(), p.zp.end(), [](double z) { return z != 0; }))
    x = e.layer1("Subtract", "opset1", numpy, {x, e.constant(p.shaped(p.zp, ft))}, ft, s);
  e.bind(op.outputs[0], e.layer1("Multiply", "opset1", numpy, {x, e.constant(p.shaped(p.scale, ft))}, ft, s));
}

void dynamic_quantize(emitter& e, const Op& op) {
  const Graph& g = e.graph();
  const ValueId X = op.inputs.at(0);
  const PartialShape& xs = g.value(X).shape;
  if (!xs.rank_known) fail("x of unknown rank has no IR form here (its range is reduced over every axis)");
  if (g.value(X).type != element_type::f32) fail("x must be f32");
  const element_type f = element_type::f32;
  const PartialShape one = PartialShape(Shape{});
  std::vector<int64_t> all(xs.rank());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int64_t>(k);
  const out_ref x = e.value(X), axes = e.i64s(all), zero = e.scalar(0.0, f);
  const attrs keep{{"keep_dims", "false"}};
  const out_ref lo = e.layer1("Minimum", "opset1", numpy, {e.layer1("ReduceMin", "opset1", keep, {x, axes}, f, one), zero}, f, one);
  const out_ref hi = e.layer1("Maximum", "opset1", numpy, {e.layer1("ReduceMax", "opset1", keep, {x, axes}, f, one), zero}, f, one);
  const attrs div{{"auto_broadcast", "numpy"}, {"m_pythondiv", "true"}};
  const out_ref scale = e.layer1("Divide", "opset1", div, {e.layer1("Subtract", "opset1", numpy, {hi, lo}, f, one), e.scalar(255.0, f)}, f, one);
  const out_ref is_zero = e.layer1("Equal", "opset1", numpy, {scale, zero}, element_type::boolean, one);
  const out_ref safe = e.layer1("Select", "opset1", numpy, {is_zero, e.scalar(1.0, f), scale}, f, one);
  const attrs even{{"mode", "half_to_even"}}, byte{{"min", "0"}, {"max", "255"}};
  const out_ref neg = e.layer1("Negative", "opset1", {}, {lo}, f, one);
  const out_ref zpf =
      e.layer1("Round", "opset5", even, {e.layer1("Clamp", "opset1", byte, {e.layer1("Divide", "opset1", div, {neg, safe}, f, one)}, f, one)}, f, one);
  out_ref y = e.layer1("Round", "opset5", even, {e.layer1("Divide", "opset1", div, {x, safe}, f, xs)}, f, xs);
  y = e.layer1("Clamp", "opset1", byte, {e.layer1("Add", "opset1", numpy, {y, zpf}, f, xs)}, f, xs);
  const attrs to_u8{{"destination_type", "u8"}};
  if (op.outputs.size() > 2 && op.outputs[2] != no_value) e.bind(op.outputs[2], e.layer1("Convert", "opset1", to_u8, {zpf}, element_type::u8, one));
  if (op.outputs.size() > 1 && op.outputs[1] != no_value) e.bind(op.outputs[1], scale);
  e.bind(op.outputs.at(0), e.layer1("Convert", "opset1", to_u8, {y}, element_type::u8, xs));
}

void matmul_integer(emitter& e, const Op& op) {
  const Graph& g = e.graph();
  auto has = [&](std::size_t i) { return i < op.inputs.size() && op.inputs[i] != no_value; };
  // a's zero point: one, or one per row ([M] -> [M, 1]); b's: one, or one per column ([N]).
  Shape a_zp;
  if (has(2) && g.value(op.inputs[2]).shape.rank_known && g.value(op.inputs[2]).shape.rank() == 1) {
    const int64_t m = g.value(op.inputs[2]).shape.dims[0];
    if (m != 1) a_zp = Shape{m, 1};
  }
  const out_ref a = integer_operand(e, op.inputs.at(0), has(2) ? op.inputs[2] : no_value, a_zp);
  const out_ref b = integer_operand(e, op.inputs.at(1), has(3) ? op.inputs[3] : no_value, {});
  e.bind(op.outputs.at(0), e.layer1("MatMul", "opset1", {{"transpose_a", "false"}, {"transpose_b", "false"}}, {a, b}, element_type::i32,
                                    g.value(op.outputs[0]).shape));
}

} // namespace

out_ref integer_operand(emitter& e, ValueId q, ValueId zp, const Shape& zp_shape) {
  const Graph& g = e.graph();
  const element_type t = g.value(q).type;
  if (t != element_type::u8 && t != element_type::i8) fail("an integer operand of type " + to_string(t) + " has no IR form here (u8, i8)");
  const attrs to_i32{{"destination_type", "i32"}};
  const PartialShape& s = g.value(q).shape;
  out_ref r = e.layer1("Convert", "opset1", to_i32, {e.value(q)}, element_type::i32, s);
  if (zp == no_value) return r;
  out_ref z;
  if (g.is_constant(zp)) {
    const Tensor& c = *g.value(zp).constant;
    z = e.constant(zp_shape.empty() || c.get_size() == 1 ? c.clone() : c.clone().reshaped(zp_shape));
  } else {
    if (!zp_shape.empty()) fail("a zero point per row computed at run time has no IR form here");
    z = e.value(zp);
  }
  z = e.layer1("Convert", "opset1", to_i32, {z}, element_type::i32, z.shape);
  return e.layer1("Subtract", "opset1", numpy, {r, z}, element_type::i32, s);
}

void add_quantize_writers(std::map<std::string, op_writer>& m) {
  m["QuantizeLinear"] = quantize;
  m["DequantizeLinear"] = dequantize;
  m["DynamicQuantizeLinear"] = dynamic_quantize;
  m["MatMulInteger"] = matmul_integer;
}

} // namespace troupe::graph::ir
