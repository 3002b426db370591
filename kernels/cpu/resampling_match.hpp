#pragma once
/// Whether oneDNN's resampling primitive computes an ONNX Resize exactly as ONNX defines it.
/// oneDNN has one coordinate rule (half-pixel, the scale being output/input length, nearest
/// rounding half up, linear clamping at the edges); ONNX has six modes and four roundings.
/// Rather than list the pairs that agree, each axis's ONNX indices are compared with oneDNN's.
#include <dnnl.hpp>
#include <optional>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::kernels::cpu {

/// The algorithm (resampling_nearest or resampling_linear) that computes Resize/Upsample `op`
/// from `xs` to `ys`, or nullopt. `scales`: the op's scales per axis, empty when sizes gave
/// the output shape. Nearest only for integer up- or down-sampling factors, where oneDNN's
/// jit kernels and its float coordinate arithmetic are exact.
std::optional<dnnl::algorithm> onednn_resampling_for(const graph::Op& op, int opset, const Shape& xs, const Shape& ys,
                                                     const std::vector<double>& scales);

} // namespace troupe::kernels::cpu
