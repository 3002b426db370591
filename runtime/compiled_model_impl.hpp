#pragma once
/// What a CompiledModel handle holds: its ports, resolved configuration and the subgraph actor
/// that runs it (the actor system stays alive as long as any compiled model does).
#include <memory>

#include <caf/all.hpp>

#include <troupe/compiled_model.hpp>

#include "runtime/device_properties.hpp"
#include "runtime/engine.hpp"

namespace troupe {

struct CompiledModel::Impl {
  std::shared_ptr<engine> eng;
  std::string device;
  std::vector<Port> inputs;
  std::vector<Port> outputs;
  resolved_config config;
  caf::actor subgraph;

  ~Impl() {
    if (subgraph) caf::anon_send_exit(subgraph, caf::exit_reason::user_shutdown);
  }
};

} // namespace troupe
