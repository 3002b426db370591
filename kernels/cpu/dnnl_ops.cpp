/// oneDNN implementations of the compute-heavy ops. Each builder creates its primitive
/// descriptor first and returns false (nothing added) when oneDNN cannot run the op as ONNX
/// defines it; the plan then runs the reference kernel.
#include <cfloat>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>

#include <troupe/exception.hpp>

#include "kernels/cpu/cpu_device.hpp"
#include "kernels/cpu/int8_ops.hpp"
#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/packed_gemm_bf16.hpp"
#include "kernels/cpu/packed_gemm_f32.hpp"
#include "kernels/cpu/gru.hpp"
#include "kernels/cpu/lstm.hpp"
#include "kernels/cpu/plan_builder.hpp"
#include "kernels/cpu/vanilla_rnn.hpp"
#include "kernels/cpu/resampling_match.hpp"
#include "kernels/reference/common.hpp"

namespace troupe::kernels::cpu {

using dnnl::algorithm;
using graph::Op;

namespace {
algorithm gelu_algorithm(const Op& op) {
  return op.attr_string("approximate", "none") == "tanh" ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf;
}
} // namespace

/// Fused activation (graph::fuse_activations) as eltwise post-ops; false when unknown.
bool activation_post_ops(const Op& op, dnnl::post_ops& po) {
  if (!op.has_attr("activation")) return true;
  auto a = op.attr_string("activation", "");
  auto prm = op.attr_floats("activation_params");
  auto param = [&](std::size_t i, float def) { return i < prm.size() ? prm[i] : def; };
  if (a == "Relu") po.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
  else if (a == "LeakyRelu") po.append_eltwise(1.f, algorithm::eltwise_relu, param(0, 0.01f), 0.f);
  else if (a == "Sigmoid") po.append_eltwise(1.f, algorithm::eltwise_logistic, 0.f, 0.f);
  else if (a == "Tanh") po.append_eltwise(1.f, algorithm::eltwise_tanh, 0.f, 0.f);
  else if (a == "HardSwish") po.append_eltwise(1.f, algorithm::eltwise_hardswish, 0.f, 0.f);
  else if (a == "Gelu") po.append_eltwise(1.f, gelu_algorithm(op), 0.f, 0.f);
  else if (a == "Clip") po.append_eltwise(1.f, algorithm::eltwise_clip_v2, param(0, -FLT_MAX), param(1, FLT_MAX));
  else if (a == "HardSigmoid") {
    // oneDNN 2.6 has no hardsigmoid: max(0, min(1, alpha*x + beta)) as linear then clip.
    po.append_eltwise(1.f, algorithm::eltwise_linear, param(0, 0.2f), param(1, 0.5f));
    po.append_eltwise(1.f, algorithm::eltwise_clip_v2, 0.f, 1.f);
  } else return false;
  return true;
}

namespace {

using dnnl::prop_kind;
using tag = memory::format_tag;
using dt = memory::data_type;
using graph::ValueId;

memory::dims to_dims(const Shape& s) { return memory::dims(s.begin(), s.end()); }

bool is_f32(const plan_builder& b, ValueId v) { return v != graph::no_value && b.val(v).type == element_type::f32; }

} // namespace

bool make_attr(const Op& op, dnnl::primitive_attr& attr) {
  attr = plan_builder::base_attr();
  dnnl::post_ops po;
  if (!activation_post_ops(op, po)) return false;
  if (po.len() > 0) attr.set_post_ops(po);
  return true;
}

bool read_window(const Op& op, const Shape& x, const Shape& y, memory::dims kernel, window& w) {
  std::size_t n = x.size() - 2;
  w.kernel = std::move(kernel);
  auto s = op.attr_ints("strides", std::vector<int64_t>(n, 1));
  auto d = op.attr_ints("dilations", std::vector<int64_t>(n, 1));
  auto pads = op.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (s.size() != n || d.size() != n || pads.size() != 2 * n || w.kernel.size() != n) return false;
  auto ap = op.attr_string("auto_pad", "NOTSET");
  w.strides.assign(s.begin(), s.end());
  w.dil.clear();
  for (auto v : d) w.dil.push_back(v - 1);
  w.pad_l.assign(n, 0);
  w.pad_r.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    int64_t ext = (w.kernel[i] - 1) * d[i] + 1;
    if (ap == "NOTSET") {
      w.pad_l[i] = pads[i];
      w.pad_r[i] = pads[i + n];
    } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(0, (y[i + 2] - 1) * s[i] + ext - x[i + 2]);
      w.pad_l[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_r[i] = total - w.pad_l[i];
    } else if (ap != "VALID") {
      return false;
    }
  }
  return true;
}

