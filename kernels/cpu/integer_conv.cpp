/// ConvInteger as quantize_dynamic writes it (integer_matmul.hpp's integer_conv_site): the
/// zero point of the u8 input comes from DynamicQuantizeLinear at run time, the weights are
/// constant s8 (or u8 centred on 128), and Cast -> Mul(scale) -> Add(bias) follows.
#include <algorithm>
#include <string>

#include "kernels/cpu/int8_ops.hpp"
#include "kernels/cpu/integer_matmul.hpp"
#include "kernels/reference/common.hpp"

namespace troupe::kernels::cpu {

namespace {

using graph::no_value;
using graph::Op;
using graph::ValueId;
using dt = memory::data_type;
using tag = memory::format_tag;


/// The weights as s8 (u8 ones shifted down by 128) and their zero points, shifted alike, one
/// per output channel (`zero_points` left empty when all are 0). oneDNN's convolutions take
/// no weight zero points: the epilogue subtracts zp[oc] x (the window's sum of x - x_zp).
bool s8_weights(const graph::Graph& g, ValueId W, ValueId WZ, Tensor& out, Tensor& zero_points) {
  if (!g.is_constant(W)) return false;
  const Tensor& w = *g.value(W).constant;
  const element_type t = w.get_element_type();
  if ((t != element_type::i8 && t != element_type::u8) || w.get_shape().size() < 3) return false;
  const int32_t centre = t == element_type::u8 ? 128 : 0;
  const int64_t oc = w.get_shape()[0];
  std::vector<double> z(1, 0.0);
  if (WZ != no_value) {
    if (!g.is_constant(WZ) || g.value(WZ).type != t) return false;
    z = reference::to_doubles(*g.value(WZ).constant);
    if (z.size() != 1 && static_cast<int64_t>(z.size()) != oc) return false;
  }
  bool any = false;
  Tensor zp(element_type::i32, Shape{oc});
  for (int64_t c = 0; c < oc; ++c) {
    zp.data<int32_t>()[c] = static_cast<int32_t>(z[z.size() == 1 ? 0 : static_cast<std::size_t>(c)]) - centre;
    any = any || zp.data<int32_t>()[c] != 0;
  }
  zero_points = any ? std::move(zp) : Tensor();
  out = Tensor(element_type::i8, w.get_shape());
  for (int64_t i = 0; i < static_cast<int64_t>(w.get_size()); ++i)
    out.data<int8_t>()[i] = static_cast<int8_t>(t == element_type::u8 ? static_cast<int>(w.data<uint8_t>()[i]) - 128
                                                                        : w.data<int8_t>()[i]);
  return true;
}

memory::dims weight_dims(const Shape& ws, int64_t groups) {
  memory::dims d(ws.begin(), ws.end());
  if (groups > 1) {
    d.insert(d.begin(), groups);
    d[1] /= groups;
  }
  return d;
}

/// The activation's zero point (u8, one value) as the s32 oneDNN reads at run time.
void zero_point_to_s32(const reference::context&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  out[0].data<int32_t>()[0] = static_cast<int32_t>(in[0].data<uint8_t>()[0]);
}

/// Channels-last: the epilogue reads it as rows of channels.
memory::desc channels_last(const Shape& s, dt type) {
  const memory::dims d(s.begin(), s.end());
  return memory::desc(d, type, s.size() == 3 ? tag::acb : s.size() == 4 ? tag::acdb : tag::acdeb);
}

memory::desc bias_md(int64_t channels, std::size_t rank) {
  memory::dims d(rank, 1);
  d[1] = channels;
  return plain_md(Shape(d.begin(), d.end()), dt::f32);
}

/// Without VNNI: the convolution (split weights: those with l and with h) into s32
/// channels-last buffers (`args` holds the source, the weights and the zero point), then the
/// epilogue writes the chain's float result channels-last.
void epilogue_conv(plan_builder& b, const integer_conv_site& s, std::vector<binding> args) {
  const Op& op = b.g.ops[s.conv];
  const Op& last = b.g.ops[s.last];
  const memory::desc wei = s.pd.weights_desc(), dst = s.pd.dst_desc();
  const Shape ys = b.shape(op.outputs[0]);
  const int64_t channels = ys[1];
  auto s32_buffer = [&] { return b.typed_buffer(element_type::i32, ys, dst.get_size()); };
  std::vector<binding> sargs; // the window sums' convolution reads the same source and zero point
  for (const auto& a : args)
    if (a.arg == DNNL_ARG_SRC || a.arg == (DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC)) sargs.push_back(a);
  const int low = s32_buffer(), high = s.weights_high.empty() ? -1 : s32_buffer();
  args.push_back({DNNL_ARG_DST, low, dst});
  b.add_dnnl(op, s.pd, dnnl::convolution_forward(s.pd), args);
  b.p.steps.back().exec_type += " int8";
  if (high >= 0) {
  const memory::dims wd = weight_dims(s.weights_high.get_shape(), op.attr_int("group", 1));
  for (auto& a : args) {
    if (a.arg == DNNL_ARG_WEIGHTS)
      a.buf = b.const_buffer(b.reorder_constant(s.weights_high, plain_md(Shape(wd.begin(), wd.end()), dt::s8), wei));
    if (a.arg == DNNL_ARG_DST) a.buf = high;
  }
  b.add_dnnl(op, s.pd, dnnl::convolution_forward(s.pd), std::move(args));
  b.p.steps.back().exec_type += " int8";
  b.p.steps.back().name += "/high";
  }
  int sums = -1;
  if (!s.weight_zp.empty()) {
    const memory::desc sd = s.sums_pd.dst_desc(), swei = s.sums_pd.weights_desc();
    const Shape sw = s.sums_weights.get_shape();
    sums = b.typed_buffer(element_type::i32, Shape{static_cast<int64_t>(sd.get_size() / sizeof(int32_t))});
    sargs.push_back({DNNL_ARG_WEIGHTS, b.const_buffer(b.reorder_constant(s.sums_weights, plain_md(sw, dt::s8), swei)), swei});
    sargs.push_back({DNNL_ARG_DST, sums, sd});
    b.add_dnnl(op, s.sums_pd, dnnl::convolution_forward(s.sums_pd), std::move(sargs));
    b.p.steps.back().exec_type += " int8";
    b.p.steps.back().name += "/window_sums";
  }
  Tensor no_sums(element_type::i32, Shape{channels});
  std::fill_n(no_sums.data<int32_t>(), channels, 0); // oneDNN took the zero point off already
  std::vector<int> ins{low, -1, b.const_buffer(no_sums), s.weight_zp.empty() ? -1 : b.const_buffer(s.weight_zp), sums,
                       s.chain.scale == no_value ? -1 : b.input_plain(s.chain.scale),
                       s.chain.bias == no_value ? -1 : b.input_plain(s.chain.bias), high};
  Op copy = last;
  copy.inputs.clear();
  const int out = b.output(last.outputs[0], channels_last(ys, dt::f32));
  b.add_kernel_step(std::move(copy), integer_product_epilogue(), "native:integer_conv_epilogue", std::move(ins), {out});
}

} // namespace

std::optional<integer_conv_site> find_integer_conv(const plan_builder& b, std::size_t k) {
  const graph::Graph& g = b.g;
  const Op& op = g.ops[k];
  if (op.type != "ConvInteger" || !op.domain.empty() || op.outputs.size() != 1) return std::nullopt;
  const ValueId X = input_or_none(op, 0), W = input_or_none(op, 1), XZ = input_or_none(op, 2), WZ = input_or_none(op, 3), Y = op.outputs[0];
  if (X == no_value || g.is_constant(X) || b.val(X).type != element_type::u8 || !b.val(X).shape.is_static() ||
      !b.val(Y).shape.is_static() || b.val(Y).type != element_type::i32)
    return std::nullopt;
  if (XZ != no_value && (b.val(XZ).type != element_type::u8 || !b.val(XZ).shape.is_static() || shape_size(b.shape(XZ)) != 1))
    return std::nullopt;
  integer_conv_site s;
  s.conv = s.last = k;
  if (!s8_weights(g, W, WZ, s.weights, s.weight_zp)) return std::nullopt;
  // Without exact int8 products, weights in [-64, 64] (7-bit ones: reduce_range) need no split:
  // no 16-bit pair sum of u8 x s8 saturates there (255 x 128 < 2^15).
  const bool exact = int8_exact_here();
  const bool split = !exact && std::any_of(s.weights.data<int8_t>(), s.weights.data<int8_t>() + s.weights.get_size(),
                                           [](int8_t v) { return v < -64 || v > 64; });
  const Shape xs = b.shape(X), ys = b.shape(Y), ws = s.weights.get_shape();
  if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size() || shape_size(xs) == 0 || shape_size(ys) == 0)
    return std::nullopt;
  window w;
  if (!read_window(op, xs, ys, memory::dims(ws.begin() + 2, ws.end()), w)) return std::nullopt;
  s.chain = follow_float_chain(b, Y, ys[1], 1);
  if (!s.chain.ops.empty()) s.last = s.chain.ops.back();
  // Without VNNI oneDNN 2.6 has no int8 convolution that scales into f32 (only its reference
  // one): s32 channels-last, then the native epilogue runs the chain.
  // Weight zero points: the epilogue takes them off (with VNNI too).
  s.epilogue = (!exact || !s.weight_zp.empty()) && !s.chain.ops.empty();
  if (!s.weight_zp.empty() && !s.epilogue) return std::nullopt; // an s32 result: the reference kernel
  if (split) {
    if (s.chain.ops.empty()) return std::nullopt; // an s32 result stays on the reference kernel
    s.weights_high = Tensor(element_type::i8, ws);
    auto* q = s.weights.data<int8_t>();
    auto* h = s.weights_high.data<int8_t>();
    for (int64_t i = 0; i < static_cast<int64_t>(s.weights.get_size()); ++i) {
      const int32_t v = q[i], l = v & 63;
      h[i] = static_cast<int8_t>((v - l) / 64);
      q[i] = static_cast<int8_t>(l);
    }
  }

