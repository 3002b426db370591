#include "runtime/hetero.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
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
#include "graph/cost_placement.hpp"
#include "runtime/compile_pipeline.hpp"
#include "runtime/device_string.hpp"
#include "runtime/hetero_calibration.hpp"
#include "runtime/hetero_cost_cache.hpp"
#include "runtime/cache_files.hpp"
#include "runtime/nominal_rates.hpp"

namespace troupe {

namespace {

/// "312.4 us", "2.05 ms".
std::string time_text(double us) {
  if (!std::isfinite(us)) return "nothing (failed)";
  char b[32];
  if (us < 1000) std::snprintf(b, sizeof b, "%.1f us", us);
  else std::snprintf(b, sizeof b, "%.2f ms", us / 1000);
  return b;
}

/// Where COST's numbers came from.
struct cost_source {
  std::string text;     ///< "calibration", ...
  bool measured = false; ///< timed on the devices (now or kept), not the nominal rates
  bool kept = false;     ///< read from CACHE_DIR
  std::string dir;       ///< CACHE_DIR of the first member that has one; empty: none
  std::array<uint64_t, 2> key{};
};

/// Each op's time on each member and each crossing's: for COST, the calibration kept in a
/// member's CACHE_DIR, else a calibration run, else, when calibration fails, the nominal
/// rates after a warning; for COST_NOMINAL the nominal rates.
kept_costs costs_for(const graph::Graph& g, const std::vector<hetero_member>& members, const std::vector<int>& start,
                     const std::vector<std::vector<bool>>& can_run, hetero_placement mode, cost_source& source) {
  auto nominal = [&] {
    std::vector<graph::device_rates> rates;
    for (const auto& m : members) rates.push_back(nominal_rates(m.name, *m.dev));
    return kept_costs{graph::roofline_costs(g, member_names(members), rates, can_run)};
  };
  if (mode == hetero_placement::cost_nominal) {
    source.text = "the devices' nominal rates";
    return nominal();
  }
  for (const auto& m : members)
    if (source.dir.empty()) source.dir = m.config.compile.cache_dir;
  source.key = hetero_costs_key(g, members, can_run);
  if (!source.dir.empty())
    if (auto kept = load_hetero_costs(source.dir, source.key, g, member_names(members))) {
      source.text = "the calibration kept in CACHE_DIR";
      source.measured = source.kept = true;
      return *kept;
    }
  try {
    kept_costs k{calibrate_hetero(g, members, start, can_run)};
    source.text = "calibration";
    source.measured = true;
    return k;
  } catch (const std::exception& e) {
    library_warning(std::string("HETERO_PLACEMENT=COST: ") + e.what() + "; placing by the devices' nominal rates instead");
    source.text = std::string("the devices' nominal rates (calibration failed: ") + e.what() + ")";
    return nominal();
  }
}

/// HETERO_PLACEMENT=COST or COST_NOMINAL on a static plan: moves the ops of `placed`
/// (PRIORITY's) where the costs predict one request faster (or, pipelined, a higher rate), and
/// writes each op's times into its `why`.
void place_by_cost(hetero_plan& plan, const std::vector<hetero_member>& members, std::vector<graph::placement>& placed,
                   const graph::support_query& query) {
  const auto& g = plan.g;
  const std::size_t n = members.size();
  std::vector<std::vector<bool>> can_run(g.ops.size(), std::vector<bool>(n, false));
  std::vector<std::vector<std::string>> refusal(g.ops.size(), std::vector<std::string>(n));
  std::vector<int> start(g.ops.size(), 0);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const auto& op = g.ops[i];
    const std::string affinity = op.rt_info.count("affinity") ? op.rt_info.at("affinity") : "";
    for (std::size_t d = 0; d < n; ++d) {
      if (members[d].name == placed[i].device) start[i] = static_cast<int>(d);
      if (!affinity.empty()) {
        can_run[i][d] = affinity == members[d].name;
        continue;
      }
      const auto s = query(members[d].name, g, op);
      can_run[i][d] = s.supported;
      refusal[i][d] = s.reason.empty() ? "not supported" : s.reason;
    }
  }
  cost_source source;
  auto kept = costs_for(g, members, start, can_run, plan.mode, source);
  const auto& costs = kept.costs;
  // THROUGHPUT and CUMULATIVE_THROUGHPUT: requests in flight pipeline through the devices, so
  // the busiest piece of hardware sets the rate; the CPU, REFERENCE and a Vulkan driver on the
  // CPU's cores (lavapipe) are one. LATENCY and NONE: one request's time.
  const std::string& hint = members.front().config.hint;
  const bool pipelined = hint == "THROUGHPUT" || hint == "CUMULATIVE_THROUGHPUT";
  std::vector<int> resource(n);
  for (std::size_t d = 0, next = 1; d < n; ++d) {
    const auto& m = members[d];
    const bool host_cores = m.name == "CPU" || m.name == "REFERENCE" ||
                            (m.name.rfind("GPU", 0) == 0 && m.dev->info()["DEVICE_TYPE"] == "cpu");
    resource[d] = host_cores ? 0 : static_cast<int>(next++);
  }
  auto objective = [&](const std::vector<int>& p) {
    return pipelined ? graph::bottleneck_us(g, costs, p, resource) : graph::predicted_us(g, costs, p);
  };
  // The cut's placement against the simple ones (PRIORITY's, each device alone where it runs
  // every op): a split must predict min_gain faster, or timing noise could buy a slower one.
  constexpr double min_gain = 0.05;
  std::vector<int> alone_best; // the fastest device alone, where one runs every op
  double alone_us = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < n; ++d) {
    std::vector<int> alone(g.ops.size(), static_cast<int>(d));
    const double us = objective(alone);
    if (us < alone_us) {
      alone_best = std::move(alone);
      alone_us = us;
    }
  }
  const bool some_alone = std::isfinite(alone_us);
  const std::vector<int> simple = some_alone && alone_us < objective(start) ? alone_best : start;
  auto chosen = pipelined ? graph::place_for_throughput(g, costs, start, resource) : graph::place_by_cost(g, costs, start);
  if (objective(chosen) > (1 - min_gain) * objective(simple)) chosen = simple;
  // A measured split is run end to end before it is taken, against the fastest device alone
  // (or, where no device runs every op, PRIORITY's placement): the op times were measured
  // part by part, and what a chain of crossings does to the devices (caches gone cold, two
  // drivers' threads on the same cores) shows only when it runs. With requests in flight on
  // devices of their own, one request's time is not what counts: that check is left to the
  // prediction.
  const bool shared_hardware = std::all_of(resource.begin(), resource.end(), [&](int r) { return r == resource[0]; });
  const bool split = std::any_of(chosen.begin(), chosen.end(), [&](int d) { return d != chosen[0]; });
  const std::vector<int>& against = some_alone ? alone_best : start;
  std::string check;
  bool checked_now = false; // a verdict to keep beside costs that were already kept
  if (source.measured && split && chosen != against && (!pipelined || shared_hardware)) {
    const std::string alone =
        some_alone ? members[static_cast<std::size_t>(against[0])].name + " alone" : std::string("PRIORITY's placement");
    std::string failed;
    if (std::isnan(kept.split_us)) {
      std::vector<std::string> failures;
      const auto t = time_placements(g, members, {chosen, against}, {"the split", alone}, failures);
      for (const auto& f : failures)
        if (!f.empty()) {
          failed += (failed.empty() ? "" : "; ") + f;
          library_warning("HETERO_PLACEMENT=COST: checking the split: " + f);
        }
      // A failure is not kept: the next compile tries again.
      if (failed.empty()) {
        kept.split_us = t[0];
        kept.simple_us = t[1];
        checked_now = true;
      } else {
        kept.split_us = failures[0].empty() ? t[0] : std::numeric_limits<double>::infinity();
        kept.simple_us = failures[1].empty() ? t[1] : std::numeric_limits<double>::infinity();
      }
    }
    // Where the split failed, the other; where only the other failed, the split.
    const bool taken = std::isfinite(kept.split_us) &&
                       (!std::isfinite(kept.simple_us) || kept.split_us <= (1 - min_gain) * kept.simple_us);
    check = "; the split measured " + time_text(kept.split_us) + " against " + time_text(kept.simple_us) + " for " +
            alone + (failed.empty() ? "" : " (" + failed + ")") + ": " + (taken ? "taken" : "not taken");
    if (!taken) chosen = against;
    if (!failed.empty()) { // not kept: the next compile measures again
      kept.split_us = kept.simple_us = std::numeric_limits<double>::quiet_NaN();
    }
  }
  if (source.measured && (!source.kept || checked_now) && !source.dir.empty())
    store_hetero_costs(source.dir, source.key, g, kept);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const auto d = static_cast<std::size_t>(chosen[i]);
    placed[i].device = members[d].name;
    plan.predicted_us[g.ops[i].name] = costs.op_us[i][d];
    if (placed[i].why.rfind("affinity ", 0) == 0) continue;
    std::string times;
    std::size_t fastest = d;
    for (std::size_t k = 0; k < n; ++k) {
      times += (times.empty() ? "" : ", ") + members[k].name + " " +
               (can_run[i][k] ? time_text(costs.op_us[i][k]) : "cannot (" + refusal[i][k] + ")");
      if (can_run[i][k] && costs.op_us[i][k] < costs.op_us[i][fastest]) fastest = k;
    }
    placed[i].why = "cost: " + times +
                    (fastest == d ? "" : "; on " + members[d].name + (pipelined ? " to balance the pipeline" : " to save crossings"));
  }
  const auto crossings = graph::crossings_of(g, costs, chosen);
  double moved = 0, bytes = 0;
  for (const auto& c : crossings) {
    moved += c.us;
    bytes += c.bytes;
    auto& note = plan.crossing_notes[g.value(c.value).name];
    note += (note.empty() ? "" : "; ") + std::to_string(static_cast<int64_t>(c.bytes)) + " bytes to " +
            (c.to < 0 ? std::string("the host") : members[static_cast<std::size_t>(c.to)].name) + ", predicted " +
            time_text(c.us);
  }
  plan.prediction = "from " + source.text + ": one request predicted " + time_text(graph::predicted_us(g, costs, chosen)) + " (PRIORITY's placement: " +
                    time_text(graph::predicted_us(g, costs, start)) + "), of which " + std::to_string(crossings.size()) +
                    " crossings " + time_text(moved) + " for " + std::to_string(static_cast<int64_t>(bytes)) + " bytes";
  if (pipelined)
    plan.prediction += "; with requests in flight one every " + time_text(objective(chosen)) + " (PRIORITY's placement: " +
                       time_text(objective(start)) + ")";
  plan.prediction += check;
}

} // namespace

