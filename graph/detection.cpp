#include "graph/detection.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <troupe/exception.hpp>

namespace troupe::graph {

namespace {

/// Errors here say what is wrong; the shape rule or kernel that catches them names the op.
[[noreturn]] void bad(const std::string& why) { throw Exception(why); }

bool flag(const Op& op, const std::string& k, bool def) { return op.attr_int(k, def ? 1 : 0) != 0; }

void check_variance(const std::vector<float>& v) {
  if (v.size() != 0 && v.size() != 1 && v.size() != 4)
    bad("variance must hold 0, 1 or 4 values, not " + std::to_string(v.size()));
}

/// The second half of a PriorBox output: each box's four variances (0.1 when none are given).
void fill_variances(std::vector<float>& out, std::size_t half, const std::vector<float>& variance) {
  for (std::size_t i = 0; i < half; ++i)
    out[half + i] = variance.empty() ? 0.1f : variance.size() == 1 ? variance[0] : variance[i % 4];
}

constexpr int64_t max_prior_elements = int64_t{1} << 28; ///< 1 GiB of floats: a forged size is refused

void check_map(int64_t h, int64_t w, int64_t ih, int64_t iw, int64_t per_cell) {
  prior_row_length(h, w, per_cell);
  if (ih <= 0 || iw <= 0) bad("the image's size must be positive, not " + std::to_string(ih) + "x" + std::to_string(iw));
}

} // namespace

namespace {
/// a * b of non-negative sizes, failing past 2^40 (the largest dimension a model may have)
/// before it could overflow.
int64_t bounded(int64_t a, int64_t b) {
  if (a < 0 || b < 0 || (b != 0 && a > max_dim / b))
    bad("sizes " + std::to_string(a) + " x " + std::to_string(b) + " pass the bound of " + std::to_string(max_dim));
  return a * b;
}
} // namespace

int64_t prior_row_length(int64_t h, int64_t w, int64_t per_cell) {
  const std::string map = std::to_string(h) + "x" + std::to_string(w);
  if (h < 0 || w < 0) bad("the feature map's size must not be negative, not " + map);
  // Each factor bounded before any product (2^28 * 2^28 fits in 64 bits), then the whole.
  if (h > max_prior_elements || w > max_prior_elements || per_cell > max_prior_elements ||
      (h * w > 0 && per_cell > max_prior_elements / 8 / (h * w)) || h * w > max_prior_elements)
    bad("a " + map + " feature map with " + std::to_string(per_cell) + " boxes per cell passes the bound of " +
        std::to_string(max_prior_elements) + " elements");
  return 4 * h * w * per_cell;
}

prior_box_params::prior_box_params(const Op& op)
    : min_size(op.attr_floats("min_size")), max_size(op.attr_floats("max_size")),
      aspect_ratio(op.attr_floats("aspect_ratio")), density(op.attr_floats("density")),
      fixed_ratio(op.attr_floats("fixed_ratio")), fixed_size(op.attr_floats("fixed_size")),
      variance(op.attr_floats("variance")), flip(flag(op, "flip", false)), clip(flag(op, "clip", false)),
      scale_all_sizes(flag(op, "scale_all_sizes", true)),
      min_max_aspect_ratios_order(flag(op, "min_max_aspect_ratios_order", true)), step(op.attr_float("step", 0)),
      offset(op.attr_float("offset", 0)) {
  check_variance(variance);
  for (float r : aspect_ratio)
    if (!(r > 0)) bad("aspect_ratio values must be positive");
  for (float s : min_size)
    if (!(s > 0)) bad("min_size values must be positive");
  if (!fixed_size.empty() && density.size() != fixed_size.size())
    bad("density must hold one value per fixed_size (" + std::to_string(fixed_size.size()) + "), not " +
        std::to_string(density.size()));
  for (std::size_t s = 0; s < fixed_size.size(); ++s)
    if (!(density[s] >= 1) || !(fixed_size[s] >= density[s]) || density[s] > 64)
      bad("density " + std::to_string(density[s]) + " must be 1..64 and at most its fixed_size " +
          std::to_string(fixed_size[s]));
  if (min_size.size() > 64 || aspect_ratio.size() > 64 || fixed_size.size() > 64 || fixed_ratio.size() > 64)
    bad("more than 64 sizes or ratios");
}

std::vector<float> prior_box_params::ratios() const {
  std::vector<float> r{1.0f};
  for (float a : aspect_ratio) {
    const bool seen = std::any_of(r.begin(), r.end(), [&](float e) { return std::fabs(a - e) < 1e-6f; });
    if (seen) continue;
    r.push_back(a);
    if (flip) r.push_back(1.0f / a);
  }
  return r;
}

namespace {

/// Emits the boxes of one cell centred at (cx, cy) through `put(cx, cy, half_w, half_h, clip)`,
/// in OpenVINO's order: the fixed sizes (each over its density grid), then per min size its
/// square, sqrt(min*max)'s square and the other ratios (or the ratios before the max square).
template <class Put>
void cell_boxes(const prior_box_params& p, const std::vector<float>& ratios, const std::vector<float>& min_size,
                float cx, float cy, Put&& put) {
  for (std::size_t s = 0; s < p.fixed_size.size(); ++s) {
    const float size = p.fixed_size[s];
    const auto dens = static_cast<int64_t>(p.density[s]);
    const auto shift = static_cast<int64_t>(size / static_cast<float>(dens));
    const auto whole = static_cast<int64_t>(size); // the grid's corner uses the whole size
    auto grid = [&](float hw, float hh) {
      for (int64_t r = 0; r < dens; ++r)
        for (int64_t c = 0; c < dens; ++c)
          put(cx - static_cast<float>(whole / 2) + static_cast<float>(shift) / 2.f + static_cast<float>(c * shift),
              cy - static_cast<float>(whole / 2) + static_cast<float>(shift) / 2.f + static_cast<float>(r * shift), hw,
              hh, true);
    };
    if (!p.fixed_ratio.empty()) {
      for (float fr : p.fixed_ratio) {
        const float ar = std::sqrt(fr);
        grid(size * 0.5f * ar, size * 0.5f / ar);
      }
      continue;
    }
    if (!p.density.empty()) grid(static_cast<float>(whole) * 0.5f, static_cast<float>(whole) * 0.5f);
    for (float a : ratios) {
      if (std::fabs(a - 1.0f) < 1e-6f) continue;
      const float ar = std::sqrt(a);
      grid(size * 0.5f * ar, size * 0.5f / ar);
    }
  }
  for (std::size_t m = 0; m < min_size.size(); ++m) {
    const float half = min_size[m] * 0.5f;
    put(cx, cy, half, half, false);
    auto max_square = [&] {
      if (m < p.max_size.size()) {
        const float h = std::sqrt(min_size[m] * p.max_size[m]) * 0.5f;
        put(cx, cy, h, h, false);
      }
    };
    auto other_ratios = [&] {
      if (!p.scale_all_sizes && m + 1 != min_size.size()) return;
      const float base = min_size[p.scale_all_sizes ? m : 0];
      for (float a : ratios) {
        if (std::fabs(a - 1.0f) < 1e-6f) continue;
        const float ar = std::sqrt(a);
        put(cx, cy, base * 0.5f * ar, base * 0.5f / ar, false);
      }
    };
    if (p.min_max_aspect_ratios_order) {
      max_square();
      other_ratios();
    } else {
      other_ratios();
      max_square();
    }
  }
}

} // namespace

int64_t prior_box_params::priors_per_cell() const {
  int64_t n = 0;
  cell_boxes(*this, ratios(), min_size, 0, 0, [&](float, float, float, float, bool) { ++n; });
  return n;
}

std::vector<float> prior_box(const prior_box_params& p, int64_t h, int64_t w, int64_t ih, int64_t iw) {
  const int64_t per_cell = p.priors_per_cell();
  check_map(h, w, ih, iw, per_cell);
  const auto half = static_cast<std::size_t>(4 * h * w * per_cell);
  std::vector<float> out(2 * half);
  float step = p.step;
  std::vector<float> min_size = p.min_size;
  if (!p.scale_all_sizes) { // MXNet's form: sizes and step as fractions of the image height
    step = step == -1 ? static_cast<float>(ih) / static_cast<float>(h) : step * static_cast<float>(ih);
    for (auto& s : min_size) s *= static_cast<float>(ih);
  }
  const float inv_w = 1.0f / static_cast<float>(iw), inv_h = 1.0f / static_cast<float>(ih);
  std::size_t k = 0;
  auto put = [&](float cx, float cy, float hw, float hh, bool clip_box) {
    float v[4] = {(cx - hw) * inv_w, (cy - hh) * inv_h, (cx + hw) * inv_w, (cy + hh) * inv_h};
    if (clip_box) {
      v[0] = std::max(v[0], 0.0f);
      v[1] = std::max(v[1], 0.0f);
      v[2] = std::min(v[2], 1.0f);
      v[3] = std::min(v[3], 1.0f);
    }
    for (float x : v) out[k++] = x;
  };
  const auto ratios = p.ratios();
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      float cx, cy;
      if (step == 0) { // the cell's centre, the image split evenly over the map
        cx = (static_cast<float>(x) + 0.5f) * (static_cast<float>(iw) / static_cast<float>(w));
        cy = (static_cast<float>(y) + 0.5f) * (static_cast<float>(ih) / static_cast<float>(h));
      } else {
        cx = (p.offset + static_cast<float>(x)) * step;
        cy = (p.offset + static_cast<float>(y)) * step;
      }
      cell_boxes(p, ratios, min_size, cx, cy, put);
    }
  if (p.clip)
    for (std::size_t i = 0; i < half; ++i) out[i] = std::clamp(out[i], 0.0f, 1.0f);
  fill_variances(out, half, p.variance);
  return out;
}

