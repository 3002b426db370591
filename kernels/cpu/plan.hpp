#pragma once
/// The CPU execution plan: built once by compile(), immutable afterwards and shared by every
/// clone of an executable. A clone owns only the buffers the plan describes.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <dnnl.hpp>

#include "graph/ir.hpp"
#include "kernels/reference/kernels.hpp"

namespace troupe::kernels::cpu {

/// One memory region of a clone: an intermediate, a graph input, a constant or the scratchpad.
struct buffer_info {
  std::size_t bytes = 0;
  std::optional<Tensor> constant; ///< storage shared by all clones (weights, initializers)
  int graph_input = -1;           ///< storage is the caller's input tensor of this index
  element_type type = element_type::u8; ///< logical plain type and shape, for reference views
  Shape shape;
};

/// A oneDNN argument: which buffer, seen through which memory descriptor.
struct binding {
  int arg = 0;
  int buf = -1;
  dnnl::memory::desc md;
};

struct step {
  std::string name, type, exec_type;
  bool is_dnnl = false;
  dnnl::primitive prim;
  std::vector<binding> args;
  // Reference steps: the op, its kernel, and plain buffers for its inputs/outputs (-1: omitted).
  std::shared_ptr<const graph::Op> op;
  reference::kernel_fn fn = nullptr;
  bool apply_activation = false;
  std::vector<int> ref_in, ref_out;
};

struct plan {
  dnnl::engine eng;
  std::vector<buffer_info> buffers;
  std::vector<step> steps;
  std::vector<int> outputs; ///< plain buffers holding the graph outputs
  std::vector<int> inputs;  ///< buffers of the graph inputs
  int num_threads = 0;
  bool profiling = false;
  int64_t opset = 13; ///< reference kernels need it (Softmax before 13)
};

/// Builds the plan of a static-shaped, shape-inferred graph.
std::shared_ptr<const plan> build_plan(const graph::Graph& g, int num_threads, element_type precision,
                                       bool profiling);

} // namespace troupe::kernels::cpu
