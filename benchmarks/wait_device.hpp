#pragma once
/// Devices for the actor benchmarks whose service time is a wait: the two CPU cores here are
/// shared by everything, so real devices cannot show requests overlapping.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "actors/runner.hpp"
#include "actors/subgraph_actor.hpp"
#include "kernels/device.hpp"

namespace troupe::bench {

/// A stage's program: waits `wait`, then hands its input on as its output.
class wait_executable final : public kernels::executable {
public:
  explicit wait_executable(std::chrono::microseconds wait) : wait_(wait) {}
  void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override {
    if (wait_.count() > 0) std::this_thread::sleep_for(wait_);
    out = in;
  }
  std::vector<kernels::op_profile> profile() const override { return {}; }
  std::unique_ptr<kernels::executable> clone() const override { return std::make_unique<wait_executable>(wait_); }

private:
  std::chrono::microseconds wait_;
};

/// Counts completions; wait_for(n) blocks until n requests have completed.
class counting_sink final : public actors::completion_sink {
public:
  void on_outputs(uint64_t, std::vector<Tensor>, std::vector<kernels::op_profile>) noexcept override { done(); }
  void on_error(uint64_t, const actors::failure& f) noexcept override {
    std::fprintf(stderr, "request failed: %s\n", f.message.c_str());
    done();
  }
  bool wanted(uint64_t) const noexcept override { return true; }
  void wait_for(uint64_t n) {
    std::unique_lock l(m_);
    cv_.wait(l, [&] { return completed_ >= n; });
  }

private:
  void done() {
    {
      std::lock_guard l(m_);
      ++completed_;
    }
    cv_.notify_all();
  }
  std::mutex m_;
  std::condition_variable cv_;
  uint64_t completed_ = 0;
};

/// A subgraph on a pool of its own, `streams` streams, whose program waits `wait` per request.
inline std::unique_ptr<actors::subgraph> wait_subgraph(caf::actor_system& sys, std::chrono::microseconds wait,
                                                       std::size_t streams = 1) {
  actors::subgraph_spec sub;
  auto prog = std::make_shared<actors::program>();
  prog->prototype = std::make_unique<wait_executable>(wait);
  sub.fixed = std::move(prog);
  sub.streams = streams;
  return std::make_unique<actors::subgraph>(sys, std::move(sub));
}

/// Seconds to complete `n` requests through `r` with at most `in_flight` outstanding.
inline double run_requests(actors::runner& r, const Tensor& t, uint64_t n, uint64_t in_flight) {
  auto sink = std::make_shared<counting_sink>();
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    if (i >= in_flight) sink->wait_for(i - in_flight + 1);
    r.submit(actors::inference{i, {t}, sink});
  }
  sink->wait_for(n);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace troupe::bench
