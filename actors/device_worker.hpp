#pragma once
/// A device worker: a detached actor that owns one stream of a device. It runs the programs
/// it is sent (each through its own clone of the executable, since executables are not
/// thread-safe), hands each result straight to the request's sink, and then takes the next
/// queued work from its dispatcher or goes idle.
#include <cstddef>
#include <memory>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/stream_dispatcher.hpp"

namespace troupe::actors {

/// Accepts `(run_atom, work)`. `warm` (may be null) is cloned at start so that the first
/// inference pays no clone.
caf::actor spawn_device_worker(caf::actor_system& sys, std::size_t index, bool profiling,
                               std::shared_ptr<stream_dispatcher> dispatcher, std::shared_ptr<const program> warm);

} // namespace troupe::actors
