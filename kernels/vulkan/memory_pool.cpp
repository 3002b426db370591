#include "kernels/vulkan/memory_pool.hpp"

#include <troupe/exception.hpp>

#include "kernels/vulkan/vk_check.hpp"

namespace troupe::kernels::vulkan {

region::~region() {
  if (pool_) pool_->release(block_, offset, size);
}

memory_pool::memory_pool(VkDevice dev, VkPhysicalDevice phys, VkMemoryPropertyFlags required,
                         VkMemoryPropertyFlags preferred, VkDeviceSize block_size, VkDeviceSize alignment,
                         VkDeviceSize max_allocation, std::string what)
    : device_(dev), block_size_(block_size), alignment_(alignment), max_allocation_(max_allocation),
      what_(std::move(what)) {
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(phys, &props);
  int best = -1;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    auto f = props.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    if (best < 0 || ((f & preferred) == preferred &&
                     (props.memoryTypes[best].propertyFlags & preferred) != preferred))
      best = static_cast<int>(i);
  }
  if (best < 0) throw Exception("Vulkan: no memory type for the " + what_);
  type_index_ = static_cast<uint32_t>(best);
  host_visible_ = (props.memoryTypes[best].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
}

memory_pool::~memory_pool() {
  for (auto& b : blocks_)
    if (b) destroy(*b);
}

void memory_pool::destroy(block& b) {
  if (b.buffer) vkDestroyBuffer(device_, b.buffer, nullptr);
  if (b.mapped) vkUnmapMemory(device_, b.memory);
  if (b.memory) vkFreeMemory(device_, b.memory, nullptr);
}

std::unique_ptr<memory_pool::block> memory_pool::new_block(VkDeviceSize size) {
  auto b = std::make_unique<block>();
  b->size = size;
  struct guard { memory_pool* p; block* b; ~guard() { if (b) p->destroy(*b); } } g{this, b.get()};
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  vk_check(vkCreateBuffer(device_, &bi, nullptr, &b->buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b->buffer, &req);
  if (!(req.memoryTypeBits & (1u << type_index_)))
    throw Exception("Vulkan: the " + what_ + " memory type cannot back storage buffers");
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type_index_;
  VkResult r = vkAllocateMemory(device_, &ai, nullptr, &b->memory);
  if (r != VK_SUCCESS)
    throw Exception("Vulkan: vkAllocateMemory of " + std::to_string(req.size) + " bytes for the " + what_ +
                    " failed with " + result_name(r));
  vk_check(vkBindBufferMemory(device_, b->buffer, b->memory, 0), "vkBindBufferMemory");
  if (host_visible_) vk_check(vkMapMemory(device_, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped), "vkMapMemory");
  b->free[0] = size;
  g.b = nullptr;
  return b;
}

region_ptr memory_pool::allocate(VkDeviceSize size) {
  VkDeviceSize want = (std::max<VkDeviceSize>(size, 1) + alignment_ - 1) / alignment_ * alignment_;
  if (want > max_allocation_)
    throw Exception("Vulkan: " + std::to_string(size) + " bytes exceed the largest allocation the device allows (" +
                    std::to_string(max_allocation_) + " bytes) for the " + what_);
  std::lock_guard lock(mutex_);
  auto take = [&](std::size_t bi) -> region_ptr {
    block& b = *blocks_[bi];
    for (auto it = b.free.begin(); it != b.free.end(); ++it) {
      if (it->second < want) continue;
      VkDeviceSize off = it->first, left = it->second - want;
      b.free.erase(it);
      if (left) b.free[off + want] = left;
      b.used += want;
      in_use_ += want;
      auto r = std::make_shared<region>();
      r->buffer = b.buffer;
      r->offset = off;
      r->size = want;
      r->mapped = b.mapped ? static_cast<char*>(b.mapped) + off : nullptr;
      r->pool_ = shared_from_this();
      r->block_ = bi;
      return r;
    }
    return nullptr;
  };
  for (std::size_t i = 0; i < blocks_.size(); ++i)
    if (blocks_[i])
      if (auto r = take(i)) return r;
  auto b = new_block(std::max(want, block_size_ < max_allocation_ ? block_size_ : max_allocation_));
  std::size_t slot = blocks_.size();
  for (std::size_t i = 0; i < blocks_.size(); ++i)
    if (!blocks_[i]) { slot = i; break; }
  if (slot == blocks_.size()) blocks_.push_back(nullptr);
  blocks_[slot] = std::move(b);
  return take(slot);
}

void memory_pool::release(std::size_t bi, VkDeviceSize offset, VkDeviceSize size) {
  std::lock_guard lock(mutex_);
  block& b = *blocks_[bi];
  auto [it, ok] = b.free.emplace(offset, size);
  (void)ok;
  auto next = std::next(it);
  if (next != b.free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    b.free.erase(next);
  }
  if (it != b.free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      b.free.erase(it);
    }
  }
  b.used -= size;
  in_use_ -= size;
  if (b.used == 0) { // an empty block goes back to the driver
    destroy(b);
    blocks_[bi].reset();
  }
}

VkDeviceSize memory_pool::bytes_in_use() const {
  std::lock_guard lock(mutex_);
  return in_use_;
}

std::size_t memory_pool::block_count() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (auto& b : blocks_) n += b ? 1 : 0;
  return n;
}

} // namespace troupe::kernels::vulkan
