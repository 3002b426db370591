/// IR has no integer product, convolution or dynamic quantization: OpenVINO's ONNX frontend and
/// troupe's writer (ir_writer_quantize.cpp) spell onnxruntime's quantize_dynamic ops as their
/// arithmetic. Read back as that arithmetic they would run on i32 in the reference kernels; here
/// they become the ONNX ops again, which the devices run as int8 kernels:
///  - a MatMul or (Group)Convolution of i32 operands, each Convert(u8/i8 -> i32) [minus a zero
///    point: Convert of the same type, or an i32 constant within that type's range], is
///    MatMulInteger or ConvInteger (integer_product, from the mappings);
///  - the writer's DynamicQuantizeLinear form is DynamicQuantizeLinear (recover_dynamic_quantize,
///    after every layer is mapped).
#include "graph/ir_integer_recovery.hpp"
#include "graph/pass_utils.hpp"

#include <algorithm>
#include <cmath>

namespace troupe::graph::ir {

namespace {

bool is_int8(element_type t) { return t == element_type::u8 || t == element_type::i8; }

/// The u8/i8 value an i32 Cast converts, or no_value.
ValueId cast_source(const Graph& g, ValueId v) {
  const Op* p = producer_of(g, v);
  if (!p || p->type != "Cast" || !p->domain.empty() || p->inputs.size() != 1 || g.value(v).type != element_type::i32) return no_value;
  return is_int8(g.value(p->inputs[0]).type) ? p->inputs[0] : no_value;
}

struct operand {
  ValueId q = no_value, zp = no_value; ///< zp of q's type, or no_value
};

std::optional<operand> integer_operand(builder& b, ValueId v, bool through_reshape) {
  const Graph& g = b.g;
  if (ValueId q = cast_source(g, v); q != no_value) return operand{q, no_value};
  const Op* p = producer_of(g, v);
  if (!p || !p->domain.empty()) return std::nullopt;
  if (p->type == "Sub" && p->inputs.size() == 2) {
    const ValueId q = cast_source(g, p->inputs[0]), z = p->inputs[1];
    if (q == no_value) return std::nullopt;
    const element_type t = g.value(q).type;
    if (ValueId zq = cast_source(g, z); zq != no_value) return g.value(zq).type == t ? std::optional(operand{q, zq}) : std::nullopt;
    if (!g.is_constant(z)) return std::nullopt;
    auto values = doubles_of(*g.value(z).constant);
    const double lo = t == element_type::u8 ? 0 : -128, hi = t == element_type::u8 ? 255 : 127;
    if (!values || std::any_of(values->begin(), values->end(), [&](double d) { return d != std::floor(d) || d < lo || d > hi; }))
      return std::nullopt;
    return operand{q, b.constant(builder::make_tensor(*values, t, g.value(z).constant->get_shape()))};
  }
  // Grouped weights merged by a Reshape: constants only, reshaped here.
  if (p->type == "Reshape" && through_reshape && g.value(v).shape.is_static()) {
    auto inner = integer_operand(b, p->inputs[0], false);
    if (!inner || !g.is_constant(inner->q) || (inner->zp != no_value && !g.is_constant(inner->zp))) return std::nullopt;
    return operand{b.constant(g.value(inner->q).constant->clone().reshaped(g.value(v).shape.to_shape())), inner->zp};
  }
  return std::nullopt;
}

/// A zero point as ONNX takes it: one value (a scalar), or `n` values (1-D); a run-time one
/// must hold one value. nullopt otherwise.
std::optional<ValueId> onnx_zero_point(builder& b, ValueId zp, int64_t n) {
  if (zp == no_value) return no_value;
  const Graph& g = b.g;
  if (!g.is_constant(zp)) {
    const PartialShape& s = g.value(zp).shape;
    return s.rank_known && s.is_static() && shape_size(s.to_shape()) == 1 && s.rank() == 0 ? std::optional(zp) : std::nullopt;
  }
  const Tensor& t = *g.value(zp).constant;
  if (t.get_size() == 1) return b.constant(t.clone().reshaped(Shape{}));
  if (t.get_size() != n) return std::nullopt;
  return b.constant(t.clone().reshaped(Shape{n}));
}

} // namespace

std::optional<ValueId> integer_product(builder& b, ValueId a, ValueId w, const std::map<std::string, AttributeValue>& conv_attrs,
                                       bool conv) {
  const Graph& g = b.g;
  if (g.value(a).type != element_type::i32 || g.value(w).type != element_type::i32) return std::nullopt;
  auto x = integer_operand(b, a, false), k = integer_operand(b, w, true);
  if (!x || !k) return std::nullopt;
  const PartialShape &as = g.value(x->q).shape, &ws = g.value(k->q).shape;
  if (!as.rank_known || !ws.rank_known || !ws.is_static() || ws.rank() < 2) return std::nullopt;
  const Shape wd = ws.to_shape();
  std::optional<ValueId> xz, kz;
  if (conv) {
    xz = onnx_zero_point(b, x->zp, 1);
    kz = onnx_zero_point(b, k->zp, wd[0]); // one per output channel
  } else {
    const int64_t rows = as.rank() >= 2 ? as.dims[as.rank() - 2] : -1;
    xz = onnx_zero_point(b, x->zp, rows); // one per row of A
    kz = onnx_zero_point(b, k->zp, wd.back()); // one per column of B
  }
  if (!xz || !kz) return std::nullopt;
  std::vector<ValueId> in{x->q, k->q};
  if (*xz != no_value || *kz != no_value) in.push_back(*xz);
  if (*kz != no_value) in.push_back(*kz);
  return b.op(conv ? "ConvInteger" : "MatMulInteger", in, conv ? conv_attrs : std::map<std::string, AttributeValue>{});
}

namespace {

/// Pattern matching over the mapped graph: ops by their output value.
struct matcher {
  const Graph& g;
  std::vector<int> producers = g.producers();

