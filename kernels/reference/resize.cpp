/// Resize (opset 10 and 11+) and Upsample: nearest (all nearest_modes), linear and cubic
/// (cubic_coeff_a, exclude_outside), every coordinate_transformation_mode including
/// tf_crop_and_resize with roi and extrapolation_value. N-D and separable: each output
/// coordinate gets per-dim taps (input index, weight); the output is their tensor product.
#include "kernels/reference/common.hpp"
#include "kernels/reference/resize_coordinates.hpp"

namespace troupe::kernels::reference {

namespace {

struct tap { int64_t index; double weight; };

void resize_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  if (x.get_element_type() != y.get_element_type()) fail(ctx, "output type differs from input type");
  const Shape& xs = x.get_shape();
  const Shape& ys = y.get_shape();
  std::size_t r = xs.size();
  if (ys.size() != r) fail(ctx, "output rank differs from input rank");
  const auto& op = ctx.op;
  bool legacy = op.type == "Upsample" || op.input_count() == 2; // Upsample, Resize-10: (X, scales)
  std::vector<double> scales, roi;
  if (legacy) {
    if (op.has_attr("scales")) for (float f : op.attr_floats("scales")) scales.push_back(f);
    else scales = to_doubles(input(ctx, in, 1));
  } else {
    if (has_input(in, 1)) roi = to_doubles(in[1]);
    if (has_input(in, 2) && in[2].get_size() > 0) scales = to_doubles(in[2]);
  }
  if (!scales.empty() && scales.size() != r) fail(ctx, "scales must have one element per axis");
  std::string mode = op.attr_string("mode", "nearest");
  std::string ctm = legacy ? "asymmetric" : op.attr_string("coordinate_transformation_mode", "half_pixel");
  std::string nearest = legacy ? "floor" : op.attr_string("nearest_mode", "round_prefer_floor");
  double a = op.attr_float("cubic_coeff_a", -0.75f);
  bool exclude = op.attr_int("exclude_outside", 0) != 0;
  double extrap = op.attr_float("extrapolation_value", 0.0f);
  if (mode != "nearest" && mode != "linear" && mode != "cubic" && mode != "bilinear" && mode != "trilinear")
    fail(ctx, "unknown mode '" + mode + "'");
  if (ctm == "tf_crop_and_resize" && roi.size() != 2 * r) fail(ctx, "tf_crop_and_resize needs an roi of 2*rank elements");

  // Per dim, per output coordinate: the taps, or none for extrapolation.
  std::vector<std::vector<std::vector<tap>>> taps(r);
  std::vector<std::vector<bool>> outside(r);
  for (std::size_t d = 0; d < r; ++d) {
    int64_t n_in = xs[d], n_out = ys[d];
    if (n_in == 0 && n_out > 0) fail(ctx, "cannot resize an empty axis to a non-empty one");
    double scale = scales.empty() ? static_cast<double>(n_out) / static_cast<double>(n_in) : scales[d];
    // With scales, ONNX transforms coordinates with the unrounded output length in*scale.
    double len_out = scales.empty() ? static_cast<double>(n_out) : static_cast<double>(n_in) * scale;
    taps[d].resize(static_cast<std::size_t>(n_out));
    outside[d].assign(static_cast<std::size_t>(n_out), false);
    for (int64_t o = 0; o < n_out; ++o) {
      double xi = 0;
      if (ctm == "tf_crop_and_resize") {
        double s = roi[d], e = roi[r + d], len = static_cast<double>(n_in - 1);
        double xo = static_cast<double>(o);
        xi = len_out > 1 ? s * len + xo * (e - s) * len / (len_out - 1) : 0.5 * (s + e) * len;
        if (xi < 0 || xi > len) { outside[d][static_cast<std::size_t>(o)] = true; continue; }
      } else if (auto c = resize_coordinate(ctm, o, n_in, n_out, scale, len_out)) {
        xi = *c;
      } else {
        fail(ctx, "unknown coordinate_transformation_mode '" + ctm + "'");
      }
      auto& t = taps[d][static_cast<std::size_t>(o)];
      auto clampi = [&](int64_t i) { return std::clamp<int64_t>(i, 0, n_in - 1); };
      if (mode == "nearest") {
        auto i = resize_nearest(xi, nearest);
        if (!i) fail(ctx, "unknown nearest_mode '" + nearest + "'");
        t.push_back({clampi(*i), 1.0});
      } else if (mode != "cubic") {
        double c = std::clamp(xi, 0.0, static_cast<double>(n_in - 1));
        auto i0 = static_cast<int64_t>(std::floor(c));
        double w = c - static_cast<double>(i0);
        t.push_back({i0, 1 - w});
        if (w > 0) t.push_back({clampi(i0 + 1), w});
      } else {
        double f = std::floor(xi), s = xi - f;
        auto i0 = static_cast<int64_t>(f);
        double w[4] = {((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a,
                       ((a + 2) * s - (a + 3)) * s * s + 1,
                       ((a + 2) * (1 - s) - (a + 3)) * (1 - s) * (1 - s) + 1,
                       ((a * (2 - s) - 5 * a) * (2 - s) + 8 * a) * (2 - s) - 4 * a};
        double sum = 0;
        for (int k = 0; k < 4; ++k) {
          int64_t i = i0 - 1 + k;
          if (exclude && (i < 0 || i >= n_in)) w[k] = 0;
          sum += w[k];
        }
        for (int k = 0; k < 4; ++k) {
          double wk = exclude && sum != 0 ? w[k] / sum : w[k];
          if (wk != 0) t.push_back({clampi(i0 - 1 + k), wk});
        }
      }
    }
  }
  auto xv = to_doubles(x);
  auto st = strides_of(xs);
  std::vector<double> yv(static_cast<std::size_t>(y.get_size()));
  std::vector<int64_t> idx(r, 0), pick(r, 0);
  for (int64_t i = 0; i < y.get_size(); ++i) {
    bool out_of_roi = false;
    for (std::size_t d = 0; d < r; ++d) out_of_roi = out_of_roi || outside[d][static_cast<std::size_t>(idx[d])];
    double acc = 0;
    if (out_of_roi) {
      acc = extrap;
    } else {
      // Sum over the tensor product of the per-dim taps.
      std::fill(pick.begin(), pick.end(), 0);
      while (true) {
        double w = 1;
        int64_t off = 0;
        for (std::size_t d = 0; d < r; ++d) {
          const tap& t = taps[d][static_cast<std::size_t>(idx[d])][static_cast<std::size_t>(pick[d])];
          w *= t.weight;
          off += t.index * st[d];
        }
        acc += w * xv[static_cast<std::size_t>(off)];
        std::size_t d = r;
        while (d-- > 0) {
          if (++pick[d] < static_cast<int64_t>(taps[d][static_cast<std::size_t>(idx[d])].size())) break;
          pick[d] = 0;
        }
        if (d == static_cast<std::size_t>(-1)) break;
      }
    }
    yv[static_cast<std::size_t>(i)] = acc;
    for (std::size_t d = r; d-- > 0;) {
      if (++idx[d] < ys[d]) break;
      idx[d] = 0;
    }
  }
  bool is_float = dispatch(x.get_element_type(), [](auto tag) { return is_float_v<decltype(tag)>; });
  if (!is_float) // integer images: round interpolated values to nearest instead of truncating
    for (auto& v : yv) v = std::nearbyint(v);
  from_doubles(y, yv);
}

} // namespace

void register_resize(kernel_map& m) {
  m["Resize"] = resize_kernel;
  m["Upsample"] = resize_kernel;
}

} // namespace troupe::kernels::reference
