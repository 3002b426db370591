#pragma once
/// HETERO_PLACEMENT=COST's calibration kept in CACHE_DIR beside the compiled models, so that a
/// second compile of the same model on the same devices places it without timing anything:
/// "<32 hex digits>.hetero_costs", keyed by the graph, each device (name, what it is) and the
/// settings it compiles with. Damaged or stale entries are ignored with a warning.
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "graph/cost_placement.hpp"
#include "graph/ir.hpp"

namespace troupe {

struct hetero_member;

/// The key of `g` (static, folded, not fused) calibrated on `members`, where op i may run on
/// member d when can_run[i][d] (EXCLUDED_OPS and affinities change it, not the device's name).
std::array<uint64_t, 2> hetero_costs_key(const graph::Graph& g, const std::vector<hetero_member>& members,
                                         const std::vector<std::vector<bool>>& can_run);

/// What a calibration found: the costs, and where the placement they chose was a split, what
/// that split and the best placement without one measured end to end (NaN: not measured).
struct kept_costs {
  graph::placement_costs costs;
  double split_us = std::numeric_limits<double>::quiet_NaN();
  double simple_us = std::numeric_limits<double>::quiet_NaN();
};

/// What is kept under `key` in `dir`, or nullopt: none, or damaged (checked by its checksum
/// before anything else is read), or not for these ops and `devices`, or holding times no
/// measurement gives (then after a warning naming the file and what was wrong).
std::optional<kept_costs> load_hetero_costs(const std::string& dir, const std::array<uint64_t, 2>& key,
                                            const graph::Graph& g, const std::vector<std::string>& devices);
/// Keeps `kept` under `key`; failing to write is a warning, not an error.
void store_hetero_costs(const std::string& dir, const std::array<uint64_t, 2>& key, const graph::Graph& g,
                        const kept_costs& kept);

} // namespace troupe
