#pragma once
/// What a CompiledModel handle holds: its ports, resolved configuration and the subgraph actor
/// that runs it (the actor system stays alive as long as any compiled model does).
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/runner.hpp"

#include <troupe/compiled_model.hpp>

#include "runtime/callback_runner.hpp"
#include "runtime/compiled_blob.hpp"
#include "runtime/device_properties.hpp"
#include "runtime/engine.hpp"

namespace troupe::actors {
class scheduler;
}

namespace troupe {

struct CompiledModel::Impl {
  std::shared_ptr<engine> eng;
  std::string device;
  std::vector<Port> inputs;
  std::vector<Port> outputs;
  resolved_config config;
  bool loaded_from_cache = false; ///< LOADED_FROM_CACHE
  /// RUNTIME_COMPILES: counted by the runners that compile per shape while serving.
  std::shared_ptr<actors::compile_stats> stats = std::make_shared<actors::compile_stats>();
  /// One device, static shapes: what export_model writes (null for HETERO, MULTI and models
  /// compiled per shape at run time).
  std::shared_ptr<const compiled_blob> exportable;
  /// Set when one device compiles per value of the inputs that decide shapes (export says so).
  bool value_keyed = false;
  /// HETERO: the devices its subgraphs run on (priority order), how many subgraphs, and the
  /// requests that keep every stage busy. Shared with the runner, which updates it when a
  /// model with dynamic inputs is split anew for a set of shapes. Null for a single device.
  struct split_report {
    std::mutex mutex;
    std::vector<std::string> devices;
    int submodels = 0;
    int optimal_requests = 0;
    std::string prediction, predicted_times; ///< HETERO_PLACEMENT=COST's (HETERO_PREDICTION)
  };
  std::shared_ptr<split_report> split;
  /// MULTI (and AUTO with CUMULATIVE_THROUGHPUT): the scheduler that `runner` is, for new
  /// priorities and the served counts. Null otherwise.
  struct multi_state {
    actors::scheduler* sched = nullptr;
    std::vector<std::string> devices; ///< the list it was compiled with, canonical names
    std::string policy;               ///< SCHEDULE_POLICY
    std::mutex mutex;
    std::vector<std::string> priorities; ///< as last set; empty: the compiled list
    /// false for AUTO's one device (the CPU helping it): its order is AUTO's, not the application's
    bool live_priorities = true;
  };
  std::shared_ptr<multi_state> multi;
  std::unique_ptr<actors::runner> runner;

  /// Where its requests' completion callbacks run: a thread made on first use.
  callback_runner& callbacks();

private:
  std::once_flag callbacks_once_;
  std::unique_ptr<callback_runner> callbacks_;
};

} // namespace troupe
