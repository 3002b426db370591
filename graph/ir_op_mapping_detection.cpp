/// IR mappings of the detection heads. SSD's PriorBox, PriorBoxClustered and DetectionOutput
/// become the same ops in troupe's graph, in OpenVINO's domain (graph/op_domain.hpp), with the
/// <data> attributes parsed once (graph/detection.hpp reads them). PriorBox's inputs are
/// usually shapes of static feature maps: the op is then folded to a constant at compile time.
/// YOLO's RegionYolo is elementwise work on slices of its channels: ONNX ops any device runs.
/// Faster R-CNN's ROIAlign (3, 9) is ONNX's RoiAlign: asymmetric is RoiAlign's output_half_pixel,
/// half_pixel its half_pixel. NonMaxSuppression (5, 9) is ONNX's with its extra outputs built
/// from ONNX ops.
#include <cmath>
#include <limits>

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

/// RegionYolo-0: x is [N, R * (coords + 1 + classes), H, W], R boxes per cell, each as
/// coords box entries, an objectness and class scores. YOLOv3 (do_softmax false; R = the
/// mask's size): the logistic of the box centre (entries 0, 1), the objectness and every class
/// score, the same shape out. YOLOv2 (do_softmax true; R = num): the logistic of the centre and
/// objectness, a softmax over the class scores, flattened from `axis` to `end_axis` (1 and 3).
std::vector<ValueId> region_yolo(builder& b) {
  const int64_t coords = b.i64("coords"), classes = b.i64("classes");
  const bool softmax = b.flag("do_softmax", true);
  const int64_t regions = softmax ? b.i64("num") : static_cast<int64_t>(b.ints("mask").size());
  if (coords < 2 || classes < 1 || regions < 1)
    b.fail("coords (" + std::to_string(coords) + ") must be 2 or more, classes (" + std::to_string(classes) +
           ") and the boxes per cell (" + std::to_string(regions) + ", from " + (softmax ? "num" : "mask") + ") 1 or more");
  const int64_t entries = coords + 1 + classes;
  const auto& in = b.in_port(0).shape;
  if (in.rank_known && in.rank() != 4) b.fail("the input must be [N, C, H, W], not " + in.to_string());
  if (in.rank_known && in.dims[1] >= 0 && in.dims[1] != regions * entries)
    b.fail("the input has " + std::to_string(in.dims[1]) + " channels where " + std::to_string(regions) + " boxes of " +
           std::to_string(entries) + " entries (coords + 1 + classes) make " + std::to_string(regions * entries));
  if (softmax) {
    const int64_t axis = b.i64("axis", 1), end = b.i64("end_axis", 3);
    if (axis != 1 || (end != 3 && end != -1))
      b.fail("with do_softmax, only axis 1 and end_axis 3 are supported, not " + std::to_string(axis) + " and " +
             std::to_string(end));
  }
  const ValueId x = b.input(0);
  // [N, R, entries, H * W]: the entries of a box are a dimension to slice along.
  const ValueId boxes = b.op("Reshape", {x, b.i64s({0, regions, entries, -1})});
  auto part = [&](int64_t from, int64_t to) { return b.op("Slice", {boxes, b.i64s({from}), b.i64s({to}), b.i64s({2})}); };
  std::vector<ValueId> parts{b.op("Sigmoid", {part(0, 2)})};
  if (coords > 2) parts.push_back(part(2, coords));
  if (softmax) {
    parts.push_back(b.op("Sigmoid", {part(coords, coords + 1)}));
    parts.push_back(b.op("Softmax", {part(coords + 1, entries)}, {{"axis", int64_t{2}}}));
  } else {
    parts.push_back(b.op("Sigmoid", {part(coords, entries)}));
  }
  const ValueId joined = b.op("Concat", parts, {{"axis", int64_t{2}}});
  if (softmax) return {b.op("Flatten", {joined}, {{"axis", int64_t{1}}})};
  return {b.op("Reshape", {joined, in.is_static() ? b.i64s(in.dims) : b.op("Shape", {x})})};
}

std::vector<std::string> v(std::initializer_list<const char*> s) { return {s.begin(), s.end()}; }

} // namespace

/// ROIAlign-3/9 as RoiAlign (opset 16 attributes). Max mode is refused: OpenVINO takes the max of
/// the bilinear samples, ONNX's RoiAlign the max of their weighted corners.
std::vector<ValueId> roi_align(builder& b) {
  const std::string mode = b.str("mode");
  if (mode != "avg") b.fail("mode '" + mode + "' is not mapped (avg is: ONNX's RoiAlign computes max differently)");
  const std::string aligned = b.str("aligned_mode", "asymmetric");
  std::string ctm;
  if (aligned == "asymmetric") ctm = "output_half_pixel";
  else if (aligned == "half_pixel") ctm = "half_pixel";
  else b.fail("aligned_mode '" + aligned + "' has no RoiAlign counterpart (asymmetric and half_pixel do)");
  attrs a{{"mode", mode},
          {"coordinate_transformation_mode", ctm},
          {"output_height", b.i64("pooled_h")},
          {"output_width", b.i64("pooled_w")},
          {"sampling_ratio", b.i64("sampling_ratio")},
          {"spatial_scale", static_cast<float>(b.f64("spatial_scale"))}};
  ValueId indices = b.input(2);
  if (b.in_type(2) != element_type::i64) indices = b.op("Cast", {indices}, {{"to", static_cast<int64_t>(element_type::i64)}});
  return {b.op("RoiAlign", {b.input(0), b.input(1), indices}, a)};
}

