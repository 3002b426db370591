#pragma once
/// ONNX Resize's coordinate transformation and nearest rounding along one axis: the reference
/// kernel's definition, and what a faster kernel is checked against before it takes a Resize.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace troupe::kernels::reference {

/// The input coordinate that output index `o` reads along an axis of `n_in` -> `n_out`
/// elements, for every coordinate_transformation_mode but tf_crop_and_resize (which needs the
/// roi); nullopt: a mode ONNX does not define. `scale` is the op's scale for the axis
/// (n_out / n_in when sizes are given), `len_out` the unrounded output length.
inline std::optional<double> resize_coordinate(const std::string& ctm, int64_t o, int64_t n_in, int64_t n_out,
                                               double scale, double len_out) {
  double xo = static_cast<double>(o);
  if (ctm == "half_pixel") return (xo + 0.5) / scale - 0.5;
  if (ctm == "pytorch_half_pixel") return len_out > 1 ? (xo + 0.5) / scale - 0.5 : 0.0;
  if (ctm == "align_corners") return len_out == 1 ? 0.0 : xo * static_cast<double>(n_in - 1) / (len_out - 1);
  if (ctm == "asymmetric") return xo / scale;
  if (ctm == "tf_half_pixel_for_nn") return (xo + 0.5) / scale;
  if (ctm == "half_pixel_symmetric") {
    double adj = static_cast<double>(n_out) / len_out;
    return static_cast<double>(n_in) / 2.0 * (1 - adj) + (xo + 0.5) / scale - 0.5;
  }
  return std::nullopt;
}

/// The input index nearest mode `nearest_mode` picks for coordinate `xi`, before clamping to
/// the axis; nullopt: a mode ONNX does not define.
inline std::optional<int64_t> resize_nearest(double xi, const std::string& nearest_mode) {
  double f = std::floor(xi);
  if (nearest_mode == "round_prefer_floor") return static_cast<int64_t>(xi == f + 0.5 ? f : std::round(xi));
  if (nearest_mode == "round_prefer_ceil") return static_cast<int64_t>(xi == f + 0.5 ? f + 1 : std::round(xi));
  if (nearest_mode == "floor") return static_cast<int64_t>(f);
  if (nearest_mode == "ceil") return static_cast<int64_t>(std::ceil(xi));
  return std::nullopt;
}

} // namespace troupe::kernels::reference
