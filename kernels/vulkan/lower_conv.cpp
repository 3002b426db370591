/// Conv and ConvTranspose (2-D, NCHW; 1-D NCL as 2-D with H = 1) on shaders/conv.comp,
/// conv_row.comp, conv_dw.comp (depthwise) and conv_transpose.comp; 1x1 convolutions on the GEMM shader.
/// 3-D (NCDHW) ones go to lower_conv3d.cpp after the common checks.
#include "kernels/vulkan/conv3d.hpp"
#include "kernels/vulkan/conv_geometry.hpp"
#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/window_1d.hpp"

namespace troupe::kernels::vulkan {

namespace {

std::string check_common(const graph::Graph& g, const graph::Op& op) {
  if (op.input_count() < 2) return "expects X and W";
  for (std::size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i] != graph::no_value && g.value(op.inputs[i]).type != element_type::f32)
      return "input " + std::to_string(i) + " is " + to_string(g.value(op.inputs[i]).type) + "; the shader is float32 only";
  if (auto why = check_window_attrs(g, op, 5); !why.empty()) return why;
  return check_activation(op);
}

/// A GEMM per image: A [m][k] (rgba texels) x the image's X [k][hw] (hw % 4 == 0) into Y, whose
/// images are `y_per_image` floats apart; bias, scatter and activation left to the caller.
gemm_args image_gemm(buffer_ref a, buffer_ref x, buffer_ref y, int64_t m, int64_t k, int64_t hw, int64_t images,
                     int64_t y_per_image) {
  gemm_args g;
  g.a = a;
  g.b = x;
  g.bias = x;
  g.y = y;
  g.m = static_cast<uint32_t>(m);
  g.n = static_cast<uint32_t>(hw);
  g.k = static_cast<uint32_t>(k);
  g.nt = static_cast<uint32_t>(hw / 4);
  g.batch = static_cast<uint32_t>(images);
  g.sbb = static_cast<uint32_t>(k * hw / 4);
  g.syb = static_cast<uint32_t>(y_per_image);
  return g;
}

/// ConvTranspose whose kernel equals its stride (no overlap, no pads: every output pixel gets
/// exactly one tap) as one GEMM with a scattered store: rows (oc, kh, kw) of the reordered
/// weights times the input [IC][IH*IW] (PP-OCR det's head upsamplers). False when it does not fit.
bool try_transpose_gemm(op_builder& b, const conv_geom& c, bool bias) {
  const auto& g = b.graph();
  const auto& op = b.op();
  int64_t ic = c.x[1], oc = c.y[1], kh = c.k[0], kw = c.k[1], hw = c.x[2] * c.x[3];
  if (c.groups != 1 || !g.is_constant(op.inputs[1]) || c.s != std::vector<int64_t>{kh, kw} ||
      c.d != std::vector<int64_t>{1, 1} || c.y[2] != c.x[2] * kh || c.y[3] != c.x[3] * kw || ic % 4 != 0 || hw % 4 != 0)
    return false;
  if (c.pads != std::vector<int64_t>(4, 0) || (bias && !g.is_constant(op.inputs[2]))) return false;
  int64_t taps = kh * kw, rows = oc * taps;
  // A[(oc, t)][ic] = W[ic][oc][t]; the bias repeated per tap (bias mode "per row").
  auto w = const_floats(g, op, 1);
  std::vector<float> a(static_cast<std::size_t>(rows * ic));
  for (int64_t i = 0; i < ic; ++i)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t t = 0; t < taps; ++t)
        a[static_cast<std::size_t>((o * taps + t) * ic + i)] = w[static_cast<std::size_t>((i * oc + o) * taps + t)];
  gemm_args args = image_gemm(b.constant(std::move(a)), b.input(0), b.output(0), rows, ic, hw, c.x[0], oc * c.y[2] * c.y[3]);
  if (bias) {
    auto bv = const_floats(g, op, 2);
    std::vector<float> rb(static_cast<std::size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) rb[static_cast<std::size_t>(r)] = bv[static_cast<std::size_t>(r / taps)];
    args.bias = b.constant(std::move(rb));
    args.bias_mode = 1;
  }
  args.taps = static_cast<uint32_t>(taps);
  args.kw = static_cast<uint32_t>(kw);
  args.in_w = static_cast<uint32_t>(c.x[3]);
  args.out_w = static_cast<uint32_t>(c.y[3]);
  args.out_hw = static_cast<uint32_t>(c.y[2] * c.y[3]);
  dispatch_gemm(b, args);
  return true;
}

