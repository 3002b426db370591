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
#include "kernels/derived_constants.hpp"
#include "kernels/reference/kernels.hpp"

namespace troupe::kernels::cpu {

/// One memory region of a clone: an intermediate, a graph input, a constant or the scratchpad.
struct buffer_info {
  std::size_t bytes = 0;
  std::optional<Tensor> constant; ///< storage shared by all clones (weights, initializers)
  int graph_input = -1;           ///< storage is the caller's input tensor of this index
  int graph_output = -1;          ///< storage is this run's output tensor of this index: written in place
  element_type type = element_type::u8; ///< logical plain type and shape, for reference views
  std::ptrdiff_t offset = -1;     ///< in the clone's arena (memory_plan.hpp); -1: not in it
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
  /// Dynamic steps run through interpreter::run_op with run-time shapes. Per input/output:
  /// the value id whose per-run tensor it is when the value's shape is dynamic, else -1 (then
  /// ref_in/ref_out name its plain buffer).
  bool dynamic = false;
  std::vector<int> in_slot, out_slot;
};

struct plan {
  dnnl::engine eng;
  std::vector<buffer_info> buffers;
  std::size_t arena_bytes = 0; ///< one allocation per clone holding every intermediate buffer
  std::vector<step> steps;
  std::vector<int> outputs; ///< plain buffers holding the graph outputs
  std::vector<int> inputs;  ///< buffers of the graph inputs
  /// Per graph input/output: the value id when its shape is dynamic (it lives in the clone's
  /// per-run tensors, not in a buffer), else -1.
  std::vector<int> input_slots, output_slots;
  /// The graph, kept only when some step is dynamic: run_op infers shapes on a per-clone copy.
  std::shared_ptr<const graph::Graph> graph;
  int num_threads = 0;
  bool profiling = false;
  int64_t opset = 13; ///< reference kernels need it (Softmax before 13)
};

/// Builds the plan of a shape-inferred graph; ops touching dynamic-shaped values become
/// dynamic steps on the reference kernels, with plain layouts at their boundaries.
/// `derived`, when given, keeps what is derived from the weights for the next build of the
/// same compiled model (kernels/derived_constants.hpp).
std::shared_ptr<const plan> build_plan(const graph::Graph& g, int num_threads, element_type precision,
                                       bool profiling, derived_constants* derived = nullptr);

} // namespace troupe::kernels::cpu
