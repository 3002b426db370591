#include "runtime/engine.hpp"

#include <chrono>

namespace troupe {

engine::engine() {
  // Every actor on the inference path is detached (woken by a condition variable), so the
  // cooperative scheduler has little to do: few threads, and they back off to long sleeps
  // quickly instead of spinning on the 2 cores the inference needs.
  cfg.set("scheduler.max-threads", 1);
  cfg.set("work-stealing.aggressive-poll-attempts", 1);
  cfg.set("work-stealing.moderate-poll-attempts", 1);
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::milliseconds(10)});
  cfg.set("logger.verbosity", caf::atom("quiet"));
  system = std::make_unique<caf::actor_system>(cfg);
}

engine::~engine() { system.reset(); }

std::shared_ptr<engine> make_engine() { return std::make_shared<engine>(); }

} // namespace troupe
