#pragma once
/// Vulkan errors as troupe::Exception naming the call and the VkResult.
#include <string>

#include <vulkan/vulkan.h>

namespace troupe::kernels::vulkan {

/// "VK_ERROR_OUT_OF_DEVICE_MEMORY", or the number for codes this table does not know.
std::string result_name(VkResult r);

[[noreturn]] void throw_vk_error(VkResult r, const std::string& call);

inline void vk_check(VkResult r, const char* call) {
  if (r != VK_SUCCESS) throw_vk_error(r, call);
}

} // namespace troupe::kernels::vulkan
