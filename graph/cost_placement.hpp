#pragma once
/// Placement by cost (HETERO_PLACEMENT=COST): each op to the device that makes one request
/// fastest, counting every tensor that has to move between devices. graph/ knows no devices:
/// the times come in measured (runtime/hetero_calibration) as numbers per op and device.
///
/// The predicted time of a request is the sum of its ops' times plus the sum of its crossings:
/// a value read on a device other than its producer's moves once per device that reads it
/// (a graph input from the host's memory, a graph output back to it). Between two devices the
/// best placement under this sum is a minimum s-t cut (each op a node, s's side one device;
/// "some reader on the other side" costs the transfer once, Lawler's construction for a
/// hyperedge); with more devices, pairs are improved in turn with the other ops held.
#include <string>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph {

/// Moving one tensor: a fixed latency and a rate.
struct transfer_cost {
  double latency_us = 0;
  double us_per_byte = 0;
  double of(double bytes) const { return latency_us + us_per_byte * bytes; }
};

struct placement_costs {
  std::vector<std::string> devices; ///< candidates, in priority order
  /// op_us[i][d]: op i of the graph on devices[d], in microseconds; +infinity where it cannot
  /// run there (unsupported, or an affinity sends it elsewhere).
  std::vector<std::vector<double>> op_us;
  /// transfer[a][b]: a tensor made on devices[a] and read on devices[b] (a != b).
  std::vector<std::vector<transfer_cost>> transfer;
  /// A graph input read on devices[d]; a graph output made on devices[d].
  std::vector<transfer_cost> from_host, to_host;
};

/// Throws unless `costs` has one row of times per op of `g` and one entry per device in every
/// table (naming what is missing).
void check_costs(const Graph& g, const placement_costs& costs);

/// The predicted time of one request when op i runs on devices[device_of[i]] (infinity where
/// an op cannot run where it is put).
double predicted_us(const Graph& g, const placement_costs& costs, const std::vector<int>& device_of);

/// What crosses between devices under a placement: each value read on a device other than its
/// producer's (host = -1), with its bytes and predicted cost.
struct crossing {
  ValueId value;
  int from, to; ///< device indices; -1: the host
  double bytes, us;
};
std::vector<crossing> crossings_of(const Graph& g, const placement_costs& costs, const std::vector<int>& device_of);

/// The placement that minimizes predicted_us, from `start` (a placement where every op can
/// run, e.g. by priority): exact for two devices; with more, a local optimum of exact pair
/// moves. Never predicted slower than `start`; where the cut finds nothing faster, `start`
/// is returned as it is.
std::vector<int> place_by_cost(const Graph& g, const placement_costs& costs, std::vector<int> start);

/// With requests in flight the devices work as a pipeline, each on another request: what
/// bounds the rate is the busiest piece of hardware. `resource[d]`: devices with the same
/// number share hardware (the CPU, REFERENCE and a Vulkan driver on the CPU's cores), and
/// their work adds up. A resource's load: the times of the ops on its devices and the
/// crossings into them (the receiver starts a run and takes the bytes in).
std::vector<double> resource_loads(const Graph& g, const placement_costs& costs, const std::vector<int>& device_of,
                                   const std::vector<int>& resource);
/// The largest of resource_loads: the predicted time between two requests leaving.
double bottleneck_us(const Graph& g, const placement_costs& costs, const std::vector<int>& device_of,
                     const std::vector<int>& resource);

/// A placement with a smaller bottleneck_us than `start`, or `start`. Two devices: the best
/// of the pipelines (the ops before a point of the topological order on one device, the rest
/// on the other) and of place_by_cost's cuts over each device's times weighted w and 1 - w (w
/// in steps of 1/20; a weighted sum alone finds only the corners of the trade-off, never a
/// balanced split where the sums tie). More devices: place_by_cost's placement where it is
/// better. A heuristic, not an optimum.
std::vector<int> place_for_throughput(const Graph& g, const placement_costs& costs, std::vector<int> start,
                                      const std::vector<int>& resource);

} // namespace troupe::graph
