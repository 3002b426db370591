#pragma once
/// 8-bit BGR images, read from PNG or JPEG files and written as PNG.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace troupe::ocr {

/// Interleaved BGR, 3 bytes per pixel, rows top to bottom: what OpenCV's imread gives, so the
/// pipeline's pixel order is PaddleOCR's (its models were trained on BGR input).
struct image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> bgr;

  image() = default;
  /// A width x height image filled with `fill` in all three channels.
  image(int w, int h, std::uint8_t fill = 0)
      : width(w), height(h), bgr(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 3, fill) {}

  bool empty() const { return width <= 0 || height <= 0; }
  std::uint8_t* at(int x, int y) { return bgr.data() + (static_cast<std::size_t>(y) * width + x) * 3; }
  const std::uint8_t* at(int x, int y) const { return bgr.data() + (static_cast<std::size_t>(y) * width + x) * 3; }
};

/// Reads a PNG or JPEG file (told apart by its first bytes, not by its name) as 8-bit BGR:
/// gray is copied to the three channels, palettes are expanded, alpha is dropped, 16-bit
/// samples keep their high byte. Throws std::runtime_error "PATH: REASON" for a file that
/// cannot be opened, is neither PNG nor JPEG, is truncated or corrupt, or has a side longer
/// than `max_side` (checked before the pixels are allocated).
image read_image(const std::string& path, int max_side = 8192);

/// Writes an 8-bit RGB PNG; throws std::runtime_error naming the path on failure.
void write_png(const std::string& path, const image& img);

} // namespace troupe::ocr
