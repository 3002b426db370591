#include "graph/dot_writer.hpp"

#include <algorithm>
#include <sstream>

namespace troupe::graph {

std::string dot_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (c == '\n') { r += "\\n"; continue; }
    r += c;
  }
  return r;
}

const char* device_colour(std::size_t n) {
  static const char* palette[] = {"#8ecae6", "#ffb703", "#90be6d", "#f28482", "#cdb4db", "#d4a373"};
  return palette[n % (sizeof palette / sizeof palette[0])];
}

namespace {

const auto& esc = dot_escape;

std::string shape_label(const Value& v) {
  std::string r;
  if (v.type != element_type::undefined) r.append(to_string(v.type)).append(" ");
  return r.append(v.shape.to_string());
}

} // namespace

std::string to_dot(const Graph& g, const std::vector<std::string>* device_of, const std::vector<std::string>* why_of) {
  std::ostringstream out;
  out << "digraph model {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  std::vector<std::string> devices; // in order of first appearance, for colours and the legend
  auto colour_of = [&](const std::string& d) {
    auto it = std::find(devices.begin(), devices.end(), d);
    if (it == devices.end()) it = devices.insert(devices.end(), d);
    return device_colour(static_cast<std::size_t>(it - devices.begin()));
  };
  auto prod = g.producers();
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    out << "  in" << i << " [shape=ellipse, label=\"" << esc(v.name) << "\\n" << esc(shape_label(v)) << "\"];\n";
  }
  for (std::size_t k = 0; k < g.ops.size(); ++k) {
    const Op& op = g.ops[k];
    std::string label = op.type;
    if (op.has_attr("activation")) label.append(" + ").append(op.attr_string("activation", ""));
    label.append("\n").append(op.name);
    for (auto o : op.outputs)
      if (o != no_value) label.append("\n").append(shape_label(g.value(o)));
    if (device_of) label.append("\n[").append((*device_of)[k]).append("]");
    out << "  op" << k << " [shape=box, label=\"" << esc(label) << "\"";
    if (device_of) out << ", style=filled, fillcolor=\"" << colour_of((*device_of)[k]) << "\"";
    if (why_of) out << ", tooltip=\"" << esc((*why_of)[k]) << "\"";
    else if (auto it = op.rt_info.find("affinity"); it != op.rt_info.end())
      out << ", tooltip=\"affinity " << esc(it->second) << "\"";
    out << "];\n";
  }
  auto source_of = [&](ValueId v) -> std::string {
    int p = prod[static_cast<std::size_t>(v)];
    if (p >= 0) return std::string("op").append(std::to_string(p));
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      if (g.inputs[i] == v) return std::string("in").append(std::to_string(i));
    return {};
  };
  for (std::size_t k = 0; k < g.ops.size(); ++k)
    for (auto v : g.ops[k].inputs) {
      if (v == no_value) continue;
      std::string src = source_of(v);
      if (!src.empty()) out << "  " << src << " -> op" << k << ";\n";
    }
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const Value& v = g.value(g.outputs[i]);
    out << "  out" << i << " [shape=ellipse, label=\"" << esc(v.name) << "\\n" << esc(shape_label(v)) << "\"];\n";
    std::string src = source_of(g.outputs[i]);
    if (!src.empty()) out << "  " << src << " -> out" << i << ";\n";
  }
  if (!devices.empty()) {
    out << "  subgraph cluster_legend {\n    label=\"devices\";\n";
    for (std::size_t d = 0; d < devices.size(); ++d)
      out << "    legend" << d << " [shape=box, style=filled, fillcolor=\"" << device_colour(d) << "\", label=\""
          << esc(devices[d]) << "\"];\n";
    out << "  }\n";
  }
  out << "}\n";
  return out.str();
}

} // namespace troupe::graph