  // The chain in oneDNN's own output scales and bias post-op (with VNNI); where oneDNN 2.6 has
  // no kernel for that (AVX-512 VNNI with a run-time zero point: only its reference one), the
  // native epilogue runs it after an s32 convolution, as without VNNI.
  auto primitive_for = [&](bool epilogue) {
    dnnl::primitive_attr attr = plan_builder::base_attr();
    if (XZ != no_value) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    if (s.chain.scale != no_value && !epilogue)
      attr.set_output_scales(shape_size(b.shape(s.chain.scale)) > 1 ? 1 << 1 : 0, {DNNL_RUNTIME_F32_VAL});
    if (s.chain.bias != no_value && !epilogue) {
      dnnl::post_ops po;
      po.append_binary(dnnl::algorithm::binary_add, bias_md(ys[1], ys.size()));
      attr.set_post_ops(po);
    }
    const dt out_t = s.chain.ops.empty() || epilogue ? dt::s32 : dt::f32;
    memory::desc src(memory::dims(xs.begin(), xs.end()), dt::u8, tag::any),
        dst = epilogue ? channels_last(ys, dt::s32) : memory::desc(memory::dims(ys.begin(), ys.end()), out_t, tag::any),
        wei(weight_dims(ws, op.attr_int("group", 1)), dt::s8, tag::any);
    try {
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei,
                                        memory::desc(), dst, w.strides, w.dil, w.pad_l, w.pad_r);
      s.pd = dnnl::convolution_forward::primitive_desc(d, attr, b.p.eng);
    } catch (const dnnl::error&) {
      return false; // no int8 kernel with these zero points or scales
    }
    // A reference implementation is no faster than the reference kernel and no better tested.
    return std::string(s.pd.impl_info_str()).rfind("ref", 0) != 0;
  };
  if (!primitive_for(s.epilogue)) {
    if (s.epilogue || s.chain.ops.empty()) return std::nullopt; // the reference kernel runs it
    s.epilogue = true;
    if (!primitive_for(true)) return std::nullopt;
  }
  if (!s.weight_zp.empty()) {
    // The window sums of x - x_zp, per group: a convolution with weights of ones, one output
    // channel per group (exact: no pair of u8 x 1 saturates), channels-last s32.
    // oneDNN has no int8 kernel for one output channel per group but depthwise: then one sum
    // per output channel (the same per group, taken again).
    const int64_t groups = op.attr_int("group", 1);
    memory::dims swd;
    for (const int64_t per_group : {int64_t{1}, ys[1] / groups}) {
      Shape sw = ws;
      sw[0] = groups * per_group;
      Shape sy = ys;
      sy[1] = groups * per_group;
      swd = weight_dims(sw, groups); // [O, IC, k...] or [G, O/G, IC/G, k...]
      dnnl::primitive_attr sums_attr = plan_builder::base_attr();
      if (XZ != no_value) sums_attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      try {
        dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                          s.pd.src_desc(), memory::desc(swd, dt::s8, tag::any), memory::desc(),
                                          channels_last(sy, dt::s32), w.strides, w.dil, w.pad_l, w.pad_r);
        s.sums_pd = dnnl::convolution_forward::primitive_desc(d, sums_attr, b.p.eng);
      } catch (const dnnl::error&) {
        continue;
      }
      if (std::string(s.sums_pd.impl_info_str()).rfind("ref", 0) != 0) break;
      s.sums_pd = {};
    }
    if (!s.sums_pd) return std::nullopt;
    s.sums_weights = Tensor(element_type::i8, Shape(swd.begin(), swd.end()));
    std::fill_n(s.sums_weights.data<int8_t>(), s.sums_weights.get_size(), int8_t{1});
  }
  return s;
}

