#include "graph/onnx_reader.hpp"
#include "graph/op_versions.hpp"

#include <troupe/exception.hpp>

#include <climits>
#include <fstream>
#include <iterator>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "graph/onnx_tensor.hpp"

namespace troupe::graph {

namespace {

using detail::element_type_from_onnx;
using detail::tensor_from_onnx;

std::string read_file_bytes(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Exception(std::string("cannot open ") + what + " '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw Exception(std::string("cannot read ") + what + " '" + path + "'");
  return std::move(ss).str();
}

/// Builds the Graph; one name -> id map keeps every lookup O(1) (models have ~1000 values).
class reader {
public:
  explicit reader(const std::string& source) : source_(source) { g_.source = source; }

  Graph read(const onnx::ModelProto& m) {
    for (const auto& imp : m.opset_import())
      if (imp.domain().empty() || imp.domain() == "ai.onnx") g_.opset = imp.version();
    if (!m.has_graph()) throw Exception("'" + source_ + "' is not a valid ONNX model: it has no graph");
    const auto& gp = m.graph();
    if (gp.node_size() == 0 && gp.output_size() == 0)
      throw Exception("'" + source_ + "' is not a valid ONNX model: its graph is empty");

    for (const auto& init : gp.initializer()) {
      if (init.name().empty()) fail("an initializer has no name");
      Tensor t = tensor_from_onnx(init, where() + "initializer '" + init.name() + "'");
      add_constant(init.name(), std::move(t));
    }
    if (gp.sparse_initializer_size() > 0) fail("sparse initializers are not supported");
    for (const auto& in : gp.input()) {
      if (ids_.count(in.name())) continue; // an initializer listed as input is a constant
      if (in.name().empty()) fail("a graph input has no name");
      Value v = value_from_info(in, "graph input");
      g_.inputs.push_back(add(std::move(v)));
    }
    for (int i = 0; i < gp.node_size(); ++i) read_node(gp.node(i), i);
    for (const auto& out : gp.output()) {
      auto it = ids_.find(out.name());
      if (it == ids_.end()) fail("graph output '" + out.name() + "' is not produced by any node");
      Value& v = g_.value(it->second);
      if (v.type == element_type::undefined && out.type().has_tensor_type() && out.type().tensor_type().elem_type())
        v.type = element_type_from_onnx(out.type().tensor_type().elem_type(), where() + "graph output '" + out.name() + "'");
      g_.outputs.push_back(it->second);
    }
    if (g_.outputs.empty()) fail("the model's graph has no outputs");
    return std::move(g_);
  }

private:
  [[noreturn]] void fail(const std::string& why) const { throw Exception("'" + source_ + "': " + why); }
  std::string where() const { return "'" + source_ + "': "; }

  ValueId add(Value v) {
    auto name = v.name;
    if (ids_.count(name)) fail("value '" + name + "' is defined twice");
    ValueId id = g_.add_value(std::move(v));
    ids_.emplace(std::move(name), id);
    return id;
  }

  void add_constant(const std::string& name, Tensor t) { add(constant_value(name, std::move(t))); }

  Value value_from_info(const onnx::ValueInfoProto& info, const char* what) {
    std::string label = where() + what + " '" + info.name() + "'";
    Value v;
    v.name = info.name();
    if (!info.type().has_tensor_type()) throw Exception(label + " is not a tensor");
    const auto& tt = info.type().tensor_type();
    v.type = element_type_from_onnx(tt.elem_type(), label);
    if (!tt.has_shape()) return v; // unknown rank
    v.shape = PartialShape();
    bool any_symbol = false;
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) throw Exception(label + " has a negative dimension " + std::to_string(d.dim_value()));
        if (d.dim_value() > (int64_t{1} << 40)) throw Exception(label + " has a too large dimension " + std::to_string(d.dim_value()));
        v.shape.dims.push_back(d.dim_value());
        v.shape.symbols.emplace_back();
      } else {
        v.shape.dims.push_back(-1);
        v.shape.symbols.push_back(d.has_dim_param() ? d.dim_param() : std::string());
        any_symbol = any_symbol || d.has_dim_param();
      }
    }
    if (!any_symbol) v.shape.symbols.clear();
    return v;
  }

  AttributeValue attribute(const onnx::AttributeProto& a, const std::string& label) {
    auto type = a.type();
    if (type == onnx::AttributeProto::UNDEFINED) { // very old exporters leave it unset
      if (a.has_f()) type = onnx::AttributeProto::FLOAT;
      else if (a.has_i()) type = onnx::AttributeProto::INT;
      else if (a.has_s()) type = onnx::AttributeProto::STRING;
      else if (a.has_t()) type = onnx::AttributeProto::TENSOR;
      else if (a.has_g()) type = onnx::AttributeProto::GRAPH;
      else if (a.floats_size()) type = onnx::AttributeProto::FLOATS;
      else if (a.ints_size()) type = onnx::AttributeProto::INTS;
      else if (a.strings_size()) type = onnx::AttributeProto::STRINGS;
    }
    switch (type) {
    case onnx::AttributeProto::INT: return a.i();
    case onnx::AttributeProto::FLOAT: return a.f();
    case onnx::AttributeProto::STRING: return a.s();
    case onnx::AttributeProto::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case onnx::AttributeProto::FLOATS: return std::vector<float>(a.floats().begin(), a.floats().end());
    case onnx::AttributeProto::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case onnx::AttributeProto::TENSOR: return tensor_from_onnx(a.t(), label + " attribute '" + a.name() + "'");
    case onnx::AttributeProto::GRAPH:
    case onnx::AttributeProto::GRAPHS:
      throw Exception(label + ": attribute '" + a.name() + "' holds a subgraph; subgraphs are not supported");
    default: break;
    }
    throw Exception(label + ": attribute '" + a.name() + "' has an unsupported type " + std::to_string(a.type()));
  }

