/// OpenVINO's detection heads (domain org.openvinotoolkit): PriorBox, PriorBoxClustered,
/// DetectionOutput. Sized by graph/detection.hpp, which the reference kernels fill by.
#include "graph/detection.hpp"
#include "graph/shape_rules.hpp"

#include <troupe/exception.hpp>

namespace troupe::graph::detail {

namespace {

/// The feature map's [H, W] (input 0) when it is known: PriorBox's output size depends on it.
std::optional<std::pair<int64_t, int64_t>> feature_map(const infer_ctx& c) {
  for (std::size_t i = 0; i < 2; ++i)
    if (c.type(i) != element_type::i32 && c.type(i) != element_type::i64)
      c.fail("input " + std::to_string(i) + " (" + (i ? "the image's size" : "the feature map's size") +
             ") must be int32 or int64, not " + to_string(c.type(i)));
  auto v = c.const_ints(0);
  if (!v) return std::nullopt;
  if (v->size() != 2) c.fail("the feature map's size must be [H, W], not " + std::to_string(v->size()) + " values");
  return std::pair{(*v)[0], (*v)[1]};
}

/// [2, 4 * H * W * per_cell] floats: the boxes, then their variances.
std::vector<value_info> priors(const infer_ctx& c, int64_t per_cell) {
  const auto hw = feature_map(c);
  if (!hw) return {{element_type::f32, PartialShape{2, -1}}};
  return {{element_type::f32, PartialShape{2, prior_row_length(hw->first, hw->second, per_cell)}}};
}

std::vector<value_info> prior_box_rule(const infer_ctx& c) {
  try {
    return priors(c, prior_box_params(c.op).priors_per_cell());
  } catch (const Exception& e) {
    c.fail(e.what());
  }
}

std::vector<value_info> prior_box_clustered_rule(const infer_ctx& c) {
  try {
    return priors(c, static_cast<int64_t>(prior_box_clustered_params(c.op).width.size()));
  } catch (const Exception& e) {
    c.fail(e.what());
  }
}

std::vector<value_info> detection_output_rule(const infer_ctx& c) {
  static const char* names[] = {"box offsets", "class scores", "priors", "ARM objectness", "ARM box offsets"};
  std::vector<std::vector<int64_t>> shapes;
  bool known = true;
  for (std::size_t i = 0; i < c.count(); ++i) {
    if (c.type(i) != element_type::f32) c.fail("input " + std::to_string(i) + " (" + names[i] + ") must be f32, not " + to_string(c.type(i)));
    known = known && c.shape(i).is_static();
    if (known) shapes.push_back(c.shape(i).dims);
  }
  if (c.count() == 4) c.fail("takes 3 or 5 inputs (the ARM's objectness and box offsets together), not 4");
  try {
    const detection_output_params p(c.op);
    if (!known) return {{element_type::f32, PartialShape{1, 1, -1, 7}}};
    return {{element_type::f32, PartialShape{1, 1, detection_output_sizes(p, shapes).rows, 7}}};
  } catch (const Exception& e) {
    c.fail(e.what());
  }
}

} // namespace

void add_detection_rules(rule_table& t) {
  t["PriorBox"] = {prior_box_rule, 2, 2};
  t["PriorBoxClustered"] = {prior_box_clustered_rule, 2, 2};
  t["DetectionOutput"] = {detection_output_rule, 3, 5};
}

} // namespace troupe::graph::detail
