/// HETERO: device strings and property routing, automatic / manual / combined placement,
/// outputs equal to a single device's on PP-OCR models under seeded random manual splits,
/// pipelining of requests in flight, errors that name op, device and subgraph.
#define BOOST_TEST_MODULE hetero_tests
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <algorithm>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <iostream>
#include <random>
#include <map>
#include <set>

#include "benchmarks/tiny_onnx.hpp"
#include "tests/support/test_tensors.hpp"
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

std::string temp_file(const std::string& name) { return tests::temp_file("hetero", name); }

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
  // The tensor that crossed from the CPU to REFERENCE has a row of its own, timed.
  std::vector<ProfilingInfo> crossings;
  for (const auto& r : rows)
    if (r.node_type == "Crossing") crossings.push_back(r);
  BOOST_TEST_REQUIRE(crossings.size() == 1u);
  BOOST_TEST(crossings[0].node_name == "subgraph1: m from CPU");
  BOOST_TEST(crossings[0].real_time.count() >= 0);
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

BOOST_AUTO_TEST_CASE(excluded_ops_force_a_split_and_refuse_a_single_device) {
  Core core;
  auto model = core.read_model(chain_model());
  // The debugging switch: the CPU "lacks" Relu, so HETERO sends it to the next device.
  auto cm = core.compile_model(model, "HETERO:CPU,REFERENCE", {device_properties("CPU", {{"EXCLUDED_OPS", "Relu"}})});
  BOOST_TEST(cm.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() == 3);
  BOOST_TEST(run_chain(cm) == chain_expected(), boost::test_tools::per_element());
  BOOST_TEST(core.query_model(model, "HETERO:CPU,REFERENCE", {device_properties("CPU", {{"EXCLUDED_OPS", "Relu"}})})["relu"] ==
             "REFERENCE");
  // On a single device it is an op the device cannot run.
  expect_error([&] { core.compile_model(model, "CPU", {{"EXCLUDED_OPS", "Mul, Sub"}}); },
               {"Mul", "mul", "excluded by EXCLUDED_OPS"});
  auto why = core.query_model_unsupported(model, "CPU", {{"EXCLUDED_OPS", "Sub"}});
  BOOST_TEST(why.size() == 1u);
  BOOST_TEST(why["sub"].find("EXCLUDED_OPS") != std::string::npos);
  // From the environment, when the property is not set.
  {
    tests::scoped_env env("TROUPE_EXCLUDED_OPS", "REFERENCE:Add; CPU:Mul,Sub");
    auto e = core.compile_model(model, "HETERO:CPU,REFERENCE");
    BOOST_TEST(e.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() == 2);
    BOOST_TEST(run_chain(e) == chain_expected(), boost::test_tools::per_element());
    auto q = core.query_model(model, "HETERO:CPU,REFERENCE");
    BOOST_TEST(q["mul"] == "REFERENCE");
    BOOST_TEST(q["add"] == "CPU");
  }
  {
    tests::scoped_env env("TROUPE_EXCLUDED_OPS", "CPU=Mul");
    expect_error([&] { core.compile_model(model, "CPU"); }, {"TROUPE_EXCLUDED_OPS", "CPU=Mul", "DEVICE:OpType"});
  }
}

