/// GridSample (opset 16, 4-D): output[n, c, h, w] samples input[n, c] at grid[n, h, w] = (x, y)
/// in [-1, 1], by bilinear, nearest (half to even) or bicubic (A = -0.75) interpolation, with
/// zeros, border or reflection padding, as PyTorch's grid_sample (the test data's source).
#include <cmath>

#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

enum class padding { zeros, border, reflection };

double unnormalize(double v, int64_t size, bool align) {
  return align ? (v + 1) / 2 * static_cast<double>(size - 1) : ((v + 1) * static_cast<double>(size) - 1) / 2;
}

double reflect(double v, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  v = std::abs(v - lo);
  const double extra = std::fmod(v, span);
  const auto flips = static_cast<int64_t>(std::floor(v / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

/// A coordinate with border or reflection padding applied (zeros: as it is).
double pad_coordinate(double v, int64_t size, padding p, bool align) {
  if (p == padding::zeros) return v;
  if (p == padding::reflection)
    v = align ? reflect(v, 0, 2.0 * static_cast<double>(size - 1)) : reflect(v, -1, 2.0 * static_cast<double>(size) - 1);
  return std::min(std::max(v, 0.0), static_cast<double>(size - 1));
}

/// Cubic convolution weights of the four taps around t in [0, 1).
std::array<double, 4> cubic_weights(double t) {
  constexpr double a = -0.75;
  auto near = [](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto far = [](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

void grid_sample_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Tensor& grid = input(ctx, in, 1);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  const Shape& gs = grid.get_shape();
  if (xs.size() != 4 || gs.size() != 4 || gs[3] != 2 || gs[0] != xs[0])
    fail(ctx, "takes X [N, C, H, W] and grid [N, H_out, W_out, 2], not " + to_string(xs) + " and " + to_string(gs));
  const std::string mode = ctx.op.attr_string("mode", "bilinear");
  const std::string pad = ctx.op.attr_string("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") fail(ctx, "mode '" + mode + "' is not bilinear, nearest or bicubic");
  if (pad != "zeros" && pad != "border" && pad != "reflection") fail(ctx, "padding_mode '" + pad + "' is not zeros, border or reflection");
  const padding p = pad == "zeros" ? padding::zeros : pad == "border" ? padding::border : padding::reflection;
  const bool align = ctx.op.attr_int("align_corners", 0) != 0;
  const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], ho = gs[1], wo = gs[2];
  const auto xv = to_doubles(x), gv = to_doubles(grid);
  std::vector<double> yv(static_cast<std::size_t>(n * c * ho * wo));
  // Coordinates stay doubles until they are known to be inside (a NaN or huge one reads 0).
  auto pixel = [&](int64_t b, int64_t ch, double fy, double fx) {
    if (!(fy >= 0 && fy < static_cast<double>(h) && fx >= 0 && fx < static_cast<double>(w))) return 0.0;
    const auto iy = static_cast<int64_t>(fy), ix = static_cast<int64_t>(fx);
    return xv[static_cast<std::size_t>(((b * c + ch) * h + iy) * w + ix)];
  };
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < ho; ++oy)
      for (int64_t ox = 0; ox < wo; ++ox) {
        const auto g = static_cast<std::size_t>(((b * ho + oy) * wo + ox) * 2);
        const double ux = unnormalize(gv[g], w, align), uy = unnormalize(gv[g + 1], h, align);
        for (int64_t ch = 0; ch < c; ++ch) {
          double v = 0;
          if (mode == "bicubic") {
            // Each tap gets the padding on its own coordinate.
            const double fx = std::floor(ux), fy = std::floor(uy);
            const auto wx = cubic_weights(ux - fx), wy = cubic_weights(uy - fy);
            for (int j = 0; j < 4; ++j)
              for (int i = 0; i < 4; ++i) {
                const double tx = pad_coordinate(fx - 1 + i, w, p, align), ty = pad_coordinate(fy - 1 + j, h, p, align);
                v += wy[static_cast<std::size_t>(j)] * wx[static_cast<std::size_t>(i)] * pixel(b, ch, ty, tx);
              }
          } else {
            const double sx = pad_coordinate(ux, w, p, align), sy = pad_coordinate(uy, h, p, align);
            if (mode == "nearest") {
              v = pixel(b, ch, std::nearbyint(sy), std::nearbyint(sx));
            } else {
              const double x0 = std::floor(sx), y0 = std::floor(sy), tx = sx - x0, ty = sy - y0;
              v = pixel(b, ch, y0, x0) * (1 - tx) * (1 - ty) + pixel(b, ch, y0, x0 + 1) * tx * (1 - ty) +
                  pixel(b, ch, y0 + 1, x0) * (1 - tx) * ty + pixel(b, ch, y0 + 1, x0 + 1) * tx * ty;
            }
          }
          yv[static_cast<std::size_t>(((b * c + ch) * ho + oy) * wo + ox)] = v;
        }
      }
  from_doubles(y, yv);
}

} // namespace

void register_grid_sample(kernel_map& m) { m["GridSample"] = grid_sample_kernel; }

} // namespace troupe::kernels::reference
