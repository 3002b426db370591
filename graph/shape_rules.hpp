#pragma once
/// Internal to graph/: the per-op shape rules behind infer_op, and the helpers they share.
/// Dims < 0 are dynamic; a rule returns one value_info per op output.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/shape_inference.hpp"

namespace troupe::graph::detail {

/// What a rule sees of one op: its inputs' types, shapes and constant values.
struct infer_ctx {
  const Graph& g;
  const Op& op;
  /// When set, constant() records here each input it was asked for that is not a constant:
  /// the values whose contents this op's output shapes wait on (value_specialization.cpp).
  std::vector<ValueId>* wanted = nullptr;

  std::size_t count() const { return op.input_count(); }
  bool has(std::size_t i) const { return i < op.inputs.size() && op.inputs[i] != no_value; }
  const Value& in(std::size_t i) const;
  const PartialShape& shape(std::size_t i) const { return in(i).shape; }
  element_type type(std::size_t i) const { return in(i).type; }
  /// The constant tensor of input i, or nullptr (also when the input is omitted). For values
  /// that set the output's shape (a Reshape's target): a miss is recorded in `wanted`.
  const Tensor* constant(std::size_t i) const;
  /// The same for an input read as data (NonZero's count, an index range check): a miss is
  /// not a value the shape waits on, since specializing on data would compile per request.
  const Tensor* data(std::size_t i) const;
  /// A constant integer input (i32/i64) as int64 values; nullopt when not constant.
  std::optional<std::vector<int64_t>> const_ints(std::size_t i) const;
  /// A constant float/int input as doubles; nullopt when not constant.
  std::optional<std::vector<double>> const_floats(std::size_t i) const;
  /// Normalizes a possibly negative axis against rank, or fails naming the op.
  int64_t axis(int64_t a, int64_t rank) const;
  [[noreturn]] void fail(const std::string& why) const;
  /// Number of outputs the node declares (at least 1).
  std::size_t outputs() const { return op.outputs.empty() ? 1 : op.outputs.size(); }
};

using rule_fn = std::vector<value_info> (*)(const infer_ctx&);
struct rule {
  rule_fn fn;
  std::size_t min_inputs;
  std::size_t max_inputs;
};
using rule_table = std::unordered_map<std::string, rule>;

void add_elementwise_rules(rule_table& t);
void add_nn_rules(rule_table& t);
void add_tensor_rules(rule_table& t);
void add_selection_rules(rule_table& t);
void add_signal_rules(rule_table& t);
void add_control_flow_rules(rule_table& t);
void add_sequence_rules(rule_table& t);
void add_detection_rules(rule_table& t);

/// infer_op, recording in `wanted` (when not null) the non-constant inputs whose values the
/// rule asked for.
std::vector<value_info> infer_op_recording(const Graph& g, const Op& op, std::vector<ValueId>* wanted);

/// Multidirectional (numpy) broadcasting; fails naming the op on incompatible shapes.
PartialShape broadcast(const infer_ctx& c, const PartialShape& a, const PartialShape& b);
/// Elements of static dims, or -1 when a dim is dynamic or the product passes 2^62.
int64_t checked_elements(const std::vector<int64_t>& dims);
/// A shape of known rank with every dim dynamic.
PartialShape dynamic_of_rank(std::size_t rank);

} // namespace troupe::graph::detail
