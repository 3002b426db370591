#pragma once
/// One compiled subgraph on one device: a client of the device's pool (actors/device_pool)
/// with its own cap of runs at once (its streams). With static input shapes an inference goes
/// straight from the caller to an idle worker of the pool. With dynamic input shapes it goes to
/// the subgraph actor, which compiles one program per distinct set of input shapes (and of the
/// values of the inputs that decide shapes, `value_keys`) on first use, caches it (least
/// recently used out past the capacity), and dispatches. The worker delivers the outputs to the
/// inference's sink; HETERO chains subgraphs through sinks (actors/hetero_flow).
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include <caf/all.hpp>

#include "actors/device_pool.hpp"
#include "actors/messages.hpp"
#include "actors/runner.hpp"

namespace troupe::actors {

/// Compiles the subgraph for an inference's inputs (in the subgraph's input order): their
/// shapes, and the values of the `value_keys` inputs.
using program_compiler = std::function<std::shared_ptr<const program>(const std::vector<Tensor>&)>;

struct subgraph_spec {
  std::shared_ptr<const program> fixed; ///< compiled ahead when every input shape is static
  program_compiler compile;              ///< used when `fixed` is null
  /// Inputs whose contents, besides every input's shape, pick the program (a Reshape's target
  /// given by the caller, on a device that needs static shapes).
  std::vector<std::size_t> value_keys;
  std::size_t streams = 1;               ///< runs at once, at most
  /// Programs kept for dynamic shapes (RUNTIME_CACHE_CAPACITY): past it, the least recently
  /// used goes (its running requests finish on it). 0: no bound.
  std::size_t cache_capacity = 0;
  std::shared_ptr<compile_stats> stats;  ///< counts each compile at run time; may be null
  /// The device's pool, shared with every other subgraph of the device in the Core; null: a
  /// pool of this subgraph's own (tests, benchmarks).
  std::shared_ptr<device_pool> pool;
};

class subgraph final : public runner {
public:
  subgraph(caf::actor_system& sys, subgraph_spec spec);
  ~subgraph() override; ///< queued inferences fail; the workers drop this subgraph's clones
  subgraph(const subgraph&) = delete;
  subgraph& operator=(const subgraph&) = delete;

  /// From any thread; the result (or error) reaches `job.sink` exactly once.
  void submit(inference job) override;

  /// The programs compiled for dynamic shapes, so that the workers can forget them.
  struct compiled_programs {
    std::mutex mutex;
    std::vector<std::shared_ptr<const program>> all;
  };

private:
  std::shared_ptr<const program> fixed_;
  std::shared_ptr<device_pool> pool_;
  std::size_t client_ = 0;
  std::shared_ptr<compiled_programs> compiled_ = std::make_shared<compiled_programs>();
  caf::actor compiler_; ///< the subgraph actor, only for dynamic shapes
};

} // namespace troupe::actors
