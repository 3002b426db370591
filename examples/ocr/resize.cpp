#include "resize.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace troupe::ocr {
namespace {

/// The checks every resize makes, naming the function.
void check_resize(const char* fn, const image& src, int width, int height) {
  if (src.empty()) throw std::invalid_argument(std::string(fn) + ": the source image is empty");
  if (width < 1 || height < 1)
    throw std::invalid_argument(std::string(fn) + ": bad target size " + std::to_string(width) + "x" +
                                std::to_string(height));
}

constexpr int coef_bits = 11; ///< OpenCV's INTER_RESIZE_COEF_BITS
constexpr int coef_scale = 1 << coef_bits;

/// For each destination index: the first source index, the second (clamped) and their
/// fixed-point weights, as OpenCV's resize computes them.
struct taps {
  std::vector<int> i0, i1;
  std::vector<int> w0, w1;
};

taps linear_taps(int src, int dst) {
  taps t;
  t.i0.resize(static_cast<std::size_t>(dst));
  t.i1 = t.w0 = t.w1 = t.i0;
  const double scale = static_cast<double>(src) / dst;
  for (int d = 0; d < dst; ++d) {
    float f = static_cast<float>((d + 0.5) * scale - 0.5);
    int s = static_cast<int>(std::floor(f));
    f -= static_cast<float>(s);
    if (s < 0) f = 0, s = 0;
    if (s >= src - 1) f = 0, s = src - 1;
    const auto k = static_cast<std::size_t>(d);
    t.i0[k] = s;
    t.i1[k] = std::min(s + 1, src - 1);
    // cvRound (to nearest even), as saturate_cast<short> does.
    t.w0[k] = static_cast<int>(std::nearbyint((1.0f - f) * coef_scale));
    t.w1[k] = static_cast<int>(std::nearbyint(f * coef_scale));
  }
  return t;
}

} // namespace

image resize_bilinear(const image& src, int width, int height) {
  check_resize("resize_bilinear", src, width, height);
  const taps tx = linear_taps(src.width, width), ty = linear_taps(src.height, height);
  // Horizontal pass into a cache of two source rows (the two the current output row blends;
  // the source rows needed only grow with y), then the vertical blend.
  const std::size_t row_len = static_cast<std::size_t>(width) * 3;
  std::vector<int> cache[2] = {std::vector<int>(row_len), std::vector<int>(row_len)};
  int cached[2] = {-1, -1};
  auto hrow = [&](int sy, int keep) -> const int* {
    for (int s = 0; s < 2; ++s)
      if (cached[s] == sy) return cache[s].data();
    const int s = cached[0] == keep ? 1 : 0; // never evict the other row this output needs
    cached[s] = sy;
    int* out = cache[s].data();
    for (int x = 0; x < width; ++x) {
      const auto k = static_cast<std::size_t>(x);
      const std::uint8_t* a = src.at(tx.i0[k], sy);
      const std::uint8_t* b = src.at(tx.i1[k], sy);
      for (int c = 0; c < 3; ++c) out[x * 3 + c] = a[c] * tx.w0[k] + b[c] * tx.w1[k];
    }
    return out;
  };
  image dst(width, height);
  for (int y = 0; y < height; ++y) {
    const auto k = static_cast<std::size_t>(y);
    const int* r0 = hrow(ty.i0[k], ty.i1[k]);
    const int* r1 = hrow(ty.i1[k], ty.i0[k]);
    const std::int64_t b0 = ty.w0[k], b1 = ty.w1[k];
    std::uint8_t* o = dst.at(0, y);
    for (int i = 0; i < width * 3; ++i) {
      const std::int64_t v = (b0 * r0[i] + b1 * r1[i] + (std::int64_t{1} << (2 * coef_bits - 1))) >> (2 * coef_bits);
      o[i] = static_cast<std::uint8_t>(std::clamp<std::int64_t>(v, 0, 255));
    }
  }
  return dst;
}