void build_integer_conv(plan_builder& b, const integer_conv_site& s) {
  const Op& op = b.g.ops[s.conv];
  const Op& last = b.g.ops[s.last];
  const memory::desc src = s.pd.src_desc(), wei = s.pd.weights_desc(), dst = s.pd.dst_desc();
  const Shape ws = s.weights.get_shape();
  const memory::dims wd = weight_dims(ws, op.attr_int("group", 1));
  std::vector<binding> args{
      {DNNL_ARG_SRC, b.input(op.inputs[0], src), src},
      {DNNL_ARG_WEIGHTS,
       b.const_buffer(b.reorder_constant(s.weights, plain_md(Shape(wd.begin(), wd.end()), dt::s8), wei)), wei}};
  if (const ValueId XZ = input_or_none(op, 2); XZ != no_value) {
    const int zp = b.typed_buffer(element_type::i32, Shape{1});
    Op copy = op;
    copy.name += "/zero_point";
    copy.inputs.clear();
    b.add_kernel_step(std::move(copy), zero_point_to_s32, "native:zero_point", {b.input_plain(XZ)}, {zp});
    args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp, memory::desc({1}, dt::s32, tag::a)});
  }
  if (s.epilogue) {
    epilogue_conv(b, s, std::move(args));
    return;
  }
  if (s.chain.scale != no_value) {
    const int64_t n = shape_size(b.shape(s.chain.scale));
    args.push_back({DNNL_ARG_ATTR_OUTPUT_SCALES, b.input_plain(s.chain.scale), memory::desc({n}, dt::f32, tag::a)});
  }
  if (s.chain.bias != no_value) {
    const Shape ys = b.shape(op.outputs[0]);
    const memory::desc md = bias_md(ys[1], ys.size());
    args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, b.input(s.chain.bias, md), md});
  }
  args.push_back({DNNL_ARG_DST, b.output(last.outputs[0], dst), dst});
  b.add_dnnl(op, s.pd, dnnl::convolution_forward(s.pd), std::move(args));
  b.p.steps.back().exec_type += " int8";
}

} // namespace troupe::kernels::cpu
