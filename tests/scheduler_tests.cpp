/// MULTI's scheduler: the dispatch table's rules step by step (no clock: times are passed in),
/// then the scheduler actor on test devices that hold runs until the test releases them and
/// fail as the test says. Every request completes exactly once.
#define BOOST_TEST_MODULE scheduler_tests
#include <boost/test/unit_test.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "actors/dispatch_table.hpp"
#include "actors/scheduler.hpp"
#include "tests/support/recording_sink.hpp"

using namespace troupe;
using namespace troupe::actors;
using troupe::tests::recorder;
using troupe::tests::scalar;

namespace {

std::vector<bool> none_tried(std::size_t n = 2) { return std::vector<bool>(n, false); }

/// One run of device `d` from t=0 that took `us` (a device fault when `fault`).
void ran(dispatch_table& t, std::size_t d, double us, bool fault = false) {
  t.started(d, 0);
  t.finished(d, 0, us, fault);
}

} // namespace

// ---- dispatch_table -------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(priority_order_fills_the_first_device_then_the_next) {
  dispatch_table t({"GPU.0", "CPU"}, {2, 1}, schedule_policy::device_priority, false);
  std::vector<std::size_t> got;
  for (int i = 0; i < 4; ++i) {
    auto d = t.pick(none_tried(), 0);
    if (!d) break;
    t.started(*d, 0);
    got.push_back(*d);
  }
  BOOST_TEST(got == (std::vector<std::size_t>{0, 0, 1})); // then all full
  t.finished(1, 0, 10, false);
  BOOST_TEST(*t.pick(none_tried(), 10) == 1u);
  BOOST_TEST(t.devices()[1].served == 1u);
}

BOOST_AUTO_TEST_CASE(round_robin_takes_the_devices_in_turn) {
  dispatch_table t({"A", "B", "C"}, {4, 4, 4}, schedule_policy::round_robin, false);
  std::vector<std::size_t> got;
  for (int i = 0; i < 6; ++i) {
    auto d = t.pick(none_tried(3), 0);
    t.started(*d, 0);
    got.push_back(*d);
  }
  BOOST_TEST(got == (std::vector<std::size_t>{0, 1, 2, 0, 1, 2}));
}

BOOST_AUTO_TEST_CASE(new_priorities_reorder_exclude_and_bring_back) {
  dispatch_table t({"GPU.0", "CPU"}, {1, 1}, schedule_policy::device_priority);
  t.set_priorities({1, 0});
  BOOST_TEST(*t.pick(none_tried(), 0) == 1u);
  t.set_priorities({0});
  BOOST_TEST(*t.pick(none_tried(), 0) == 0u);
  t.started(0, 0);
  BOOST_TEST(!t.pick(none_tried(), 0)); // CPU excluded: the request waits for the GPU
  BOOST_TEST(t.serving() == (std::vector<std::string>{"GPU.0"}));
  BOOST_TEST(!t.usable({true, false})); // the GPU failed it and the CPU is out of the list
  t.set_priorities({0, 1});
  BOOST_TEST(*t.pick(none_tried(), 0) == 1u);
}

BOOST_AUTO_TEST_CASE(a_request_waits_for_a_faster_busy_device_rather_than_run_slower) {
  // Measured: GPU.0 100 us, CPU 1000 us. GPU.0's one slot is busy since t=0.
  dispatch_table t({"CPU", "GPU.0"}, {1, 1}, schedule_policy::device_priority);
  ran(t, 0, 1000);
  ran(t, 1, 100);
  t.started(1, 1000);
  // The CPU is first in the list and free, but GPU.0 frees in 50 us and takes 100: 150 < 1000.
  BOOST_TEST(!t.pick(none_tried(), 1050));
  // Once GPU.0 is free it takes the request although it is second in the list.
  t.finished(1, 1000, 1100, false);
  BOOST_TEST(*t.pick(none_tried(), 1100) == 1u);
  t.started(1, 1100);
  // A slower device still helps when the faster one's backlog would finish later: GPU.0
  // measured 100 us, the CPU 120 us: waiting 100 + 100 is worse than 120.
  dispatch_table u({"CPU", "GPU.0"}, {1, 1}, schedule_policy::device_priority);
  ran(u, 0, 120);
  ran(u, 1, 100);
  u.started(1, 200);
  BOOST_TEST(*u.pick(none_tried(), 200) == 0u);
}

