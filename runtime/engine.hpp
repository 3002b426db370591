#pragma once
/// The CAF actor system a Core runs its actors on, shared by every model compiled from it (they
/// keep it alive). A Core made by troupe/caf.hpp's make_core borrows the application's system
/// instead of owning one: the application keeps it alive longer than the Core and its models.
#include <cstddef>
#include <memory>

#include <caf/all.hpp>

namespace troupe {

struct engine {
  engine();                                      ///< owns a system of its own
  explicit engine(caf::actor_system& borrowed);  ///< runs on the application's system
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  caf::actor_system_config cfg; ///< the owned system's configuration (unused when borrowing)
  std::unique_ptr<caf::actor_system> owned;
  caf::actor_system* system = nullptr; ///< the one the actors run on: `owned` or the borrowed one

  /// How many systems engines have created in this process: lets a test show that a borrowing
  /// Core made none.
  static std::size_t systems_created();
};

std::shared_ptr<engine> make_engine();
std::shared_ptr<engine> borrow_engine(caf::actor_system& system);

} // namespace troupe
