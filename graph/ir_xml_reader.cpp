/// OpenVINO IR v10/v11 -> Graph. The .xml is parsed whole (pugixml), checked (versions, every
/// op mappable, edges to existing ports of equal precision, no cycle, Const ranges inside the
/// weights) before any op is built, so that a bad file is one error naming the file, the layer
/// and the reason, and never an out-of-bounds read.
#include "graph/ir_xml.hpp"

#include <troupe/exception.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <pugixml.hpp>

#include "graph/ir_op_mapping.hpp"
#include "graph/ir_integer_recovery.hpp"
#include "graph/shape_inference.hpp"

namespace troupe::graph {

namespace {

using ir::layer;
using ir::port;

/// Splits OpenVINO's `names` attribute: commas separate names, "\," is a comma inside one.
std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> r;
  std::string cur;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == ',') {
      cur += ',';
      ++i;
    } else if (s[i] == ',') {
      if (!cur.empty()) r.push_back(cur);
      cur.clear();
    } else {
      cur += s[i];
    }
  }
  if (!cur.empty()) r.push_back(cur);
  for (auto& n : r) {
    auto b = n.find_first_not_of(' ');
    auto e = n.find_last_not_of(' ');
    n = b == std::string::npos ? std::string() : n.substr(b, e - b + 1);
  }
  r.erase(std::remove(r.begin(), r.end(), std::string()), r.end());
  return r;
}

class ir_reader {
public:
  ir_reader(std::string source, const void* weights, std::size_t size, std::string weights_source, bool weights_missing)
      : source_(std::move(source)), weights_(static_cast<const unsigned char*>(weights)), size_(size),
        weights_source_(std::move(weights_source)), weights_missing_(weights_missing) {}

  Graph read(const std::string& text) {
    pugi::xml_document doc;
    auto res = doc.load_buffer(text.data(), text.size());
    if (!res)
      fail("is not an OpenVINO IR: the XML cannot be parsed (" + std::string(res.description()) + " at offset " +
           std::to_string(res.offset) + ")");
    auto net = doc.child("net");
    if (!net) {
      auto root = doc.document_element();
      fail(std::string("is not an OpenVINO IR: its root element is <") + (root ? root.name() : "") + ">, not <net>");
    }
    std::string version = net.attribute("version").as_string();
    if (version != "10" && version != "11")
      fail("is an OpenVINO IR of version '" + version + "'; troupe reads versions 10 and 11");
    name_ = net.attribute("name").as_string();

    read_layers(net);
    check_ops();
    read_edges(net);
    order();
    return build();
  }

  /// A body of If, TensorIterator or Loop (its <layers> and <edges>), with the same weights.
  ir::body read_body(const pugi::xml_node& node, int depth) {
    depth_ = depth;
    read_layers(node);
    check_ops();
    read_edges(node);
    order();
    ir::body b;
    b.graph = std::make_shared<Graph>(build());
    for (std::size_t k = 0; k < parameter_ids_.size(); ++k) b.parameter[parameter_ids_[k]] = k;
    for (std::size_t k = 0; k < result_ids_.size(); ++k) b.result[result_ids_[k]] = k;
    return b;
  }

private:
  [[noreturn]] void fail(const std::string& why) const { throw Exception("'" + source_ + "' " + why); }
  [[noreturn]] void fail(const layer& l, const std::string& why) const {
    throw Exception("'" + source_ + "': " + ir::describe(l) + ": " + why);
  }

  static std::optional<int64_t> parse_int(const std::string& s) {
    if (s.empty()) return std::nullopt;
    std::size_t pos = 0;
    try {
      long long v = std::stoll(s, &pos);
      if (pos != s.size()) return std::nullopt;
      return v;
    } catch (...) {
      return std::nullopt;
    }
  }

