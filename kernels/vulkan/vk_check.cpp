#include "kernels/vulkan/vk_check.hpp"

#include "kernels/device.hpp"

#include <troupe/exception.hpp>

namespace troupe::kernels::vulkan {

std::string result_name(VkResult r) {
  switch (r) {
#define TROUPE_VK_CASE(x) case x: return #x;
    TROUPE_VK_CASE(VK_SUCCESS)
    TROUPE_VK_CASE(VK_NOT_READY)
    TROUPE_VK_CASE(VK_TIMEOUT)
    TROUPE_VK_CASE(VK_INCOMPLETE)
    TROUPE_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    TROUPE_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TROUPE_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    TROUPE_VK_CASE(VK_ERROR_DEVICE_LOST)
    TROUPE_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    TROUPE_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    TROUPE_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    TROUPE_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    TROUPE_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    TROUPE_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    TROUPE_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TROUPE_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    TROUPE_VK_CASE(VK_ERROR_UNKNOWN)
    TROUPE_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    TROUPE_VK_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    TROUPE_VK_CASE(VK_ERROR_FRAGMENTATION)
    TROUPE_VK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef TROUPE_VK_CASE
  default: return "VkResult(" + std::to_string(static_cast<int>(r)) + ")";
  }
}

void throw_vk_error(VkResult r, const std::string& call) {
  // The driver's failure, not the input's: a scheduler may run the request elsewhere.
  throw device_error(r == VK_ERROR_DEVICE_LOST ? failure_kind::device_lost : failure_kind::device_failure,
                     "Vulkan: " + call + " failed with " + result_name(r));
}

} // namespace troupe::kernels::vulkan