namespace {

/// The primitive descriptor with the op's activation and the ops chained after it as
/// post-ops; without the chain when oneDNN refuses it or would run it on a reference path.
template <class PD, class F>
PD with_chain(plan_builder& b, const Op& op, post_chain& ch, F make) {
  dnnl::primitive_attr attr;
  if (!make_attr(op, attr)) throw dnnl::error(dnnl_unimplemented, "activation");
  PD plain_pd = make(attr);
  ch = b.chain_post_ops(op.outputs[0], attr.get_post_ops(), op.type != "ConvTranspose");
  if (!ch.fused_ops.empty()) {
    try {
      dnnl::primitive_attr a;
      make_attr(op, a);
      a.set_post_ops(ch.po);
      PD pd = make(a);
      // Only when the same kernel takes the post-ops: other implementations (gemm-based
      // convolution) are slower and gave wrong results with binary post-ops in oneDNN 2.6.
      if (std::string(pd.impl_info_str()) == plain_pd.impl_info_str()) return pd;
    } catch (const dnnl::error&) {
    }
    ch = post_chain{};
    ch.out = op.outputs[0];
  }
  return plain_pd;
}



/// A 3x3, stride-1, undilated, ungrouped 2-D f32 convolution: oneDNN's Winograd kernels
/// (F(2,3)/F(4,3), AVX-512) run it in about half the time of the direct ones with errors of
/// the same order (measured on det's 96->24 convolutions: 1.41 vs 2.93 ms on 160x160, max
/// error 1.2e-6 vs 0.85e-6 of max |y| against a double-precision reference). Its
/// `convolution_auto` never picks it, so the plan asks for it; TROUPE_CPU_NO_WINOGRAD=1 turns
/// it off for comparisons. Whether it pays is winograd_pays'.
bool winograd_candidate(const window& w, int64_t groups, dt cdt) {
  const char* e = std::getenv("TROUPE_CPU_NO_WINOGRAD"); // read per compile: tools switch it
  const bool off = e && *e && std::string(e) != "0";
  auto all = [](const memory::dims& d, int64_t v) { return std::all_of(d.begin(), d.end(), [&](auto x) { return x == v; }); };
  return !off && cdt == dt::f32 && groups == 1 && w.kernel.size() == 2 && all(w.kernel, 3) && all(w.strides, 1) &&
         all(w.dil, 0);
}

/// Winograd wants blocked layouts; the direct kernel may have chosen channels-last (it does
/// for det's 24-channel maps, which Concat then joins cheaply). Winograd halves the
/// arithmetic, so it pays when the time saved beats the reorders it may cost: about half the
/// direct time (~340 GFLOP/s on 2 threads here) against bytes moved at ~27 GB/s (det's
/// measured reorders), with a 1.5x margin: 40 FLOP per byte moved.
bool winograd_pays(const plan_builder& b, const Op& op, const memory::desc& wino_src, const memory::desc& wino_dst,
                   const memory::desc& direct_dst) {
  const Shape& ws = b.shape(op.inputs[1]);
  double flops = 2.0 * static_cast<double>(shape_size(b.shape(op.outputs[0]))) * static_cast<double>(ws[1] * ws[2] * ws[3]);
  double moved = (b.has_layout(op.inputs[0], wino_src) ? 0.0 : static_cast<double>(wino_src.get_size())) +
                 (wino_dst == direct_dst ? 0.0 : static_cast<double>(wino_dst.get_size()));
  return flops >= 40.0 * moved;
}

/// A result read only by convolutions stays in the layout it was made in (they take blocked
/// layouts anyway); any other goes back to the direct kernel's layout, so that the ops after
/// it see what they would have without Winograd.
bool read_only_by_convolutions(const plan_builder& b, ValueId v) {
  const auto& rd = b.readers(v);
  return !rd.empty() && std::all_of(rd.begin(), rd.end(), [&](std::size_t k) {
    return b.g.ops[k].type == "Conv" || b.g.ops[k].type == "ConvTranspose";
  });
}

bool build_conv(plan_builder& b, const Op& op) {
  ValueId X = op.inputs[0], W = op.inputs[1], B = op.input_count() > 2 ? op.inputs[2] : graph::no_value;
  ValueId Y = op.outputs[0];
  if (!is_f32(b, X) || !is_f32(b, W) || (B != graph::no_value && !is_f32(b, B))) return false;
  Shape xs = b.shape(X), ws = b.shape(W), ys = b.shape(Y);
  if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size()) return false;
  int64_t groups = op.attr_int("group", 1);
  window w;
  if (!read_window(op, xs, ys, memory::dims(ws.begin() + 2, ws.end()), w)) return false;
  dt cdt = b.precision == element_type::bf16 ? dt::bf16 : dt::f32;
  memory::dims wd = to_dims(ws);
  if (groups > 1) {
    wd.insert(wd.begin(), groups);
    wd[1] /= groups;
  }
  memory::desc src_md(to_dims(xs), cdt, tag::any), dst_md(to_dims(ys), cdt, tag::any), w_md(wd, cdt, tag::any);
  memory::desc bias_md = B != graph::no_value ? memory::desc({ys[1]}, dt::f32, tag::a) : memory::desc();
  dnnl::primitive_attr attr;
  if (!make_attr(op, attr)) return false;
  auto desc = [&](algorithm alg) {
    return dnnl::convolution_forward::desc(prop_kind::forward_inference, alg, src_md, w_md, bias_md, dst_md,
                                           w.strides, w.dil, w.pad_l, w.pad_r);
  };
  algorithm alg = algorithm::convolution_direct;
  memory::desc direct_dst;
  if (winograd_candidate(w, groups, cdt)) {
    // The layouts each kernel wants, from descriptors without the post-op chain (cheap: no code
    // is generated until a primitive is made).
    auto plain_pd = [&](algorithm a) { return dnnl::convolution_forward::primitive_desc(desc(a), attr, b.p.eng); };
    direct_dst = plain_pd(algorithm::convolution_direct).dst_desc();
    try {
      auto wino = plain_pd(algorithm::convolution_winograd);
      if (winograd_pays(b, op, wino.src_desc(), wino.dst_desc(), direct_dst))
        alg = algorithm::convolution_winograd;
    } catch (const dnnl::error&) {
      // no Winograd kernel for this shape or ISA: the direct one
    }
  }
  post_chain ch;
  const auto d = desc(alg);
  auto pd = with_chain<dnnl::convolution_forward::primitive_desc>(
      b, op, ch, [&](const dnnl::primitive_attr& a) { return dnnl::convolution_forward::primitive_desc(d, a, b.p.eng); });
  if (groups > 1 && add_native_depthwise(b, op, pd, ch, w)) return true;
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, pd.src_desc()), pd.src_desc()},
                            {DNNL_ARG_WEIGHTS, b.input(W, pd.weights_desc()), pd.weights_desc()}};
  if (B != graph::no_value) args.push_back({DNNL_ARG_BIAS, b.input(B, pd.bias_desc()), pd.bias_desc()});
  args.insert(args.end(), ch.args.begin(), ch.args.end());
  args.push_back({DNNL_ARG_DST, b.output(ch.out, pd.dst_desc()), pd.dst_desc()});
  b.commit(ch);
  b.add_dnnl(op, pd, dnnl::convolution_forward(pd), std::move(args));
  if (alg == algorithm::convolution_winograd && pd.dst_desc() != direct_dst && !read_only_by_convolutions(b, ch.out))
    b.relayout(ch.out, direct_dst);
  return true;
}

bool build_conv_transpose(plan_builder& b, const Op& op) {
  ValueId X = op.inputs[0], W = op.inputs[1], B = op.input_count() > 2 ? op.inputs[2] : graph::no_value;
  ValueId Y = op.outputs[0];
  if (!is_f32(b, X) || !is_f32(b, W) || (B != graph::no_value && !is_f32(b, B))) return false;
  if (op.attr_string("auto_pad", "NOTSET") != "NOTSET" || op.has_attr("output_shape")) return false;
  Shape xs = b.shape(X), ws = b.shape(W), ys = b.shape(Y);
  std::size_t n = xs.size() - 2;
  if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size()) return false;
  int64_t g = op.attr_int("group", 1);
  window w;
  if (!read_window(op, xs, ys, memory::dims(ws.begin() + 2, ws.end()), w)) return false;
  for (std::size_t i = 0; i < n; ++i) {
    // output_padding extends the end: oneDNN sees it as less right padding.
    w.pad_r[i] = (xs[i + 2] - 1) * w.strides[i] + (w.kernel[i] - 1) * (w.dil[i] + 1) + 1 - w.pad_l[i] - ys[i + 2];
    if (w.pad_r[i] < 0) return false;
  }
  // ONNX weights are [C, M/g, k...]; oneDNN wants (g,) O, I, k... : a strided view of them.
  int64_t C = ws[0], Mg = ws[1], K = 1;
  for (std::size_t i = 2; i < ws.size(); ++i) K *= ws[i];
  memory::dims wd, wstr;
  if (g > 1) {
    wd = {g, Mg, C / g};
    wstr = {(C / g) * Mg * K, K, Mg * K};
  } else {
    wd = {Mg, C};
    wstr = {K, Mg * K};
  }
  std::vector<int64_t> ks(ws.begin() + 2, ws.end());
  memory::dims kstr(ks.size(), 1);
  for (std::size_t i = ks.size() - 1; i > 0; --i) kstr[i - 1] = kstr[i] * ks[i];
  for (std::size_t i = 0; i < ks.size(); ++i) {
    wd.push_back(ks[i]);
    wstr.push_back(kstr[i]);
  }
  memory::desc w_view(wd, dt::f32, wstr);
  dt cdt = b.precision == element_type::bf16 ? dt::bf16 : dt::f32;
  memory::desc src_md(to_dims(xs), cdt, tag::any), dst_md(to_dims(ys), cdt, tag::any), w_md(wd, cdt, tag::any);
  memory::desc bias_md = B != graph::no_value ? memory::desc({ys[1]}, dt::f32, tag::a) : memory::desc();
  dnnl::primitive_attr attr;
  if (!make_attr(op, attr)) return false;
  dnnl::deconvolution_forward::desc d(prop_kind::forward_inference, algorithm::deconvolution_direct, src_md, w_md,
                                      bias_md, dst_md, w.strides, w.dil, w.pad_l, w.pad_r);
  post_chain ch;
  auto pd = with_chain<dnnl::deconvolution_forward::primitive_desc>(
      b, op, ch, [&](const dnnl::primitive_attr& a) { return dnnl::deconvolution_forward::primitive_desc(d, a, b.p.eng); });
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, pd.src_desc()), pd.src_desc()},
                            {DNNL_ARG_WEIGHTS, b.input(W, pd.weights_desc(), &w_view), pd.weights_desc()}};
  if (B != graph::no_value) args.push_back({DNNL_ARG_BIAS, b.input(B, pd.bias_desc()), pd.bias_desc()});
  args.insert(args.end(), ch.args.begin(), ch.args.end());
  args.push_back({DNNL_ARG_DST, b.output(ch.out, pd.dst_desc()), pd.dst_desc()});
  b.commit(ch);
  b.add_dnnl(op, pd, dnnl::deconvolution_forward(pd), std::move(args));
  return true;
}

