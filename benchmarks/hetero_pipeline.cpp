/// HETERO's actor dataflow, measured without devices in the way (the two CPU cores here are
/// shared by everything, so real devices cannot show overlap):
///   1. pipelining: a two-stage flow whose stages each "compute" by waiting W ms; N requests
///      one at a time, then with 4 in flight. With overlap the second approaches 2x the first.
///   2. the cost of a device crossing: median latency of a flow of 1, 2 and 3 zero-work stages
///      (each hop hands the tensor on as a message, no copy), for tensors of 1 KiB to 16 MiB.
/// usage: troupe_hetero_bench [WAIT_MS=5] [REQUESTS=40] [RUNS=2000]
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "actors/hetero_flow.hpp"
#include "actors/subgraph_actor.hpp"

using namespace troupe;
using clock_type = std::chrono::steady_clock;

namespace {

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
    std::fprintf(stderr, "troupe_hetero_bench: request failed: %s\n", f.message.c_str());
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

/// `stages` stages in a chain, each one stream waiting `wait` per request.
std::unique_ptr<actors::hetero_flow> chain(caf::actor_system& sys, int stages, std::chrono::microseconds wait) {
  actors::flow_spec spec;
  spec.outputs = 1;
  spec.constant_outputs.resize(1);
  spec.input_routes = {{{0, 0}}};
  for (int s = 0; s < stages; ++s) {
    actors::stage_spec st;
    actors::subgraph_spec sub;
    auto prog = std::make_shared<actors::program>();
    prog->prototype = std::make_unique<wait_executable>(wait);
    sub.fixed = std::move(prog);
    st.run = std::make_unique<actors::subgraph>(sys, std::move(sub));
    st.label = "stage " + std::to_string(s);
    st.inputs = 1;
    st.output_routes = {{s + 1 < stages ? actors::tensor_route{s + 1, 0} : actors::tensor_route{-1, 0}}};
    spec.stages.push_back(std::move(st));
  }
  return std::make_unique<actors::hetero_flow>(sys, std::move(spec));
}

/// Seconds to complete `n` requests with at most `in_flight` outstanding.
double run_requests(actors::hetero_flow& flow, const Tensor& t, uint64_t n, uint64_t in_flight) {
  auto sink = std::make_shared<counting_sink>();
  auto t0 = clock_type::now();
  for (uint64_t i = 0; i < n; ++i) {
    if (i >= in_flight) sink->wait_for(i - in_flight + 1);
    flow.submit(actors::inference{i, {t}, sink});
  }
  sink->wait_for(n);
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median_latency_us(actors::hetero_flow& flow, const Tensor& t, int runs) {
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    auto t0 = clock_type::now();
    run_requests(flow, t, 1, 1);
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const int wait_ms = argc > 1 ? std::atoi(argv[1]) : 5;
  const uint64_t requests = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 40;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 2000;
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 1);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};

  std::printf("troupe_hetero_bench: stages that wait %d ms each, %llu requests\n", wait_ms,
              static_cast<unsigned long long>(requests));
  {
    auto flow = chain(sys, 2, std::chrono::milliseconds(wait_ms));
    Tensor t(element_type::f32, {1, 256});
    run_requests(*flow, t, 4, 4); // warm-up
    const double one = run_requests(*flow, t, requests, 1), four = run_requests(*flow, t, requests, 4);
    std::printf("  2 stages, 1 request at a time : %8.1f requests/s (ideal %.1f)\n", requests / one, 1000.0 / (2 * wait_ms));
    std::printf("  2 stages, 4 requests in flight: %8.1f requests/s (ideal %.1f), %.2fx\n", requests / four,
                1000.0 / wait_ms, one / four);
  }
  std::printf("device crossing: median latency of a chain of zero-work stages, %d runs\n", runs);
  std::printf("  %-10s %10s %10s %10s %14s\n", "tensor", "1 stage", "2 stages", "3 stages", "per crossing");
  for (int64_t floats : {256, 262144, 4194304}) {
    Tensor t(element_type::f32, {1, floats});
    double lat[3];
    for (int s = 1; s <= 3; ++s) {
      auto flow = chain(sys, s, std::chrono::microseconds(0));
      run_requests(*flow, t, 100, 1); // warm-up
      lat[s - 1] = median_latency_us(*flow, t, runs);
    }
    std::printf("  %7lld KiB %8.1f us %8.1f us %8.1f us %11.1f us\n", static_cast<long long>(floats * 4 / 1024), lat[0],
                lat[1], lat[2], (lat[2] - lat[0]) / 2);
  }
  return 0;
}
