#pragma once
/// The CAF actor system a Core runs its actors on, shared by every model compiled from it (they
/// keep it alive). A Core made by troupe/caf.hpp's make_core borrows the application's system
/// instead of owning one: the application keeps it alive longer than the Core and its models.
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include <caf/all.hpp>

namespace troupe {

struct engine {
  engine();                                      ///< owns a system of its own
  explicit engine(caf::actor_system& borrowed);  ///< runs on the application's system
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  /// An owned system with the configuration it refers to.
  struct owned_system;
  std::unique_ptr<owned_system> owned;
  caf::actor_system* system = nullptr; ///< the one the actors run on: `owned`'s or the borrowed one
  std::mutex tls_mutex; ///< guards use_tls

  /// CAF keeps, per thread, a counted reference to the logger of the last system that thread
  /// made, spawned on or made a scoped_actor of, and a system's teardown waits until every
  /// such reference is gone. So an application thread that made a Core, or compiled a model,
  /// and lives on, would hang the teardown on any other thread. The public calls that may
  /// reach CAF drop this thread's reference to the owned system's logger on their way out
  /// (a `thread_release`); the system's own threads keep theirs (they end before it waits).
  void release_thread() const;
  struct thread_release {
    const engine& eng;
    ~thread_release() { eng.release_thread(); }
  };

  /// TLS to worker nodes: CAF 0.17 reads the certificate, key and CA of every TLS connection
  /// from the system's configuration, so a Core has one TLS identity. The first call sets it
  /// (before any TLS connection exists, so no connection reads it while it changes); a later
  /// call with other files throws. A borrowed system must have been configured with the same
  /// files (cfg.openssl_certificate, openssl_key, openssl_cafile) and load caf::openssl::manager.
  void use_tls(const std::string& cert, const std::string& key, const std::string& ca);

  /// How many systems engines have created in this process: lets a test show that a borrowing
  /// Core made none.
  static std::size_t systems_created();
  /// How many of them have been torn down: lets a test see a teardown finish.
  static std::size_t systems_destroyed();
};

/// Registers (again) the exit guard that lets system threads finish before the process's exit
/// handlers run (runtime/engine.cpp): after loading a library whose exit handlers must not run
/// while those threads still use it (a Vulkan driver).
void register_exit_guard();

std::shared_ptr<engine> make_engine();
std::shared_ptr<engine> borrow_engine(caf::actor_system& system);

} // namespace troupe