Shape pad_front(Shape s, std::size_t rank) {
  while (s.size() < rank) s.insert(s.begin(), 1);
  return s;
}

/// The Add of a constant bias along the last dimension that is the only reader of a MatMul's
/// output Y (a linear layer exported as MatMul + Add): the op's index and the bias, which the
/// product adds itself. bias no_value where Y has other readers or the Add's activation has no
/// post-op.
struct bias_add_site {
  std::size_t add = 0;
  ValueId bias = graph::no_value;
};
bias_add_site find_bias_add(const plan_builder& b, ValueId Y, const Shape& ys) {
  const auto& rd = b.readers(Y);
  if (rd.size() != 1 || b.is_graph_output(Y)) return {};
  const Op& add = b.g.ops[rd[0]];
  const ValueId c = add.inputs.size() == 2 ? (add.inputs[0] == Y ? add.inputs[1] : add.inputs[0]) : graph::no_value;
  dnnl::post_ops probe;
  if (add.type != "Add" || !add.domain.empty() || c == Y || c == graph::no_value || !b.g.is_constant(c) || !is_f32(b, c) ||
      b.shape(add.outputs[0]) != ys || !activation_post_ops(add, probe))
    return {};
  const Shape cs = pad_front(b.shape(c), ys.size());
  bool last_only = cs.size() == ys.size() && (cs.back() == ys.back() || cs.back() == 1);
  for (std::size_t i = 0; i + 1 < cs.size(); ++i) last_only = last_only && cs[i] == 1;
  if (!last_only) return {};
  return bias_add_site{rd[0], c};
}

/// A MatMul by a constant B on packed_gemm_f32 (its header says where and why), with the bias
/// Add after it when there is one without an activation; false, nothing added, where it does not
/// apply.
bool build_packed_matmul(plan_builder& b, const Op& op) {
  const ValueId A = op.inputs[0], Bv = op.inputs[1], Y = op.outputs[0];
  const bool bf16 = b.precision == element_type::bf16;
  if (op.has_attr("activation") || !b.g.is_constant(Bv) || !packed_gemm_f32_here() || (bf16 && !packed_gemm_bf16_here()) ||
      (!bf16 && b.precision != element_type::f32))
    return false;
  const Shape as = b.shape(A), bs = b.shape(Bv);
  if (bs.size() != 2 || as.size() < 2 || as.back() != bs[0] || b.shape(Y).back() != bs[1]) return false;
  const int64_t k = bs[0], n = bs[1], rows = k ? shape_size(as) / k : 0;
  if (!packed_gemm_f32_pays(rows, k, n)) return false;
  const auto site = find_bias_add(b, Y, b.shape(Y));
  const bool activation = site.bias != graph::no_value && b.g.ops[site.add].has_attr("activation");
  // oneDNN's matmul takes a bias Add with its activation (a Gelu) whole: leave it those, but the
  // wide products whose per-call packing is the cost. (Decided before anything is added.)
  if (activation && n < 4096) return false;
  const Tensor& w = *b.g.value(Bv).constant;
  const std::function<Tensor()> make = [&] {
    return bf16 ? pack_bf16_pair_panels(w.data<float>(), k, n) : pack_f32_panels(w.data<float>(), k, n);
  };
  const std::string key = std::string("cpu packed_gemm_") + (bf16 ? "bf16" : "f32") + " panels " + std::to_string(k) + "x" + std::to_string(n);
  const Tensor panels = b.derived ? *b.derived->get<Tensor>(key, {w}, make) : make();
  Tensor columns(element_type::i64, Shape{1});
  columns.data<int64_t>()[0] = n;
  Op copy = op;
  copy.inputs.clear(); // the step's operands are its buffers
  std::vector<int> ins{b.input_plain(A), b.const_buffer(panels), b.const_buffer(columns)};
  ValueId out = Y;
  if (site.bias != graph::no_value && !activation) {
    const Tensor& c = *b.g.value(site.bias).constant;
    Tensor bias(element_type::f32, Shape{n});
    for (int64_t j = 0; j < n; ++j) bias.data<float>()[j] = c.data<float>()[c.get_size() == 1 ? 0 : j];
    ins.push_back(b.const_buffer(bias));
    out = b.g.ops[site.add].outputs[0];
    copy.outputs = {out};
    post_chain fused;
    fused.fused_ops = {site.add};
    b.commit(fused);
  }
  b.add_kernel_step(std::move(copy), bf16 ? packed_gemm_bf16() : packed_gemm_f32(),
                    bf16 ? "native:packed_gemm_bf16" : "native:packed_gemm_f32", std::move(ins), {b.output(out, b.plain(out))});
  return true;
}

