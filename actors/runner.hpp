#pragma once
/// What a compiled model runs inferences through: one subgraph on one device (subgraph), or
/// several chained across devices (hetero_flow). The request layer sees only this.
#include <atomic>
#include <cstdint>
#include <memory>

#include "actors/messages.hpp"

namespace troupe::actors {

/// Programs compiled while requests run (a model with dynamic inputs compiles per new set of
/// input shapes) and the time they took, for the compiled model's RUNTIME_COMPILES and
/// RUNTIME_COMPILE_MS. A MULTI or AUTO member counts into its own and, through `parent`, into
/// the virtual device's (set before the member serves).
struct compile_stats {
  std::atomic<uint64_t> compiles{0};
  std::atomic<uint64_t> compile_us{0}; ///< summed over compiles (several may overlap)
  std::shared_ptr<compile_stats> parent;
  void count(uint64_t us) {
    for (auto* s = this; s; s = s->parent.get()) {
      s->compiles.fetch_add(1, std::memory_order_relaxed);
      s->compile_us.fetch_add(us, std::memory_order_relaxed);
    }
  }
};

class runner {
public:
  virtual ~runner() = default;
  /// From any thread; the result (or error) reaches `job.sink` exactly once.
  virtual void submit(inference job) = 0;
};

} // namespace troupe::actors
