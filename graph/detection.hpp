#pragma once
/// OpenVINO's SSD detection heads (domain org.openvinotoolkit, read from IR): PriorBox and
/// PriorBoxClustered (anchor boxes of a feature map, usually folded to a constant when the
/// model is compiled) and DetectionOutput (decode, per-class NMS, keep the best). Shared by the
/// shape rules (output sizes) and the reference kernels (values), so both agree by
/// construction. Semantics are OpenVINO's operation specifications and its reference
/// implementation's (box order, tie breaks, the row that ends the detections).
#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph {

/// PriorBox-1/-8's attributes (min_max_aspect_ratios_order is -8's; -1 behaves as true).
struct prior_box_params {
  std::vector<float> min_size, max_size, aspect_ratio, density, fixed_ratio, fixed_size, variance;
  bool flip = false, clip = false, scale_all_sizes = true, min_max_aspect_ratios_order = true;
  float step = 0, offset = 0;
  /// Read from the op's attributes; fails naming the op on values it cannot use.
  explicit prior_box_params(const Op& op);
  /// Aspect ratios as generated: 1 first, then each distinct one (and its inverse with flip).
  std::vector<float> ratios() const;
  /// Boxes per feature-map cell.
  int64_t priors_per_cell() const;
};

/// 4 * h * w * per_cell, the length of each row of PriorBox's output; fails naming the sizes
/// when a dimension is negative or the output would pass 2^28 elements (a forged feature map).
int64_t prior_row_length(int64_t h, int64_t w, int64_t per_cell);

/// [2, 4 * H * W * priors_per_cell]: boxes (xmin, ymin, xmax, ymax, normalized by the image
/// size) then their variances, for a feature map H x W over an image IH x IW.
std::vector<float> prior_box(const prior_box_params& p, int64_t h, int64_t w, int64_t ih, int64_t iw);

/// PriorBoxClustered-1: one box per (width, height) pair at each cell.
struct prior_box_clustered_params {
  std::vector<float> width, height, variance;
  bool clip = true;
  float step = 0, step_w = 0, step_h = 0, offset = 0.5f;
  explicit prior_box_clustered_params(const Op& op);
};
std::vector<float> prior_box_clustered(const prior_box_clustered_params& p, int64_t h, int64_t w, int64_t ih,
                                       int64_t iw);

/// DetectionOutput-1/-8's attributes.
struct detection_output_params {
  int64_t num_classes = -1; ///< -1 (opset 8): from the class predictions' size
  int64_t background_label_id = 0, top_k = -1, keep_top_k = -1, input_height = 1, input_width = 1;
  bool center_size = false; ///< code_type CENTER_SIZE; else CORNER
  bool variance_encoded_in_target = false, share_location = true, clip_after_nms = false, clip_before_nms = false,
       decrease_label_id = false, normalized = false;
  float nms_threshold = 0, confidence_threshold = 0, objectness_score = 0;
  explicit detection_output_params(const Op& op);
};

/// The sizes DetectionOutput works with, from its inputs' shapes: box offsets [N, P*L*4],
/// class scores [N, P*C], priors [N or 1, 1 or 2, P*(4 or 5)], and with two more inputs an
/// ARM's objectness [N, P*2] and box offsets [N, P*L*4]. Fails naming what disagrees.
struct detection_output_sizes {
  int64_t images = 0, priors = 0, classes = 0, loc_classes = 0, prior_batches = 0, prior_rows = 0, rows = 0;
  detection_output_sizes(const detection_output_params& p, const std::vector<std::vector<int64_t>>& shapes);
};

/// [1, 1, rows, 7] rows of (image, label, score, xmin, ymin, xmax, ymax); after the last
/// detection (when rows remain) a row whose image is -1. `arm_conf`/`arm_loc`: null without.
std::vector<float> detection_output(const detection_output_params& p, const detection_output_sizes& s, const float* loc,
                                    const float* conf, const float* priors, const float* arm_conf, const float* arm_loc);

} // namespace troupe::graph
