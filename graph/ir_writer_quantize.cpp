/// ONNX QuantizeLinear / DequantizeLinear -> IR. OpenVINO has no such ops; it has the forms
/// its own ONNX frontend and NNCF write:
///  - a QuantizeLinear read only by a DequantizeLinear of the same scale and zero point is one
///    FakeQuantize of 256 levels over [(qmin - zp) s, (qmax - zp) s] (the reader maps it back
///    to the pair, so the int8 kernels still run it);
///  - a DequantizeLinear on its own is Convert, Subtract (the zero point), Multiply (the scale):
///    of constant int8 weights, OpenVINO's compressed weights;
///  - a QuantizeLinear on its own is Divide, Round (half to even), Add, Clamp, Convert.
/// Scales and zero points must be constants (they are in what quantizers write).
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

} // namespace

void add_quantize_writers(std::map<std::string, op_writer>& m) {
  m["QuantizeLinear"] = quantize;
  m["DequantizeLinear"] = dequantize;
}

} // namespace troupe::graph::ir
