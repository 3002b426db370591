#include "runtime/engine.hpp"

#include <chrono>

namespace troupe {

namespace {
std::atomic<std::size_t> created{0};
} // namespace

engine::engine() {
  // Every actor on the inference path is detached (woken by a condition variable), so the
  // cooperative scheduler has little to do: few threads, and they back off to long sleeps
  // quickly instead of spinning on the 2 cores the inference needs.
  cfg.set("scheduler.max-threads", 1);
  cfg.set("work-stealing.aggressive-poll-attempts", 1);
  cfg.set("work-stealing.moderate-poll-attempts", 1);
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::milliseconds(10)});
  cfg.set("logger.verbosity", caf::atom("quiet"));
  owned = std::make_unique<caf::actor_system>(cfg);
  system = owned.get();
  ++created;
}

engine::engine(caf::actor_system& borrowed) : system(&borrowed) {}

engine::~engine() { owned.reset(); }

std::size_t engine::systems_created() { return created.load(); }

std::shared_ptr<engine> make_engine() { return std::make_shared<engine>(); }

std::shared_ptr<engine> borrow_engine(caf::actor_system& system) { return std::make_shared<engine>(system); }

} // namespace troupe
