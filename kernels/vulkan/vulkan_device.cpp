#include "kernels/vulkan/vulkan_device.hpp"

#include <cstdio>

#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/program.hpp"
#include "kernels/vulkan/vk_check.hpp"
#include "kernels/vulkan/vulkan_device_impl.hpp"

namespace troupe::kernels::vulkan {

std::map<std::string, std::string> vulkan_device::info() const {
  const auto& f = ctx_->facts();
  char uuid[40];
  char* p = uuid;
  for (auto b : f.uuid) p += std::snprintf(p, 3, "%02x", b);
  return {{"FULL_DEVICE_NAME", f.name},
          {"DEVICE_TYPE", f.type},
          {"DEVICE_UUID", uuid},
          {"DEVICE_INDEX", std::to_string(f.index)},
          {"GPU_DEVICE_TOTAL_MEM_SIZE", std::to_string(f.memory_bytes)},
          {"SUBGROUP_SIZE", std::to_string(f.subgroup_size)},
          {"FP16_SUPPORTED", f.fp16 ? "YES" : "NO"},
          {"VULKAN_API_VERSION", std::to_string(VK_API_VERSION_MAJOR(f.api_version)) + "." +
                                     std::to_string(VK_API_VERSION_MINOR(f.api_version)) + "." +
                                     std::to_string(VK_API_VERSION_PATCH(f.api_version))},
          {"OPTIMIZATION_CAPABILITIES", f.fp16 ? "FP32 FP16" : "FP32"}};
}

support vulkan_device::query(const graph::Graph& g, const graph::Op& op) const {
  auto s = query_op(g, op);
  if (!s.supported) return s;
  if (needs_shader_int64(g, op) && !ctx_->facts().int64)
    return {false, graph::describe(op) + ": 64-bit integer tensors need shaderInt64, which " + ctx_->facts().name + " lacks"};
  if (needs_shader_float64(g, op) && !ctx_->facts().float64)
    return {false, graph::describe(op) + ": float64 tensors need shaderFloat64, which " + ctx_->facts().name + " lacks"};
  s = check_sizes(g, op, ctx_->facts().limits.maxStorageBufferRange, name_);
  if (!s.supported) return s;
  return check_loops(g, op, ctx_->facts().loop_limit, name_);
}

support vulkan_device::query_pending(const graph::Graph& g, const graph::Op& op) const {
  return query_op_pending(g, op);
}

std::unique_ptr<executable> vulkan_device::compile(const graph::Graph& g, const compile_config& cfg) const {
  return compile_program(ctx_, g, cfg, name_);
}

std::vector<std::unique_ptr<kernels::device>> make_vulkan_devices() {
  std::vector<std::unique_ptr<kernels::device>> out;
  std::string why;
  auto inst = vk_instance::create(why);
  if (!inst) return out;
  uint32_t n = 0;
  if (vkEnumeratePhysicalDevices(inst->get(), &n, nullptr) != VK_SUCCESS || n == 0) return out;
  std::vector<VkPhysicalDevice> phys(n);
  if (vkEnumeratePhysicalDevices(inst->get(), &n, phys.data()) < 0) return out;
  phys.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (gpu_context::compute_family(phys[i]) < 0) continue;
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(phys[i], &props);
    if (props.apiVersion < VK_API_VERSION_1_1) continue; // SPIR-V 1.3 shaders need Vulkan 1.1
    auto ctx = std::make_shared<gpu_context>(inst, phys[i], i);
    out.push_back(std::make_unique<vulkan_device>("GPU." + std::to_string(out.size()), std::move(ctx)));
  }
  return out;
}

} // namespace troupe::kernels::vulkan
