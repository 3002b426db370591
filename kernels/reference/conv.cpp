/// Conv and ConvTranspose (groups, strides, dilations, pads, auto_pad, output_padding,
/// output_shape), 1-D to 3-D, accumulated in double.
#include "kernels/reference/spatial.hpp"

namespace troupe::kernels::reference {

namespace {

/// total // 2 rounding down, as ONNX's reference does: a negative total padding (an output
/// larger than the natural one) must put the extra rows at the end.
int64_t floor_div2(int64_t total) { return total >= 0 ? total / 2 : -((-total + 1) / 2); }

std::vector<int64_t> kernel_shape(const context& ctx, const Tensor& w) {
  Shape ws = w.get_shape();
  if (ws.size() < 3) fail(ctx, "weights must have rank >= 3, got " + to_string(ws));
  std::vector<int64_t> k(ws.begin() + 2, ws.end());
  auto attr = ctx.op.attr_ints("kernel_shape", k);
  if (attr != k) fail(ctx, "kernel_shape attribute disagrees with the weights " + to_string(ws));
  return k;
}

void conv_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Tensor& w = input(ctx, in, 1);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  const Shape& ws = w.get_shape();
  spatial3 g = window_geometry(ctx, xs, y.get_shape(), kernel_shape(ctx, w));
  int64_t N = xs[0], C = xs[1], M = ws[0], G = ctx.op.attr_int("group", 1);
  if (G < 1 || C % G || M % G || ws[1] != C / G)
    fail(ctx, "channels do not match groups: X " + to_string(xs) + ", W " + to_string(ws) + ", group " + std::to_string(G));
  if (y.get_shape()[0] != N || y.get_shape()[1] != M) fail(ctx, "output shape " + to_string(y.get_shape()) + " is wrong");
  int64_t Cg = C / G, Mg = M / G;
  auto xv = to_doubles(x), wv = to_doubles(w);
  std::vector<double> bias(static_cast<std::size_t>(M), 0.0);
  if (has_input(in, 2)) {
    bias = to_doubles(in[2]);
    if (static_cast<int64_t>(bias.size()) != M) fail(ctx, "bias has the wrong size");
  }
  std::vector<double> yv(static_cast<std::size_t>(y.get_size()));
  int64_t isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      int64_t grp = m / Mg;
      double* yp = yv.data() + (n * M + m) * osz;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            double s = bias[static_cast<std::size_t>(m)];
            for (int64_t c = 0; c < Cg; ++c) {
              const double* xp = xv.data() + (n * C + grp * Cg + c) * isz;
              const double* wp = wv.data() + (m * Cg + c) * ksz;
              for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
                int64_t i0 = o0 * g.stride[0] + k0 * g.dil[0] - g.pad[0];
                if (i0 < 0 || i0 >= g.in[0]) continue;
                for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
                  int64_t i1 = o1 * g.stride[1] + k1 * g.dil[1] - g.pad[1];
                  if (i1 < 0 || i1 >= g.in[1]) continue;
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    int64_t i2 = o2 * g.stride[2] + k2 * g.dil[2] - g.pad[2];
                    if (i2 < 0 || i2 >= g.in[2]) continue;
                    s += xp[(i0 * g.in[1] + i1) * g.in[2] + i2] * wp[(k0 * g.k[1] + k1) * g.k[2] + k2];
                  }
                }
              }
            }
            yp[(o0 * g.out[1] + o1) * g.out[2] + o2] = s;
          }
    }
  from_doubles(y, yv);
}