prior_box_clustered_params::prior_box_clustered_params(const Op& op)
    : width(op.attr_floats("width")), height(op.attr_floats("height")), variance(op.attr_floats("variance")),
      clip(flag(op, "clip", true)), step(op.attr_float("step", 0)), step_w(op.attr_float("step_w", 0)),
      step_h(op.attr_float("step_h", 0)), offset(op.attr_float("offset", 0.5f)) {
  check_variance(variance);
  if (width.size() != height.size())
    bad("width and height must hold as many values (" + std::to_string(width.size()) + " and " +
        std::to_string(height.size()) + ")");
  if (width.size() > 1024) bad("more than 1024 boxes per cell");
}

std::vector<float> prior_box_clustered(const prior_box_clustered_params& p, int64_t h, int64_t w, int64_t ih,
                                       int64_t iw) {
  const auto per_cell = static_cast<int64_t>(p.width.size());
  check_map(h, w, ih, iw, per_cell);
  const auto half = static_cast<std::size_t>(4 * h * w * per_cell);
  std::vector<float> out(2 * half);
  float sw = p.step_w == 0 ? p.step : p.step_w, sh = p.step_h == 0 ? p.step : p.step_h;
  if (sw == 0 && sh == 0) {
    sw = static_cast<float>(iw) / static_cast<float>(w);
    sh = static_cast<float>(ih) / static_cast<float>(h);
  }
  std::size_t k = 0;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const float cx = (static_cast<float>(x) + p.offset) * sw, cy = (static_cast<float>(y) + p.offset) * sh;
      for (std::size_t s = 0; s < p.width.size(); ++s) {
        float v[4] = {(cx - p.width[s] / 2.0f) / static_cast<float>(iw), (cy - p.height[s] / 2.0f) / static_cast<float>(ih),
                      (cx + p.width[s] / 2.0f) / static_cast<float>(iw), (cy + p.height[s] / 2.0f) / static_cast<float>(ih)};
        for (float e : v) out[k++] = p.clip ? std::clamp(e, 0.0f, 1.0f) : e;
      }
    }
  fill_variances(out, half, p.variance);
  return out;
}

