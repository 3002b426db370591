/// oneDNN int8 convolution and matmul for the sites find_int8_sites recognizes. oneDNN 2.6
/// computes dst = output_scale * (sum((src - src_zp) * wei) + bias), padding counting as the
/// zero point (so as src - src_zp = 0, as ONNX pads the dequantized input), then the post-ops;
/// the output scale is x_scale * w_scale per channel, so the bias is given in accumulator
/// units, and requantization is one linear post-op (1 / y_scale, + y_zp) before the rounding,
/// saturating conversion to u8/s8.
#include "kernels/cpu/int8_ops.hpp"

#include <cmath>
#include <limits>

namespace troupe::kernels::cpu {

using dnnl::algorithm;
using tag = memory::format_tag;
using dt = memory::data_type;

const std::vector<std::string>& int8_op_types() {
  static const std::vector<std::string> types{"ConvInteger",   "DequantizeLinear", "MatMulInteger",
                                              "QLinearConv",   "QLinearMatMul",    "QuantizeLinear"};
  return types;
}

/// How far a weight may lie from its int8 grid point, in grid steps: a per-channel factor that
/// the graph passes folded into DequantizeLinear'd weights (fold_conv_affine: PP-OCR's learnable
/// affine blocks) leaves each weight within a few float roundings of q * (scale * factor), and
/// OpenVINO's int8 IRs subtract zero points of +-2^-17 (float residue of their quantizer) from
/// int8 weights. 1/4096 of a step is far below what the quantization itself moves a weight.
constexpr float kGridTolerance = 1.f / (1 << 12);

bool exact_int8(const Tensor& w, std::size_t axis, Tensor& q, std::vector<float>& scale) {
  if (w.get_element_type() != element_type::f32 || axis >= w.get_shape().size()) return false;
  const Shape& s = w.get_shape();
  int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < axis; ++i) outer *= s[i];
  for (std::size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
  const int64_t len = s[axis];
  const float* wp = w.data<float>();
  q = Tensor(element_type::i8, s);
  auto* qp = q.data<int8_t>();
  scale.assign(static_cast<std::size_t>(len), 1.f);
  for (int64_t c = 0; c < len; ++c) {
    auto at = [&](int64_t o, int64_t i) { return static_cast<std::size_t>((o * len + c) * inner + i); };
    float m = 0.f;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) m = std::max(m, std::fabs(wp[at(o, i)]));
    if (!std::isfinite(m)) return false;
    if (m == 0.f) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) qp[at(o, i)] = 0;
      continue;
    }
    // A symmetric quantizer's scale is max|w| / 127 (an ulp either way after the division);
    // a channel whose largest |q| is smaller has it at max|w| / k.
    bool found = false;
    for (int k = 127; k >= 1 && !found; --k) {
      const float base = m / static_cast<float>(k);
      for (float cand : {base, std::nextafter(base, 0.f), std::nextafter(base, std::numeric_limits<float>::infinity())}) {
        bool good = true;
        for (int64_t o = 0; o < outer && good; ++o)
          for (int64_t i = 0; i < inner && good; ++i) {
            const float v = wp[at(o, i)], r = std::nearbyint(v / cand);
            good = r >= -128.f && r <= 127.f && std::fabs(v / cand - r) <= kGridTolerance;
            if (good) qp[at(o, i)] = static_cast<int8_t>(r);
          }
        if (good) {
          scale[static_cast<std::size_t>(c)] = cand;
          found = true;
          break;
        }
      }
    }
    if (!found) return false;
  }
  return true;
}

