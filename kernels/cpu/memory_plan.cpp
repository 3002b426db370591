#include "kernels/cpu/memory_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace troupe::kernels::cpu {

namespace {

constexpr std::size_t alignment = 64; ///< a cache line, and what oneDNN's AVX-512 kernels like
constexpr std::size_t never = std::numeric_limits<std::size_t>::max();

std::size_t aligned(std::size_t n) { return (n + alignment - 1) / alignment * alignment; }

struct lifetime {
  std::size_t first = never, last = 0;
  void touch(std::size_t s) {
    first = std::min(first, s);
    last = std::max(last, s);
  }
  bool overlaps(const lifetime& o) const { return first <= o.last && o.first <= last; }
};

} // namespace

void plan_memory(plan& p) {
  const std::size_t n = p.buffers.size(), end = p.steps.size();
  std::vector<lifetime> life(n);
  for (std::size_t s = 0; s < end; ++s) {
    const auto& st = p.steps[s];
    for (const auto& a : st.args) life[static_cast<std::size_t>(a.buf)].touch(s);
    for (int b : st.ref_in)
      if (b >= 0) life[static_cast<std::size_t>(b)].touch(s);
    for (int b : st.ref_out)
      if (b >= 0) life[static_cast<std::size_t>(b)].touch(s);
  }
  // An output in the arena is copied out after the last step. (plan_builder writes outputs in
  // place, outside the arena; this keeps the plan right for any other plan.)
  for (int b : p.outputs)
    if (b >= 0) life[static_cast<std::size_t>(b)].touch(end);

  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i) {
    auto& b = p.buffers[i];
    b.offset = -1;
    if (b.constant || b.graph_input >= 0 || b.graph_output >= 0 || b.bytes == 0) continue;
    if (life[i].first == never) life[i] = {0, end}; // touched by no step: keep it for the whole run
    order.push_back(i);
  }
  // Largest first, each at the lowest offset clear of the placed buffers live at the same time
  // (the greedy-by-size arena planning of TFLite and others).
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p.buffers[a].bytes > p.buffers[b].bytes; });
  std::vector<std::size_t> placed;
  std::size_t arena = 0;
  std::vector<std::pair<std::size_t, std::size_t>> busy; // [offset, end) of live neighbours
  for (std::size_t i : order) {
    busy.clear();
    for (std::size_t j : placed)
      if (life[i].overlaps(life[j]))
        busy.emplace_back(static_cast<std::size_t>(p.buffers[j].offset),
                          static_cast<std::size_t>(p.buffers[j].offset) + aligned(p.buffers[j].bytes));
    std::sort(busy.begin(), busy.end());
    const std::size_t need = aligned(p.buffers[i].bytes);
    std::size_t at = 0;
    for (const auto& [from, to] : busy) {
      if (from >= at + need) break; // the gap before this neighbour fits
      at = std::max(at, to);
    }
    p.buffers[i].offset = static_cast<std::ptrdiff_t>(at);
    arena = std::max(arena, at + need);
    placed.push_back(i);
  }
  p.arena_bytes = arena;
  if (std::getenv("TROUPE_CPU_VERBOSE")) {
    std::size_t total = 0;
    for (std::size_t i : order) total += aligned(p.buffers[i].bytes);
    std::fprintf(stderr, "memory plan: %zu buffers of %zu bytes in an arena of %zu bytes\n", order.size(), total, arena);
    for (const auto& b : p.buffers)
      if (b.constant && b.constant->get_byte_size() >= (1u << 20))
        std::fprintf(stderr, "  constant of %zu bytes at %p\n", b.constant->get_byte_size(), b.constant->data());
  }
}

} // namespace troupe::kernels::cpu