detection_output_params::detection_output_params(const Op& op)
    : num_classes(op.attr_int("num_classes", -1)), background_label_id(op.attr_int("background_label_id", 0)),
      top_k(op.attr_int("top_k", -1)), input_height(op.attr_int("input_height", 1)),
      input_width(op.attr_int("input_width", 1)), variance_encoded_in_target(flag(op, "variance_encoded_in_target", false)),
      share_location(flag(op, "share_location", true)), clip_after_nms(flag(op, "clip_after_nms", false)),
      clip_before_nms(flag(op, "clip_before_nms", false)), decrease_label_id(flag(op, "decrease_label_id", false)),
      normalized(flag(op, "normalized", false)), nms_threshold(op.attr_float("nms_threshold", 0)),
      confidence_threshold(op.attr_float("confidence_threshold", 0)),
      objectness_score(op.attr_float("objectness_score", 0)) {
  // A list in IR (one value per batch, of which OpenVINO reads the first); one int in ONNX files.
  const auto at = op.attrs.find("keep_top_k");
  const auto keep = at != op.attrs.end() && std::holds_alternative<int64_t>(at->second)
                        ? std::vector<int64_t>{std::get<int64_t>(at->second)}
                        : op.attr_ints("keep_top_k", {-1});
  if (keep.empty()) bad("keep_top_k must hold a value");
  keep_top_k = keep[0];
  const std::string code = op.attr_string("code_type", "caffe.PriorBoxParameter.CORNER");
  if (code == "caffe.PriorBoxParameter.CENTER_SIZE") center_size = true;
  else if (code != "caffe.PriorBoxParameter.CORNER")
    bad("code_type '" + code + "' is not caffe.PriorBoxParameter.CORNER or caffe.PriorBoxParameter.CENTER_SIZE");
  if (!normalized && (input_height <= 0 || input_width <= 0))
    bad("input_height and input_width must be positive when the boxes are not normalized");
  if (top_k < -1 || keep_top_k < -1 || top_k > (int64_t{1} << 24) || keep_top_k > (int64_t{1} << 24))
    bad("top_k and keep_top_k must be -1 .. 2^24");
}

