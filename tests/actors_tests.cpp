// The actors layer with a fake executable: dispatch to streams, queueing, errors, shutdown.
#define BOOST_TEST_MODULE actors_tests
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <new>
#include <thread>
#include <variant>

#include <troupe/exception.hpp>

#include "actors/hetero_flow.hpp"
#include "actors/node.hpp"
#include "actors/shape_dispatch.hpp"
#include "actors/subgraph_actor.hpp"
#include "graph/wire.hpp"
#include "kernels/cpu/cpu_device.hpp"
#include "tests/support/recording_sink.hpp"

using namespace troupe;
using namespace troupe::actors;
using troupe::tests::recorder;
using troupe::tests::scalar;

namespace {

/// What the test controls in a run, without a clock: the first `held` runs wait in run() until
/// `held` runs have started (a held run's stream cannot start another, so they are then all
/// inside at once: they pass only if that many streams run in parallel) and the test has
/// opened `release`. Counts the runs inside at once and the peak.
struct run_control {
  std::mutex m;
  std::condition_variable cv;
  int held = 0;        ///< how many of the first runs meet and wait
  bool release = true; ///< held runs leave once this is true (and they all met)
  int started = 0, inside = 0, peak = 0;

  void enter() {
    std::unique_lock l(m);
    const int number = started++;
    peak = std::max(peak, ++inside);
    cv.notify_all();
    if (number < held) cv.wait(l, [&] { return started >= held && release; });
  }
  void leave() {
    std::lock_guard l(m);
    --inside;
  }
  /// Blocks until `n` runs have entered (with no clock: a run that never comes hangs the test,
  /// and CTest's TIMEOUT reports it).
  void wait_started(int n) {
    std::unique_lock l(m);
    cv.wait(l, [&] { return started >= n; });
  }
  void open() {
    std::lock_guard l(m);
    release = true;
    cv.notify_all();
  }
};

/// Doubles its input; throws when the first element is negative; waits as `control` says.
struct fake_exe : kernels::executable {
  std::shared_ptr<run_control> control;
  void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override {
    control->enter();
    control->leave();
    if (in.at(0).data<float>()[0] == -2) throw kernels::device_error(failure_kind::device_lost, "fake: device lost");
    if (in.at(0).data<float>()[0] == -3) throw std::bad_alloc();
    if (in.at(0).data<float>()[0] < 0) throw Exception("fake: negative input");
    Tensor t(element_type::f32, in[0].get_shape());
    for (int64_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = 2 * in[0].data<float>()[i];
    out = {t};
  }
  std::vector<kernels::op_profile> profile() const override { return {}; }
  std::unique_ptr<executable> clone() const override { return std::make_unique<fake_exe>(*this); }
};

/// A 1-D f32 tensor of n elements, all v.
Tensor vec(int64_t n, float v) {
  Tensor t(element_type::f32, {n});
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = v;
  return t;
}

std::shared_ptr<const program> fake_program(std::shared_ptr<run_control> control) {
  auto e = std::make_unique<fake_exe>();
  e->control = std::move(control);
  return make_program(std::move(e), false);
}

} // namespace

BOOST_AUTO_TEST_CASE(every_inference_completes_once_across_streams) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto control = std::make_shared<run_control>();
  control->held = 2; // the first two runs only pass once both are inside: two streams at once
  auto rec = std::make_shared<recorder>();
  {
    subgraph_spec spec;
    spec.fixed = fake_program(control);
    spec.streams = 2;
    subgraph sg(sys, std::move(spec));
    for (uint64_t i = 1; i <= 40; ++i) sg.submit(inference{i, {scalar(i % 5 == 0 ? -1.0f : float(i))}, rec});
    rec->wait_for_count(40);
  }
  for (uint64_t i = 1; i <= 40; ++i) {
    BOOST_TEST(rec->completions[i] == 1);
    if (i % 5 == 0) BOOST_TEST(rec->errors[i] == "fake: negative input");
    else BOOST_TEST(rec->values[i] == 2.0f * float(i));
  }
  BOOST_TEST(control->peak == 2); // both streams ran at once; never more
}

BOOST_AUTO_TEST_CASE(dynamic_shapes_compile_once_per_shape_and_report_compile_errors) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  auto compiles = std::make_shared<std::atomic<int>>(0);
  subgraph_spec spec;
  spec.compile = [compiles](const std::vector<Tensor>& inputs) -> std::shared_ptr<const program> {
    ++*compiles;
    if (inputs.at(0).get_shape().at(0) == 7) throw Exception("cannot compile for [7]");
    return fake_program(std::make_shared<run_control>());
  };
  subgraph sg(sys, std::move(spec));
  sg.submit(inference{1, {vec(2, 1)}, rec});
  sg.submit(inference{2, {vec(3, 2)}, rec});
  sg.submit(inference{3, {vec(2, 3)}, rec});
  sg.submit(inference{4, {vec(7, 4)}, rec});
  rec->wait_for_count(4);
  BOOST_TEST(compiles->load() == 3);
  BOOST_TEST(rec->values[3] == 6.0f);
  BOOST_TEST(rec->errors[4] == "cannot compile for [7]");
}

