#pragma once
/// What a Model handle holds: the IR graph (shapes inferred, nothing folded).
#include <troupe/model.hpp>

#include "graph/ir.hpp"

namespace troupe {

struct Model::Impl {
  graph::Graph graph;
  std::string name;
};

/// The model's inputs/outputs as ports (shared by Model and CompiledModel).
std::vector<Port> graph_inputs(const graph::Graph& g);
std::vector<Port> graph_outputs(const graph::Graph& g);

/// A model input's or output's declared layout (graph::Value::layout) as a Layout; empty when
/// none, or when troupe's layouts cannot hold it.
Layout declared_layout(const graph::Value& v);

/// Every value's shape again from the graph inputs' (after they or the ops changed).
void rederive_shapes(graph::Graph& g);

/// "'a', 'b'" (or "(none)"): the port names an error message offers instead of a wrong one.
std::string port_list(const std::vector<Port>& ports);

} // namespace troupe
