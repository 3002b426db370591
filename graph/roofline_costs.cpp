#include "graph/roofline_costs.hpp"

#include <algorithm>
#include <limits>

#include <troupe/exception.hpp>

#include "graph/op_cost.hpp"

namespace troupe::graph {

placement_costs roofline_costs(const Graph& g, const std::vector<std::string>& devices,
                               const std::vector<device_rates>& rates, const std::vector<std::vector<bool>>& can_run) {
  const std::size_t n = devices.size();
  if (rates.size() != n)
    throw Exception("roofline costs: " + std::to_string(rates.size()) + " rates for " + std::to_string(n) + " devices");
  if (can_run.size() != g.ops.size())
    throw Exception("roofline costs: " + std::to_string(can_run.size()) + " rows of can_run for " +
                    std::to_string(g.ops.size()) + " ops");
  for (std::size_t d = 0; d < n; ++d)
    if (!(rates[d].gflops > 0) || !(rates[d].gbytes_per_s > 0))
      throw Exception("roofline costs: device " + devices[d] + " has no positive compute or memory rate");
  placement_costs c;
  c.devices = devices;
  c.op_us.assign(g.ops.size(), std::vector<double>(n, std::numeric_limits<double>::infinity()));
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (can_run[i].size() != n)
      throw Exception("roofline costs: op '" + g.ops[i].name + "' has " + std::to_string(can_run[i].size()) +
                      " entries of can_run for " + std::to_string(n) + " devices");
    const auto cost = cost_of(g, g.ops[i]);
    for (std::size_t d = 0; d < n; ++d)
      if (can_run[i][d]) // 1e9 per second is 1e3 per microsecond
        c.op_us[i][d] = rates[d].op_us + std::max(cost.flops / (rates[d].gflops * 1e3), cost.bytes / (rates[d].gbytes_per_s * 1e3));
  }
  c.transfer.assign(n, std::vector<transfer_cost>(n));
  c.from_host.resize(n);
  c.to_host.resize(n);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b)
      c.transfer[a][b] = {rates[b].io.latency_us, rates[a].io.us_per_byte + rates[b].io.us_per_byte};
    c.from_host[a] = rates[a].io; // a node's device: the network round trip for inputs and outputs too
    c.to_host[a] = rates[a].io;
  }
  return c;
}

} // namespace troupe::graph
