#pragma once
/// Scaled dot-product attention as exporters spell it, found in a graph so that a device can run
/// it as one step: MatMul(Q, K^T) -> [Mul/Div by a scalar constant] -> [Where(keep, ., fill)] ->
/// [Add(mask)] -> Softmax(last axis) -> MatMul(., V) -> [Transpose] -> [Reshape], where Q, K^T
/// and V may each be a Transpose (of a Reshape) that only the block reads. The Transposes and
/// Reshapes fold into strides: the step reads the tensors they were made from in place and
/// writes its output where the last Transpose/Reshape would have put it. Every intermediate
/// value has one reader (the next op of the block) and is no graph output; every value is f32
/// (the select's condition bool) with a static shape.
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph {

/// An operand seen through the folded Transposes/Reshapes: element (b, h, i, j) lies at
/// `strides` (in elements) from the start of `source`'s plain row-major buffer.
struct attention_operand {
  ValueId source = no_value;
  std::array<int64_t, 4> strides{};
};

struct attention_pattern {
  std::vector<std::size_t> members; ///< the ops the step replaces, in graph order
  std::size_t last = 0;             ///< the member with the highest index: every input is ready there
  /// q (b, h, i, d); k (b, h, n, d): key n's row, K^T read back; v (b, h, n, e); mask (b, h, i, n),
  /// source no_value when there is none; y (b, h, i, e): the block's output value.
  attention_operand q, k, v, mask, y;
  /// A select before the mask: where `keep` (bool, (b, h, i, n)) is keep_if the scaled score
  /// stays, elsewhere it becomes `fill`. source no_value: none.
  attention_operand keep;
  bool keep_if = true;
  float fill = 0.0f;
  int64_t batch = 1, heads = 1, rows = 1, keys = 1, depth = 1, value_depth = 1;
  float scale = 1.0f; ///< the scores' factor, before the mask is added
};

/// x * c, c * x or x / c with c a one-element f32 constant, x a non-constant static f32 value
/// shaped like the result, no fused activation: the factor x is scaled by (1 / c for a Div),
/// and x. What scales attention scores (and, for the GPU's block, q).
std::optional<std::pair<float, ValueId>> scalar_factor(const Graph& g, const Op& op);

/// Every such block, each op in one at most, in graph order of their last members.
std::vector<attention_pattern> find_attention_patterns(const Graph& g);

} // namespace troupe::graph
