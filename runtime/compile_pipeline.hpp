#pragma once
/// From a shape-inferred model graph with static input shapes to a device executable:
/// constant folding, batch-norm folding, activation fusion, a query of every op, compile.
#include <memory>
#include <string>

#include "graph/ir.hpp"
#include "kernels/device.hpp"

namespace troupe {

/// Folds constants (reference kernels as evaluator) and runs the graph passes on `g`.
void optimize_graph(graph::Graph& g);
/// The two halves of optimize_graph: shape inference with constant folding, then the
/// rewrites (BN and affine folding, activation fusion). HETERO places ops in between, so that
/// the rewrites see the affinities and never merge ops of two devices.
void fold_constants(graph::Graph& g);
void fuse_ops(graph::Graph& g);

/// Throws "<device> does not support op '<type>' (node '<name>'): <reason>" for the first
/// unsupported op.
void check_support(const graph::Graph& g, const kernels::device& dev);

/// `g` is copied; its input shapes must be static.
std::unique_ptr<kernels::executable> compile_graph(graph::Graph g, const kernels::device& dev,
                                                   const kernels::compile_config& cfg);

/// A copy of `g` with the inputs set to these concrete shapes (in input order), checked.
graph::Graph with_input_shapes(const graph::Graph& g, const std::vector<Shape>& shapes);

} // namespace troupe
