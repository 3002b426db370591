#pragma once
/// The debugging switches of a device, each a wrapper that is otherwise the device itself:
/// EXCLUDED_OPS answers "cannot run" for some op types (forces HETERO splits on any machine, and
/// narrows down which op a device gets wrong); FAIL_EVERY makes every Nth run of a compiled
/// model fail as a device failure (the soak's failures from inside a device: MULTI must move
/// such a request, never lose it).
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "kernels/device.hpp"

namespace troupe {

/// `inner` itself when `excluded` is empty and `fail_every` 0.
std::shared_ptr<kernels::device> debug_device(std::shared_ptr<kernels::device> inner, std::set<std::string> excluded,
                                              int64_t fail_every);

/// The op types of EXCLUDED_OPS for `device` (canonical name): the property's value when
/// given, else TROUPE_EXCLUDED_OPS from the environment ("GPU.0:Conv,Resize;CPU:Softmax",
/// "GPU" standing for GPU.0). Throws naming the variable when it is malformed.
std::set<std::string> excluded_ops(const std::string& device, const std::string* property_value);

/// FAIL_EVERY for `device`: the property's value when given, else TROUPE_FAIL_EVERY from the
/// environment ("CPU:25;GPU.1:3"), else 0. Throws naming the variable when it is malformed.
int64_t fail_every(const std::string& device, const int64_t* property_value);

} // namespace troupe
