// examples/openvino: OpenVINO's samples written on troupe/openvino.hpp, run as programs on CPU
// and, where a GPU is present (lavapipe in CI), on GPU, HETERO:GPU,CPU, MULTI:GPU,CPU and
// AUTO. Each one's outputs must equal what troupe's native API computes for the same input.
#define BOOST_TEST_MODULE openvino_examples_tests
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/gpu_env.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/test_data.hpp"

using namespace troupe;
namespace utf = boost::unit_test;
namespace tt = boost::test_tools;
namespace fs = std::filesystem;

namespace {

const char* const cls_name = "ch_ppocr_mobile_v2.0_cls_infer";
std::string cls_path() { return tests::data_path(std::string("models/") + cls_name + ".onnx").string(); }

/// The samples' folder: TROUPE_OV_EXAMPLES_DIR (tests/install/check_install.sh points it at the
/// samples built against the installed package), else beside this test (the build tree's).
fs::path examples_dir() {
  if (const char* d = std::getenv("TROUPE_OV_EXAMPLES_DIR"); d && *d) return d;
  return fs::read_symlink("/proc/self/exe").parent_path();
}

/// ov_<name> with `args`: its output; a failed run fails the case.
std::string run_example(const std::string& name, const std::string& args) {
  const auto bin = examples_dir() / ("ov_" + name);
  BOOST_TEST_REQUIRE(fs::exists(bin), bin.string() << " does not exist");
  const auto r = tests::run_command(bin.string() + " " + args + " 2>&1");
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST_REQUIRE(r->code == 0, "ov_" << name << " " << args << " exited with " << r->code << ":\n" << r->out);
  return r->out;
}

using scores = std::vector<float>;

/// Each "result...: v v v" line: its label (text before the colon) and values.
std::vector<std::pair<std::string, scores>> results(const std::string& out) {
  std::vector<std::pair<std::string, scores>> r;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("result", 0) != 0) continue;
    const auto colon = line.find(':');
    std::istringstream values(line.substr(colon + 1));
    scores s;
    for (float v; values >> v;) s.push_back(v);
    r.emplace_back(line.substr(0, colon), s);
  }
  return r;
}

// ---- the same computations through troupe's own API ----------------------------------------

/// The synthetic NHWC u8 frame of the classification samples, image `seed`.
Tensor frame(int seed) {
  Tensor t(element_type::u8, {1, 48, 192, 3});
  auto* p = t.data<uint8_t>();
  for (int h = 0; h < 48; ++h)
    for (int w = 0; w < 192; ++w)
      for (int c = 0; c < 3; ++c) p[(h * 192 + w) * 3 + c] = static_cast<uint8_t>((31 * h + 17 * w + 59 * c + 101 * seed) % 256);
  return t;
}

scores outputs_of(InferRequest& request) {
  Tensor y = request.get_output_tensor(0);
  return scores(y.data<float>(), y.data<float>() + y.get_size());
}

/// hello_classification (bgr_to_rgb) and async_classification (without) on `device`.
scores native_classification(const std::string& device, int seed, bool bgr_to_rgb) {
  Core core;
  Model model = core.read_model(cls_path());
  preprocess::PrePostProcessor ppp(model);
  auto& tensor = ppp.input().tensor().set_shape(PartialShape{1, 48, 192, 3}).set_element_type(element_type::u8)
                     .set_layout("NHWC");
  if (bgr_to_rgb) tensor.set_color_format(preprocess::ColorFormat::BGR);
  auto& steps = ppp.input().preprocess().convert_element_type(element_type::f32);
  if (bgr_to_rgb) steps.convert_color(preprocess::ColorFormat::RGB);
  steps.mean(127.5f).scale(127.5f);
  ppp.input().model().set_layout("NCHW");
  if (bgr_to_rgb) ppp.output().tensor().set_element_type(element_type::f32);
  model = ppp.build();
  auto request = core.compile_model(model, device).create_infer_request();
  request.set_input_tensor(frame(seed));
  request.infer();
  return outputs_of(request);
}

