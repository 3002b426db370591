/// Graph -> OpenVINO IR v11. Layers are collected in memory (ir_writer.hpp), then serialized
/// with pugixml; every ONNX op is checked for a mapping first, so that an unmappable model is
/// one error listing every op it cannot write and nothing is written.
#include "graph/ir_xml.hpp"

#include <troupe/exception.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <pugixml.hpp>

#include "graph/ir_op_mapping.hpp"
#include "graph/op_domain.hpp"
#include "graph/ir_writer.hpp"

namespace troupe::graph {

namespace ir {

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (k) s += ',';
    s += std::to_string(v[k]);
  }
  return s;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string emitter::unique(const std::string& base) {
  int& n = used_names_[base];
  std::string name = n == 0 ? base : base + "_" + std::to_string(n);
  ++n;
  return name;
}

void emitter::begin(const Op& op) {
  op_ = &op;
  op_first_layer_ = layers_.size();
  counter_ = 0;
}

void emitter::end() {
  if (!op_) return;
  if (!op_->outputs.empty() && op_->outputs[0] != no_value) {
    auto it = bound_.find(op_->outputs[0]);
    if (it != bound_.end() && static_cast<std::size_t>(it->second.layer) >= op_first_layer_)
      layers_[static_cast<std::size_t>(it->second.layer)].name = unique(op_->name);
  }
  op_ = nullptr;
}

std::vector<out_ref> emitter::layer(const std::string& type, const std::string& version, attrs data,
                                    const std::vector<out_ref>& inputs,
                                    const std::vector<std::pair<element_type, PartialShape>>& outputs) {
  written_layer l;
  l.id = static_cast<int64_t>(layers_.size());
  l.type = type;
  l.version = version;
  l.name = unique((op_ ? op_->name : std::string("layer")) + "/" + type + "_" + std::to_string(counter_++));
  l.data = std::move(data);
  int64_t port = 0;
  for (const auto& in : inputs) {
    if (in.layer < 0) throw Exception("internal: an input of a " + type + " layer was not written");
    l.inputs.push_back({port, in.type, in.shape, {}});
    edges_.push_back({in.layer, in.port, l.id, port});
    ++port;
  }
  std::vector<out_ref> r;
  for (const auto& [t, s] : outputs) {
    l.outputs.push_back({port, t, s, {}});
    r.push_back({l.id, port, t, s});
    ++port;
  }
  layers_.push_back(std::move(l));
  return r;
}

out_ref emitter::constant(const Tensor& t, const std::string& name) {
  element_type type = t.get_element_type();
  if (type == element_type::string || type == element_type::undefined)
    throw Exception("a constant of type " + to_string(type) + " cannot be written to IR");
  const std::size_t offset = weights_.size(), size = t.get_byte_size();
  weights_.append(static_cast<const char*>(t.data()), size);
  out_ref r = layer1("Const", "opset1",
                     {{"element_type", to_string(type)},
                      {"shape", join(t.get_shape())},
                      {"offset", std::to_string(offset)},
                      {"size", std::to_string(size)}},
                     {}, type, PartialShape(t.get_shape()));
  if (!name.empty()) layers_[static_cast<std::size_t>(r.layer)].name = unique(name);
  return r;
}

out_ref emitter::i64s(const std::vector<int64_t>& v) {
  Tensor t(element_type::i64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return constant(t);
}

out_ref emitter::i64_scalar(int64_t v) {
  Tensor t(element_type::i64, {});
  *t.data<int64_t>() = v;
  return constant(t);
}

out_ref emitter::scalar(double v, element_type t) {
  if (t == element_type::undefined) t = element_type::f32;
  return constant(builder::make_tensor({v}, t, {}));
}

out_ref emitter::value(ValueId v) {
  if (v == no_value) throw Exception("internal: an omitted input was asked for");
  auto it = bound_.find(v);
  if (it != bound_.end()) return it->second;
  if (g_.is_constant(v)) {
    const Value& val = g_.value(v);
    out_ref r = constant(*val.constant, val.name);
    bind(v, r);
    return r;
  }
  throw Exception("internal: value '" + g_.value(v).name + "' is read before it is written");
}

void emitter::bind(ValueId v, const out_ref& r) {
  bound_[v] = r;
  auto& l = layers_[static_cast<std::size_t>(r.layer)];
  for (auto& p : l.outputs)
    if (p.id == r.port) {
      // A model input's or output's name goes first: a reader takes the first as the port's name.
      bool port = std::find(g_.outputs.begin(), g_.outputs.end(), v) != g_.outputs.end() ||
                  std::find(g_.inputs.begin(), g_.inputs.end(), v) != g_.inputs.end();
      p.names.insert(port ? p.names.begin() : p.names.end(), g_.value(v).name);
      if (p.type == element_type::undefined) p.type = g_.value(v).type;
    }
}

out_ref emitter::parameter(ValueId v) {
  const Value& val = g_.value(v);
  if (val.sequence) throw Exception("input '" + val.name + "' is a sequence; IR has no sequences");
  std::string shape;
  if (!val.shape.rank_known) {
    shape = "...";
  } else {
    for (std::size_t k = 0; k < val.shape.rank(); ++k) {
      if (k) shape += ',';
      shape += PartialShape::dim_text(val.shape.dims[k], val.shape.range(k));
    }
  }
  out_ref r = layer1("Parameter", "opset1", {{"shape", shape}, {"element_type", to_string(val.type)}}, {}, val.type,
                     val.shape);
  layers_[static_cast<std::size_t>(r.layer)].name = unique(val.name);
  layers_[static_cast<std::size_t>(r.layer)].outputs.at(0).layout = val.layout;
  bind(v, r);
  return r;
}

void emitter::result(ValueId v, const std::string& name) {
  out_ref in = value(v);
  layer("Result", "opset1", {}, {in}, {});
  layers_.back().name = unique(name);
  layers_.back().inputs.at(0).layout = g_.value(v).layout;
}

} // namespace ir

namespace {

void append_port(pugi::xml_node parent, const ir::written_port& p) {
  auto n = parent.append_child("port");
  n.append_attribute("id") = static_cast<long long>(p.id);
  if (p.type != element_type::undefined) n.append_attribute("precision") = ir::precision_name(p.type).c_str();
  if (!p.names.empty()) {
    std::string names;
    for (const auto& name : p.names) {
      std::string escaped;
      for (char c : name) {
        if (c == ',') escaped += '\\';
        escaped += c;
      }
      if (!names.empty()) names += ',';
      names += escaped;
    }
    n.append_attribute("names") = names.c_str();
  }
  if (p.shape.rank_known)
    for (std::size_t k = 0; k < p.shape.rank(); ++k) {
      const auto d = p.shape.dims[k];
      const auto r = p.shape.range(k);
      n.append_child("dim").text().set((d < 0 && !r.bounded() ? std::string("-1") : PartialShape::dim_text(d, r)).c_str());
    }
  if (!p.layout.empty()) {
    auto a = n.append_child("rt_info").append_child("attribute");
    a.append_attribute("name") = "layout";
    a.append_attribute("version") = "0";
    a.append_attribute("layout") = p.layout.c_str();
  }
}

std::string serialize(const ir::emitter& e, const std::string& model_name) {
  pugi::xml_document doc;
  auto net = doc.append_child("net");
  net.append_attribute("name") = model_name.c_str();
  net.append_attribute("version") = "11";
  auto layers = net.append_child("layers");
  for (const auto& l : e.layers()) {
    auto n = layers.append_child("layer");
    n.append_attribute("id") = static_cast<long long>(l.id);
    n.append_attribute("name") = l.name.c_str();
    n.append_attribute("type") = l.type.c_str();
    n.append_attribute("version") = l.version.c_str();
    if (!l.data.empty()) {
      auto d = n.append_child("data");
      for (const auto& [k, v] : l.data) d.append_attribute(k.c_str()) = v.c_str();
    }
    if (!l.inputs.empty()) {
      auto in = n.append_child("input");
      for (const auto& p : l.inputs) append_port(in, p);
    }
    if (!l.outputs.empty()) {
      auto out = n.append_child("output");
      for (const auto& p : l.outputs) append_port(out, p);
    }
  }
  auto edges = net.append_child("edges");
  for (const auto& ed : e.edges()) {
    auto n = edges.append_child("edge");
    n.append_attribute("from-layer") = static_cast<long long>(ed.from_layer);
    n.append_attribute("from-port") = static_cast<long long>(ed.from_port);
    n.append_attribute("to-layer") = static_cast<long long>(ed.to_layer);
    n.append_attribute("to-port") = static_cast<long long>(ed.to_port);
  }
  net.append_child("rt_info");
  std::ostringstream ss;
  doc.save(ss, "\t");
  return std::move(ss).str();
}

} // namespace

void write_ir(const Graph& g, const std::string& model_name, std::string& xml_text, std::string& weights) {
  const auto& writers = ir::op_writers();
  std::set<std::string> refused;
  for (const auto& op : g.ops) {
    if (!domain_refusal(op).empty()) refused.insert((op.domain.empty() ? "" : op.domain + ".") + op.type);
    else if (!writers.count(op.type)) refused.insert(op.type);
  }
  if (!refused.empty()) {
    std::string list;
    for (const auto& r : refused) {
      if (!list.empty()) list += ", ";
      list += r;
    }
    throw Exception("save_model: '" + model_name + "' has ops with no OpenVINO IR equivalent: " + list);
  }
  std::string bin;
  ir::emitter e(g, bin);
  for (auto in : g.inputs) e.parameter(in);
  for (const auto& op : g.ops) {
    e.begin(op);
    try {
      writers.at(op.type)(e, op);
    } catch (const Exception& ex) {
      throw Exception("save_model: '" + model_name + "': " + describe(op) + ": " + ex.what());
    }
    e.end();
  }
  for (auto out : g.outputs) e.result(out, g.value(out).name + "/sink_port_0");
  xml_text = serialize(e, model_name);
  weights = std::move(bin);
}

void write_ir_file(const Graph& g, const std::string& model_name, const std::string& xml_path,
                   const std::string& bin_path) {
  std::string bin = bin_path;
  if (bin.empty()) bin = (is_ir_path(xml_path) ? xml_path.substr(0, xml_path.size() - 4) : xml_path) + ".bin";
  std::string xml, weights;
  write_ir(g, model_name, xml, weights);
  for (const auto& [path, bytes] : {std::pair{xml_path, &xml}, std::pair{bin, &weights}}) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw Exception("save_model: cannot write '" + path + "'");
    f.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    if (!f) throw Exception("save_model: cannot write '" + path + "'");
  }
}

} // namespace troupe::graph