BOOST_AUTO_TEST_CASE(a_stale_estimate_is_measured_again) {
  // B's runs took 3 s (its node stalled), A's 100 us: B gets nothing while A is busy, the
  // request waits for A. Once B's estimate is older than max(2 s, 10 x 3 s), both are measured
  // again (A first, then B, one request each), and B, now as fast as A, serves again.
  dispatch_table t({"A", "B"}, {1, 1}, schedule_policy::device_priority);
  t.started(1, -3e6); // B's first run (a warm-up, for all the table knows)
  t.finished(1, -3e6, 0, false);
  t.started(1, 0);
  t.finished(1, 0, 3e6, false);
  t.started(0, 3e6);
  t.finished(0, 3e6, 3e6 + 100, false);
  t.started(0, 3e6 + 200);
  BOOST_TEST(!t.pick(none_tried(), 3e6 + 250)); // A frees in 50 us: better than B's 3 s
  t.finished(0, 3e6 + 200, 3e6 + 300, false);
  const double later = 3e6 + 1e7; // 10 s on: B's estimate is not stale yet (30 s)
  t.started(0, later);
  BOOST_TEST(!t.pick(none_tried(), later + 10));
  t.finished(0, later, later + 100, false);
  const double stale = 3e6 + 3.1e7;
  BOOST_TEST(*t.pick(none_tried(), stale) == 0u);
  t.started(0, stale);
  BOOST_TEST(*t.pick(none_tried(), stale) == 1u); // B's probe
  t.started(1, stale);
  t.finished(1, stale, stale + 100, false);
  t.finished(0, stale, stale + 100, false);
  BOOST_TEST(t.devices()[1].service_us == 100.0); // the probe replaced the 3 s
  t.started(0, stale + 200);
  BOOST_TEST(*t.pick(none_tried(), stale + 200) == 1u); // A busy: B takes it
}

BOOST_AUTO_TEST_CASE(a_devices_first_run_is_measured_again_soon) {
  // B's first run took 50 ms (a warm-up), A's runs 100 us. While that one run is B's whole
  // record, B is measured again once idle for max(0.2 s, 2 x 50 ms), not after 2 s; the
  // second run replaces the first, and B, as fast as A, serves.
  dispatch_table t({"A", "B"}, {1, 1}, schedule_policy::device_priority);
  t.started(1, 0);
  t.finished(1, 0, 5e4, false);
  ran(t, 0, 100);
  t.started(0, 5e4);
  BOOST_TEST(!t.pick(none_tried(), 5e4 + 10)); // A frees in 90 us: better than B's 50 ms
  t.finished(0, 5e4, 5e4 + 100, false);
  const double soon = 5e4 + 2.1e5;
  t.started(0, soon);
  BOOST_TEST(*t.pick(none_tried(), soon) == 1u); // B's second measure
  t.started(1, soon);
  t.finished(1, soon, soon + 100, false);
  t.finished(0, soon, soon + 100, false);
  BOOST_TEST(t.devices()[1].service_us == 100.0);
  // Measured twice, B's estimate lasts the usual 2 s.
  t.started(1, soon + 200);
  t.finished(1, soon + 200, soon + 200 + 5e4, false); // one slow run now: blended, not stale soon
  t.started(0, soon + 2e5 + 3e5);
  BOOST_TEST(!t.pick(none_tried(), soon + 2e5 + 3e5)); // B (~10 ms) waits behind A (100 us)
}

BOOST_AUTO_TEST_CASE(a_device_not_measured_yet_takes_one_request_at_a_time) {
  dispatch_table t({"GPU.0", "CPU"}, {2, 2}, schedule_policy::device_priority);
  BOOST_TEST(*t.pick(none_tried(), 0) == 0u);
  t.started(0, 0);
  BOOST_TEST(*t.pick(none_tried(), 0) == 1u); // not GPU.0's second slot
  t.started(1, 0);
  BOOST_TEST(!t.pick(none_tried(), 0));
  t.finished(1, 0, 100, false); // the CPU measured: its two slots open
  BOOST_TEST(*t.pick(none_tried(), 100) == 1u);
  t.started(1, 100);
  BOOST_TEST(*t.pick(none_tried(), 100) == 1u);
}

BOOST_AUTO_TEST_CASE(a_device_not_measured_yet_is_tried_before_a_measured_one) {
  dispatch_table t({"GPU.0", "CPU"}, {2, 2}, schedule_policy::device_priority);
  ran(t, 0, 100); // GPU.0 measured, the CPU not yet
  BOOST_TEST(*t.pick(none_tried(), 100) == 1u);
  t.started(1, 100);
  // The CPU runs its one unmeasured request: while it has run for less than GPU.0's 100 us
  // it may prove faster, so the next request waits; after that, GPU.0 takes it.
  BOOST_TEST(!t.pick(none_tried(), 150));
  BOOST_TEST(*t.pick(none_tried(), 201) == 0u);
}

