#pragma once
/// OpenVINO's HETERO device: one model split into subgraphs by per-op device (each op to the
/// first device in priority order that can run it, or to its `affinity` runtime info), each
/// subgraph compiled on its own device and run by its own stage of an actors::hetero_flow.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/device_pool.hpp"
#include "graph/ir.hpp"
#include "kernels/device.hpp"
#include "runtime/compiled_model_impl.hpp"
#include "runtime/device_properties.hpp"

namespace troupe {

/// One device of the priority list, resolved, with the properties routed to it.
struct hetero_member {
  std::string name; ///< canonical: "GPU.0", "CPU"
  std::shared_ptr<kernels::device> dev;
  resolved_config config;
  std::shared_ptr<actors::device_pool> pool; ///< the Core's workers of this device
};

/// The members' names, in order.
inline std::vector<std::string> member_names(const std::vector<hetero_member>& members) {
  std::vector<std::string> names;
  for (const auto& m : members) names.push_back(m.name);
  return names;
}

/// HETERO_PLACEMENT: OpenVINO's rule (each op to the first listed device that runs it, the
/// default) or troupe's (each op where the measured times make one request fastest; with
/// cost_nominal, where a roofline of the devices' nominal rates predicts it, nothing timed).
enum class hetero_placement { priority, cost, cost_nominal };

/// The HETERO_PLACEMENT of `props`, PRIORITY when absent; throws naming the property, the
/// value and the values it takes.
hetero_placement hetero_placement_of(const AnyMap& props);

/// The member named `name` (canonical); throws naming it when the list has none.
const hetero_member& member_named(const std::vector<hetero_member>& members, const std::string& name);

/// Where HETERO runs each op, and why.
struct hetero_plan {
  graph::Graph g;                            ///< optimized (fused) graph; unfolded for dynamic inputs
  std::vector<std::string> device_of;        ///< per op of g
  std::map<std::string, std::string> placed; ///< op friendly name (before fusion) -> device
  std::map<std::string, std::string> why;    ///< op friendly name -> graph::place_ops's reason
  std::string first_device;                  ///< where constant-folded ops are reported
  bool is_static = true;                     ///< false: dynamic inputs, an outline (see plan_hetero)
  hetero_placement mode = hetero_placement::priority;
  /// COST: one request's predicted time under the chosen placement and under PRIORITY's, and
  /// what crosses (empty otherwise, and for an outline).
  std::string prediction;
  /// COST: per value that crosses devices (by name: fusing renumbers values), its bytes and
  /// predicted crossing time (the edges of hetero_subgraphs_<model>.dot).
  std::map<std::string, std::string> crossing_notes;
  /// COST: each op's predicted time on its device, by name (a fused op has the name of the op
  /// whose profiling row it reports under); what HETERO_PREDICTED_TIMES reports.
  std::map<std::string, double> predicted_us;
};

/// Optimizes `src` and places every op. Throws naming the op and device for an affinity that
/// cannot be honoured, or an op no device can run. With dynamic inputs the plan is an outline:
/// nothing is folded or fused, and an affinity to a listed device is not checked against the
/// device (it may refuse an op only for want of shapes); compile_hetero plans each set of
/// concrete shapes again. With COST (static shapes, two devices or more) the ops start where
/// PRIORITY puts them and move where runs on the devices (runtime/hetero_calibration, kept in
/// CACHE_DIR when a member has one) predict one request faster (graph::place_by_cost);
/// affinities always hold. Calibration failing on a device places by the nominal rates
/// (runtime/nominal_rates), as COST_NOMINAL does, with a warning naming the device and error.
hetero_plan plan_hetero(const graph::Graph& src, const std::vector<hetero_member>& members,
                        hetero_placement mode = hetero_placement::priority);

/// query_model's answer for HETERO: every op of `src` (friendly name) -> its device, ops fused
/// away or folded into constants included (with the device of the op that took them over).
std::map<std::string, std::string> hetero_query(const graph::Graph& src, const hetero_plan& plan);

/// HETERO_DUMP_GRAPH_DOT (YES: the working folder; a folder; NO or absent: nothing) or, when
/// the property is absent, TROUPE_HETERO_VISUALIZE=1: where to write the split's pictures.
/// Empty when nothing is to be written.
std::string hetero_dot_folder(const AnyMap& hetero_props);

/// Writes hetero_affinity_<model>.dot (ops coloured by device, each with why it went there)
/// and hetero_subgraphs_<model>.dot (the subgraphs and the tensors between them) into
/// `folder`. Throws naming the file it cannot write.
void write_hetero_dots(const hetero_plan& plan, const std::string& model_name, const std::string& folder);

/// Splits `plan` (of `src`, the model as read) into acyclic subgraphs, compiles each on its
/// device (with that device's configuration) and sets `cm`'s runner, execution devices,
/// submodel count and optimal request count. With dynamic inputs the figures are the
/// outline's, and the split is made per distinct set of input shapes on first use.
void compile_hetero(CompiledModel::Impl& cm, const graph::Graph& src, const hetero_plan& plan,
                    const std::vector<hetero_member>& members, caf::actor_system& sys);

} // namespace troupe
