#pragma once
/// -exec_graph_path: the executed graph as troupe's public API can describe it. OpenVINO
/// serializes the runtime model (ops, edges and runtime info); troupe's API has no runtime
/// model, so this writes an IR-shaped XML of the executed ops in execution order, each with
/// what the profiling counters say (the op type, the kernel that ran it, status and time) and
/// no edges.
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

namespace troupe::cli {

void write_exec_graph(const std::string& path, const std::string& model_name, const std::string& device,
                      const std::vector<ProfilingInfo>& counters);

} // namespace troupe::cli
