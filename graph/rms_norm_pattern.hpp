#pragma once
/// RMS normalization as exporters spell it (LLaMA-style decoders; ONNX has no op for it before
/// opset 23): x / Sqrt(ReduceMean(x^2 over the last axis) + eps), or x * Reciprocal(Sqrt(...)),
/// optionally times a constant gamma over the last axis, found so that a device can run it as
/// one pass per row. x^2 is Pow(x, 2) or Mul(x, x); the intermediates have one reader each and
/// are no graph outputs; x is f32 with a static shape.
#include <cstddef>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph {

struct rms_norm_pattern {
  std::vector<std::size_t> members; ///< the ops the step replaces, in graph order
  std::size_t last = 0;             ///< the op whose output the step writes
  ValueId x = no_value, gamma = no_value, y = no_value; ///< gamma no_value: none
  float epsilon = 0;
};

std::vector<rms_norm_pattern> find_rms_norm_patterns(const Graph& g);

} // namespace troupe::graph