BOOST_AUTO_TEST_CASE(a_device_that_keeps_failing_leaves_the_list) {
  dispatch_table t({"GPU.0", "CPU"}, {1, 1}, schedule_policy::device_priority);
  for (int i = 0; i < dispatch_table::max_failures_in_a_row - 1; ++i) ran(t, 0, 1, true);
  ran(t, 0, 1); // a success resets the count
  BOOST_TEST(!t.devices()[0].failed_out);
  for (int i = 0; i < dispatch_table::max_failures_in_a_row; ++i) ran(t, 0, 1, true);
  BOOST_TEST(t.devices()[0].failed_out);
  BOOST_TEST(t.serving() == (std::vector<std::string>{"CPU"}));
  BOOST_TEST(*t.pick(none_tried(), 0) == 1u);
}

BOOST_AUTO_TEST_CASE(a_fallback_device_takes_only_requests_another_device_failed) {
  dispatch_table t({"GPU.0", "CPU"}, {1, 1}, schedule_policy::device_priority, false);
  t.set_priorities({0}, {1});
  BOOST_TEST(*t.pick(none_tried(), 0) == 0u);
  t.started(0, 0);
  BOOST_TEST(!t.pick(none_tried(), 0));              // a new request waits for GPU.0
  BOOST_TEST(*t.pick({true, false}, 0) == 1u);        // one GPU.0 failed goes to the CPU
  BOOST_TEST(t.usable({true, false}));
  BOOST_TEST(!t.usable({true, true}));
  BOOST_TEST(t.serving() == (std::vector<std::string>{"GPU.0"})); // a fallback is not serving
  // Once GPU.0 fails out, the fallback serves every request.
  t.finished(0, 0, 1, false);
  for (int i = 0; i < dispatch_table::max_failures_in_a_row; ++i) ran(t, 0, 1, true);
  BOOST_TEST(*t.pick(none_tried(), 0) == 1u);
  BOOST_TEST(t.serving() == (std::vector<std::string>{"CPU"}));
  t.set_priorities({0, 1}, {1}); // listed in the order: not a fallback too
  BOOST_TEST(t.fallbacks().empty());
}

BOOST_AUTO_TEST_CASE(a_device_still_compiling_takes_nothing_but_keeps_requests_waiting) {
  dispatch_table t({"GPU.0", "CPU"}, {1, 1}, schedule_policy::device_priority, false);
  t.set_compiling(0);
  BOOST_TEST(*t.pick(none_tried(), 0) == 1u); // GPU.0 is first but not compiled yet
  t.set_priorities({0});
  BOOST_TEST(!t.pick(none_tried(), 0));
  BOOST_TEST(t.usable(none_tried())); // the request waits for it rather than failing
  t.arrived(0, 2); // with its own count
  BOOST_TEST(*t.pick(none_tried(), 0) == 0u);
  t.started(0, 0);
  BOOST_TEST(*t.pick(none_tried(), 0) == 0u);
  t.started(0, 0);
  BOOST_TEST(!t.pick(none_tried(), 0));
}

// ---- the scheduler actor --------------------------------------------------------------------

namespace {

/// A device for the scheduler: records the requests it is given, holds them until the test
/// releases them (or completes them at once when not holding), and fails those `fault` names.
/// Its output is its input times `factor`, so the test sees which device ran a request.
struct test_device : runner {
  explicit test_device(float f, bool holds) : factor(f), hold(holds) {}
  const float factor;
  std::mutex m;
  std::condition_variable cv;
  bool hold;
  std::deque<inference> held;
  std::vector<uint64_t> seen;
  std::function<std::optional<failure>(uint64_t)> fault;

  void submit(inference job) override {
    std::unique_lock l(m);
    seen.push_back(job.request);
    if (hold) {
      held.push_back(std::move(job));
      cv.notify_all();
      return;
    }
    l.unlock();
    finish(std::move(job));
  }
  void finish(inference job) {
    if (fault)
      if (auto f = fault(job.request)) {
        job.sink->on_error(job.request, *f);
        return;
      }
    job.sink->on_outputs(job.request, {scalar(factor * job.inputs.at(0).data<float>()[0])}, {});
  }
  /// No clock: a run that never comes hangs the test, and CTest's TIMEOUT reports it.
  void wait_held(std::size_t n) {
    std::unique_lock l(m);
    cv.wait(l, [&] { return held.size() >= n; });
  }
  void release_one() {
    std::unique_lock l(m);
    auto job = std::move(held.front());
    held.pop_front();
    l.unlock();
    finish(std::move(job));
  }
  std::size_t seen_count() {
    std::lock_guard l(m);
    return seen.size();
  }
};

struct two_devices {
  test_device* gpu;
  test_device* cpu;
  std::unique_ptr<scheduler> sched;
  std::shared_ptr<std::vector<std::vector<std::string>>> serving = std::make_shared<std::vector<std::vector<std::string>>>();
  std::shared_ptr<std::mutex> serving_mutex = std::make_shared<std::mutex>();

