#pragma once
/// Blocks for a compiled model's outputs, taken back when the caller lets go of an output and
/// handed out again for the next run's (the CPU's and the GPU's executables). A language
/// model's logits are 25 MB at 128 tokens: glibc maps a block that big fresh and unmaps it on
/// free, so a new block per run pays its page faults every run (lm_tiny on the CPU: 46 ms per
/// inference became 57 ms). A recycled block does not.
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <troupe/exception.hpp>
#include <troupe/tensor.hpp>

namespace troupe::kernels {

class output_pool : public std::enable_shared_from_this<output_pool> {
public:
  /// `max_blocks`: how many let-go blocks are kept (the oldest beyond that are freed).
  explicit output_pool(std::size_t max_blocks) : max_blocks_(max_blocks) {}
  ~output_pool() {
    for (auto& [bytes, p] : free_) std::free(p);
  }
  output_pool(const output_pool&) = delete;
  output_pool& operator=(const output_pool&) = delete;

  /// A 64-byte-aligned block of `bytes` (a multiple of 64), owned by the pointer returned: when
  /// its last owner goes, the block comes back here (or is freed, once the pool is gone).
  std::shared_ptr<void> take(std::size_t bytes) {
    void* p = nullptr;
    {
      std::lock_guard lock(m_);
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->first == bytes) {
          p = it->second;
          free_.erase(it);
          break;
        }
    }
    if (!p) p = std::aligned_alloc(64, bytes);
    if (!p) throw Exception("out of memory allocating an output of " + std::to_string(bytes) + " bytes");
    return std::shared_ptr<void>(p, [home = weak_from_this(), bytes](void* q) {
      if (const auto pool = home.lock()) pool->give(q, bytes);
      else std::free(q);
    });
  }

  /// A tensor of `type` and `shape` on a block of this pool, its contents undefined (the caller
  /// writes it whole); strings are objects and get a plain tensor.
  Tensor tensor(element_type type, const Shape& shape) {
    if (type == element_type::string) return Tensor(type, shape);
    const std::size_t bytes = (static_cast<std::size_t>(shape_size(shape)) * element_size(type) + 63) / 64 * 64 + 64;
    std::shared_ptr<void> block = take(bytes);
    void* p = block.get();
    return Tensor(type, shape, std::move(block), p);
  }

  /// Blocks kept now.
  std::size_t held() const {
    std::lock_guard lock(m_);
    return free_.size();
  }

private:
  void give(void* p, std::size_t bytes) {
    std::lock_guard lock(m_);
    if (max_blocks_ == 0) {
      std::free(p);
      return;
    }
    if (free_.size() >= max_blocks_) {
      // The oldest goes: the newest is the likeliest to be asked for next.
      std::free(free_.front().second);
      free_.erase(free_.begin());
    }
    free_.emplace_back(bytes, p);
  }

  const std::size_t max_blocks_;
  mutable std::mutex m_;
  std::vector<std::pair<std::size_t, void*>> free_; ///< size, block
};

} // namespace troupe::kernels
