#pragma once
/// Blocks for a compiled model's outputs, taken back when the caller lets go of an output and
/// handed out again for the next run's. A language model's logits are 25 MB at 128 tokens:
/// glibc maps a block that big fresh and unmaps it on free, so a new block per run pays its page
/// faults every run (lm_tiny: 46 ms per inference became 57 ms). A recycled block does not.
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace troupe::kernels::cpu {

class output_pool : public std::enable_shared_from_this<output_pool> {
public:
  /// `max_blocks`: how many let-go blocks are kept (the rest are freed).
  explicit output_pool(std::size_t max_blocks) : max_blocks_(max_blocks) {}
  ~output_pool();
  output_pool(const output_pool&) = delete;
  output_pool& operator=(const output_pool&) = delete;

  /// A 64-byte-aligned block of `bytes`, owned by the pointer returned: when its last owner goes,
  /// the block comes back here (or is freed, once the pool is gone). Throws on out of memory.
  std::shared_ptr<void> take(std::size_t bytes);

  std::size_t held() const;

private:
  void give(void* p, std::size_t bytes);

  const std::size_t max_blocks_;
  mutable std::mutex m_;
  std::vector<std::pair<std::size_t, void*>> free_; ///< size, block
};

} // namespace troupe::kernels::cpu
