#include "runtime/hetero.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <troupe/exception.hpp>

#include "actors/hetero_flow.hpp"
#include "actors/subgraph_actor.hpp"
#include "graph/dot_writer.hpp"
#include "graph/partition.hpp"
#include "graph/partition_dot.hpp"
#include "graph/placement.hpp"
#include "runtime/compile_pipeline.hpp"

namespace troupe {

namespace {

const hetero_member& member(const std::vector<hetero_member>& members, const std::string& name) {
  for (const auto& m : members)
    if (m.name == name) return m;
  throw Exception("HETERO: device '" + name + "' is not in the priority list");
}

} // namespace

hetero_plan plan_hetero(const graph::Graph& src, const std::vector<hetero_member>& members, bool to_compile) {
  hetero_plan plan{src, {}, {}, {}, members.front().name};
  auto& g = plan.g;
  bool all_static = true;
  for (auto id : g.inputs) {
    if (g.value(id).shape.is_static()) continue;
    all_static = false;
    if (to_compile)
      throw Exception("HETERO: input '" + g.value(id).name + "' has the dynamic shape " + g.value(id).shape.to_string() +
                      "; HETERO splits a model with static shapes: reshape it first (Model::reshape)");
  }
  // Affinities by canonical name ("GPU" is GPU.0), before anything compares them.
  for (auto& op : g.ops)
    if (auto it = op.rt_info.find("affinity"); it != op.rt_info.end())
      for (const auto& m : members)
        if (std::find(m.aliases.begin(), m.aliases.end(), it->second) != m.aliases.end()) it->second = m.name;
  // Place the ops as the model has them (after constant folding), write every placement down
  // as an affinity, then fuse: the passes merge only ops of one device, so each fused op still
  // runs where its parts were placed.
  // A query of a model with dynamic inputs places its ops as they are (a single device's
  // query_model also answers such a model without folding it).
  if (all_static) fold_constants(g);
  std::vector<std::string> names;
  for (const auto& m : members) names.push_back(m.name);
  graph::support_query query = [&](const std::string& device, const graph::Graph& q, const graph::Op& op) {
    auto s = member(members, device).dev->query(q, op);
    return graph::op_support{s.supported, s.reason};
  };
  auto placed = graph::place_ops(g, names, query);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    g.ops[i].rt_info["affinity"] = placed[i].device;
    plan.placed[g.ops[i].name] = placed[i].device;
    plan.why[g.ops[i].name] = placed[i].why;
  }
  if (all_static) fuse_ops(g);
  for (const auto& op : g.ops) {
    auto s = member(members, op.rt_info.at("affinity")).dev->query(g, op);
    if (!s.supported)
      throw Exception("HETERO: " + op.rt_info.at("affinity") + " cannot run " + graph::describe(op) +
                      " as the passes fused it: " + s.reason);
    plan.device_of.push_back(op.rt_info.at("affinity"));
  }
  return plan;
}

std::map<std::string, std::string> hetero_query(const graph::Graph& src, const hetero_plan& plan) {
  std::map<std::string, std::string> r;
  // Folded into constants: computed while compiling, on the host; reported on the first
  // device of the list, as a single device reports folded ops as its own.
  for (const auto& op : src.ops) {
    auto it = plan.placed.find(op.name);
    r[op.name] = it != plan.placed.end() ? it->second : plan.first_device;
  }
  return r;
}

std::string hetero_dot_folder(const AnyMap& props) {
  if (auto it = props.find("HETERO_DUMP_GRAPH_DOT"); it != props.end()) {
    const auto& v = it->second.as_string();
    if (v == "NO" || v == "false" || v.empty()) return "";
    return v == "YES" || v == "true" ? "." : v;
  }
  const char* env = std::getenv("TROUPE_HETERO_VISUALIZE");
  return env && std::string(env) == "1" ? "." : "";
}

void write_hetero_dots(const hetero_plan& plan, const std::string& model_name, const std::string& folder) {
  std::string name = model_name;
  if (auto dot = name.rfind(".onnx"); dot != std::string::npos && dot + 5 == name.size()) name.resize(dot);
  std::vector<std::string> why;
  for (const auto& op : plan.g.ops) {
    auto it = plan.why.find(op.name);
    why.push_back(it != plan.why.end() ? it->second : "");
  }
  const auto parts = graph::partition_graph(plan.g, plan.device_of);
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  for (const auto& [file, text] :
       {std::pair{"hetero_affinity_" + name + ".dot", graph::to_dot(plan.g, &plan.device_of, &why)},
        std::pair{"hetero_subgraphs_" + name + ".dot", graph::partition_to_dot(plan.g, parts)}}) {
    const auto path = (std::filesystem::path(folder) / file).string();
    std::ofstream out(path);
    out << text;
    if (!out) throw Exception("HETERO_DUMP_GRAPH_DOT: cannot write " + path);
  }
}

