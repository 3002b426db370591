#include "graph/placement.hpp"

#include <algorithm>

#include <troupe/exception.hpp>

namespace troupe::graph {

std::vector<placement> place_ops(const Graph& g, const std::vector<std::string>& priorities,
                                 const support_query& query) {
  std::string listed;
  for (const auto& d : priorities) listed += (listed.empty() ? "" : ", ") + d;
  std::vector<placement> r;
  r.reserve(g.ops.size());
  for (const auto& op : g.ops) {
    if (auto it = op.rt_info.find("affinity"); it != op.rt_info.end()) {
      const std::string& dev = it->second;
      if (std::find(priorities.begin(), priorities.end(), dev) == priorities.end())
        throw Exception(describe(op) + " has affinity '" + dev + "', which is not one of the devices (" + listed + ")");
      auto s = query(dev, g, op);
      if (!s.supported)
        throw Exception(describe(op) + " has affinity '" + dev + "', but " + dev + " cannot run it: " + s.reason);
      r.push_back({dev, "affinity " + dev});
      continue;
    }
    std::string refusals;
    bool placed = false;
    for (const auto& dev : priorities) {
      auto s = query(dev, g, op);
      if (s.supported) {
        r.push_back({dev, refusals.empty() ? "supported by " + dev : refusals + "; " + dev + " supports it"});
        placed = true;
        break;
      }
      refusals += (refusals.empty() ? "" : "; ") + dev + ": " + s.reason;
    }
    if (!placed) throw Exception("no device can run " + describe(op) + ": " + refusals);
  }
  return r;
}

} // namespace troupe::graph
