#pragma once
/// Round-number rates of a device for the roofline cost model (graph/roofline_costs), from
/// what the device says of itself: its kind (CPU, a Vulkan GPU by type, REFERENCE, a node's),
/// the CPU's vector ISA, core count and clock. No device is timed: these are what
/// HETERO_PLACEMENT=COST_NOMINAL places by, and what COST falls back to when calibration fails.
#include <string>

#include "graph/roofline_costs.hpp"
#include "kernels/device.hpp"

namespace troupe {

/// `name`: the canonical device name ("CPU", "GPU.1", "REFERENCE", "CPU@host:port").
graph::device_rates nominal_rates(const std::string& name, const kernels::device& dev);

} // namespace troupe
