/// MULTI and AUTO on real devices: device strings and counts, AUTO's choice, live
/// reprioritization, outputs equal to a single device's (the scheduler's own rules are tested
/// on test devices in scheduler_tests).
#define BOOST_TEST_MODULE multi_tests
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "benchmarks/tiny_onnx.hpp"
#include "tests/support/add_relu_model.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/ppocr_cases.hpp"
#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_data.hpp"
#include "tests/support/test_tensors.hpp"
#include "tests/support/run_command.hpp"

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using namespace troupe;
using tests::expect_error;

namespace {

std::string add_relu_model() { return tests::add_relu_model("multi"); }

/// Runs `n` requests at once; checks each result; returns how many each device served.
std::map<std::string, uint64_t> run_many(CompiledModel& cm, int n) {
  auto reqs = tests::start_requests(cm, n);
  for (int r = 0; r < n; ++r) {
    reqs[r].wait();
    auto y = reqs[r].get_tensor("y");
    for (int i = 0; i < 16; ++i) {
      const float expect = tests::expected(r, i);
      BOOST_TEST(y.data<float>()[i] == expect, "request " << r << " element " << i);
    }
  }
  return tests::served_counts(cm);
}

} // namespace

BOOST_AUTO_TEST_CASE(multi_spreads_requests_and_counts_them) {
  Core core;
  auto model = core.read_model(add_relu_model());
  auto cm = core.compile_model(model, "MULTI:CPU(2),REFERENCE(3)");
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "CPU,REFERENCE");
  BOOST_TEST(cm.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>() == 5);
  BOOST_TEST(cm.get_property("PERFORMANCE_HINT").as_string() == "CUMULATIVE_THROUGHPUT");
  BOOST_TEST(cm.get_property("SCHEDULE_POLICY").as_string() == "DEVICE_PRIORITY");
  auto served = run_many(cm, 40);
  BOOST_TEST(served["CPU"] + served["REFERENCE"] == 40u);
  BOOST_TEST(served["CPU"] > 0u);
}