  std::shared_ptr<test_device> compiled_gpu; ///< GPU.0 when it starts compiling: for device_ready

  /// `gpu_compiling`: GPU.0's model is not ready when the scheduler starts (AUTO's startup).
  two_devices(caf::actor_system& sys, std::size_t gpu_slots, std::size_t cpu_slots, bool hold,
              schedule_policy policy = schedule_policy::device_priority, bool gpu_compiling = false,
              std::chrono::milliseconds wait_for_nodes = std::chrono::seconds(10)) {
    auto g = std::make_shared<test_device>(10.0f, hold);
    auto c = std::make_unique<test_device>(100.0f, hold);
    gpu = g.get();
    cpu = c.get();
    scheduler_spec spec;
    if (gpu_compiling) compiled_gpu = g;
    spec.devices.push_back({"GPU.0", gpu_compiling ? nullptr : std::shared_ptr<runner>(g), gpu_slots});
    spec.devices.push_back({"CPU", std::move(c), cpu_slots});
    spec.policy = policy;
    // Held runs make measured service times whatever the test's pace is: the order alone
    // decides here (the waiting rule has its own tests above).
    spec.wait_for_faster = false;
    spec.hold = wait_for_nodes;
    spec.on_serving = [s = serving, m = serving_mutex](const std::vector<std::string>& now) {
      std::lock_guard l(*m);
      s->push_back(now);
    };
    sched = std::make_unique<scheduler>(sys, std::move(spec));
  }
  std::vector<std::vector<std::string>> serving_changes() {
    std::lock_guard l(*serving_mutex);
    return *serving;
  }
};

} // namespace

BOOST_AUTO_TEST_CASE(requests_fill_the_slots_in_priority_order_and_queue) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  two_devices d(sys, 2, 1, true);
  for (uint64_t i = 1; i <= 5; ++i) d.sched->submit(inference{i, {scalar(float(i))}, rec});
  d.gpu->wait_held(2);
  d.cpu->wait_held(1);
  BOOST_TEST(d.gpu->seen == (std::vector<uint64_t>{1, 2}));
  BOOST_TEST(d.cpu->seen == (std::vector<uint64_t>{3}));
  d.gpu->release_one(); // request 1 done: the oldest queued (4) takes its slot
  d.gpu->wait_held(2);
  BOOST_TEST(d.gpu->seen == (std::vector<uint64_t>{1, 2, 4}));
  d.cpu->release_one();
  d.cpu->wait_held(1);
  BOOST_TEST(d.cpu->seen == (std::vector<uint64_t>{3, 5}));
  for (int i = 0; i < 2; ++i) d.gpu->release_one();
  d.cpu->release_one();
  rec->wait_for_count(5);
  BOOST_TEST(rec->values[1] == 10.0f);
  BOOST_TEST(rec->values[3] == 300.0f);
  BOOST_TEST(d.sched->served() == (std::vector<uint64_t>{3, 2}));
}

BOOST_AUTO_TEST_CASE(new_priorities_apply_from_the_next_dispatch) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  two_devices d(sys, 1, 1, true);
  d.sched->submit(inference{1, {scalar(1)}, rec});
  d.gpu->wait_held(1);
  d.sched->set_priorities({0}); // GPU only: the CPU takes nothing new
  d.sched->submit(inference{2, {scalar(2)}, rec});
  d.gpu->release_one();
  d.gpu->wait_held(1); // 2 went to the GPU once it was free, not to the idle CPU
  BOOST_TEST(d.gpu->seen == (std::vector<uint64_t>{1, 2}));
  BOOST_TEST(d.cpu->seen_count() == 0u);
  d.sched->set_priorities({1, 0}); // CPU first, GPU back
  d.sched->submit(inference{3, {scalar(3)}, rec});
  d.cpu->wait_held(1);
  BOOST_TEST(d.cpu->seen == (std::vector<uint64_t>{3}));
  d.gpu->release_one();
  d.cpu->release_one();
  rec->wait_for_count(3);
  for (uint64_t i = 1; i <= 3; ++i) BOOST_TEST(rec->completions[i] == 1);
  const auto changes = d.serving_changes();
  BOOST_REQUIRE(changes.size() == 2u);
  BOOST_TEST(changes[0] == (std::vector<std::string>{"GPU.0"}));
  BOOST_TEST(changes[1] == (std::vector<std::string>{"CPU", "GPU.0"}));
}

