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
#include "benchmarks/wait_device.hpp"

using namespace troupe;
using namespace troupe::bench;
using clock_type = std::chrono::steady_clock;

namespace {

/// `stages` stages in a chain, each one stream waiting `wait` per request.
std::unique_ptr<actors::hetero_flow> chain(caf::actor_system& sys, int stages, std::chrono::microseconds wait) {
  actors::flow_spec spec;
  spec.outputs = 1;
  spec.constant_outputs.resize(1);
  spec.input_routes = {{{0, 0}}};
  for (int s = 0; s < stages; ++s) {
    actors::stage_spec st;
    st.run = wait_subgraph(sys, wait);
    st.label = "stage " + std::to_string(s);
    st.inputs = 1;
    st.output_routes = {{s + 1 < stages ? actors::tensor_route{s + 1, 0} : actors::tensor_route{-1, 0}}};
    spec.stages.push_back(std::move(st));
  }
  return std::make_unique<actors::hetero_flow>(sys, std::move(spec));
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
