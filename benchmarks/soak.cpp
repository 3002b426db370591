/// troupe_soak: a steady stream of async requests for minutes or hours, with failures made on
/// purpose, counting what troupe promises: every request completes exactly once, with the
/// outputs a single device gives or with an error that names what was wrong (scripts/soak.sh,
/// docs/reliability.md).
///
/// MULTI over the GPU (where there is one), the local CPU and two `troupe worker` children on
/// loopback serves PP-OCR cls, rec and det and bert_tiny at varying lengths (a dynamic-shape
/// model, compiled per length); HETERO:GPU,CPU serves rec beside it. Meanwhile MULTI's
/// DEVICE_PRIORITIES rotate every few seconds, a worker is killed (SIGKILL) and restarted at the
/// same address every -kill-every seconds, the other one is stopped (SIGSTOP) for a few seconds
/// in between (and is reached through a link that delays and loses: -link-delay-ms, -link-loss,
/// benchmarks/link_proxy.hpp, where tc netem is not to be had), and a share of requests carry bad inputs (a token id past bert's table, inputs
/// whose lengths disagree, a wrong image shape), whose error must come back naming the input or
/// the op. Every output is compared with the CPU's alone on the same input.
///
///   troupe_soak -models DIR [-minutes M] [-kill-every S] [-fail-every N] [-in-flight N] [-bad-share P]
///               [-link-delay-ms D] [-link-loss PERCENT] [-seed N]
///
/// Prints p50/p99 latency per minute, then submitted, completed with outputs, completed with an
/// error (by kind), lost, completed twice, wrong, and the RSS and open files of this process and
/// of the workers. Exit 1 when lost, completed twice, wrong or an unexpected error is not 0.
#include <troupe/troupe.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/median.hpp"
#include "benchmarks/link_proxy.hpp"
#include "benchmarks/listening_child.hpp"

namespace fs = std::filesystem;
using namespace troupe;
using clock_type = std::chrono::steady_clock;

