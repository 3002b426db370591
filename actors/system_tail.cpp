#include "actors/system_tail.hpp"

#include <condition_variable>
#include <mutex>

namespace troupe::actors {

namespace {

struct tail_count {
  std::mutex mutex;
  std::condition_variable idle;
  std::size_t running = 0;
};

/// Never destroyed: the exit guard and the last tails use it while static destructors run.
tail_count& counter() {
  static auto* c = new tail_count;
  return *c;
}

thread_local std::size_t own_tails = 0;

} // namespace

system_tail::system_tail() {
  auto& c = counter();
  std::lock_guard lock(c.mutex);
  ++c.running;
  ++own_tails;
}

system_tail::~system_tail() {
  auto& c = counter();
  {
    std::lock_guard lock(c.mutex);
    --c.running;
    --own_tails;
  }
  c.idle.notify_all();
}

void wait_for_tails() {
  auto& c = counter();
  std::unique_lock lock(c.mutex);
  c.idle.wait(lock, [&] { return c.running == own_tails; });
}

std::size_t tails_running() {
  auto& c = counter();
  std::lock_guard lock(c.mutex);
  return c.running;
}

} // namespace troupe::actors
