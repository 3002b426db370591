#pragma once
/// Whether a device that can come and go (a remote node's) is reachable now. Its owner says
/// when it goes and comes back; watchers (MULTI's schedulers) hear each change. A watcher
/// that returns false is forgotten (its scheduler is gone).
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace troupe::kernels {

class device_presence {
public:
  using watcher = std::function<bool(bool up)>;

  bool up() const {
    std::lock_guard lock(mutex_);
    return up_;
  }

  /// Adds `w`; it hears the present state at once when the device is down.
  void watch(watcher w) {
    std::lock_guard order(notifying_);
    if (!up() && !w(false)) return;
    std::lock_guard lock(mutex_);
    watchers_.emplace_back(next_++, std::move(w));
  }

  /// The device went (false) or came back (true): every watcher hears it, outside the lock
  /// (a watcher may dispatch requests).
  void set(bool up) {
    std::lock_guard order(notifying_); // watchers hear the changes in order, and once each
    std::vector<std::pair<uint64_t, watcher>> now;
    {
      std::lock_guard lock(mutex_);
      if (up_ == up) return;
      up_ = up;
      now = watchers_;
    }
    for (auto& [id, w] : now)
      if (!w(up)) {
        std::lock_guard lock(mutex_);
        std::erase_if(watchers_, [id = id](const auto& x) { return x.first == id; });
      }
  }

private:
  mutable std::mutex mutex_;
  std::mutex notifying_;
  bool up_ = true;
  std::vector<std::pair<uint64_t, watcher>> watchers_;
  uint64_t next_ = 0;
};

} // namespace troupe::kernels