namespace {

struct options {
  fs::path models;
  double minutes = 2;
  double kill_every = 20; ///< seconds between worker kills; 0: none
  /// The local CPU of the MULTI over every device fails every this many runs of a model, as
  /// a device failure from inside (FAIL_EVERY); 0: never. MULTI must move those requests.
  int fail_every = 40;
  int in_flight = 6;
  double bad_share = 0.05;
  /// Worker 2's link: each chunk this late each way, and this share of them a TCP
  /// retransmission (200 ms) later still; both 0: a direct connection.
  double link_delay_ms = 5, link_loss_percent = 1;
  unsigned seed = 20261128;
};

/// One input set of a workload and what the CPU alone gives for it; `bad`: the error's kind and
/// a word its message must hold.
struct variant {
  std::map<std::string, Tensor> inputs;
  std::map<std::string, Tensor> expected;
  std::string bad, must_name;
};

struct workload {
  std::string name, device;
  CompiledModel cm;
  std::vector<variant> good, bad;
  bool multi = false;
};

Tensor uniform(element_type t, const Shape& s, std::mt19937& rng, int64_t hi_int = 1000) {
  Tensor x(t, s);
  if (t == element_type::f32) {
    std::uniform_real_distribution<float> d(0.f, 1.f);
    for (int64_t i = 0; i < x.get_size(); ++i) x.data<float>()[i] = d(rng);
  } else {
    std::uniform_int_distribution<int64_t> d(0, hi_int - 1);
    for (int64_t i = 0; i < x.get_size(); ++i) x.data<int64_t>()[i] = d(rng);
  }
  return x;
}

std::map<std::string, Tensor> run_on(CompiledModel& cm, const std::map<std::string, Tensor>& inputs) {
  auto r = cm.create_infer_request();
  for (const auto& [n, t] : inputs) r.set_tensor(n, t);
  r.infer();
  std::map<std::string, Tensor> out;
  for (const auto& p : cm.outputs()) out[p.get_any_name()] = r.get_tensor(p.get_any_name()).clone();
  return out;
}

/// Largest |got - expected| over the outputs, relative to max(1, max |expected|): the CPU, a
/// worker's CPU (the same kernels) and a GPU in f32 agree to ~1e-5.
double deviation(InferRequest& r, const std::map<std::string, Tensor>& expected) {
  double worst = 0;
  for (const auto& [name, e] : expected) {
    const Tensor g = r.get_tensor(name);
    if (g.get_shape() != e.get_shape() || g.get_element_type() != element_type::f32) return INFINITY;
    double scale = 1, d = 0;
    for (int64_t i = 0; i < e.get_size(); ++i) {
      scale = std::max(scale, std::abs(double(e.data<float>()[i])));
      const double v = std::abs(double(g.data<float>()[i]) - double(e.data<float>()[i]));
      d = std::max(d, std::isnan(v) ? INFINITY : v);
    }
    worst = std::max(worst, d / scale);
  }
  return worst;
}

/// VmRSS in MB and the number of open files of process `pid` ("self" for this one).
std::pair<double, int> rss_and_fds(const std::string& pid) {
  double mb = 0;
  std::ifstream st("/proc/" + pid + "/status");
  for (std::string line; std::getline(st, line);)
    if (line.rfind("VmRSS:", 0) == 0) mb = std::atof(line.c_str() + 6) / 1024.0;
  int fds = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc/" + pid + "/fd", ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    ++fds;
  return {mb, fds};
}

/// This process's malloc heap in MB: bytes in use by the program, and bytes malloc holds from
/// the system (in use plus free chunks it kept). RSS growing with the first flat is
/// fragmentation or memory outside malloc; with the first growing, something accumulates.
std::pair<double, double> heap_mb() {
#if defined(__GLIBC__)
  const struct mallinfo2 m = mallinfo2();
  return {static_cast<double>(m.uordblks + m.hblkhd) / (1 << 20), static_cast<double>(m.arena + m.hblkhd) / (1 << 20)};
#else
  return {0, 0};
#endif
}

/// One request in flight: which workload and input, when it started, how often it completed.
struct submission {
  std::size_t slot = 0, workload = 0;
  const variant* v = nullptr;
  clock_type::time_point start;
  std::atomic<int> completions{0};
  std::exception_ptr error;
};

struct tally {
  uint64_t submitted = 0, with_outputs = 0, twice = 0, wrong = 0, lost = 0;
  std::map<std::string, uint64_t> errors; ///< by kind; "unexpected: ..." and "unclear: ..." fail
  std::map<int, std::vector<double>> latency_ms; ///< by minute
  double worst_deviation = 0;
};

/// `seconds` as the clock's own duration.
clock_type::duration after(double seconds) {
  return std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(seconds));
}

std::string first_line(const std::string& s) { return s.substr(0, std::min(s.find('\n'), std::size_t{160})); }

class soak {
public:
  explicit soak(options o) : o_(std::move(o)), rng_(o_.seed) {}

  int run() {
    const auto bin = fs::read_symlink("/proc/self/exe").parent_path() / "troupe";
    for (int k = 0; k < 2; ++k) workers_.push_back(std::make_unique<bench::listening_child>(worker_argv(bin, "127.0.0.1:0")));
    if (o_.link_delay_ms > 0 || o_.link_loss_percent > 0)
      link_ = std::make_unique<bench::link_proxy>(
          workers_[1]->address, std::chrono::milliseconds(static_cast<int>(o_.link_delay_ms)), o_.link_loss_percent, false);
    addresses_ = {workers_[0]->address, link_ ? link_->address() : workers_[1]->address};
    for (const auto& a : addresses_) core_.add_node(a);
    const auto local = core_.available_devices();
    const bool gpu = std::find(local.begin(), local.end(), "GPU") != local.end() ||
                     std::find(local.begin(), local.end(), "GPU.0") != local.end();
    // GPU.0, not GPU: "GPU" in MULTI is every GPU, the workers' too (docs/multi.md), and CI's
    // two lavapipe devices in three processes would be six members compiling every model.
    std::string members = std::string(gpu ? "GPU.0," : "") + "CPU";
    for (const auto& a : addresses_) members += ",CPU@" + a;
    multi_members_ = members;
    remote_members_ = "CPU@" + addresses_[0] + ",CPU@" + addresses_[1];
    prepare(gpu);
    std::printf("troupe_soak: %.1f min, %d in flight, MULTI:%s%s; a worker killed every %.0f s; its CPU fails every "
                "%d runs (FAIL_EVERY); %.0f %% bad inputs; worker 2 (%s) through a link of %.0f ms each way and %.1f %% "
                "of chunks lost (a 200-ms retransmission)\n",
                o_.minutes, o_.in_flight, members.c_str(), gpu ? " and HETERO:GPU.0,CPU (rec)" : "", o_.kill_every,
                o_.fail_every, 100 * o_.bad_share, addresses_[1].c_str(), link_ ? o_.link_delay_ms : 0.0,
                link_ ? o_.link_loss_percent : 0.0);
    std::fflush(stdout);
    stream();
    return report();
  }

private:
  std::vector<std::string> worker_argv(const fs::path& bin, const std::string& listen) {
    return {bin.string(), "worker", "-listen", listen};
  }

