#pragma once
/// The float epilogue that quantize_dynamic writes after every MatMulInteger and ConvInteger
/// (Cast to float -> Mul by the scale product [-> Add bias]), carried into the integer op's own
/// store (lower_int8_epilogue.cpp finds it; lower_quantize.cpp and lower_conv_integer.cpp emit it).
#include <cstddef>
#include <vector>

#include "kernels/vulkan/lowering.hpp"

namespace troupe::kernels::vulkan {

/// An integer op given an epilogue is lowered as a copy with two more inputs: the scale and the
/// bias (no_value: none).
inline constexpr std::size_t epilogue_scale_input = 4, epilogue_bias_input = 5;

/// Whether `op` (MatMulInteger or ConvInteger) carries an epilogue.
inline bool has_epilogue(const graph::Op& op) {
  return op.inputs.size() > epilogue_scale_input && op.inputs[epilogue_scale_input] != graph::no_value;
}

/// How a value of shape `s` broadcasts over `y` (right-aligned): 0 one value, 1 one per index of
/// y's `axis` (every other dim 1), -1 otherwise.
inline int per_axis_mode(const Shape& s, const Shape& y, std::size_t axis) {
  if (s.size() > y.size()) return -1;
  int64_t n = 1;
  bool along = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::size_t yi = y.size() - s.size() + i;
    n *= s[i];
    if (s[i] == 1) continue;
    if (yi != axis || s[i] != y[axis]) return -1;
    along = true;
  }
  return n == 1 ? 0 : along ? 1 : -1;
}

/// For an op that carries an epilogue: binds its scale and bias (the scale again when there is no
/// bias) and then `y`, and sets the float store's spec constants from `first_spec` on: scale
/// mode, has bias, bias mode, where a mode is 0 for one value and `per_channel` for one per
/// index of the output's `axis`.
inline void bind_epilogue(op_builder& b, spec_map& s, uint32_t first_spec, std::size_t axis, uint32_t per_channel,
                          std::vector<buffer_ref>& args, buffer_ref y) {
  const auto& g = b.graph();
  const auto& op = b.op();
  const Shape ys = shape_of(g, op.outputs[0]);
  const bool bias = op.inputs[epilogue_bias_input] != graph::no_value;
  auto mode = [&](std::size_t i) { return per_axis_mode(shape_of(g, op.inputs[i]), ys, axis) == 1 ? per_channel : 0u; };
  s[first_spec] = mode(epilogue_scale_input);
  s[first_spec + 1] = bias ? 1u : 0u;
  s[first_spec + 2] = bias ? mode(epilogue_bias_input) : 0u;
  args.push_back(b.input(epilogue_scale_input));
  args.push_back(b.input(bias ? epilogue_bias_input : epilogue_scale_input));
  args.push_back(y);
}

} // namespace troupe::kernels::vulkan
