#pragma once
/// A runner for a model whose split depends on its input shapes (HETERO with dynamic inputs):
/// each distinct set of input shapes gets its own runner, built on first use by a detached
/// actor (so that building never blocks the caller) and kept while among the `capacity` most
/// recently used; later requests with those shapes go straight to it from the caller's thread.
/// A runner past the capacity retires: it takes no new requests and goes once its last one
/// has completed.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <caf/all.hpp>

#include "actors/runner.hpp"

namespace troupe::actors {

/// Builds the runner for these concrete input shapes (in input order). A troupe::Exception
/// fails the request as the input's fault; a kernels::device_error as the device's.
using runner_builder = std::function<std::unique_ptr<runner>(const std::vector<Shape>&)>;

class shape_dispatch final : public runner {
public:
  /// `capacity` 0: every runner is kept. `stats` (may be null) counts each build.
  shape_dispatch(caf::actor_system& sys, runner_builder build, std::size_t capacity = 0,
                 std::shared_ptr<compile_stats> stats = nullptr);
  ~shape_dispatch() override; ///< the built runners go; requests still being built for fail as cancelled
  shape_dispatch(const shape_dispatch&) = delete;
  shape_dispatch& operator=(const shape_dispatch&) = delete;

  void submit(inference job) override;

  /// The runners built so far, shared with the building actor.
  struct built {
    struct entry {
      std::unique_ptr<runner> run;
      std::shared_ptr<std::atomic<int>> in_flight = std::make_shared<std::atomic<int>>(0);
      uint64_t last_use = 0;
    };
    std::mutex mutex;
    bool closed = false;
    uint64_t clock = 0;
    std::map<std::vector<Shape>, entry> by_shapes;
    std::vector<entry> retiring; ///< evicted, destroyed once nothing runs on them
  };

private:
  std::shared_ptr<built> built_ = std::make_shared<built>();
  caf::actor builder_;
};

} // namespace troupe::actors