spec_map conv_spec(const conv_geom& c, bool bias) {
  spec_map s;
  uint32_t i = 0;
  for (int64_t v : {c.x[0], c.x[1], c.x[2], c.x[3], c.y[1], c.y[2], c.y[3], c.k[0], c.k[1], c.s[0], c.s[1], c.d[0],
                    c.d[1], c.pads[0], c.pads[1], c.groups})
    s[i++] = static_cast<uint32_t>(v);
  s[16] = bias ? 1u : 0u;
  return s;
}

bool has_bias(const graph::Op& op) { return op.inputs.size() > 2 && op.inputs[2] != graph::no_value; }

/// Depthwise (group = IC = OC, constant weights) on shaders/conv_dw.comp: one channel's 4 x OWB
/// output tile per invocation, invocations over channels x tiles. Needs whole-texel input rows,
/// tile columns times the stride on texels, and a tile window within the shader's limits.
/// Returns false (nothing emitted) when the shape does not fit.
bool try_depthwise(op_builder& b, const conv_geom& c, spec_map& spec, buffer_ref x, buffer_ref bias_ref) {
  const auto& g = b.graph();
  const auto& op = b.op();
  int64_t ch = c.x[1], kk = c.k[0] * c.k[1];
  if (c.groups != ch || c.y[1] != ch || c.w[1] != 1 || !g.is_constant(op.inputs[1])) return false;
  // 8 columns when the map is wide (fewer row loads per output), else 4 (no empty columns at OW 20)
  // (lavapipe, 1 thread: 4x4 det 20x20 14.5, 4x8 rec 12x80 15.9 GFLOP/s; 4x8 at 20x20 computes
  // 24 columns, 8x4 / 8x8 / 2x8 tiles measured slower on both)
  constexpr int64_t ohb = 4, max_t = 6, max_r = 12, max_wt = 7;
  auto fits = [&](int64_t owb) {
    int64_t lead_off = (c.pads[1] + 3) / 4 * 4 - c.pads[1];
    int64_t seg = lead_off + (owb - 1) * c.s[1] + (c.k[1] - 1) * c.d[1] + 1;
    return (owb * c.s[1]) % 4 == 0 && (seg + 3) / 4 <= max_t;
  };
  int64_t owb = c.y[3] % 8 == 0 && fits(8) ? 8 : 4;
  int64_t rows = (ohb - 1) * c.s[0] + (c.k[0] - 1) * c.d[0] + 1;
  int64_t wt = (kk + 3) / 4;
  if (c.x[3] % 4 != 0 || !fits(owb) || rows > max_r || wt > max_wt) return false;
  // weights as [C][wt * 4] (zero padded): wt rgba32f texel loads per invocation
  auto src = const_floats(g, op, 1);
  std::vector<float> w(static_cast<std::size_t>(ch * wt * 4), 0.0f);
  for (int64_t o = 0; o < ch; ++o)
    for (int64_t k = 0; k < kk; ++k)
      w[static_cast<std::size_t>(o * wt * 4 + k)] = src[static_cast<std::size_t>(o * kk + k)];
  spec[17] = c.y[3] % 4 == 0 ? 1u : 0u; // whole-texel output rows: vec4 stores
  uint64_t tiles = static_cast<uint64_t>(ch * ((c.y[2] + ohb - 1) / ohb) * ((c.y[3] + owb - 1) / owb));
  b.dispatch(owb == 8 ? "conv_dw_w8" : "conv_dw", std::move(spec),
             {texels(x, 4), texels(b.constant(std::move(w)), 4), texels(bias_ref, 1), texels(b.output(0), 1),
              texels(b.output(0), 4)},
             tiles, static_cast<uint32_t>(c.y[0]));
  return true;
}

} // namespace

