/// HETERO: device strings and property routing, automatic / manual / combined placement,
/// outputs equal to a single device's on PP-OCR models under seeded random manual splits,
/// pipelining of requests in flight, errors that name op, device and subgraph.
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>

#include <unistd.h>

#include "benchmarks/tiny_onnx.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/ppocr_cases.hpp"
#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_data.hpp"

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using namespace troupe;
using tests::expect_error;

namespace {

std::string temp_file(const std::string& name) {
  return (fs::temp_directory_path() / ("troupe_hetero_" + std::to_string(::getpid()) + "_" + name)).string();
}

/// y = relu(a + b) * b - a over [1, n]: four ops in a chain with a side input.
std::string chain_model(int64_t n = 16) {
  tiny_onnx::model_builder b;
  b.input("a", {1, n}).input("b", {1, n}).output("y", {1, n});
  b.node("Add", {"a", "b"}, {"s"}, "add")
      .node("Relu", {"s"}, {"r"}, "relu")
      .node("Mul", {"r", "b"}, {"m"}, "mul")
      .node("Sub", {"m", "a"}, {"y"}, "sub");
  return b.write(temp_file("chain.onnx"));
}

Tensor ramp(const Shape& s, float scale, float offset) {
  Tensor t(element_type::f32, s);
  for (int64_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = scale * static_cast<float>(i % 13) + offset;
  return t;
}

std::vector<float> run_chain(CompiledModel& cm) {
  auto req = cm.create_infer_request();
  req.set_input_tensor(0, ramp({1, 16}, 1, -6));
  req.set_input_tensor(1, ramp({1, 16}, 0.5f, -1));
  req.infer();
  auto y = req.get_output_tensor(0);
  return {y.data<float>(), y.data<float>() + y.get_size()};
}

std::vector<float> chain_expected() {
  auto a = ramp({1, 16}, 1, -6), b = ramp({1, 16}, 0.5f, -1);
  std::vector<float> y;
  for (int i = 0; i < 16; ++i) {
    float av = a.data<float>()[i], bv = b.data<float>()[i];
    y.push_back(std::max(0.0f, av + bv) * bv - av);
  }
  return y;
}

void set_affinity(Model& m, const std::string& op, const std::string& device) {
  for (auto& n : m.get_ops())
    if (n.get_friendly_name() == op) {
      n.get_rt_info()["affinity"] = device;
      return;
    }
  BOOST_FAIL("no op " << op);
}

} // namespace

BOOST_AUTO_TEST_CASE(manual_affinities_split_the_chain_into_stages) {
  Core core;
  auto model = core.read_model(chain_model());
  set_affinity(model, "add", "CPU");
  set_affinity(model, "relu", "REFERENCE");
  set_affinity(model, "mul", "CPU");
  set_affinity(model, "sub", "REFERENCE");
  auto cm = core.compile_model(model, "HETERO:CPU,REFERENCE");
  BOOST_TEST(cm.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() == 4);
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "CPU,REFERENCE");
  BOOST_TEST(run_chain(cm) == chain_expected(), boost::test_tools::per_element());
  // Automatic: the CPU runs everything, one subgraph.
  auto plain = core.compile_model(core.read_model(chain_model()), "HETERO:CPU,REFERENCE");
  BOOST_TEST(plain.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() == 1);
  BOOST_TEST(plain.get_property("EXECUTION_DEVICES").as_string() == "CPU");
  BOOST_TEST(run_chain(plain) == chain_expected(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(combined_placement_from_query_model) {
  Core core;
  auto model = core.read_model(chain_model());
  auto placed = core.query_model(model, "HETERO:REFERENCE,CPU");
  BOOST_TEST(placed.size() == 4u);
  for (const auto& [op, dev] : placed) BOOST_TEST(dev == "REFERENCE", op);
  // The application moves one op and leaves the rest to the automatic rule.
  set_affinity(model, "mul", "CPU");
  auto again = core.query_model(model, "HETERO:REFERENCE,CPU");
  BOOST_TEST(again["mul"] == "CPU");
  BOOST_TEST(again["add"] == "REFERENCE");
  auto cm = core.compile_model(model, "HETERO:REFERENCE,CPU");
  BOOST_TEST(cm.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() == 3);
  BOOST_TEST(run_chain(cm) == chain_expected(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(priorities_and_properties_are_routed) {
  Core core;
  auto model = core.read_model(chain_model());
  set_affinity(model, "sub", "REFERENCE");
  // DEVICE_PRIORITIES instead of a list; PERF_COUNT to every device; one device's own map.
  auto cm = core.compile_model(model, "HETERO",
                               {device_priorities("CPU,REFERENCE"), enable_profiling(true),
                                device_properties("CPU", {num_streams(2)})});
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "CPU,REFERENCE");
  // Two stages: CPU with 2 streams, REFERENCE with 1.
  BOOST_TEST(cm.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>() == 3);
  auto req = cm.create_infer_request();
  req.set_input_tensor(0, ramp({1, 16}, 1, -6));
  req.set_input_tensor(1, ramp({1, 16}, 0.5f, -1));
  req.infer();
  auto rows = req.get_profiling_info();
  std::set<std::string> prefixes;
  for (const auto& r : rows) prefixes.insert(r.node_name.substr(0, r.node_name.find(':')));
  BOOST_TEST(prefixes == (std::set<std::string>{"subgraph0", "subgraph1"}));
  // DEVICE_PROPERTIES in its nested text form; Core::set_property("HETERO", ...) as defaults.
  core.set_property("HETERO", {device_priorities("REFERENCE,CPU"), {"DEVICE_PROPERTIES", "{CPU:{NUM_STREAMS:2}}"}});
  auto d = core.compile_model(model, "HETERO");
  BOOST_TEST(d.get_property("EXECUTION_DEVICES").as_string() == "REFERENCE");
  BOOST_TEST(core.get_property("HETERO", "DEVICE_PRIORITIES").as_string() == "REFERENCE,CPU");
}

BOOST_AUTO_TEST_CASE(bad_hetero_input_names_the_problem) {
  Core core;
  auto model = core.read_model(chain_model());
  expect_error([&] { core.compile_model(model, "HETERO:"); }, {"HETERO:", "empty"});
  expect_error([&] { core.compile_model(model, "HETERO"); }, {"HETERO", "DEVICE_PRIORITIES"});
  expect_error([&] { core.compile_model(model, "HETERO:CPU,NPU"); }, {"unknown device 'NPU'"});
  expect_error([&] { core.compile_model(model, "HETERO:CPU,CPU"); }, {"'CPU'", "listed twice"});
  expect_error([&] { core.compile_model(model, "HETERO:CPU(2)"); }, {"no request counts"});
  expect_error([&] { core.compile_model(model, "HETERO:CPU,REFERENCE", {{"GPU_F16_ARITHMETIC", "YES"}}); },
               {"GPU_F16_ARITHMETIC", "CPU"});
  expect_error([&] { core.compile_model(model, "HETERO:CPU,REFERENCE", {device_properties("CPU", {{"NO_SUCH", "1"}})}); },
               {"NO_SUCH", "CPU"});
  expect_error([&] { core.compile_model(model, "HETERO:CPU", {{"DEVICE_PROPERTIES", "{REFERENCE:{PERF_COUNT:YES}}"}}); },
               {"DEVICE_PROPERTIES", "'REFERENCE'", "not in its list"});
  expect_error([&] { core.compile_model(model, "HETERO:CPU", {{"DEVICE_PROPERTIES", "{CPU:"}}); }, {"DEVICE_PROPERTIES"});
  set_affinity(model, "relu", "REFERENCE");
  expect_error([&] { core.compile_model(model, "HETERO:CPU"); }, {"relu", "REFERENCE"});
}

BOOST_AUTO_TEST_CASE(a_failing_stage_fails_the_request_and_the_next_works) {
  Core core;
  auto model = core.read_model(chain_model());
  set_affinity(model, "mul", "REFERENCE");
  auto cm = core.compile_model(model, "HETERO:CPU,REFERENCE");
  auto req = cm.create_infer_request();
  // A wrong input shape is refused before any stage runs, naming the input.
  expect_error([&] { req.set_input_tensor(0, ramp({1, 8}, 1, 0)); req.infer(); }, {"'a'", "shape"});
  BOOST_TEST(run_chain(cm) == chain_expected(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(requests_in_flight_all_complete_with_their_own_results) {
  Core core;
  auto model = core.read_model(chain_model());
  set_affinity(model, "relu", "REFERENCE");
  auto cm = core.compile_model(model, "HETERO:CPU,REFERENCE");
  std::vector<InferRequest> reqs;
  for (int r = 0; r < 8; ++r) {
    reqs.push_back(cm.create_infer_request());
    reqs.back().set_input_tensor(0, ramp({1, 16}, 1, static_cast<float>(-r)));
    reqs.back().set_input_tensor(1, ramp({1, 16}, 0.5f, -1));
  }
  for (auto& r : reqs) r.start_async();
  for (std::size_t r = 0; r < reqs.size(); ++r) {
    reqs[r].wait();
    auto y = reqs[r].get_output_tensor(0);
    auto a = ramp({1, 16}, 1, static_cast<float>(-static_cast<int>(r))), b = ramp({1, 16}, 0.5f, -1);
    for (int i = 0; i < 16; ++i) {
      float av = a.data<float>()[i], bv = b.data<float>()[i];
      BOOST_TEST(y.data<float>()[i] == std::max(0.0f, av + bv) * bv - av);
    }
  }
}

// ---- PP-OCR: random manual splits equal the single device ------------------------------------

namespace {

/// `splits` seeded random manual splits of the case's model over CPU and `other`: the ops, in
/// order, cut into up to 4 runs at random points, the runs alternating between the devices.
/// Each split's output must equal the CPU's within the model tests' tolerance.
void random_splits_match(const tests::model_case& c, const std::string& other, int splits, uint32_t seed) {
  Core core;
  const auto single = tests::run_on_device(core, c, "CPU");
  std::mt19937 rng(seed);
  int multi_stage = 0;
  for (int s = 0; s < splits; ++s) {
    Model model = tests::read_case_model(core, c);
    auto ops = model.get_ops();
    std::uniform_int_distribution<std::size_t> cut(0, ops.size());
    std::vector<std::size_t> cuts{cut(rng), cut(rng), cut(rng)};
    std::sort(cuts.begin(), cuts.end());
    const bool cpu_first = rng() % 2 == 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto run = static_cast<std::size_t>(std::upper_bound(cuts.begin(), cuts.end(), i) - cuts.begin());
      ops[i].get_rt_info()["affinity"] = (run % 2 == 0) == cpu_first ? "CPU" : other;
    }
    auto cm = core.compile_model(model, "HETERO:CPU," + other);
    multi_stage += cm.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() > 1;
    auto got = tests::run_model_on_device(core, c, model, "HETERO:CPU," + other);
    auto cmp = tests::compare_scaled(got, single, 1e-4, 1e-5);
    BOOST_TEST(cmp.ok, c.model << " split " << s << " (cuts " << cuts[0] << "," << cuts[1] << "," << cuts[2]
                                << "): " << cmp.message);
  }
  std::cout << c.model << ": " << splits << " random splits over CPU," << other << ", " << multi_stage
            << " with several subgraphs\n";
  BOOST_TEST(multi_stage > splits / 2);
}

} // namespace

BOOST_AUTO_TEST_CASE(cls_random_splits_cpu_reference, *tests::needs_case(tests::ppocr_cls)) {
  random_splits_match(tests::ppocr_cls, "REFERENCE", 100, 1);
}

BOOST_AUTO_TEST_CASE(cls_random_splits_cpu_gpu, *utf::precondition(tests::gpu_present()) *
                                                    tests::needs_case(tests::ppocr_cls)) {
  random_splits_match(tests::ppocr_cls, "GPU", 100, 2);
}