BOOST_AUTO_TEST_CASE(a_device_failing_from_inside_loses_no_request_on_multi) {
  // FAIL_EVERY, the debugging switch the soak uses: every Nth run of a model compiled with it
  // fails as a device failure. Alone the failure reaches the caller, named; on MULTI the request
  // is taken to another device and completes right.
  Core core;
  core.set_property("CPU", {{"FAIL_EVERY", 3}});
  BOOST_TEST(core.get_property("CPU", "FAIL_EVERY").as<int>() == 3);
  auto model = core.read_model(add_relu_model());
  auto cpu = core.compile_model(model, "CPU");
  for (int r = 1; r <= 6; ++r) {
    auto rq = cpu.create_infer_request();
    rq.set_tensor("a", tests::filled(static_cast<float>(r)));
    rq.set_tensor("b", tests::filled(1));
    if (r % 3 == 0) {
      expect_error([&] { rq.infer(); }, {"CPU", "a failure injected by FAIL_EVERY 3", "run " + std::to_string(r)});
    } else {
      rq.infer();
      BOOST_TEST(rq.get_tensor("y").data<float>()[0] == tests::expected(r, 0));
    }
  }
  // Until the CPU has run three times: MULTI sends each request where it expects it to finish
  // first, and the CPU's first run (oneDNN's warm-up) can make it look slower than REFERENCE
  // for this tiny model; an idle member is probed again after 2 s (docs/multi.md), hence the
  // pause. Every request completes right either way.
  auto cm = core.compile_model(model, "MULTI:CPU,REFERENCE");
  std::map<std::string, uint64_t> served;
  uint64_t moved = 0;
  int sent = 0;
  for (int round = 0; round < 10 && served["CPU"] + moved < 3; ++round) {
    if (round > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    for (int k = 0; k < 10; ++k, ++sent) {
      auto rq = cm.create_infer_request();
      rq.set_tensor("a", tests::filled(static_cast<float>(sent)));
      rq.set_tensor("b", tests::filled(1));
      rq.infer();
      for (int i = 0; i < 16; ++i) BOOST_TEST(rq.get_tensor("y").data<float>()[i] == tests::expected(sent, i), "request " << sent);
    }
    served = tests::served_counts(cm);
    moved = static_cast<uint64_t>(std::stoi(cm.get_property("REQUESTS_REDISPATCHED").as_string()));
  }
  BOOST_TEST(served["CPU"] + served["REFERENCE"] == static_cast<uint64_t>(sent));
  BOOST_TEST_MESSAGE("served " << cm.get_property("REQUESTS_SERVED").as_string() << ", moved " << moved);
  // Only the CPU fails: its runs are what it served and what it failed, every third of them.
  BOOST_TEST(moved >= 1u, "CPU served " << served["CPU"]);
  BOOST_TEST(moved == (served["CPU"] + moved) / 3, "CPU served " << served["CPU"] << ", moved " << moved);
  // Bad values are named; 0 turns it off.
  expect_error([&] { core.set_property("CPU", {{"FAIL_EVERY", -1}}); }, {"FAIL_EVERY", "-1", "CPU"});
  expect_error([&] { core.set_property("CPU", {{"FAIL_EVERY", "often"}}); }, {"FAIL_EVERY", "often"});
  core.set_property("CPU", {{"FAIL_EVERY", 0}});
  auto fine = core.compile_model(model, "CPU");
  for (int r = 0; r < 4; ++r) {
    auto rq = fine.create_infer_request();
    rq.set_tensor("a", tests::filled(static_cast<float>(r)));
    rq.set_tensor("b", tests::filled(1));
    rq.infer();
  }
}

BOOST_AUTO_TEST_CASE(fail_every_comes_from_the_environment_when_not_set) {
  // A worker's devices take it this way (scripts/soak.sh); troupe bench stands in for it here.
  const auto troupe = fs::read_symlink("/proc/self/exe").parent_path() / "troupe";
  const std::string bench = troupe.string() + " bench -m " + add_relu_model() + " -shape a[16],b[16] -niter 4 -api sync 2>&1";
  auto r = tests::run_command("TROUPE_FAIL_EVERY='REFERENCE:1;CPU:2' " + bench);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->code != 0, r->out);
  BOOST_TEST(r->out.find("a failure injected by FAIL_EVERY 2") != std::string::npos, r->out);
  r = tests::run_command("TROUPE_FAIL_EVERY=CPU:two " + bench);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->code != 0, r->out);
  BOOST_TEST(r->out.find("TROUPE_FAIL_EVERY: 'two' for CPU is not an integer >= 0") != std::string::npos, r->out);
}

BOOST_AUTO_TEST_CASE(new_priorities_take_effect_while_the_model_serves) {
  Core core;
  auto model = core.read_model(add_relu_model());
  auto cm = core.compile_model(model, "MULTI:CPU,REFERENCE");
  cm.set_property({{"DEVICE_PRIORITIES", "REFERENCE"}});
  BOOST_TEST(cm.get_property("DEVICE_PRIORITIES").as_string() == "REFERENCE");
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "REFERENCE");
  auto before = run_many(cm, 10);
  BOOST_TEST(before["CPU"] == 0u);
  BOOST_TEST(before["REFERENCE"] == 10u);
  cm.set_property({{"DEVICE_PRIORITIES", "CPU"}});
  auto after = run_many(cm, 10);
  BOOST_TEST(after["REFERENCE"] == 10u); // none more
  BOOST_TEST(after["CPU"] == 10u);
  cm.set_property({{"DEVICE_PRIORITIES", "CPU,REFERENCE"}});
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "CPU,REFERENCE");
  expect_error([&] { cm.set_property({{"DEVICE_PRIORITIES", "CPU,GPU.3"}}); },
               {"'GPU.3'", "not in the list it was compiled with", "CPU, REFERENCE"});
  expect_error([&] { cm.set_property({{"DEVICE_PRIORITIES", "CPU,CPU"}}); }, {"CPU", "twice"});
  expect_error([&] { cm.set_property({{"DEVICE_PRIORITIES", ""}}); }, {"DEVICE_PRIORITIES", "empty"});
  expect_error([&] { cm.set_property({{"PERF_COUNT", "YES"}}); }, {"PERF_COUNT", "cannot change"});
  auto single = core.compile_model(model, "CPU");
  expect_error([&] { single.set_property({{"DEVICE_PRIORITIES", "CPU"}}); }, {"DEVICE_PRIORITIES", "only MULTI"});
}

