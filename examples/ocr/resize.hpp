#pragma once
/// Resizing (bilinear as OpenCV, cubic for text lines) and the detector's input.
#include <utility>

#include "image.hpp"

namespace troupe::ocr {

/// Bilinear resize with OpenCV's INTER_LINEAR rules (what PaddleOCR's cv2.resize does):
/// pixel centers at +0.5, samples past the edge repeat the edge pixel, 11-bit fixed-point
/// weights. Throws std::invalid_argument for an empty source or a size < 1.
image resize_bilinear(const image& src, int width, int height);

/// Separable Catmull-Rom cubic resize (the "cubic" kernel of sharp/libvips, which
/// @gutenye/ocr-node resizes text lines with), the kernel widened by the factor when
/// shrinking so that every source pixel counts; edges repeat. Text lines are upscaled ~2x
/// for the recognizer: bilinear blurs the gaps between words enough that the recognizer
/// drops the spaces (examples/ocr/README.md has the measurement). Throws as resize_bilinear.
image resize_cubic(const image& src, int width, int height);

/// The detector's input size for a width x height image: each side rounded up to a multiple
/// of 32, at least 32 (@gutenye/ocr-common's multipleOfBaseSize). With `max_side` > 0 the
/// image is first scaled down, keeping its aspect ratio, so that its longer side is at most
/// max_side (that function's maxSize, which ocr-node leaves unset: 0 here by default too).
/// Returns {width, height}.
std::pair<int, int> det_size(int width, int height, int max_side = 0);

/// The detector's input and where the image lies in it.
struct det_input {
  image pixels;     ///< det_size(): the image at the top-left, black (0) to the right and below
  double scale = 1; ///< input pixels per image pixel (1 unless max_side shrank the image)
};

/// The image padded, not stretched, to det_size(): ocr-node letterboxes it (sharp's "contain",
/// aspect ratio kept, black around it), and keeping the text's shape matters to the detector
/// (README.md); the padding goes right and below so that box coordinates need no offset.
/// With `max_side` > 0 a larger image is first shrunk (bilinear, aspect ratio kept).
det_input make_det_input(const image& img, int max_side = 0);

} // namespace troupe::ocr