/// The benchmark, HETERO and MULTI samples' model: 1x3x48x192, element i = (i mod 255) / 127.5 - 1.
Model plain_model(Core& core) {
  Model model = core.read_model(cls_path());
  model.reshape({{model.input().get_any_name(), PartialShape{1, 3, 48, 192}}});
  return model;
}

scores native_plain(Core& core, const Model& model, const std::string& device) {
  auto request = core.compile_model(model, device).create_infer_request();
  Tensor x = request.get_input_tensor(0);
  for (int64_t i = 0; i < x.get_size(); ++i) x.data<float>()[i] = static_cast<float>(i % 255) / 127.5f - 1.0f;
  request.infer();
  return outputs_of(request);
}

scores native_plain(const std::string& device) {
  Core core;
  return native_plain(core, plain_model(core), device);
}

/// hetero_affinity's placement: what `first` supports there, the rest (and `forced`) on `last`.
scores native_hetero(const std::string& first, const std::string& last, const std::string& forced) {
  Core core;
  Model model = plain_model(core);
  const auto supported = core.query_model(model, first);
  for (auto& op : model.get_ops()) {
    auto it = supported.find(op.get_friendly_name());
    op.get_rt_info()["affinity"] = it != supported.end() && op.get_type_name() != forced ? it->second : last;
  }
  return native_plain(core, model, first == last ? "HETERO:" + first : "HETERO:" + first + "," + last);
}

/// Each result must be one of `allowed` (a MULTI or AUTO request runs on one of its devices).
void check_among(const std::string& out, const std::vector<scores>& allowed, std::size_t expected_results) {
  const auto got = results(out);
  BOOST_TEST(got.size() == expected_results, out);
  for (const auto& [label, s] : got) {
    bool found = false;
    for (const auto& a : allowed) found = found || s == a;
    BOOST_TEST(found, label << " is none of the native outputs:\n" << out);
  }
}

void check_equal(const std::string& out, const scores& native) {
  const auto got = results(out);
  BOOST_TEST_REQUIRE(got.size() == 1u, out);
  BOOST_TEST(got[0].second == native, tt::per_element());
}