  std::string unique_name(const onnx::NodeProto& n, std::size_t index) {
    std::string base = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
    std::string name = base;
    for (int k = 1; !names_.insert(name).second; ++k) name = base + "_" + std::to_string(k);
    return name;
  }

  Tensor constant_node_value(const onnx::NodeProto& n, const std::string& label) {
    if (n.attribute_size() != 1) throw Exception(label + ": a Constant needs exactly one value attribute");
    const auto& a = n.attribute(0);
    const std::string& k = a.name();
    if (k == "value") {
      if (!a.has_t()) throw Exception(label + ": attribute 'value' holds no tensor");
      return tensor_from_onnx(a.t(), label + " attribute 'value'");
    }
    if (k == "value_float") { Tensor t(element_type::f32, {}); *t.data<float>() = a.f(); return t; }
    if (k == "value_int") { Tensor t(element_type::i64, {}); *t.data<int64_t>() = a.i(); return t; }
    if (k == "value_floats") {
      Tensor t(element_type::f32, {a.floats_size()});
      for (int i = 0; i < a.floats_size(); ++i) t.data<float>()[i] = a.floats(i);
      return t;
    }
    if (k == "value_ints") {
      Tensor t(element_type::i64, {a.ints_size()});
      for (int i = 0; i < a.ints_size(); ++i) t.data<int64_t>()[i] = a.ints(i);
      return t;
    }
    throw Exception(label + ": Constant attribute '" + k + "' is not supported");
  }

  void read_node(const onnx::NodeProto& n, int index) {
    Op op;
    op.type = n.op_type();
    op.domain = n.domain() == "ai.onnx" ? std::string() : n.domain();
    if (op.type.empty()) fail("node #" + std::to_string(index) + " has no op type");
    op.name = unique_name(n, g_.ops.size());
    std::string label = where() + describe(op);

    if (op.domain.empty())
      if (auto why = check_op_version(op.type, g_.opset); !why.empty()) throw Exception(label + ": " + why);
    if (op.type == "Constant" && op.domain.empty()) {
      if (n.output_size() != 1 || n.output(0).empty()) throw Exception(label + ": a Constant needs one output");
      add_constant(n.output(0), constant_node_value(n, label));
      return;
    }
    for (const auto& a : n.attribute()) {
      if (a.name().empty()) throw Exception(label + ": an attribute has no name");
      op.attrs[a.name()] = attribute(a, label);
    }
    for (const auto& in : n.input()) {
      if (in.empty()) { op.inputs.push_back(no_value); continue; }
      auto it = ids_.find(in);
      if (it == ids_.end()) throw Exception(label + " references unknown value '" + in + "'");
      op.inputs.push_back(it->second);
    }
    for (const auto& out : n.output()) {
      if (out.empty()) { op.outputs.push_back(no_value); continue; }
      Value v;
      v.name = out;
      op.outputs.push_back(add(std::move(v)));
    }
    g_.ops.push_back(std::move(op));
  }

  std::string source_;
  Graph g_;
  std::unordered_map<std::string, ValueId> ids_;
  std::unordered_set<std::string> names_;
};

} // namespace

Graph read_onnx_bytes(const void* data, std::size_t size, const std::string& source) {
  if (size > static_cast<std::size_t>(INT_MAX))
    throw Exception("'" + source + "' is too large (" + std::to_string(size) + " bytes; protobuf allows 2 GB)");
  onnx::ModelProto m;
  if (!m.ParseFromArray(data, static_cast<int>(size)))
    throw Exception("'" + source + "' is not a valid ONNX model: the protobuf message cannot be parsed (" +
                    std::to_string(size) + " bytes; truncated or not an ONNX file)");
  return reader(source).read(m);
}

Graph read_onnx_file(const std::string& path) {
  std::string bytes = read_file_bytes(path, "model file");
  return read_onnx_bytes(bytes.data(), bytes.size(), path);
}

Tensor read_onnx_tensor_file(const std::string& path, std::string* name) {
  std::string bytes = read_file_bytes(path, "tensor file");
  onnx::TensorProto t;
  if (bytes.size() > static_cast<std::size_t>(INT_MAX) || !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw Exception("'" + path + "' is not a valid ONNX TensorProto");
  if (name) *name = t.name();
  return tensor_from_onnx(t, "'" + path + "'");
}

} // namespace troupe::graph