/// A gate a test opens once: compiles wait on it.
struct gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false, reached = false;
  void pass() {
    std::unique_lock l(m);
    reached = true;
    cv.notify_all();
    cv.wait(l, [&] { return open; });
  }
  void wait_reached() {
    std::unique_lock l(m);
    cv.wait(l, [&] { return reached; });
  }
  void release() {
    std::lock_guard l(m);
    open = true;
    cv.notify_all();
  }
};

/// A new shape compiles off the subgraph actor: requests of a shape already compiled run while
/// it does, the requests of the new shape wait for its one compile and then all run, and the
/// compile's time is counted.
BOOST_AUTO_TEST_CASE(a_shape_that_compiles_does_not_hold_up_compiled_ones) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  auto slow = std::make_shared<gate>();
  auto compiles = std::make_shared<std::atomic<int>>(0);
  auto stats = std::make_shared<compile_stats>();
  subgraph_spec spec;
  spec.stats = stats;
  spec.compile = [compiles, slow](const std::vector<Tensor>& inputs) -> std::shared_ptr<const program> {
    ++*compiles;
    if (inputs.at(0).get_shape().at(0) == 5) {
      slow->pass();
      std::this_thread::sleep_for(std::chrono::milliseconds(2)); // some time to count
    }
    return fake_program(std::make_shared<run_control>());
  };
  subgraph sg(sys, std::move(spec));
  sg.submit(inference{1, {vec(2, 1)}, rec});
  rec->wait_for_count(1);
  for (uint64_t i = 2; i <= 4; ++i) sg.submit(inference{i, {vec(5, float(i))}, rec}); // one compile, held
  slow->wait_reached();
  for (uint64_t i = 5; i <= 8; ++i) sg.submit(inference{i, {vec(2, float(i))}, rec});
  rec->wait_for_count(5); // 1 and 5..8 ran while [5] compiles (a blocking compile hangs here)
  {
    std::lock_guard l(rec->m);
    for (uint64_t i = 2; i <= 4; ++i) BOOST_TEST(rec->completions.count(i) == 0u);
  }
  slow->release();
  rec->wait_for_count(8);
  for (uint64_t i = 1; i <= 8; ++i) {
    BOOST_TEST(rec->completions[i] == 1);
    BOOST_TEST(rec->values[i] == 2.0f * float(i));
  }
  BOOST_TEST(compiles->load() == 2);
  BOOST_TEST(stats->compiles.load() == 2u);
  BOOST_TEST(stats->compile_us.load() >= 2000u);
}

/// Requests waiting for a compile when the subgraph goes away fail as cancelled, once each.
BOOST_AUTO_TEST_CASE(requests_waiting_for_a_compile_fail_when_the_subgraph_goes_away) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  auto slow = std::make_shared<gate>();
  {
    subgraph_spec spec;
    spec.compile = [slow](const std::vector<Tensor>&) -> std::shared_ptr<const program> {
      slow->pass();
      return fake_program(std::make_shared<run_control>());
    };
    subgraph sg(sys, std::move(spec));
    for (uint64_t i = 1; i <= 3; ++i) sg.submit(inference{i, {vec(3, float(i))}, rec});
    slow->wait_reached();
  }
  rec->wait_for_count(3);
  slow->release(); // the compile ends after its requests did; what it sends goes nowhere
  for (uint64_t i = 1; i <= 3; ++i) {
    BOOST_TEST(rec->completions[i] == 1);
    BOOST_TEST(rec->errors[i] == "the compiled model was destroyed");
    BOOST_TEST((rec->kinds[i] == failure_kind::cancelled));
  }
}

/// A bounded cache keeps the most recently used programs: a shape that was evicted compiles
/// again, the runs stay right, and an evicted program is freed once the workers drop it.
BOOST_AUTO_TEST_CASE(a_bounded_program_cache_evicts_the_least_recently_used) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  auto compiled = std::make_shared<std::vector<std::weak_ptr<const program>>>();
  auto stats = std::make_shared<compile_stats>();
  subgraph_spec spec;
  spec.cache_capacity = 2;
  spec.stats = stats;
  spec.compile = [compiled](const std::vector<Tensor>&) -> std::shared_ptr<const program> {
    auto p = fake_program(std::make_shared<run_control>());
    compiled->push_back(p); // the subgraph actor compiles one at a time
    return p;
  };
  subgraph sg(sys, std::move(spec));
  // Shapes 2, 3, 2 (kept: used again), 4 (evicts 3), 3 (compiles again, evicts 2), 4.
  const int64_t sizes[] = {2, 3, 2, 4, 3, 4};
  for (uint64_t i = 1; i <= 6; ++i) {
    sg.submit(inference{i, {vec(sizes[i - 1], float(i))}, rec});
    rec->wait_for_count(i); // one at a time: the order of use is the order of submission
  }
  BOOST_TEST(stats->compiles.load() == 4u);
  BOOST_TEST(compiled->size() == 4u);
  for (uint64_t i = 1; i <= 6; ++i) BOOST_TEST(rec->values[i] == 2.0f * float(i));
  // The program first compiled for 3 and the one for 2 were evicted: the workers let them go
  // (after the completion that the recorder saw, hence a wait, bounded by the test's TIMEOUT).
  while (!(*compiled)[1].expired() || !(*compiled)[0].expired()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  BOOST_TEST(!(*compiled)[2].expired()); // 4 and the second 3 stay
  BOOST_TEST(!(*compiled)[3].expired());
}

