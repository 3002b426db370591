#include "graph/placement.hpp"

#include <algorithm>

#include <troupe/exception.hpp>

#include "graph/pass_utils.hpp"

namespace troupe::graph {

namespace {

/// "GPU.0: <reason>", with a placeholder when the device gave none.
std::string refusal(const std::string& device, const op_support& s) {
  return device + ": " + (s.reason.empty() ? std::string("not supported") : s.reason);
}

placement place_by_affinity(const Graph& g, const Op& op, const std::string& device,
                            const std::vector<std::string>& priorities, const support_query& query) {
  if (std::find(priorities.begin(), priorities.end(), device) == priorities.end()) {
    std::string listed;
    for (const auto& d : priorities) listed += (listed.empty() ? "" : ", ") + d;
    throw Exception(describe(op) + " has affinity '" + device + "', which is not one of the devices (" + listed + ")");
  }
  op_support s = query(device, g, op);
  if (!s.supported)
    throw Exception(describe(op) + " has affinity '" + device + "', which cannot run it: " + refusal(device, s));
  return {device, "affinity " + device};
}

placement place_by_priority(const Graph& g, const Op& op, const std::vector<std::string>& priorities,
                            const support_query& query) {
  std::string refused; // "GPU.0: reason; GPU.1: reason"
  for (const auto& device : priorities) {
    op_support s = query(device, g, op);
    if (s.supported) return {device, refused.empty() ? "supported by " + device : refused + "; fallback to " + device};
    refused += (refused.empty() ? "" : "; ") + refusal(device, s);
  }
  throw Exception(describe(op) + " is supported by none of the devices: " + refused);
}

} // namespace

std::vector<placement> place_ops(const Graph& g, const std::vector<std::string>& priorities, const support_query& query) {
  if (priorities.empty()) throw Exception("place_ops: no devices to place ops on");
  std::vector<placement> out;
  out.reserve(g.ops.size());
  for (const auto& op : g.ops) {
    std::string affinity = detail::affinity_of(op);
    out.push_back(affinity.empty() ? place_by_priority(g, op, priorities, query)
                                   : place_by_affinity(g, op, affinity, priorities, query));
  }
  return out;
}

} // namespace troupe::graph