bool build_matmul(plan_builder& b, const Op& op) {
  ValueId A = op.inputs[0], Bv = op.inputs[1], Y = op.outputs[0];
  if (!is_f32(b, A) || !is_f32(b, Bv)) return false;
  if (build_packed_matmul(b, op)) return true;
  Shape as = b.shape(A), bs = b.shape(Bv), ys = b.shape(Y);
  if (as.size() < 2 || bs.size() < 2 || ys.size() != std::max(as.size(), bs.size()) || ys.size() > 12) return false;
  as = pad_front(as, ys.size());
  bs = pad_front(bs, ys.size());
  dt cdt = b.precision == element_type::bf16 ? dt::bf16 : dt::f32;
  memory::desc src_md = plain_md(as, cdt);
  memory::desc w_md = b.g.is_constant(Bv) ? memory::desc(to_dims(bs), cdt, tag::any) : plain_md(bs, cdt);
  memory::desc dst_md = plain_md(ys, dt::f32);
  // A constant bias along the last dimension added after it (a linear layer exported as MatMul
  // + Add: 9 of rec's) is the matmul's own bias; the Add, with its activation, goes.
  Op mm = op;
  ValueId bias = graph::no_value;
  post_chain bias_add;
  if (const auto site = find_bias_add(b, Y, ys); site.bias != graph::no_value && !op.has_attr("activation")) {
    bias = site.bias;
    const Op& add = b.g.ops[site.add];
    mm.outputs = add.outputs;
    mm.attrs = add.attrs; // its fused activation, if any
    bias_add.fused_ops = {site.add};
  }
  memory::desc bias_md = bias == graph::no_value ? memory::desc() : plain_md(pad_front(b.shape(bias), ys.size()), dt::f32);
  dnnl::primitive_attr attr;
  if (!make_attr(mm, attr)) return false;
  dnnl::matmul::desc d(src_md, w_md, bias_md, dst_md);
  post_chain ch;
  auto pd = with_chain<dnnl::matmul::primitive_desc>(
      b, mm, ch, [&](const dnnl::primitive_attr& a) { return dnnl::matmul::primitive_desc(d, a, b.p.eng); });
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(A, pd.src_desc()), pd.src_desc()},
                            {DNNL_ARG_WEIGHTS, b.input(Bv, pd.weights_desc()), pd.weights_desc()}};
  if (bias != graph::no_value) {
    args.push_back({DNNL_ARG_BIAS, b.input(bias, pd.bias_desc()), pd.bias_desc()});
    b.commit(bias_add);
  }
  args.insert(args.end(), ch.args.begin(), ch.args.end());
  args.push_back({DNNL_ARG_DST, b.output(ch.out, b.plain(ch.out)), pd.dst_desc()});
  b.commit(ch);
  b.add_dnnl(op, pd, dnnl::matmul(pd), std::move(args));
  return true;
}

bool build_gemm(plan_builder& b, const Op& op) {
  ValueId A = op.inputs[0], Bv = op.inputs[1], C = op.input_count() > 2 ? op.inputs[2] : graph::no_value;
  ValueId Y = op.outputs[0];
  if (!is_f32(b, A) || !is_f32(b, Bv) || (C != graph::no_value && !is_f32(b, C))) return false;
  Shape as = b.shape(A), bs = b.shape(Bv), ys = b.shape(Y);
  if (as.size() != 2 || bs.size() != 2 || ys.size() != 2) return false;
  bool ta = op.attr_int("transA", 0) != 0, tb = op.attr_int("transB", 0) != 0;
  float alpha = op.attr_float("alpha", 1.f), beta = op.attr_float("beta", 1.f);
  int64_t M = ys[0], N = ys[1], K = ta ? as[0] : as[1];
  if (C != graph::no_value && (alpha != 1.f || beta != 1.f)) return false;
  // Transposes are strided views of the row-major inputs.
  memory::desc a_view({M, K}, dt::f32, ta ? memory::dims{1, M} : memory::dims{K, 1});
  memory::desc b_view({K, N}, dt::f32, tb ? memory::dims{1, K} : memory::dims{N, 1});
  dt cdt = b.precision == element_type::bf16 ? dt::bf16 : dt::f32;
  memory::desc src_md = cdt == dt::f32 ? a_view : plain_md({M, K}, cdt);
  memory::desc w_md = b.g.is_constant(Bv) ? memory::desc({K, N}, cdt, tag::any)
                                          : (cdt == dt::f32 ? b_view : plain_md({K, N}, cdt));
  memory::desc bias_md;
  if (C != graph::no_value) {
    Shape cs = pad_front(b.shape(C), 2);
    if (cs.size() != 2 || (cs[0] != 1 && cs[0] != M) || (cs[1] != 1 && cs[1] != N)) return false;
    bias_md = plain_md(cs, dt::f32);
  }
  dnnl::primitive_attr attr;
  if (!make_attr(op, attr)) return false;
  if (alpha != 1.f) attr.set_output_scales(0, {alpha});
  dnnl::matmul::desc d(src_md, w_md, bias_md, plain_md(ys, dt::f32));
  post_chain ch;
  auto pd = with_chain<dnnl::matmul::primitive_desc>(
      b, op, ch, [&](dnnl::primitive_attr a) {
        if (alpha != 1.f) a.set_output_scales(0, {alpha});
        return dnnl::matmul::primitive_desc(d, a, b.p.eng); });
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(A, pd.src_desc(), &a_view), pd.src_desc()},
                            {DNNL_ARG_WEIGHTS, b.input(Bv, pd.weights_desc(), &b_view), pd.weights_desc()}};
  if (C != graph::no_value) args.push_back({DNNL_ARG_BIAS, b.input(C, pd.bias_desc()), pd.bias_desc()});
  args.insert(args.end(), ch.args.begin(), ch.args.end());
  args.push_back({DNNL_ARG_DST, b.output(ch.out, b.plain(ch.out)), pd.dst_desc()});
  b.commit(ch);
  b.add_dnnl(op, pd, dnnl::matmul(pd), std::move(args));
  return true;
}

/// The layout an op can consume a value in: where it lives, when that is a f32/bf16 layout.
bool float_md(const plan_builder& b, ValueId v, memory::desc& md) {
  md = b.current_md(v);
  if (md == memory::desc()) return false;
  return md.data_type() == dt::f32 || md.data_type() == dt::bf16;
}

bool build_pool(plan_builder& b, const Op& op) {
  ValueId X = op.inputs[0], Y = op.outputs[0];
  if (op.outputs.size() > 1 && op.outputs[1] != graph::no_value) return false; // MaxPool Indices
  if (!is_f32(b, X)) return false;
  Shape xs = b.shape(X), ys = b.shape(Y);
  if (xs.size() < 3 || xs.size() > 5) return false;
  bool global = op.type.rfind("Global", 0) == 0;
  bool is_max = op.type.find("Max") != std::string::npos;
  window w;
  if (global) {
    std::size_t n = xs.size() - 2;
    w.kernel.assign(xs.begin() + 2, xs.end());
    w.strides.assign(n, 1);
    w.dil.assign(n, 0);
    w.pad_l.assign(n, 0);
    w.pad_r.assign(n, 0);
  } else {
    if (!op.has_attr("kernel_shape")) return false;
    auto k = op.attr_ints("kernel_shape");
    if (!read_window(op, xs, ys, memory::dims(k.begin(), k.end()), w)) return false;
  }
  bool include_pad = op.attr_int("count_include_pad", 0) != 0;
  for (std::size_t i = 0; i + 2 < xs.size(); ++i) {
    // ceil_mode: the last windows reach past the padding; oneDNN sees that as right padding.
    int64_t need = (ys[i + 2] - 1) * w.strides[i] + (w.kernel[i] - 1) * (w.dil[i] + 1) + 1 - xs[i + 2] - w.pad_l[i];
    if (need > w.pad_r[i]) {
      if (!is_max && include_pad) return false; // ONNX does not count that extra padding
      w.pad_r[i] = need;
    }
  }
  memory::desc src_md;
  if (!float_md(b, X, src_md)) return false;
  auto alg = is_max ? algorithm::pooling_max
                    : (include_pad ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding);
  memory::desc dst_md(to_dims(ys), src_md.data_type(), tag::any);
  dnnl::pooling_v2_forward::desc d(prop_kind::forward_inference, alg, src_md, dst_md, w.strides, w.kernel, w.dil,
                                   w.pad_l, w.pad_r);
  dnnl::pooling_v2_forward::primitive_desc pd(d, plan_builder::base_attr(), b.p.eng);
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, pd.src_desc()), pd.src_desc()}};
  args.push_back({DNNL_ARG_DST, b.output(Y, pd.dst_desc()), pd.dst_desc()});
  b.add_dnnl(op, pd, dnnl::pooling_v2_forward(pd), std::move(args));
  return true;
}

