#include "kernels/cpu/output_pool.hpp"

#include <cstdlib>
#include <new>
#include <string>

#include <troupe/exception.hpp>

namespace troupe::kernels::cpu {

output_pool::~output_pool() {
  for (auto& [bytes, p] : free_) std::free(p);
}

std::shared_ptr<void> output_pool::take(std::size_t bytes) {
  void* p = nullptr;
  {
    std::lock_guard lock(m_);
    for (std::size_t i = 0; i < free_.size(); ++i)
      if (free_[i].first == bytes) {
        p = free_[i].second;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
  }
  if (!p) p = std::aligned_alloc(64, bytes);
  if (!p) throw Exception("CPU: out of memory allocating an output of " + std::to_string(bytes) + " bytes");
  std::weak_ptr<output_pool> home = weak_from_this();
  return std::shared_ptr<void>(p, [home, bytes](void* q) {
    if (const auto pool = home.lock()) pool->give(q, bytes);
    else std::free(q);
  });
}

std::size_t output_pool::held() const {
  std::lock_guard lock(m_);
  return free_.size();
}

void output_pool::give(void* p, std::size_t bytes) {
  std::lock_guard lock(m_);
  if (free_.size() >= max_blocks_) {
    // The oldest goes: the newest is the likeliest to be asked for next.
    std::free(free_.front().second);
    free_.erase(free_.begin());
  }
  free_.emplace_back(bytes, p);
}

} // namespace troupe::kernels::cpu