BOOST_AUTO_TEST_CASE(auto_chooses_one_device_by_the_hint) {
  Core core;
  auto model = core.read_model(add_relu_model());
  // A Vulkan device whose DEVICE_TYPE is cpu (lavapipe) is not preferred over the CPU.
  auto latency = core.compile_model(model, "AUTO");
  BOOST_TEST(latency.get_property("EXECUTION_DEVICES").as_string() == "CPU");
  auto named = core.compile_model(model, "AUTO:REFERENCE");
  BOOST_TEST(named.get_property("EXECUTION_DEVICES").as_string() == "REFERENCE");
  auto ctput = core.compile_model(model, "AUTO:CPU,REFERENCE", {{"PERFORMANCE_HINT", "CUMULATIVE_THROUGHPUT"}});
  BOOST_TEST(ctput.get_property("EXECUTION_DEVICES").as_string() == "CPU,REFERENCE");
  BOOST_TEST(run_many(ctput, 8).size() == 2u);
}

namespace {

/// Waits, without a clock, until AUTO's EXECUTION_DEVICES reads `want` (a hand-over that never
/// comes is CTest's timeout).
void wait_for_devices(const CompiledModel& cm, const std::string& want) {
  while (cm.get_property("EXECUTION_DEVICES").as_string() != want) std::this_thread::yield();
}

} // namespace

BOOST_AUTO_TEST_CASE(auto_takes_the_list_given_in_its_order_with_the_cpu_serving_while_the_first_compiles) {
  Core core;
  auto model = core.read_model(add_relu_model());
  // A list given is the order: REFERENCE is chosen. The CPU serves until it has compiled.
  auto cm = core.compile_model(model, "AUTO:REFERENCE,CPU");
  const auto first = cm.get_property("EXECUTION_DEVICES").as_string();
  BOOST_TEST((first == "CPU" || first == "REFERENCE"), first);
  auto before = run_many(cm, 6);
  BOOST_TEST(before["CPU"] + before["REFERENCE"] == 6u);
  wait_for_devices(cm, "REFERENCE");
  auto after = run_many(cm, 10);
  BOOST_TEST(after["REFERENCE"] == before["REFERENCE"] + 10); // every request after the hand-over
  BOOST_TEST(after["CPU"] == before["CPU"]);
  BOOST_TEST(cm.get_property("PERFORMANCE_HINT").as_string() == "LATENCY");
  expect_error([&] { cm.set_property({{"DEVICE_PRIORITIES", "CPU"}}); },
               {"DEVICE_PRIORITIES", "AUTO", "one device", "CUMULATIVE_THROUGHPUT"});

  // No startup fallback: the chosen device serves from the start, the CPU keeps only its failures.
  auto direct = core.compile_model(model, "AUTO:REFERENCE,CPU", {{"ENABLE_STARTUP_FALLBACK", "NO"}});
  BOOST_TEST(direct.get_property("EXECUTION_DEVICES").as_string() == "REFERENCE");
  auto served = run_many(direct, 5);
  BOOST_TEST(served["REFERENCE"] == 5u);
  BOOST_TEST(served["CPU"] == 0u);
  // Neither fallback: the chosen device's model alone, no scheduler.
  auto alone = core.compile_model(model, "AUTO:REFERENCE,CPU",
                                  {{"ENABLE_STARTUP_FALLBACK", "NO"}, {"ENABLE_RUNTIME_FALLBACK", "NO"}});
  BOOST_TEST(alone.get_property("EXECUTION_DEVICES").as_string() == "REFERENCE");
  expect_error([&] { alone.get_property("REQUESTS_SERVED"); }, {"REQUESTS_SERVED"});
  // Without a list AUTO ranks: the CPU before lavapipe and REFERENCE, so it needs no help.
  auto ranked = core.compile_model(model, "AUTO");
  BOOST_TEST(ranked.get_property("EXECUTION_DEVICES").as_string() == "CPU");
  expect_error([&] { core.compile_model(model, "AUTO:REFERENCE,CPU", {{"ENABLE_STARTUP_FALLBACK", "MAYBE"}}); },
               {"ENABLE_STARTUP_FALLBACK", "MAYBE"});
}

