/// Plan steps for the native kernels that read oneDNN's layouts in place (native_ops.hpp): the
/// no-overlap ConvTranspose on nChw16c (with a BatchNormalization + Relu in front of it run
/// inside it), the channel Concat of maps whose channels do not fill whole blocks, the
/// depthwise convolution on channels-last maps, and the per-channel scaling (with its
/// residual Add) of squeeze-and-excitation blocks.
#include <algorithm>

#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

namespace {

using graph::Op;
using graph::ValueId;

memory::desc blocked(const memory::desc& like, memory::data_type dt) {
  return memory::desc(like.dims(), dt, memory::format_tag::nChw16c);
}

/// Where `x` lies when that is 4-D nChw16c in f32 or bf16; else an empty desc.
memory::desc blocked_home(const plan_builder& b, ValueId x) {
  const memory::desc& md = b.current_md(x);
  if (md.dims().size() != 4) return {};
  for (auto dt : {memory::data_type::f32, memory::data_type::bf16})
    if (md == blocked(md, dt)) return md;
  return {};
}

/// A native step for `op` running `fn` on the buffers `ins`, producing `y` (the op's output, or
/// the last output of the ops it absorbs) laid out as `out_md`; the op copy the kernel sees
/// says when the values it reads and writes in place hold bf16.
void add_native_step(plan_builder& b, Op op, std::vector<int> ins, ValueId y, const memory::desc& out_md, bool bf16,
                     const char* exec_type, reference::kernel_fn fn) {
  if (bf16) op.attrs[blocked_bf16_attr] = int64_t{1};
  const int out = b.output(y, out_md);
  b.add_kernel_step(std::move(op), fn, exec_type, std::move(ins), {out});
}

/// The no-overlap ConvTranspose reading `x` (laid out as `x_md`, in place of its own input),
/// with the prologue buffers when given (-1: none).
void add_deconv_step(plan_builder& b, const Op& deconv, ValueId x, const memory::desc& x_md, int pro_scale,
                     int pro_shift) {
  std::vector<int> ins{b.input(x, x_md)};
  for (std::size_t i = 1; i < deconv.inputs.size(); ++i)
    ins.push_back(deconv.inputs[i] == graph::no_value ? -1 : b.input_plain(deconv.inputs[i]));
  while (ins.size() < 3) ins.push_back(-1);
  if (pro_scale >= 0) {
    ins.push_back(pro_scale);
    ins.push_back(pro_shift);
  }
  add_native_step(b, deconv, std::move(ins), deconv.outputs[0], b.plain(deconv.outputs[0]),
                  x_md.data_type() == memory::data_type::bf16,
                  pro_scale >= 0 ? "native:bn_relu_deconv_kxs_nChw16c" : "native:deconv_kxs_nChw16c",
                  unit_overlap_conv_transpose_nchw16c);
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
  if (!native_avx512_available() || x_md == memory::desc() || b.val(x).type != element_type::f32) return false;
  const Op* relu = only_reader(b, bn.outputs[0]);
  if (!relu || relu->type != "Relu" || !relu->domain.empty() || relu->has_attr("activation") ||
      relu->inputs[0] != bn.outputs[0])
    return false;
  const Op* deconv = only_reader(b, relu->outputs[0]);
  if (!deconv || deconv->inputs[0] != relu->outputs[0] || !is_unit_overlap_conv_transpose(b.g, *deconv)) return false;

  const int64_t c = b.shape(x)[1], padded = (c + 15) / 16 * 16;
  for (std::size_t i = 1; i < 5; ++i)
    if (b.g.value(bn.inputs[i]).constant->get_size() != c) return false;
  const auto param = [&](std::size_t i) { return b.g.value(bn.inputs[i]).constant->data<float>(); };
  const auto affine = batch_norm_affine(param(1), param(2), param(3), param(4), bn.attr_float("epsilon", 1e-5f),
                                        static_cast<std::size_t>(c));
  // Padded to whole blocks of 16 with zeros: the padded lanes stay zero after the Relu.
  Tensor scale(element_type::f32, {padded}), shift(element_type::f32, {padded});
  std::fill_n(scale.data<float>(), padded, 0.0f);
  std::fill_n(shift.data<float>(), padded, 0.0f);
  std::copy(affine.scale.begin(), affine.scale.end(), scale.data<float>());
  std::copy(affine.shift.begin(), affine.shift.end(), shift.data<float>());
  add_deconv_step(b, *deconv, x, x_md, b.const_buffer(scale), b.const_buffer(shift));
  post_chain fused;
  fused.fused_ops = {b.index_of(*relu), b.index_of(*deconv)};
  b.commit(fused);
  return true;
}

/// concat_channels' code for a 4-D layout: nhwc, nChw16c, or -1 for any other.
int64_t concat_layout(const memory::desc& md) {
  if (md.dims().size() != 4) return -1;
  if (md == blocked(md, md.data_type())) return concat_layout_nchw16c;
  if (md == memory::desc(md.dims(), md.data_type(), memory::format_tag::nhwc)) return concat_layout_nhwc;
  return -1;
}

} // namespace

