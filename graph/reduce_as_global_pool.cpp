/// reduce_as_global_pool: ReduceMean / ReduceMax over every spatial axis of an N, C, H, W (or
/// deeper) map, keeping dims, is GlobalAveragePool / GlobalMaxPool. OpenVINO IR has no global pools: its
/// converters (and troupe's writer) spell them as the Reduce, and the devices' pooling kernels
/// sum in the order the ONNX model's own op does, so a model read from IR computes the same
/// bits as its ONNX original.
#include <algorithm>
#include <numeric>

#include "graph/passes.hpp"

namespace troupe::graph {

void reduce_as_global_pool(Graph& g) {
  bool changed = false;
  for (auto& op : g.ops) {
    const bool mean = op.type == "ReduceMean", max = op.type == "ReduceMax";
    if ((!mean && !max) || !op.domain.empty() || op.inputs.empty() || op.attr_int("keepdims", 1) != 1) continue;
    const auto& x = g.value(op.inputs[0]);
    // Images (N, C, H, W and up): a rank-3 [B, S, H] of a transformer is no channel map.
    if (!x.shape.rank_known || x.shape.rank() < 4 || (x.type != element_type::f32 && x.type != element_type::f16)) continue;
    // Axes: the attribute (before opset 18), or a constant input.
    std::vector<int64_t> axes = op.attr_ints("axes");
    if (op.inputs.size() > 1 && op.inputs[1] != no_value) {
      if (!g.is_constant(op.inputs[1]) || !axes.empty()) continue;
      const Tensor& t = *g.value(op.inputs[1]).constant;
      if (t.get_element_type() != element_type::i64) continue;
      axes.assign(t.data<int64_t>(), t.data<int64_t>() + t.get_size());
    }
    const auto rank = static_cast<int64_t>(x.shape.rank());
    for (auto& a : axes) a = a < 0 ? a + rank : a;
    std::sort(axes.begin(), axes.end());
    std::vector<int64_t> spatial(static_cast<std::size_t>(rank - 2));
    std::iota(spatial.begin(), spatial.end(), 2);
    if (axes != spatial) continue;
    op.type = mean ? "GlobalAveragePool" : "GlobalMaxPool";
    op.attrs.clear();
    op.inputs.resize(1);
    changed = true;
  }
  if (changed) g.prune(); // the axes nobody reads
}

} // namespace troupe::graph
