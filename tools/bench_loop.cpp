#include "tools/bench_loop.hpp"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "tools/progress.hpp"

namespace troupe::cli {

namespace {

using clock_type = std::chrono::steady_clock;

double ms_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void set_inputs(InferRequest& r, const std::vector<Tensor>& set) {
  for (std::size_t k = 0; k < set.size(); ++k) r.set_input_tensor(k, set[k]);
}

/// What the loop and the completion callbacks share; callbacks hold it by shared_ptr so that
/// nothing they touch can go away under them.
struct shared_state {
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::size_t> idle;
  std::vector<clock_type::time_point> began;
  std::vector<std::size_t> config_of; ///< the configuration each request runs now
  std::exception_ptr failure;
  clock_type::time_point last_end;
  loop_result result;
};

/// A request failed after others had succeeded: counted, and the run goes on.
void count_failure(loop_result& r, const std::string& why) {
  if (r.failed++ == 0) r.first_failure = why;
}

std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an unknown error";
  }
}

} // namespace

void assign_sets(std::vector<InferRequest>& reqs, const input_sets& sets) {
  for (std::size_t i = 0; i < reqs.size(); ++i) set_inputs(reqs[i], sets.sets[i % sets.sets.size()]);
}

double first_inference(InferRequest& req, bool async) {
  auto t0 = clock_type::now();
  if (async) {
    req.start_async();
    req.wait();
  } else {
    req.infer();
  }
  return ms_between(t0, clock_type::now());
}

loop_result measure(std::vector<InferRequest>& reqs, const input_sets& sets, const loop_settings& s) {
  const std::size_t nreq = reqs.size(), nsets = sets.sets.size();
  auto st = std::make_shared<shared_state>();
  st->began.resize(nreq);
  st->config_of.resize(nreq);
  st->result.by_configuration.resize(s.configurations);
  progress prog(s.niter, s.seconds);
  const auto start = clock_type::now();
  st->last_end = start;
  uint64_t it = 0;
  auto keep_going = [&] {
    const double elapsed_s = std::chrono::duration<double>(clock_type::now() - start).count();
    return (s.niter != 0 && it < s.niter) || (s.seconds > 0 && elapsed_s < s.seconds) ||
           (s.async && it % nreq != 0); // async: every request runs as often as the others
  };
  auto pace = [&] {
    if (s.max_irate <= 0) return;
    auto due = start + std::chrono::duration_cast<clock_type::duration>(
                           std::chrono::duration<double>(static_cast<double>(st->result.frames) / s.max_irate));
    std::this_thread::sleep_until(due);
  };
  // The set an iteration uses: in inference-only mode the request's own, else the next in turn.
  auto set_for = [&](std::size_t req) { return s.inference_only ? req % nsets : it % nsets; };

  if (!s.async) {
    while (keep_going()) {
      const std::size_t i = it % nreq, set = set_for(i);
      if (!s.inference_only) set_inputs(reqs[i], sets.sets[set]);
      auto t0 = clock_type::now();
      try {
        reqs[i].infer();
      } catch (const std::exception& e) {
        if (st->result.latencies.empty()) throw;
        count_failure(st->result, e.what());
        ++it;
        prog.update(it);
        continue;
      }
      auto t1 = clock_type::now();
      const double ms = ms_between(t0, t1);
      st->result.latencies.push_back(ms);
      st->result.by_configuration[sets.configuration[set]].push_back(ms);
      st->last_end = t1;
      ++it;
      st->result.frames += static_cast<uint64_t>(s.batch[set]);
      prog.update(it);
      pace();
    }
  } else {
    for (std::size_t i = 0; i < nreq; ++i) {
      reqs[i].set_callback([st, i](std::exception_ptr e) {
        auto now = clock_type::now();
        std::lock_guard lock(st->m);
        const double ms = ms_between(st->began[i], now);
        if (e && st->result.latencies.empty() && !st->failure) st->failure = e;
        if (e) {
          count_failure(st->result, message_of(e));
          st->idle.push_back(i);
          st->cv.notify_one();
          return;
        }
        st->result.latencies.push_back(ms);
        st->result.by_configuration[st->config_of[i]].push_back(ms);
        if (now > st->last_end) st->last_end = now;
        st->idle.push_back(i);
        st->cv.notify_one();
      });
      st->idle.push_back(nreq - 1 - i); // request 0 first
    }
    std::unique_lock lock(st->m);
    try {
      while (!st->failure && keep_going()) {
        st->cv.wait(lock, [&] { return !st->idle.empty() || st->failure; });
        if (st->failure) break;
        const std::size_t i = st->idle.back();
        st->idle.pop_back();
        const std::size_t set = set_for(i);
        st->config_of[i] = sets.configuration[set];
        lock.unlock();
        if (!s.inference_only) set_inputs(reqs[i], sets.sets[set]);
        st->began[i] = clock_type::now();
        reqs[i].start_async();
        ++it;
        st->result.frames += static_cast<uint64_t>(s.batch[set]);
        prog.update(it);
        pace();
        lock.lock();
      }
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      if (!st->failure) st->failure = std::current_exception();
    }
    // Every started inference completes, its callback returned, before the results are read.
    lock.unlock();
    for (auto& r : reqs) {
      try {
        r.wait();
      } catch (...) {
        // The error reached the callback too; st->failure holds the first one.
      }
      r.set_callback(nullptr);
    }
  }
  prog.finish();
  if (st->failure) std::rethrow_exception(st->failure);
  st->result.iterations = it;
  st->result.duration_ms = ms_between(start, st->last_end);
  return std::move(st->result);
}

} // namespace troupe::cli