BOOST_AUTO_TEST_CASE(a_device_error_is_rerun_elsewhere_and_an_input_error_is_not) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  two_devices d(sys, 1, 1, false);
  d.gpu->fault = [](uint64_t r) -> std::optional<failure> {
    if (r == 1) return failure{failure_kind::device_failure, "GPU hiccup"};
    if (r == 2) return failure{failure_kind::bad_input, "input 'x' is negative"};
    return std::nullopt;
  };
  d.sched->submit(inference{1, {scalar(1)}, rec});
  rec->wait_for_count(1);
  d.sched->submit(inference{2, {scalar(2)}, rec});
  rec->wait_for_count(2);
  BOOST_TEST(rec->values[1] == 100.0f); // re-run on the CPU
  BOOST_TEST(rec->errors[2] == "input 'x' is negative");
  BOOST_TEST((rec->kinds[2] == failure_kind::bad_input));
  BOOST_TEST(d.cpu->seen == (std::vector<uint64_t>{1})); // the input's error was not retried
}

BOOST_AUTO_TEST_CASE(a_device_failing_every_request_leaves_and_every_device_failing_is_named) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  // A failing device leaves after a few failures in a row; a lost one after its first.
  for (const auto kind : {failure_kind::device_failure, failure_kind::device_lost}) {
    auto rec1 = std::make_shared<recorder>();
    two_devices d(sys, 1, 1, false);
    d.gpu->fault = [kind](uint64_t) { return std::optional<failure>(failure{kind, "GPU gone"}); };
    for (uint64_t i = 1; i <= 10; ++i) {
      d.sched->submit(inference{i, {scalar(1)}, rec1});
      rec1->wait_for_count(i);
    }
    for (uint64_t i = 1; i <= 10; ++i) BOOST_TEST(rec1->values[i] == 100.0f);
    const std::size_t leaves_after = kind == failure_kind::device_lost ? 1 : dispatch_table::max_failures_in_a_row;
    BOOST_TEST(d.gpu->seen_count() == leaves_after);
    BOOST_TEST(d.sched->redispatched() == leaves_after);
    BOOST_TEST(d.serving_changes().back() == (std::vector<std::string>{"CPU"}));
  }
  auto rec2 = std::make_shared<recorder>();
  two_devices d(sys, 1, 1, false);
  d.gpu->fault = [](uint64_t) { return std::optional<failure>(failure{failure_kind::device_failure, "GPU broke"}); };
  d.cpu->fault = [](uint64_t) { return std::optional<failure>(failure{failure_kind::device_failure, "CPU broke"}); };
  d.sched->submit(inference{1, {scalar(1)}, rec2});
  rec2->wait_for_count(1);
  BOOST_TEST(rec2->errors[1] == "the request failed on every device it may run on (GPU.0: GPU broke; CPU: CPU broke)");
  BOOST_TEST((rec2->kinds[1] == failure_kind::device_failure));
}

BOOST_AUTO_TEST_CASE(a_device_whose_node_goes_leaves_at_once_and_rejoins_when_it_comes_back) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  two_devices d(sys, 1, 1, false);
  kernels::device_presence presence;
  presence.watch(d.sched->presence_watcher(0));
  d.sched->submit(inference{1, {scalar(1)}, rec});
  rec->wait_for_count(1);
  BOOST_TEST(d.gpu->seen == (std::vector<uint64_t>{1}));
  presence.set(false);
  BOOST_TEST(d.serving_changes().back() == (std::vector<std::string>{"CPU"}));
  for (uint64_t i = 2; i <= 4; ++i) {
    d.sched->submit(inference{i, {scalar(1)}, rec});
    rec->wait_for_count(i);
  }
  BOOST_TEST(d.gpu->seen == (std::vector<uint64_t>{1})); // nothing went to the absent device
  presence.set(true);
  BOOST_TEST(d.serving_changes().back() == (std::vector<std::string>{"GPU.0", "CPU"}));
  d.sched->submit(inference{5, {scalar(1)}, rec});
  rec->wait_for_count(5);
  BOOST_TEST(d.gpu->seen == (std::vector<uint64_t>{1, 5}));
  // A device lost mid-run (its failures) leaves at once too, and comes back with its node.
  d.gpu->fault = [](uint64_t) { return std::optional<failure>(failure{failure_kind::device_lost, "node gone"}); };
  d.sched->submit(inference{6, {scalar(1)}, rec});
  rec->wait_for_count(6);
  BOOST_TEST(rec->values[6] == 100.0f);
  BOOST_TEST(d.serving_changes().back() == (std::vector<std::string>{"CPU"}));
  d.gpu->fault = nullptr;
  presence.set(false);
  presence.set(true);
  BOOST_TEST(d.serving_changes().back() == (std::vector<std::string>{"GPU.0", "CPU"}));
}

