#include "tools/exec_graph.hpp"

#include "tools/file_io.hpp"
#include "tools/perf_counters.hpp"

namespace troupe::cli {

namespace {

std::string xml_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
    case '&': r += "&amp;"; break;
    case '<': r += "&lt;"; break;
    case '>': r += "&gt;"; break;
    case '"': r += "&quot;"; break;
    case '\'': r += "&apos;"; break;
    default: r += c;
    }
  }
  return r;
}

} // namespace

void write_exec_graph(const std::string& path, const std::string& model_name, const std::string& device,
                      const std::vector<ProfilingInfo>& counters) {
  if (counters.empty())
    throw Exception("-exec_graph_path: no profiling counters to describe the executed graph with (no inference ran)");
  std::string x = "<?xml version=\"1.0\"?>\n";
  x += "<!-- troupe's executed graph: the ops as they ran on " + xml_escape(device) +
       ", in execution order, from the profiling counters of request 0's last inference. troupe's API has no "
       "runtime model, so there are no edges. -->\n";
  x += "<net name=\"" + xml_escape(model_name) + "\" version=\"11\">\n\t<layers>\n";
  for (std::size_t i = 0; i < counters.size(); ++i) {
    const auto& p = counters[i];
    x += "\t\t<layer id=\"" + std::to_string(i) + "\" name=\"" + xml_escape(p.node_name) + "\" type=\"" +
         xml_escape(p.node_type) + "\">\n";
    x += "\t\t\t<data execOrder=\"" + std::to_string(i) + "\" execStatus=\"" + status_name(p.status) +
         "\" execTimeMcs=\"" + std::to_string(p.real_time.count()) + "\" layerType=\"" + xml_escape(p.node_type) +
         "\" originalLayersNames=\"" + xml_escape(p.node_name) + "\" primitiveType=\"" + xml_escape(p.exec_type) +
         "\"/>\n";
    x += "\t\t</layer>\n";
  }
  x += "\t</layers>\n\t<edges/>\n</net>\n";
  write_file(path, x);
}

} // namespace troupe::cli