const hetero_member& member_named(const std::vector<hetero_member>& members, const std::string& name) {
  for (const auto& m : members)
    if (m.name == name) return m;
  throw Exception("HETERO: device '" + name + "' is not in the priority list");
}

hetero_placement hetero_placement_of(const AnyMap& props) {
  auto it = props.find("HETERO_PLACEMENT");
  if (it == props.end()) return hetero_placement::priority;
  const auto v = it->second.as_string();
  if (v == "PRIORITY") return hetero_placement::priority;
  if (v == "COST") return hetero_placement::cost;
  if (v == "COST_NOMINAL") return hetero_placement::cost_nominal;
  throw Exception("HETERO_PLACEMENT: '" + v + "' is not one of PRIORITY (each op to the first listed device that runs "
                  "it), COST (each op where measured times make one request fastest), COST_NOMINAL (the same from "
                  "the devices' nominal rates, nothing measured)");
}

hetero_plan plan_hetero(const graph::Graph& src, const std::vector<hetero_member>& members, hetero_placement mode) {
  hetero_plan plan{src, {}, {}, {}, members.front().name, true, mode, "", {}, {}};
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
  const std::vector<std::string> names = member_names(members);
  graph::support_query query = [&](const std::string& device, const graph::Graph& q, const graph::Op& op) {
    if (!plan.is_static)
      if (auto it = op.rt_info.find("affinity"); it != op.rt_info.end() && it->second == device) return graph::op_support{true, ""};
    auto s = member_named(members, device).dev->query(q, op);
    return graph::op_support{s.supported, s.reason};
  };
  auto placed = graph::place_ops(g, names, query);
  if (mode != hetero_placement::priority && plan.is_static && members.size() > 1 && !g.ops.empty())
    place_by_cost(plan, members, placed, query);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    g.ops[i].rt_info["affinity"] = placed[i].device;
    plan.placed[g.ops[i].name] = placed[i].device;
    plan.why[g.ops[i].name] = placed[i].why;
  }
  if (plan.is_static) fuse_ops(g);
  for (const auto& op : g.ops) {
    if (plan.is_static) {
      auto s = member_named(members, op.rt_info.at("affinity")).dev->query(g, op);
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
        std::pair{"hetero_subgraphs_" + name + ".dot",
                  graph::partition_to_dot(plan.g, parts, plan.crossing_notes,
                                          plan.prediction.empty() ? ""
                                          : std::string("HETERO_PLACEMENT=") +
                                                (plan.mode == hetero_placement::cost_nominal ? "COST_NOMINAL" : "COST") +
                                                ": " + plan.prediction)}}) {
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
  std::string prediction, predicted_times; ///< COST's, as the compiled model reports them
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
  r.prediction = b.prediction;
  r.predicted_times = b.predicted_times;
}