/// Every sample on one device string: the same outputs as the native API's on it.
void samples_on(const std::string& device) {
  const std::string model = cls_path();
  BOOST_TEST_CONTEXT("hello_classification on " << device) {
    check_equal(run_example("hello_classification", model + " " + device), native_classification(device, 0, true));
  }
  BOOST_TEST_CONTEXT("async_classification on " << device) {
    const auto out = run_example("async_classification", model + " " + device + " 12");
    BOOST_TEST(out.find("Completed 12 async requests") != std::string::npos, out);
    const auto got = results(out);
    BOOST_TEST(got.size() >= 2u, out);
    for (const auto& [label, s] : got) {
      const int r = std::stoi(label.substr(label.rfind(' ') + 1));
      BOOST_TEST(s == native_classification(device, r, false), tt::per_element());
    }
  }
  const scores plain = native_plain(device);
  BOOST_TEST_CONTEXT("sync_benchmark on " << device) {
    const auto out = run_example("sync_benchmark", model + " " + device + " 5");
    BOOST_TEST(out.find("Count:      5 iterations") != std::string::npos, out);
    check_equal(out, plain);
  }
  BOOST_TEST_CONTEXT("throughput_benchmark on " << device) {
    const auto out = run_example("throughput_benchmark", model + " " + device + " 12");
    BOOST_TEST(out.find("Count:      12 iterations") != std::string::npos, out);
    check_equal(out, plain);
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(query_device_lists_every_property) {
  const auto out = run_example("hello_query_device", "");
  BOOST_TEST(out.find("troupe") != std::string::npos);
  Core core;
  for (const auto& device : core.available_devices()) {
    BOOST_TEST_CONTEXT(device) {
      BOOST_TEST(out.find("\n" + device + "\n") != std::string::npos, out);
      const auto writable = core.writable_property_names(device);
      for (const auto& p : core.get_property(device, "SUPPORTED_PROPERTIES").as<std::vector<std::string>>()) {
        if (p == "SUPPORTED_PROPERTIES") continue;
        const bool rw = std::find(writable.begin(), writable.end(), p) != writable.end();
        const std::string value = core.get_property(device, p).as_string();
        const std::string line = "\t\t" + p + (rw ? " (RW)" : " (RO)") + " : " + (value.empty() ? "\"\"" : value) + "\n";
        BOOST_TEST(out.find(line) != std::string::npos, "no line '" << line << "' in:\n" << out);
      }
    }
  }
  BOOST_TEST(out.find("NUM_STREAMS (RW)") != std::string::npos);
  BOOST_TEST(out.find("FULL_DEVICE_NAME (RO)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(samples_on_cpu, *tests::needs_models({cls_name})) { samples_on("CPU"); }

BOOST_AUTO_TEST_CASE(hetero_and_multi_on_cpu, *tests::needs_models({cls_name})) {
  const std::string model = cls_path();
  const auto hetero = run_example("hetero_affinity", model + " CPU");
  BOOST_TEST(hetero.find("affinity CPU:") != std::string::npos, hetero);
  check_equal(hetero, native_hetero("CPU", "CPU", ""));
  check_equal(hetero, native_plain("CPU")); // one device: HETERO changes nothing

  const auto multi = run_example("multi_priorities", model + " CPU 4");
  check_among(multi, {native_plain("CPU")}, 8);
  BOOST_TEST(multi.find("refused: ") != std::string::npos, multi);
  BOOST_TEST(multi.find("REFERENCE") != std::string::npos, multi);
}

BOOST_AUTO_TEST_CASE(samples_on_gpu, *utf::precondition(tests::gpu_present()) * tests::needs_models({cls_name})) {
  samples_on("GPU");
}

BOOST_AUTO_TEST_CASE(hetero_gpu_cpu, *utf::precondition(tests::gpu_present()) * tests::needs_models({cls_name})) {
  const auto out = run_example("hetero_affinity", cls_path() + " GPU,CPU Softmax");
  BOOST_TEST(out.find("affinity CPU:") != std::string::npos, out);
  BOOST_TEST(out.find("affinity GPU") != std::string::npos, out);
  check_equal(out, native_hetero("GPU", "CPU", "Softmax"));
}

BOOST_AUTO_TEST_CASE(multi_gpu_cpu_and_auto, *utf::precondition(tests::gpu_present()) * tests::needs_models({cls_name})) {
  const std::vector<scores> either{native_plain("GPU"), native_plain("CPU")};
  const auto multi = run_example("multi_priorities", cls_path() + " GPU,CPU 6");
  check_among(multi, either, 12);
  BOOST_TEST(multi.find("refused: ") != std::string::npos, multi);
  // The order printed after the change is the reverse of the one before.
  std::vector<std::string> orders;
  std::istringstream lines(multi);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("priorities: ", 0) == 0) orders.push_back(line.substr(12));
  BOOST_TEST_REQUIRE(orders.size() == 3u, multi);
  BOOST_TEST(orders[0] != orders[1]);
  BOOST_TEST(orders[1] == orders[2]); // the refused change left it as it was

  const auto hello_auto = run_example("hello_classification", cls_path() + " AUTO");
  check_among(hello_auto, {native_classification("GPU", 0, true), native_classification("CPU", 0, true)}, 1);
  const auto hello_multi = run_example("hello_classification", cls_path() + " MULTI:GPU,CPU");
  check_among(hello_multi, {native_classification("GPU", 0, true), native_classification("CPU", 0, true)}, 1);
}
