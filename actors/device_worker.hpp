#pragma once
/// A device worker: a detached actor that owns one stream of a device (it blocks on oneDNN and
/// Vulkan). It runs the programs it is sent, each through its own clone of the executable
/// (executables are not thread-safe), kept until the program's subgraph goes away; it hands
/// each result straight to the request's sink, then takes the next work from its pool or
/// goes idle.
#include <cstddef>
#include <memory>

#include <caf/all.hpp>

#include "actors/messages.hpp"

namespace troupe::actors {

class device_pool;

/// Accepts `(run_atom, work)`, `(warm_atom, program)` (clone ahead, so that the first
/// inference pays no clone) and `(forget_atom, uintptr_t program)` (drop that clone).
caf::actor spawn_device_worker(caf::actor_system& sys, std::size_t index, std::weak_ptr<device_pool> pool);

} // namespace troupe::actors
