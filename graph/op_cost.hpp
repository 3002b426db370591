#pragma once
/// What an op costs, from its static shapes: floating-point operations (a multiply-add counts
/// two) and the bytes it must at least read and write (every input, weights included, and
/// every output, once). The roofline tool puts these beside the measured time; a placement
/// pass may weigh them against a transfer. Unknown shapes count nothing.
#include <cstdint>

#include "graph/ir.hpp"

namespace troupe::graph {

struct op_cost {
  double flops = 0;
  double bytes = 0;
};

/// Bytes of value `v` (elements times element size); 0 when its shape is not static.
double value_bytes(const Graph& g, ValueId v);

/// Conv and ConvTranspose (also fused: any type whose name holds them), MatMul, Gemm and
/// their fused forms count their multiply-adds; every other op counts one operation per
/// output element.
op_cost cost_of(const Graph& g, const Op& op);

} // namespace troupe::graph