namespace {

dt int_type(element_type t) { return t == element_type::i8 ? dt::s8 : t == element_type::u8 ? dt::u8 : dt::undef; }

/// Output scales, source zero point, activation and requantization.
dnnl::primitive_attr site_attr(const graph::Op& op, const int8_site& s, int channel_dim) {
  dnnl::primitive_attr attr;
  if (!make_attr(op, attr)) throw dnnl::error(dnnl_unimplemented, "activation");
  if (s.requantize) { // after the activation
    auto po = attr.get_post_ops();
    po.append_eltwise(1.f, algorithm::eltwise_linear, 1.f / s.y_scale, static_cast<float>(s.y_zp));
    attr.set_post_ops(po);
  }
  if (!s.w_scale.empty()) {
    const std::size_t n = std::max(s.w_scale.size(), s.y_channel_scale.size());
    std::vector<float> sc(n);
    for (std::size_t i = 0; i < n; ++i) {
      sc[i] = s.x_scale * s.w_scale[s.w_scale.size() > 1 ? i : 0];
      if (!s.y_channel_scale.empty()) sc[i] /= s.y_channel_scale[i];
    }
    attr.set_output_scales(sc.size() > 1 ? 1 << channel_dim : 0, sc);
  }
  if (s.x_zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {s.x_zp});
  return attr;
}

dt dst_type(const plan_builder& b, const int8_site& s) {
  if (s.requantize) return int_type(b.val(s.y).type);
  return s.w_scale.empty() ? dt::s32 : dt::f32;
}

/// The weights' dims as the primitive sees them: (G,) O, I, k... for a convolution, [1.., K, N]
/// for a product of rank r.
memory::dims weight_dims(const plan_builder& b, const graph::Op& op, const int8_site& s) {
  const Shape& ws = s.w.get_shape();
  memory::dims d(ws.begin(), ws.end());
  if (s.is_conv) {
    const int64_t groups = op.attr_int("group", 1);
    if (groups > 1) {
      d.insert(d.begin(), groups);
      d[1] /= groups;
    }
  } else {
    while (d.size() < b.shape(s.y).size()) d.insert(d.begin(), 1);
  }
  return d;
}

/// `t` (plain, dims `d`) reordered once into `want`, as a constant buffer of the plan.
int reordered_constant(plan_builder& b, const Tensor& t, const memory::dims& d, dt type, const memory::desc& want) {
  return b.const_buffer(b.reorder_constant(t, plain_md(Shape(d.begin(), d.end()), type), want));
}

} // namespace

void make_int8_pd(plan_builder& b, const graph::Op& op, int8_site& s) {
  const Shape xs = b.shape(s.x), ys = b.shape(s.y);
  const dt src_t = int_type(b.val(s.x).type), out_t = dst_type(b, s);
  if (src_t == dt::undef || out_t == dt::undef) throw dnnl::error(dnnl_unimplemented, "type");
  const memory::dims wd = weight_dims(b, op, s);
  memory::dims bias_dims{static_cast<int64_t>(s.bias.size())};
  if (s.is_conv) {
    const Shape& ws = s.w.get_shape();
    window w;
    if (xs.size() < 3 || xs.size() > 5 || !read_window(op, xs, ys, memory::dims(ws.begin() + 2, ws.end()), w))
      throw dnnl::error(dnnl_unimplemented, "window");
    memory::desc src(memory::dims(xs.begin(), xs.end()), src_t, tag::any),
        dst(memory::dims(ys.begin(), ys.end()), out_t, tag::any), wei(wd, dt::s8, tag::any),
        bias = s.bias.empty() ? memory::desc() : memory::desc(bias_dims, dt::f32, tag::a);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, algorithm::convolution_direct, src, wei, bias,
                                      dst, w.strides, w.dil, w.pad_l, w.pad_r);
    s.conv_pd = dnnl::convolution_forward::primitive_desc(d, site_attr(op, s, 1), b.p.eng);
    return;
  }
  Shape as = xs;
  while (as.size() < ys.size()) as.insert(as.begin(), 1);
  if (as.size() != ys.size() || ys.size() < 2) throw dnnl::error(dnnl_unimplemented, "rank");
  const int r = static_cast<int>(ys.size());
  bias_dims.insert(bias_dims.begin(), r - 1, 1);
  memory::desc src = plain_md(as, src_t), dst = plain_md(ys, out_t), wei(wd, dt::s8, tag::any),
               bias = s.bias.empty() ? memory::desc() : plain_md(Shape(bias_dims.begin(), bias_dims.end()), dt::f32);
  s.matmul_pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wei, bias, dst), site_attr(op, s, r - 1), b.p.eng);
}

