#pragma once
/// The memory a CPU executable's intermediate buffers live in while it runs: one block per
/// thread and nesting depth (a step may run a nested graph's executable on the same thread),
/// grown to the largest plan that thread has run and reused by every plan after it. A
/// dynamic-shape model keeps one program per shape; with an arena each, a model serving many
/// lengths held (and first touched) one activation arena per length.
///
/// A block shrinks after 64 leases in a row that each needed under a quarter of it; the blocks
/// go when their thread ends.
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <vector>

namespace troupe::kernels::cpu {

class arena_lease {
public:
  /// At least `bytes`, 64-byte aligned, this thread's at this depth until the lease ends.
  explicit arena_lease(std::size_t bytes);
  ~arena_lease();
  arena_lease(const arena_lease&) = delete;
  arena_lease& operator=(const arena_lease&) = delete;

  std::byte* base() const { return base_; }

private:
  std::byte* base_ = nullptr;
};

} // namespace troupe::kernels::cpu
