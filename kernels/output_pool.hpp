#pragma once
/// Blocks for a compiled model's outputs, taken back when the caller lets go of an output and
/// handed out again for the next run's (the CPU's and the GPU's executables). A language
/// model's logits are 25 MB at 128 tokens: glibc maps a block that big fresh and unmaps it on
/// free, so a new block per run pays its page faults every run (lm_tiny on the CPU: 46 ms per
/// inference became 57 ms). A recycled block does not.
///
/// One pool serves every program of a compiled model (compile_config::output_blocks): a model
/// with dynamic inputs compiles one per length, and a stream of lengths 1..128 would otherwise
/// keep a block per program (lm_tiny: 1.4 GB) and still fault on most runs, each length's
/// program seeing its own block back only when the length comes again. So a request takes the
/// smallest kept block that fits, and the pool keeps the largest blocks.
#include <algorithm>
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
  /// `max_blocks`: how many let-go blocks are kept (the smallest beyond that are freed).
  explicit output_pool(std::size_t max_blocks) : max_blocks_(max_blocks) {}

  /// Keeps at least `n` blocks from now on (each program sharing the pool asks for its outputs
  /// times the runs it has at once).
  void keep_at_least(std::size_t n) {
    std::lock_guard lock(m_);
    max_blocks_ = std::max(max_blocks_, n);
  }
  ~output_pool() {
    for (auto& [bytes, p] : free_) std::free(p);
  }
  output_pool(const output_pool&) = delete;
  output_pool& operator=(const output_pool&) = delete;

  /// A 64-byte-aligned block of at least `bytes` (a multiple of 64), owned by the pointer
  /// returned: when its last owner goes, the block comes back here (or is freed, once the pool
  /// is gone).
  std::shared_ptr<void> take(std::size_t bytes) {
    void* p = nullptr;
    std::size_t capacity = bytes;
    {
      std::lock_guard lock(m_);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->first >= bytes && (best == free_.end() || it->first < best->first)) best = it;
      if (best != free_.end()) {
        capacity = best->first;
        p = best->second;
        free_.erase(best);
      }
    }
    if (!p) p = std::aligned_alloc(64, bytes);
    if (!p) throw Exception("out of memory allocating an output of " + std::to_string(bytes) + " bytes");
    return std::shared_ptr<void>(p, [home = weak_from_this(), capacity](void* q) {
      if (const auto pool = home.lock()) pool->give(q, capacity);
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
  void give(void* p, std::size_t capacity) {
    std::lock_guard lock(m_);
    if (free_.size() >= max_blocks_) {
      // The smallest goes (this one, or a kept one): a large block serves any smaller output.
      auto smallest = std::min_element(free_.begin(), free_.end());
      if (smallest == free_.end() || smallest->first >= capacity) {
        std::free(p);
        return;
      }
      std::free(smallest->second);
      free_.erase(smallest);
    }
    free_.emplace_back(capacity, p);
  }

  std::size_t max_blocks_;
  mutable std::mutex m_;
  std::vector<std::pair<std::size_t, void*>> free_; ///< size, block
};

} // namespace troupe::kernels
