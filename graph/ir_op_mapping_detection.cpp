/// IR mappings of the SSD detection heads: PriorBox, PriorBoxClustered and DetectionOutput
/// become the same ops in troupe's graph, in OpenVINO's domain (graph/op_domain.hpp), with the
/// <data> attributes parsed once (graph/detection.hpp reads them). PriorBox's inputs are
/// usually shapes of static feature maps: the op is then folded to a constant at compile time.
#include "graph/ir_op_mapping.hpp"
#include "graph/op_domain.hpp"

namespace troupe::graph::ir {

namespace {

using attrs = std::map<std::string, AttributeValue>;

/// One op of OpenVINO's domain with the layer's inputs.
std::vector<ValueId> openvino_op(builder& b, const std::string& type, attrs a) {
  std::vector<ValueId> in;
  for (std::size_t i = 0; i < b.inputs(); ++i) in.push_back(b.input(i));
  return b.op_n(type, std::move(in), std::move(a), 1, std::string(openvino_domain));
}

void copy_floats(const builder& b, attrs& a, std::initializer_list<const char*> keys) {
  for (const char* k : keys) a[k] = b.floats(k);
}

std::vector<ValueId> prior_box(builder& b) {
  if (b.inputs() != 2) b.fail("takes 2 inputs (the feature map's and the image's sizes), not " + std::to_string(b.inputs()));
  attrs a;
  copy_floats(b, a, {"min_size", "max_size", "aspect_ratio", "density", "fixed_ratio", "fixed_size", "variance"});
  a["flip"] = int64_t{b.flag("flip", false)};
  a["clip"] = int64_t{b.flag("clip", false)};
  a["scale_all_sizes"] = int64_t{b.flag("scale_all_sizes", true)};
  a["min_max_aspect_ratios_order"] = int64_t{b.flag("min_max_aspect_ratios_order", true)};
  a["step"] = static_cast<float>(b.f64("step", 0));
  a["offset"] = static_cast<float>(b.f64("offset"));
  return openvino_op(b, "PriorBox", std::move(a));
}

std::vector<ValueId> prior_box_clustered(builder& b) {
  if (b.inputs() != 2) b.fail("takes 2 inputs (the feature map's and the image's sizes), not " + std::to_string(b.inputs()));
  attrs a;
  copy_floats(b, a, {"width", "height", "variance"});
  a["clip"] = int64_t{b.flag("clip", true)};
  for (const char* k : {"step", "step_w", "step_h"}) a[k] = static_cast<float>(b.f64(k, 0));
  a["offset"] = static_cast<float>(b.f64("offset"));
  return openvino_op(b, "PriorBoxClustered", std::move(a));
}

std::vector<ValueId> detection_output(builder& b) {
  if (b.inputs() != 3 && b.inputs() != 5) b.fail("takes 3 or 5 inputs, not " + std::to_string(b.inputs()));
  attrs a;
  if (b.l.version == "opset1") a["num_classes"] = b.i64("num_classes");
  for (const char* k : {"background_label_id", "top_k", "input_height", "input_width"})
    a[k] = b.i64(k, std::string(k) == "top_k" ? -1 : std::string(k) == "background_label_id" ? 0 : 1);
  a["keep_top_k"] = b.ints_required("keep_top_k");
  a["code_type"] = b.str("code_type", "caffe.PriorBoxParameter.CORNER");
  for (const char* k : {"variance_encoded_in_target", "clip_after_nms", "clip_before_nms", "decrease_label_id", "normalized"})
    a[k] = int64_t{b.flag(k, false)};
  a["share_location"] = int64_t{b.flag("share_location", true)};
  for (const char* k : {"nms_threshold", "confidence_threshold", "objectness_score"})
    a[k] = static_cast<float>(b.f64(k, 0));
  if (!b.has("nms_threshold")) b.fail("attribute 'nms_threshold' is required");
  return openvino_op(b, "DetectionOutput", std::move(a));
}

std::vector<std::string> v(std::initializer_list<const char*> s) { return {s.begin(), s.end()}; }

} // namespace

void add_detection_ops(op_table& t) {
  t["PriorBox"].push_back({v({"opset1", "opset8"}), prior_box});
  t["PriorBoxClustered"].push_back({v({"opset1"}), prior_box_clustered});
  t["DetectionOutput"].push_back({v({"opset1", "opset8"}), detection_output});
}

} // namespace troupe::graph::ir