namespace {
std::size_t completed(recorder& r) {
  std::lock_guard l(r.m);
  return r.completions.size();
}
} // namespace

BOOST_AUTO_TEST_CASE(a_request_whose_every_device_is_away_waits_for_one_to_come_back) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  {
    // Both nodes gone: the request waits (a failure would have come back inside submit) and
    // runs on the first device that returns.
    auto rec = std::make_shared<recorder>();
    two_devices d(sys, 1, 1, false);
    kernels::device_presence gpu_node, cpu_node;
    gpu_node.watch(d.sched->presence_watcher(0));
    cpu_node.watch(d.sched->presence_watcher(1));
    gpu_node.set(false);
    cpu_node.set(false);
    d.sched->submit(inference{1, {scalar(1)}, rec});
    BOOST_TEST(completed(*rec) == 0u);
    cpu_node.set(true);
    rec->wait_for_count(1);
    BOOST_TEST(rec->values[1] == 100.0f);
  }
  {
    // The one device of the order is lost while it runs the request (its node goes first, as
    // remote devices report it): the request goes back to it when its node is back.
    auto rec = std::make_shared<recorder>();
    two_devices d(sys, 1, 1, false);
    d.sched->set_priorities({0});
    kernels::device_presence gpu_node;
    gpu_node.watch(d.sched->presence_watcher(0));
    int calls = 0;
    d.gpu->fault = [&](uint64_t) -> std::optional<failure> {
      if (calls++ > 0) return std::nullopt;
      gpu_node.set(false);
      return failure{failure_kind::device_lost, "node gone"};
    };
    d.sched->submit(inference{1, {scalar(1)}, rec});
    BOOST_TEST(completed(*rec) == 0u);
    gpu_node.set(true);
    rec->wait_for_count(1);
    BOOST_TEST(rec->values[1] == 10.0f);
    BOOST_TEST(d.gpu->seen == (std::vector<uint64_t>{1, 1}));
    BOOST_TEST(d.cpu->seen.empty());
  }
  {
    // No node comes back: after the hold the request fails, saying it waited and for what.
    auto rec = std::make_shared<recorder>();
    two_devices d(sys, 1, 1, false, schedule_policy::device_priority, false, std::chrono::milliseconds(200));
    kernels::device_presence gpu_node, cpu_node;
    gpu_node.watch(d.sched->presence_watcher(0));
    cpu_node.watch(d.sched->presence_watcher(1));
    gpu_node.set(false);
    cpu_node.set(false);
    d.sched->submit(inference{1, {scalar(1)}, rec});
    rec->wait_for_count(1);
    BOOST_TEST(rec->errors[1].find("no device left to run the request (it waited 200 ms for a node to come back)") !=
                   std::string::npos,
               rec->errors[1]);
    BOOST_TEST(rec->errors[1].find("GPU.0 (its node is gone), CPU (its node is gone)") != std::string::npos, rec->errors[1]);
  }
}

BOOST_AUTO_TEST_CASE(a_presence_watcher_of_a_scheduler_that_is_gone_is_forgotten) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  kernels::device_presence presence;
  {
    two_devices d(sys, 1, 1, false);
    presence.watch(d.sched->presence_watcher(0));
  }
  int heard = 0;
  presence.watch([&](bool) { return ++heard, true; });
  presence.set(false); // the first watcher's scheduler is gone: it says so and is dropped
  presence.set(true);
  BOOST_TEST(heard == 2); // the live watcher heard both changes; the dead one touched nothing
}