  /// The workloads, their inputs and the CPU's outputs for each.
  void prepare(bool gpu) {
    auto cpu = [&](Model& m) { return core_.compile_model(m, "CPU"); };
    // The MULTI over every device, its local CPU failing from inside every fail_every runs.
    AnyMap failing;
    if (o_.fail_every > 0) failing.insert(device_properties("CPU", {{"FAIL_EVERY", o_.fail_every}}));
    auto multi = [&](Model& m) { return core_.compile_model(m, "MULTI:" + multi_members_, failing); };
    struct image_model {
      std::string name, file;
      Shape shape;
    };
    const std::vector<image_model> images{{"cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", {1, 3, 48, 192}},
                                          {"rec", "ch_PP-OCRv4_rec_infer.onnx", {1, 3, 48, 320}},
                                          {"det", "ch_PP-OCRv4_det_infer.onnx", {1, 3, 160, 160}}};
    for (const auto& im : images) {
      Model m = core_.read_model((o_.models / im.file).string());
      const std::string in = m.input().get_any_name();
      m.reshape(PartialShape(im.shape));
      auto ref = cpu(m);
      workload w{im.name, "MULTI:" + multi_members_, multi(m), {}, {}, true};
      for (int k = 0; k < 3; ++k) {
        variant v;
        v.inputs[in] = uniform(element_type::f32, im.shape, rng_);
        v.expected = run_on(ref, v.inputs);
        w.good.push_back(std::move(v));
      }
      Shape wrong = im.shape;
      wrong[3] += 8;
      w.bad.push_back({{{in, uniform(element_type::f32, wrong, rng_)}}, {}, "wrong image shape", in});
      if (im.name == "cls") { // the workers alone: there, a killed worker's requests must move to the other
        workload r{"cls", "MULTI:" + remote_members_, core_.compile_model(m, "MULTI:" + remote_members_), w.good, w.bad, true};
        workloads_.push_back(std::move(r));
      }
      if (gpu && im.name == "rec") {
        workload h{"rec", "HETERO:GPU.0,CPU", core_.compile_model(m, "HETERO:GPU.0,CPU"), w.good, {}, false};
        workloads_.push_back(std::move(h));
      }
      workloads_.push_back(std::move(w));
    }
    // bert_tiny: dynamic [batch, length] inputs; a compile per new length on every member.
    Model bert = core_.read_model((o_.models / "bert_tiny.onnx").string());
    auto ref = cpu(bert);
    workload w{"bert", "MULTI:" + multi_members_, multi(bert), {}, {}, true};
    auto ids_and_mask = [&](int64_t len, int64_t mask_len) {
      std::map<std::string, Tensor> in;
      in["input_ids"] = uniform(element_type::i64, {1, len}, rng_, 1000);
      Tensor mask(element_type::i64, {1, mask_len});
      std::fill(mask.data<int64_t>(), mask.data<int64_t>() + mask_len, int64_t{1});
      in["attention_mask"] = mask;
      return in;
    };
    for (int64_t len : {5, 16, 40, 77}) {
      variant v;
      v.inputs = ids_and_mask(len, len);
      v.expected = run_on(ref, v.inputs);
      w.good.push_back(std::move(v));
    }
    variant past_table;
    past_table.inputs = ids_and_mask(12, 12);
    past_table.inputs["input_ids"].data<int64_t>()[5] = 1000000;
    past_table.bad = "token id past the table", past_table.must_name = "Gather";
    w.bad.push_back(std::move(past_table));
    w.bad.push_back({ids_and_mask(9, 10), {}, "lengths disagree", "attention_mask"});
    workload r{"bert", "MULTI:" + remote_members_, core_.compile_model(bert, "MULTI:" + remote_members_), w.good, w.bad, true};
    workloads_.push_back(std::move(w));
    workloads_.push_back(std::move(r));
  }