detection_output_sizes::detection_output_sizes(const detection_output_params& p,
                                               const std::vector<std::vector<int64_t>>& shapes) {
  if (shapes.size() != 3 && shapes.size() != 5) bad("takes 3 or 5 inputs, not " + std::to_string(shapes.size()));
  const auto& loc = shapes[0];
  const auto& conf = shapes[1];
  const auto& pri = shapes[2];
  auto dims = [](const std::vector<int64_t>& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) r.append(i ? "," : "").append(std::to_string(s[i]));
    return r.append("]");
  };
  if (loc.size() != 2 || conf.size() != 2 || pri.size() != 3)
    bad("box offsets and class scores must be 2-D and priors 3-D, not " + dims(loc) + ", " + dims(conf) + ", " + dims(pri));
  const int64_t prior_size = p.normalized ? 4 : 5;
  images = loc[0];
  prior_batches = pri[0];
  prior_rows = pri[1];
  if (pri[2] % prior_size != 0) bad("the priors' last dim " + std::to_string(pri[2]) + " is not a multiple of " + std::to_string(prior_size));
  priors = pri[2] / prior_size;
  if (priors <= 0) bad("there are no priors");
  if (pri[1] != (p.variance_encoded_in_target ? 1 : 2) && pri[1] != 2)
    bad("the priors' second dim must be 2 (boxes and variances)" + std::string(p.variance_encoded_in_target ? " or 1" : "") +
        ", not " + std::to_string(pri[1]));
  if (prior_batches != 1 && prior_batches != images)
    bad("the priors' batch " + std::to_string(prior_batches) + " is neither 1 nor the images' " + std::to_string(images));
  if (conf[0] != images) bad("class scores for " + std::to_string(conf[0]) + " images, box offsets for " + std::to_string(images));
  if (conf[1] % priors != 0)
    bad("class scores " + dims(conf) + " are not a whole number of classes for " + std::to_string(priors) + " priors");
  classes = conf[1] / priors;
  if (p.num_classes >= 0 && p.num_classes != classes)
    bad("num_classes is " + std::to_string(p.num_classes) + " but the class scores hold " + std::to_string(classes));
  loc_classes = p.share_location ? 1 : classes;
  if (loc[1] != bounded(bounded(priors, loc_classes), 4))
    bad("box offsets " + dims(loc) + " must be [N, " + std::to_string(priors * loc_classes * 4) + "] for " +
        std::to_string(priors) + " priors");
  if (shapes.size() == 5) {
    if (shapes[3] != std::vector<int64_t>{images, priors * 2})
      bad("the ARM objectness " + dims(shapes[3]) + " must be [" + std::to_string(images) + ", " + std::to_string(priors * 2) + "]");
    if (shapes[4] != loc) bad("the ARM box offsets " + dims(shapes[4]) + " must be shaped as the box offsets " + dims(loc));
  }
  if (p.keep_top_k > 0) rows = bounded(images, p.keep_top_k);
  else if (p.top_k > 0) rows = bounded(bounded(images, p.top_k), classes);
  else rows = bounded(bounded(images, priors), classes);
  if (rows > max_prior_elements / 7)
    bad(std::to_string(rows) + " rows of detections pass the bound of " + std::to_string(max_prior_elements) + " elements");
}