BOOST_AUTO_TEST_CASE(auto_hands_over_from_the_cpu_to_a_gpu, *utf::precondition(tests::gpu_present())) {
  Core core;
  auto model = core.read_model(add_relu_model());
  auto cm = core.compile_model(model, "AUTO:GPU.0,CPU");
  run_many(cm, 4); // served by whichever holds the model: outputs checked either way
  wait_for_devices(cm, "GPU.0");
  auto served = run_many(cm, 8);
  BOOST_TEST(served["GPU.0"] >= 8u);
}

BOOST_AUTO_TEST_CASE(auto_without_the_cpu_takes_a_gpu, *utf::precondition(tests::gpu_present())) {
  Core core;
  auto model = core.read_model(add_relu_model());
  auto cm = core.compile_model(model, "AUTO:-CPU");
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "GPU.0");
  auto all_gpus = core.compile_model(model, "MULTI:GPU");
  BOOST_TEST(all_gpus.get_property("EXECUTION_DEVICES").as_string().rfind("GPU.0", 0) == 0u);
  run_many(all_gpus, 8);
}

namespace {

/// What the library writes to stderr (its warnings) while alive.
class stderr_capture {
public:
  stderr_capture() : path_(tests::temp_file("multi", "stderr.txt")) {
    std::fflush(stderr);
    saved_ = ::dup(2);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~stderr_capture() { restore(); }
  /// Stops capturing and returns what was written.
  std::string text() {
    restore();
    std::ifstream f(path_);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }

private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::string path_;
  int saved_ = -1;
};

/// y = Det(x) over [2, 3, 3]: an op the GPU has no shader for, which the CPU runs.
std::string det_model() {
  tiny_onnx::model_builder b;
  b.input("x", {2, 3, 3}).output("y", {2}).node("Det", {"x"}, {"y"}, "det");
  return b.write(tests::temp_file("multi", "det.onnx"));
}

} // namespace

BOOST_AUTO_TEST_CASE(multi_leaves_out_a_device_that_cannot_compile_the_model, *utf::precondition(tests::gpu_present())) {
  Core core;
  auto model = core.read_model(det_model());
  stderr_capture err;
  auto cm = core.compile_model(model, "MULTI:GPU.0,CPU");
  const auto warning = err.text();
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "CPU");
  for (const char* piece : {"warning", "MULTI:GPU.0,CPU", "GPU.0", "left out", "Det"})
    BOOST_TEST(warning.find(piece) != std::string::npos, "'" << warning << "' lacks '" << piece << "'");
  // The CPU serves every request, with the REFERENCE device's result.
  Tensor x(element_type::f32, {2, 3, 3});
  for (int i = 0; i < 18; ++i) x.data<float>()[i] = static_cast<float>((i * 7) % 5) - 1.5f;
  auto infer = [&](CompiledModel& m) {
    auto r = m.create_infer_request();
    r.set_input_tensor(x);
    r.infer();
    return r.get_output_tensor();
  };
  auto ref_model = core.compile_model(model, "REFERENCE");
  const Tensor want = infer(ref_model);
  for (int k = 0; k < 4; ++k) {
    const Tensor got = infer(cm);
    BOOST_TEST(std::memcmp(got.data(), want.data(), want.get_byte_size()) == 0);
  }
  BOOST_TEST(tests::served_counts(cm)["CPU"] == 4u);
  // The device left out is not among those it may be told to prefer.
  expect_error([&] { cm.set_property({{"DEVICE_PRIORITIES", "GPU.0"}}); }, {"GPU.0"});
  // When no device compiles it, the compile fails naming each device and its reason.
  expect_error([&] { core.compile_model(model, "MULTI:GPU.0"); }, {"MULTI:GPU.0", "any of its devices", "GPU.0", "Det"});
}