  /// Requests in `in_flight` slots until the time is up, with the chaos thread beside them;
  /// then waits (up to a minute) for the last ones.
  void stream() {
    requests_.resize(static_cast<std::size_t>(o_.in_flight));
    start_ = clock_type::now();
    const auto end = start_ + after(o_.minutes * 60);
    std::thread chaos([&] { make_chaos(end); });
    for (std::size_t s = 0; s < requests_.size(); ++s) submit(s);
    while (true) {
      std::shared_ptr<submission> done;
      {
        std::unique_lock lock(m_);
        const bool got = cv_.wait_for(lock, std::chrono::seconds(1), [&] { return !done_.empty(); });
        if (got) {
          done = done_.front();
          done_.pop_front();
        }
      }
      if (done) finish(*done);
      const bool time_up = clock_type::now() >= end;
      if (done && !time_up) submit(done->slot);
      if (time_up) {
        std::lock_guard lock(m_);
        if (in_flight_ == 0) break;
        if (clock_type::now() >= end + std::chrono::seconds(60)) {
          t_.lost = static_cast<uint64_t>(in_flight_);
          break;
        }
      }
      // RSS at the start of each minute, the client's and worker 2's (never killed): growth shows
      // as a slope, a plateau as warm-up.
      if (const int minute = static_cast<int>(std::chrono::duration<double>(clock_type::now() - start_).count() / 60);
          !time_up && !rss_by_minute_.count(minute)) {
        rss_by_minute_[minute] = {rss_and_fds("self").first, rss_and_fds(std::to_string(workers_[1]->pid)).first,
                                  heap_mb()};
        if (warmed_) client_peak_ = std::max(client_peak_, rss_by_minute_[minute].client);
      }
      // Warm-up: every member compiling each bert length, the GPU's pipelines, the output pools
      // reaching their size. In a 60-minute run (2026-11-29) the client's heap grew until
      // minute 5 and then stayed within 1 % to minute 60: growth counts from min(5 minutes, a
      // quarter of the run).
      if (!warmed_ && clock_type::now() - start_ >= after(warmup_seconds())) {
        warmed_ = true;
        client_after_warmup_ = rss_and_fds("self");
        worker_after_warmup_ = rss_and_fds(std::to_string(workers_[1]->pid));
      }
    }
    stop_chaos_ = true;
    chaos.join();
  }

