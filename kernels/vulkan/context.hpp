#pragma once
/// One Vulkan device opened for compute: instance (shared by all devices of one enumeration),
/// logical device, compute queue, shader modules of every embedded shader, pipeline cache,
/// pipelines keyed by (shader, specialization constants), and the two memory pools.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include "kernels/vulkan/memory_pool.hpp"
#include "kernels/vulkan/pipeline_cache_file.hpp"

namespace troupe::kernels::vulkan {

/// RAII VkInstance.
class vk_instance {
public:
  /// Null when Vulkan is unusable here (no ICD, vkCreateInstance fails); `why` says why.
  static std::shared_ptr<vk_instance> create(std::string& why);
  ~vk_instance();
  VkInstance get() const { return instance_; }

private:
  VkInstance instance_ = VK_NULL_HANDLE;
};

/// What a physical device is.
struct device_facts {
  uint32_t index = 0; ///< enumeration index: the only key that tells identical ICDs apart
  std::string name;
  std::string type; ///< "discrete", "integrated", "virtual", "cpu", "other"
  uint64_t memory_bytes = 0;
  uint32_t subgroup_size = 0;
  bool fp16 = false; ///< shaderFloat16 and 16-bit storage buffers
  bool int64 = false; ///< shaderInt64: the "_i64" shader variants (64-bit integer arithmetic)
  bool float64 = false; ///< shaderFloat64: the "_f64" shader variants (double arithmetic)
  std::array<uint8_t, 16> uuid{};
  uint32_t api_version = 0;
  std::string driver_version;
  VkPhysicalDeviceLimits limits{};
  /// Loop iterations one shader invocation may run in all, or 0 for no limit. Mesa's llvmpipe
  /// (lavapipe) ends every loop of an invocation once 65535 iterations have run, counted over
  /// all its loops together (gallivm's loop limiter), silently: the device refuses an op whose
  /// shader would loop longer (op_rule::trips) rather than compute it wrong.
  uint64_t loop_limit = 0;
};

/// Specialization constants: constant_id -> 32-bit word (floats as their bits).
using spec_map = std::map<uint32_t, uint32_t>;
uint32_t float_bits(float f);

class gpu_context {
public:
  /// Opens the device; throws troupe::Exception naming the call, or the shader that failed to load.
  gpu_context(std::shared_ptr<vk_instance> inst, VkPhysicalDevice phys, uint32_t index);
  ~gpu_context();
  gpu_context(const gpu_context&) = delete;
  gpu_context& operator=(const gpu_context&) = delete;

  const device_facts& facts() const { return facts_; }
  VkDevice device() const { return device_; }
  uint32_t queue_family() const { return queue_family_; }
  /// Submits one command buffer; the queue is shared by every executable of this device.
  /// Throws naming the device and the VkResult (VK_ERROR_DEVICE_LOST says the device was lost).
  void submit(VkCommandBuffer cb, VkFence fence);
  /// For tests only (fault injection): when set, submit() calls this instead of vkQueueSubmit.
  /// The hook may submit for real and still return an error; an empty function removes it.
  using submit_hook = std::function<VkResult(VkQueue, const VkSubmitInfo&, VkFence)>;
  void set_submit_hook(submit_hook hook);
  /// Waits until the queue has finished everything submitted (after a failed request).
  void wait_idle();
  /// Checks `count` SPIR-V words (header, instruction lengths) and creates the shader module
  /// `name` (kept for the device's lifetime, used by pipeline()). Throws naming the shader and
  /// the device when the words are not SPIR-V or the driver refuses them.
  VkShaderModule load_shader(const std::string& name, const uint32_t* words, std::size_t count);
  /// Descriptor layout with `bindings` storage buffers (binding 0..n-1); the bindings whose bit
  /// is set in `texel_mask` are storage texel buffers instead (vectorized loads on CPU drivers).
  VkDescriptorSetLayout set_layout(uint32_t bindings, uint32_t texel_mask = 0);
  VkPipelineLayout pipeline_layout(uint32_t bindings, uint32_t texel_mask = 0);
  /// Created once per (shader, constants, layout), kept for the device's lifetime.
  /// Whether `shader` (a variant name) is embedded and loaded on this device.
  bool has_shader(const std::string& shader) const;
  VkPipeline pipeline(const std::string& shader, uint32_t bindings, const spec_map& spec, uint32_t texel_mask = 0);
  std::size_t pipeline_count() const;
  /// CACHE_DIR: merges the pipeline cache file kept in `dir` into this device's cache, once per
  /// folder. True when a valid file was merged; a missing, foreign or damaged file is skipped
  /// and replaced by the next save.
  bool load_pipeline_cache(const std::string& dir);
  /// Writes this device's pipeline cache into `dir` when pipelines were created since the last
  /// save there. Throws naming the file when it cannot be written.
  void save_pipeline_cache(const std::string& dir);

  memory_pool& device_memory() { return *device_pool_; }
  memory_pool& staging_memory() { return *staging_pool_; }
  bool timestamps() const { return timestamp_bits_ > 0; }

  /// Finds the queue family with compute, or -1.
  static int compute_family(VkPhysicalDevice phys);
  static device_facts describe(VkPhysicalDevice phys, uint32_t index);

private:
  void release(); ///< destroys everything; safe on a half-built context
  std::shared_ptr<vk_instance> instance_;
  VkPhysicalDevice phys_;
  device_facts facts_;
  VkDevice device_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t timestamp_bits_ = 0;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::mutex queue_mutex_;
  submit_hook submit_hook_; ///< guarded by queue_mutex_
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::map<std::string, VkShaderModule> modules_;
  mutable std::mutex pipeline_mutex_;
  std::map<uint64_t, std::pair<VkDescriptorSetLayout, VkPipelineLayout>> layouts_; ///< by bindings | texel_mask << 32
  std::map<std::string, VkPipeline> pipelines_;
  cache_identity cache_id_;
  std::map<std::string, bool> cache_loaded_;           ///< per CACHE_DIR: whether its file was merged
  std::map<std::string, std::size_t> cache_saved_at_; ///< per CACHE_DIR: pipelines_.size() at the last save
  std::shared_ptr<memory_pool> device_pool_;
  std::shared_ptr<memory_pool> staging_pool_;
};

} // namespace troupe::kernels::vulkan
