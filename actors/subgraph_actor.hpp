#pragma once
/// A subgraph actor: one compiled subgraph on one device with N streams (N device workers).
/// It receives inferences tagged with a request id, hands each to a free worker (queueing when
/// all are busy) and the worker delivers the outputs to the inference's sink. With dynamic
/// input shapes it compiles one program per distinct set of input shapes on first use and
/// caches it. HETERO wires several of these producer -> consumer through sinks; MULTI puts a
/// scheduler actor in front of several.
#include <functional>
#include <memory>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"

namespace troupe::actors {

/// Compiles the subgraph for concrete input shapes (in the subgraph's input order).
using program_compiler = std::function<std::shared_ptr<const program>(const std::vector<Shape>&)>;

struct subgraph_spec {
  std::shared_ptr<const program> fixed; ///< compiled ahead when every input shape is static
  program_compiler compile;              ///< used when `fixed` is null
  std::size_t streams = 1;
  bool profiling = false;
};

/// Accepts `(infer_atom, inference)`. Detached, so a message from a plain thread wakes it
/// through a condition variable instead of waiting for a polling scheduler thread.
caf::actor spawn_subgraph_actor(caf::actor_system& sys, subgraph_spec spec);

} // namespace troupe::actors