void compile_hetero(CompiledModel::Impl& cm, const hetero_plan& plan, const std::vector<hetero_member>& members,
                    caf::actor_system& sys) {
  const graph::Graph& g = plan.g;
  auto parts = graph::partition_graph(g, plan.device_of).parts;

  // Who reads each value: (stage, input slot).
  std::map<graph::ValueId, std::vector<actors::tensor_route>> readers;
  for (std::size_t s = 0; s < parts.size(); ++s)
    for (std::size_t k = 0; k < parts[s].inputs.size(); ++k)
      readers[parts[s].inputs[k]].push_back({static_cast<int>(s), k});
  // Model outputs by name: the passes keep the names of graph inputs and outputs.
  std::map<graph::ValueId, std::vector<std::size_t>> output_slots;
  actors::flow_spec spec;
  spec.outputs = cm.outputs.size();
  spec.constant_outputs.resize(spec.outputs);
  for (std::size_t o = 0; o < cm.outputs.size(); ++o) {
    auto id = g.find_value(cm.outputs[o].get_any_name());
    if (id == graph::no_value) throw Exception("HETERO: output '" + cm.outputs[o].get_any_name() + "' was lost");
    if (g.is_constant(id)) spec.constant_outputs[o] = *g.value(id).constant;
    else output_slots[id].push_back(o);
  }
  auto routes_of = [&](graph::ValueId id) {
    auto r = readers.count(id) ? readers[id] : std::vector<actors::tensor_route>{};
    if (output_slots.count(id))
      for (auto o : output_slots[id]) r.push_back({-1, o});
    return r;
  };
  for (const auto& in : cm.inputs) {
    auto id = g.find_value(in.get_any_name());
    spec.input_routes.push_back(id == graph::no_value ? std::vector<actors::tensor_route>{} : routes_of(id));
  }

  std::vector<std::string> devices_used;
  int optimal_requests = 0;
  for (std::size_t s = 0; s < parts.size(); ++s) {
    const auto& part = parts[s];
    const auto& m = member(members, part.device);
    actors::stage_spec st;
    st.label = "subgraph " + std::to_string(s) + " (" + part.device + ")";
    st.profile_prefix = "subgraph" + std::to_string(s) + ": ";
    st.inputs = part.inputs.size();
    for (auto id : part.inputs) {
      // Produced by a part on another device: a crossing (model inputs are not).
      std::string from;
      for (std::size_t q = 0; q < s; ++q)
        if (std::find(parts[q].outputs.begin(), parts[q].outputs.end(), id) != parts[q].outputs.end() &&
            parts[q].device != part.device)
          from = g.value(id).name + " from " + parts[q].device;
      st.crossings.push_back(from);
    }
    for (auto id : part.outputs) st.output_routes.push_back(routes_of(id));
    actors::subgraph_spec sub;
    sub.streams = static_cast<std::size_t>(m.config.streams);
    sub.pool = m.pool;
    auto prog = std::make_shared<actors::program>();
    try {
      prog->prototype = compile_graph(graph::extract_part(g, part), *m.dev, m.config.compile);
      prog->profiling = m.config.profiling;
    } catch (const std::exception& e) {
      throw Exception("HETERO: compiling " + st.label + ": " + e.what());
    }
    sub.fixed = std::move(prog);
    st.run = std::make_unique<actors::subgraph>(sys, std::move(sub));
    spec.stages.push_back(std::move(st));
    if (std::find(devices_used.begin(), devices_used.end(), part.device) == devices_used.end())
      devices_used.push_back(part.device);
    optimal_requests += m.config.streams;
  }
  // Priority order, as OpenVINO lists EXECUTION_DEVICES.
  cm.execution_devices.clear();
  for (const auto& m : members)
    if (std::find(devices_used.begin(), devices_used.end(), m.name) != devices_used.end())
      cm.execution_devices.push_back(m.name);
  cm.submodels = static_cast<int>(parts.size());
  // Every stage busy at once: one request per stream of every stage.
  cm.optimal_requests = std::max(1, optimal_requests);
  cm.runner = std::make_unique<actors::hetero_flow>(sys, std::move(spec));
}

} // namespace troupe