void build_int8_site(plan_builder& b, const graph::Op& op, const int8_site& s) {
  const dnnl::primitive_desc_base& pd = s.is_conv ? static_cast<const dnnl::primitive_desc_base&>(s.conv_pd)
                                                  : static_cast<const dnnl::primitive_desc_base&>(s.matmul_pd);
  const memory::desc src = pd.src_desc(), wei = pd.weights_desc(), dst = pd.dst_desc();
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(s.x, src), src},
                            {DNNL_ARG_WEIGHTS, reordered_constant(b, s.w, weight_dims(b, op, s), dt::s8, wei), wei}};
  if (!s.bias.empty()) {
    Tensor t(element_type::f32, Shape{static_cast<int64_t>(s.bias.size())});
    std::copy(s.bias.begin(), s.bias.end(), t.data<float>());
    const memory::desc bias = s.is_conv ? s.conv_pd.bias_desc() : s.matmul_pd.bias_desc();
    args.push_back({DNNL_ARG_BIAS, b.const_buffer(t), bias});
  }
  args.push_back({DNNL_ARG_DST, b.output(s.y, dst), dst});
  if (s.is_conv) b.add_dnnl(op, pd, dnnl::convolution_forward(s.conv_pd), std::move(args));
  else b.add_dnnl(op, pd, dnnl::matmul(s.matmul_pd), std::move(args));
  b.p.steps.back().exec_type += " int8";
}

bool build_quantize_reorder(plan_builder& b, const graph::Op& op) {
  const bool quantize = op.type == "QuantizeLinear";
  if ((!quantize && op.type != "DequantizeLinear") || !op.domain.empty() || op.input_count() < 2 || op.outputs.size() != 1)
    return false;
  const graph::ValueId X = op.inputs[0], Y = op.outputs[0];
  float scale = 1.f;
  int32_t zp = 0;
  if (!scalar_scale(b.g, op.inputs[1], scale) || !scalar_zp(b.g, op.input_count() > 2 ? op.inputs[2] : graph::no_value, zp) ||
      b.g.is_constant(X) || !b.val(X).shape.is_static() || shape_size(b.shape(X)) == 0)
    return false;
  const dt qt = int_type(b.val(quantize ? Y : X).type);
  if (qt == dt::undef || b.val(quantize ? X : Y).type != element_type::f32) return false;
  memory::desc src = b.current_md(X);
  if (src == memory::desc()) return false;
  auto attr = plan_builder::base_attr();
  memory::desc dst;
  if (quantize) {
    // oneDNN multiplies by 1 / scale where ONNX divides: a quotient within a float rounding of
    // a tie may round the other way (one step, as between any two int8 runtimes).
    attr.set_output_scales(0, {1.f / scale});
    if (zp != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {zp});
    const Shape ys = b.shape(Y);
    dst = ys.size() == 4 ? memory::desc(memory::dims(ys.begin(), ys.end()), qt, tag::acdb) : b.plain(Y);
  } else {
    attr.set_output_scales(0, {scale}); // exactly float(x - zp) * scale, as the reference
    if (zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {zp});
    dst = src;
    dst.data.data_type = dnnl_f32;
  }
  dnnl::reorder::primitive_desc pd;
  try {
    pd = dnnl::reorder::primitive_desc(b.p.eng, src, b.p.eng, dst, attr);
  } catch (const dnnl::error&) {
    return false; // no reorder for these layouts with zero points: the native loop runs it
  }
  std::vector<binding> args{{DNNL_ARG_FROM, b.input(X, src), src}, {DNNL_ARG_TO, b.output(Y, dst), dst}};
  b.add_dnnl(op, pd, dnnl::reorder(pd), std::move(args));
  return true;
}

} // namespace troupe::kernels::cpu
