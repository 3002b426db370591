/// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (shaders/loss.comp; SoftmaxCrossEntropy
/// computes its log-softmax there, and its log_prob output with shaders/softmax.comp).
#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/lowering_shapes.hpp"

namespace troupe::kernels::vulkan {

namespace {

/// A reduced loss is one workgroup looping over the targets: more than this many is left to
/// devices that split the work.
constexpr int64_t max_reduced_targets = int64_t{1} << 20;

std::string loss_attrs(const graph::Op& op) {
  const auto r = op.attr_string("reduction", "mean");
  if (r != "none" && r != "sum" && r != "mean") return "reduction '" + r + "' is not none, sum or mean";
  return "";
}

std::string loss_check(const graph::Graph& g, const graph::Op& op) {
  if (auto w = loss_attrs(op); !w.empty()) return w;
  if (g.value(op.inputs[0]).type != element_type::f32) return std::string("the shader is float32 only");
  const auto t = g.value(op.inputs[1]).type;
  if (t != element_type::i32 && t != element_type::i64) return "the target is " + to_string(t) + "; int32 or int64 only";
  if (g.is_constant(op.inputs[1]) && t == element_type::i64)
    return std::string("a constant int64 target is not uploaded (a constant is folded or stays on the CPU)");
  if (has_input(op, 2) && g.value(op.inputs[2]).type != element_type::f32) return std::string("the weight must be float32");
  for (std::size_t i = 0; i < op.outputs.size(); ++i)
    if (has_output(op, i) && g.value(op.outputs[i]).type != element_type::f32) return std::string("the outputs must be float32");
  const Shape x = shape_of(g, op.inputs[0]);
  if (x.size() < 2) return std::string("the input must have rank 2 or more (N, C, ...)");
  const int64_t targets = x[0] * dims_between(x, 2, x.size());
  if (shape_size(x) >= (int64_t{1} << 31)) return std::string("2^31 elements or more have no Vulkan shader");
  if (shape_size(shape_of(g, op.inputs[1])) != targets) return std::string("the target must hold N x d1..dk elements");
  if (has_input(op, 2) && shape_size(shape_of(g, op.inputs[2])) != x[1]) return std::string("the weight must hold C elements");
  if (op.attr_string("reduction", "mean") != "none" && targets > max_reduced_targets)
    return "a sum or mean over more than " + std::to_string(max_reduced_targets) + " targets has no Vulkan shader";
  return "";
}

void loss_lower(op_builder& b, bool softmax) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const Shape x = shape_of(g, op.inputs[0]);
  const int64_t n = x[0], c = x[1], d = dims_between(x, 2, x.size());
  if (softmax && has_output(op, 1) && n * d > 0)
    b.dispatch("softmax", {{0, u32(n)}, {1, u32(c)}, {2, u32(d)}, {3, 1u}}, {b.input(0), b.output(1)},
               static_cast<uint64_t>(n * d));
  const auto reduction = op.attr_string("reduction", "mean");
  const uint32_t mode = reduction == "none" ? 0u : reduction == "sum" ? 1u : 2u;
  if (mode == 0 && n * d == 0) return;
  const bool weighted = has_input(op, 2), ignoring = op.has_attr("ignore_index");
  const int64_t ignore = op.attr_int("ignore_index", 0);
  spec_map s{{0, u32(n)},
             {1, u32(c)},
             {2, u32(d)},
             {3, g.value(op.inputs[1]).type == element_type::i64 ? 2u : 1u},
             {4, ignoring ? 1u : 0u},
             {5, u32(ignore)},
             {6, static_cast<uint32_t>(static_cast<uint64_t>(ignore) >> 32)},
             {7, weighted ? 1u : 0u},
             {8, mode},
             {9, softmax ? 1u : 0u}};
  b.dispatch("loss", std::move(s), {b.input(0), b.input(1), weighted ? b.input(2) : b.input(0), b.output(0)},
             mode == 0 ? static_cast<uint64_t>(n * d) : 64u);
}

} // namespace

void add_loss_rules(rule_table& t) {
  const std::string conditions = "f32 input and weight, int32 or int64 target (not an int64 constant); reduction sum or mean "
                                 "over at most 2^20 targets; a target outside [0, C) loses 0 (docs/limits.md)";
  t["NegativeLogLikelihoodLoss"] = {loss_check, [](op_builder& b) { loss_lower(b, false); }, conditions, loss_attrs};
  t["SoftmaxCrossEntropyLoss"] = {loss_check, [](op_builder& b) { loss_lower(b, true); }, conditions + "; log_prob f32",
                                  loss_attrs};
  // Reduced: each of 64 invocations takes every 64th target; with softmax each target loops
  // twice over its C classes.
  auto loss_trips = [](const graph::Graph& g, const graph::Op& op) {
    const Shape x = shape_of(g, op.inputs[0]);
    const uint64_t c = x.size() > 1 ? static_cast<uint64_t>(x[1]) : 1;
    const uint64_t targets = c == 0 ? 0 : static_cast<uint64_t>(shape_size(x)) / c;
    const uint64_t per = op.type == "SoftmaxCrossEntropyLoss" ? 2 * c + 2 : 1;
    const bool reduced = op.attr_string("reduction", "mean") != "none";
    return (reduced ? (targets + 63) / 64 + 7 : 1) * per;
  };
  t["NegativeLogLikelihoodLoss"].trips = loss_trips;
  t["SoftmaxCrossEntropyLoss"].trips = loss_trips;
}

} // namespace troupe::kernels::vulkan
