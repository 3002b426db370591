#pragma once
/// From a shape-inferred model graph with static input shapes to a device executable:
/// constant folding, batch-norm folding, activation fusion, a query of every op, compile.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

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

/// Ops a device refuses today only because their shapes wait on input values (a Reshape whose
/// target the caller gives), on a device that needs static shapes: those ops, and the inputs
/// (indices into g.inputs) whose values settle them. Empty when nothing waits or when values
/// cannot settle it (a data-dependent shape); the refusals then stand.
struct value_deferral {
  std::vector<std::size_t> inputs;
  std::vector<std::string> ops; ///< friendly names
  std::string reason() const;   ///< for query: why the ops are taken
  bool takes(const std::string& op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }
};
value_deferral defer_on_values(const graph::Graph& g, const kernels::device& dev);

/// check_support, except for the ops `deferred` names.
void check_support(const graph::Graph& g, const kernels::device& dev, const value_deferral& deferred);

/// compile_graph for one inference's inputs: the `deferred` inputs' values become constants.
std::unique_ptr<kernels::executable> compile_for_values(const graph::Graph& g, const value_deferral& deferred,
                                                        const std::vector<Tensor>& inputs,
                                                        const kernels::device& dev,
                                                        const kernels::compile_config& cfg);

/// `g` is copied; its input shapes must be static.
std::unique_ptr<kernels::executable> compile_graph(graph::Graph g, const kernels::device& dev,
                                                   const kernels::compile_config& cfg);

/// A copy of `g` with the inputs set to these concrete shapes (in input order), checked.
graph::Graph with_input_shapes(const graph::Graph& g, const std::vector<Shape>& shapes);

} // namespace troupe
