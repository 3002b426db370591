#include "runtime/model_impl.hpp"

#include <troupe/exception.hpp>

#include "graph/shape_inference.hpp"

namespace troupe {

namespace {

std::vector<Port> ports_of(const graph::Graph& g, const std::vector<graph::ValueId>& ids) {
  std::vector<Port> r;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto& v = g.value(ids[i]);
    r.emplace_back(v.name, v.type, v.shape, i, declared_layout(v));
  }
  return r;
}

} // namespace

Layout declared_layout(const graph::Value& v) {
  if (v.layout.empty()) return {};
  try {
    const Layout l(v.layout);
    if (!v.shape.rank_known || l.rank() == v.shape.rank()) return l;
  } catch (const Exception&) {
  }
  return {}; // names troupe's one-letter layouts cannot hold, or a rank that disagrees
}

std::string port_list(const std::vector<Port>& ports) {
  std::string r;
  for (const auto& p : ports) r += (r.empty() ? "'" : ", '") + p.get_any_name() + "'";
  return r.empty() ? "(none)" : r;
}

void rederive_shapes(graph::Graph& g) {
  graph::forget_derived_shapes(g);
  graph::infer_shapes(g);
}

std::vector<Port> graph_inputs(const graph::Graph& g) { return ports_of(g, g.inputs); }
std::vector<Port> graph_outputs(const graph::Graph& g) { return ports_of(g, g.outputs); }

std::vector<Port> Model::inputs() const { return graph_inputs(impl_->graph); }
std::vector<Port> Model::outputs() const { return graph_outputs(impl_->graph); }

Port Model::input(const std::string& name) const {
  auto ports = inputs();
  for (auto& p : ports)
    if (p.get_any_name() == name) return p;
  throw Exception("model '" + impl_->name + "' has no input '" + name + "'; its inputs: " + port_list(ports));
}

Port Model::output(const std::string& name) const {
  auto ports = outputs();
  for (auto& p : ports)
    if (p.get_any_name() == name) return p;
  throw Exception("model '" + impl_->name + "' has no output '" + name + "'; its outputs: " + port_list(ports));
}

Port Model::input(std::size_t index) const {
  auto ports = inputs();
  if (index >= ports.size())
    throw Exception("model '" + impl_->name + "' has " + std::to_string(ports.size()) + " inputs; no input #" +
                    std::to_string(index));
  return ports[index];
}

Port Model::output(std::size_t index) const {
  auto ports = outputs();
  if (index >= ports.size())
    throw Exception("model '" + impl_->name + "' has " + std::to_string(ports.size()) + " outputs; no output #" +
                    std::to_string(index));
  return ports[index];
}

void Model::reshape(const std::map<std::string, PartialShape>& shapes) {
  graph::Graph g = impl_->graph; // all or nothing: a failed reshape leaves the model as it was
  for (const auto& [name, shape] : shapes) {
    auto port = input(name);
    auto& v = g.value(g.inputs[port.get_index()]);
    if (!shape.rank_known) throw Exception("reshape of input '" + name + "': the new shape needs a rank");
    // As ov::Model::reshape, a new shape may change the rank; shape inference checks the consumers.
    v.shape = shape;
  }
  rederive_shapes(g);
  impl_->graph = std::move(g);
}

void Model::reshape(const PartialShape& shape) {
  auto ports = inputs();
  if (ports.size() != 1)
    throw Exception("reshape with one shape needs a model with one input; model '" + impl_->name + "' has " +
                    std::to_string(ports.size()) + ": " + port_list(ports));
  reshape(std::map<std::string, PartialShape>{{ports[0].get_any_name(), shape}});
}

std::vector<Node> Model::get_ops() const {
  std::vector<Node> r;
  for (std::size_t i = 0; i < impl_->graph.ops.size(); ++i) r.push_back(Node(impl_, i));
  return r;
}

std::string Model::get_friendly_name() const { return impl_->name; }

std::string Node::get_friendly_name() const { return model_->graph.ops.at(index_).name; }
std::string Node::get_type_name() const { return model_->graph.ops.at(index_).type; }
std::map<std::string, std::string>& Node::get_rt_info() { return model_->graph.ops.at(index_).rt_info; }
const std::map<std::string, std::string>& Node::get_rt_info() const { return model_->graph.ops.at(index_).rt_info; }

} // namespace troupe