bool add_native_concat(plan_builder& b, const Op& op, const std::vector<memory::desc>& srcs, const memory::desc& dst) {
  int64_t axis = op.attr_int("axis", 0);
  if (axis < 0) axis += 4;
  const auto dt = dst.data_type();
  if (axis != 1 || concat_layout(dst) < 0 || srcs.size() != op.inputs.size() ||
      (dt != memory::data_type::f32 && dt != memory::data_type::bf16))
    return false;
  // oneDNN's concat keeps nhwc inputs nhwc, but its f32 convolutions read whole 16-channel
  // blocks (det's Concat then paid a reorder as long as itself): write those directly.
  const int64_t c_out = dst.dims()[1];
  const memory::desc out_md = dt == memory::data_type::f32 && c_out % 16 == 0 ? blocked(dst, dt) : dst;
  std::vector<int64_t> layouts{concat_layout(out_md)};
  bool partial = false;
  for (const auto& md : srcs) {
    const int64_t c = md.dims().size() == 4 ? md.dims()[1] : 0;
    if (concat_layout(md) < 0 || md.data_type() != dt || c % 8 != 0) return false;
    layouts.push_back(concat_layout(md));
    partial = partial || c % 16 != 0;
  }
  if (!partial) return false; // whole blocks: oneDNN's concat copies them in long runs
  std::vector<int> ins;
  for (std::size_t i = 0; i < srcs.size(); ++i) ins.push_back(b.input(op.inputs[i], srcs[i]));
  Op copy = op;
  copy.attrs[concat_layouts_attr] = layouts;
  add_native_step(b, std::move(copy), std::move(ins), op.outputs[0], out_md, dt == memory::data_type::bf16,
                  "native:concat_channels", concat_channels);
  return true;
}

namespace {

/// oneDNN post-ops as depthwise_nhwc's triples; false when one has no native form.
bool native_post_ops(const dnnl::post_ops& po, std::vector<float>& out) {
  using dnnl::algorithm;
  for (int i = 0; i < po.len(); ++i) {
    if (po.kind(i) != dnnl::primitive::kind::eltwise) return false;
    float scale, alpha, beta;
    algorithm alg;
    po.get_params_eltwise(i, scale, alg, alpha, beta);
    if (scale != 1.0f) return false;
    int code;
    switch (alg) {
    case algorithm::eltwise_relu: code = dw_post_relu; break;
    case algorithm::eltwise_linear: code = dw_post_linear; break;
    case algorithm::eltwise_clip:
    case algorithm::eltwise_clip_v2: code = dw_post_clip; break;
    case algorithm::eltwise_bounded_relu:
      code = dw_post_clip;
      beta = alpha;
      alpha = 0.0f;
      break;
    case algorithm::eltwise_hardswish: code = dw_post_hardswish; break;
    case algorithm::eltwise_logistic: code = dw_post_logistic; break;
    default: return false;
    }
    out.insert(out.end(), {static_cast<float>(code), alpha, beta});
  }
  return true;
}

} // namespace

