#include "base/thread_round_trip.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace troupe {

double thread_round_trip_us(int runs) {
  std::mutex m;
  std::condition_variable cv;
  int state = 0; // 0 idle, 1 asked, 2 answered, 3 stop
  std::thread peer([&] {
    std::unique_lock l(m);
    while (true) {
      cv.wait(l, [&] { return state == 1 || state == 3; });
      if (state == 3) return;
      state = 2;
      cv.notify_all();
    }
  });
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    {
      std::unique_lock l(m);
      state = 1;
      cv.notify_all();
      cv.wait(l, [&] { return state == 2; });
      state = 0;
    }
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  {
    std::lock_guard l(m);
    state = 3;
    cv.notify_all();
  }
  peer.join();
  if (us.empty()) return 0;
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

} // namespace troupe