namespace {

struct box {
  float xmin = 0, ymin = 0, xmax = 0, ymax = 0;
};

float area(const box& b) { return b.xmax < b.xmin || b.ymax < b.ymin ? 0.0f : (b.xmax - b.xmin) * (b.ymax - b.ymin); }

float iou(const box& a, const box& b) {
  if (b.xmin > a.xmax || b.xmax < a.xmin || b.ymin > a.ymax || b.ymax < a.ymin) return 0;
  const float w = std::min(a.xmax, b.xmax) - std::max(a.xmin, b.xmin);
  const float h = std::min(a.ymax, b.ymax) - std::max(a.ymin, b.ymin);
  if (!(w > 0 && h > 0)) return 0;
  const float inter = w * h;
  return inter / (area(a) + area(b) - inter);
}

box clipped(box b) {
  b.xmin = std::clamp(b.xmin, 0.0f, 1.0f);
  b.ymin = std::clamp(b.ymin, 0.0f, 1.0f);
  b.xmax = std::clamp(b.xmax, 0.0f, 1.0f);
  b.ymax = std::clamp(b.ymax, 0.0f, 1.0f);
  return b;
}

/// One prior (and its variances, null when encoded in the target) moved by offsets `d`.
box decode(const detection_output_params& p, box prior, const float* var, const float* d) {
  if (!p.normalized) {
    const auto w = static_cast<float>(p.input_width), h = static_cast<float>(p.input_height);
    prior = {prior.xmin / w, prior.ymin / h, prior.xmax / w, prior.ymax / h};
  }
  const float v[4] = {var ? var[0] : 1.0f, var ? var[1] : 1.0f, var ? var[2] : 1.0f, var ? var[3] : 1.0f};
  box b;
  if (!p.center_size) {
    b = {prior.xmin + v[0] * d[0], prior.ymin + v[1] * d[1], prior.xmax + v[2] * d[2], prior.ymax + v[3] * d[3]};
  } else {
    const float pw = prior.xmax - prior.xmin, ph = prior.ymax - prior.ymin;
    const float pcx = (prior.xmin + prior.xmax) / 2, pcy = (prior.ymin + prior.ymax) / 2;
    const float cx = v[0] * d[0] * pw + pcx, cy = v[1] * d[1] * ph + pcy;
    const float w = std::exp(v[2] * d[2]) * pw, h = std::exp(v[3] * d[3]) * ph;
    b = {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
  }
  return p.clip_before_nms ? clipped(b) : b;
}

using scored = std::pair<float, int64_t>; ///< score, prior

/// Higher score first; equal scores: the lower index first.
bool before(const scored& a, const scored& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); }

} // namespace

