/// MULTI's scheduler, measured:
///   1. spreading: devices whose service time is a wait of W ms (2 streams each; the two CPU
///      cores here cannot show real devices overlapping): N requests, 8 in flight, through the
///      scheduler with one device, then with two. Ideal: 2x.
///   2. the scheduler's own cost per request: sync infer() of a one-op model (Add 1x8) on CPU
///      and on MULTI:CPU, interleaved in blocks, median of each.
/// usage: troupe_multi_bench [WAIT_MS=5] [REQUESTS=200] [RUNS=20000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include <caf/all.hpp>

#include <troupe/troupe.hpp>

#include "actors/scheduler.hpp"
#include "actors/subgraph_actor.hpp"
#include "benchmarks/tiny_onnx.hpp"
#include "benchmarks/wait_device.hpp"

using namespace troupe;
using namespace troupe::bench;

namespace {

std::unique_ptr<actors::scheduler> wait_devices(caf::actor_system& sys, int devices, std::chrono::microseconds wait) {
  actors::scheduler_spec spec;
  for (int d = 0; d < devices; ++d) spec.devices.push_back({"WAIT." + std::to_string(d), wait_subgraph(sys, wait, 2), 2});
  return std::make_unique<actors::scheduler>(sys, std::move(spec));
}

double median_us(std::vector<double>& us) {
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const int wait_ms = argc > 1 ? std::atoi(argv[1]) : 5;
  const uint64_t requests = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200;
  const int runs = std::max(argc > 3 ? std::atoi(argv[3]) : 20000, 10);
  try {
    {
      caf::actor_system_config cfg;
      cfg.set("logger.verbosity", caf::atom("quiet"));
      caf::actor_system sys{cfg};
      std::printf("troupe_multi_bench: devices that wait %d ms per request, 2 streams each, %llu requests, 8 in flight\n",
                  wait_ms, static_cast<unsigned long long>(requests));
      Tensor t(element_type::f32, {1, 256});
      double secs[2];
      for (int devices = 1; devices <= 2; ++devices) {
        auto sched = wait_devices(sys, devices, std::chrono::milliseconds(wait_ms));
        run_requests(*sched, t, 16, 8); // warm-up: every device measured
        secs[devices - 1] = run_requests(*sched, t, requests, 8);
        const auto served = sched->served();
        std::printf("  %d device%s: %8.1f requests/s (ideal %.1f); served:", devices, devices > 1 ? "s" : " ",
                    requests / secs[devices - 1], 2 * devices * 1000.0 / wait_ms);
        for (std::size_t d = 0; d < served.size(); ++d) std::printf(" WAIT.%zu=%llu", d, static_cast<unsigned long long>(served[d]));
        std::printf("\n");
      }
      std::printf("  two devices against one: %.2fx\n", secs[0] / secs[1]);
    }

    const auto path = (std::filesystem::temp_directory_path() / ("troupe_multi_bench_" + std::to_string(::getpid()) + ".onnx")).string();
    tiny_onnx::write_add_model(path);
    Core core;
    auto model = core.read_model(path);
    std::filesystem::remove(path);
    CompiledModel cms[2] = {core.compile_model(model, "CPU", {{"PERFORMANCE_HINT", "LATENCY"}}),
                            core.compile_model(model, "MULTI:CPU", {{"PERFORMANCE_HINT", "LATENCY"}})};
    const char* names[2] = {"CPU", "MULTI:CPU"};
    Tensor a(element_type::f32, {1, 8}), b(element_type::f32, {1, 8});
    for (int i = 0; i < 8; ++i) {
      a.data<float>()[i] = float(i);
      b.data<float>()[i] = 1.0f;
    }
    std::vector<InferRequest> reqs;
    for (auto& cm : cms) {
      reqs.push_back(cm.create_infer_request());
      reqs.back().set_tensor("a", a);
      reqs.back().set_tensor("b", b);
      for (int i = 0; i < 200; ++i) reqs.back().infer(); // warm-up
    }
    std::vector<double> us[2];
    const int block = 500;
    for (int done = 0; done < runs; done += block)
      for (int m = 0; m < 2; ++m)
        for (int i = 0; i < block; ++i) {
          auto t0 = std::chrono::steady_clock::now();
          reqs[m].infer();
          us[m].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
    const double cpu = median_us(us[0]), multi = median_us(us[1]);
    std::printf("scheduler cost: sync infer() of Add 1x8, %d runs each, interleaved in blocks of %d\n", runs, block);
    std::printf("  %-10s median %7.2f us\n  %-10s median %7.2f us\n  the scheduler adds %.2f us per request\n",
                names[0], cpu, names[1], multi, multi - cpu);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe_multi_bench: error: %s\n", e.what());
    return 1;
  }
}
