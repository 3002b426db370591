#pragma once
/// HETERO_PLACEMENT=COST's numbers, measured on the devices themselves with the model's own
/// shapes: each op's time on each device that can run it, and what moving a tensor between two
/// devices costs. graph::place_by_cost turns them into a placement.
#include <string>
#include <vector>

#include "graph/cost_placement.hpp"
#include "graph/ir.hpp"

namespace troupe {

struct hetero_member;

/// Measures `g` (static shapes, constants folded, not fused) on every member: for each, the
/// ops it can run (`can_run[op][member]`) go to it and the others stay where `start` (indices
/// into members, every op runnable there) puts them; the split is compiled with profiling and
/// run on synthetic inputs (floats in [0, 1), integers 0), once to warm up and `runs` times
/// timed, the devices taking turns run by run. An op's time is the fastest run's profiling
/// rows for it (an op fused into another
/// counts in that one's); where it cannot run, +infinity. Per device, a one-op graph at 1 KiB
/// and 4 MiB gives a crossing's fixed latency and its time per byte (the wall time a run
/// takes beyond its op), and a thread hand-over is added to the latency (the next stage's
/// actor wakes up). Throws (naming the device and what failed) where a device cannot compile
/// or run its part.
graph::placement_costs calibrate_hetero(const graph::Graph& g, const std::vector<hetero_member>& members,
                                        const std::vector<int>& start, const std::vector<std::vector<bool>>& can_run,
                                        int runs = 5);

/// The wall time of one request under each of `placements` (indices into members, one per op
/// of `g`): every part compiled and run in order on synthetic inputs, once to warm up and
/// `runs` times timed, the placements taking turns; each one's fastest run, plus a thread
/// hand-over per crossing (the stages' actors). What COST checks a split against before it
/// takes it. A placement that cannot compile or run measures +infinity, and
/// failures[k] says why, after its label ("the split", "GPU.0 alone"); empty where it ran.
std::vector<double> time_placements(const graph::Graph& g, const std::vector<hetero_member>& members,
                                    const std::vector<std::vector<int>>& placements, const std::vector<std::string>& labels,
                                    std::vector<std::string>& failures, int runs = 3);

} // namespace troupe
