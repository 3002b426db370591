#pragma once
/// Hands work to a subgraph's device workers: to an idle worker at once, else into a FIFO
/// that workers drain when they finish. It is shared state (one mutex), not an actor, so a
/// request thread reaches an idle worker with one message instead of two (STACK.md: every
/// actor hop from a plain thread is a thread wake-up on the inference's critical path).
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"

namespace troupe::actors {

class stream_dispatcher {
public:
  void set_workers(std::vector<caf::actor> workers);
  /// From any thread. Work for a request the sink no longer wants is dropped.
  void submit(work w);
  /// Worker `index` finished a run: the next queued work for it, or none (it is idle now).
  std::optional<work> next_or_idle(std::size_t index);
  /// Fails queued work with `reason` and forgets the workers (the model is going away).
  void shutdown(const std::string& reason);

private:
  std::mutex mutex_;
  std::vector<caf::actor> workers_;
  std::vector<std::size_t> idle_; ///< LIFO: the most recently used stream is the warmest
  std::deque<work> waiting_;
  bool closed_ = false;
};

} // namespace troupe::actors
