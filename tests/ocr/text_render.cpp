#include "tests/ocr/text_render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <ft2build.h>
#include FT_FREETYPE_H

namespace troupe::ocr::tests {

std::string find_font(const std::string& file_name, const std::string& package) {
  const std::filesystem::path root = "/usr/share/fonts";
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() == file_name) return it->path().string();
  throw std::runtime_error("font " + file_name + " not found under " + root.string() + " (Debian package " + package +
                           ")");
}

font::font(const std::string& path, int pixel_size) : path_(path) {
  if (FT_Init_FreeType(&library_)) throw std::runtime_error("cannot start FreeType");
  if (const FT_Error e = FT_New_Face(library_, path.c_str(), 0, &face_)) {
    FT_Done_FreeType(library_);
    throw std::runtime_error(path + ": FreeType cannot open the font (error " + std::to_string(e) + ")");
  }
  if (const FT_Error e = FT_Set_Pixel_Sizes(face_, 0, static_cast<FT_UInt>(pixel_size))) {
    FT_Done_Face(face_);
    FT_Done_FreeType(library_);
    throw std::runtime_error(path + ": cannot set " + std::to_string(pixel_size) + " px (error " + std::to_string(e) +
                             ")");
  }
}

font::~font() {
  FT_Done_Face(face_);
  FT_Done_FreeType(library_);
}

int font::ascender() const { return static_cast<int>(face_->size->metrics.ascender >> 6); }
int font::line_height() const {
  return static_cast<int>((face_->size->metrics.ascender - face_->size->metrics.descender) >> 6);
}

unsigned font::glyph(char32_t c) const {
  const FT_UInt g = FT_Get_Char_Index(face_, c);
  if (g == 0) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
    throw std::runtime_error(path_ + " has no glyph for " + code);
  }
  return g;
}

int font::width(const std::string& utf8) const {
  long pen = 0; // 26.6 fixed point
  for (char32_t c : decode_utf8(utf8)) {
    if (FT_Load_Glyph(face_, glyph(c), FT_LOAD_DEFAULT)) throw std::runtime_error(path_ + ": cannot load a glyph");
    pen += face_->glyph->advance.x;
  }
  return static_cast<int>((pen + 63) >> 6);
}

void font::draw(image& img, int x, int y, const std::string& utf8) const {
  long pen = static_cast<long>(x) << 6;
  const int baseline = y + ascender();
  for (char32_t c : decode_utf8(utf8)) {
    if (FT_Load_Glyph(face_, glyph(c), FT_LOAD_RENDER)) throw std::runtime_error(path_ + ": cannot render a glyph");
    const FT_GlyphSlot g = face_->glyph;
    const FT_Bitmap& bm = g->bitmap;
    const int left = static_cast<int>((pen + 32) >> 6) + g->bitmap_left, top = baseline - g->bitmap_top;
    for (unsigned r = 0; r < bm.rows; ++r)
      for (unsigned col = 0; col < bm.width; ++col) {
        const int px = left + static_cast<int>(col), py = top + static_cast<int>(r);
        if (px < 0 || py < 0 || px >= img.width || py >= img.height) continue;
        const int cover = bm.buffer[static_cast<long>(r) * bm.pitch + col];
        std::uint8_t* p = img.at(px, py);
        for (int k = 0; k < 3; ++k) p[k] = static_cast<std::uint8_t>(p[k] * (255 - cover) / 255);
      }
    pen += g->advance.x;
  }
}

image render_lines(const font& f, const std::vector<std::string>& lines, int margin, int gap) {
  int w = 0;
  for (const std::string& l : lines) w = std::max(w, f.width(l));
  const int n = static_cast<int>(lines.size());
  image img(w + 2 * margin, 2 * margin + n * f.line_height() + std::max(n - 1, 0) * gap, 255);
  for (int i = 0; i < n; ++i) f.draw(img, margin, margin + i * (f.line_height() + gap), lines[static_cast<std::size_t>(i)]);
  return img;
}

std::array<float, 2> rotated::map(float x, float y) const {
  const double dx = x - cx, dy = y - cy;
  return {static_cast<float>(ncx + dx * cos + dy * sin), static_cast<float>(ncy - dx * sin + dy * cos)};
}

rotated rotate_image(const image& img, double degrees, std::uint8_t fill) {
  rotated r;
  const double a = degrees * std::acos(-1.0) / 180;
  r.cos = std::cos(a), r.sin = std::sin(a);
  // Exact multiples of 90 degrees stay exact.
  if (std::abs(r.cos) < 1e-12) r.cos = 0;
  if (std::abs(r.sin) < 1e-12) r.sin = 0;
  const int w = static_cast<int>(std::ceil(std::abs(img.width * r.cos) + std::abs(img.height * r.sin) - 1e-9));
  const int h = static_cast<int>(std::ceil(std::abs(img.width * r.sin) + std::abs(img.height * r.cos) - 1e-9));
  // Pixel centers: the source's middle is at ((w - 1) / 2, (h - 1) / 2).
  r.cx = (img.width - 1) / 2.0, r.cy = (img.height - 1) / 2.0, r.ncx = (w - 1) / 2.0, r.ncy = (h - 1) / 2.0;
  r.pixels = image(w, h, fill);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double dx = x - r.ncx, dy = y - r.ncy;
      const double sx = r.cx + dx * r.cos - dy * r.sin, sy = r.cy + dx * r.sin + dy * r.cos;
      const double fx = std::floor(sx), fy = std::floor(sy);
      double acc[3] = {0, 0, 0};
      for (int k = 0; k < 4; ++k) {
        const int px = static_cast<int>(fx) + (k & 1), py = static_cast<int>(fy) + (k >> 1);
        const double wgt = ((k & 1) ? sx - fx : 1 - (sx - fx)) * ((k >> 1) ? sy - fy : 1 - (sy - fy));
        for (int c = 0; c < 3; ++c)
          acc[c] += wgt * ((px < 0 || py < 0 || px >= img.width || py >= img.height) ? fill : img.at(px, py)[c]);
      }
      for (int c = 0; c < 3; ++c) r.pixels.at(x, y)[c] = static_cast<std::uint8_t>(std::clamp(std::lround(acc[c]), 0L, 255L));
    }
  return r;
}

std::u32string decode_utf8(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (!len || i + static_cast<std::size_t>(len) > s.size()) throw std::invalid_argument("malformed UTF-8: " + s);
    char32_t c = len == 1 ? b : b & (0x7f >> len);
    for (int k = 1; k < len; ++k) {
      const auto cont = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((cont >> 6) != 2) throw std::invalid_argument("malformed UTF-8: " + s);
      c = (c << 6) | (cont & 0x3f);
    }
    out += c;
    i += static_cast<std::size_t>(len);
  }
  return out;
}

} // namespace troupe::ocr::tests