/// With value keys, the keyed input's contents pick the program as well as the shapes.
BOOST_AUTO_TEST_CASE(value_keys_compile_once_per_distinct_value) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  auto compiles = std::make_shared<std::atomic<int>>(0);
  subgraph_spec spec;
  spec.value_keys = {1};
  spec.compile = [compiles](const std::vector<Tensor>& inputs) -> std::shared_ptr<const program> {
    ++*compiles;
    if (inputs.at(1).data<float>()[0] == 7) throw Exception("cannot compile for the value 7");
    return fake_program(std::make_shared<run_control>());
  };
  subgraph sg(sys, std::move(spec));
  sg.submit(inference{1, {vec(2, 1), vec(1, 5)}, rec});
  sg.submit(inference{2, {vec(2, 2), vec(1, 6)}, rec}); // same shapes, another value
  sg.submit(inference{3, {vec(2, 3), vec(1, 5)}, rec}); // the first program again
  sg.submit(inference{4, {vec(2, 4), vec(1, 7)}, rec});
  rec->wait_for_count(4);
  BOOST_TEST(compiles->load() == 3);
  BOOST_TEST(rec->values[3] == 6.0f);
  BOOST_TEST(rec->errors[4] == "cannot compile for the value 7");
}

BOOST_AUTO_TEST_CASE(shape_dispatch_builds_one_runner_per_shape_and_keeps_error_kinds) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  auto builds = std::make_shared<std::atomic<int>>(0);
  {
    shape_dispatch d(sys, [&sys, builds](const std::vector<Shape>& shapes) -> std::unique_ptr<runner> {
      ++*builds;
      if (shapes.at(0).at(0) == 7) throw Exception("no split for [7]");
      if (shapes.at(0).at(0) == 8) throw kernels::device_error(failure_kind::device_lost, "lost while compiling");
      subgraph_spec spec;
      spec.fixed = fake_program(std::make_shared<run_control>());
      return std::make_unique<subgraph>(sys, std::move(spec));
    });
    d.submit(inference{1, {vec(2, 1)}, rec});
    d.submit(inference{2, {vec(3, 2)}, rec});
    d.submit(inference{3, {vec(2, 3)}, rec}); // queued behind 1's build or sent straight: built once
    d.submit(inference{4, {vec(7, 4)}, rec});
    d.submit(inference{5, {vec(8, 5)}, rec});
    rec->wait_for_count(5);
    d.submit(inference{6, {vec(3, 6)}, rec}); // built: goes straight to its runner
    rec->wait_for_count(6);
  }
  BOOST_TEST(builds->load() == 4);
  for (uint64_t i = 1; i <= 6; ++i) BOOST_TEST(rec->completions[i] == 1);
  BOOST_TEST(rec->values[3] == 6.0f);
  BOOST_TEST(rec->values[6] == 12.0f);
  BOOST_TEST(rec->errors[4] == "no split for [7]");
  BOOST_TEST((rec->kinds[4] == failure_kind::bad_input));
  BOOST_TEST((rec->kinds[5] == failure_kind::device_lost));
}

/// Past its capacity shape_dispatch retires the least recently used runner: the requests
/// queued on it still complete (not cancelled), and a later request of its shapes builds anew.
BOOST_AUTO_TEST_CASE(shape_dispatch_retires_a_runner_only_after_its_requests) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  auto builds = std::make_shared<std::atomic<int>>(0);
  auto control = std::make_shared<run_control>();
  control->held = 1; // the first run on shape [2] waits for open()
  control->release = false;
  auto stats = std::make_shared<compile_stats>();
  {
    shape_dispatch d(
        sys,
        [&sys, builds, control](const std::vector<Shape>& shapes) -> std::unique_ptr<runner> {
          const bool first = ++*builds == 1;
          subgraph_spec spec;
          spec.fixed = fake_program(first && shapes.at(0).at(0) == 2 ? control : std::make_shared<run_control>());
          return std::make_unique<subgraph>(sys, std::move(spec)); // one stream: a second run queues
        },
        1, stats);
    d.submit(inference{1, {vec(2, 1)}, rec});
    control->wait_started(1);                 // request 1 runs (held) on [2]'s runner...
    d.submit(inference{2, {vec(2, 2)}, rec}); // ...and 2 queues behind it
    d.submit(inference{3, {vec(3, 3)}, rec}); // [3] is built: [2]'s runner retires
    rec->wait_for_count(1);
    BOOST_TEST(rec->completions.count(3) == 1u);
    control->open();
    rec->wait_for_count(3);
    d.submit(inference{4, {vec(2, 4)}, rec}); // [2] again: built anew
    rec->wait_for_count(4);
  }
  BOOST_TEST(builds->load() == 3);
  BOOST_TEST(stats->compiles.load() == 3u);
  for (uint64_t i = 1; i <= 4; ++i) {
    BOOST_TEST(rec->completions[i] == 1);
    BOOST_TEST(rec->values[i] == 2.0f * float(i), "request " << i << ": " << rec->errors[i]);
  }
}

