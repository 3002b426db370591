#pragma once
/// Runs a compiled model's InferRequest completion callbacks on a thread of their own (a
/// detached actor), never on a device worker's: a slow callback then delays the callbacks
/// after it, not the device, which goes on with the next request.
#include <functional>

#include <caf/all.hpp>

namespace troupe {

class callback_runner {
public:
  explicit callback_runner(caf::actor_system& sys);
  ~callback_runner();
  callback_runner(const callback_runner&) = delete;
  callback_runner& operator=(const callback_runner&) = delete;

  /// Runs `job` on the callback thread, after the jobs posted before it.
  void post(std::function<void()> job);

  /// True on a callback thread: there, waiting for another callback to return would wait for
  /// a job queued behind the one running.
  static bool on_callback_thread();

private:
  caf::actor actor_;
};

} // namespace troupe
