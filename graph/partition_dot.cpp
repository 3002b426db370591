#include "graph/partition_dot.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "graph/dot_writer.hpp"

namespace troupe::graph {

std::string partition_to_dot(const Graph& g, const partition& p, const std::map<std::string, std::string>& notes,
                             const std::string& title) {
  std::ostringstream out;
  out << "digraph subgraphs {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  if (!title.empty()) out << "  labelloc=t;\n  label=\"" << dot_escape(title) << "\";\n";
  std::vector<std::string> devices;
  std::map<ValueId, std::string> source; // who hands each crossing tensor on
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    out << "  in" << i << " [shape=ellipse, label=\"" << dot_escape(v.name + "\n" + v.shape.to_string()) << "\"];\n";
    source[g.inputs[i]] = "in" + std::to_string(i);
  }
  for (std::size_t s = 0; s < p.parts.size(); ++s) {
    const auto& part = p.parts[s];
    auto it = std::find(devices.begin(), devices.end(), part.device);
    if (it == devices.end()) it = devices.insert(devices.end(), part.device);
    std::string label = "subgraph " + std::to_string(s) + " [" + part.device + "]\n" + std::to_string(part.ops.size()) +
                        (part.ops.size() == 1 ? " op" : " ops");
    for (std::size_t k = 0; k < part.ops.size() && k < 3; ++k)
      label += "\n" + g.ops[static_cast<std::size_t>(part.ops[k])].name;
    if (part.ops.size() > 3) label += "\n...";
    out << "  sg" << s << " [shape=box, style=filled, fillcolor=\""
        << device_colour(static_cast<std::size_t>(it - devices.begin())) << "\", label=\"" << dot_escape(label)
        << "\"];\n";
    for (auto v : part.outputs) source[v] = "sg" + std::to_string(s);
  }
  auto edge = [&](ValueId v, const std::string& to) {
    auto it = source.find(v);
    if (it == source.end()) return;
    const Value& val = g.value(v);
    const auto note = notes.find(val.name);
    out << "  " << it->second << " -> " << to << " [label=\""
        << dot_escape(val.name + " " + val.shape.to_string() + (note == notes.end() ? "" : "\n" + note->second)) << "\"];\n";
  };
  for (std::size_t s = 0; s < p.parts.size(); ++s)
    for (auto v : p.parts[s].inputs) edge(v, "sg" + std::to_string(s));
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const Value& v = g.value(g.outputs[i]);
    out << "  out" << i << " [shape=ellipse, label=\"" << dot_escape(v.name + "\n" + v.shape.to_string()) << "\"];\n";
    edge(g.outputs[i], "out" + std::to_string(i));
  }
  out << "}\n";
  return out.str();
}

} // namespace troupe::graph