BOOST_AUTO_TEST_CASE(errors_carry_their_kind) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  {
    subgraph_spec spec;
    spec.fixed = fake_program(std::make_shared<run_control>());
    subgraph sg(sys, std::move(spec));
    sg.submit(inference{1, {scalar(-1)}, rec}); // troupe::Exception from a kernel: the input's fault
    sg.submit(inference{2, {scalar(-2)}, rec}); // kernels::device_error: the device says which
    sg.submit(inference{3, {scalar(-3)}, rec}); // out of memory: the device's
    sg.submit(inference{4, {scalar(4)}, rec});  // and the stream still works
    rec->wait_for_count(4);
  }
  BOOST_TEST((rec->kinds[1] == failure_kind::bad_input));
  BOOST_TEST((rec->kinds[2] == failure_kind::device_lost));
  BOOST_TEST(rec->errors[2] == "fake: device lost");
  BOOST_TEST((rec->kinds[3] == failure_kind::device_failure));
  BOOST_TEST(rec->errors[3] == "out of memory");
  BOOST_TEST(rec->values[4] == 8.0f);
}

BOOST_AUTO_TEST_CASE(queued_inferences_fail_when_the_subgraph_goes_away) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto control = std::make_shared<run_control>();
  control->held = 1;
  control->release = false; // the first run stays on the one stream until the subgraph is gone
  auto rec = std::make_shared<recorder>();
  {
    subgraph_spec spec;
    spec.fixed = fake_program(control);
    subgraph sg(sys, std::move(spec));
    for (uint64_t i = 1; i <= 5; ++i) sg.submit(inference{i, {scalar(float(i))}, rec});
    control->wait_started(1);
  }
  control->open();
  rec->wait_for_count(5); // the running one completes, the queued ones fail: none is lost
  BOOST_TEST(rec->completions[1] == 1);
  BOOST_TEST(rec->errors.count(1) == 0u);
  BOOST_TEST(rec->values[1] == 2.0f);
  for (uint64_t i = 2; i <= 5; ++i) {
    BOOST_TEST(rec->completions[i] == 1);
    BOOST_TEST(rec->errors[i] == "the compiled model was destroyed");
    BOOST_TEST((rec->kinds[i] == failure_kind::cancelled));
  }
  BOOST_TEST(control->started == 1); // the queued ones never ran
}

// ---- HETERO's flow ------------------------------------------------------------------------

namespace {

/// Two stages in a chain, each the doubling fake on one stream, controlled by `c0` and `c1`.
std::unique_ptr<hetero_flow> two_stage_flow(caf::actor_system& sys, std::shared_ptr<run_control> c0,
                                            std::shared_ptr<run_control> c1) {
  flow_spec spec;
  spec.outputs = 1;
  spec.constant_outputs.resize(1);
  spec.input_routes = {{{0, 0}}};
  int s = 0;
  for (auto* c : {&c0, &c1}) {
    stage_spec st;
    subgraph_spec sub;
    sub.fixed = fake_program(*c);
    st.run = std::make_unique<subgraph>(sys, std::move(sub));
    st.label = "subgraph " + std::to_string(s) + " (FAKE)";
    st.inputs = 1;
    st.output_routes = {{s == 0 ? tensor_route{1, 0} : tensor_route{-1, 0}}};
    spec.stages.push_back(std::move(st));
    ++s;
  }
  return std::make_unique<hetero_flow>(sys, std::move(spec));
}

/// A recorder whose requests can be cancelled (wanted() false) while they run.
struct cancellable : recorder {
  std::atomic<bool> cancelled{false};
  bool wanted(uint64_t) const noexcept override { return !cancelled; }
};

} // namespace

BOOST_AUTO_TEST_CASE(hetero_flow_chains_stages_and_names_the_failing_one) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto rec = std::make_shared<recorder>();
  {
    auto flow = two_stage_flow(sys, std::make_shared<run_control>(), std::make_shared<run_control>());
    flow->submit(inference{1, {scalar(3)}, rec});  // 3 * 2 * 2
    flow->submit(inference{2, {scalar(-2)}, rec}); // stage 0 loses its device
    rec->wait_for_count(2);
  }
  BOOST_TEST(rec->completions[1] == 1);
  BOOST_TEST(rec->values[1] == 12.0f);
  BOOST_TEST(rec->completions[2] == 1);
  BOOST_TEST(rec->errors[2] == "subgraph 0 (FAKE): fake: device lost");
  BOOST_TEST((rec->kinds[2] == failure_kind::device_lost));
}

