/// PRelu forms. upgrade_legacy_prelu: before opset 7, PRelu's slope was either one value or one per channel
/// (axis 1), with no broadcasting rule; from 7 it broadcasts numpy-style from the right. A
/// constant per-channel slope [C] of an old model becomes [C, 1, ..., 1], so every kernel and
/// device sees today's semantics. scalar_prelu_as_leaky_relu: one slope for every element is
/// LeakyRelu (OpenVINO's converters write Caffe's channel-shared PReLU so), which the devices
/// fuse into the producing convolution.
#include <algorithm>

#include "graph/passes.hpp"

namespace troupe::graph {

void upgrade_legacy_prelu(Graph& g) {
  if (g.opset >= 7) return;
  for (auto& op : g.ops) {
    if (op.type != "PRelu" || op.inputs.size() < 2 || !g.is_constant(op.inputs[1])) continue;
    const auto& x = g.value(op.inputs[0]).shape;
    const Tensor& slope = *g.value(op.inputs[1]).constant;
    if (!x.rank_known || x.rank() < 3 || slope.get_shape().size() != 1 || slope.get_shape()[0] <= 1) continue;
    Shape per_channel(x.rank() - 1, 1);
    per_channel[0] = slope.get_shape()[0];
    Tensor reshaped(slope.get_element_type(), per_channel);
    std::copy_n(static_cast<const uint8_t*>(slope.data()), slope.get_byte_size(), static_cast<uint8_t*>(reshaped.data()));
    op.inputs[1] = g.add_constant(g.value(op.inputs[1]).name + "/per_channel", std::move(reshaped));
  }
  g.prune();
}

void scalar_prelu_as_leaky_relu(Graph& g) {
  bool changed = false;
  for (auto& op : g.ops) {
    if (op.type != "PRelu" || !op.domain.empty() || op.inputs.size() != 2 || !g.is_constant(op.inputs[1])) continue;
    const Tensor& slope = *g.value(op.inputs[1]).constant;
    if (slope.get_size() != 1 || slope.get_element_type() != element_type::f32 || g.value(op.inputs[0]).type != element_type::f32) continue;
    // The slope's rank must not widen the output (a [1, 1, 1] slope on a 2-D x gives 3-D).
    const auto& x = g.value(op.inputs[0]).shape;
    if (!x.rank_known || slope.get_shape().size() > x.rank()) continue;
    op.type = "LeakyRelu";
    op.attrs["alpha"] = slope.data<float>()[0];
    op.inputs.resize(1);
    changed = true;
  }
  if (changed) g.prune(); // the slopes nobody reads
}

} // namespace troupe::graph
