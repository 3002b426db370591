#include "db_postprocess.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace troupe::ocr {
namespace {

struct vec {
  double x, y;
};
vec operator-(vec a, vec b) { return {a.x - b.x, a.y - b.y}; }
vec operator+(vec a, vec b) { return {a.x + b.x, a.y + b.y}; }
vec operator*(vec a, double s) { return {a.x * s, a.y * s}; }
double dot(vec a, vec b) { return a.x * b.x + a.y * b.y; }
double cross(vec a, vec b) { return a.x * b.y - a.y * b.x; }
double norm(vec a) { return std::hypot(a.x, a.y); }
vec to_vec(const point& p) { return {p[0], p[1]}; }
point to_point(vec v) { return {static_cast<float>(v.x), static_cast<float>(v.y)}; }

/// Andrew's monotone chain; counter-clockwise in a y-up frame, no collinear points.
std::vector<vec> convex_hull(std::vector<vec> p) {
  std::sort(p.begin(), p.end(), [](vec a, vec b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  p.erase(std::unique(p.begin(), p.end(), [](vec a, vec b) { return a.x == b.x && a.y == b.y; }), p.end());
  if (p.size() < 3) return p;
  std::vector<vec> h(2 * p.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    while (k >= 2 && cross(h[k - 1] - h[k - 2], p[i] - h[k - 2]) <= 0) --k;
    h[k++] = p[i];
  }
  for (std::size_t i = p.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross(h[k - 1] - h[k - 2], p[i] - h[k - 2]) <= 0) --k;
    h[k++] = p[i];
  }
  h.resize(k - 1);
  return h;
}

/// PaddleOCR's get_mini_boxes order: the two leftmost corners give the top-left (the upper
/// one) and bottom-left, the two rightmost the top-right and bottom-right. For a rectangle
/// the two leftmost corners always share an edge, so this is a clockwise cycle.
std::array<point, 4> order_corners(std::array<point, 4> p) {
  std::stable_sort(p.begin(), p.end(), [](const point& a, const point& b) { return a[0] < b[0]; });
  const point& tl = p[1][1] > p[0][1] ? p[0] : p[1];
  const point& bl = p[1][1] > p[0][1] ? p[1] : p[0];
  const point& tr = p[3][1] > p[2][1] ? p[2] : p[3];
  const point& br = p[3][1] > p[2][1] ? p[3] : p[2];
  return {tl, tr, br, bl};
}

/// The mean of `prob` over the pixels whose centers lie inside the (convex) box: PaddleOCR's
/// box_score_fast, which fills the polygon over its bounding rectangle.
float box_score(const float* prob, int w, int h, const std::array<point, 4>& box) {
  float x0 = box[0][0], x1 = x0, y0 = box[0][1], y1 = y0;
  for (const point& p : box) {
    x0 = std::min(x0, p[0]), x1 = std::max(x1, p[0]);
    y0 = std::min(y0, p[1]), y1 = std::max(y1, p[1]);
  }
  const int xmin = std::clamp(static_cast<int>(std::floor(x0)), 0, w - 1);
  const int xmax = std::clamp(static_cast<int>(std::ceil(x1)), 0, w - 1);
  const int ymin = std::clamp(static_cast<int>(std::floor(y0)), 0, h - 1);
  const int ymax = std::clamp(static_cast<int>(std::ceil(y1)), 0, h - 1);
  // Signed area tells the winding; a point is inside when it is on the inner side of (or on)
  // every edge.
  double area2 = 0;
  for (int i = 0; i < 4; ++i) area2 += cross(to_vec(box[static_cast<std::size_t>(i)]), to_vec(box[(i + 1) % 4]));
  const double sign = area2 < 0 ? -1 : 1;
  double sum = 0;
  long count = 0;
  for (int y = ymin; y <= ymax; ++y)
    for (int x = xmin; x <= xmax; ++x) {
      const vec p{static_cast<double>(x), static_cast<double>(y)};
      bool inside = true;
      for (int i = 0; i < 4 && inside; ++i) {
        const vec a = to_vec(box[static_cast<std::size_t>(i)]), b = to_vec(box[(i + 1) % 4]);
        inside = sign * cross(b - a, p - a) >= -1e-3 * std::max(norm(b - a), 1.0);
      }
      if (inside) {
        sum += prob[static_cast<std::size_t>(y) * w + x];
        ++count;
      }
    }
  return count ? static_cast<float>(sum / count) : 0.0f;
}

/// The rectangle grown by `d` on every side: what offsetting it by d with round joins (the
/// clipper polygon PaddleOCR unclips with) and taking that polygon's minimum-area rectangle
/// gives.
std::array<point, 4> grow(const std::array<point, 4>& box, double d) {
  const vec p0 = to_vec(box[0]), p1 = to_vec(box[1]), p3 = to_vec(box[3]);
  const double w = norm(p1 - p0), h = norm(p3 - p0);
  const vec u = w > 0 ? (p1 - p0) * (1 / w) : vec{1, 0};
  const vec v = h > 0 ? (p3 - p0) * (1 / h) : vec{-u.y, u.x};
  const vec a = p0 - u * d - v * d;
  const vec ww = u * (w + 2 * d), hh = v * (h + 2 * d);
  return {to_point(a), to_point(a + ww), to_point(a + ww + hh), to_point(a + hh)};
}

} // namespace

std::array<point, 4> min_area_box(std::vector<point> pts, float& short_side) {
  std::vector<vec> v;
  v.reserve(pts.size());
  for (const point& p : pts) v.push_back(to_vec(p));
  const std::vector<vec> hull = convex_hull(std::move(v));
  short_side = 0;
  if (hull.empty()) return {};
  if (hull.size() == 1) return {to_point(hull[0]), to_point(hull[0]), to_point(hull[0]), to_point(hull[0])};
  if (hull.size() == 2)
    return order_corners({to_point(hull[0]), to_point(hull[1]), to_point(hull[1]), to_point(hull[0])});
  // The minimum-area rectangle has a side along a hull edge (Freeman and Shapira): try each.
  double best = -1, bu0 = 0, bu1 = 0, bv0 = 0, bv1 = 0;
  vec bu{1, 0}, bv{0, 1};
  for (std::size_t i = 0; i < hull.size(); ++i) {
    const vec e = hull[(i + 1) % hull.size()] - hull[i];
    const vec u = e * (1 / norm(e)), n{-u.y, u.x};
    double u0 = dot(hull[0], u), u1 = u0, v0 = dot(hull[0], n), v1 = v0;
    for (const vec& p : hull) {
      const double a = dot(p, u), b = dot(p, n);
      u0 = std::min(u0, a), u1 = std::max(u1, a), v0 = std::min(v0, b), v1 = std::max(v1, b);
    }
    const double area = (u1 - u0) * (v1 - v0);
    if (best < 0 || area < best - 1e-9) best = area, bu = u, bv = n, bu0 = u0, bu1 = u1, bv0 = v0, bv1 = v1;
  }
  short_side = static_cast<float>(std::min(bu1 - bu0, bv1 - bv0));
  // u and n are orthonormal, so a point is u * (its u coordinate) + n * (its n coordinate).
  return order_corners({to_point(bu * bu0 + bv * bv0), to_point(bu * bu1 + bv * bv0), to_point(bu * bu1 + bv * bv1),
                        to_point(bu * bu0 + bv * bv1)});
}

std::vector<text_box> db_postprocess(const float* prob, int map_width, int map_height, int image_width,
                                     int image_height, double scale_x, double scale_y, const db_params& params) {
  if (map_width < 1 || map_height < 1 || image_width < 1 || image_height < 1 || !(scale_x > 0) || !(scale_y > 0))
    throw std::invalid_argument("db_postprocess: bad geometry: map " + std::to_string(map_width) + "x" +
                                std::to_string(map_height) + ", image " + std::to_string(image_width) + "x" +
                                std::to_string(image_height) + ", scale " + std::to_string(scale_x) + " x " +
                                std::to_string(scale_y));
  const std::size_t n = static_cast<std::size_t>(map_width) * static_cast<std::size_t>(map_height);
  // 0: background, 1: text not yet visited, 2: visited.
  std::vector<unsigned char> mark(n);
  for (std::size_t i = 0; i < n; ++i) mark[i] = prob[i] > params.thresh ? 1 : 0;

  std::vector<text_box> boxes;
  std::vector<std::size_t> stack;
  std::vector<std::pair<int, int>> pixels; // (y, x) of one region
  int regions = 0;
  const double sx = 1 / scale_x, sy = 1 / scale_y;
  for (std::size_t start = 0; start < n && regions < params.max_candidates; ++start) {
    if (mark[start] != 1) continue;
    ++regions;
    // One 8-connected region (the pixels findContours would trace one outer border around).
    pixels.clear();
    stack.assign(1, start);
    mark[start] = 2;
    while (!stack.empty()) {
      const std::size_t i = stack.back();
      stack.pop_back();
      const int x = static_cast<int>(i % map_width), y = static_cast<int>(i / map_width);
      pixels.emplace_back(y, x);
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int nx = x + dx, ny = y + dy;
          if (nx < 0 || ny < 0 || nx >= map_width || ny >= map_height) continue;
          const std::size_t j = static_cast<std::size_t>(ny) * map_width + nx;
          if (mark[j] == 1) mark[j] = 2, stack.push_back(j);
        }
    }
    // The hull needs only each row's leftmost and rightmost pixel.
    std::sort(pixels.begin(), pixels.end());
    std::vector<point> ends;
    for (std::size_t i = 0; i < pixels.size();) {
      std::size_t j = i;
      while (j + 1 < pixels.size() && pixels[j + 1].first == pixels[i].first) ++j;
      ends.push_back({static_cast<float>(pixels[i].second), static_cast<float>(pixels[i].first)});
      ends.push_back({static_cast<float>(pixels[j].second), static_cast<float>(pixels[j].first)});
      i = j + 1;
    }
    float side = 0;
    const std::array<point, 4> box = min_area_box(std::move(ends), side);
    if (side < static_cast<float>(params.min_size)) continue;
    const float score = box_score(prob, map_width, map_height, box);
    if (score < params.box_thresh) continue;
    // Unclip: grow by area * ratio / perimeter.
    const double w = norm(to_vec(box[1]) - to_vec(box[0])), h = norm(to_vec(box[3]) - to_vec(box[0]));
    const double d = w * h * params.unclip_ratio / (2 * (w + h));
    if (std::min(w, h) + 2 * d < params.min_size + 2) continue;
    std::array<point, 4> big = grow(box, d);
    // To the image's coordinates, rounded as PaddleOCR does; ordered before clipping, so the
    // order is that of the rectangle.
    for (point& p : big) {
      p[0] = static_cast<float>(std::round(p[0] * sx));
      p[1] = static_cast<float>(std::round(p[1] * sy));
    }
    big = order_corners(big);
    for (point& p : big) {
      p[0] = std::clamp(p[0], 0.0f, static_cast<float>(image_width - 1));
      p[1] = std::clamp(p[1], 0.0f, static_cast<float>(image_height - 1));
    }
    // PaddleOCR's filter_tag_det_res: a box 3 px wide or high or less is dropped.
    if (static_cast<int>(norm(to_vec(big[0]) - to_vec(big[1]))) <= 3 ||
        static_cast<int>(norm(to_vec(big[0]) - to_vec(big[3]))) <= 3)
      continue;
    boxes.push_back({big, score});
  }
  sort_boxes(boxes);
  return boxes;
}

void sort_boxes(std::vector<text_box>& boxes) {
  std::stable_sort(boxes.begin(), boxes.end(), [](const text_box& a, const text_box& b) {
    return a.points[0][1] < b.points[0][1] || (a.points[0][1] == b.points[0][1] && a.points[0][0] < b.points[0][0]);
  });
  // One bubbling pass as sorted_boxes: a box whose top is within 10 px of its predecessor's
  // and which lies to its left moves up.
  for (std::size_t i = 0; i + 1 < boxes.size(); ++i)
    for (std::size_t j = i + 1; j-- > 0;) {
      const point& a = boxes[j].points[0];
      const point& b = boxes[j + 1].points[0];
      if (std::abs(b[1] - a[1]) < 10 && b[0] < a[0]) std::swap(boxes[j], boxes[j + 1]);
      else break;
    }
}

} // namespace troupe::ocr
