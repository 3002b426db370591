#pragma once
/// The stretch of a system thread that holds references to what an application made (a
/// request's sink, a compiled program, a model's engine) while it finishes a piece of work.
///
/// An application sees a request complete (wait() returns, its callback runs) while the thread
/// that completed it still holds such references, and may drop its own handles and leave main.
/// The last reference then goes on the system thread, and with it, perhaps, a Vulkan instance
/// (vkDestroyInstance unloads the driver) or a whole actor system, while the main thread runs
/// the process's exit handlers: a crash after a run that succeeded. So every handler that holds
/// such references counts itself here, and at exit troupe waits until none is running
/// (runtime/engine.cpp's exit guard) before the drivers' exit handlers run.
#include <cstddef>

namespace troupe::actors {

class system_tail {
public:
  system_tail();
  ~system_tail();
  system_tail(const system_tail&) = delete;
  system_tail& operator=(const system_tail&) = delete;
};

/// Blocks until no tail runs on another thread (one running on the calling thread, which is
/// exiting from inside a handler, is not waited for).
void wait_for_tails();

/// How many tails are running now (for tests).
std::size_t tails_running();

} // namespace troupe::actors
