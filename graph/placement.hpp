#pragma once
/// Op placement for a model split over several devices (HETERO): which device runs each op,
/// and why. graph/ knows no devices: what a device can run comes in as a callback.
#include <functional>
#include <string>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph {

/// A device's answer for one op; `reason` says why not when unsupported.
struct op_support {
  bool supported = false;
  std::string reason;
};

/// Asks whether device `device` can run op `op` of `g`.
using support_query = std::function<op_support(const std::string& device, const Graph& g, const Op& op)>;

struct placement {
  std::string device;
  std::string why; ///< "affinity GPU.1", "supported by GPU.0", "GPU.0: <reason>; fallback to CPU"
};

/// One placement per op of g (same order). `priorities`: device names, highest priority first,
/// non-empty, no duplicates (the caller has validated the list).
///
/// An op whose rt_info "affinity" names a device goes to that device; it is an error when the
/// device is not in `priorities` or when the query says it cannot run the op (the message names
/// the op, the device and the reason). An op without affinity (or with an empty one) goes to the
/// first device in priority order that supports it; when none does, the error names the op and
/// each device's reason.
///
/// Unlike OpenVINO's HETERO, which takes affinities only when every node has one, troupe mixes:
/// annotated ops go where they say, the others are placed by priority as above.
std::vector<placement> place_ops(const Graph& g, const std::vector<std::string>& priorities, const support_query& query);

} // namespace troupe::graph