namespace {

/// Catmull-Rom: Keys' cubic with a = -0.5.
double catmull_rom(double x) {
  x = std::abs(x);
  if (x < 1) return (1.5 * x - 2.5) * x * x + 1;
  if (x < 2) return ((-0.5 * x + 2.5) * x - 4) * x + 2;
  return 0;
}

/// One axis: for each destination index, the first source index and the normalized weights
/// of the source pixels from there on (clamped to the edge when past it).
struct filter {
  std::vector<int> first;
  std::vector<std::vector<float>> weights;
};

filter cubic_filter(int src, int dst) {
  filter f;
  const double scale = static_cast<double>(src) / dst;
  const double stretch = std::max(scale, 1.0); // widen the kernel when shrinking
  const double support = 2 * stretch;
  for (int d = 0; d < dst; ++d) {
    const double center = (d + 0.5) * scale - 0.5;
    const int lo = static_cast<int>(std::floor(center - support)) + 1;
    const int hi = static_cast<int>(std::ceil(center + support)) - 1;
    std::vector<float> w;
    double sum = 0;
    for (int s = lo; s <= hi; ++s) {
      const double k = catmull_rom((s - center) / stretch);
      w.push_back(static_cast<float>(k));
      sum += k;
    }
    for (float& x : w) x = static_cast<float>(x / sum);
    f.first.push_back(lo);
    f.weights.push_back(std::move(w));
  }
  return f;
}

} // namespace

image resize_cubic(const image& src, int width, int height) {
  check_resize("resize_cubic", src, width, height);
  const filter fx = cubic_filter(src.width, width), fy = cubic_filter(src.height, height);
  // Horizontal pass into floats (src.height x width), then vertical, rounded and clamped.
  std::vector<float> mid(static_cast<std::size_t>(src.height) * width * 3);
  for (int y = 0; y < src.height; ++y)
    for (int x = 0; x < width; ++x) {
      const auto& w = fx.weights[static_cast<std::size_t>(x)];
      float acc[3] = {0, 0, 0};
      for (std::size_t k = 0; k < w.size(); ++k) {
        const int sx = std::clamp(fx.first[static_cast<std::size_t>(x)] + static_cast<int>(k), 0, src.width - 1);
        const std::uint8_t* p = src.at(sx, y);
        for (int c = 0; c < 3; ++c) acc[c] += w[k] * p[c];
      }
      std::copy(acc, acc + 3, mid.data() + (static_cast<std::size_t>(y) * width + x) * 3);
    }
  image dst(width, height);
  for (int y = 0; y < height; ++y) {
    const auto& w = fy.weights[static_cast<std::size_t>(y)];
    std::uint8_t* o = dst.at(0, y);
    for (int x = 0; x < width; ++x) {
      float acc[3] = {0, 0, 0};
      for (std::size_t k = 0; k < w.size(); ++k) {
        const int sy = std::clamp(fy.first[static_cast<std::size_t>(y)] + static_cast<int>(k), 0, src.height - 1);
        const float* p = mid.data() + (static_cast<std::size_t>(sy) * width + x) * 3;
        for (int c = 0; c < 3; ++c) acc[c] += w[k] * p[c];
      }
      for (int c = 0; c < 3; ++c) o[x * 3 + c] = static_cast<std::uint8_t>(std::clamp(std::lround(acc[c]), 0L, 255L));
    }
  }
  return dst;
}

std::pair<int, int> det_size(int width, int height, int max_side) {
  if (width < 1 || height < 1)
    throw std::invalid_argument("det_size: bad image size " + std::to_string(width) + "x" + std::to_string(height));
  double w = width, h = height;
  if (max_side > 0 && std::max(w, h) > max_side) {
    const double ratio = static_cast<double>(max_side) / std::max(w, h);
    w *= ratio;
    h *= ratio;
  }
  auto round_up = [](double v) { return std::max(static_cast<int>(std::ceil(v / 32)) * 32, 32); };
  return {round_up(w), round_up(h)};
}

det_input make_det_input(const image& img, int max_side) {
  if (img.empty()) throw std::invalid_argument("make_det_input: the image is empty");
  det_input in;
  const image* src = &img;
  image shrunk;
  if (max_side > 0 && std::max(img.width, img.height) > max_side) {
    in.scale = static_cast<double>(max_side) / std::max(img.width, img.height);
    shrunk = resize_bilinear(img, std::max(1, static_cast<int>(std::lround(img.width * in.scale))),
                             std::max(1, static_cast<int>(std::lround(img.height * in.scale))));
    src = &shrunk;
  }
  const auto [w, h] = det_size(src->width, src->height);
  in.pixels = image(w, h, 0);
  for (int y = 0; y < src->height; ++y) std::copy_n(src->at(0, y), src->width * 3, in.pixels.at(0, y));
  return in;
}

} // namespace troupe::ocr