BOOST_AUTO_TEST_CASE(the_split_is_drawn_on_request) {
  Core core;
  auto model = core.read_model(chain_model());
  set_affinity(model, "relu", "REFERENCE");
  const fs::path dir = temp_file("dots");
  fs::remove_all(dir);
  core.compile_model(model, "HETERO:CPU,REFERENCE", {{"HETERO_DUMP_GRAPH_DOT", dir.string()}});
  const auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string name = fs::path(chain_model()).stem().string();
  auto affinity = slurp(dir / ("hetero_affinity_" + name + ".dot"));
  auto subgraphs = slurp(dir / ("hetero_subgraphs_" + name + ".dot"));
  BOOST_TEST(affinity.find("[REFERENCE]") != std::string::npos, affinity);
  BOOST_TEST(affinity.find("affinity REFERENCE") != std::string::npos, affinity); // the why, as a tooltip
  BOOST_TEST(affinity.find("fillcolor") != std::string::npos);
  BOOST_TEST(subgraphs.find("subgraph 0 [CPU]") != std::string::npos, subgraphs);
  BOOST_TEST(subgraphs.find("subgraph 1 [REFERENCE]") != std::string::npos, subgraphs);
  BOOST_TEST(subgraphs.find("subgraph 2 [CPU]") != std::string::npos, subgraphs);
  BOOST_TEST(subgraphs.find("sg0 -> sg1") != std::string::npos, subgraphs);
  // Placed by cost: the prediction as the picture's title, each crossing's bytes and time, each
  // op's measured times as its tooltip (which device wins these 16-element ops varies).
  core.compile_model(model, "HETERO:CPU,REFERENCE",
                     {{"HETERO_DUMP_GRAPH_DOT", dir.string()}, {"HETERO_PLACEMENT", "COST"}});
  affinity = slurp(dir / ("hetero_affinity_" + name + ".dot"));
  subgraphs = slurp(dir / ("hetero_subgraphs_" + name + ".dot"));
  BOOST_TEST(subgraphs.find("HETERO_PLACEMENT=COST: from calibration: one request predicted") != std::string::npos, subgraphs);
  BOOST_TEST(subgraphs.find("64 bytes to ") != std::string::npos, subgraphs);
  BOOST_TEST(affinity.find("cost: CPU ") != std::string::npos, affinity);
  // TROUPE_HETERO_VISUALIZE=1: the working folder, when the property is not given.
  {
    tests::scoped_env env("TROUPE_HETERO_VISUALIZE", "1");
    const auto here = fs::current_path();
    fs::current_path(dir);
    fs::remove(dir / ("hetero_subgraphs_" + name + ".dot"));
    core.query_model(model, "HETERO:CPU,REFERENCE");
    fs::current_path(here);
    BOOST_TEST(fs::exists(dir / ("hetero_subgraphs_" + name + ".dot")));
  }
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(a_failing_stage_fails_the_request_and_the_next_works) {
  // g = Gather(d, i) on REFERENCE, y = Relu(g) on the CPU: an index out of range fails the
  // REFERENCE stage at run time; the request ends with an error naming subgraph and device,
  // the CPU stage never runs for it, and the next request works.
  tiny_onnx::model_builder b;
  b.input("d", {4, 3}).input("i", {2}, onnx::TensorProto::INT64).output("y", {2, 3});
  b.node("Gather", {"d", "i"}, {"g"}, "gather").node("Relu", {"g"}, {"y"}, "relu");
  Core core;
  auto model = core.read_model(b.write(temp_file("gather.onnx")));
  set_affinity(model, "gather", "REFERENCE");
  auto cm = core.compile_model(model, "HETERO:CPU,REFERENCE", {enable_profiling(true)});
  BOOST_TEST(cm.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() == 2);
  auto req = cm.create_infer_request();
  Tensor d = ramp({4, 3}, 1, -5), idx(element_type::i64, {2});
  req.set_input_tensor(0, d);
  idx.data<int64_t>()[0] = 1;
  idx.data<int64_t>()[1] = 9; // out of range
  req.set_input_tensor(1, idx);
  expect_error([&] { req.infer(); }, {"subgraph 0 (REFERENCE)", "gather", "out of range"});
  idx.data<int64_t>()[1] = 3;
  req.infer();
  auto y = req.get_output_tensor(0);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      BOOST_TEST(y.data<float>()[r * 3 + c] == std::max(0.0f, d.data<float>()[(r == 0 ? 1 : 3) * 3 + c]));
  // A wrong input shape is refused before any stage runs, naming the input.
  expect_error([&] { req.set_input_tensor(0, ramp({1, 8}, 1, 0)); req.infer(); }, {"'d'", "shape"});
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

/// `splits` seeded random manual splits of the case's model over CPU and `other` (fewer for the
/// larger models: each split compiles and runs the model; 100 on cls): one to three
/// windows of 1 to 12 consecutive ops (in topological order) at random places go to `other`,
/// the rest to the CPU (short windows keep the slow REFERENCE device's share small). Each
/// split's output must equal the CPU's within the model tests' tolerance.
void random_splits_match(const tests::model_case& c, const std::string& other, int splits, uint32_t seed) {
  Core core;
  const auto single = tests::run_on_device(core, c, "CPU");
  std::mt19937 rng(seed);
  int multi_stage = 0;
  for (int s = 0; s < splits; ++s) {
    Model model = tests::read_case_model(core, c);
    auto ops = model.get_ops();
    const auto n = ops.size();
    std::vector<bool> foreign(n, false);
    std::string windows;
    for (uint32_t w = 0, count = 1 + rng() % 3; w < count; ++w) {
      const std::size_t start = rng() % n, len = 1 + rng() % std::min<std::size_t>(12, n);
      for (std::size_t i = start; i < std::min(n, start + len); ++i) foreign[i] = true;
      windows += " [" + std::to_string(start) + "," + std::to_string(std::min(n, start + len)) + ")";
    }
    for (std::size_t i = 0; i < n; ++i) ops[i].get_rt_info()["affinity"] = foreign[i] ? other : "CPU";
    auto cm = core.compile_model(model, "HETERO:CPU," + other);
    multi_stage += cm.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() > 1;
    auto cmp = tests::compare_scaled(tests::run_compiled(c, cm), single, 1e-4, 1e-5);
    BOOST_TEST(cmp.ok, c.model << " split " << s << ", ops to " << other << ":" << windows << ": " << cmp.message);
  }
  std::cout << c.model << ": " << splits << " random splits over CPU," << other << ", " << multi_stage
            << " with several subgraphs\n";
  BOOST_TEST(multi_stage > splits / 2);
}

} // namespace

BOOST_AUTO_TEST_CASE(cls_random_splits_cpu_reference, *tests::needs_case(tests::ppocr_cls)) {
  random_splits_match(tests::ppocr_cls, "REFERENCE", 100, 1);
}

BOOST_AUTO_TEST_CASE(rec_random_splits_cpu_reference, *tests::needs_case(tests::ppocr_rec)) {
  random_splits_match(tests::ppocr_rec, "REFERENCE", 40, 3);
}

BOOST_AUTO_TEST_CASE(det320_random_splits_cpu_reference, *tests::needs_case(tests::ppocr_det320)) {
  random_splits_match(tests::ppocr_det320, "REFERENCE", 40, 4);
}

BOOST_AUTO_TEST_CASE(det320_on_gpu_cpu_where_the_gpu_lacks_ops, *utf::precondition(tests::gpu_present()) *
                                                                   tests::needs_case(tests::ppocr_det320)) {
  // The GPU "lacks" det's upsampling ops (EXCLUDED_OPS): they go to the CPU, the GPU takes the rest.
  Core core;
  auto model = tests::read_case_model(core, tests::ppocr_det320);
  const AnyMap props{device_properties("GPU", {{"EXCLUDED_OPS", "Resize,ConvTranspose"}})};
  auto placed = core.query_model(model, "HETERO:GPU,CPU", props);
  std::map<std::string, int> per_device;
  for (const auto& [op, dev] : placed) ++per_device[dev];
  for (const auto& node : model.get_ops())
    if (node.get_type_name() == "Resize" || node.get_type_name() == "ConvTranspose")
      BOOST_TEST(placed[node.get_friendly_name()] == "CPU", node.get_friendly_name());
  BOOST_TEST(per_device["GPU.0"] > per_device["CPU"]);
  auto cm = core.compile_model(model, "HETERO:GPU,CPU", props);
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "GPU.0,CPU");
  BOOST_TEST(cm.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() > 2);
  auto cmp = tests::compare_scaled(tests::run_compiled(tests::ppocr_det320, cm),
                                   tests::run_on_device(core, tests::ppocr_det320, "CPU"), 1e-4, 1e-5);
  BOOST_TEST(cmp.ok, cmp.message);
}