BOOST_AUTO_TEST_CASE(a_request_cancelled_while_queued_never_runs) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  struct cancellable : recorder {
    std::atomic<bool> cancelled{false};
    bool wanted(uint64_t) const noexcept override { return !cancelled; }
  };
  auto first = std::make_shared<recorder>();
  auto second = std::make_shared<cancellable>();
  two_devices d(sys, 1, 1, true);
  d.sched->set_priorities({0});
  d.sched->submit(inference{1, {scalar(1)}, first});
  d.gpu->wait_held(1);
  d.sched->submit(inference{2, {scalar(2)}, second}); // queued: the GPU's one slot is busy
  second->cancelled = true;                            // the request layer completes it itself
  d.gpu->release_one();
  first->wait_for_count(1);
  d.sched->submit(inference{3, {scalar(3)}, first}); // goes after 2 was dropped
  d.gpu->wait_held(1);
  BOOST_TEST(d.gpu->seen == (std::vector<uint64_t>{1, 3}));
  d.gpu->release_one();
  first->wait_for_count(2);
}

BOOST_AUTO_TEST_CASE(ten_thousand_requests_with_faults_and_new_priorities_complete_once) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  constexpr uint64_t n = 10000;
  for (auto policy : {schedule_policy::device_priority, schedule_policy::round_robin}) {
    rec = std::make_shared<recorder>();
    two_devices d(sys, 2, 3, false, policy);
    // Faults on distinct requests, never many in a row on one device (so neither leaves the
    // list): each request succeeds on the other device unless the priorities exclude it.
    d.gpu->fault = [](uint64_t r) -> std::optional<failure> {
      if (r % 14 == 0) return failure{failure_kind::device_failure, "GPU fault"};
      return std::nullopt;
    };
    d.cpu->fault = [](uint64_t r) -> std::optional<failure> {
      if (r % 22 == 11) return failure{failure_kind::device_failure, "CPU fault"};
      return std::nullopt;
    };
    std::mt19937 rng(5);
    const std::vector<std::vector<std::size_t>> orders{{0, 1}, {1, 0}, {0}, {1}};
    for (uint64_t i = 1; i <= n; ++i) {
      d.sched->submit(inference{i, {scalar(float(i % 100))}, rec});
      if (i % 500 == 0) d.sched->set_priorities(orders[rng() % orders.size()]);
    }
    rec->wait_for_count(n);
    std::size_t wrong = 0, twice = 0, errors = 0;
    for (uint64_t i = 1; i <= n; ++i) {
      twice += rec->completions[i] != 1;
      if (rec->errors.count(i)) {
        ++errors; // failed on the one device the priorities allowed at the time
        BOOST_TEST((i % 14 == 0 || i % 22 == 11), i << ": " << rec->errors[i]);
        continue;
      }
      const float v = rec->values[i], x = float(i % 100);
      wrong += v != 10 * x && v != 100 * x;
    }
    BOOST_TEST(twice == 0u);
    BOOST_TEST(wrong == 0u);
    BOOST_TEST(errors < n / 10);
    const auto served = d.sched->served();
    BOOST_TEST(served[0] + served[1] == n - errors);
    BOOST_TEST(served[0] > 0u);
    BOOST_TEST(served[1] > 0u);
  }
}