std::vector<float> detection_output(const detection_output_params& p, const detection_output_sizes& s, const float* loc,
                                    const float* conf, const float* priors, const float* arm_conf, const float* arm_loc) {
  std::vector<float> out(static_cast<std::size_t>(s.rows * 7), 0.0f);
  const int64_t prior_size = p.normalized ? 4 : 5, prior_offset = p.normalized ? 0 : 1;
  const int64_t prior_stride = s.prior_rows * s.priors * prior_size;
  int64_t count = 0;
  for (int64_t n = 0; n < s.images; ++n) {
    const float* pri = priors + (s.prior_batches == 1 ? 0 : n * prior_stride);
    const float* img_loc = loc + n * s.priors * s.loc_classes * 4;
    const float* img_arm_loc = arm_loc ? arm_loc + n * s.priors * s.loc_classes * 4 : nullptr;
    const float* img_conf = conf + n * s.priors * s.classes;
    // Scores by [class][prior]; with an ARM, a prior it finds no object in is background alone.
    std::vector<float> score(static_cast<std::size_t>(s.classes * s.priors));
    for (int64_t q = 0; q < s.priors; ++q)
      for (int64_t c = 0; c < s.classes; ++c) {
        float v = img_conf[q * s.classes + c];
        if (arm_conf && arm_conf[n * s.priors * 2 + q * 2 + 1] < p.objectness_score)
          v = c == p.background_label_id ? 1.0f : 0.0f;
        score[static_cast<std::size_t>(c * s.priors + q)] = v;
      }
    auto score_of = [&](int64_t c, int64_t q) { return score[static_cast<std::size_t>(c * s.priors + q)]; };
    // Decoded boxes by [loc class][prior] (one class when the location is shared).
    std::vector<box> boxes(static_cast<std::size_t>(s.loc_classes * s.priors));
    for (int64_t l = 0; l < s.loc_classes; ++l) {
      if (!p.share_location && l == p.background_label_id) continue;
      for (int64_t q = 0; q < s.priors; ++q) {
        const float* pb = pri + q * prior_size + prior_offset;
        const float* var = p.variance_encoded_in_target ? nullptr : pri + s.priors * prior_size + q * 4;
        box prior{pb[0], pb[1], pb[2], pb[3]};
        if (img_arm_loc) prior = decode(p, prior, var, img_arm_loc + (q * s.loc_classes + l) * 4);
        boxes[static_cast<std::size_t>(l * s.priors + q)] = decode(p, prior, var, img_loc + (q * s.loc_classes + l) * 4);
      }
    }
    auto box_of = [&](int64_t c, int64_t q) -> const box& {
      return boxes[static_cast<std::size_t>((p.share_location ? 0 : c) * s.priors + q)];
    };
    // Kept priors by class, each list in the order kept.
    std::map<int64_t, std::vector<int64_t>> kept;
    auto greedy = [&](int64_t c, int64_t q) {
      auto& list = kept[c];
      for (int64_t k : list)
        if (iou(box_of(c, q), box_of(c, k)) > p.nms_threshold) return;
      list.push_back(q);
    };
    if (!p.decrease_label_id) { // Caffe: NMS per class over its top_k above the threshold
      for (int64_t c = 0; c < s.classes; ++c) {
        if (c == p.background_label_id) continue;
        std::vector<scored> cand;
        for (int64_t q = 0; q < s.priors; ++q)
          if (score_of(c, q) > p.confidence_threshold) cand.emplace_back(score_of(c, q), q);
        std::stable_sort(cand.begin(), cand.end(), before);
        if (p.top_k > -1 && static_cast<std::size_t>(p.top_k) < cand.size()) cand.resize(static_cast<std::size_t>(p.top_k));
        kept[c]; // a class with no candidate still counts as visited
        for (const auto& [sc, q] : cand) greedy(c, q);
      }
    } else { // MXNet: each prior's best class (not 0 or the background), NMS over all of them
      std::vector<std::pair<float, std::pair<int64_t, int64_t>>> cand; // score, (class, prior)
      for (int64_t q = 0; q < s.priors; ++q) {
        float best = -1;
        int64_t id = 0;
        for (int64_t c = 1; c < s.classes; ++c) {
          if (p.background_label_id > -1 && c == p.background_label_id) continue;
          if (score_of(c, q) > best) {
            best = score_of(c, q);
            id = c;
          }
        }
        if (id > 0 && best >= p.confidence_threshold) cand.push_back({best, {id, q}});
      }
      std::sort(cand.begin(), cand.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second.second < b.second.second);
      });
      if (p.top_k != -1 && cand.size() > static_cast<std::size_t>(p.top_k)) cand.resize(static_cast<std::size_t>(p.top_k));
      for (const auto& [sc, cq] : cand) greedy(cq.first, cq.second);
    }
    std::size_t found = 0;
    for (const auto& [c, list] : kept) found += list.size();
    if (p.keep_top_k > -1 && found > static_cast<std::size_t>(p.keep_top_k)) { // the best keep_top_k over all classes
      std::vector<std::pair<float, std::pair<int64_t, int64_t>>> all;
      for (const auto& [c, list] : kept)
        for (int64_t q : list) all.push_back({score_of(c, q), {c, q}});
      std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second.second < b.second.second);
      });
      all.resize(static_cast<std::size_t>(p.keep_top_k));
      kept.clear();
      for (const auto& [sc, cq] : all) kept[cq.first].push_back(cq.second);
    }
    for (const auto& [c, list] : kept)
      for (int64_t q : list) {
        if (count >= s.rows) break; // cannot happen by the row count's rule; never writes past it
        const box b = p.clip_after_nms ? clipped(box_of(c, q)) : box_of(c, q);
        float* row = &out[static_cast<std::size_t>(count * 7)];
        row[0] = static_cast<float>(n);
        row[1] = static_cast<float>(p.decrease_label_id ? c - 1 : c);
        row[2] = score_of(c, q);
        row[3] = b.xmin;
        row[4] = b.ymin;
        row[5] = b.xmax;
        row[6] = b.ymax;
        ++count;
      }
  }
  if (count < s.rows) out[static_cast<std::size_t>(count * 7)] = -1;
  return out;
}

} // namespace troupe::graph
