#pragma once
/// OpenVINO's MULTI and AUTO devices. MULTI (and AUTO with CUMULATIVE_THROUGHPUT) compiles the
/// model on every device of its list, each configured for throughput, and spreads whole
/// requests over them through the scheduler actor (actors/scheduler). AUTO with LATENCY or
/// THROUGHPUT picks the one best device of its candidates and compiles the model there.
#include <set>
#include <string>

#include <troupe/core.hpp>

namespace troupe {

/// "MULTI", "MULTI:...", "AUTO", "AUTO:...".
bool is_multi_or_auto(const std::string& device);

/// Properties MULTI and AUTO take for themselves (besides DEVICE_PRIORITIES and
/// DEVICE_PROPERTIES); every other one goes to each device of the list.
const std::set<std::string>& multi_own_keys();

/// Compiles `model` for `device` ("MULTI:...", "AUTO..."): each device of the list through
/// `core.compile_single`, with the properties routed to it.
CompiledModel compile_multi(Core::Impl& core, const Model& model, const std::string& device, const AnyMap& call);

} // namespace troupe
