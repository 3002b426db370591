#pragma once
/// DB (differentiable binarization) post-processing: the detector's probability map to text
/// boxes in the image's coordinates, in reading order (PaddleOCR's DBPostProcess).
#include <array>
#include <vector>

namespace troupe::ocr {

using point = std::array<float, 2>; ///< x, y

/// A text region: four corners clockwise from the top-left (top-left, top-right,
/// bottom-right, bottom-left, in image coordinates with y down), and the mean detector
/// probability inside the box before it was enlarged.
struct text_box {
  std::array<point, 4> points{};
  float score = 0;
};

/// The defaults are @gutenye/ocr-node's but for unclip_ratio (examples/ocr/README.md says
/// where each comes from, and what was measured).
struct db_params {
  float thresh = 0.03f;      ///< map value above which a pixel is text (ocr-node; PaddleOCR: 0.3)
  float box_thresh = 0.0f;   ///< boxes scoring below are dropped (ocr-node: none; PaddleOCR: 0.6)
  /// How far a box grows: area * ratio / perimeter. ocr-node and PaddleOCR use 1.5; with this
  /// pipeline's crops the recognizer kept the spaces between words far more often at 2.0.
  float unclip_ratio = 2.0f;
  int min_size = 3;          ///< boxes with a shorter side are dropped (after growing: min_size + 2)
  int max_candidates = 1000; ///< regions looked at, in raster order of their first pixel (PaddleOCR)
};

/// The boxes of a map_width x map_height probability map (row-major, values in [0, 1]) in
/// the coordinates of the image_width x image_height image it was computed from, where map
/// pixel (x, y) is image pixel (x / scale_x, y / scale_y): scale_x = map_width / image_width
/// for an image stretched to the map, make_det_input's scale for one padded into it. Boxes
/// are rounded to whole pixels, clipped to the image and sorted by sort_boxes. Throws
/// std::invalid_argument for sizes < 1 or scales <= 0.
std::vector<text_box> db_postprocess(const float* prob, int map_width, int map_height, int image_width,
                                     int image_height, double scale_x, double scale_y,
                                     const db_params& params = {});

/// The minimum-area rectangle around `pts` (one side lies along an edge of their convex
/// hull): its corners ordered top-left, top-right, bottom-right, bottom-left as PaddleOCR's
/// get_mini_boxes orders them, and its shorter side. Fewer than 3 non-collinear points give
/// a degenerate rectangle (a side of 0).
std::array<point, 4> min_area_box(std::vector<point> pts, float& short_side);

/// Reading order, as PaddleOCR's sorted_boxes: by the top-left corner's y then x, then boxes
/// whose top-left corners are less than 10 px apart vertically are put left to right.
void sort_boxes(std::vector<text_box>& boxes);

} // namespace troupe::ocr
