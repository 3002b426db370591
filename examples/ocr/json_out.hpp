#pragma once
/// troupe_ocr's two output formats.
#include <string>
#include <vector>

#include "lines.hpp"

namespace troupe::ocr {

/// What one image gave.
struct image_result {
  std::string image; ///< the path as given
  std::vector<text_line> lines;
  double ms = 0; ///< wall time from reading the file to the decoded text
};

/// `--json`: one array, one object per image, keys in this order:
/// [{"image": PATH, "lines": [{"text": STR, "score": NUM, "box": [[x,y],[x,y],[x,y],[x,y]]}], "ms": NUM}]
/// Scores print as their shortest float form, whole-pixel coordinates as integers, ms to the
/// microsecond; bytes that are not UTF-8 (a path can have them) become U+FFFD. A newline ends it.
std::string to_json(const std::vector<image_result>& results);

/// The plain format: one line per text region, "SCORE<TAB>TEXT", the score with 4 decimals.
std::string to_plain(const image_result& result);

} // namespace troupe::ocr
