#pragma once
/// Builds tiny ONNX models in memory (for tests and the overhead benchmark): a graph of
/// nodes over named float/int tensors, serialized to a file the public API can read.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace troupe::tiny_onnx {

struct model_builder {
  onnx::ModelProto model;
  onnx::GraphProto* graph;

  explicit model_builder(int opset = 13) {
    model.set_ir_version(8);
    model.set_producer_name("troupe-tests");
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("tiny");
  }

  model_builder(const model_builder&) = delete; // `graph` points into `model`
  model_builder& operator=(const model_builder&) = delete;

  /// dims < 0 are dynamic (dim_param "d<i>").
  static void set_type(onnx::ValueInfoProto* v, const std::string& name, int elem, const std::vector<int64_t>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* s = t->mutable_shape();
    for (std::size_t i = 0; i < dims.size(); ++i) {
      auto* d = s->add_dim();
      if (dims[i] >= 0) d->set_dim_value(dims[i]);
      else d->set_dim_param(std::string("d").append(std::to_string(i)));
    }
  }

  model_builder& input(const std::string& name, const std::vector<int64_t>& dims,
                       int elem = onnx::TensorProto::FLOAT) {
    set_type(graph->add_input(), name, elem, dims);
    return *this;
  }
  model_builder& output(const std::string& name, const std::vector<int64_t>& dims,
                        int elem = onnx::TensorProto::FLOAT) {
    set_type(graph->add_output(), name, elem, dims);
    return *this;
  }
  model_builder& node(const std::string& type, const std::vector<std::string>& ins,
                      const std::vector<std::string>& outs, const std::string& name = "") {
    auto* n = graph->add_node();
    n->set_op_type(type);
    n->set_name(name.empty() ? std::string(type).append("_").append(std::to_string(graph->node_size() - 1)) : name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *this;
  }
  model_builder& float_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                   const std::vector<float>& values) {
    auto* t = initializer(name, onnx::TensorProto::FLOAT, dims);
    for (auto v : values) t->add_float_data(v);
    return *this;
  }

  model_builder& int64_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                   const std::vector<int64_t>& values) {
    auto* t = initializer(name, onnx::TensorProto::INT64, dims);
    for (auto v : values) t->add_int64_data(v);
    return *this;
  }
  /// An initializer of any element type from its little-endian bytes (raw_data).
  model_builder& raw_initializer(const std::string& name, int elem, const std::vector<int64_t>& dims,
                                 const std::string& bytes) {
    initializer(name, elem, dims)->set_raw_data(bytes);
    return *this;
  }
  /// A graph input without a type (a subgraph's input typed by its op).
  model_builder& untyped_input(const std::string& name) {
    graph->add_input()->set_name(name);
    return *this;
  }

  // Attributes of the last node added.
  model_builder& attr(const std::string& name, int64_t v) {
    auto* a = last_attr(name, onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  model_builder& attr(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = last_attr(name, onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
    return *this;
  }
  /// A subgraph (If's branches, Loop's and Scan's body): `body`'s graph.
  model_builder& attr(const std::string& name, const model_builder& body) {
    *last_attr(name, onnx::AttributeProto::GRAPH)->mutable_g() = *body.graph;
    return *this;
  }

  /// Writes the model to `path` and returns the path.
  std::string write(const std::string& path) const {
    std::ofstream f(path, std::ios::binary);
    model.SerializeToOstream(&f);
    return path;
  }

private:
  onnx::AttributeProto* last_attr(const std::string& name, onnx::AttributeProto::AttributeType type) {
    auto* a = graph->mutable_node(graph->node_size() - 1)->add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  }
  /// A new initializer with its name, element type and dims; the caller adds the data.
  onnx::TensorProto* initializer(const std::string& name, int type, const std::vector<int64_t>& dims) {
    auto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (auto d : dims) t->add_dims(d);
    return t;
  }
};

/// y = a + b over [1, n] float tensors: the one-op model of the overhead measurement.
inline std::string write_add_model(const std::string& path, int64_t n = 8) {
  model_builder b;
  b.input("a", {1, n}).input("b", {1, n}).output("y", {1, n}).node("Add", {"a", "b"}, {"y"}, "add");
  return b.write(path);
}

} // namespace troupe::tiny_onnx