BOOST_AUTO_TEST_CASE(cls_random_splits_cpu_gpu, *utf::precondition(tests::gpu_present()) *
                                                    tests::needs_case(tests::ppocr_cls)) {
  random_splits_match(tests::ppocr_cls, "GPU", 50, 2);
}

// ---- Dynamic inputs: one split per set of input shapes ---------------------------------------

namespace {

Tensor seeded(const Shape& s, uint32_t seed) {
  Tensor t(element_type::f32, s);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

std::vector<float> run_once(CompiledModel& cm, const Tensor& in) {
  auto req = cm.create_infer_request();
  req.set_input_tensor(0, in);
  req.infer();
  auto y = req.get_output_tensor(0);
  return {y.data<float>(), y.data<float>() + y.get_size()};
}

/// rec as read (input [?,3,48,?]) on `device`, at two widths, equals the CPU's dynamic model.
/// Returns the devices it ran on.
std::string dynamic_rec_matches_cpu(Core& core, const Model& model, const std::string& device, const AnyMap& props,
                             const std::string& what) {
  auto cpu = core.compile_model(core.read_model(tests::ppocr_model(tests::ppocr_rec.model).path.string()), "CPU");
  auto cm = core.compile_model(model, device, props);
  for (int64_t width : {192, 320}) {
    const auto in = seeded({1, 3, 48, width}, static_cast<uint32_t>(width));
    auto cmp = tests::compare_scaled(run_once(cm, in), run_once(cpu, in), 1e-4, 1e-5);
    BOOST_TEST(cmp.ok, what << ", width " << width << ": " << cmp.message);
  }
  return cm.get_property("EXECUTION_DEVICES").as_string();
}

} // namespace

BOOST_AUTO_TEST_CASE(dynamic_inputs_are_split_per_shape_cpu_reference, *tests::needs_model_of(tests::ppocr_rec)) {
  Core core;
  const auto path = tests::ppocr_model(tests::ppocr_rec.model).path.string();
  std::mt19937 rng(7);
  int split = 0;
  for (int s = 0; s < 5; ++s) {
    Model model = core.read_model(path);
    BOOST_REQUIRE(!model.input().get_partial_shape().is_static());
    auto ops = model.get_ops();
    const std::size_t start = rng() % ops.size(), len = 1 + rng() % 12;
    for (std::size_t i = start; i < std::min(ops.size(), start + len); ++i)
      ops[i].get_rt_info()["affinity"] = "REFERENCE";
    split += dynamic_rec_matches_cpu(core, model, "HETERO:CPU,REFERENCE", {},
                                     "ops [" + std::to_string(start) + "," + std::to_string(start + len) +
                                         ") to REFERENCE") == "CPU,REFERENCE";
  }
  BOOST_TEST(split >= 3); // most windows hold ops that are not folded away
}

BOOST_AUTO_TEST_CASE(dynamic_inputs_report_and_fail_per_shape, *tests::needs_model_of(tests::ppocr_rec)) {
  Core core;
  Model model = core.read_model(tests::ppocr_model(tests::ppocr_rec.model).path.string());
  std::string conv;
  for (auto& op : model.get_ops())
    if (op.get_type_name() == "Conv" && conv.empty()) conv = op.get_friendly_name();
  BOOST_REQUIRE(!conv.empty());
  // An affinity to a device not in the list is known at compile time.
  set_affinity(model, conv, "GPU.7");
  expect_error([&] { core.compile_model(model, "HETERO:CPU,REFERENCE"); }, {conv, "GPU.7"});
  // One the device cannot run is known once the shapes are: the request fails naming op and
  // device, and the compiled model still serves.
  set_affinity(model, conv, "REFERENCE");
  const AnyMap props{device_properties("REFERENCE", {{"EXCLUDED_OPS", "Conv"}})};
  auto cm = core.compile_model(model, "HETERO:CPU,REFERENCE", props);
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "CPU,REFERENCE"); // the outline's
  auto req = cm.create_infer_request();
  req.set_input_tensor(0, seeded({1, 3, 48, 96}, 1));
  expect_error([&] { req.infer(); }, {conv, "REFERENCE"});
  // Without the impossible affinity every op can go to the CPU: the split follows the shapes.
  set_affinity(model, conv, "");
  auto all_cpu = core.compile_model(model, "HETERO:CPU,REFERENCE", props);
  run_once(all_cpu, seeded({1, 3, 48, 96}, 1));
  BOOST_TEST(all_cpu.get_property("EXECUTION_DEVICES").as_string() == "CPU");
  BOOST_TEST(all_cpu.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() == 1);
}