BOOST_AUTO_TEST_CASE(a_cancelled_request_never_reaches_its_later_stages) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto c0 = std::make_shared<run_control>(), c1 = std::make_shared<run_control>();
  c0->held = 1;
  c0->release = false; // stage 0 holds the request until the test has cancelled it
  auto rec = std::make_shared<cancellable>();
  {
    auto flow = two_stage_flow(sys, c0, c1);
    flow->submit(inference{1, {scalar(3)}, rec});
    c0->wait_started(1);
    rec->cancelled = true;
    c0->open();
    // A second request, submitted after: once it has gone through both stages, the cancelled
    // one's output has long been handed on (one stream per stage, in order) and dropped.
    auto next = std::make_shared<recorder>();
    flow->submit(inference{2, {scalar(5)}, next});
    next->wait_for_count(1);
    BOOST_TEST(next->values[2] == 20.0f);
  }
  BOOST_TEST(c0->started == 2);
  BOOST_TEST(c1->started == 1); // only the second request's
  BOOST_TEST(rec->completions.empty()); // the request layer completes a cancelled request itself
}

// ---- the device pool ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(subgraphs_share_one_pool_and_keep_their_own_caps) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto pool = std::make_shared<device_pool>(sys, "FAKE");
  auto ca = std::make_shared<run_control>(), cb = std::make_shared<run_control>();
  ca->held = 1;
  ca->release = false; // A's first run holds one worker until the test opens it
  auto rec = std::make_shared<recorder>();
  {
    subgraph_spec a_spec, b_spec;
    a_spec.fixed = fake_program(ca);
    a_spec.streams = 1;
    a_spec.pool = pool;
    b_spec.fixed = fake_program(cb);
    b_spec.streams = 2;
    b_spec.pool = pool;
    subgraph a(sys, std::move(a_spec)), b(sys, std::move(b_spec));
    BOOST_TEST(pool->workers() == 2u); // the largest stream count, not the sum
    a.submit(inference{1, {scalar(1)}, rec});
    ca->wait_started(1);
    // A's second request must wait for A's first (A runs one at a time), although the pool's
    // other worker is idle: B's request, submitted after it, takes that worker.
    a.submit(inference{2, {scalar(2)}, rec});
    b.submit(inference{3, {scalar(3)}, rec});
    rec->wait_for_count(1);
    BOOST_TEST(rec->completions.count(3) == 1u);
    BOOST_TEST(ca->started == 1); // without A's cap, request 2 would have run on the idle worker
    ca->open();
    rec->wait_for_count(3);
  }
  BOOST_TEST(rec->values[2] == 4.0f);
  BOOST_TEST(ca->peak == 1);
}

BOOST_AUTO_TEST_CASE(queued_work_runs_oldest_request_first) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto control = std::make_shared<run_control>();
  control->held = 1;
  control->release = false;
  auto rec = std::make_shared<recorder>();
  {
    subgraph_spec spec;
    spec.fixed = fake_program(control);
    subgraph sg(sys, std::move(spec)); // one stream
    sg.submit(inference{1, {scalar(1)}, rec, 5});
    control->wait_started(1);
    // Queued behind it, submitted youngest first: a later stage of an older request (HETERO)
    // must not wait behind younger requests.
    sg.submit(inference{4, {scalar(4)}, rec, 40});
    sg.submit(inference{2, {scalar(2)}, rec, 20});
    sg.submit(inference{3, {scalar(3)}, rec, 30});
    control->open();
    rec->wait_for_count(4);
  }
  BOOST_TEST(rec->order == (std::vector<uint64_t>{1, 2, 3, 4}));
}


// ---- the node a worker publishes, fed a client's messages in-process --------------------------

namespace {

namespace np = troupe::actors::node_protocol;

/// x[2,4] + b[4] -> relu -> z, with `y` (the Add's output) declared as `y_shape` in the bytes.
std::string add_relu_bytes(const Shape& y_shape, const Shape& x_shape = {2, 4}) {
  graph::Graph g;
  const auto x = g.add_input("x", element_type::f32, PartialShape(x_shape));
  Tensor b(element_type::f32, Shape{4});
  for (std::size_t i = 0; i < 4; ++i) b.data<float>()[i] = static_cast<float>(i);
  const auto bid = g.add_constant("b", b);
  graph::Value y;
  y.name = "y";
  y.type = element_type::f32;
  y.shape = PartialShape(y_shape);
  const auto yid = g.add_value(y);
  g.ops.push_back(graph::Op{"Add", "", "add", {x, bid}, {yid}, {}, {}});
  graph::Value z = y;
  z.name = "z";
  z.shape = PartialShape(Shape{2, 4});
  const auto zid = g.add_value(z);
  g.ops.push_back(graph::Op{"Relu", "", "relu", {yid}, {zid}, {}, {}});
  g.outputs = {zid};
  return graph::encode_graph(g);
}

/// The error's text, or "" when the reply came (a message for BOOST_TEST that reads either).
template <class T>
std::string why(const std::variant<T, std::string>& r) {
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
}

struct node_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::actor node;
  std::shared_ptr<std::vector<std::string>> log = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::mutex> log_mutex = std::make_shared<std::mutex>();

