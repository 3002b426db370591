#pragma once
/// HETERO's placement: which device runs each op, and why. Devices come in as names and a
/// callback (graph/ knows no devices). The rule, per op:
///   - an `affinity` runtime info names its device; it must be listed and able to run the op;
///   - otherwise the first device in priority order that can run it.
/// OpenVINO requires all ops or none to carry an affinity; troupe places the ops without one
/// by the automatic rule, so an application may pin a few ops and leave the rest.
#include <functional>
#include <string>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::graph {

struct op_support {
  bool supported = false;
  std::string reason; ///< why not
};

/// Whether device `device` can run `op` of `g`.
using support_query = std::function<op_support(const std::string& device, const Graph& g, const Op& op)>;

struct placement {
  std::string device;
  std::string why; ///< "affinity CPU", "supported by GPU.0", "GPU.0: <reason>; CPU supports it"
};

/// One placement per op of `g`, in op order. `priorities`: non-empty, no duplicates. Throws
/// troupe::Exception naming the op (describe(op)), the device and the reason when an affinity
/// names an unlisted device or one that cannot run the op, or when no device can run an op.
std::vector<placement> place_ops(const Graph& g, const std::vector<std::string>& priorities,
                                 const support_query& query);

} // namespace troupe::graph