BOOST_AUTO_TEST_CASE(dynamic_inputs_on_gpu_cpu, *utf::precondition(tests::gpu_present()) *
                                                   tests::needs_model_of(tests::ppocr_rec)) {
  // The GPU answers no op of a model whose shapes are unknown, so the outline is all CPU; with
  // shapes known it takes what it can.
  Core core;
  Model model = core.read_model(tests::ppocr_model(tests::ppocr_rec.model).path.string());
  const AnyMap props{device_properties("GPU", {{"EXCLUDED_OPS", "Transpose"}})};
  dynamic_rec_matches_cpu(core, model, "HETERO:GPU,CPU", props, "automatic split");
  auto cm = core.compile_model(model, "HETERO:GPU,CPU", props);
  run_once(cm, seeded({1, 3, 48, 160}, 3));
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "GPU.0,CPU");
  BOOST_TEST(cm.get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>() > 1);
}

// ---- HETERO_PLACEMENT=COST: placement by measured cost ----------------------------------------

BOOST_AUTO_TEST_CASE(cost_placement_moves_work_to_the_faster_device, *tests::needs_case(tests::ppocr_cls)) {
  // REFERENCE listed first takes every op of cls by PRIORITY; measured, the CPU is far faster
  // at nearly every op, so COST gives it nearly everything (on a loaded machine a small op may
  // measure faster on the one-thread REFERENCE, and stay there), and the CPU's output.
  Core core;
  const auto cpu = tests::run_on_device(core, tests::ppocr_cls, "CPU");
  Model model = tests::read_case_model(core, tests::ppocr_cls);
  auto priority = core.compile_model(model, "HETERO:REFERENCE,CPU");
  BOOST_TEST(priority.get_property("EXECUTION_DEVICES").as_string() == "REFERENCE");
  const AnyMap cost{{"HETERO_PLACEMENT", "COST"}};
  auto cm = core.compile_model(model, "HETERO:REFERENCE,CPU", cost);
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string().find("CPU") != std::string::npos);
  auto cmp = tests::compare_scaled(tests::run_compiled(tests::ppocr_cls, cm), cpu, 1e-4, 1e-5);
  BOOST_TEST(cmp.ok, cmp.message);
  // Each placed op says what it costs on each device.
  int costed = 0, on_cpu = 0;
  for (const auto& [op, p] : core.query_placement(model, "HETERO:REFERENCE,CPU", cost)) {
    if (p.why.rfind("cost: ", 0) != 0) continue;
    ++costed;
    on_cpu += p.device == "CPU";
    BOOST_TEST((p.why.find("REFERENCE ") != std::string::npos && p.why.find("CPU ") != std::string::npos), op << ": " << p.why);
  }
  BOOST_TEST(costed > 30);
  BOOST_TEST(on_cpu > costed * 8 / 10, on_cpu << " of " << costed << " ops on the CPU");
}