  node_fixture() {
    np::add_node_message_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    actors::node_spec spec;
    spec.devices["CPU"] = std::shared_ptr<kernels::device>(kernels::cpu::make_cpu_device());
    spec.token = "t";
    spec.log = [log = log, m = log_mutex](const std::string& line) {
      std::lock_guard lock(*m);
      log->push_back(line);
    };
    node = actors::spawn_node(*sys, std::move(spec), std::make_shared<actors::node_load>());
  }
  ~node_fixture() { caf::anon_send_exit(node, caf::exit_reason::user_shutdown); }

  /// The reply to one message, or the error's text ("error: ...").
  template <class T, class... Ts>
  std::variant<T, std::string> ask(caf::scoped_actor& self, const caf::actor& to, Ts&&... xs) {
    std::variant<T, std::string> r = std::string("no reply");
    self->request(to, std::chrono::seconds(30), std::forward<Ts>(xs)...)
        .receive([&](T& x) { r = std::move(x); }, [&](caf::error& e) { r = "error: " + caf::to_string(e); });
    return r;
  }
  caf::actor hello(caf::scoped_actor& self) {
    auto w = ask<np::welcome>(self, node, np::hello_atom::value, np::hello{np::version, "t", caf::actor_cast<caf::actor>(self)});
    BOOST_TEST_REQUIRE(std::holds_alternative<np::welcome>(w), why(w));
    return std::get<np::welcome>(w).session;
  }
  std::variant<np::compiled, std::string> compile(caf::scoped_actor& self, const caf::actor& session, np::compile_request r) {
    r.hash = actors::model_hash(r.graph, r);
    return ask<np::compiled>(self, session, np::compile_atom::value, std::move(r));
  }
};

np::compile_request cpu_request(std::string graph) {
  np::compile_request r;
  r.device = "CPU";
  r.graph = std::move(graph);
  r.precision = "f32";
  return r;
}

} // namespace

/// A device whose runs are fake_exe's, held as `control` says: requests stay in flight.
struct held_device : kernels::device {
  std::shared_ptr<run_control> control;
  std::string name() const override { return "HELD"; }
  std::map<std::string, std::string> info() const override { return {}; }
  kernels::support query(const graph::Graph&, const graph::Op&) const override { return {true, ""}; }
  std::unique_ptr<kernels::executable> compile(const graph::Graph&, const kernels::compile_config&) const override {
    auto e = std::make_unique<fake_exe>();
    e->control = control;
    return e;
  }
};

BOOST_AUTO_TEST_SUITE(node)

