/// Checks per output index, along every axis, that oneDNN's resampling reads what ONNX's
/// Resize reads (kernels/reference/resize_coordinates.hpp is ONNX's definition).
#include "kernels/cpu/resampling_match.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/reference/resize_coordinates.hpp"

namespace troupe::kernels::cpu {

namespace {

/// oneDNN's source coordinate, in float as its kernels compute it.
float onednn_coordinate(int64_t o, int64_t n_in, int64_t n_out) {
  return (static_cast<float>(o) + 0.5f) * static_cast<float>(n_in) / static_cast<float>(n_out) - 0.5f;
}

bool axis_matches(bool nearest, const std::string& ctm, const std::string& nearest_mode, int64_t n_in, int64_t n_out,
                  double scale, double len_out, bool spatial) {
  if (n_in <= 0 || n_out <= 0) return false;
  if (!spatial && n_in != n_out) return false;
  if (nearest && n_out % n_in != 0 && n_in % n_out != 0) return false;
  const double last = static_cast<double>(n_in - 1);
  for (int64_t o = 0; o < n_out; ++o) {
    auto xi = reference::resize_coordinate(ctm, o, n_in, n_out, scale, len_out);
    if (!xi) return false;
    // Batch and channel axes: oneDNN reads them one to one.
    double dnnl_x = spatial ? static_cast<double>(onednn_coordinate(o, n_in, n_out)) : static_cast<double>(o);
    if (nearest) {
      auto i = reference::resize_nearest(*xi, nearest_mode);
      if (!i) return false;
      // oneDNN rounds half away from zero (its coordinates are >= -0.5 here: half up).
      auto d = spatial ? static_cast<int64_t>(std::round(dnnl_x)) : o;
      if (std::clamp<int64_t>(*i, 0, n_in - 1) != std::clamp<int64_t>(d, 0, n_in - 1)) return false;
    } else {
      double a = std::clamp(*xi, 0.0, last), b = std::clamp(dnnl_x, 0.0, last);
      if (std::abs(a - b) > 1e-5 * std::max(1.0, last)) return false;
    }
  }
  return true;
}

} // namespace

std::optional<dnnl::algorithm> onednn_resampling_for(const graph::Op& op, int opset, const Shape& xs, const Shape& ys,
                                                     const std::vector<double>& scales) {
  if (xs.size() < 3 || xs.size() > 5 || ys.size() != xs.size()) return std::nullopt;
  if (!scales.empty() && scales.size() != xs.size()) return std::nullopt;
  // Attributes whose non-default values oneDNN has no counterpart for.
  if (op.has_attr("axes") || op.attr_int("antialias", 0) != 0 ||
      op.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
    return std::nullopt;
  const bool legacy = op.type == "Upsample" || opset < 11 || op.input_count() == 2;
  const std::string mode = op.attr_string("mode", "nearest");
  const std::string ctm = legacy ? "asymmetric" : op.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string nearest_mode = legacy ? "floor" : op.attr_string("nearest_mode", "round_prefer_floor");
  bool nearest = mode == "nearest";
  if (!nearest && mode != "linear" && mode != "bilinear" && mode != "trilinear") return std::nullopt;
  for (std::size_t d = 0; d < xs.size(); ++d) {
    double scale = scales.empty() ? static_cast<double>(ys[d]) / static_cast<double>(xs[d]) : scales[d];
    double len_out = scales.empty() ? static_cast<double>(ys[d]) : static_cast<double>(xs[d]) * scale;
    if (!axis_matches(nearest, ctm, nearest_mode, xs[d], ys[d], scale, len_out, d >= 2)) return std::nullopt;
  }
  return nearest ? dnnl::algorithm::resampling_nearest : dnnl::algorithm::resampling_linear;
}

} // namespace troupe::kernels::cpu