/// A float constant input as a scalar.
bool const_scalar(const plan_builder& b, const Op& op, std::size_t i, float& out) {
  if (op.inputs.size() <= i || op.inputs[i] == graph::no_value) return false;
  if (!b.g.is_constant(op.inputs[i])) return false;
  const Tensor& t = *b.val(op.inputs[i]).constant;
  if (t.get_size() != 1 || t.get_element_type() != element_type::f32) return false;
  out = *t.data<float>();
  return true;
}

bool build_eltwise(plan_builder& b, const Op& op) {
  ValueId X = op.inputs[0], Y = op.outputs[0];
  if (!is_f32(b, X) || b.val(Y).type != element_type::f32) return false;
  const std::string& t = op.type;
  algorithm alg;
  float alpha = 0.f, beta = 0.f;
  dnnl::post_ops po;
  if (t == "Relu") alg = algorithm::eltwise_relu;
  else if (t == "LeakyRelu") { alg = algorithm::eltwise_relu; alpha = op.attr_float("alpha", 0.01f); }
  else if (t == "Elu") { alg = algorithm::eltwise_elu; alpha = op.attr_float("alpha", 1.f); }
  else if (t == "Sigmoid") alg = algorithm::eltwise_logistic;
  else if (t == "Tanh") alg = algorithm::eltwise_tanh;
  else if (t == "Exp") alg = algorithm::eltwise_exp;
  else if (t == "Log") alg = algorithm::eltwise_log;
  else if (t == "Abs") alg = algorithm::eltwise_abs;
  else if (t == "Sqrt") alg = algorithm::eltwise_sqrt;
  else if (t == "Softplus") alg = algorithm::eltwise_soft_relu;
  else if (t == "HardSwish") alg = algorithm::eltwise_hardswish;
  else if (t == "Gelu") alg = gelu_algorithm(op);
  else if (t == "Neg") { alg = algorithm::eltwise_linear; alpha = -1.f; }
  else if (t == "Reciprocal") { alg = algorithm::eltwise_pow; alpha = 1.f; beta = -1.f; }
  else if (t == "HardSigmoid") {
    alg = algorithm::eltwise_linear;
    alpha = op.attr_float("alpha", 0.2f);
    beta = op.attr_float("beta", 0.5f);
    po.append_eltwise(1.f, algorithm::eltwise_clip_v2, 0.f, 1.f);
  } else if (t == "Clip") {
    alg = algorithm::eltwise_clip_v2;
    alpha = -FLT_MAX;
    beta = FLT_MAX;
    if (b.g.opset < 11) {
      alpha = op.attr_float("min", -FLT_MAX);
      beta = op.attr_float("max", FLT_MAX);
    } else {
      if (op.input_count() > 1 && !const_scalar(b, op, 1, alpha)) return false;
      if (op.input_count() > 2 && op.inputs[2] != graph::no_value && !const_scalar(b, op, 2, beta)) return false;
      if (op.inputs.size() > 1 && op.inputs[1] == graph::no_value) alpha = -FLT_MAX;
    }
  } else if (t == "Pow") {
    alg = algorithm::eltwise_pow;
    alpha = 1.f;
    if (!const_scalar(b, op, 1, beta)) return false;
  } else return false;
  memory::desc md, home_md;
  if (!float_md(b, X, md)) return false;
  auto attr = plan_builder::base_attr();
  if (po.len() > 0) {
    attr.set_post_ops(po);
    // oneDNN 2.6's reference eltwise drops post-ops results on 1-D data (writes zeros):
    // the same bytes as [1, n] work.
    if (md.data.ndims == 1) {
      home_md = md;
      md = plain_md({1, md.dims()[0]}, md.data_type());
    }
  }
  dnnl::eltwise_forward::desc d(prop_kind::forward_inference, alg, md, alpha, beta);
  dnnl::eltwise_forward::primitive_desc pd(d, attr, b.p.eng);
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, pd.src_desc()), pd.src_desc()}};
  args.push_back({DNNL_ARG_DST, b.output(Y, home_md == memory::desc() ? pd.dst_desc() : home_md), pd.dst_desc()});
  b.add_dnnl(op, pd, dnnl::eltwise_forward(pd), std::move(args));
  return true;
}

