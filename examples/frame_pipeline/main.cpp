/// A streaming frame pipeline on troupe's async API: a producer makes frames at a given rate,
/// a pool of inference requests runs them on any device string (AUTO with
/// CUMULATIVE_THROUGHPUT by default), and a consumer takes the results in frame order.
/// `--reprioritize-at K:PRIORITIES` gives a MULTI/AUTO model new device priorities once frame
/// K is submitted, while the frames before it are still running.
///
/// usage: frame_pipeline -m MODEL [-d DEVICE] [-n FRAMES] [-shape 1x3x48x192] [-fps RATE]
///                       [-nireq N] [--reprioritize-at K:PRIORITIES]...
/// The last line reads: frames: N submitted, N completed, 0 lost, 0 out of order; served by: ...
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <troupe/troupe.hpp>

namespace {

struct options {
  std::string model, device = "AUTO", shape;
  long frames = 100;
  double fps = 0; ///< 0: as fast as the requests free up
  int nireq = 0;  ///< 0: the compiled model's optimal number
  std::map<long, std::string> reprioritize; ///< after frame K is submitted: DEVICE_PRIORITIES
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "frame_pipeline: %s\nusage: frame_pipeline -m MODEL [-d DEVICE] [-n FRAMES] [-shape 1x3x48x192] "
               "[-fps RATE] [-nireq N] [--reprioritize-at K:PRIORITIES]...\n",
               why.c_str());
  std::exit(2);
}

long number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || v < 0) usage(flag + " takes a whole number >= 0, got '" + text + "'");
  return v;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "-m") o.model = v;
    else if (a == "-d") o.device = v;
    else if (a == "-n") o.frames = number(a, v);
    else if (a == "-shape") o.shape = v;
    else if (a == "-fps") o.fps = std::atof(v.c_str());
    else if (a == "-nireq") o.nireq = static_cast<int>(number(a, v));
    else if (a == "--reprioritize-at") {
      const auto colon = v.find(':');
      if (colon == std::string::npos) usage("--reprioritize-at takes K:PRIORITIES, as 50:CPU,GPU");
      o.reprioritize[number(a, v.substr(0, colon))] = v.substr(colon + 1);
    } else usage("unknown flag " + a);
  }
  if (o.model.empty()) usage("-m MODEL is required");
  return o;
}

troupe::Shape parse_shape(const std::string& text) {
  troupe::Shape s;
  std::size_t at = 0;
  while (at <= text.size()) {
    auto x = text.find('x', at);
    if (x == std::string::npos) x = text.size();
    s.push_back(number("-shape", text.substr(at, x - at)));
    at = x + 1;
  }
  return s;
}