BOOST_AUTO_TEST_CASE(cost_placement_keeps_affinities, *tests::needs_case(tests::ppocr_cls)) {
  // An op the application sends to REFERENCE stays there, whatever it costs; the rest is placed
  // by cost around it, and the output is still the CPU's.
  Core core;
  const auto cpu = tests::run_on_device(core, tests::ppocr_cls, "CPU");
  Model model = tests::read_case_model(core, tests::ppocr_cls);
  std::string pinned;
  for (auto& op : model.get_ops())
    if (op.get_type_name() == "Conv" && pinned.empty()) {
      pinned = op.get_friendly_name();
      op.get_rt_info()["affinity"] = "REFERENCE";
    }
  BOOST_REQUIRE(!pinned.empty());
  const AnyMap cost{{"HETERO_PLACEMENT", "COST"}};
  auto placed = core.query_placement(model, "HETERO:CPU,REFERENCE", cost);
  BOOST_TEST(placed[pinned].device == "REFERENCE");
  BOOST_TEST(placed[pinned].why == "affinity REFERENCE");
  // Which device wins the others depends on what the calibration measured (on a loaded 2-core
  // machine a 2-thread CPU can lose them all): each is placed by cost, and REFERENCE runs.
  int costed = 0;
  for (const auto& [op, p] : placed)
    if (op != pinned) costed += p.why.rfind("cost: ", 0) == 0;
  BOOST_TEST(costed > 30);
  auto cm = core.compile_model(model, "HETERO:CPU,REFERENCE", cost);
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string().find("REFERENCE") != std::string::npos);
  auto cmp = tests::compare_scaled(tests::run_model_on_device(core, tests::ppocr_cls, model, "HETERO:CPU,REFERENCE", cost),
                                   cpu, 1e-4, 1e-5);
  BOOST_TEST(cmp.ok, cmp.message);
}

