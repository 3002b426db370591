#pragma once
/// A runner for a model whose split depends on its input shapes (HETERO with dynamic inputs):
/// each distinct set of input shapes gets its own runner, built on first use by a detached
/// actor (so that building never blocks the caller) and kept; later requests with those
/// shapes go straight to it from the caller's thread.
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
  shape_dispatch(caf::actor_system& sys, runner_builder build);
  ~shape_dispatch() override; ///< the built runners go; requests still being built for fail as cancelled
  shape_dispatch(const shape_dispatch&) = delete;
  shape_dispatch& operator=(const shape_dispatch&) = delete;

  void submit(inference job) override;

  /// The runners built so far, shared with the building actor.
  struct built {
    std::mutex mutex;
    bool closed = false;
    std::map<std::vector<Shape>, std::unique_ptr<runner>> by_shapes;
  };

private:
  std::shared_ptr<built> built_ = std::make_shared<built>();
  caf::actor builder_;
};

} // namespace troupe::actors
