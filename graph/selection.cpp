#include "graph/selection.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <troupe/exception.hpp>

namespace troupe::graph {

namespace {

/// long double: exact for every int64 (a double merges values above 2^53).
long double element(const Tensor& t, int64_t i) {
  switch (t.get_element_type()) {
  case element_type::f32: return t.data<float>()[i];
  case element_type::f64: return t.data<double>()[i];
  case element_type::i64: return static_cast<long double>(t.data<int64_t>()[i]);
  case element_type::i32: return t.data<int32_t>()[i];
  case element_type::i8: return t.data<int8_t>()[i];
  case element_type::u8: return t.data<uint8_t>()[i];
  default: throw Exception("Unique and NonMaxSuppression take f32, f64, i64, i32, i8 or u8, not " + to_string(t.get_element_type()));
  }
}

/// Orders slices lexicographically with every NaN equal to every other and above all numbers
/// (np.unique's equal_nan): a strict weak order even with NaNs.
struct slice_less {
  bool operator()(const std::vector<long double>& a, const std::vector<long double>& b) const {
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      const bool na = std::isnan(a[i]), nb = std::isnan(b[i]);
      if (na || nb) {
        if (na != nb) return nb; // a number before a NaN
        continue;
      }
      if (a[i] != b[i]) return a[i] < b[i];
    }
    return a.size() < b.size();
  }
};

} // namespace

axis_view::axis_view(const Tensor& x, std::optional<int64_t> axis) {
  const Shape& s = x.get_shape();
  if (!axis) {
    len = shape_size(s);
    return;
  }
  const auto a = static_cast<std::size_t>(*axis);
  len = s[a];
  for (std::size_t d = 0; d < a; ++d) outer *= s[d];
  for (std::size_t d = a + 1; d < s.size(); ++d) inner *= s[d];
}

unique_result unique_slices(const Tensor& x, std::optional<int64_t> axis, bool sorted) {
  const auto [outer, len, inner] = axis_view(x, axis);
  // Slice i: the elements at (o * len + i) * inner + k, for every o and k.
  std::vector<std::vector<long double>> slice(static_cast<std::size_t>(len));
  for (int64_t i = 0; i < len; ++i) {
    auto& v = slice[static_cast<std::size_t>(i)];
    v.reserve(static_cast<std::size_t>(outer * inner));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k) v.push_back(element(x, (o * len + i) * inner + k));
  }
  std::map<std::vector<long double>, int64_t, slice_less> first_of; // slice -> its first index
  std::vector<int64_t> order;                       // first indices, in first-occurrence order
  for (int64_t i = 0; i < len; ++i)
    if (first_of.emplace(slice[static_cast<std::size_t>(i)], i).second) order.push_back(i);
  unique_result r;
  if (sorted)
    for (const auto& [v, i] : first_of) r.first.push_back(i);
  else
    r.first = order;
  std::map<int64_t, int64_t> position; // first index -> output position
  for (std::size_t k = 0; k < r.first.size(); ++k) position[r.first[k]] = static_cast<int64_t>(k);
  r.counts.assign(r.first.size(), 0);
  for (int64_t i = 0; i < len; ++i) {
    const int64_t k = position.at(first_of.at(slice[static_cast<std::size_t>(i)]));
    r.inverse.push_back(k);
    ++r.counts[static_cast<std::size_t>(k)];
  }
  return r;
}

std::vector<std::array<int64_t, 3>> non_max_suppression(const Tensor& boxes, const Tensor& scores, int64_t max_per_class,
                                                        double iou_threshold, std::optional<double> score_threshold,
                                                        bool center_point_box) {
  const Shape& bs = boxes.get_shape();
  const Shape& ss = scores.get_shape();
  if (bs.size() != 3 || bs[2] != 4) throw Exception("boxes must be [batches, boxes, 4], not " + to_string(bs));
  if (ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    throw Exception("scores must be [batches, classes, boxes] = [" + std::to_string(bs[0]) + ", C, " + std::to_string(bs[1]) +
                    "], not " + to_string(ss));
  const int64_t batches = bs[0], n = bs[1], classes = ss[1];
  struct corners {
    double y1, x1, y2, x2;
  };
  auto box = [&](int64_t b, int64_t i) {
    const int64_t at = (b * n + i) * 4;
    const double a = element(boxes, at), c = element(boxes, at + 1), d = element(boxes, at + 2), e = element(boxes, at + 3);
    if (center_point_box) return corners{c - e / 2, a - d / 2, c + e / 2, a + d / 2};
    return corners{std::min(a, d), std::min(c, e), std::max(a, d), std::max(c, e)};
  };
  auto iou = [](const corners& p, const corners& q) {
    const double ih = std::max(0.0, std::min(p.y2, q.y2) - std::max(p.y1, q.y1));
    const double iw = std::max(0.0, std::min(p.x2, q.x2) - std::max(p.x1, q.x1));
    const double inter = ih * iw;
    const double uni = (p.y2 - p.y1) * (p.x2 - p.x1) + (q.y2 - q.y1) * (q.x2 - q.x1) - inter;
    return uni > 0 ? inter / uni : 0.0;
  };
  std::vector<std::array<int64_t, 3>> kept;
  if (max_per_class <= 0) return kept;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < n; ++i)
        if (const long double s = element(scores, (b * classes + c) * n + i);
            !std::isnan(s) && (!score_threshold || s > *score_threshold)) // a NaN score cannot be ranked
          cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t p, int64_t q) {
        return element(scores, (b * classes + c) * n + p) > element(scores, (b * classes + c) * n + q);
      });
      std::vector<corners> mine;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(mine.size()) >= max_per_class) break;
        const auto bx = box(b, i);
        if (std::any_of(mine.begin(), mine.end(), [&](const corners& k) { return iou(k, bx) > iou_threshold; })) continue;
        mine.push_back(bx);
        kept.push_back({b, c, i});
      }
    }
  return kept;
}

} // namespace troupe::graph
