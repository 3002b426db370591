#include "runtime/compile_pipeline.hpp"

#include <algorithm>

#include <troupe/exception.hpp>

#include "graph/inline_if.hpp"
#include "graph/passes.hpp"
#include "graph/shape_inference.hpp"
#include "graph/value_specialization.hpp"
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
  // An If whose condition folded takes its branch's ops, whose shapes then need inferring (and
  // may fold a nested If's condition in turn).
  while (graph::inline_constant_ifs(g)) {
    graph::forget_derived_shapes(g);
    fold_constants(g);
  }
  fuse_ops(g);
}

void check_support(const graph::Graph& g, const kernels::device& dev) { check_support(g, dev, {}); }

void check_support(const graph::Graph& g, const kernels::device& dev, const value_deferral& deferred) {
  for (const auto& op : g.ops) {
    if (deferred.takes(op.name)) continue;
    auto s = dev.query(g, op);
    if (!s.supported)
      throw Exception(dev.name() + " does not support op '" + op.type + "' (node '" + op.name + "'): " + s.reason);
  }
}

namespace {
/// An op with a non-constant input or an output whose shape is not known yet.
bool has_open_shape(const graph::Graph& g, const graph::Op& op) {
  auto open = [&](graph::ValueId v) { return v != graph::no_value && !g.is_constant(v) && !g.value(v).shape.is_static(); };
  return std::any_of(op.inputs.begin(), op.inputs.end(), open) || std::any_of(op.outputs.begin(), op.outputs.end(), open);
}
} // namespace

value_deferral defer_on_values(const graph::Graph& g, const kernels::device& dev) {
  std::vector<const graph::Op*> refused;
  for (const auto& op : g.ops)
    if (has_open_shape(g, op) && !dev.query(g, op).supported) refused.push_back(&op);
  if (refused.empty()) return {};
  auto deciding = graph::find_shape_deciding_inputs(g);
  if (deciding.inputs.empty() || !deciding.obstacle.empty()) return {};
  // What constant folding will compute once those inputs are constants: such ops never reach
  // the device, whatever it says of them now.
  std::vector<bool> known(g.values.size(), false);
  for (std::size_t v = 0; v < g.values.size(); ++v) known[v] = g.values[v].constant.has_value();
  for (auto i : deciding.inputs) known[static_cast<std::size_t>(g.inputs[i])] = true;
  auto folds = [&](const graph::Op& op) {
    return std::all_of(op.inputs.begin(), op.inputs.end(),
                       [&](graph::ValueId v) { return v == graph::no_value || known[static_cast<std::size_t>(v)]; });
  };
  for (const auto& op : g.ops)
    if (folds(op))
      for (auto v : op.outputs)
        if (v != graph::no_value) known[static_cast<std::size_t>(v)] = true;
  value_deferral d;
  for (const auto* op : refused) {
    // Refused whatever the values: the refusal stands (check_support names it).
    if (!folds(*op) && !dev.query_pending(g, *op).supported) return {};
    d.ops.push_back(op->name);
  }
  d.inputs = std::move(deciding.inputs);
  return d;
}

std::string value_deferral::reason() const {
  return "its shapes wait on input values: compiled at run time once per distinct value";
}

std::unique_ptr<kernels::executable> compile_for_values(const graph::Graph& g, const value_deferral& deferred,
                                                        const std::vector<Tensor>& inputs,
                                                        const kernels::device& dev,
                                                        const kernels::compile_config& cfg) {
  std::vector<std::pair<std::size_t, Tensor>> values;
  for (auto i : deferred.inputs) values.emplace_back(i, inputs.at(i));
  graph::Graph s = graph::with_input_values(g, values);
  graph::forget_derived_shapes(s);
  return compile_graph(std::move(s), dev, cfg);
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
