#include "crop.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "resize.hpp"

namespace troupe::ocr {
namespace {

/// The homography taking each from[i] to to[i] (getPerspectiveTransform), as 8 coefficients
/// (the ninth is 1), by Gaussian elimination with partial pivoting.
std::array<double, 8> homography(const std::array<point, 4>& from, const std::array<point, 4>& to) {
  double a[8][9] = {};
  for (int i = 0; i < 4; ++i) {
    const double u = from[static_cast<std::size_t>(i)][0], v = from[static_cast<std::size_t>(i)][1];
    const double x = to[static_cast<std::size_t>(i)][0], y = to[static_cast<std::size_t>(i)][1];
    double* r = a[2 * i];
    r[0] = u, r[1] = v, r[2] = 1, r[6] = -u * x, r[7] = -v * x, r[8] = x;
    r = a[2 * i + 1];
    r[3] = u, r[4] = v, r[5] = 1, r[6] = -u * y, r[7] = -v * y, r[8] = y;
  }
  for (int c = 0; c < 8; ++c) {
    int pivot = c;
    for (int r = c + 1; r < 8; ++r)
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    if (std::abs(a[pivot][c]) < 1e-12) throw std::invalid_argument("crop_box: the box is degenerate");
    if (pivot != c)
      for (int k = 0; k < 9; ++k) std::swap(a[c][k], a[pivot][k]);
    for (int r = 0; r < 8; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int k = c; k < 9; ++k) a[r][k] -= f * a[c][k];
    }
  }
  std::array<double, 8> h{};
  for (int i = 0; i < 8; ++i) h[static_cast<std::size_t>(i)] = a[i][8] / a[i][i];
  return h;
}

float distance(const point& a, const point& b) { return std::hypot(a[0] - b[0], a[1] - b[1]); }

} // namespace

image crop_box(const image& img, const text_box& box) {
  if (img.empty()) throw std::invalid_argument("crop_box: the image is empty");
  const auto& p = box.points;
  const int w = std::max(1, static_cast<int>(std::max(distance(p[0], p[1]), distance(p[2], p[3]))));
  const int h = std::max(1, static_cast<int>(std::max(distance(p[0], p[3]), distance(p[1], p[2]))));
  const float fw = static_cast<float>(w), fh = static_cast<float>(h);
  // From the crop's pixel to the image's: warpPerspective's inverse map.
  const auto m = homography({point{0, 0}, point{fw, 0}, point{fw, fh}, point{0, fh}}, p);
  image out(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double q = m[6] * x + m[7] * y + 1;
      const double sx = (m[0] * x + m[1] * y + m[2]) / q, sy = (m[3] * x + m[4] * y + m[5]) / q;
      // Bilinear; taps outside the image take the nearest edge pixel (BORDER_REPLICATE).
      const double fx = std::floor(sx), fy = std::floor(sy);
      const double ax = sx - fx, ay = sy - fy;
      auto clampx = [&](double v) { return static_cast<int>(std::clamp(v, 0.0, img.width - 1.0)); };
      auto clampy = [&](double v) { return static_cast<int>(std::clamp(v, 0.0, img.height - 1.0)); };
      const int x0 = clampx(fx), x1 = clampx(fx + 1), y0 = clampy(fy), y1 = clampy(fy + 1);
      const std::uint8_t *a = img.at(x0, y0), *b = img.at(x1, y0), *c = img.at(x0, y1), *d = img.at(x1, y1);
      std::uint8_t* o = out.at(x, y);
      for (int k = 0; k < 3; ++k) {
        const double v = (a[k] * (1 - ax) + b[k] * ax) * (1 - ay) + (c[k] * (1 - ax) + d[k] * ax) * ay;
        o[k] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
      }
    }
  if (static_cast<double>(h) / w >= 1.5) return rotate_90_ccw(out);
  return out;
}

image rotate_90_ccw(const image& img) {
  image out(img.height, img.width);
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x) {
      const std::uint8_t* s = img.at(img.width - 1 - y, x);
      std::copy(s, s + 3, out.at(x, y));
    }
  return out;
}

image rotate_180(const image& img) {
  image out(img.width, img.height);
  const std::size_t n = static_cast<std::size_t>(img.width) * img.height;
  for (std::size_t i = 0; i < n; ++i) std::copy_n(img.bgr.data() + (n - 1 - i) * 3, 3, out.bgr.data() + i * 3);
  return out;
}

image fit_height(const image& img, int height, int max_width, int& used_width, std::uint8_t pad) {
  if (img.empty()) throw std::invalid_argument("fit_height: the image is empty");
  if (height < 1 || max_width < 1)
    throw std::invalid_argument("fit_height: bad target " + std::to_string(max_width) + "x" + std::to_string(height));
  // As PaddleOCR's resize_norm_img: ceil(imgH * ratio) in double, capped at the input width.
  const double ratio = img.width / static_cast<double>(img.height);
  used_width = static_cast<int>(std::clamp(std::ceil(height * ratio), 1.0, static_cast<double>(max_width)));
  const image resized = resize_cubic(img, used_width, height);
  image out(max_width, height, pad);
  for (int y = 0; y < height; ++y) std::copy_n(resized.at(0, y), used_width * 3, out.at(0, y));
  return out;
}

} // namespace troupe::ocr
