#pragma once
/// A buffer sub-allocator: a few large VkDeviceMemory blocks, each bound to one VkBuffer, carved
/// into aligned regions (first fit, neighbours merged on release). Tensors never get a
/// vkAllocateMemory of their own. Thread-safe.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

namespace troupe::kernels::vulkan {

class memory_pool;

/// One suballocation; returns itself to its pool when the last handle goes.
struct region {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  void* mapped = nullptr; ///< host address when the pool is host-visible
  ~region();
  region() = default;
  region(const region&) = delete;
  region& operator=(const region&) = delete;

private:
  friend class memory_pool;
  std::shared_ptr<memory_pool> pool_;
  std::size_t block_ = 0;
};
using region_ptr = std::shared_ptr<region>;

class memory_pool : public std::enable_shared_from_this<memory_pool> {
public:
  /// `required` memory property flags must be present, `preferred` ones are taken when a type has them.
  memory_pool(VkDevice dev, VkPhysicalDevice phys, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
              VkDeviceSize block_size, VkDeviceSize alignment, VkDeviceSize max_allocation, std::string what);
  ~memory_pool();
  memory_pool(const memory_pool&) = delete;
  memory_pool& operator=(const memory_pool&) = delete;

  /// Throws troupe::Exception (naming `what_` and the size) when the device cannot provide it.
  region_ptr allocate(VkDeviceSize size);
  VkDeviceSize bytes_in_use() const;
  std::size_t block_count() const;
  bool host_visible() const { return host_visible_; }

private:
  friend struct region;
  struct block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    VkDeviceSize used = 0;
    void* mapped = nullptr;
    std::map<VkDeviceSize, VkDeviceSize> free; ///< offset -> size
  };
  void release(std::size_t block, VkDeviceSize offset, VkDeviceSize size);
  std::unique_ptr<block> new_block(VkDeviceSize size);
  void destroy(block& b);

  VkDevice device_;
  uint32_t type_index_ = 0;
  bool host_visible_ = false;
  VkDeviceSize block_size_, alignment_, max_allocation_;
  std::string what_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<block>> blocks_; ///< null where a block was freed
  VkDeviceSize in_use_ = 0;
};

} // namespace troupe::kernels::vulkan
