#pragma once
/// Cutting text boxes out of an image for the classifier and the recognizer.
#include <cstdint>

#include "db_postprocess.hpp"
#include "image.hpp"

namespace troupe::ocr {

/// The box's quadrilateral warped to an upright rectangle (PaddleOCR's
/// get_rotate_crop_image): width the longer of the top and bottom edges, height the longer of
/// the left and right edges (truncated to whole pixels, at least 1), bilinear, edge pixels
/// repeated past the border. A crop at least 1.5 times as high as wide is vertical text
/// turned on its side: it is rotated 90 degrees counter-clockwise (np.rot90).
image crop_box(const image& img, const text_box& box);

/// The image turned upside down (what the angle classifier's "180" asks for).
image rotate_180(const image& img);

/// The 90-degree counter-clockwise rotation (np.rot90): the right column becomes the top row.
image rotate_90_ccw(const image& img);

/// The recognizer's and classifier's input, still u8 BGR (the engine normalizes): `img`
/// resized (resize_cubic) to `height` rows keeping its aspect ratio (width
/// ceil(height * w / h) as PaddleOCR computes it, at most max_width, at least 1; `used_width`
/// says how many columns that is), padded on the right to max_width columns with `pad`.
/// PaddleOCR pads with 0 after normalizing (x / 255 - 0.5) / 0.5, i.e. with 127.5 in pixel
/// terms: the default 128 normalizes to 0.004 there (127 would give -0.004; the recognizer
/// read the same either way). Under ocr-node's x / 255 (no mean) it would be 0.
image fit_height(const image& img, int height, int max_width, int& used_width, std::uint8_t pad = 128);

} // namespace troupe::ocr
