#pragma once
/// A completion sink for the actors' tests: records every completion per request id, and
/// lets the test wait for a number of them without a clock.
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "actors/messages.hpp"

namespace troupe::tests {

using actors::failure;
using actors::failure_kind;

/// Records every completion; counts them per request id.
struct recorder : actors::completion_sink {
  std::mutex m;
  std::condition_variable cv;
  std::map<uint64_t, int> completions;
  std::map<uint64_t, float> values;
  std::map<uint64_t, std::string> errors;
  std::map<uint64_t, failure_kind> kinds;
  std::vector<uint64_t> order; ///< request ids in completion order
  void on_outputs(uint64_t id, std::vector<Tensor> out, std::vector<kernels::op_profile>) noexcept override {
    std::lock_guard l(m);
    ++completions[id];
    order.push_back(id);
    values[id] = out.at(0).data<float>()[0];
    cv.notify_all();
  }
  void on_error(uint64_t id, const failure& f) noexcept override {
    std::lock_guard l(m);
    ++completions[id];
    errors[id] = f.message;
    kinds[id] = f.kind;
    cv.notify_all();
  }
  bool wanted(uint64_t) const noexcept override { return true; }
  /// No clock: a completion that never comes hangs the test, and CTest's TIMEOUT reports it.
  void wait_for_count(std::size_t n) {
    std::unique_lock l(m);
    cv.wait(l, [&] { return completions.size() >= n; });
  }
};

inline Tensor scalar(float v) {
  Tensor t(element_type::f32, {1});
  t.data<float>()[0] = v;
  return t;
}

} // namespace troupe::tests
