#include "kernels/cpu/thread_arena.hpp"

#include <cstring>
#include <string>

#include <troupe/exception.hpp>

namespace troupe::kernels::cpu {

namespace {

struct free_block {
  void operator()(std::byte* p) const { std::free(p); }
};

struct block {
  std::unique_ptr<std::byte, free_block> memory;
  std::size_t bytes = 0;
  int small_leases = 0; ///< leases in a row that needed under a quarter of it
};

/// After this many leases in a row that each needed under a quarter of the block, it shrinks:
/// a large model run once (or gone) does not keep its arena on the thread for ever.
constexpr int leases_before_shrinking = 64;

struct thread_arenas {
  std::vector<block> by_depth;
  std::size_t depth = 0;
};

thread_local thread_arenas arenas;

} // namespace

arena_lease::arena_lease(std::size_t bytes) {
  auto& a = arenas;
  if (a.by_depth.size() <= a.depth) a.by_depth.resize(a.depth + 1);
  block& b = a.by_depth[a.depth];
  b.small_leases = b.memory && bytes < b.bytes / 4 ? b.small_leases + 1 : 0;
  if (b.small_leases >= leases_before_shrinking) {
    b.memory.reset();
    b.bytes = 0;
    b.small_leases = 0;
  }
  if (!b.memory || b.bytes < bytes) {
    // Grown with room to spare: lengths served one after another differ a little each time.
    const std::size_t want = (std::max(bytes, b.bytes + b.bytes / 4) + 63) / 64 * 64 + 64;
    b.memory.reset();
    b.memory.reset(static_cast<std::byte*>(std::aligned_alloc(64, want)));
    if (!b.memory) {
      b.bytes = 0;
      throw Exception("CPU: cannot allocate " + std::to_string(want) + " bytes of buffers");
    }
    b.bytes = want;
    // Not zeroed: every step writes what it reads later. A sanitizer build fills it with NaN
    // bytes, so that a kernel relying on zeroed memory shows up as wrong results there.
#if defined(__SANITIZE_ADDRESS__)
    std::memset(b.memory.get(), 0xff, want);
#endif
  }
  base_ = b.memory.get();
  ++a.depth;
}

arena_lease::~arena_lease() { --arenas.depth; }

} // namespace troupe::kernels::cpu
