#pragma once
/// HETERO_PLACEMENT=COST's calibration kept in CACHE_DIR beside the compiled models, so that a
/// second compile of the same model on the same devices places it without timing anything:
/// "<32 hex digits>.hetero_costs", keyed by the graph, each device (name, what it is) and the
/// settings it compiles with. Damaged or stale entries are ignored with a warning.
#include <array>
#include <cstdint>
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

/// The costs kept under `key` in `dir`, or nullopt: none, or damaged, or not for these ops
/// and devices (then after a warning naming the file and what was wrong).
std::optional<graph::placement_costs> load_hetero_costs(const std::string& dir, const std::array<uint64_t, 2>& key,
                                                        const graph::Graph& g);
/// Keeps `costs` under `key`; failing to write is a warning, not an error.
void store_hetero_costs(const std::string& dir, const std::array<uint64_t, 2>& key, const graph::Graph& g,
                        const graph::placement_costs& costs);

} // namespace troupe