BOOST_AUTO_TEST_CASE(bad_multi_and_auto_input_names_the_problem) {
  Core core;
  auto model = core.read_model(add_relu_model());
  expect_error([&] { core.compile_model(model, "MULTI:"); }, {"MULTI:", "empty"});
  expect_error([&] { core.compile_model(model, "MULTI"); }, {"MULTI", "DEVICE_PRIORITIES"});
  expect_error([&] { core.compile_model(model, "MULTI:CPU(0)"); }, {"CPU(0)", "n >= 1"});
  expect_error([&] { core.compile_model(model, "MULTI:CPU(two)"); }, {"CPU(two)"});
  expect_error([&] { core.compile_model(model, "MULTI:CPU,NPU"); }, {"unknown device 'NPU'"});
  expect_error([&] { core.compile_model(model, "MULTI:HETERO:CPU"); }, {"HETERO", "cannot be listed inside"});
  expect_error([&] { core.compile_model(model, "AUTO:CPU,-CPU"); }, {"AUTO:CPU,-CPU", "leaves no device"});
  expect_error([&] { core.compile_model(model, "AUTO:CPU,-NPU"); }, {"unknown device 'NPU'"});
  expect_error([&] { core.compile_model(model, "MULTI:CPU", {{"SCHEDULE_POLICY", "FASTEST"}}); },
               {"SCHEDULE_POLICY", "FASTEST"});
  expect_error([&] { core.compile_model(model, "MULTI:CPU", {{"PERFORMANCE_HINT", "FAST"}}); },
               {"PERFORMANCE_HINT", "FAST"});
  expect_error([&] { core.compile_model(model, "MULTI:CPU,REFERENCE", {{"GPU_F16_ARITHMETIC", "YES"}}); },
               {"GPU_F16_ARITHMETIC", "CPU"});
  expect_error([&] { core.query_model(model, "MULTI:CPU"); }, {"MULTI", "one device"});
  // A wrong input is the input's fault: it is returned, not re-run on another device.
  auto cm = core.compile_model(model, "MULTI:CPU,REFERENCE");
  auto req = cm.create_infer_request();
  Tensor wrong(element_type::f32, {1, 15});
  expect_error([&] { req.set_tensor("a", wrong); }, {"'a'"});
}

BOOST_AUTO_TEST_CASE(multi_and_auto_settings_through_the_core) {
  Core core;
  core.set_property("MULTI", {{"DEVICE_PRIORITIES", "REFERENCE,CPU"}, {"SCHEDULE_POLICY", "ROUND_ROBIN"}});
  BOOST_TEST(core.get_property("MULTI", "DEVICE_PRIORITIES").as_string() == "REFERENCE,CPU");
  auto model = core.read_model(add_relu_model());
  auto cm = core.compile_model(model, "MULTI");
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "REFERENCE,CPU");
  BOOST_TEST(cm.get_property("SCHEDULE_POLICY").as_string() == "ROUND_ROBIN");
  auto served = run_many(cm, 12);
  BOOST_TEST(served["REFERENCE"] > 0u);
  expect_error([&] { core.set_property("MULTI:CPU", {{"NO_SUCH", "1"}}); }, {"NO_SUCH", "CPU"});
  expect_error([&] { core.get_property("MULTI", "NO_SUCH"); }, {"MULTI", "NO_SUCH"});
}

// ---- PP-OCR: MULTI's outputs equal the single device's --------------------------------------