  const Op* op(ValueId v, const char* type, std::size_t inputs) const {
    if (v == no_value || static_cast<std::size_t>(v) >= producers.size() || producers[static_cast<std::size_t>(v)] < 0) return nullptr;
    const Op& o = g.ops[static_cast<std::size_t>(producers[static_cast<std::size_t>(v)])];
    return o.type == type && o.domain.empty() && o.input_count() == inputs && o.outputs.size() == 1 ? &o : nullptr;
  }
  bool scalar(ValueId v, double want) const { return detail::scalar_constant(g, v) == want; }
  /// Clip(v, 0, 255): its input, or no_value.
  ValueId byte_clip(ValueId v) const {
    const Op* c = op(v, "Clip", 3);
    return c && scalar(c->inputs[1], 0) && scalar(c->inputs[2], 255) ? c->inputs[0] : no_value;
  }
  /// Min(ReduceMin(x), 0) / Max(ReduceMax(x), 0) over every axis of x: x, or no_value.
  ValueId range_end(ValueId v, const char* bound, const char* reduce) const {
    const Op* m = op(v, bound, 2);
    if (!m || !scalar(m->inputs[1], 0)) return no_value;
    const Op* r = op(m->inputs[0], reduce, 1);
    if (!r || r->attr_int("keepdims", 1) != 0) return no_value;
    const ValueId x = r->inputs[0];
    const PartialShape& s = g.value(x).shape;
    if (!s.rank_known) return no_value;
    auto axes = r->attr_ints("axes");
    std::sort(axes.begin(), axes.end());
    for (std::size_t k = 0; k < s.rank(); ++k)
      if (k >= axes.size() || axes[k] != static_cast<int64_t>(k)) return no_value;
    return axes.size() == s.rank() ? x : no_value;
  }
};

} // namespace

bool recover_dynamic_quantize(Graph& g) {
  bool changed = false;
  matcher m{g};
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const Op& y_cast = g.ops[i];
    if (y_cast.type != "Cast" || y_cast.input_count() != 1 || g.value(y_cast.outputs[0]).type != element_type::u8) continue;
    // y = Cast(Clip(Add(Round(Div(x, safe)), zpf), 0, 255))
    const Op* add = m.op(m.byte_clip(y_cast.inputs[0]), "Add", 2);
    if (!add) continue;
    const Op* round = m.op(add->inputs[0], "Round", 1);
    const ValueId zpf = add->inputs[1];
    const Op* div = round ? m.op(round->inputs[0], "Div", 2) : nullptr;
    if (!div) continue;
    const ValueId x = div->inputs[0], safe = div->inputs[1];
    // safe = Where(Equal(scale, 0), 1, scale); scale = Div(Sub(hi, lo), 255)
    const Op* where = m.op(safe, "Where", 3);
    const Op* eq = where ? m.op(where->inputs[0], "Equal", 2) : nullptr;
    if (!eq || !m.scalar(where->inputs[1], 1) || !m.scalar(eq->inputs[1], 0) || eq->inputs[0] != where->inputs[2]) continue;
    const ValueId scale = where->inputs[2];
    const Op* sdiv = m.op(scale, "Div", 2);
    const Op* sub = sdiv && m.scalar(sdiv->inputs[1], 255) ? m.op(sdiv->inputs[0], "Sub", 2) : nullptr;
    if (!sub || m.range_end(sub->inputs[0], "Max", "ReduceMax") != x || m.range_end(sub->inputs[1], "Min", "ReduceMin") != x) continue;
    // zpf = Round(Clip(Div(Neg(lo), safe), 0, 255))
    const Op* zround = m.op(zpf, "Round", 1);
    const Op* zdiv = zround ? m.op(m.byte_clip(zround->inputs[0]), "Div", 2) : nullptr;
    const Op* neg = zdiv && zdiv->inputs[1] == safe ? m.op(zdiv->inputs[0], "Neg", 1) : nullptr;
    if (!neg || neg->inputs[0] != sub->inputs[1] || g.value(x).type != element_type::f32) continue;
    // The zero point as u8: the writer's Cast of zpf (absent when the model did not read it).
    std::size_t zp_cast = g.ops.size();
    for (std::size_t k = 0; k < g.ops.size(); ++k)
      if (g.ops[k].type == "Cast" && g.ops[k].input_count() == 1 && g.ops[k].inputs[0] == zpf &&
          g.value(g.ops[k].outputs[0]).type == element_type::u8)
        zp_cast = k;
    // DynamicQuantizeLinear writes y, the scale and the zero point where the pattern did: it
    // takes the place of the scale's Div (before every reader of the three); the two Casts go.
    Op dql;
    dql.type = "DynamicQuantizeLinear";
    dql.name = y_cast.name;
    dql.inputs = {x};
    Value zp_value;
    zp_value.name = y_cast.name + "/zero_point";
    zp_value.type = element_type::u8;
    zp_value.shape = PartialShape(Shape{});
    const ValueId zp = zp_cast < g.ops.size() ? g.ops[zp_cast].outputs[0] : g.add_value(std::move(zp_value));
    dql.outputs = {y_cast.outputs[0], scale, zp};
    dql.rt_info = y_cast.rt_info;
    const std::size_t at = static_cast<std::size_t>(m.producers[static_cast<std::size_t>(scale)]);
    g.ops[at] = std::move(dql);
    std::vector<std::size_t> gone{i};
    if (zp_cast < g.ops.size()) gone.push_back(zp_cast);
    std::sort(gone.rbegin(), gone.rend());
    for (auto k : gone) g.ops.erase(g.ops.begin() + static_cast<std::ptrdiff_t>(k));
    changed = true;
    i = std::min(i, at); // indices moved; the ops before `at` were seen already
    m.producers = g.producers();
  }
  return changed;
}

} // namespace troupe::graph::ir
