#pragma once
/// Shapes that wait on values: a Reshape whose target, a Resize whose sizes or scales, a Slice
/// whose starts come from the caller leave their outputs' shapes unknown until the request
/// brings those values. A device that needs static shapes (the GPU) compiles such a model once
/// per distinct set of those values, with them as constants (runtime/core.cpp).
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph {

/// Which graph inputs decide shapes, found in a shape-inferred graph (static input shapes,
/// constants folded).
struct shape_deciding {
  /// Indices into g.inputs of the inputs whose values some op's output shape needs (directly,
  /// or through the ops computing what it needs).
  std::vector<std::size_t> inputs;
  /// Empty, or why specializing on input values cannot make the shapes static: a needed value
  /// computed from a large input (a data-dependent shape, as NonZero's).
  std::string obstacle;
};

/// At most this many elements per input are taken into a compiled program's key.
inline constexpr int64_t max_deciding_elements = 64;

shape_deciding find_shape_deciding_inputs(const Graph& g);

/// A copy of `g` whose readers of the given inputs (indices into g.inputs) read constants with
/// these values instead; the inputs stay in g.inputs (the caller still passes them), unread.
Graph with_input_values(const Graph& g, const std::vector<std::pair<std::size_t, Tensor>>& values);

} // namespace troupe::graph