/// Compiles each part of a static plan on its device and chains them in a hetero_flow.
built_flow build_flow(const hetero_plan& plan, const std::vector<hetero_member>& members,
                      const std::vector<std::string>& input_names, const std::vector<std::string>& output_names,
                      caf::actor_system& sys) {
  const graph::Graph& g = plan.g;
  auto parts = graph::partition_graph(g, plan.device_of).parts;
  auto built = describe_split(parts, members);
  built.prediction = plan.prediction;
  for (const auto& op : g.ops) // the fused graph's ops: one line per profiling row
    if (auto it = plan.predicted_us.find(op.name); it != plan.predicted_us.end()) {
      char us[32];
      std::snprintf(us, sizeof us, "%.3f", it->second);
      built.predicted_times += std::string(us) + " " + op.name + "\n";
    }

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
    const auto& m = member_named(members, part.device);
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
  // One subgraph that takes the model's inputs and gives its outputs, in the model's order:
  // it runs as the device alone would, without the flow's hand-overs in front and behind.
  if (parts.size() == 1) {
    bool direct = parts[0].inputs.size() == input_names.size() && parts[0].outputs.size() == output_names.size();
    for (std::size_t k = 0; direct && k < input_names.size(); ++k) direct = g.find_value(input_names[k]) == parts[0].inputs[k];
    for (std::size_t o = 0; direct && o < output_names.size(); ++o)
      direct = !spec.constant_outputs[o] && g.find_value(output_names[o]) == parts[0].outputs[o];
    if (direct) {
      built.run = std::move(spec.stages[0].run);
      return built;
    }
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
    for (auto& m : kept) {
      m.config.compile.derived = std::make_shared<kernels::derived_constants>();
      m.config.compile.output_blocks = std::make_shared<kernels::output_pool>(0);
    }
    cm.runner = std::make_unique<actors::shape_dispatch>(
        sys,
        [g, members = std::move(kept), input_names, output_names, &sys, report, used,
         mode = plan.mode](const std::vector<Shape>& shapes) {
          const auto concrete = plan_hetero(with_input_shapes(*g, shapes), members, mode);
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
