#pragma once
/// HETERO_PLACEMENT=COST without measuring (COST_NOMINAL, or when a calibration run fails): an
/// op's time on a device from a roofline, the larger of its FLOPs over the device's compute
/// rate and its bytes over the device's memory rate, plus the device's fixed cost per op.
/// Crude (no kernel is at its peak, small ops are all overhead), but it ranks a discrete GPU
/// above a CPU on a large convolution and below it on a chain of tiny elementwise ops, which
/// is what a placement needs.
#include <string>
#include <vector>

#include "graph/cost_placement.hpp"
#include "graph/ir.hpp"

namespace troupe::graph {

/// What a device can do, in round numbers.
struct device_rates {
  double gflops = 1;       ///< floating-point operations, 1e9 per second
  double gbytes_per_s = 1; ///< the memory its ops read and write, 1e9 bytes per second
  double op_us = 0;        ///< fixed cost of one op (a kernel launch, a dispatch, a primitive call)
  /// A tensor entering or leaving the device's memory: the receiving run's fixed cost (the
  /// latency of a crossing into it) and the time per byte, each way.
  transfer_cost io;
};

/// placement_costs for `g` from each device's rates: op_us[i][d] is the roofline time where
/// can_run[i][d], +infinity elsewhere. Crossings as the calibration models them: into b costs
/// b's latency, and the bytes leave a at a's rate and enter b at b's; the model's inputs and
/// outputs cost the device's latency and rate (the host's memory adds nothing of its own; a
/// node's device pays its network round trip). Throws when the tables' sizes disagree or a
/// rate is not positive.
placement_costs roofline_costs(const Graph& g, const std::vector<std::string>& devices,
                               const std::vector<device_rates>& rates, const std::vector<std::vector<bool>>& can_run);

} // namespace troupe::graph