namespace {

/// NonMaxSuppression-5/9 as ONNX's NonMaxSuppression and what ONNX's lacks: the kept boxes'
/// scores (GatherND) as [batch, class, score] rows, their count, and the sort of all kept boxes
/// by score across batches and classes (a stable TopK: equal scores keep ONNX's order).
/// OpenVINO keeps a score >= score_threshold where ONNX keeps one above it: the threshold
/// becomes the float just below, so it must be known when the model is read. Soft-NMS
/// (soft_nms_sigma != 0) is refused by name.
std::vector<ValueId> non_max_suppression(builder& b) {
  const std::size_t n_in = b.inputs(), n_out = b.l.outputs.size();
  if (n_in < 2 || n_in > 6) b.fail("takes 2 to 6 inputs, not " + std::to_string(n_in));
  if (n_out < 1 || n_out > 3) b.fail("has 1 to 3 outputs, not " + std::to_string(n_out));
  const std::string encoding = b.str("box_encoding", "corner");
  if (encoding != "corner" && encoding != "center") b.fail("box_encoding '" + encoding + "' is neither corner nor center");
  const std::string out_type = b.str("output_type", "i64");
  if (out_type != "i64" && out_type != "i32") b.fail("output_type '" + out_type + "' is neither i64 nor i32");
  /// Input i's one value, known when the model is read (def when the input is absent).
  auto known_one = [&](std::size_t i, const char* what, double def) -> std::optional<double> {
    if (i >= n_in) return def;
    auto k = b.known_values(i);
    if (!k) return std::nullopt;
    if (k->first.size() != 1) b.fail(std::string(what) + " has " + std::to_string(k->first.size()) + " values, not one");
    return k->first[0];
  };
  if (auto sigma = known_one(5, "soft_nms_sigma", 0); !sigma || *sigma != 0)
    b.fail("soft_nms_sigma " + (sigma ? std::to_string(*sigma) : std::string("computed at run time")) +
           ": Soft-NMS is not mapped (hard NMS, sigma 0, is)");
  // ONNX takes max_output_boxes_per_class and iou_threshold as one-element 1-D tensors.
  auto one = [&](std::size_t i, const char* what, element_type t, double def) -> ValueId {
    if (auto k = known_one(i, what, def)) return b.constant(builder::make_tensor({*k}, t, Shape{1}));
    ValueId v = b.input(i);
    if (b.in_type(i) != t) v = b.op("Cast", {v}, {{"to", static_cast<int64_t>(t)}});
    return b.op("Reshape", {v, b.i64s({1})});
  };
  const ValueId max_out = one(2, "max_output_boxes_per_class", element_type::i64, 0);
  const ValueId iou = one(3, "iou_threshold", element_type::f32, 0);
  const auto threshold = known_one(4, "score_threshold", 0);
  if (!threshold) b.fail("score_threshold is computed at run time; troupe maps it only when the model gives it");
  const float below = std::nextafter(static_cast<float>(*threshold), -std::numeric_limits<float>::infinity());
  const ValueId score_threshold = b.constant(builder::make_tensor({below}, element_type::f32, Shape{1}));
  const ValueId scores = b.input(1);
  ValueId kept = b.op("NonMaxSuppression", {b.input(0), scores, max_out, iou, score_threshold},
                      {{"center_point_box", int64_t{encoding == "center"}}});
  ValueId kept_scores = b.op("GatherND", {scores, kept});
  if (b.flag("sort_result_descending", true)) {
    auto sorted = b.op_n("TopK", {kept_scores, b.op("Shape", {kept_scores})},
                         {{"axis", int64_t{0}}, {"largest", int64_t{1}}, {"sorted", int64_t{1}}}, 2);
    kept = b.op("Gather", {kept, sorted[1]}, {{"axis", int64_t{0}}});
    kept_scores = sorted[0];
  }
  auto as_out_type = [&](ValueId v) {
    return out_type == "i64" ? v : b.op("Cast", {v}, {{"to", static_cast<int64_t>(element_type::i32)}});
  };
  std::vector<ValueId> out{as_out_type(kept)};
  if (n_out > 1) {
    const ValueId batch_class = b.op("Cast", {b.op("Slice", {kept, b.i64s({0}), b.i64s({2}), b.i64s({1})})},
                                     {{"to", static_cast<int64_t>(b.in_type(1))}});
    out.push_back(b.op("Concat", {batch_class, b.op("Unsqueeze", {kept_scores, b.i64s({1})})}, {{"axis", int64_t{1}}}));
  }
  if (n_out > 2) out.push_back(as_out_type(b.op("Shape", {kept}, {{"end", int64_t{1}}})));
  return out;
}

} // namespace

void add_detection_ops(op_table& t) {
  t["NonMaxSuppression"].push_back({v({"opset5", "opset9"}), non_max_suppression});
  t["PriorBox"].push_back({v({"opset1", "opset8"}), prior_box});
  t["PriorBoxClustered"].push_back({v({"opset1"}), prior_box_clustered});
  t["DetectionOutput"].push_back({v({"opset1", "opset8"}), detection_output});
  t["RegionYolo"].push_back({v({"opset1"}), region_yolo});
  t["ROIAlign"].push_back({v({"opset3", "opset9"}), roi_align});
}

} // namespace troupe::graph::ir