/// One finished frame, handed from a request's callback to the consumer.
struct result {
  long frame;
  std::string error; ///< empty: the outputs are in the request
};

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  try {
    troupe::Core core;
    troupe::Model model = core.read_model(o.model);
    if (!o.shape.empty()) model.reshape(troupe::PartialShape(parse_shape(o.shape)));
    const auto in_shape = model.input().get_partial_shape();
    if (!in_shape.is_static())
      throw troupe::Exception("the model's input is " + in_shape.to_string() + ": give -shape");
    troupe::AnyMap props;
    const bool spreads = o.device.rfind("AUTO", 0) == 0 || o.device.rfind("MULTI", 0) == 0;
    if (spreads) props["PERFORMANCE_HINT"] = "CUMULATIVE_THROUGHPUT";
    troupe::CompiledModel compiled = core.compile_model(model, o.device, props);
    const int nireq = o.nireq ? o.nireq : compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>();

    // The pool: idle requests, and finished frames waiting for the consumer.
    std::mutex m;
    std::condition_variable cv;
    std::deque<int> idle;
    std::deque<result> finished;
    std::vector<troupe::InferRequest> requests;
    std::vector<long> frame_of(static_cast<std::size_t>(nireq), -1);
    for (int r = 0; r < nireq; ++r) {
      requests.push_back(compiled.create_infer_request());
      requests.back().set_callback([&, r](std::exception_ptr error) {
        result done{frame_of[static_cast<std::size_t>(r)], {}};
        if (error) try {
            std::rethrow_exception(error);
          } catch (const std::exception& e) {
            done.error = e.what();
          }
        std::lock_guard lock(m);
        finished.push_back(std::move(done));
        idle.push_back(r);
        cv.notify_all();
      });
      idle.push_back(r);
    }

    // The consumer: results in frame order (a frame that finishes early waits for those before it).
    long submitted = 0, completed = 0, out_of_order = 0, failed = 0, next_expected = 0;
    std::map<long, std::string> early;
    auto consume = [&](result done) {
      early[done.frame] = done.error;
      while (!early.empty() && early.begin()->first == next_expected) {
        if (!early.begin()->second.empty()) {
          ++failed;
          std::fprintf(stderr, "frame %ld failed: %s\n", next_expected, early.begin()->second.c_str());
        }
        early.erase(early.begin());
        ++next_expected;
        ++completed;
      }
      if (!early.empty() && early.begin()->first < next_expected) ++out_of_order; // a frame seen twice
    };

    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> pixel(0, 1);
    const auto period = o.fps > 0 ? std::chrono::duration<double>(1.0 / o.fps) : std::chrono::duration<double>(0);
    const auto t0 = std::chrono::steady_clock::now();
    for (long f = 0; f < o.frames; ++f) {
      if (o.fps > 0) std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(period * f));
      int r;
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return !idle.empty(); });
        r = idle.front();
        idle.pop_front();
        while (!finished.empty()) {
          consume(std::move(finished.front()));
          finished.pop_front();
        }
      }
      // A tensor of its own per frame: the requests in flight still read theirs.
      troupe::Tensor frame(troupe::element_type::f32, in_shape.to_shape());
      float* px = frame.data<float>();
      for (int64_t i = 0; i < frame.get_size(); ++i) px[i] = pixel(rng);
      requests[static_cast<std::size_t>(r)].set_input_tensor(frame);
      frame_of[static_cast<std::size_t>(r)] = f;
      requests[static_cast<std::size_t>(r)].start_async();
      ++submitted;
      if (auto it = o.reprioritize.find(f); it != o.reprioritize.end()) {
        compiled.set_property({{"DEVICE_PRIORITIES", it->second}});
        std::printf("after frame %ld: DEVICE_PRIORITIES %s\n", f, it->second.c_str());
      }
    }
    for (auto& req : requests) req.wait();
    {
      std::lock_guard lock(m);
      while (!finished.empty()) {
        consume(std::move(finished.front()));
        finished.pop_front();
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    std::string served;
    try {
      served = compiled.get_property("REQUESTS_SERVED").as_string(); // MULTI, AUTO with CUMULATIVE_THROUGHPUT
    } catch (const troupe::Exception&) {
      served = compiled.get_property("EXECUTION_DEVICES").as_string() + ":" + std::to_string(completed);
    }
    for (auto& c : served)
      if (c == ':') c = '=';
    std::string by;
    for (std::size_t at = 0; at < served.size();) {
      auto comma = served.find(',', at);
      if (comma == std::string::npos) comma = served.size();
      by += (by.empty() ? "" : ", ") + served.substr(at, comma - at);
      at = comma + 1;
    }
    std::printf("%ld frames in %.2f s (%.1f frames/s) on %s with %d requests; %ld failed\n", completed, secs,
                completed / secs, o.device.c_str(), nireq, failed);
    std::printf("frames: %ld submitted, %ld completed, %ld lost, %ld out of order; served by: %s\n", submitted, completed,
                submitted - completed, out_of_order, by.c_str());
    return submitted == completed && out_of_order == 0 && failed == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "frame_pipeline: error: %s\n", e.what());
    return 1;
  }
}
