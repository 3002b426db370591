#pragma once
/// EXCLUDED_OPS, the debugging switch: a device that answers "cannot run" for some op types
/// and is otherwise the device it wraps. Forces HETERO splits on any machine (CI's lavapipe
/// runs every PP-OCR op), and narrows down which op a device gets wrong.
#include <memory>
#include <set>
#include <string>

#include "kernels/device.hpp"

namespace troupe {

/// `inner` itself when `excluded` is empty.
std::shared_ptr<kernels::device> limit_ops(std::shared_ptr<kernels::device> inner, std::set<std::string> excluded);

/// The op types of EXCLUDED_OPS for `device` (canonical name): the property's value when
/// given, else TROUPE_EXCLUDED_OPS from the environment ("GPU.0:Conv,Resize;CPU:Softmax",
/// "GPU" standing for GPU.0). Throws naming the variable when it is malformed.
std::set<std::string> excluded_ops(const std::string& device, const std::string* property_value);

} // namespace troupe
