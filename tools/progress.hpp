#pragma once
/// Progress of the measurement on stderr: redrawn in place (\r) at most 4 times a second on
/// a terminal; in a log (stderr not a terminal), a whole line every 5 seconds at most.
#include <chrono>
#include <cstdint>

namespace troupe::cli {

class progress {
public:
  progress(uint64_t niter, double seconds);
  void update(uint64_t done);
  void finish();

private:
  using clock = std::chrono::steady_clock;
  uint64_t niter_;
  double seconds_;
  bool tty_;
  clock::time_point start_ = clock::now(), last_ = start_;
  bool drawn_ = false;
};

} // namespace troupe::cli