namespace {

/// The case on `device` (a MULTI or AUTO string) equals the CPU's, with each of its devices
/// made the only one in turn (live priorities), so that every device serves.
void multi_matches_cpu(const tests::model_case& c, const std::string& device, const AnyMap& props = {}) {
  Core core;
  const auto single = tests::run_on_device(core, c, "CPU");
  auto cm = core.compile_model(tests::read_case_model(core, c), device, props);
  const auto devices = cm.get_property("EXECUTION_DEVICES").as<std::vector<std::string>>();
  BOOST_TEST(devices.size() >= 2u);
  for (const auto& d : devices) {
    cm.set_property({{"DEVICE_PRIORITIES", d}});
    auto cmp = tests::compare_scaled(tests::run_compiled(c, cm), single, 1e-4, 1e-5);
    BOOST_TEST(cmp.ok, c.model << " on " << device << " served by " << d << ": " << cmp.message);
  }
  const auto served = cm.get_property("REQUESTS_SERVED").as_string();
  BOOST_TEST(served.find(":0") == std::string::npos, served);
}

} // namespace

BOOST_AUTO_TEST_CASE(cls_on_multi_cpu_reference, *tests::needs_case(tests::ppocr_cls)) {
  multi_matches_cpu(tests::ppocr_cls, "MULTI:CPU,REFERENCE");
}

BOOST_AUTO_TEST_CASE(cls_on_multi_gpu_cpu, *utf::precondition(tests::gpu_present()) * tests::needs_case(tests::ppocr_cls)) {
  multi_matches_cpu(tests::ppocr_cls, "MULTI:GPU,CPU");
}

BOOST_AUTO_TEST_CASE(rec_on_multi_gpu_cpu, *utf::precondition(tests::gpu_present()) * tests::needs_case(tests::ppocr_rec)) {
  multi_matches_cpu(tests::ppocr_rec, "MULTI:GPU,CPU");
}

BOOST_AUTO_TEST_CASE(det320_on_auto_ctput, *utf::precondition(tests::gpu_present()) *
                                              tests::needs_case(tests::ppocr_det320)) {
  multi_matches_cpu(tests::ppocr_det320, "AUTO", {{"PERFORMANCE_HINT", "CUMULATIVE_THROUGHPUT"}});
}

// ---- examples/frame_pipeline -----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(frame_pipeline_loses_nothing_while_priorities_change, *tests::needs_model_of(tests::ppocr_cls)) {
  // The example sits beside this test (CMAKE_RUNTIME_OUTPUT_DIRECTORY).
  const auto bin = fs::read_symlink("/proc/self/exe").parent_path() / "frame_pipeline";
  const std::string cmd = bin.string() + " -m " + tests::ppocr_model(tests::ppocr_cls.model).path.string() +
                          " -shape 1x3x48x192 -d MULTI:CPU,REFERENCE -n 60 --reprioritize-at 20:REFERENCE"
                          " --reprioritize-at 40:CPU,REFERENCE 2>&1";
  const auto ran = tests::run_command(cmd);
  BOOST_REQUIRE(ran);
  const std::string& out = ran->out;
  BOOST_TEST(ran->code != -1); // exited normally
  BOOST_TEST(ran->code == 0, out);
  // The last line, exactly: frames: 60 submitted, 60 completed, 0 lost, 0 out of order; served by: CPU=n, REFERENCE=m
  const auto start = out.rfind('\n', out.size() >= 2 ? out.size() - 2 : 0);
  const std::string last = out.substr(start == std::string::npos ? 0 : start + 1);
  int cpu = -1, ref = -1;
  char end = 0;
  const int got = std::sscanf(last.c_str(),
                              "frames: 60 submitted, 60 completed, 0 lost, 0 out of order; served by: CPU=%d, REFERENCE=%d%c",
                              &cpu, &ref, &end);
  BOOST_REQUIRE_MESSAGE(got == 3 && end == '\n', "last line: " << last);
  BOOST_TEST(cpu + ref == 60);
  BOOST_TEST(ref >= 15, out); // frames 21 to 40 had only the REFERENCE device
}
