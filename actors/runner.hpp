#pragma once
/// What a compiled model runs inferences through: one subgraph on one device (subgraph), or
/// several chained across devices (hetero_flow). The request layer sees only this.
#include "actors/messages.hpp"

namespace troupe::actors {

class runner {
public:
  virtual ~runner() = default;
  /// From any thread; the result (or error) reaches `job.sink` exactly once.
  virtual void submit(inference job) = 0;
};

} // namespace troupe::actors