namespace {

/// Waits, without a clock, until the scheduler tells `want` as its serving devices.
void wait_serving(two_devices& d, const std::vector<std::string>& want) {
  while (true) {
    auto c = d.serving_changes();
    if (!c.empty() && c.back() == want) return;
    std::this_thread::yield();
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(requests_wait_for_a_device_still_compiling_then_run_there) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  two_devices d(sys, 1, 1, false, schedule_policy::device_priority, /*gpu_compiling=*/true);
  d.sched->set_priorities({0}); // only GPU.0, which still compiles: requests wait
  for (uint64_t i = 1; i <= 3; ++i) d.sched->submit(inference{i, {scalar(float(i))}, rec});
  BOOST_TEST(d.cpu->seen_count() == 0u);
  BOOST_TEST(rec->completions.empty());
  scheduler::device_ready(d.sched->handle(), 0, d.compiled_gpu, 1, {0}, {});
  rec->wait_for_count(3);
  for (uint64_t i = 1; i <= 3; ++i) BOOST_TEST(rec->values[i] == 10.0f * float(i));
}

BOOST_AUTO_TEST_CASE(startup_hand_over_the_cpu_serves_until_the_accelerator_arrives_then_only_its_failures) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  constexpr uint64_t n = 10000, hand_over_at = 4000;
  // GPU.0 compiles while the CPU serves (AUTO's startup fallback); once it arrives it takes
  // every new request, and the CPU only those GPU.0 failed (runtime fallback). The CPU holds
  // one request across the hand-over: it finishes there.
  two_devices d(sys, 2, 2, false, schedule_policy::device_priority, /*gpu_compiling=*/true);
  d.sched->set_priorities({1});
  d.gpu->fault = [](uint64_t r) -> std::optional<failure> {
    if (r % 97 == 0) return failure{failure_kind::device_failure, "GPU fault"};
    return std::nullopt;
  };
  for (uint64_t i = 1; i < hand_over_at; ++i) d.sched->submit(inference{i, {scalar(float(i % 100))}, rec});
  d.cpu->hold = true;
  d.sched->submit(inference{hand_over_at, {scalar(1)}, rec});
  d.cpu->wait_held(1);
  scheduler::device_ready(d.sched->handle(), 0, d.compiled_gpu, 2, {0}, {1});
  wait_serving(d, {"GPU.0"});
  {
    std::lock_guard l(d.cpu->m);
    d.cpu->hold = false;
  }
  for (uint64_t i = hand_over_at + 1; i <= n; ++i) d.sched->submit(inference{i, {scalar(float(i % 100))}, rec});
  d.cpu->release_one();
  rec->wait_for_count(n);
  std::size_t twice = 0, misplaced = 0;
  for (uint64_t i = 1; i <= n; ++i) {
    twice += rec->completions[i] != 1;
    const float x = i == hand_over_at ? 1.0f : float(i % 100);
    // Before the hand-over the CPU (x100); after it GPU.0 (x10), or the CPU for GPU.0's faults.
    const float want = i <= hand_over_at || i % 97 == 0 ? 100 * x : 10 * x;
    misplaced += rec->values[i] != want;
  }
  BOOST_TEST(twice == 0u);
  BOOST_TEST(misplaced == 0u);
  BOOST_TEST(rec->errors.empty());
  const auto served = d.sched->served();
  BOOST_TEST(served[0] + served[1] == n);
}

BOOST_AUTO_TEST_CASE(ten_thousand_queued_requests_keep_each_devices_count_and_outlive_a_device_failing_all) {
  // Three devices hold their runs until the test lets one go, from a device picked at random:
  // GPU.0 runs 2 at once, the CPU 3, and NPU 1, failing every request with a device error
  // (it leaves the list after 3). All 10,000 requests are submitted before any runs, so most
  // wait in the scheduler's queue. Neither device ever holds more than its count, and every
  // request completes once, on GPU.0 or the CPU.
  constexpr uint64_t n = 10000;
  for (auto policy : {schedule_policy::device_priority, schedule_policy::round_robin}) {
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    auto rec = std::make_shared<recorder>();
    std::vector<test_device*> devs;
    scheduler_spec spec;
    const std::vector<std::pair<std::string, std::size_t>> list{{"GPU.0", 2}, {"CPU", 3}, {"NPU", 1}};
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto d = std::make_unique<test_device>(float(i + 1), true);
      devs.push_back(d.get());
      spec.devices.push_back({list[i].first, std::move(d), list[i].second});
    }
    devs[2]->fault = [](uint64_t) { return std::optional<failure>(failure{failure_kind::device_failure, "NPU broke"}); };
    spec.policy = policy;
    spec.wait_for_faster = false;
    scheduler sched(sys, std::move(spec));
    for (uint64_t i = 1; i <= n; ++i) sched.submit(inference{i, {scalar(1)}, rec});
    std::mt19937 rng(11);
    std::vector<std::size_t> most(devs.size(), 0);
    while (true) {
      {
        std::lock_guard l(rec->m);
        if (rec->completions.size() >= n) break;
      }
      std::vector<std::size_t> holding;
      for (std::size_t d = 0; d < devs.size(); ++d) {
        std::lock_guard l(devs[d]->m);
        most[d] = std::max(most[d], devs[d]->held.size());
        if (!devs[d]->held.empty()) holding.push_back(d);
      }
      // A run that ends hands its slot on from this thread: nothing is left to wait for.
      BOOST_REQUIRE(!holding.empty());
      devs[holding[rng() % holding.size()]]->release_one();
    }
    BOOST_TEST(most[0] == 2u); // full, never over
    BOOST_TEST(most[1] == 3u);
    BOOST_TEST(most[2] <= 1u);
    BOOST_TEST(devs[2]->seen_count() == std::size_t(dispatch_table::max_failures_in_a_row));
    std::size_t twice = 0, errors = 0;
    for (uint64_t i = 1; i <= n; ++i) {
      twice += rec->completions[i] != 1;
      errors += rec->errors.count(i);
    }
    BOOST_TEST(twice == 0u);
    BOOST_TEST(errors == 0u);
    const auto served = sched.served();
    BOOST_TEST(served[0] + served[1] == n);
    BOOST_TEST(served[0] > 0u);
    BOOST_TEST(served[1] > 0u);
  }
}