  void submit(std::size_t slot) {
    auto sub = std::make_shared<submission>();
    sub->slot = slot;
    sub->workload = std::uniform_int_distribution<std::size_t>(0, workloads_.size() - 1)(rng_);
    auto& w = workloads_[sub->workload];
    const bool bad = !w.bad.empty() && std::uniform_real_distribution<double>(0, 1)(rng_) < o_.bad_share;
    const auto& pool = bad ? w.bad : w.good;
    sub->v = &pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng_)];
    auto& reqs = requests_[slot];
    if (!reqs.count(sub->workload)) reqs[sub->workload] = w.cm.create_infer_request();
    InferRequest& r = reqs[sub->workload];
    ++t_.submitted;
    {
      std::lock_guard lock(m_);
      ++in_flight_;
    }
    sub->start = clock_type::now();
    try {
      for (const auto& [n, t] : sub->v->inputs) r.set_tensor(n, t);
      r.set_callback([this, sub](std::exception_ptr e) {
        if (sub->completions.fetch_add(1) > 0) {
          std::lock_guard lock(m_);
          ++t_.twice;
          return;
        }
        sub->error = e;
        std::lock_guard lock(m_);
        done_.push_back(sub);
        cv_.notify_one();
      });
      r.start_async();
    } catch (...) { // refused before it ran (a wrong shape, disagreeing lengths): an error too
      sub->completions = 1;
      sub->error = std::current_exception();
      std::lock_guard lock(m_);
      done_.push_back(sub);
      cv_.notify_one();
    }
  }

  void finish(submission& sub) {
    {
      std::lock_guard lock(m_);
      --in_flight_;
    }
    const auto& w = workloads_[sub.workload];
    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - sub.start).count();
    std::string message;
    if (sub.error) try {
        std::rethrow_exception(sub.error);
      } catch (const std::exception& e) {
        message = e.what();
      }
    if (!sub.v->bad.empty()) { // a bad input must come back as an error naming it
      if (!sub.error) ++t_.wrong, ++t_.errors["unclear: " + w.name + " " + sub.v->bad + " ran"];
      else if (message.find(sub.v->must_name) == std::string::npos) ++t_.errors["unclear: " + first_line(message)];
      else ++t_.errors["bad input, " + w.name + ": " + sub.v->bad];
      return;
    }
    if (sub.error) {
      ++t_.errors["unexpected: " + w.name + " on " + w.device.substr(0, w.device.find(':')) + ": " + first_line(message)];
      return;
    }
    InferRequest& r = requests_[sub.slot][sub.workload];
    const double d = deviation(r, sub.v->expected);
    t_.worst_deviation = std::max(t_.worst_deviation, d);
    if (d > 2e-3) {
      ++t_.wrong;
      std::fprintf(stderr, "troupe_soak: %s on %s differs from the CPU's by %g\n", w.name.c_str(), w.device.c_str(), d);
      return;
    }
    ++t_.with_outputs;
    t_.latency_ms[static_cast<int>(std::chrono::duration<double>(clock_type::now() - start_).count() / 60)].push_back(ms);
  }

  /// Kills worker 1 every kill_every seconds and restarts it at its address a second later;
  /// stops worker 2 for 3 s half-way between (it is never killed: its RSS and open files tell
  /// whether a worker grows); rotates DEVICE_PRIORITIES every 5 s.
  void make_chaos(clock_type::time_point end) {
    const auto bin = fs::read_symlink("/proc/self/exe").parent_path() / "troupe";
    auto split = [](const std::string& list) {
      std::vector<std::string> out;
      for (std::size_t at = 0; at <= list.size();) {
        const auto comma = std::min(list.find(',', at), list.size());
        out.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
      return out;
    };
    std::vector<std::vector<std::string>> members;
    for (auto& w : workloads_) members.push_back(split(w.device.substr(w.device.find(':') + 1)));
    auto next_kill = start_ + after(o_.kill_every);
    auto next_stall = start_ + after(o_.kill_every / 2);
    auto next_rotation = start_ + std::chrono::seconds(5);
    while (!stop_chaos_ && clock_type::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const auto now = clock_type::now();
      if (o_.kill_every > 0 && now >= next_kill && now + std::chrono::seconds(5) < end) {
        auto& w = *workers_[0];
        const std::string at = w.address;
        w.kill9();
        ++kills_;
        // Back at the same address a second later (a few tries: the port may linger a moment).
        for (int attempt = 0; w.pid <= 0 && attempt < 10; ++attempt) try {
            std::this_thread::sleep_for(std::chrono::seconds(1));
            w.start(worker_argv(bin, at));
          } catch (const std::exception& e) {
            std::fprintf(stderr, "troupe_soak: restarting the worker at %s: %s\n", at.c_str(), e.what());
          }
        restarts_ += w.pid > 0;
        next_kill += after(o_.kill_every);
      }
      if (o_.kill_every > 0 && now >= next_stall && now + std::chrono::seconds(5) < end) {
        const pid_t p = workers_[1]->pid;
        if (p > 0) {
          ::kill(p, SIGSTOP);
          std::this_thread::sleep_for(std::chrono::seconds(3));
          ::kill(p, SIGCONT);
          ++stalls_;
        }
        next_stall += after(o_.kill_every);
      }
      if (now >= next_rotation) {
        for (std::size_t k = 0; k < workloads_.size(); ++k) {
          if (!workloads_[k].multi) continue;
          std::rotate(members[k].begin(), members[k].begin() + 1, members[k].end());
          std::string order;
          for (const auto& m : members[k]) order += (order.empty() ? "" : ",") + m;
          workloads_[k].cm.set_property({{"DEVICE_PRIORITIES", order}});
        }
        ++rotations_;
        next_rotation += std::chrono::seconds(5);
      }
    }
  }

  /// Where growth counts from: min(5 minutes, a quarter of the run).
  double warmup_seconds() const { return std::min(300.0, o_.minutes * 15); }

  int report() {
    const auto client_end = rss_and_fds("self");
    std::printf("\n| minute | completed with outputs | p50 ms | p99 ms | RSS MB at its start: client, worker 2 "
                "| client's heap MB: in use, held |\n"
                "|---|---|---|---|---|---|\n");
    for (const auto& [minute, ms] : t_.latency_ms) {
      const auto at = rss_by_minute_.find(minute);
      std::string rss = "-", heap = "-";
      if (at != rss_by_minute_.end()) {
        rss = std::to_string(static_cast<int>(at->second.client)) + ", " + std::to_string(static_cast<int>(at->second.worker));
        heap = std::to_string(static_cast<int>(at->second.heap.first)) + ", " +
               std::to_string(static_cast<int>(at->second.heap.second));
      }
      std::printf("| %d | %zu | %.1f | %.1f | %s | %s |\n", minute + 1, ms.size(), percentile(ms, 0.5),
                  percentile(ms, 0.99), rss.c_str(), heap.c_str());
    }
    uint64_t errors = 0, failing = 0;
    for (const auto& [kind, n] : t_.errors) {
      errors += n;
      if (kind.rfind("unexpected", 0) == 0 || kind.rfind("unclear", 0) == 0) failing += n;
    }
    std::printf("\n| | |\n|---|---|\n");
    std::printf("| submitted | %llu |\n", static_cast<unsigned long long>(t_.submitted));
    std::printf("| completed with outputs | %llu |\n", static_cast<unsigned long long>(t_.with_outputs));
    std::printf("| completed with an error | %llu |\n", static_cast<unsigned long long>(errors));
    for (const auto& [kind, n] : t_.errors) std::printf("| - %s | %llu |\n", kind.c_str(), static_cast<unsigned long long>(n));
    std::printf("| lost | %llu |\n", static_cast<unsigned long long>(t_.lost));
    std::printf("| completed twice | %llu |\n", static_cast<unsigned long long>(t_.twice));
    std::printf("| wrong (differ from the CPU alone) | %llu |\n", static_cast<unsigned long long>(t_.wrong));
    std::printf("| largest deviation from the CPU alone | %.2g |\n", t_.worst_deviation);
    std::printf("| workers killed / restarted, stalled 3 s | %d / %d, %d |\n", kills_.load(), restarts_.load(), stalls_.load());
    std::printf("| DEVICE_PRIORITIES changes | %d |\n", rotations_.load());
    const auto warm = warmed_ ? client_after_warmup_ : client_start_;
    const double peak = std::max(client_peak_, client_end.first);
    std::printf("| client RSS MB: start, after warm-up (%.0f min), end (growth); largest since warm-up (growth) | %.0f, "
                "%.0f, %.0f (%+.1f %%); %.0f (%+.1f %%) |\n",
                warmup_seconds() / 60, client_start_.first, warm.first, client_end.first,
                100 * (client_end.first / warm.first - 1), peak, 100 * (peak / warm.first - 1));
    // Single samples swing with the allocator (+-1.5 % minute to minute in a 60-minute run on
    // 2026-11-29 whose heap in use stayed within 2 %): the medians of the first and the last
    // stretch after warm-up (10 minutes, or a quarter of what follows warm-up) show a trend.
    std::vector<double> after_warmup;
    for (const auto& [minute, sample] : rss_by_minute_)
      if (minute * 60.0 >= warmup_seconds()) after_warmup.push_back(sample.client);
    const auto stretch = std::clamp<std::size_t>(after_warmup.size() / 4, 1, 10);
    if (after_warmup.size() >= 2 * stretch) {
      const double first = median({after_warmup.begin(), after_warmup.begin() + static_cast<std::ptrdiff_t>(stretch)});
      const double last = median({after_warmup.end() - static_cast<std::ptrdiff_t>(stretch), after_warmup.end()});
      std::printf("| client RSS MB, median of the first and of the last %zu minutes after warm-up (growth) | %.0f, %.0f "
                  "(%+.1f %%) |\n",
                  stretch, first, last, 100 * (last / first - 1));
    }
    std::printf("| client open files: start, after warm-up, end | %d, %d, %d |\n", client_start_.second, warm.second,
                client_end.second);
    const auto w1 = rss_and_fds(std::to_string(workers_[0]->pid)), w2 = rss_and_fds(std::to_string(workers_[1]->pid));
    std::printf("| worker 1 (killed and restarted), since its last start: RSS MB, open files | %.0f, %d |\n", w1.first,
                w1.second);
    std::printf("| worker 2 (stalled, never killed): RSS MB after warm-up, end (growth); open files | %.0f, %.0f (%+.1f %%); "
                "%d, %d |\n",
                worker_after_warmup_.first, w2.first, 100 * (w2.first / std::max(1.0, worker_after_warmup_.first) - 1),
                worker_after_warmup_.second, w2.second);
    for (auto& w : workloads_)
      if (w.multi)
        std::printf("| served, %s on %s | %s; taken to another device after a failure: %s |\n", w.name.c_str(),
                    w.device == "MULTI:" + remote_members_ ? "the workers" : "MULTI",
                    w.cm.get_property("REQUESTS_SERVED").as_string().c_str(),
                    w.cm.get_property("REQUESTS_REDISPATCHED").as_string().c_str());
    const bool pass = t_.lost == 0 && t_.twice == 0 && t_.wrong == 0 && failing == 0 && t_.with_outputs > 0;
    std::printf("\ntroupe_soak: %s (lost %llu, completed twice %llu, wrong %llu, unexpected or unclear errors %llu)\n",
                pass ? "passed" : "FAILED", static_cast<unsigned long long>(t_.lost),
                static_cast<unsigned long long>(t_.twice), static_cast<unsigned long long>(t_.wrong),
                static_cast<unsigned long long>(failing));
    return pass ? 0 : 1;
  }

  options o_;
  std::mt19937 rng_;
  Core core_;
  std::vector<std::unique_ptr<bench::listening_child>> workers_;
  std::unique_ptr<bench::link_proxy> link_; ///< worker 2's delaying, lossy link (none: direct)
  std::vector<std::string> addresses_;      ///< where the client reaches each worker
  std::string multi_members_, remote_members_; ///< all members; the two workers' CPUs
  std::vector<workload> workloads_;
  std::vector<std::map<std::size_t, InferRequest>> requests_; ///< per slot, per workload
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<submission>> done_;
  int64_t in_flight_ = 0;
  tally t_;
  clock_type::time_point start_;
  std::pair<double, int> client_start_ = rss_and_fds("self"), client_after_warmup_, worker_after_warmup_;
  struct memory_sample {
    double client, worker;          ///< RSS MB, the client's and worker 2's
    std::pair<double, double> heap; ///< the client's heap_mb()
  };
  std::map<int, memory_sample> rss_by_minute_; ///< minute -> memory at its start
  bool warmed_ = false;
  double client_peak_ = 0; ///< the client's largest RSS MB at a minute's start after warm-up
  std::atomic<bool> stop_chaos_{false};
  std::atomic<int> kills_{0}, restarts_{0}, stalls_{0}, rotations_{0};
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "troupe_soak: %s\nusage: troupe_soak -models DIR [-minutes M] [-kill-every S] [-fail-every N] [-in-flight N] "
               "[-bad-share P] [-link-delay-ms D] [-link-loss PERCENT] [-seed N]\n",
               why.c_str());
  std::exit(2);
}

} // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(flag + " needs a value");
    const std::string v = argv[i + 1];
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    const bool number = end && *end == '\0' && !v.empty() && x >= 0;
    if (flag == "-models") o.models = v;
    else if (!number) usage(flag + " takes a number >= 0, got '" + v + "'");
    else if (flag == "-minutes") o.minutes = x;
    else if (flag == "-kill-every") o.kill_every = x;
    else if (flag == "-fail-every") o.fail_every = static_cast<int>(x);
    else if (flag == "-in-flight") o.in_flight = std::max(1, static_cast<int>(x));
    else if (flag == "-bad-share") o.bad_share = std::min(1.0, x);
    else if (flag == "-link-delay-ms") o.link_delay_ms = x;
    else if (flag == "-link-loss") o.link_loss_percent = std::min(100.0, x);
    else if (flag == "-seed") o.seed = static_cast<unsigned>(x);
    else usage("unknown flag " + flag);
  }
  if (o.models.empty()) usage("-models DIR is needed (PP-OCR's models and bert_tiny.onnx: scripts/fetch_test_data.sh)");
  try {
    return soak(o).run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe_soak: %s\n", e.what());
    return 1;
  }
}