bool add_native_depthwise(plan_builder& b, const Op& op, const dnnl::convolution_forward::primitive_desc& pd,
                          const post_chain& ch, const window& w) {
  const ValueId X = op.inputs[0], W = op.inputs[1], B = op.input_count() > 2 ? op.inputs[2] : graph::no_value;
  const memory::desc src = pd.src_desc(), dst = pd.dst_desc();
  const auto dt = src.data_type();
  // bf16 only: in f32 the kernel would need an FMA per tap, and oneDNN's is as fast as that.
  if (dt != memory::data_type::bf16 || !native_bf16_available() || src.dims().size() != 4 || dst.data_type() != dt)
    return false;
  if (src != memory::desc(src.dims(), dt, memory::format_tag::nhwc) ||
      dst != memory::desc(dst.dims(), dt, memory::format_tag::nhwc))
    return false;
  const int64_t c = src.dims()[1];
  if (op.attr_int("group", 1) != c || dst.dims()[1] != c || !b.g.is_constant(W) ||
      (B != graph::no_value && !b.g.is_constant(B)))
    return false;
  if (w.dil[0] != 0 || w.dil[1] != 0 || !is_native_depthwise_shape(c, w.kernel[0], w.kernel[1], w.strides[0], w.strides[1]))
    return false;
  std::vector<float> post;
  if (!native_post_ops(pd.get_primitive_attr().get_post_ops(), post)) return false;

  const int64_t kh = w.kernel[0], kw = w.kernel[1];
  const Tensor& wt = *b.g.value(W).constant;
  if (static_cast<int64_t>(wt.get_size()) != c * kh * kw) return false;
  Tensor packed(element_type::i32, {c * kh * ((kw + 1) / 2)}), bias(element_type::f32, {c});
  pack_depthwise_pairs(wt.data<float>(), c, kh, kw, static_cast<uint32_t*>(packed.data()));
  for (int64_t ch_i = 0; ch_i < c; ++ch_i)
    bias.data<float>()[ch_i] = B != graph::no_value ? b.g.value(B).constant->data<float>()[ch_i] : 0.0f;

  Op copy = op;
  // The op's own activation is among `post` (pd's post-ops): the step must not apply it again.
  copy.attrs.erase("activation");
  copy.attrs.erase("activation_params");
  copy.attrs[depthwise_geometry_attr] = std::vector<int64_t>{kh, kw, w.strides[0], w.strides[1], w.pad_l[0], w.pad_l[1]};
  copy.attrs[depthwise_post_ops_attr] = post;
  std::vector<int> ins{b.input(X, src), b.const_buffer(packed), b.const_buffer(bias)};
  b.commit(ch);
  add_native_step(b, std::move(copy), std::move(ins), ch.out, dst, false, "native:depthwise_nhwc_bf16",
                  depthwise_nhwc_bf16);
  return true;
}

bool add_native_channel_scale(plan_builder& b, const Op& mul) {
  if (mul.type != "Mul" || mul.input_count() != 2 || mul.has_attr("activation") || !native_bf16_available()) return false;
  const ValueId y = mul.outputs[0];
  if (b.val(y).type != element_type::f32 || !b.val(y).shape.is_static()) return false;
  const Shape ys = b.shape(y);
  if (ys.size() != 4) return false;
  // Which input is the map and which the per-channel factors.
  ValueId x = mul.inputs[0], s = mul.inputs[1];
  auto factors = [&](ValueId v) {
    if (b.val(v).type != element_type::f32 || !b.val(v).shape.is_static()) return false;
    Shape vs = b.shape(v);
    while (vs.size() < 4) vs.insert(vs.begin(), 1);
    return (vs[0] == 1 || vs[0] == ys[0]) && vs[1] == ys[1] && vs[2] == 1 && vs[3] == 1 && ys[2] * ys[3] > 1;
  };
  if (!factors(s)) std::swap(x, s);
  if (!factors(s) || b.shape(x) != ys || b.val(x).type != element_type::f32) return false;
  // Channels-last only: the layout PP-OCR's convolutions leave these maps in (f32 and bf16).
  const memory::desc x_md = b.current_md(x);
  const auto dt = x_md.data_type();
  if (concat_layout(x_md) != concat_layout_nhwc || (dt != memory::data_type::f32 && dt != memory::data_type::bf16))
    return false;
  // x * s + x: the Add reading the product (and x) runs in the same pass.
  const Op* add = only_reader(b, y);
  const bool residual = add && add->type == "Add" && add->domain.empty() && add->input_count() == 2 &&
                        !add->has_attr("activation") &&
                        ((add->inputs[0] == y && add->inputs[1] == x) || (add->inputs[1] == y && add->inputs[0] == x));
  Op copy = mul;
  copy.attrs[channel_scale_residual_attr] = int64_t{residual};
  std::vector<int> ins{b.input(x, x_md), b.input_plain(s)};
  if (residual) {
    post_chain fused;
    fused.fused_ops = {b.index_of(*add)};
    b.commit(fused);
  }
  add_native_step(b, std::move(copy), std::move(ins), residual ? add->outputs[0] : y, x_md,
                  dt == memory::data_type::bf16, residual ? "native:channel_scale_residual" : "native:channel_scale",
                  channel_scale);
  return true;
}

bool build_native_blocked(plan_builder& b, const Op& op) {
  if (op.type == "BatchNormalization") return build_bn_relu_deconv(b, op);
  if (!is_unit_overlap_conv_transpose(b.g, op)) return false;
  // Read where the input lies when that is oneDNN's nChw16c (f32, or bf16 under the bf16
  // hint), else plain.
  if (const memory::desc x_md = blocked_home(b, op.inputs[0]); native_avx512_available() && x_md != memory::desc())
    add_deconv_step(b, op, op.inputs[0], x_md, -1, -1);
  else
    b.add_reference(op, unit_overlap_conv_transpose, "native:deconv_kxs");
  return true;
}

} // namespace troupe::kernels::cpu
