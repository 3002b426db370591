#pragma once
/// Text rendered with FreeType into troupe::ocr images, for tests that need known text in
/// real fonts (Debian's fonts-dejavu-core and fonts-wqy-microhei).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "examples/ocr/image.hpp"

struct FT_LibraryRec_;
struct FT_FaceRec_;

namespace troupe::ocr::tests {

/// The path of `file_name` (e.g. "DejaVuSans.ttf") under /usr/share/fonts. Throws
/// std::runtime_error naming the file and the Debian package that ships it when it is not
/// there: a test without its font fails, it is not skipped.
std::string find_font(const std::string& file_name, const std::string& package);

/// One font file at one pixel size.
class font {
public:
  /// Throws std::runtime_error naming the path when FreeType cannot open it.
  font(const std::string& path, int pixel_size);
  ~font();
  font(const font&) = delete;
  font& operator=(const font&) = delete;

  int ascender() const;    ///< pixels above the baseline
  int line_height() const; ///< ascender plus descender
  /// The advance of a UTF-8 line in pixels. Throws naming the font and the code point when
  /// the font has no glyph for a character (it would draw a box, not the text).
  int width(const std::string& utf8) const;
  /// Draws a UTF-8 line in black (darkening what is there by the glyph's coverage), the top
  /// of the line at y (the baseline at y + ascender()), starting at x. Throws as width().
  void draw(image& img, int x, int y, const std::string& utf8) const;

private:
  unsigned glyph(char32_t c) const;
  std::string path_;
  FT_LibraryRec_* library_ = nullptr;
  FT_FaceRec_* face_ = nullptr;
};

/// A white image with one line of text per entry, `margin` pixels around the text and
/// `gap` pixels between lines.
image render_lines(const font& f, const std::vector<std::string>& lines, int margin = 16, int gap = 12);

/// An image turned about its center onto a canvas just large enough for it.
struct rotated {
  image pixels;
  double cos = 1, sin = 0, cx = 0, cy = 0, ncx = 0, ncy = 0;
  /// Where a point (pixel coordinates) of the source image lands.
  std::array<float, 2> map(float x, float y) const;
};

/// `img` turned `degrees` counter-clockwise as seen on screen (y down), bilinear, `fill`
/// around it.
rotated rotate_image(const image& img, double degrees, std::uint8_t fill = 255);

/// UTF-8 to code points; throws std::invalid_argument on malformed input.
std::u32string decode_utf8(const std::string& s);

} // namespace troupe::ocr::tests