BOOST_AUTO_TEST_CASE(requests_in_flight_are_bounded_per_client_and_in_bytes) {
  // One client's flood, or everyone's bytes together, is refused as a device failure (MULTI
  // takes it elsewhere) before it is queued; what was refused or answered is no longer held.
  caf::actor_system_config cfg;
  np::add_node_message_types(cfg);
  caf::actor_system sys{cfg};
  auto control = std::make_shared<run_control>();
  control->held = 3;
  control->release = false;
  auto dev = std::make_shared<held_device>();
  dev->control = control;
  actors::node_spec spec;
  spec.devices["HELD"] = dev;
  spec.max_in_flight_per_client = 2;
  spec.max_held_bytes = 3 * graph::encode_tensor(vec(4, 1)).size(); // three requests' inputs
  auto load = std::make_shared<actors::node_load>();
  auto node = actors::spawn_node(sys, spec, load);
  caf::scoped_actor a{sys}, b{sys};
  auto session = [&](caf::scoped_actor& self) {
    caf::actor s;
    self->request(node, std::chrono::seconds(30), np::hello_atom::value, np::hello{np::version, "", caf::actor_cast<caf::actor>(self)})
        .receive([&](np::welcome& w) { s = w.session; }, [&](caf::error& e) { BOOST_FAIL(caf::to_string(e)); });
    return s;
  };
  const auto sa = session(a), sb = session(b);
  graph::Graph g;
  g.outputs.push_back(g.add_input("x", element_type::f32, PartialShape(Shape{4})));
  np::compile_request c;
  c.device = "HELD";
  c.graph = graph::encode_graph(g);
  c.streams = 4;
  c.hash = actors::model_hash(c.graph, c);
  uint64_t model = 0;
  a->request(sa, std::chrono::seconds(30), np::compile_atom::value, c)
      .receive([&](np::compiled& m) { model = m.model; }, [&](caf::error& e) { BOOST_FAIL(caf::to_string(e)); });
  const np::infer_request req{model, {graph::encode_tensor(vec(4, 1))}};
  auto refusal = [&](caf::scoped_actor& self, const caf::actor& s) {
    std::string r = "answered";
    self->request(s, std::chrono::seconds(30), np::infer_atom::value, req)
        .receive([&](np::infer_reply&) {}, [&](caf::error& e) { r = caf::to_string(e); });
    return r;
  };
  // Client a: two held in flight, the third refused.
  a->send(sa, np::infer_atom::value, req);
  a->send(sa, np::infer_atom::value, req);
  control->wait_started(2);
  const auto third = refusal(a, sa);
  BOOST_TEST(third.find("has 2 requests in flight; this node runs at most 2 per client") != std::string::npos, third);
  // Client b: one more fits the bytes (all three held now), the next would pass them.
  b->send(sb, np::infer_atom::value, req);
  control->wait_started(3);
  BOOST_TEST(load->held_bytes.load() == 3 * req.inputs[0].size());
  const auto bytes = refusal(b, sb);
  BOOST_TEST(bytes.find("would pass its bound of " + std::to_string(spec.max_held_bytes)) != std::string::npos, bytes);
  control->open();
  for (auto* self : {&a, &a, &b})
    (*self)->receive([](np::infer_reply&) {}, caf::after(std::chrono::seconds(30)) >> [] { BOOST_FAIL("no reply"); });
  for (int i = 0; i < 100 && load->held_bytes.load() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  BOOST_TEST(load->held_bytes.load() == 0u);
  BOOST_TEST(refusal(a, sa) == "answered");
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(a_session_nobody_holds_ends_alone, node_fixture) {
  // A client that says hello twice and keeps the second session: the first ends (nobody holds
  // it) and must not take the node and the other sessions with it (found by node_protocol_fuzz:
  // the link made its end the node's).
  caf::scoped_actor self{*sys};
  auto first = hello(self);
  auto second = hello(self);
  self->monitor(first); // a monitor does not keep it alive
  first = caf::actor{};
  self->receive([](caf::down_msg&) {}); // the first has ended: the node got its exit
  auto c = compile(self, second, cpu_request(add_relu_bytes({2, 4})));
  BOOST_TEST(std::holds_alternative<np::compiled>(c), why(c));
  auto third = hello(self);
  BOOST_TEST(static_cast<bool>(third));
}

BOOST_FIXTURE_TEST_CASE(past_max_models_the_least_recently_used_idle_one_is_forgotten, node_fixture) {
  // A client sending model after model must not fill the worker's memory: past max_models the
  // least recently used idle model goes, and a request for it gets need_graph (troupe's client
  // then sends the bytes again: remote_device.cpp).
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  actors::node_spec spec;
  spec.devices["CPU"] = std::shared_ptr<kernels::device>(kernels::cpu::make_cpu_device());
  spec.token = "t";
  spec.max_models = 2;
  spec.log = [log = log, m = log_mutex](const std::string& line) {
    std::lock_guard lock(*m);
    log->push_back(line);
  };
  node = actors::spawn_node(*sys, std::move(spec), std::make_shared<actors::node_load>());
  caf::scoped_actor self{*sys};
  auto session = hello(self);
  std::vector<uint64_t> ids;
  for (int64_t rows : {2, 3, 4}) {
    auto c = compile(self, session, cpu_request(add_relu_bytes({rows, 4}, {rows, 4})));
    BOOST_TEST_REQUIRE(std::holds_alternative<np::compiled>(c), why(c));
    ids.push_back(std::get<np::compiled>(c).model);
    if (rows == 3) { // the first is used again: the second is now the least recent
      Tensor x(element_type::f32, Shape{2, 4});
      auto r = ask<np::infer_reply>(self, session, np::infer_atom::value, np::infer_request{ids[0], {graph::encode_tensor(x)}});
      BOOST_TEST(std::holds_alternative<np::infer_reply>(r), why(r));
    }
  }
  Tensor x3(element_type::f32, Shape{3, 4});
  auto r = ask<np::infer_reply>(self, session, np::infer_atom::value, np::infer_request{ids[1], {graph::encode_tensor(x3)}});
  BOOST_TEST(why(r).find("no model " + std::to_string(ids[1]) + " on this node") != std::string::npos, why(r));
  Tensor x2(element_type::f32, Shape{2, 4});
  r = ask<np::infer_reply>(self, session, np::infer_atom::value, np::infer_request{ids[0], {graph::encode_tensor(x2)}});
  BOOST_TEST(std::holds_alternative<np::infer_reply>(r), why(r));
  std::lock_guard lock(*log_mutex);
  BOOST_TEST((std::find_if(log->begin(), log->end(), [&](const std::string& l) {
                return l.find("forgot model " + std::to_string(ids[1]) + " on CPU") != std::string::npos;
              }) != log->end()));
}

BOOST_FIXTURE_TEST_CASE(every_wrong_token_is_answered_even_many_at_once, node_fixture) {
  // Refusals past the third in a row are held back (at most 4 s each): a client that keeps
  // many hellos in flight gets every one of them answered, none lost.
  caf::scoped_actor self{*sys};
  constexpr int n = 40;
  for (int i = 0; i < n; ++i)
    self->send(node, np::hello_atom::value, np::hello{np::version, "guess", caf::actor_cast<caf::actor>(self)});
  int refused = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (refused < n && std::chrono::steady_clock::now() < until)
    self->receive([&](caf::error& e) { refused += caf::to_string(e).find("wrong token") != std::string::npos; },
                  [&](np::welcome&) { BOOST_FAIL("a wrong token was welcomed"); },
                  caf::after(std::chrono::seconds(1)) >> [] {});
  BOOST_TEST(refused == n);
  // And the right token still gets in at once.
  const auto t0 = std::chrono::steady_clock::now();
  hello(self);
  BOOST_TEST((std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1)));
}

BOOST_FIXTURE_TEST_CASE(a_message_of_no_protocol_step_is_refused_and_logged, node_fixture) {
  // Before hello and after: an error to the client and a log line (CAF's default printed each
  // on stderr, a flood a client could make), and the node serves on. The line names the
  // message's types, never its values: a client may send a value as large as a frame.
  caf::scoped_actor self{*sys};
  const std::string payload(1 << 20, 'x');
  for (int round = 0; round < 2; ++round) {
    const caf::actor to = round == 0 ? node : hello(self);
    auto r = ask<np::welcome>(self, to, payload, 42);
    BOOST_TEST(why(r).find("unexpected_message") != std::string::npos, why(r));
  }
  std::lock_guard lock(*log_mutex);
  BOOST_TEST_REQUIRE(log->size() >= 2u);
  std::size_t refused = 0;
  for (const auto& line : *log) {
    if (line.find("an unexpected message from") == std::string::npos) continue;
    BOOST_TEST(line.find("(@str, @i32)") != std::string::npos, line);
    BOOST_TEST(line.find("xxxx") == std::string::npos);
    BOOST_TEST(line.size() < 400u);
    ++refused;
  }
  BOOST_TEST(refused == 2u);
}

BOOST_FIXTURE_TEST_CASE(a_clients_numbers_are_bounded_before_anything_is_spawned, node_fixture) {
  caf::scoped_actor self{*sys};
  auto session = hello(self);
  auto refused = [&](np::compile_request r, std::vector<std::string> words) {
    auto c = compile(self, session, std::move(r));
    BOOST_TEST_REQUIRE(std::holds_alternative<std::string>(c));
    for (const auto& w : words) BOOST_TEST(why(c).find(w) != std::string::npos, why(c));
  };
  auto r = cpu_request(add_relu_bytes({2, 4}));
  r.streams = 1 << 25; // each stream is a thread: 33 million of them was the fuzzer's first find
  refused(r, {"33554432 streams", "1 to 64"});
  r = cpu_request(add_relu_bytes({2, 4}));
  r.num_threads = 1 << 20;
  refused(r, {"1048576 threads", "0 (its default) to 256"});
  r = cpu_request(add_relu_bytes({2, 4}));
  r.precision = "f64";
  refused(r, {"unknown precision 'f64'"});
  // An input of 8 GiB, declared: refused by its size before the device plans a byte of it.
  refused(cpu_request(add_relu_bytes({1 << 29, 4}, {1 << 29, 4})), {"value 'x'", "[536870912,4]", "bytes this node holds"});
}

BOOST_FIXTURE_TEST_CASE(shapes_in_a_models_bytes_are_derived_again, node_fixture) {
  // The Add's output declared [2,65540] where it computes [2,4]: the CPU's planner recursed
  // without end on it (node_protocol_fuzz). The node infers shapes itself: the model runs right.
  caf::scoped_actor self{*sys};
  auto session = hello(self);
  auto c = compile(self, session, cpu_request(add_relu_bytes({2, 65540})));
  BOOST_TEST_REQUIRE(std::holds_alternative<np::compiled>(c), why(c));
  Tensor x(element_type::f32, Shape{2, 4});
  for (std::size_t i = 0; i < 8; ++i) x.data<float>()[i] = static_cast<float>(i) - 5.0f;
  auto out = ask<np::infer_reply>(self, session, np::infer_atom::value,
                                  np::infer_request{std::get<np::compiled>(c).model, {graph::encode_tensor(x)}});
  BOOST_TEST_REQUIRE(std::holds_alternative<np::infer_reply>(out), why(out));
  const Tensor z = graph::decode_tensor(std::get<np::infer_reply>(out).outputs.at(0), "z");
  BOOST_TEST_REQUIRE(z.get_shape() == (Shape{2, 4}));
  for (std::size_t i = 0; i < 8; ++i) BOOST_TEST(z.data<float>()[i] == std::max(0.0f, static_cast<float>(i) - 5.0f + static_cast<float>(i % 4)));
}

BOOST_AUTO_TEST_SUITE_END()
