/// Plan steps for the no-overlap ConvTranspose's native kernels (native_ops.hpp): where its
/// input is read from, in which layout and type, and whether a BatchNormalization + Relu in
/// front of it runs inside it.
#include <cmath>

#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

namespace {

using graph::Op;
using graph::ValueId;

memory::desc blocked(const memory::desc& like, memory::data_type dt) {
  return memory::desc(like.dims(), dt, memory::format_tag::nChw16c);
}

/// The layout the blocked kernel reads `x` in: where it lies when that is nChw16c f32 or bf16;
/// empty when it lies elsewhere (then `fallback` decides).
memory::desc blocked_home(const plan_builder& b, ValueId x) {
  const memory::desc& md = b.current_md(x);
  if (!blocked_conv_transpose_available() || md.dims().size() != 4) return {};
  for (auto dt : {memory::data_type::f32, memory::data_type::bf16})
    if (md == blocked(md, dt)) return md;
  return {};
}

/// A native deconvolution step reading `x` (laid out as `x_md`) for `deconv`, with the
/// prologue buffers when given (-1: none).
void add_step(plan_builder& b, const Op& deconv, ValueId x, const memory::desc& x_md, int pro_scale, int pro_shift) {
  Op copy = deconv;
  copy.inputs[0] = x;
  if (x_md.data_type() == memory::data_type::bf16) copy.attrs[blocked_deconv_bf16_attr] = int64_t{1};
  step s;
  s.name = deconv.name;
  s.type = deconv.type;
  s.exec_type = pro_scale >= 0 ? "native:bn_relu_deconv_kxs_nChw16c" : "native:deconv_kxs_nChw16c";
  s.apply_activation = deconv.has_attr("activation");
  s.ref_in.push_back(b.input(x, x_md));
  for (std::size_t i = 1; i < deconv.inputs.size(); ++i)
    s.ref_in.push_back(deconv.inputs[i] == graph::no_value ? -1 : b.input_plain(deconv.inputs[i]));
  while (s.ref_in.size() < 3) s.ref_in.push_back(-1);
  if (pro_scale >= 0) {
    s.ref_in.push_back(pro_scale);
    s.ref_in.push_back(pro_shift);
  }
  s.ref_out.push_back(b.output(deconv.outputs[0], b.plain(deconv.outputs[0])));
  s.op = std::make_shared<Op>(std::move(copy));
  s.fn = unit_overlap_conv_transpose_nchw16c;
  b.p.steps.push_back(std::move(s));
}

/// The single op reading v (by index), when nothing else (no graph output) reads it.
const Op* only_reader(const plan_builder& b, ValueId v) {
  const auto& rd = b.readers(v);
  if (rd.size() != 1 || b.is_graph_output(v)) return nullptr;
  return &b.g.ops[rd[0]];
}

/// BatchNormalization (inference, constant parameters) -> Relu -> no-overlap ConvTranspose,
/// each read only by the next: one native step. False (nothing added) when the pattern or the
/// layouts do not fit.
bool build_bn_relu_deconv(plan_builder& b, const Op& bn) {
  if (bn.input_count() != 5 || bn.attr_int("training_mode", 0) != 0 || !bn.domain.empty()) return false;
  for (std::size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.outputs[i] != graph::no_value) return false;
  for (std::size_t i = 1; i < 5; ++i)
    if (!b.g.is_constant(bn.inputs[i]) || b.val(bn.inputs[i]).type != element_type::f32) return false;
  const ValueId x = bn.inputs[0];
  const memory::desc x_md = blocked_home(b, x);
  if (x_md == memory::desc() || b.val(x).type != element_type::f32) return false;
  const Op* relu = only_reader(b, bn.outputs[0]);
  if (!relu || relu->type != "Relu" || !relu->domain.empty() || relu->has_attr("activation") ||
      relu->inputs[0] != bn.outputs[0])
    return false;
  const Op* deconv = only_reader(b, relu->outputs[0]);
  if (!deconv || deconv->inputs[0] != relu->outputs[0] || !is_unit_overlap_conv_transpose(b.g, *deconv)) return false;

  const int64_t c = b.shape(x)[1], padded = (c + 15) / 16 * 16;
  const auto param = [&](std::size_t i) { return b.g.value(bn.inputs[i]).constant->data<float>(); };
  if (b.g.value(bn.inputs[1]).constant->get_size() != c) return false;
  const float eps = bn.attr_float("epsilon", 1e-5f);
  Tensor scale(element_type::f32, {padded}), shift(element_type::f32, {padded});
  for (int64_t k = 0; k < padded; ++k) {
    // y = (x - mean) / sqrt(var + eps) * gamma + beta = x * s + (beta - mean * s)
    const float s = k < c ? param(1)[k] / std::sqrt(param(4)[k] + eps) : 0.0f;
    scale.data<float>()[k] = s;
    shift.data<float>()[k] = k < c ? param(2)[k] - param(3)[k] * s : 0.0f;
  }
  add_step(b, *deconv, x, x_md, b.const_buffer(scale), b.const_buffer(shift));
  post_chain fused;
  fused.fused_ops = {b.index_of(*relu), b.index_of(*deconv)};
  b.commit(fused);
  return true;
}

} // namespace

bool build_native_deconv(plan_builder& b, const Op& op) {
  if (op.type == "BatchNormalization") return build_bn_relu_deconv(b, op);
  if (!is_unit_overlap_conv_transpose(b.g, op)) return false;
  // Read where the input lies when that is oneDNN's nChw16c (f32, or bf16 under the bf16
  // hint), else plain.
  if (const memory::desc x_md = blocked_home(b, op.inputs[0]); x_md != memory::desc())
    add_step(b, op, op.inputs[0], x_md, -1, -1);
  else
    b.add_reference(op, unit_overlap_conv_transpose, "native:deconv_kxs");
  return true;
}

} // namespace troupe::kernels::cpu
