#pragma once
/// Test-only image writers: PNGs of every color type and bit depth, and JPEGs (libjpeg), to
/// check what read_image makes of them.
#include <cstdint>
#include <string>
#include <vector>

#include "examples/ocr/image.hpp"

namespace troupe::ocr::tests {

/// A PNG written as given: `rows` hold the packed samples of each row as libpng expects them
/// (16-bit samples big-endian), `palette` is RGB triplets for PNG_COLOR_TYPE_PALETTE.
/// `interlaced` writes Adam7. Throws std::runtime_error naming the path on failure.
void write_png_raw(const std::string& path, int width, int height, int color_type, int bit_depth,
                   const std::vector<std::vector<std::uint8_t>>& rows, const std::vector<std::uint8_t>& palette = {},
                   bool interlaced = false);

/// A baseline JPEG of `img` (BGR) at `quality`; `gray` writes one grayscale component.
void write_jpeg(const std::string& path, const image& img, int quality = 95, bool gray = false);

/// A w x h CMYK JPEG with every pixel `cmyk`; with `adobe` it has an Adobe marker, which
/// tells readers the bytes are inverted inks (255 = no ink), as Photoshop writes them.
void write_jpeg_cmyk(const std::string& path, int w, int h, const std::uint8_t (&cmyk)[4], bool adobe = true);

/// The file cut to its first `bytes` bytes.
void truncate_file(const std::string& path, std::size_t bytes);

/// The file's size in bytes.
std::size_t file_size(const std::string& path);

} // namespace troupe::ocr::tests