BOOST_AUTO_TEST_CASE(cost_placement_of_dynamic_inputs_per_shape, *tests::needs_model_of(tests::ppocr_cls)) {
  // Each set of shapes is placed by cost when it first comes (cls as read: [?, 3, ?, ?]).
  Core core;
  const auto path = tests::ppocr_model(tests::ppocr_cls.model).path.string();
  auto cpu = core.compile_model(path, "CPU");
  auto cm = core.compile_model(path, "HETERO:REFERENCE,CPU", {{"HETERO_PLACEMENT", "COST"}});
  for (const Shape& s : {Shape{1, 3, 48, 192}, Shape{2, 3, 48, 160}}) {
    const auto in = seeded(s, static_cast<uint32_t>(s[3]));
    auto cmp = tests::compare_scaled(run_once(cm, in), run_once(cpu, in), 1e-4, 1e-5);
    BOOST_TEST(cmp.ok, to_string(s) << ": " << cmp.message);
  }
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string().find("CPU") != std::string::npos);
  BOOST_TEST(cm.get_property("RUNTIME_COMPILES").as<int>() == 2);
}

BOOST_AUTO_TEST_CASE(cost_placement_under_throughput_predicts_the_pipeline) {
  // THROUGHPUT: the placement minimizes the busiest hardware's load; the CPU and REFERENCE
  // share the cores, so they count as one, and the prediction gives the rate.
  Core core;
  auto model = core.read_model(chain_model());
  const fs::path dir = temp_file("dots_tput");
  fs::remove_all(dir);
  auto cm = core.compile_model(model, "HETERO:CPU,REFERENCE",
                               {{"HETERO_PLACEMENT", "COST"}, {"PERFORMANCE_HINT", "THROUGHPUT"},
                                {"HETERO_DUMP_GRAPH_DOT", dir.string()}});
  BOOST_TEST(run_chain(cm) == chain_expected(), boost::test_tools::per_element());
  std::ifstream in(dir / ("hetero_subgraphs_" + fs::path(chain_model()).stem().string() + ".dot"));
  const std::string dot((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BOOST_TEST(dot.find("with requests in flight one every") != std::string::npos, dot);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(nominal_cost_placement_times_nothing_and_moves_work_to_the_faster_device,
                     *tests::needs_case(tests::ppocr_cls)) {
  // COST_NOMINAL: a roofline of each device's nominal rates, nothing run. REFERENCE's plain
  // loops are rated far below oneDNN on any machine, so the CPU gets the convolutions.
  Core core;
  const auto cpu = tests::run_on_device(core, tests::ppocr_cls, "CPU");
  Model model = tests::read_case_model(core, tests::ppocr_cls);
  const AnyMap nominal{{"HETERO_PLACEMENT", "COST_NOMINAL"}};
  std::map<std::string, std::string> type_of;
  for (auto& op : model.get_ops()) type_of[op.get_friendly_name()] = op.get_type_name();
  int convs = 0, convs_on_cpu = 0;
  for (const auto& [op, p] : core.query_placement(model, "HETERO:REFERENCE,CPU", nominal)) {
    if (type_of[op] != "Conv") continue;
    BOOST_TEST(p.why.rfind("cost: ", 0) == 0, op << ": " << p.why);
    ++convs;
    convs_on_cpu += p.device == "CPU";
  }
  BOOST_TEST(convs > 10);
  BOOST_TEST(convs_on_cpu == convs);
  auto cm = core.compile_model(model, "HETERO:REFERENCE,CPU", nominal);
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string().find("CPU") != std::string::npos);
  auto cmp = tests::compare_scaled(tests::run_compiled(tests::ppocr_cls, cm), cpu, 1e-4, 1e-5);
  BOOST_TEST(cmp.ok, cmp.message);
}

BOOST_AUTO_TEST_CASE(complementary_devices_are_split_after_the_split_is_measured, *tests::needs_case(tests::ppocr_cls)) {
  // A device fast at convolutions that runs nothing else (the CPU with every other op type
  // excluded) beside one that runs everything slowly (REFERENCE): COST sends the convolutions
  // to the first, runs the split end to end against REFERENCE alone before taking it, and
  // keeps that verdict with the calibration in CACHE_DIR.
  Core core;
  const auto cpu = tests::run_on_device(core, tests::ppocr_cls, "CPU");
  Model model = tests::read_case_model(core, tests::ppocr_cls);
  std::set<std::string> others;
  std::map<std::string, std::string> type_of;
  for (auto& op : model.get_ops()) {
    type_of[op.get_friendly_name()] = op.get_type_name();
    if (op.get_type_name() != "Conv") others.insert(op.get_type_name());
  }
  std::string excluded;
  for (const auto& t : others) excluded += (excluded.empty() ? "" : ",") + t;
  const fs::path cache = temp_file("hetero_split_cache"), dir = temp_file("hetero_split_dots");
  fs::remove_all(cache);
  fs::remove_all(dir);
  const AnyMap props{{"HETERO_PLACEMENT", "COST"},
                     {"CACHE_DIR", cache.string()},
                     device_properties("CPU", {{"EXCLUDED_OPS", excluded}})};
  auto drawn = props;
  drawn["HETERO_DUMP_GRAPH_DOT"] = dir.string();
  auto cm = core.compile_model(model, "HETERO:REFERENCE,CPU", drawn);
  // Every tensor between subgraphs on two devices is labelled with its bytes and predicted time.
  fs::path picture;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("hetero_subgraphs_", 0) == 0) picture = e.path();
  BOOST_REQUIRE(!picture.empty());
  std::ifstream in(picture);
  int edges = 0;
  std::map<std::string, std::string> device_of; // "sg3" -> "CPU"
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  sg", 0) != 0) continue;
    const std::string from = line.substr(2, line.find(' ', 2) - 2);
    if (const auto at = line.find("label=\"subgraph "); at != std::string::npos) {
      const auto open = line.find('[', at), close = line.find(']', at);
      device_of[from] = line.substr(open + 1, close - open - 1);
    } else if (const auto arrow = line.find(" -> sg"); arrow != std::string::npos) {
      const std::string to = line.substr(arrow + 4, line.find(' ', arrow + 4) - arrow - 4);
      BOOST_REQUIRE((device_of.count(from) && device_of.count(to)));
      if (device_of[from] == device_of[to]) continue;
      ++edges;
      BOOST_TEST(line.find(" bytes to ") != std::string::npos, line);
    }
  }
  BOOST_TEST(edges > 20);
  BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == "REFERENCE,CPU");
  const auto prediction = cm.get_property("HETERO_PREDICTION").as_string();
  const auto at = prediction.find("; the split measured ");
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, prediction);
  BOOST_TEST(prediction.substr(prediction.size() - 7) == ": taken", prediction);
  auto cmp = tests::compare_scaled(tests::run_compiled(tests::ppocr_cls, cm), cpu, 1e-4, 1e-5);
  BOOST_TEST(cmp.ok, cmp.message);
  int convs = 0, on_cpu = 0;
  for (const auto& [op, p] : core.query_placement(model, "HETERO:REFERENCE,CPU", props)) {
    if (type_of[op] != "Conv") continue;
    ++convs;
    on_cpu += p.device == "CPU";
  }
  BOOST_TEST(on_cpu > convs / 2, on_cpu << " of " << convs << " convolutions on the CPU");
  // Compiled again: the costs and the verdict come from CACHE_DIR, the same figures.
  auto again = core.compile_model(model, "HETERO:REFERENCE,CPU", props);
  const auto kept = again.get_property("HETERO_PREDICTION").as_string();
  BOOST_TEST(kept.rfind("from the calibration kept in CACHE_DIR", 0) == 0, kept);
  BOOST_TEST(kept.substr(kept.find("; the split measured ")) == prediction.substr(at));
  fs::remove_all(cache);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(the_calibration_is_kept_in_cache_dir_and_a_damaged_one_is_made_again) {
  Core core;
  auto model = core.read_model(chain_model());
  const fs::path cache = temp_file("hetero_cost_cache"), dir = temp_file("dots_cache");
  fs::remove_all(cache);
  fs::remove_all(dir);
  const AnyMap props{{"HETERO_PLACEMENT", "COST"}, {"CACHE_DIR", cache.string()}, {"HETERO_DUMP_GRAPH_DOT", dir.string()}};
  const auto title = [&] {
    std::ifstream in(dir / ("hetero_subgraphs_" + fs::path(chain_model()).stem().string() + ".dot"));
    const std::string dot((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = dot.find("HETERO_PLACEMENT=COST: from ");
    return at == std::string::npos ? dot : dot.substr(at + 28, 40);
  };
  const auto kept = [&] {
    std::vector<fs::path> r;
    for (const auto& e : fs::directory_iterator(cache))
      if (e.path().extension() == ".hetero_costs") r.push_back(e.path());
    return r;
  };
  auto first = core.compile_model(model, "HETERO:CPU,REFERENCE", props);
  BOOST_TEST(title().rfind("calibration:", 0) == 0, title());
  BOOST_REQUIRE(kept().size() == 1);
  auto second = core.compile_model(model, "HETERO:CPU,REFERENCE", props);
  BOOST_TEST(title().rfind("the calibration kept in CACHE_DIR", 0) == 0, title());
  BOOST_TEST(run_chain(second) == chain_expected(), boost::test_tools::per_element());
  // The compiled model says what it predicted, per op by the names of its profiling rows.
  BOOST_TEST(second.get_property("HETERO_PREDICTION").as_string().rfind("from the calibration kept in CACHE_DIR: one request predicted", 0) == 0);
  std::istringstream lines(second.get_property("HETERO_PREDICTED_TIMES").as_string());
  int rows = 0;
  for (std::string line; std::getline(lines, line); ++rows) {
    const auto space = line.find(' ');
    BOOST_TEST((space != std::string::npos && std::atof(line.c_str()) > 0), line);
    const auto op = line.substr(space + 1);
    BOOST_TEST((op == "add" || op == "relu" || op == "mul" || op == "sub"), line);
  }
  BOOST_TEST(rows >= 1);
  auto priority = core.compile_model(model, "HETERO:CPU,REFERENCE");
  BOOST_TEST(priority.get_property("HETERO_PREDICTION").as_string().empty());
  BOOST_TEST(priority.get_property("HETERO_PREDICTED_TIMES").as_string().empty());
  // Another device order is another calibration.
  core.compile_model(model, "HETERO:REFERENCE,CPU", props);
  BOOST_TEST(title().rfind("calibration:", 0) == 0, title());
  BOOST_TEST(kept().size() == 2);
  // A damaged entry: ignored (a warning), measured again and written anew.
  for (const auto& p : kept()) {
    const auto size = static_cast<std::streamoff>(fs::file_size(p));
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(size - 12); // inside the kept verdict: only the checksum tells
    const char was = static_cast<char>(f.get());
    f.seekp(size - 12);
    f.put(static_cast<char>(~was));
  }
  core.compile_model(model, "HETERO:CPU,REFERENCE", props);
  BOOST_TEST(title().rfind("calibration:", 0) == 0, title());
  core.compile_model(model, "HETERO:CPU,REFERENCE", props);
  BOOST_TEST(title().rfind("the calibration kept in CACHE_DIR", 0) == 0, title());
  fs::remove_all(cache);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(a_bad_hetero_placement_is_named) {
  Core core;
  auto model = core.read_model(chain_model());
  BOOST_TEST(core.get_property("HETERO", "HETERO_PLACEMENT").as_string() == "PRIORITY");
  for (const char* device : {"HETERO:CPU,REFERENCE", "HETERO"}) {
    expect_error([&] { core.set_property(device, {{"HETERO_PLACEMENT", "FASTEST"}}); },
                 {"HETERO_PLACEMENT", "'FASTEST'", "PRIORITY", "COST"});
  }
  expect_error([&] { core.compile_model(model, "HETERO:CPU,REFERENCE", {{"HETERO_PLACEMENT", "cost"}}); },
               {"HETERO_PLACEMENT", "'cost'", "PRIORITY", "COST", "COST_NOMINAL"});
  expect_error([&] { core.query_model(model, "HETERO:CPU,REFERENCE", {{"HETERO_PLACEMENT", ""}}); },
               {"HETERO_PLACEMENT", "''"});
  core.set_property("HETERO", {{"HETERO_PLACEMENT", "COST"}});
  BOOST_TEST(core.get_property("HETERO", "HETERO_PLACEMENT").as_string() == "COST");
  // A device's own property does not take it.
  expect_error([&] { core.set_property("CPU", {{"HETERO_PLACEMENT", "COST"}}); }, {"HETERO_PLACEMENT"});
}