void conv_transpose_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Tensor& w = input(ctx, in, 1);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  const Shape& ws = w.get_shape();
  const Shape& ys = y.get_shape();
  auto kernel = kernel_shape(ctx, w);
  std::size_t r = kernel.size();
  if (xs.size() != r + 2 || ys.size() != r + 2 || r > 3) fail(ctx, "ranks of X, W and Y disagree");
  int64_t N = xs[0], C = xs[1], G = ctx.op.attr_int("group", 1);
  if (G < 1 || C % G || ws[0] != C) fail(ctx, "channels do not match: X " + to_string(xs) + ", W " + to_string(ws));
  int64_t Mg = ws[1], M = Mg * G, Cg = C / G;
  if (ys[0] != N || ys[1] != M) fail(ctx, "output shape " + to_string(ys) + " is wrong");
  const auto& op = ctx.op;
  auto strides = op.attr_ints("strides", std::vector<int64_t>(r, 1));
  auto dil = op.attr_ints("dilations", std::vector<int64_t>(r, 1));
  auto pads = op.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  auto opad = op.attr_ints("output_padding", std::vector<int64_t>(r, 0));
  std::string ap = op.attr_string("auto_pad", "NOTSET");
  if (strides.size() != r || dil.size() != r || pads.size() != 2 * r || opad.size() != r)
    fail(ctx, "strides/dilations/pads/output_padding have the wrong length");
  spatial3 g;
  std::size_t o = 3 - r;
  for (std::size_t i = 0; i < r; ++i) {
    g.in[o + i] = xs[2 + i];
    g.out[o + i] = ys[2 + i];
    g.k[o + i] = kernel[i];
    g.stride[o + i] = strides[i];
    g.dil[o + i] = dil[i];
    // With output_shape or SAME, the total padding follows from the output size (which
    // shape inference took from output_shape, or in*stride for SAME).
    int64_t total = strides[i] * (xs[2 + i] - 1) + opad[i] + (kernel[i] - 1) * dil[i] + 1 - ys[2 + i];
    if (ap == "VALID") g.pad[o + i] = 0;
    else if (ap == "SAME_UPPER") g.pad[o + i] = floor_div2(total);
    else if (ap == "SAME_LOWER") g.pad[o + i] = total - floor_div2(total);
    else if (ap != "NOTSET") fail(ctx, "unknown auto_pad '" + ap + "'");
    else if (op.has_attr("output_shape")) g.pad[o + i] = total - floor_div2(total);
    else g.pad[o + i] = pads[i];
  }
  auto xv = to_doubles(x), wv = to_doubles(w);
  std::vector<double> yv(static_cast<std::size_t>(y.get_size()), 0.0);
  int64_t isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      int64_t grp = c / Cg;
      const double* xp = xv.data() + (n * C + c) * isz;
      for (int64_t mm = 0; mm < Mg; ++mm) {
        int64_t m = grp * Mg + mm;
        double* yp = yv.data() + (n * M + m) * osz;
        const double* wp = wv.data() + (c * Mg + mm) * ksz;
        for (int64_t i0 = 0; i0 < g.in[0]; ++i0)
          for (int64_t i1 = 0; i1 < g.in[1]; ++i1)
            for (int64_t i2 = 0; i2 < g.in[2]; ++i2) {
              double xval = xp[(i0 * g.in[1] + i1) * g.in[2] + i2];
              for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
                int64_t o0 = i0 * g.stride[0] + k0 * g.dil[0] - g.pad[0];
                if (o0 < 0 || o0 >= g.out[0]) continue;
                for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
                  int64_t o1 = i1 * g.stride[1] + k1 * g.dil[1] - g.pad[1];
                  if (o1 < 0 || o1 >= g.out[1]) continue;
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    int64_t o2 = i2 * g.stride[2] + k2 * g.dil[2] - g.pad[2];
                    if (o2 < 0 || o2 >= g.out[2]) continue;
                    yp[(o0 * g.out[1] + o1) * g.out[2] + o2] += xval * wp[(k0 * g.k[1] + k1) * g.k[2] + k2];
                  }
                }
              }
            }
      }
    }
  if (has_input(in, 2)) {
    auto b = to_doubles(in[2]);
    if (static_cast<int64_t>(b.size()) != M) fail(ctx, "bias has the wrong size");
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t i = 0; i < osz; ++i) yv[static_cast<std::size_t>((n * M + m) * osz + i)] += b[static_cast<std::size_t>(m)];
  }
  from_doubles(y, yv);
}

} // namespace

void register_conv(kernel_map& m) {
  m["Conv"] = conv_kernel;
  m["ConvTranspose"] = conv_transpose_kernel;
}

} // namespace troupe::kernels::reference