bool build_binary(plan_builder& b, const Op& op) {
  // Variadic Max/Min may have one input (a copy): the reference kernel takes it.
  if (op.input_count() != 2 || op.inputs[1] == graph::no_value) return false;
  ValueId A = op.inputs[0], Bv = op.inputs[1], Y = op.outputs[0];
  if (!is_f32(b, A) || !is_f32(b, Bv)) return false;
  const std::string& t = op.type;
  algorithm alg;
  bool commutative = true;
  if (t == "Add") alg = algorithm::binary_add;
  else if (t == "Mul") alg = algorithm::binary_mul;
  else if (t == "Max") alg = algorithm::binary_max;
  else if (t == "Min") alg = algorithm::binary_min;
  else if (t == "Sub") { alg = algorithm::binary_sub; commutative = false; }
  else if (t == "Div") { alg = algorithm::binary_div; commutative = false; }
  else return false;
  Shape ys = b.shape(Y);
  if (ys.empty()) return false;
  Shape as = pad_front(b.shape(A), ys.size()), bs = pad_front(b.shape(Bv), ys.size());
  if (as != ys) {
    // oneDNN broadcasts only its second source.
    if (!commutative || bs != ys) return false;
    std::swap(A, Bv);
    std::swap(as, bs);
  }
  // Keep whichever operand's layout is not plain (a convolution's blocked output), so that
  // only the other one is reordered.
  memory::desc src0_md;
  if (!float_md(b, A, src0_md) || src0_md.dims() != to_dims(ys)) src0_md = plain_md(ys, dt::f32);
  memory::desc src1_md = plain_md(bs, dt::f32);
  if (bs == as) {
    memory::desc md1;
    if (src0_md == b.plain(A) && float_md(b, Bv, md1) && md1.dims() == src0_md.dims()) src0_md = md1;
    src1_md = src0_md;
  }
  dnnl::primitive_attr attr;
  if (!make_attr(op, attr)) return false;
  memory::desc dst_md = src0_md;
  dnnl::binary::primitive_desc pd;
  post_chain ch;
  try {
    pd = with_chain<dnnl::binary::primitive_desc>(b, op, ch, [&](const dnnl::primitive_attr& a) {
      dnnl::binary::primitive_desc r(dnnl::binary::desc(alg, src0_md, src1_md, dst_md), a, b.p.eng);
      if (std::string(r.impl_info_str()).rfind("ref", 0) == 0) throw dnnl::error(dnnl_unimplemented, "slow");
      return r;
    });
  } catch (const dnnl::error&) {
    ch = post_chain{};
    ch.out = Y;
    // Mixed layouts oneDNN rejects: both plain.
    src0_md = plain_md(ys, dt::f32);
    src1_md = plain_md(bs, dt::f32);
    pd = dnnl::binary::primitive_desc(dnnl::binary::desc(alg, src0_md, src1_md, src0_md), attr, b.p.eng);
  }
  std::vector<binding> args{{DNNL_ARG_SRC_0, b.input(A, pd.src_desc(0)), pd.src_desc(0)},
                            {DNNL_ARG_SRC_1, b.input(Bv, pd.src_desc(1)), pd.src_desc(1)}};
  args.insert(args.end(), ch.args.begin(), ch.args.end());
  args.push_back({DNNL_ARG_DST, b.output(ch.out, pd.dst_desc()), pd.dst_desc()});
  b.commit(ch);
  b.add_dnnl(op, pd, dnnl::binary(pd), std::move(args));
  return true;
}

bool build_softmax(plan_builder& b, const Op& op) {
  ValueId X = op.inputs[0], Y = op.outputs[0];
  if (!is_f32(b, X)) return false;
  if (is_row_softmax(b.g, op)) {
    b.add_reference(op, softmax_rows, "native:softmax_rows");
    return true;
  }
  Shape xs = b.shape(X);
  if (xs.empty()) return false;
  int64_t r = static_cast<int64_t>(xs.size());
  int64_t axis = op.attr_int("axis", b.g.opset < 13 ? 1 : -1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return false;
  memory::desc md;
  int dnnl_axis;
  if (b.g.opset < 13) {
    // Before opset 13 the input is coerced to 2-D [outer, inner] and normalized over inner.
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < r; ++i) (i < axis ? outer : inner) *= xs[i];
    md = plain_md({outer, inner}, dt::f32);
    dnnl_axis = 1;
  } else {
    md = plain_md(xs, dt::f32);
    dnnl_axis = static_cast<int>(axis);
  }
  auto alg = op.type == "LogSoftmax" ? algorithm::softmax_log : algorithm::softmax_accurate;
  dnnl::softmax_v2_forward::desc d(prop_kind::forward_inference, alg, md, md, dnnl_axis);
  dnnl::softmax_v2_forward::primitive_desc pd(d, plan_builder::base_attr(), b.p.eng);
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, md), md}};
  args.push_back({DNNL_ARG_DST, b.output(Y, b.plain(Y)), md});
  b.add_dnnl(op, pd, dnnl::softmax_v2_forward(pd), std::move(args));
  return true;
}

bool build_concat(plan_builder& b, const Op& op) {
  ValueId Y = op.outputs[0];
  if (b.val(Y).type != element_type::f32) return false;
  Shape ys = b.shape(Y);
  int64_t r = static_cast<int64_t>(ys.size());
  int64_t axis = op.attr_int("axis", 0);
  if (axis < 0) axis += r;
  if (r == 0 || axis < 0 || axis >= r || shape_size(ys) == 0) return false;
  std::vector<memory::desc> srcs;
  bool same_dt = true;
  for (auto v : op.inputs) {
    if (!is_f32(b, v) || shape_size(b.shape(v)) == 0) return false;
    memory::desc md;
    if (!float_md(b, v, md)) return false;
    srcs.push_back(md);
    same_dt = same_dt && md.data_type() == srcs.front().data_type();
  }
  if (!same_dt)
    for (std::size_t i = 0; i < srcs.size(); ++i) srcs[i] = b.plain(op.inputs[i]);
  memory::desc dst_md(to_dims(ys), srcs.front().data_type(), tag::any);
  dnnl::concat::primitive_desc pd(dst_md, static_cast<int>(axis), srcs, b.p.eng, plan_builder::base_attr());
  if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) {
    // Mixed or misaligned blocked layouts get oneDNN's slow reference concat: go plain.
    for (std::size_t i = 0; i < srcs.size(); ++i) srcs[i] = b.plain(op.inputs[i]);
    pd = dnnl::concat::primitive_desc(b.plain(Y), static_cast<int>(axis), srcs, b.p.eng, plan_builder::base_attr());
  }
  if (add_native_concat(b, op, srcs, pd.dst_desc())) return true;
  // All plain: oneDNN 2.6 runs its element-wise simple:any loop (0.09 ms for BlazeFace's two
  // 24-channel 32x32 maps, one thread); the reference kernel copies whole runs instead.
  bool plain = pd.dst_desc() == b.plain(Y);
  for (std::size_t i = 0; i < srcs.size(); ++i) plain = plain && srcs[i] == b.plain(op.inputs[i]);
  if (plain && std::string(pd.impl_info_str()).rfind("simple", 0) == 0) {
    b.add_reference(op, nullptr, "ref:concat_runs");
    return true;
  }
  std::vector<binding> args;
  for (std::size_t i = 0; i < op.inputs.size(); ++i)
    args.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), b.input(op.inputs[i], srcs[i]), srcs[i]});
  args.push_back({DNNL_ARG_DST, b.output(Y, pd.dst_desc()), pd.dst_desc()});
  b.add_dnnl(op, pd, dnnl::concat(pd), std::move(args));
  return true;
}

bool build_resize(plan_builder& b, const Op& op) {
  ValueId X = op.inputs[0], Y = op.outputs[0];
  if (!is_f32(b, X)) return false;
  Shape xs = b.shape(X), ys = b.shape(Y);
  // Scales: Resize-10's second input, Resize-11+'s third (sizes, the fourth, win when given).
  std::size_t si = op.input_count() == 2 ? 1 : 2;
  bool sizes = op.input_count() > 3 && op.inputs[3] != graph::no_value;
  std::vector<double> scales;
  if (!sizes && si < op.inputs.size() && op.inputs[si] != graph::no_value) {
    if (!b.g.is_constant(op.inputs[si])) return false;
    scales = reference::to_doubles(*b.val(op.inputs[si]).constant);
  }
  auto alg = onednn_resampling_for(op, b.g.opset, xs, ys, scales);
  if (!alg) return false;
  memory::desc src_md;
  if (!float_md(b, X, src_md)) return false;
  memory::desc dst_md(to_dims(ys), src_md.data_type(), tag::any);
  dnnl::resampling_forward::desc d(prop_kind::forward_inference, *alg, src_md, dst_md);
  dnnl::resampling_forward::primitive_desc pd(d, plan_builder::base_attr(), b.p.eng);
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, pd.src_desc()), pd.src_desc()}};
  args.push_back({DNNL_ARG_DST, b.output(Y, pd.dst_desc()), pd.dst_desc()});
  b.add_dnnl(op, pd, dnnl::resampling_forward(pd), std::move(args));
  return true;
}

