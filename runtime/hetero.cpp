#include "runtime/hetero.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <troupe/exception.hpp>

#include "actors/hetero_flow.hpp"
#include "actors/shape_dispatch.hpp"
#include "actors/subgraph_actor.hpp"
#include "graph/dot_writer.hpp"
#include "graph/partition.hpp"
#include "graph/partition_dot.hpp"
#include "graph/placement.hpp"
#include "runtime/compile_pipeline.hpp"
#include "runtime/device_string.hpp"

namespace troupe {

namespace {

const hetero_member& member(const std::vector<hetero_member>& members, const std::string& name) {
  for (const auto& m : members)
    if (m.name == name) return m;
  throw Exception("HETERO: device '" + name + "' is not in the priority list");
}

} // namespace

hetero_plan plan_hetero(const graph::Graph& src, const std::vector<hetero_member>& members) {
  hetero_plan plan{src, {}, {}, {}, members.front().name, true};
  auto& g = plan.g;
  for (auto id : g.inputs) plan.is_static = plan.is_static && g.value(id).shape.is_static();
  // Affinities by canonical name ("GPU" is GPU.0), before anything compares them.
  for (auto& op : g.ops)
    if (auto it = op.rt_info.find("affinity"); it != op.rt_info.end()) it->second = canonical_device_name(it->second);
  // Place the ops as the model has them (after constant folding), write every placement down
  // as an affinity, then fuse: the passes merge only ops of one device, so each fused op still
  // runs where its parts were placed.
  // Dynamic inputs: an outline. The ops are placed as they are, unfolded (a single device's
  // query_model also answers such a model without folding it), and an affinity to a listed
  // device is taken on trust: a device may refuse an op only because its shapes are not known
  // yet. Each set of concrete shapes is planned again, and checked, on first use.
  if (plan.is_static) fold_constants(g);
  std::vector<std::string> names;
  for (const auto& m : members) names.push_back(m.name);
  graph::support_query query = [&](const std::string& device, const graph::Graph& q, const graph::Op& op) {
    if (!plan.is_static)
      if (auto it = op.rt_info.find("affinity"); it != op.rt_info.end() && it->second == device) return graph::op_support{true, ""};
    auto s = member(members, device).dev->query(q, op);
    return graph::op_support{s.supported, s.reason};
  };
  auto placed = graph::place_ops(g, names, query);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    g.ops[i].rt_info["affinity"] = placed[i].device;
    plan.placed[g.ops[i].name] = placed[i].device;
    plan.why[g.ops[i].name] = placed[i].why;
  }
  if (plan.is_static) fuse_ops(g);
  for (const auto& op : g.ops) {
    if (plan.is_static) {
      auto s = member(members, op.rt_info.at("affinity")).dev->query(g, op);
      if (!s.supported)
        throw Exception("HETERO: " + op.rt_info.at("affinity") + " cannot run " + graph::describe(op) +
                        " as the passes fused it: " + s.reason);
    }
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

namespace {

/// One split, built: its runner and what the compiled model reports of it.
struct built_flow {
  std::unique_ptr<actors::runner> run;
  std::vector<std::string> devices; ///< used, in priority order
  int submodels = 0;
  int optimal_requests = 1;
};

/// What the compiled model reports of a split: the devices it uses (in priority order, as
/// OpenVINO lists EXECUTION_DEVICES), the subgraph count, and every stage busy at once (one
/// request per stream of every stage).
built_flow describe_split(const std::vector<graph::subgraph_part>& parts, const std::vector<hetero_member>& members) {
  built_flow b;
  int streams = 0;
  for (const auto& m : members) {
    bool used = false;
    for (const auto& part : parts)
      if (part.device == m.name) {
        used = true;
        streams += m.config.streams;
      }
    if (used) b.devices.push_back(m.name);
  }
  b.submodels = static_cast<int>(parts.size());
  b.optimal_requests = std::max(1, streams);
  return b;
}

/// Puts a split's figures where the compiled model reads them.
void tell(CompiledModel::Impl::split_report& r, const built_flow& b) {
  std::lock_guard lock(r.mutex);
  r.devices = b.devices;
  r.submodels = b.submodels;
  r.optimal_requests = b.optimal_requests;
}

/// Compiles each part of a static plan on its device and chains them in a hetero_flow.
built_flow build_flow(const hetero_plan& plan, const std::vector<hetero_member>& members,
                      const std::vector<std::string>& input_names, const std::vector<std::string>& output_names,
                      caf::actor_system& sys) {
  const graph::Graph& g = plan.g;
  auto parts = graph::partition_graph(g, plan.device_of).parts;
  auto built = describe_split(parts, members);

  // Who reads each value: (stage, input slot).
  std::map<graph::ValueId, std::vector<actors::tensor_route>> readers;
  for (std::size_t s = 0; s < parts.size(); ++s)
    for (std::size_t k = 0; k < parts[s].inputs.size(); ++k)
      readers[parts[s].inputs[k]].push_back({static_cast<int>(s), k});
  // Model outputs by name: the passes keep the names of graph inputs and outputs.
  std::map<graph::ValueId, std::vector<std::size_t>> output_slots;
  actors::flow_spec spec;
  spec.outputs = output_names.size();
  spec.constant_outputs.resize(spec.outputs);
  for (std::size_t o = 0; o < output_names.size(); ++o) {
    auto id = g.find_value(output_names[o]);
    if (id == graph::no_value) throw Exception("HETERO: output '" + output_names[o] + "' was lost");
    if (g.is_constant(id)) spec.constant_outputs[o] = *g.value(id).constant;
    else output_slots[id].push_back(o);
  }
  auto routes_of = [&](graph::ValueId id) {
    auto r = readers.count(id) ? readers[id] : std::vector<actors::tensor_route>{};
    if (output_slots.count(id))
      for (auto o : output_slots[id]) r.push_back({-1, o});
    return r;
  };
  for (const auto& name : input_names) {
    auto id = g.find_value(name);
    spec.input_routes.push_back(id == graph::no_value ? std::vector<actors::tensor_route>{} : routes_of(id));
  }

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
    try {
      sub.fixed = actors::make_program(compile_graph(graph::extract_part(g, part), *m.dev, m.config.compile),
                                       m.config.profiling);
    } catch (const std::exception& e) {
      throw Exception("HETERO: compiling " + st.label + ": " + e.what());
    }
    st.run = std::make_unique<actors::subgraph>(sys, std::move(sub));
    spec.stages.push_back(std::move(st));
  }
  built.run = std::make_unique<actors::hetero_flow>(sys, std::move(spec));
  return built;
}

} // namespace

void compile_hetero(CompiledModel::Impl& cm, const graph::Graph& src, const hetero_plan& plan,
                    const std::vector<hetero_member>& members, caf::actor_system& sys) {
  std::vector<std::string> input_names, output_names;
  for (const auto& p : cm.inputs) input_names.push_back(p.get_any_name());
  for (const auto& p : cm.outputs) output_names.push_back(p.get_any_name());
  auto report = std::make_shared<CompiledModel::Impl::split_report>();
  if (plan.is_static) {
    auto built = build_flow(plan, members, input_names, output_names, sys);
    tell(*report, built);
    cm.runner = std::move(built.run);
  } else {
    // Dynamic inputs: each distinct set of input shapes is placed, split and compiled on first
    // use, and kept. The compiled model reports the outline until the first split is made,
    // then the devices every split so far uses and the latest split's figures.
    tell(*report, describe_split(graph::partition_graph(plan.g, plan.device_of).parts, members));
    // What does not depend on the shapes (constant subgraphs, transposed weights) folds once.
    auto folded = src;
    fold_constants(folded);
    auto g = std::make_shared<const graph::Graph>(std::move(folded));
    auto used = std::make_shared<std::set<std::string>>();
    // Each member device keeps what it derives from the weights for the next shape's split.
    auto kept = members;
    for (auto& m : kept) m.config.compile.derived = std::make_shared<kernels::derived_constants>();
    cm.runner = std::make_unique<actors::shape_dispatch>(
        sys,
        [g, members = std::move(kept), input_names, output_names, &sys, report, used](const std::vector<Shape>& shapes) {
          const auto concrete = plan_hetero(with_input_shapes(*g, shapes), members);
          auto built = build_flow(concrete, members, input_names, output_names, sys);
          // The builder actor runs one build at a time: `used` needs no lock.
          used->insert(built.devices.begin(), built.devices.end());
          built.devices.clear();
          for (const auto& m : members)
            if (used->count(m.name)) built.devices.push_back(m.name);
          tell(*report, built);
          return std::move(built.run);
        },
        cm.config.runtime_cache_capacity, cm.stats);
  }
  cm.split = std::move(report);
}

} // namespace troupe