void add_conv_rules(rule_table& t) {
  t["Conv"] = {[](const graph::Graph& g, const graph::Op& op) {
                 auto w = check_common(g, op);
                 if (!w.empty()) return w;
                 if (shape_of(g, op.inputs[0]).size() == 5) return check_conv3d(g, op, false);
                 return check_groups(geometry(g, op));
               },
               [](op_builder& b) {
                 const auto& g = b.graph();
                 const auto& op = b.op();
                 if (shape_of(g, op.inputs[0]).size() == 5) return lower_conv3d(b, false);
                 auto c = geometry(g, op);
                 int64_t oc = c.y[1], ocg = oc / c.groups, icg = c.w[1], kk = c.k[0] * c.k[1];
                 bool bias = has_bias(op);
                 spec_map spec = conv_spec(c, bias);
                 add_activation(op, spec);
                 buffer_ref x = b.input(0);
                 buffer_ref bias_ref = bias ? b.input(2) : x;
                 int64_t hw = c.y[2] * c.y[3];
                 if (c.k[0] == 1 && c.k[1] == 1 && c.s[0] == 1 && c.s[1] == 1 && c.groups == 1 &&
                     c.pads == std::vector<int64_t>(4, 0) && icg % 4 == 0 && hw % 4 == 0) {
                   // A 1x1 convolution is a GEMM per image: W [OC][IC] x X [IC][HW].
                   gemm_args a = image_gemm(b.input(1), x, b.output(0), oc, icg, hw, c.y[0], oc * hw);
                   a.bias = bias_ref;
                   a.bias_mode = bias ? 1 : 0;
                   dispatch_gemm(b, a);
                   return;
                 }
                 if (try_depthwise(b, c, spec, x, bias_ref)) return;
                 // Channel block: 8 or 4 channels of one group share each input load.
                 int64_t ob = 1;
                 if (g.is_constant(op.inputs[1]))
                   for (int64_t cand : {8, 4})
                     if (ob == 1 && (c.groups == 1 ? oc >= cand || cand == 4 : ocg % cand == 0)) ob = cand;
                 buffer_ref w;
                 std::string shader;
                 int64_t ocb;
                 if (ob > 1) { // reorder to [ceil(OC/ob)][ICg][KH][KW][ob]: vec4 weight loads
                   auto src = const_floats(g, op, 1);
                   int64_t blocks = (oc + ob - 1) / ob;
                   std::vector<float> r(static_cast<std::size_t>(blocks * icg * kk * ob), 0.0f);
                   for (int64_t o = 0; o < oc; ++o)
                     for (int64_t i = 0; i < icg; ++i)
                       for (int64_t k = 0; k < kk; ++k)
                         r[static_cast<std::size_t>((((o / ob) * icg + i) * kk + k) * ob + o % ob)] =
                             src[static_cast<std::size_t>((o * icg + i) * kk + k)];
                   w = b.constant(std::move(r));
                   shader = ob == 8 ? "conv_oc8" : "conv_oc4";
                   ocb = blocks;
                 } else {
                   w = b.input(1);
                   shader = "conv_oc1";
                   ocb = oc;
                 }
                 // Whole-texel input rows: conv_row.comp loads the input as rgba32f texels, 4 or 8
                 // output columns per invocation whose input segment (<= 6 texels) starts on a
                 // texel (4 or 8 columns times the horizontal stride is a multiple of 4).
                 constexpr int64_t row_maxt = 6;
                 int64_t row_owb = ob == 8 ? 4 : 8; // 8x8 accumulators spill on lavapipe
                 int64_t lead_off = (c.pads[1] + 3) / 4 * 4 - c.pads[1];
                 int64_t seg = lead_off + (row_owb - 1) * c.s[1] + (c.k[1] - 1) * c.d[1] + 1;
                 // (and enough output blocks to fill a workgroup of 64: tiny maps keep 4 columns)
                 bool row = (row_owb * c.s[1]) % 4 == 0 && c.x[3] % 4 == 0 &&
                            c.y[2] * ((c.y[3] + row_owb - 1) / row_owb) >= 48 && (seg + 3) / 4 <= row_maxt;
                 if (row) {
                   uint64_t inv = static_cast<uint64_t>(c.y[2] * ((c.y[3] + row_owb - 1) / row_owb));
                   uint32_t slices = static_cast<uint32_t>(c.y[0] * ocb);
                   spec[17] = c.y[3] % 4 == 0 ? 1u : 0u; // whole-texel output rows: vec4 stores
                   b.dispatch("conv_row_" + shader.substr(5), std::move(spec),
                              {texels(x, 4), texels(w, ob > 1 ? 4 : 1), texels(bias_ref, 1), texels(b.output(0), 1),
                               texels(b.output(0), 4)},
                              inv, slices);
                   return;
                 }
                 uint64_t inv = static_cast<uint64_t>(c.y[2] * ((c.y[3] + 3) / 4));
                 b.dispatch(shader, std::move(spec),
                            {texels(x, 1), texels(w, ob > 1 ? 4 : 1), bias_ref, texels(b.output(0), 1)}, inv,
                            static_cast<uint32_t>(c.y[0] * ocb));
               },
               "2-D (4-D NCHW input and weights), 1-D (3-D NCL) or 3-D (5-D NCDHW), f32; channels consistent with group"};

  t["ConvTranspose"] = {[](const graph::Graph& g, const graph::Op& op) {
                          auto w = check_common(g, op);
                          if (!w.empty()) return w;
                          if (shape_of(g, op.inputs[0]).size() == 5) return check_conv3d(g, op, true);
                          auto x = shape_of(g, op.inputs[0]), wt = shape_of(g, op.inputs[1]);
                          int64_t groups = op.attr_int("group", 1);
                          if (groups < 1 || x[1] != wt[0] || x[1] % groups != 0)
                            return std::string("channels do not match group=") + std::to_string(groups);
                          return std::string();
                        },
                        [](op_builder& b) {
                          const auto& g = b.graph();
                          const auto& op = b.op();
                          if (shape_of(g, op.inputs[0]).size() == 5) return lower_conv3d(b, true);
                          conv_geom c = geometry_without_pads(g, op);
                          c.pads = transposed_pads(op_as_2d(op, shape_of(g, op.inputs[0]).size()), c.x, c.y, c.k, c.s, c.d);
                          bool bias = has_bias(op);
                          if (try_transpose_gemm(b, c, bias)) return;
                          spec_map spec = conv_spec(c, bias);
                          add_activation(op, spec);
                          buffer_ref x = b.input(0);
                          b.dispatch("conv_transpose", std::move(spec), {x, b.input(1), bias ? b.input(2) : x, b.output(0)},
                                     static_cast<uint64_t>(shape_size(c.y)));
                        },
                        "2-D (4-D NCHW input and weights), 1-D (3-D NCL) or 3-D (5-D NCDHW), f32; channels consistent with group"};
  // Each output element sums input channels of its group times the kernel's taps.
  auto conv_trips = [](const graph::Graph& g, const graph::Op& op) {
    const Shape w = shape_of(g, op.inputs[1]);
    const uint64_t cin = static_cast<uint64_t>(op.type == "Conv" ? w[1] : w[0] / std::max<int64_t>(1, op.attr_int("group", 1)));
    uint64_t taps = 1, rows = 1;
    for (std::size_t i = 2; i < w.size(); ++i) {
      taps *= static_cast<uint64_t>(w[i]);
      if (i + 1 < w.size()) rows *= static_cast<uint64_t>(w[i]);
    }
    return cin * (taps + rows + 1);
  };
  t["Conv"].trips = conv_trips;
  t["ConvTranspose"].trips = conv_trips;
}

} // namespace troupe::kernels::vulkan
