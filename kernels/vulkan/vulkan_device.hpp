#pragma once
/// The GPU devices: one per Vulkan physical device with a compute queue, named "GPU.0",
/// "GPU.1", ... in enumeration order (the index tells identical ICDs apart).
#include <memory>
#include <vector>

#include "kernels/device.hpp"

namespace troupe::kernels::vulkan {

/// Empty when Vulkan is unusable here (no ICD, vkCreateInstance fails, no device): never throws
/// for that. Throws troupe::Exception naming the shader or call when a device fails to open.
std::vector<std::unique_ptr<kernels::device>> make_vulkan_devices();

} // namespace troupe::kernels::vulkan

namespace troupe::kernels {
using vulkan::make_vulkan_devices;
}
