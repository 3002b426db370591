#pragma once
/// One compiled subgraph on one device: a client of the device's pool (actors/device_pool)
/// with its own cap of runs at once (its streams). With static input shapes an inference goes
/// straight from the caller to an idle worker of the pool. With dynamic input shapes one
/// program is compiled per distinct set of input shapes (and of the values of the inputs that
/// decide shapes, `value_keys`) and cached (least recently used out past the capacity): an
/// inference of a cached key goes straight to the pool as well; one of a new key goes to the
/// subgraph actor, which has it compiled (off its own thread) and then dispatches it. The worker delivers the outputs to the
/// inference's sink; HETERO chains subgraphs through sinks (actors/hetero_flow).
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
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

  /// The programs compiled for dynamic shapes, by what picks them (every input's shape, and
  /// the bytes of the `value_keys` inputs), each with when it was last used. Shared by the
  /// callers' threads, which send a request of a compiled key straight to the pool (no hop
  /// through the subgraph actor: a thread wake-up, 25 us on a virtual machine), and the
  /// subgraph actor, which compiles the other keys, adds them and evicts past the capacity.
  struct compiled_programs {
    using key = std::pair<std::vector<Shape>, std::vector<std::string>>;
    struct entry {
      std::shared_ptr<const program> prog;
      uint64_t last_use = 0;
    };
    std::mutex mutex;
    std::map<key, entry> by_key;
    uint64_t clock = 0;
  };

private:
  std::shared_ptr<const program> fixed_;
  std::shared_ptr<device_pool> pool_;
  std::size_t client_ = 0;
  std::shared_ptr<compiled_programs> compiled_ = std::make_shared<compiled_programs>();
  std::vector<std::size_t> value_keys_;
  caf::actor compiler_; ///< the subgraph actor, only for dynamic shapes
};

} // namespace troupe::actors
