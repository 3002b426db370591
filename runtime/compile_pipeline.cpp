#include "runtime/compile_pipeline.hpp"

#include <troupe/exception.hpp>

#include "graph/passes.hpp"
#include "graph/shape_inference.hpp"
#include "kernels/reference/kernels.hpp"

namespace troupe {

void fold_constants(graph::Graph& g) {
  const int64_t opset = g.opset;
  graph::evaluator eval = [opset](const graph::Op& op, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
    kernels::reference::evaluate(op, in, out, opset);
  };
  graph::infer_shapes(g, &eval);
}

void fuse_ops(graph::Graph& g) {
  graph::rewrite(g);
}

void optimize_graph(graph::Graph& g) {
  fold_constants(g);
  fuse_ops(g);
}

void check_support(const graph::Graph& g, const kernels::device& dev) {
  for (const auto& op : g.ops) {
    auto s = dev.query(g, op);
    if (!s.supported)
      throw Exception(dev.name() + " does not support op '" + op.type + "' (node '" + op.name + "'): " + s.reason);
  }
}

std::unique_ptr<kernels::executable> compile_graph(graph::Graph g, const kernels::device& dev,
                                                   const kernels::compile_config& cfg) {
  optimize_graph(g);
  check_support(g, dev);
  return dev.compile(g, cfg);
}

graph::Graph with_input_shapes(const graph::Graph& src, const std::vector<Shape>& shapes) {
  graph::Graph g = src;
  if (shapes.size() != g.inputs.size())
    throw Exception("expected " + std::to_string(g.inputs.size()) + " input shapes, got " + std::to_string(shapes.size()));
  for (std::size_t i = 0; i < shapes.size(); ++i) g.value(g.inputs[i]).shape = PartialShape(shapes[i]);
  graph::forget_derived_shapes(g);
  return g;
}

} // namespace troupe
