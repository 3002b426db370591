#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <numeric>

#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/tensor_io.hpp"

namespace troupe::cli {

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

/// A progress line on stderr, redrawn at most 4 times a second.
class progress {
public:
  progress(int niter, double seconds) : niter_(niter), seconds_(seconds) {}
  void update(int done, double elapsed_ms) {
    auto now = clock_type::now();
    if (now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    if (niter_ > 0) std::fprintf(stderr, "\r[ progress ] %d / %d iterations", done, niter_);
    else std::fprintf(stderr, "\r[ progress ] %.1f / %.1f s, %d iterations", elapsed_ms / 1000, seconds_, done);
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fprintf(stderr, "\n");
  }

private:
  int niter_;
  double seconds_;
  clock_type::time_point last_{};
  bool drawn_ = false;
};

} // namespace

int cmd_bench(int argc, char** argv) {
  auto a = parse_args(argc, argv, 2,
                      {"-m", "-d", "-hint", "-api", "-nireq", "-niter", "-t", "-shape", "-nstreams", "-nthreads",
                       "-json_stats", "-ip", "-i"},
                      {"-pc"});
  auto path = a.need("-m");
  auto device = a.get("-d", "CPU");
  auto hint = a.get("-hint", "latency");
  auto api = a.get("-api", "async");
  if (hint != "latency" && hint != "throughput") throw usage_error("-hint takes latency or throughput, got '" + hint + "'");
  if (api != "sync" && api != "async") throw usage_error("-api takes sync or async, got '" + api + "'");
  int niter = a.get_int("-niter", 0);
  double seconds = a.get_double("-t", niter > 0 ? 0 : 10);
  if (niter < 0 || seconds < 0) throw usage_error("-niter and -t must not be negative");

  AnyMap props{{"PERFORMANCE_HINT", hint == "latency" ? "LATENCY" : "THROUGHPUT"}};
  if (a.has("-nstreams")) props["NUM_STREAMS"] = a.get("-nstreams");
  if (a.has("-nthreads")) props["INFERENCE_NUM_THREADS"] = a.get("-nthreads");
  if (a.has("-ip")) props["INFERENCE_PRECISION_HINT"] = a.get("-ip");
  if (a.has("-pc")) props["PERF_COUNT"] = "YES";

  Core core;
  auto model = core.read_model(path);
  if (a.has("-shape")) apply_shapes(model, a.get("-shape"));
  auto t0 = clock_type::now();
  auto cm = core.compile_model(model, device, props);
  double compile_ms = ms_since(t0);
  int nstreams = cm.get_property("NUM_STREAMS").as<int>();
  int nthreads = cm.get_property("INFERENCE_NUM_THREADS").as<int>();
  int nireq = a.get_int("-nireq", api == "sync" ? 1 : cm.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>());
  if (nireq < 1) throw usage_error("-nireq must be >= 1");
  if (api == "sync") nireq = 1;

  std::vector<std::string> files;
  if (a.values.count("-i")) files = a.values.at("-i");
  auto inputs = make_inputs(cm, files);
  std::vector<InferRequest> reqs;
  for (int i = 0; i < nireq; ++i) {
    reqs.push_back(cm.create_infer_request());
    for (std::size_t k = 0; k < inputs.size(); ++k) reqs.back().set_input_tensor(k, inputs[k]);
  }
  std::printf("[ info ] compile: %.2f ms (%s, %d streams, %d threads, %d requests, api %s)\n", compile_ms,
              device.c_str(), nstreams, nthreads, nireq, api.c_str());

  t0 = clock_type::now();
  reqs[0].infer();
  double first_ms = ms_since(t0);
  std::printf("[ info ] first inference: %.2f ms\n", first_ms);

  std::vector<double> lat;
  progress prog(niter, seconds);
  auto start = clock_type::now();
  auto keep_going = [&](int started) {
    if (niter > 0) return started < niter;
    return ms_since(start) < seconds * 1000;
  };
  if (api == "sync") {
    int n = 0;
    while (keep_going(n)) {
      auto s = clock_type::now();
      reqs[0].infer();
      lat.push_back(ms_since(s));
      ++n;
      prog.update(n, ms_since(start));
    }
  } else {
    // benchmark_app's async loop: every request in flight; each callback records its latency
    // and hands the request back; the main thread restarts idle requests.
    std::mutex m;
    std::condition_variable cv;
    std::vector<int> idle;
    std::vector<clock_type::time_point> began(static_cast<std::size_t>(nireq));
    std::exception_ptr failure;
    for (int i = 0; i < nireq; ++i) {
      reqs[static_cast<std::size_t>(i)].set_callback([&, i](std::exception_ptr e) {
        double ms = ms_since(began[static_cast<std::size_t>(i)]);
        {
          std::lock_guard lock(m);
          if (e && !failure) failure = e;
          lat.push_back(ms);
          idle.push_back(i);
        }
        cv.notify_one();
      });
      idle.push_back(i);
    }
    int started = 0;
    std::unique_lock lock(m);
    while (true) {
      if (failure) break;
      if (!keep_going(started)) break;
      if (idle.empty()) {
        cv.wait(lock, [&] { return !idle.empty() || failure; });
        continue;
      }
      int i = idle.back();
      idle.pop_back();
      began[static_cast<std::size_t>(i)] = clock_type::now();
      ++started;
      lock.unlock();
      reqs[static_cast<std::size_t>(i)].start_async();
      prog.update(started, ms_since(start));
      lock.lock();
    }
    cv.wait(lock, [&] { return static_cast<int>(idle.size()) == nireq; });
    lock.unlock();
    for (auto& r : reqs) r.set_callback(nullptr);
    if (failure) std::rethrow_exception(failure);
  }
  double duration_ms = ms_since(start);
  prog.finish();
  if (lat.empty()) throw Exception("no inference ran (raise -niter or -t)");

  std::vector<double> s = lat;
  std::sort(s.begin(), s.end());
  std::size_t n = s.size();
  double median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  double avg = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(n);
  double fps = static_cast<double>(n) * 1000.0 / duration_ms;

  if (a.has("-pc")) {
    std::printf("[ info ] performance counters (request 0, last inference):\n");
    double total = 0;
    for (const auto& p : reqs[0].get_profiling_info()) {
      double us = static_cast<double>(p.real_time.count());
      total += us;
      std::printf("%-40s %-16s %-10s %-24s %10.3f ms\n", p.node_name.c_str(), p.node_type.c_str(),
                  p.status == ProfilingInfo::Status::EXECUTED ? "EXECUTED" : "OPTIMIZED_OUT", p.exec_type.c_str(),
                  us / 1000);
    }
    std::printf("Total: %.3f ms\n", total / 1000);
  }
  std::printf("[ info ] count:      %zu iterations\n", n);
  std::printf("[ info ] duration:   %.2f ms\n", duration_ms);
  std::printf("[ info ] latency:\n");
  std::printf("[ info ]    median:  %.3f ms\n", median);
  std::printf("[ info ]    average: %.3f ms\n", avg);
  std::printf("[ info ]    min:     %.3f ms\n", s.front());
  std::printf("[ info ]    max:     %.3f ms\n", s.back());
  std::printf("[ info ] throughput: %.2f FPS\n", fps);

  if (a.has("-json_stats")) {
    auto file = a.get("-json_stats");
    std::ofstream f(file);
    if (!f) throw Exception("cannot write -json_stats file '" + file + "'");
    f << "{\n"
      << "  \"throughput_fps\": " << fps << ",\n"
      << "  \"latency_median_ms\": " << median << ",\n"
      << "  \"latency_avg_ms\": " << avg << ",\n"
      << "  \"latency_min_ms\": " << s.front() << ",\n"
      << "  \"latency_max_ms\": " << s.back() << ",\n"
      << "  \"compile_ms\": " << compile_ms << ",\n"
      << "  \"first_inference_ms\": " << first_ms << ",\n"
      << "  \"count\": " << n << ",\n"
      << "  \"duration_ms\": " << duration_ms << ",\n"
      << "  \"device\": \"" << json_escape(device) << "\",\n"
      << "  \"hint\": \"" << hint << "\",\n"
      << "  \"api\": \"" << api << "\",\n"
      << "  \"nireq\": " << nireq << ",\n"
      << "  \"nstreams\": " << nstreams << ",\n"
      << "  \"nthreads\": " << nthreads << "\n"
      << "}\n";
    if (!f) throw Exception("error writing -json_stats file '" + file + "'");
  }
  return 0;
}

} // namespace troupe::cli