bool build_batch_norm(plan_builder& b, const Op& op) {
  if (op.input_count() != 5 || op.attr_int("training_mode", 0) != 0) return false;
  for (std::size_t i = 1; i < op.outputs.size(); ++i)
    if (op.outputs[i] != graph::no_value) return false;
  for (auto v : op.inputs)
    if (!is_f32(b, v)) return false;
  ValueId X = op.inputs[0], Y = op.outputs[0];
  Shape xs = b.shape(X);
  if (xs.size() < 2) return false;
  memory::desc md;
  if (!float_md(b, X, md)) {
    md = b.plain(X);
  } else if (md.data_type() == dt::bf16) {
    // A bf16 producer's own layout in f32: one cheap reorder, then the blocked jit kernel. Plain
    // f32 picked oneDNN's generic ncsp kernel (19 % of det's bf16 time, one thread).
    md.data.data_type = dnnl_f32;
  }
  auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  // A Relu that alone reads the result runs inside the normalization (no pass over the data).
  post_chain relu;
  relu.out = Y;
  if (const auto& rd = b.readers(Y); rd.size() == 1 && !b.is_graph_output(Y)) {
    const Op& next = b.g.ops[rd[0]];
    if (next.type == "Relu" && next.domain.empty() && next.inputs[0] == Y && !next.has_attr("activation") &&
        b.val(next.outputs[0]).type == element_type::f32 && b.shape(next.outputs[0]) == xs) {
      flags = flags | dnnl::normalization_flags::fuse_norm_relu;
      relu.out = next.outputs[0];
      relu.fused_ops.push_back(rd[0]);
    }
  }
  dnnl::batch_normalization_forward::desc d(prop_kind::forward_inference, md, op.attr_float("epsilon", 1e-5f), flags);
  dnnl::batch_normalization_forward::primitive_desc pd(d, plan_builder::base_attr(), b.p.eng);
  memory::desc c_md = plain_md({xs[1]}, dt::f32);
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, pd.src_desc()), pd.src_desc()},
                            {DNNL_ARG_SCALE, b.input(op.inputs[1], c_md), c_md},
                            {DNNL_ARG_SHIFT, b.input(op.inputs[2], c_md), c_md},
                            {DNNL_ARG_MEAN, b.input(op.inputs[3], c_md), c_md},
                            {DNNL_ARG_VARIANCE, b.input(op.inputs[4], c_md), c_md}};
  args.push_back({DNNL_ARG_DST, b.output(relu.out, pd.dst_desc()), pd.dst_desc()});
  b.commit(relu);
  b.add_dnnl(op, pd, dnnl::batch_normalization_forward(pd), std::move(args));
  return true;
}

/// ONNX LayerNormalization (opset 17) over the dims from `axis` on, with a scale and an
/// optional bias of that many values; the mean and inverse deviation outputs unread.
bool build_layer_norm(plan_builder& b, const Op& op) {
  if (op.input_count() < 2) return false;
  for (std::size_t i = 1; i < op.outputs.size(); ++i)
    if (op.outputs[i] != graph::no_value && (!b.readers(op.outputs[i]).empty() || b.is_graph_output(op.outputs[i])))
      return false;
  for (auto v : op.inputs)
    if (v != graph::no_value && !is_f32(b, v)) return false;
  const ValueId X = op.inputs[0], S = op.inputs[1], B = input_or_none(op, 2), Y = op.outputs[0];
  const Shape xs = b.shape(X);
  const int64_t r = static_cast<int64_t>(xs.size());
  int64_t axis = op.attr_int("axis", -1);
  if (axis < 0) axis += r;
  if (r == 0 || axis < 0 || axis >= r) return false;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? outer : inner) *= xs[static_cast<std::size_t>(i)];
  if (shape_size(b.shape(S)) != inner || (B != graph::no_value && shape_size(b.shape(B)) != inner)) return false;
  const memory::desc md = plain_md({outer, inner}, dt::f32), c_md = plain_md({inner}, dt::f32);
  auto flags = dnnl::normalization_flags::use_scale;
  if (B != graph::no_value) flags = flags | dnnl::normalization_flags::use_shift;
  dnnl::layer_normalization_forward::desc d(prop_kind::forward_inference, md, op.attr_float("epsilon", 1e-5f), flags);
  dnnl::layer_normalization_forward::primitive_desc pd(d, plan_builder::base_attr(), b.p.eng);
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, md), md}, {DNNL_ARG_SCALE, b.input(S, c_md), c_md}};
  if (B != graph::no_value) args.push_back({DNNL_ARG_SHIFT, b.input(B, c_md), c_md});
  args.push_back({DNNL_ARG_DST, b.output(Y, b.plain(Y)), md});
  b.add_dnnl(op, pd, dnnl::layer_normalization_forward(pd), std::move(args));
  return true;
}

bool build_reduce(plan_builder& b, const Op& op) {
  ValueId X = op.inputs[0], Y = op.outputs[0];
  if (!is_f32(b, X)) return false;
  const std::string& t = op.type;
  algorithm alg;
  float p = 0.f;
  if (t == "ReduceMean") alg = algorithm::reduction_mean;
  else if (t == "ReduceSum") alg = algorithm::reduction_sum;
  else if (t == "ReduceMax") alg = algorithm::reduction_max;
  else if (t == "ReduceMin") alg = algorithm::reduction_min;
  else if (t == "ReduceProd") alg = algorithm::reduction_mul;
  else if (t == "ReduceL1") { alg = algorithm::reduction_norm_lp_sum; p = 1.f; }
  else if (t == "ReduceL2") { alg = algorithm::reduction_norm_lp_sum; p = 2.f; }
  else if (t == "ReduceSumSquare") { alg = algorithm::reduction_norm_lp_power_p_sum; p = 2.f; }
  else return false;
  Shape xs = b.shape(X);
  int64_t r = static_cast<int64_t>(xs.size());
  if (r == 0 || shape_size(xs) == 0) return false;
  std::vector<int64_t> axes;
  bool axes_input = (t == "ReduceSum" && b.g.opset >= 13) || b.g.opset >= 18;
  if (axes_input) {
    if (op.input_count() > 1) {
      if (!b.g.is_constant(op.inputs[1])) return false;
      const Tensor& a = *b.val(op.inputs[1]).constant;
      if (a.get_element_type() != element_type::i64) return false;
      axes.assign(a.data<int64_t>(), a.data<int64_t>() + a.get_size());
    }
  } else {
    axes = op.attr_ints("axes");
  }
  if (axes.empty() && op.attr_int("noop_with_empty_axes", 0) != 0) return false;
  Shape kept = xs;
  if (axes.empty())
    for (auto& d : kept) d = 1;
  for (auto a : axes) {
    if (a < 0) a += r;
    if (a < 0 || a >= r) return false;
    kept[static_cast<std::size_t>(a)] = 1;
  }
  if (kept == xs) return false; // nothing to reduce: oneDNN refuses, the reference copies
  memory::desc src_md = plain_md(xs, dt::f32), dst_md = plain_md(kept, dt::f32);
  dnnl::reduction::desc d(alg, src_md, dst_md, p, 0.f);
  dnnl::reduction::primitive_desc pd(d, plan_builder::base_attr(), b.p.eng);
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, src_md), src_md}};
  args.push_back({DNNL_ARG_DST, b.output(Y, b.plain(Y)), dst_md});
  b.add_dnnl(op, pd, dnnl::reduction(pd), std::move(args));
  return true;
}

