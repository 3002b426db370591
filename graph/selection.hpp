#pragma once
/// The data-dependent selections whose output size is their result: Unique's distinct
/// elements (or slices) and NonMaxSuppression's kept boxes. Shared by the shape rules (which
/// size the outputs when the inputs are known: constants, or run-time values in the
/// interpreter) and the reference kernels (which fill them), so both agree by construction.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include <troupe/tensor.hpp>

namespace troupe::graph {

/// x seen as [outer, len, inner] around `axis` (none: its elements, flattened, as [1, size, 1]).
struct axis_view {
  int64_t outer = 1, len = 1, inner = 1;
  axis_view(const Tensor& x, std::optional<int64_t> axis);
};

/// Unique along `axis` (nullopt: over the flattened tensor): the distinct slices in output
/// order (sorted ascending, lexicographically for slices, or in order of first occurrence),
/// each as the index of its first occurrence; `inverse[i]` is the output position of slice i;
/// `counts[k]` how often output k occurs.
struct unique_result {
  std::vector<int64_t> first, inverse, counts;
};
unique_result unique_slices(const Tensor& x, std::optional<int64_t> axis, bool sorted);

/// NonMaxSuppression (ONNX): per batch and class, boxes with a score above `score_threshold`
/// in descending score order (ties: lower index first), each kept unless its IoU with a kept
/// one passes `iou_threshold`, at most `max_per_class`. Boxes are [B, N, 4] as [y1, x1, y2, x2]
/// (corners in any order), or [x_center, y_center, w, h] with `center_point_box`; scores
/// [B, C, N]. Returns (batch, class, box) triples.
std::vector<std::array<int64_t, 3>> non_max_suppression(const Tensor& boxes, const Tensor& scores, int64_t max_per_class,
                                                        double iou_threshold, std::optional<double> score_threshold,
                                                        bool center_point_box);

} // namespace troupe::graph