  /// One dimension: an integer, -1 or "?" (dynamic), or a range "a..b", "a..", "..b" (dynamic,
  /// bounded), appended to `p`.
  void parse_dim(const layer& l, std::string s, PartialShape& p) const {
    s.erase(std::remove_if(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }), s.end());
    auto length = [&](const std::string& t) {
      auto v = parse_int(t);
      if (!v || *v < 0) fail(l, "dimension '" + s + "' is not a size, -1, ? or a range a..b");
      if (*v > max_dim) fail(l, "dimension " + s + " is too large");
      return *v;
    };
    p.dims.push_back(-1);
    if (s == "?" || s == "-1") return;
    auto dots = s.find("..");
    if (dots == std::string::npos) {
      p.dims.back() = length(s);
      return;
    }
    std::string lo = s.substr(0, dots), hi = s.substr(dots + 2);
    dim_range r{lo.empty() ? 0 : length(lo), hi.empty() ? -1 : length(hi)};
    if (r.max >= 0 && r.max < r.min) fail(l, "dimension '" + s + "' is an empty range");
    p.set_range(p.dims.size() - 1, r);
  }

  PartialShape parse_shape_attr(const layer& l, std::string s) const {
    s.erase(std::remove_if(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) || c == '[' || c == ']'; }),
            s.end());
    if (s == "...") return PartialShape::unknown_rank();
    PartialShape p;
    if (s.empty()) return p; // a scalar
    std::size_t b = 0;
    while (b <= s.size()) {
      auto e = s.find(',', b);
      if (e == std::string::npos) e = s.size();
      parse_dim(l, s.substr(b, e - b), p);
      b = e + 1;
    }
    return p;
  }

  port read_port(const layer& l, const pugi::xml_node& n) const {
    port p;
    auto id = parse_int(n.attribute("id").as_string());
    if (!id) fail(l, "a port has no integer id");
    p.id = *id;
    if (auto prec = n.attribute("precision")) {
      auto t = ir::parse_element_type(prec.as_string());
      if (!t) fail(l, "port " + std::to_string(p.id) + " has the unsupported precision '" + prec.as_string() + "'");
      p.type = *t;
    }
    p.names = split_names(n.attribute("names").as_string());
    p.shape = PartialShape();
    for (auto d : n.children("dim")) parse_dim(l, d.text().as_string(), p.shape);
    for (auto a : n.child("rt_info").children("attribute"))
      if (std::string(a.attribute("name").as_string()) == "layout") p.layout = a.attribute("layout").as_string();
    return p;
  }

  void read_layers(const pugi::xml_node& net) {
    auto layers = net.child("layers");
    if (!layers) fail("is not an OpenVINO IR: it has no <layers>");
    for (auto n : layers.children("layer")) {
      layer l;
      l.name = n.attribute("name").as_string();
      l.type = n.attribute("type").as_string();
      l.version = n.attribute("version").as_string();
      auto id = parse_int(n.attribute("id").as_string());
      if (!id) fail(l, "the layer id '" + std::string(n.attribute("id").as_string()) + "' is not an integer");
      l.id = *id;
      if (l.type.empty()) fail(l, "the layer has no type");
      if (index_.count(l.id)) fail(l, "the layer id is used twice");
      for (auto a : n.child("data").attributes()) l.data[a.name()] = a.value();
      for (auto p : n.child("input").children("port")) l.inputs.push_back(read_port(l, p));
      for (auto p : n.child("output").children("port")) l.outputs.push_back(read_port(l, p));
      std::set<int64_t> ids;
      for (const auto* ports : {&l.inputs, &l.outputs})
        for (const auto& p : *ports)
          if (!ids.insert(p.id).second) fail(l, "port " + std::to_string(p.id) + " is declared twice");
      for (auto a : n.child("rt_info").children("attribute")) {
        std::string k = a.attribute("name").as_string();
        if (k == "fused_names" || k == "fused_names_0") l.rt_info["fused_names"] = a.attribute("value").as_string();
      }
      read_sub_graphs(l, n);
      index_[l.id] = layers_.size();
      layers_.push_back(std::move(l));
    }
    if (layers_.empty()) fail("is not an OpenVINO IR: it has no layers");
  }

  /// If's, TensorIterator's and Loop's bodies (each read as an IR of its own), port maps and
  /// back edges.
  void read_sub_graphs(layer& l, const pugi::xml_node& n) const {
    static constexpr int max_depth = 16; // bodies within bodies: a bound, not a stack overflow
    for (const char* which : {"body", "then_body", "else_body"}) {
      auto node = n.child(which);
      if (!node) continue;
      if (depth_ >= max_depth) fail(l, "bodies nest more than " + std::to_string(max_depth) + " deep");
      ir_reader sub(source_, weights_, size_, weights_source_, weights_missing_);
      try {
        l.bodies[which] = sub.read_body(node, depth_ + 1);
      } catch (const Exception& e) {
        fail(l, std::string("its ") + which + ": " + e.what());
      }
    }
    for (const char* which : {"port_map", "then_port_map", "else_port_map"}) {
      auto node = n.child(which);
      if (!node) continue;
      auto& [ins, outs] = l.port_maps[which];
      for (auto m : node.children()) {
        const std::string kind = m.name();
        if (kind != "input" && kind != "output") fail(l, std::string(which) + " has a <" + kind + ">");
        ir::port_mapping pm;
        auto number = [&](const char* k, std::optional<int64_t> def) -> int64_t {
          auto a = m.attribute(k);
          if (!a) {
            if (!def) fail(l, std::string(which) + ": an <" + kind + "> has no " + k);
            return *def;
          }
          auto v = parse_int(a.as_string());
          if (!v) fail(l, std::string(which) + ": " + k + " '" + a.as_string() + "' is not an integer");
          return *v;
        };
        pm.external = number("external_port_id", std::nullopt);
        pm.internal = number("internal_layer_id", std::nullopt);
        if (m.attribute("axis")) pm.axis = number("axis", std::nullopt);
        pm.start = number("start", 0);
        pm.end = number("end", -1);
        pm.stride = number("stride", 1);
        pm.part_size = number("part_size", 1);
        pm.purpose = m.attribute("purpose").as_string();
        (kind == "input" ? ins : outs).push_back(pm);
      }
    }
    for (auto e : n.child("back_edges").children("edge")) {
      auto from = parse_int(e.attribute("from-layer").as_string()), to = parse_int(e.attribute("to-layer").as_string());
      if (!from || !to) fail(l, "a back edge has no integer from-layer and to-layer");
      l.back_edges.emplace_back(*from, *to);
    }
  }

  /// Every layer's (type, version) known; the unknown ones all in one error, each with the
  /// first layer of it (id and name) and how many more there are.
  void check_ops() const {
    std::map<std::string, std::pair<const ir::layer*, std::size_t>> unknown;
    for (const auto& l : layers_) {
      bool own = (l.type == "Parameter" || l.type == "Result" || l.type == "Const") && l.version == "opset1";
      if (own || ir::find_mapper(l.type, l.version)) continue;
      auto& [first, count] = unknown[l.type + " (" + l.version + ")"];
      if (!first) first = &l;
      ++count;
    }
    if (unknown.empty()) return;
    std::string list;
    for (const auto& [what, seen] : unknown) {
      list.append(list.empty() ? "" : ", ").append(what).append(" at layer ").append(std::to_string(seen.first->id));
      list.append(" '").append(seen.first->name).append("'");
      if (seen.second > 1) list.append(" and ").append(std::to_string(seen.second - 1)).append(" more");
    }
    fail("has ops troupe cannot map (type and opset): " + list);
  }

  void read_edges(const pugi::xml_node& net) {
    sources_.assign(layers_.size(), {});
    for (std::size_t i = 0; i < layers_.size(); ++i) sources_[i].assign(layers_[i].inputs.size(), {-1, -1});
    for (auto e : net.child("edges").children("edge")) {
      auto fl = parse_int(e.attribute("from-layer").as_string()), fp = parse_int(e.attribute("from-port").as_string());
      auto tl = parse_int(e.attribute("to-layer").as_string()), tp = parse_int(e.attribute("to-port").as_string());
      std::string text = std::string("edge ") + e.attribute("from-layer").as_string() + ":" +
                         e.attribute("from-port").as_string() + " -> " + e.attribute("to-layer").as_string() + ":" +
                         e.attribute("to-port").as_string();
      if (!fl || !fp || !tl || !tp) fail("has an " + text + " whose ends are not integers");
      auto fi = index_.find(*fl), ti = index_.find(*tl);
      if (ti == index_.end()) fail("has an " + text + " to a missing layer " + std::to_string(*tl));
      const layer& to = layers_[ti->second];
      if (fi == index_.end()) fail(to, text + " comes from a missing layer " + std::to_string(*fl));
      const layer& from = layers_[fi->second];
      auto out = find_port(from.outputs, *fp);
      if (out < 0) fail(from, text + " starts at output port " + std::to_string(*fp) + ", which the layer does not have");
      auto in = find_port(to.inputs, *tp);
      if (in < 0) fail(to, text + " ends at input port " + std::to_string(*tp) + ", which the layer does not have");
      auto& src = sources_[ti->second][static_cast<std::size_t>(in)];
      if (src.first >= 0) fail(to, "input port " + std::to_string(*tp) + " has two incoming edges");
      const port& op = from.outputs[static_cast<std::size_t>(out)];
      const port& ip = to.inputs[static_cast<std::size_t>(in)];
      if (op.type != element_type::undefined && ip.type != element_type::undefined && op.type != ip.type)
        fail(to, "input port " + std::to_string(*tp) + " has precision " + to_string(ip.type) + " but its " + text +
                     " comes from a port of precision " + to_string(op.type) + " (" + ir::describe(from) + ")");
      src = {static_cast<int64_t>(fi->second), out};
    }
    for (std::size_t i = 0; i < layers_.size(); ++i)
      for (std::size_t k = 0; k < layers_[i].inputs.size(); ++k)
        if (sources_[i][k].first < 0)
          fail(layers_[i], "input port " + std::to_string(layers_[i].inputs[k].id) + " has no incoming edge");
  }

  static int64_t find_port(const std::vector<port>& ports, int64_t id) {
    for (std::size_t i = 0; i < ports.size(); ++i)
      if (ports[i].id == id) return static_cast<int64_t>(i);
    return -1;
  }

  /// Kahn's algorithm in file order; what is left is on a cycle or behind one.
  void order() {
    std::vector<int> pending(layers_.size(), 0);
    std::vector<std::vector<std::size_t>> users(layers_.size());
    for (std::size_t i = 0; i < layers_.size(); ++i)
      for (const auto& s : sources_[i]) {
        ++pending[i];
        users[static_cast<std::size_t>(s.first)].push_back(i);
      }
    std::set<std::size_t> ready;
    for (std::size_t i = 0; i < layers_.size(); ++i)
      if (pending[i] == 0) ready.insert(i);
    while (!ready.empty()) {
      std::size_t i = *ready.begin();
      ready.erase(ready.begin());
      order_.push_back(i);
      for (auto u : users[i])
        if (--pending[u] == 0) ready.insert(u);
    }
    if (order_.size() == layers_.size()) return;
    // Walk back along unfinished inputs until a layer repeats: that one is on a cycle.
    std::size_t at = 0;
    while (pending[at] == 0) ++at;
    std::vector<bool> seen(layers_.size(), false);
    while (!seen[at]) {
      seen[at] = true;
      for (const auto& s : sources_[at])
        if (pending[static_cast<std::size_t>(s.first)] > 0) {
          at = static_cast<std::size_t>(s.first);
          break;
        }
    }
    fail(layers_[at], "the layer is on a cycle of edges");
  }

  Tensor read_const(const layer& l) const {
    auto type_text = l.data.count("element_type") ? l.data.at("element_type") : std::string();
    auto t = ir::parse_element_type(type_text);
    if (!t || *t == element_type::undefined)
      fail(l, "the constant's element_type '" + type_text + "' is not supported");
    if (!l.data.count("shape")) fail(l, "the constant has no shape");
    PartialShape ps = parse_shape_attr(l, l.data.at("shape"));
    if (!ps.rank_known || !ps.is_static()) fail(l, "the constant's shape '" + l.data.at("shape") + "' is not static");
    auto offset = parse_int(l.data.count("offset") ? l.data.at("offset") : "");
    auto size = parse_int(l.data.count("size") ? l.data.at("size") : "");
    if (!offset || !size || *offset < 0 || *size < 0) fail(l, "the constant has no valid offset and size");
    int64_t count = 1;
    for (auto d : ps.dims) {
      if (d != 0 && count > max_dim / d) fail(l, "the constant's shape is too large");
      count *= d;
    }
    const auto need = static_cast<uint64_t>(count) * element_size(*t);
    if (static_cast<uint64_t>(*size) != need)
      fail(l, "the constant's size " + std::to_string(*size) + " does not match its shape " + ps.to_string() + " of " +
                  to_string(*t) + " (" + std::to_string(need) + " bytes)");
    if (weights_missing_ && *size > 0) fail(l, "the weights file '" + weights_source_ + "' cannot be opened");
    if (static_cast<uint64_t>(*offset) > size_ || static_cast<uint64_t>(*size) > size_ - static_cast<uint64_t>(*offset))
      fail(l, "the constant's bytes " + std::to_string(*offset) + ".." +
                  std::to_string(static_cast<uint64_t>(*offset) + static_cast<uint64_t>(*size)) + // both >= 0: no wrap
                  " lie past the end of the weights '" + weights_source_ + "' (" + std::to_string(size_) + " bytes)");
    Tensor r(*t, ps.dims);
    if (*size > 0) std::memcpy(r.data(), weights_ + *offset, static_cast<std::size_t>(*size));
    if (*t == element_type::boolean) // any non-zero byte is true; a bool must hold 0 or 1
      for (int64_t k = 0; k < count; ++k) r.data<unsigned char>()[k] = r.data<unsigned char>()[k] ? 1 : 0;
    return r;
  }

  std::string port_name(const layer& l, std::size_t k) {
    const port& p = l.outputs[k];
    std::string base;
    for (const auto& n : p.names)
      if (!used_.count(n)) {
        base = n;
        break;
      }
    if (base.empty()) base = p.names.empty() ? (l.outputs.size() == 1 ? l.name : l.name + ":" + std::to_string(p.id))
                                             : p.names.front();
    if (base.empty()) base = "layer_" + std::to_string(l.id);
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

  std::string op_name(const std::string& base) {
    std::string name = base;
    for (int i = 1; !op_names_.insert(name).second; ++i) name = base + "_" + std::to_string(i);
    return name;
  }

  Graph build() {
    g_.source = source_;
    g_.opset = ir::graph_opset;
    std::vector<std::vector<ValueId>> outs(layers_.size());
    std::vector<std::vector<std::size_t>> unsupported(layers_.size());
    std::vector<ValueId> results;
    for (std::size_t i : order_) {
      const layer& l = layers_[i];
      std::vector<ValueId> in;
      for (std::size_t k = 0; k < l.inputs.size(); ++k) {
        auto [from, port_index] = sources_[i][k];
        const auto f = static_cast<std::size_t>(from);
        const auto pi = static_cast<std::size_t>(port_index);
        if (std::find(unsupported[f].begin(), unsupported[f].end(), pi) != unsupported[f].end())
          fail(l, "input port " + std::to_string(l.inputs[k].id) + " reads output port " +
                      std::to_string(layers_[f].outputs[pi].id) + " of " + ir::describe(layers_[f]) +
                      ", which troupe does not produce");
        in.push_back(outs[f][pi]);
      }
      if (l.type == "Result") {
        if (in.size() != 1) fail(l, "a Result needs one input");
        if (!l.inputs.empty() && !l.inputs[0].layout.empty()) g_.value(in[0]).layout = l.inputs[0].layout;
        results.push_back(in[0]);
        result_ids_.push_back(l.id);
        continue;
      }
      if (l.type == "Parameter") {
        if (l.outputs.size() != 1) fail(l, "a Parameter needs one output port");
        auto t = ir::parse_element_type(l.data.count("element_type") ? l.data.at("element_type") : "");
        if (!t) t = l.outputs[0].type;
        if (*t == element_type::undefined) t = l.outputs[0].type;
        if (*t == element_type::undefined) fail(l, "the Parameter has no element type");
        PartialShape shape = l.data.count("shape") ? parse_shape_attr(l, l.data.at("shape")) : l.outputs[0].shape;
        outs[i] = {g_.add_input(port_name(l, 0), *t, shape)};
        parameter_ids_.push_back(l.id);
        g_.value(outs[i][0]).layout = l.outputs[0].layout;
        continue;
      }
      if (l.type == "Const") {
        if (l.outputs.size() != 1) fail(l, "a Const needs one output port");
        outs[i] = {g_.add_constant(port_name(l, 0), read_const(l))};
        continue;
      }
      const std::size_t first_new_value = g_.values.size();
      const std::size_t first_new_op = g_.ops.size();
      ir::builder b(g_, l, in, "'" + source_ + "': " + ir::describe(l) + ": ");
      std::vector<ValueId> produced = (*ir::find_mapper(l.type, l.version))(b);
      if (produced.size() != l.outputs.size())
        fail(l, "the layer declares " + std::to_string(l.outputs.size()) + " output ports; troupe maps " +
                    std::to_string(produced.size()));
      unsupported[i] = b.unsupported_outputs;
      for (std::size_t k = 0; k < produced.size(); ++k) {
        if (produced[k] == no_value) continue;
        // A value the layer did not make (an input passed through) gets an Identity of its own.
        if (static_cast<std::size_t>(produced[k]) < first_new_value || is_claimed(produced[k]))
          produced[k] = b.op("Identity", {produced[k]});
        claimed_.insert(produced[k]);
        g_.value(produced[k]).name = port_name(l, k);
      }
      name_ops(l, first_new_op, produced);
      outs[i] = std::move(produced);
    }
    g_.outputs = results;
    if (g_.outputs.empty()) fail("has no Result layer");
    rename_clashing_internal_values();
    // quantize_dynamic's ops written as arithmetic: the ops again, their arithmetic dropped.
    const bool integer_ops = std::any_of(g_.ops.begin(), g_.ops.end(), [](const Op& o) {
      return o.type == "MatMulInteger" || o.type == "ConvInteger";
    });
    if (ir::recover_dynamic_quantize(g_) || integer_ops) g_.prune();
    infer_shapes(g_);
    return std::move(g_);
  }

  bool is_claimed(ValueId v) const { return claimed_.count(v) != 0; }

  /// The op making the layer's first output takes the layer's name (and its fused names); the
  /// others keep "<layer>/<type>_<k>".
  void name_ops(const layer& l, std::size_t first_op, const std::vector<ValueId>& produced) {
    ValueId main = produced.empty() ? no_value : produced.front();
    for (std::size_t k = first_op; k < g_.ops.size(); ++k) {
      Op& o = g_.ops[k];
      bool is_main = main != no_value && std::find(o.outputs.begin(), o.outputs.end(), main) != o.outputs.end();
      o.name = op_name(is_main ? l.name : o.name);
      if (is_main) {
        for (const auto& [key, v] : l.rt_info) o.rt_info[key] = v;
      }
    }
  }

  /// An internal value ("<layer>/<op>:0") that happens to equal a tensor name gets a suffix.
  void rename_clashing_internal_values() {
    for (std::size_t v = 0; v < g_.values.size(); ++v) {
      auto& val = g_.values[v];
      if (claimed_.count(static_cast<ValueId>(v)) || used_.count(val.name) == 0) continue;
      bool is_port = false;
      for (auto in : g_.inputs) is_port = is_port || in == static_cast<ValueId>(v);
      if (is_port || val.constant) continue;
      std::string base = val.name + "#";
      std::string name = base;
      for (int i = 1; used_.count(name); ++i) name = base + std::to_string(i);
      used_.insert(name);
      val.name = name;
    }
  }

  std::string source_;
  const unsigned char* weights_;
  std::size_t size_;
  std::string weights_source_;
  bool weights_missing_;
  std::string name_;
  std::vector<layer> layers_;
  std::unordered_map<int64_t, std::size_t> index_;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> sources_; ///< per layer, per input: (layer index, port index)
  std::vector<std::size_t> order_;
  Graph g_;
  std::unordered_set<std::string> used_, op_names_;
  std::unordered_set<ValueId> claimed_;
  int depth_ = 0;                                 ///< how deep in bodies this reader reads
  std::vector<int64_t> parameter_ids_, result_ids_; ///< per graph input and output: its layer id
};

std::string read_whole(const std::string& path, const char* what, bool* missing) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    if (missing) {
      *missing = true;
      return {};
    }
    throw Exception(std::string("cannot open ") + what + " '" + path + "'");
  }
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw Exception(std::string("cannot read ") + what + " '" + path + "'");
  return std::move(ss).str();
}

} // namespace

bool is_ir_path(const std::string& path) {
  if (path.size() < 4) return false;
  std::string ext = path.substr(path.size() - 4);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".xml";
}

Graph read_ir_file(const std::string& xml_path, const std::string& bin_path) {
  std::string bin = bin_path;
  if (bin.empty()) bin = (is_ir_path(xml_path) ? xml_path.substr(0, xml_path.size() - 4) : xml_path) + ".bin";
  std::string text = read_whole(xml_path, "IR file", nullptr);
  bool missing = false;
  std::string weights = read_whole(bin, "weights file", &missing);
  return ir_reader(xml_path, weights.data(), weights.size(), bin, missing).read(text);
}

Graph read_ir_memory(const std::string& xml_text, const void* weights, std::size_t size, const std::string& source) {
  return ir_reader(source, weights, size, source + " (weights)", weights == nullptr && size == 0).read(xml_text);
}

} // namespace troupe::graph