/// Transpose as one oneDNN reorder: the input's plain bytes seen through permuted strides,
/// written row-major (vectorized, threaded) instead of the reference's index walk. PP-OCR rec's
/// attention transposes, and a frame's NHWC -> NCHW step (PrePostProcessor).
bool build_transpose(plan_builder& b, const Op& op) {
  const auto X = op.inputs[0], Y = op.outputs[0];
  const auto type = dnnl_type(b.val(X).type);
  if (type == dt::undef || b.val(Y).type != b.val(X).type) return false;
  const Shape xs = b.shape(X), ys = b.shape(Y);
  const std::size_t r = xs.size();
  if (r == 0 || r > 6 || ys.size() != r || shape_size(xs) == 0) return false;
  auto perm = op.attr_ints("perm");
  if (perm.empty())
    for (std::size_t i = r; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != r) return false;
  const auto stride = reference::strides_of(xs);
  memory::dims dims(ys.begin(), ys.end()), strides(r);
  for (std::size_t i = 0; i < r; ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(r)) return false;
    strides[i] = stride[static_cast<std::size_t>(perm[i])];
  }
  const memory::desc view(dims, type, strides), dst = b.plain(Y);
  dnnl::reorder::primitive_desc pd(b.p.eng, view, b.p.eng, dst, plan_builder::base_attr());
  std::vector<binding> args{{DNNL_ARG_FROM, b.input_plain(X), view}, {DNNL_ARG_TO, b.output(Y, dst), dst}};
  b.add_dnnl(op, pd, dnnl::reorder(pd), std::move(args));
  return true;
}

/// Cast from u8, i8 or i32 to f32 as one oneDNN reorder (vectorized) instead of the reference
/// loop: a u8 frame's conversion (PrePostProcessor) is one pass. Float to integer stays on the
/// reference kernel: ONNX truncates there, oneDNN rounds and saturates.
bool build_cast(plan_builder& b, const Op& op) {
  const auto X = op.inputs[0], Y = op.outputs[0];
  const auto from = b.val(X).type;
  if (b.val(Y).type != element_type::f32 ||
      (from != element_type::u8 && from != element_type::i8 && from != element_type::i32))
    return false;
  if (!b.val(X).shape.is_static() || shape_size(b.shape(X)) == 0) return false;
  const auto src = b.plain(X), dst = b.plain(Y);
  dnnl::reorder::primitive_desc pd(b.p.eng, src, b.p.eng, dst, plan_builder::base_attr());
  std::vector<binding> args{{DNNL_ARG_SRC, b.input(X, src), src}, {DNNL_ARG_DST, b.output(Y, dst), dst}};
  b.add_dnnl(op, pd, dnnl::reorder(pd), std::move(args));
  return true;
}

const std::set<std::string>& dnnl_types() {
  static const std::set<std::string> s{
      "Conv", "ConvTranspose", "MatMul", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
      "Relu", "LeakyRelu", "Elu", "Sigmoid", "Tanh", "Exp", "Log", "Abs", "Sqrt", "Softplus", "HardSwish", "Neg",
      "Reciprocal", "HardSigmoid", "Clip", "Pow", "Add", "Sub", "Mul", "Div", "Max", "Min", "Softmax", "LogSoftmax",
      "Concat", "BatchNormalization", "LayerNormalization", "Gelu", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
      "ReduceL2", "ReduceSumSquare", "Resize", "Cast", "Transpose", "PRelu", "LSTM", "GRU", "RNN"};
  return s;
}

} // namespace

bool build_dnnl_op(plan_builder& b, const Op& op) {
  if (!op.domain.empty() || op.inputs.empty() || op.outputs.empty() || op.inputs[0] == graph::no_value) return false;
  for (auto v : op.outputs)
    if (v != graph::no_value && !b.val(v).shape.is_static()) return false;
  const std::string& t = op.type;
  if (!dnnl_types().count(t)) return false;
  if (t == "Conv") return build_conv(b, op);
  if (t == "ConvTranspose") return build_conv_transpose(b, op);
  if (t == "MatMul") return build_matmul(b, op);
  if (t == "Gemm") return build_gemm(b, op);
  if (t.find("Pool") != std::string::npos) return build_pool(b, op);
  if (t == "Mul" && add_native_channel_scale(b, op)) return true;
  if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Max" || t == "Min") return build_binary(b, op);
  if (t == "Softmax" || t == "LogSoftmax") return build_softmax(b, op);
  if (t == "Concat") return build_concat(b, op);
  if (t == "BatchNormalization") return build_batch_norm(b, op);
  if (t == "LayerNormalization") return build_layer_norm(b, op);
  if (t == "Resize") return build_resize(b, op);
  if (t == "Cast") return build_cast(b, op);
  if (t == "Transpose") return build_transpose(b, op);
  if (t == "PRelu") return build_prelu(b, op);
  if (t == "LSTM" && build_native_lstm(b, op)) return true;
  if (t == "GRU" && build_native_gru(b, op)) return true;
  if (t == "RNN" && build_native_vanilla_rnn(b, op)) return true;
  if (t == "LSTM" || t == "GRU" || t == "RNN") return build_rnn(b, op);
  if (t.rfind("Reduce", 0) == 0) return build_reduce(b, op);
  return build_eltwise(b, op);
}

std::vector<std::string> onednn_op_types() {
  std::set<std::string> all = dnnl_types();
  all.insert(int8_op_types().begin(), int8_op_types().end());
  return {all.begin(), all.end()};
}

bool dnnl_handles(const graph::Graph& g, const Op& op, std::string* why) {
  if (!op.domain.empty() || !dnnl_types().count(op.type)) {
    if (why) *why = "no oneDNN or reference kernel for op type '" + op.type + "'";
    return false;
  }
  for (auto v : op.inputs)
    if (v != graph::no_value && g.value(v).type != element_type::f32 && !(op.type.rfind("Reduce", 0) == 0 && v != op.inputs[0])) {
      if (why) *why = "oneDNN runs " + op.type + " on f32 only, input '" + g.value(v).name + "' is " +
                      to_string(g.value(v).type) + " (and no reference kernel exists)";
      return false;
    }
  return true;
}

} // namespace troupe::kernels::cpu
