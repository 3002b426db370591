#pragma once
/// Recognized text regions and ocr-node's last step: low scores dropped, regions on one line
/// joined.
#include <array>
#include <string>
#include <vector>

#include "db_postprocess.hpp"

namespace troupe::ocr {

/// One line of output: its text, the recognizer's score and the box, clockwise from the
/// top-left, in the image's pixels.
struct text_line {
  std::string text;
  float score = 0;
  std::array<point, 4> box{};
};

/// @gutenye/ocr-common's calculateBox and afAfRec: lines scoring below `drop_score` (0.5 there
/// and in PaddleOCR) are dropped; then a line whose vertical middle is within half the mean
/// box height of the first line of an earlier group joins that group. Each group, ordered
/// left to right, becomes one line: texts joined by one space, the mean score, the box from
/// the first one's left corners to the last one's right corners; groups are ordered by the
/// top of their first box. The input is in reading order (sort_boxes).
std::vector<text_line> group_lines(const std::vector<text_line>& lines, float drop_score = 0.5f);

} // namespace troupe::ocr
