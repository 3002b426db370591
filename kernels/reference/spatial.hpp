#pragma once
/// Window geometry shared by Conv, ConvTranspose and the pools: up to 3 spatial dims, padded
/// with leading size-1 dims so every kernel is one 3-D loop nest.
#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

struct spatial3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

/// Geometry of a forward window op (Conv, pools): x is [N, C, spatial...], y is the
/// pre-allocated output, kernel the spatial kernel shape. Pads follow auto_pad or `pads`.
inline spatial3 window_geometry(const context& ctx, const Shape& x, const Shape& y, const std::vector<int64_t>& kernel) {
  std::size_t r = x.size() < 2 ? 0 : x.size() - 2;
  if (r < 1 || r > 3) fail(ctx, "only 1-D, 2-D and 3-D spatial inputs are supported, got " + to_string(x));
  if (y.size() != x.size()) fail(ctx, "output rank differs from input rank");
  if (kernel.size() != r) fail(ctx, "kernel rank differs from spatial rank");
  const auto& op = ctx.op;
  auto strides = op.attr_ints("strides", std::vector<int64_t>(r, 1));
  auto dil = op.attr_ints("dilations", std::vector<int64_t>(r, 1));
  auto pads = op.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  std::string ap = op.attr_string("auto_pad", "NOTSET");
  if (strides.size() != r || dil.size() != r || pads.size() != 2 * r) fail(ctx, "strides/dilations/pads have the wrong length");
  spatial3 g;
  std::size_t o = 3 - r;
  for (std::size_t i = 0; i < r; ++i) {
    g.in[o + i] = x[2 + i];
    g.out[o + i] = y[2 + i];
    g.k[o + i] = kernel[i];
    g.stride[o + i] = strides[i];
    g.dil[o + i] = dil[i];
    if (strides[i] < 1 || dil[i] < 1 || kernel[i] < 1) fail(ctx, "strides, dilations and kernel must be positive");
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(0, (y[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - x[2 + i]);
      g.pad[o + i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[o + i] = total - g.pad[o + i];
    } else if (ap == "VALID") {
      g.pad[o + i] = 0;
    } else if (ap == "NOTSET") {
      g.pad[o + i] = pads[i];
      g.pad_end[o + i] = pads[r + i];
    } else {
      fail(ctx, "unknown auto_pad '" + ap + "'");
    }
  }
  return g;
}

} // namespace troupe::kernels::reference
