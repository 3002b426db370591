#pragma once
/// One CAF actor system per Core, shared by every model compiled from it (they keep it alive).
#include <memory>

#include <caf/all.hpp>

namespace troupe {

struct engine {
  engine();
  ~engine();
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
};

std::shared_ptr<engine> make_engine();

} // namespace troupe
