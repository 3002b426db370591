#pragma once
/// A device worker: a detached actor that owns one stream of a device. It runs the programs
/// that subgraph actors send it (each through its own clone of the executable, since
/// executables are not thread-safe), hands the result straight to the request's sink and tells
/// the sender it is free again.
#include <cstddef>

#include <caf/all.hpp>

#include "actors/messages.hpp"

namespace troupe::actors {

/// `(run_atom, work)` -> runs it; replies `(done_atom, index)` to the sender afterwards.
/// `warm` (may be null) is cloned at start so the first inference pays no clone.
caf::actor spawn_device_worker(caf::local_actor* parent, std::size_t index, bool profiling,
                               std::shared_ptr<const program> warm);

} // namespace troupe::actors
