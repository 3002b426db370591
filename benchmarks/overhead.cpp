/// The engine's fixed cost per inference: median sync infer() latency of a one-op model
/// (Add of two 1x8 f32 tensors) through the public API. Printed beside it, in the same run,
/// for scale, what handing work to a sleeping thread and waiting for the answer costs on this
/// machine: a bare condition-variable round trip between two threads (on virtual machines a
/// wake-up can cost more than the inference itself).
/// usage: troupe_overhead [DEVICE=CPU] [RUNS=20000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include <troupe/troupe.hpp>

#include "base/thread_round_trip.hpp"
#include "benchmarks/tiny_onnx.hpp"

int main(int argc, char** argv) {
  std::string device = argc > 1 ? argv[1] : "CPU";
  int runs = argc > 2 ? std::atoi(argv[2]) : 20000;
  if (runs < 1) runs = 1;
  try {
    auto path = (std::filesystem::temp_directory_path() / ("troupe_overhead_" + std::to_string(::getpid()) + ".onnx")).string();
    troupe::tiny_onnx::write_add_model(path);
    troupe::Core core;
    auto cm = core.compile_model(path, device, {{"PERFORMANCE_HINT", "LATENCY"}});
    std::filesystem::remove(path);
    auto req = cm.create_infer_request();
    troupe::Tensor a(troupe::element_type::f32, {1, 8}), b(troupe::element_type::f32, {1, 8});
    for (int i = 0; i < 8; ++i) { a.data<float>()[i] = float(i); b.data<float>()[i] = 1.0f; }
    req.set_tensor("a", a);
    req.set_tensor("b", b);
    for (int i = 0; i < 200; ++i) req.infer(); // warm-up
    if (req.get_tensor("y").data<float>()[7] != 8.0f) {
      std::fprintf(stderr, "troupe_overhead: wrong result\n");
      return 1;
    }
    std::vector<double> us(static_cast<std::size_t>(runs));
    for (auto& t : us) {
      auto t0 = std::chrono::steady_clock::now();
      req.infer();
      t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    std::sort(us.begin(), us.end());
    auto at = [&](double q) { return us[std::min(us.size() - 1, static_cast<std::size_t>(q * us.size()))]; };
    std::printf("sync infer() of Add 1x8 on %s, %d runs: median %.2f us, p90 %.2f us, min %.2f us\n",
                device.c_str(), runs, at(0.5), at(0.9), us.front());
    std::printf("for scale, a bare hand-over to a sleeping thread and back (condition variable), %d runs: median %.2f us\n",
                runs, troupe::thread_round_trip_us(runs));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe_overhead: error: %s\n", e.what());
    return 1;
  }
}
