// troupe/openvino.hpp: OpenVINO's spellings reach troupe's API with troupe's names and values,
// and every error is an ov::Exception naming what was wrong.
#define BOOST_TEST_MODULE openvino_api_tests
#include <boost/test/unit_test.hpp>
#include <cstring>

#include <troupe/openvino.hpp>
#include <troupe/troupe.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <type_traits>

#include <unistd.h>

#include "benchmarks/tiny_onnx.hpp"

namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("troupe_openvino_api_tests_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

/// y = a + b over [1, 8].
std::string add_model() { return troupe::tiny_onnx::write_add_model(temp_path("add.onnx")); }

/// y = x * 2 with x of shape [?, 4].
std::string dynamic_model() {
  troupe::tiny_onnx::model_builder b;
  b.input("x", {-1, 4}).output("y", {-1, 4}).float_initializer("two", {1}, {2.0f});
  b.node("Mul", {"x", "two"}, {"y"}, "mul");
  return b.write(temp_path("dynamic.onnx"));
}

/// y = x + 0 over [1, 3, 2, 2] (NCHW): what preprocessing feeds.
std::string image_model() {
  troupe::tiny_onnx::model_builder b;
  b.input("x", {1, 3, 2, 2}).output("y", {1, 3, 2, 2}).float_initializer("zero", {1}, {0.0f});
  b.node("Add", {"x", "zero"}, {"y"}, "add");
  return b.write(temp_path("image.onnx"));
}

ov::Tensor filled(const ov::Shape& shape, float start) {
  ov::Tensor t(ov::element::f32, shape);
  for (std::size_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
  return t;
}

/// `f` throws ov::Exception whose message holds every piece.
void expect_ov_error(const std::function<void()>& f, const std::vector<std::string>& pieces) {
  try {
    f();
  } catch (const ov::Exception& e) {
    const std::string msg = e.what();
    for (const auto& p : pieces) BOOST_TEST(msg.find(p) != std::string::npos, "'" << msg << "' lacks '" << p << "'");
    return;
  }
  BOOST_ERROR("no ov::Exception thrown");
}

template <class T> std::string printed(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

const char* kind_of(ov::element::Type t) {
  switch (t) {
  case ov::element::f32: return "float";
  case ov::element::u8: return "byte";
  case ov::element::Type_t::i64: return "long";
  default: return "other";
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(element_types_switch_and_convert) {
  BOOST_TEST(kind_of(ov::element::f32) == "float");
  BOOST_TEST(kind_of(ov::element::u8) == "byte");
  BOOST_TEST(kind_of(ov::element::i64) == "long");
  BOOST_TEST(kind_of(ov::element::bf16) == "other");
  static_assert(std::is_same_v<ov::fundamental_type_for<ov::element::f32>, float>);
  static_assert(std::is_same_v<ov::fundamental_type_for<ov::element::i64>, int64_t>);
  static_assert(ov::element::from<uint8_t>() == ov::element::u8);
  // The same values troupe uses: no translation table between them.
  BOOST_TEST((static_cast<troupe::element_type>(ov::element::f16) == troupe::element_type::f16));
  BOOST_TEST(ov::element::Type(troupe::element_type::bf16) == ov::element::bf16);
  BOOST_TEST(ov::element::f32.size() == 4u);
  BOOST_TEST(ov::element::f16.bitwidth() == 16u);
  BOOST_TEST(ov::element::f32.is_real());
  BOOST_TEST(!ov::element::i32.is_real());
  BOOST_TEST(ov::element::i32.is_signed());
  BOOST_TEST(!ov::element::u8.is_signed());
  BOOST_TEST(printed(ov::element::bf16) == "bf16");
  BOOST_TEST(ov::element::Type("float32") == ov::element::f32);
  BOOST_TEST(ov::Any(ov::element::bf16).as<ov::element::Type>() == ov::element::bf16);
  BOOST_TEST(float(ov::float16(1.5f)) == 1.5f);
  BOOST_TEST(float(ov::bfloat16(-2.0f)) == -2.0f);
  expect_ov_error([] { ov::element::Type("f33"); }, {"f33"});
}

BOOST_AUTO_TEST_CASE(typed_properties_make_troupes_pairs) {
  using ov::hint::PerformanceMode;
  auto pm = ov::hint::performance_mode(PerformanceMode::CUMULATIVE_THROUGHPUT);
  BOOST_TEST(pm.first == "PERFORMANCE_HINT");
  BOOST_TEST(pm.second.as_string() == "CUMULATIVE_THROUGHPUT");
  BOOST_TEST(ov::hint::inference_precision(ov::element::bf16).second.as_string() == "bf16");
  BOOST_TEST(ov::hint::inference_precision.name() == std::string(troupe::inference_precision));
  auto nr = ov::hint::num_requests(4);
  BOOST_TEST(nr.first == std::string(troupe::num_requests));
  BOOST_TEST(nr.second.as_string() == "4");
  BOOST_TEST(ov::hint::model_priority(ov::hint::Priority::HIGH).second.as_string() == "HIGH");
  BOOST_TEST(ov::hint::model_priority.name() == std::string("MODEL_PRIORITY"));
  auto pr = ov::device::priorities("GPU", std::string("CPU"));
  BOOST_TEST(pr.first == std::string(troupe::device_priorities));
  BOOST_TEST(pr.second.as_string() == "GPU,CPU");
  auto dp = ov::device::properties("CPU", ov::num_streams(2), ov::enable_profiling(true));
  auto native = troupe::device_properties("CPU", {troupe::num_streams(2), troupe::enable_profiling(true)});
  BOOST_TEST(dp.first == native.first);
  BOOST_TEST(dp.second.as_string() == native.second.as_string());
  BOOST_TEST(ov::streams::num(ov::streams::AUTO).second.as_string() == "AUTO");
  BOOST_TEST(ov::num_streams(3).first == std::string(troupe::num_streams));
  BOOST_TEST(ov::num_streams(3).second.as_string() == "3");
  BOOST_TEST(ov::enable_profiling(true).first == std::string(troupe::enable_profiling));
  BOOST_TEST(ov::enable_profiling(true).second.as_string() == "YES");
  BOOST_TEST(ov::inference_num_threads(1).first == std::string(troupe::inference_num_threads));
  BOOST_TEST(ov::cache_dir("/tmp/c").first == std::string(troupe::cache_dir));
  BOOST_TEST(ov::device::full_name.name() == std::string(troupe::full_device_name));
  BOOST_TEST(ov::optimal_number_of_infer_requests.name() == std::string(troupe::optimal_number_of_infer_requests));
  BOOST_TEST(ov::execution_devices.name() == std::string(troupe::execution_devices));
  BOOST_TEST(ov::available_devices.name() == std::string(troupe::available_devices));
  BOOST_TEST(ov::supported_properties.name() == std::string(troupe::supported_properties));
  BOOST_TEST((ov::supported_properties.mutability() == ov::PropertyMutability::RO));
  // Values read back as OpenVINO's types.
  BOOST_TEST((ov::Any("THROUGHPUT").as<PerformanceMode>() == PerformanceMode::THROUGHPUT));
  BOOST_TEST(ov::Any("AUTO").as<ov::streams::Num>() == ov::streams::AUTO);
  BOOST_TEST(ov::Any("4").as<ov::streams::Num>() == 4);
  BOOST_TEST(ov::Any("YES").as<bool>());
  BOOST_TEST(ov::Any(std::size_t{7}).as<std::size_t>() == 7u);
  BOOST_TEST((ov::Any("FP32 BF16").as<std::vector<std::string>>() == std::vector<std::string>{"FP32", "BF16"}));
  BOOST_TEST(ov::Any("12").is<int>());
  BOOST_TEST(!ov::Any("twelve").is<int>());
  expect_ov_error([] { ov::Any("FAST").as<PerformanceMode>(); }, {"'FAST'", "LATENCY", "THROUGHPUT"});
  expect_ov_error([] { ov::Any("many").as<int>(); }, {"many"});
}

BOOST_AUTO_TEST_CASE(properties_reach_the_device) {
  ov::Core core;
  auto model = core.read_model(add_model());
  auto compiled = core.compile_model(model, "CPU", ov::hint::performance_mode(ov::hint::PerformanceMode::LATENCY),
                                     ov::inference_num_threads(1), ov::enable_profiling(true));
  BOOST_TEST(compiled.get_property(ov::enable_profiling));
  BOOST_TEST((compiled.get_property(ov::hint::performance_mode) == ov::hint::PerformanceMode::LATENCY));
  BOOST_TEST(compiled.get_property(ov::inference_num_threads) == 1);
  static_assert(std::is_same_v<decltype(compiled.get_property(ov::optimal_number_of_infer_requests)), uint32_t>);
  BOOST_TEST(compiled.get_property(ov::optimal_number_of_infer_requests) == 1u);
  BOOST_TEST(compiled.get_property(ov::num_streams) == 1);
  BOOST_TEST((compiled.get_property(ov::execution_devices) == std::vector<std::string>{"CPU"}));
  // The same through troupe's own API: one compiled model under both spellings.
  BOOST_TEST(compiled.troupe_compiled_model().get_property("PERF_COUNT").as<bool>());

  // An AnyMap works as the variadic form does.
  auto by_map = core.compile_model(model, "CPU", ov::AnyMap{{ov::num_streams.name(), 2}});
  BOOST_TEST(by_map.get_property(ov::num_streams) == 2);

  // Core defaults per device, with typed keys.
  core.set_property("CPU", ov::streams::num(2), ov::hint::inference_precision(ov::element::f32));
  BOOST_TEST(core.get_property("CPU", ov::streams::num) == 2);
  BOOST_TEST(core.get_property("CPU", ov::hint::inference_precision) == ov::element::f32);
  auto defaulted = core.compile_model(add_model(), "CPU");
  BOOST_TEST(defaulted.get_property(ov::num_streams) == 2);

  expect_ov_error([&] { core.compile_model(model, "CPU", ov::hint::model_priority(ov::hint::Priority::HIGH)); },
                  {"MODEL_PRIORITY"});
  expect_ov_error([&] { core.set_property("CPU", ov::hint::num_requests(0), ov::streams::num(-5)); }, {"NUM_STREAMS"});
  expect_ov_error([&] { compiled.set_property(ov::enable_profiling(false)); }, {"PERF_COUNT"});
  expect_ov_error([&] { core.compile_model(model, "NPU"); }, {"NPU"});
}

BOOST_AUTO_TEST_CASE(device_queries) {
  ov::Core core;
  auto devices = core.get_available_devices();
  BOOST_TEST((devices == core.troupe_core().available_devices()));
  const std::string name = core.get_property("CPU", ov::device::full_name);
  BOOST_TEST(name == core.troupe_core().get_property("CPU", "FULL_DEVICE_NAME").as_string());
  BOOST_TEST(!core.get_property("CPU", ov::device::capabilities).empty());
  for (const std::string device : {"CPU", "HETERO:CPU", "MULTI:CPU"}) {
    BOOST_TEST_CONTEXT(device) {
      std::vector<ov::PropertyName> props = core.get_property(device, ov::supported_properties);
      BOOST_TEST(!props.empty());
      bool saw_name = false, saw_rw = false;
      for (const auto& p : props) {
        // Every property a device lists is readable. (A virtual device lists what it hands on
        // to its devices too, which troupe's get_property does not answer for it.)
        if (device == "CPU") (void)core.get_property(device, p);
        if (p == "FULL_DEVICE_NAME") {
          saw_name = true;
          BOOST_TEST(!p.is_mutable());
        }
        if (p == "NUM_STREAMS" || p == "DEVICE_PRIORITIES") {
          saw_rw = true;
          BOOST_TEST(p.is_mutable());
        }
      }
      BOOST_TEST(saw_name);
      BOOST_TEST(saw_rw);
    }
  }
  auto versions = core.get_versions("CPU");
  BOOST_TEST(versions.count("CPU") == 1u);
  BOOST_TEST(std::string(versions["CPU"].buildNumber) == troupe::version());
  const auto v = ov::get_openvino_version();
  BOOST_TEST(std::string(v.buildNumber) == TROUPE_VERSION_STRING);
  BOOST_TEST(std::string(v.description).find("troupe") != std::string::npos);
  expect_ov_error([&] { core.get_versions("NPU"); }, {"NPU"});
  expect_ov_error([&] { core.get_property("CPU", "NO_SUCH_KEY"); }, {"NO_SUCH_KEY", "CPU"});
  expect_ov_error([] { ov::Core c("plugins.xml"); }, {"plugins.xml"});
}

BOOST_AUTO_TEST_CASE(ports_by_name_index_and_port) {
  ov::Core core;
  std::shared_ptr<ov::Model> model = core.read_model(add_model());
  BOOST_TEST(model->inputs().size() == 2u);
  BOOST_TEST(model->input("b").get_index() == 1u);
  BOOST_TEST(model->input(1).get_any_name() == "b");
  BOOST_TEST(model->output().get_any_name() == "y");
  BOOST_TEST((model->output(0).get_names() == std::unordered_set<std::string>{"y"}));
  BOOST_TEST(model->input(0).get_element_type() == ov::element::f32);
  BOOST_TEST((model->input(0).get_shape() == ov::Shape{1, 8}));
  BOOST_TEST((model->input(0).get_partial_shape() == ov::PartialShape{1, 8}));
  std::shared_ptr<const ov::Model> constant = model;
  ov::Output<const ov::Node> const_port = constant->input("a");
  BOOST_TEST(const_port.get_index() == 0u);
  expect_ov_error([&] { model->input(); }, {"one input", "2"});
  expect_ov_error([&] { model->input("c"); }, {"'c'"});

  auto compiled = core.compile_model(model, "CPU");
  BOOST_TEST(compiled.input("b").get_index() == 1u);
  BOOST_TEST(compiled.output().get_any_name() == "y");
  expect_ov_error([&] { compiled.input("zz"); }, {"'zz'", "'a'", "'b'"});

  auto request = compiled.create_infer_request();
  request.set_tensor(compiled.input(0), filled({1, 8}, 1));    // by port
  request.set_input_tensor(1, filled({1, 8}, 100));             // by index
  request.infer();
  auto y = request.get_tensor(compiled.output());
  BOOST_TEST(y.data<float>()[3] == 1 + 3 + 100 + 3);
  BOOST_TEST(y.shares_buffer(request.get_tensor("y")));        // by name: the same tensor
  BOOST_TEST(y.shares_buffer(request.get_output_tensor()));
  BOOST_TEST(request.get_tensor(model->input("b")).data<float>()[0] == 100.0f); // by the model's port
  // An output the application set receives the results.
  ov::Tensor mine(ov::element::f32, {1, 8});
  request.set_output_tensor(mine);
  request.infer();
  BOOST_TEST(mine.data<float>()[0] == 101.0f);
  expect_ov_error([&] { request.set_tensor("a", ov::Tensor(ov::element::i64, {1, 8})); }, {"'a'", "i64"});
  expect_ov_error([&] { request.get_input_tensor(); }, {"one input"});
  BOOST_TEST(request.get_compiled_model().input(1).get_any_name() == "b");
}

BOOST_AUTO_TEST_CASE(a_new_request_infers_with_allocated_inputs) {
  ov::Core core;
  auto compiled = core.compile_model(add_model(), "CPU");
  auto request = compiled.create_infer_request();
  request.infer(); // as OpenVINO: static inputs come allocated (zeros)
  auto y = request.get_output_tensor(0);
  for (std::size_t i = 0; i < 8; ++i) BOOST_TEST(y.data<float>()[i] == 0.0f);
  // Filling the request's own tensor in place is what the next inference reads.
  auto a = request.get_input_tensor(0);
  a.data<float>()[2] = 5;
  request.infer();
  BOOST_TEST(request.get_output_tensor(0).data<float>()[2] == 5.0f);

  auto dynamic = core.compile_model(dynamic_model(), "CPU").create_infer_request();
  expect_ov_error([&] { dynamic.infer(); }, {"'x'", "not set"});
}

BOOST_AUTO_TEST_CASE(reshape_by_name_port_and_index) {
  ov::Core core;
  auto model = core.read_model(dynamic_model());
  BOOST_TEST(model->input().get_partial_shape().is_dynamic());
  BOOST_TEST(printed(model->input().get_partial_shape()) == "[?,4]");
  model->reshape({{model->input(), ov::PartialShape{3, 4}}});
  BOOST_TEST((model->input().get_partial_shape() == ov::PartialShape{3, 4}));
  BOOST_TEST((model->output().get_shape() == ov::Shape{3, 4}));
  model->reshape(std::map<std::size_t, ov::PartialShape>{{0, ov::PartialShape{5, 4}}});
  BOOST_TEST((model->input().get_shape() == ov::Shape{5, 4}));
  model->reshape({{"x", ov::PartialShape{2, 4}}});
  BOOST_TEST((model->input().get_shape() == ov::Shape{2, 4}));
  model->reshape(ov::PartialShape{{ov::Dimension::dynamic(), 4}});
  BOOST_TEST(model->input().get_partial_shape()[0].is_dynamic());
  model->reshape(ov::PartialShape{6, 4});
  BOOST_TEST((model->input().get_shape() == ov::Shape{6, 4}));
  expect_ov_error([&] { model->reshape({{model->output(), ov::PartialShape{1, 4}}}); }, {"'y'", "output"});
  expect_ov_error([&] { model->reshape(std::map<std::size_t, ov::PartialShape>{{3, ov::PartialShape{1, 4}}}); },
                  {"#3"});
  expect_ov_error([&] { model->reshape({{"nope", ov::PartialShape{1, 4}}}); }, {"'nope'"});

  // A bounded dimension, as OpenVINO's: the model keeps it, a request outside it is refused
  // by name, one inside runs.
  model->reshape({{"x", ov::PartialShape{ov::Dimension(2, 5), 4}}});
  BOOST_TEST(printed(model->input().get_partial_shape()) == "[2..5,4]");
  {
    auto bounded = core.compile_model(model, "CPU");
    BOOST_TEST(printed(bounded.input().get_partial_shape()) == "[2..5,4]");
    auto r = bounded.create_infer_request();
    expect_ov_error([&] { r.set_input_tensor(filled({6, 4}, 0)); }, {"'x'", "[2..5,4]", "[6,4]", "dimension 0", "2..5"});
    expect_ov_error([&] { r.set_input_tensor(filled({1, 4}, 0)); }, {"'x'", "dimension 0 is 1"});
    r.set_input_tensor(filled({5, 4}, 0));
    r.infer();
    BOOST_TEST(r.get_output_tensor().data<float>()[19] == 38.0f);
  }
  model->reshape(ov::PartialShape{6, 4});
  // The reshaped model compiles static and runs.
  auto request = core.compile_model(model, "CPU").create_infer_request();
  request.set_input_tensor(filled({6, 4}, 0));
  request.infer();
  BOOST_TEST(request.get_output_tensor().data<float>()[23] == 46.0f);
}

BOOST_AUTO_TEST_CASE(shapes_layouts_and_printing) {
  BOOST_TEST(printed(ov::Shape{1, 3, 48, 192}) == "[1,3,48,192]");
  BOOST_TEST(printed(ov::PartialShape{1, 3, -1, ov::Dimension()}) == "[1,3,?,?]");
  BOOST_TEST(printed(ov::Dimension()) == "?");
  BOOST_TEST(printed(ov::Dimension(7)) == "7");
  BOOST_TEST(ov::shape_size(ov::Shape{2, 3, 4}) == 24u);
  BOOST_TEST(ov::PartialShape::dynamic().rank().is_dynamic());
  BOOST_TEST(ov::PartialShape::dynamic(3).size() == 3u);
  BOOST_TEST((ov::PartialShape("[1,3,?,?]") == ov::PartialShape{1, 3, -1, -1}));
  BOOST_TEST(ov::Dimension(4, 4).get_length() == 4);
  BOOST_TEST(printed(ov::Dimension(1, 10)) == "1..10");
  BOOST_TEST(printed(ov::Dimension(2, -1)) == "2..");
  BOOST_TEST(printed(ov::Dimension(0, 8)) == "..8");
  BOOST_TEST(printed(ov::Dimension(0, -1)) == "?");
  BOOST_TEST(ov::Dimension(1, 10).is_dynamic());
  BOOST_TEST(ov::Dimension(1, 10).get_min_length() == 1);
  BOOST_TEST(ov::Dimension(1, 10).get_max_length() == 10);
  BOOST_TEST(ov::Dimension().get_max_length() == -1);
  BOOST_TEST(ov::Dimension(1, 10).compatible(10));
  BOOST_TEST(!ov::Dimension(1, 10).compatible(11));
  BOOST_TEST(ov::Dimension(1, 10).compatible(ov::Dimension(8, -1)));
  BOOST_TEST(!(ov::Dimension(1, 10) == ov::Dimension()));
  BOOST_TEST((ov::PartialShape("[1,1..64,..8,4..]") ==
              ov::PartialShape{1, ov::Dimension(1, 64), ov::Dimension(0, 8), ov::Dimension(4, -1)}));
  BOOST_TEST(printed(ov::PartialShape{1, ov::Dimension(1, 64)}) == "[1,1..64]");
  expect_ov_error([] { ov::Dimension(5, 3); }, {"5, 3", "empty"});
  expect_ov_error([] { (void)ov::Dimension(1, 10).get_length(); }, {"1..10"});
  expect_ov_error([] { (void)ov::PartialShape{1, -1}.to_shape(); }, {"[1,?]"});
  expect_ov_error([] { (void)ov::Dimension().get_length(); }, {"dynamic"});

  ov::Layout nchw("NCHW");
  BOOST_TEST(printed(nchw) == "[N,C,H,W]");
  BOOST_TEST(ov::layout::has_batch(nchw));
  BOOST_TEST(ov::layout::channels_idx(nchw) == 1);
  BOOST_TEST(ov::layout::width_idx(ov::Layout("NHWC")) == 2);
  BOOST_TEST(!ov::layout::has_depth(nchw));
  expect_ov_error([] { ov::layout::height_idx(ov::Layout("NC")); }, {"[N,C]", "'H'"});
}

BOOST_AUTO_TEST_CASE(tensors) {
  ov::Tensor t(ov::element::f32, {2, 3});
  static_assert(std::is_same_v<decltype(t.get_shape()), ov::Shape>);
  BOOST_TEST((t.get_shape() == ov::Shape{2, 3}));
  BOOST_TEST(t.get_element_type() == ov::element::f32);
  BOOST_TEST(t.get_byte_size() == 24u);
  BOOST_TEST((t.get_strides() == ov::Strides{12, 4}));
  BOOST_TEST(static_cast<bool>(t));
  BOOST_TEST(!ov::Tensor());
  auto before = t;
  t.set_shape({3, 2}); // same count: same buffer
  BOOST_TEST(t.shares_buffer(before));
  t.set_shape({4, 4});
  BOOST_TEST(t.get_size() == 16u);
  float host[6] = {};
  ov::Tensor wrapped(ov::element::f32, {2, 3}, host);
  wrapped.data<float>()[5] = 9;
  BOOST_TEST(host[5] == 9.0f);
  expect_ov_error([&] { ov::Tensor(ov::element::f32, {2, 3}, host, ov::Strides{24, 4}); }, {"strides"});
}

BOOST_AUTO_TEST_CASE(checks_and_errors) {
  int x = 3;
  expect_ov_error([&] { OPENVINO_ASSERT(x == 2, "x is ", x); }, {"Check 'x == 2' failed", "x is 3"});
  expect_ov_error([&] { OPENVINO_THROW("bad ", 42); }, {"bad 42"});
  OPENVINO_ASSERT(x == 3); // holds: no throw
  try {
    ov::Core().read_model("/no/such/model.onnx");
    BOOST_ERROR("read_model of a missing file did not throw");
  } catch (const ov::Exception& e) {
    BOOST_TEST(std::string(e.what()).find("/no/such/model.onnx") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(read_model_forms) {
  ov::Core core;
  const auto path = add_model();
  // An ONNX model and a .bin: the .bin is unused, as OpenVINO does for ONNX.
  BOOST_TEST(core.read_model(path, "unused.bin")->inputs().size() == 2u);
  // From memory: ONNX bytes and an empty weights tensor.
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  BOOST_TEST(core.read_model(bytes, ov::Tensor())->outputs().size() == 1u);
  expect_ov_error([&] { core.read_model(bytes, ov::Tensor(ov::element::u8, {16})); }, {"ONNX", "empty", "16 bytes"});
  // OpenVINO IR: written by ov::save_model / ov::serialize, read back from files and from memory.
  const auto dir = std::filesystem::temp_directory_path() / ("ov_api_ir_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto model = core.read_model(path);
  ov::save_model(model, (dir / "add.xml").string());
  ov::serialize(model, (dir / "other.xml").string(), (dir / "other_weights.bin").string());
  BOOST_TEST(core.read_model((dir / "add.xml").string())->inputs().size() == 2u);
  BOOST_TEST(core.read_model((dir / "other.xml").string(), (dir / "other_weights.bin").string())->outputs().size() == 1u);
  std::ifstream xf(dir / "add.xml", std::ios::binary), bf(dir / "add.bin", std::ios::binary);
  const std::string xml((std::istreambuf_iterator<char>(xf)), std::istreambuf_iterator<char>());
  const std::string bin((std::istreambuf_iterator<char>(bf)), std::istreambuf_iterator<char>());
  ov::Tensor weights(ov::element::u8, {bin.size()});
  if (!bin.empty()) std::memcpy(weights.data(), bin.data(), bin.size());
  BOOST_TEST(core.read_model(xml, bin.empty() ? ov::Tensor() : weights)->inputs().size() == 2u);
  std::filesystem::remove_all(dir);
  // A layout in a port's rt_info is what ov::layout::get_layout gives.
  const std::string with_layout =
      "<?xml version=\"1.0\"?><net name=\"l\" version=\"11\"><layers>"
      "<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data shape=\"1,3,2,2\" element_type=\"f32\"/>"
      "<output><port id=\"0\" precision=\"FP32\" names=\"x\"><dim>1</dim><dim>3</dim><dim>2</dim><dim>2</dim>"
      "<rt_info><attribute name=\"layout\" version=\"0\" layout=\"[N,C,H,W]\"/></rt_info></port></output></layer>"
      "<layer id=\"1\" name=\"y\" type=\"Result\" version=\"opset1\"><input><port id=\"0\" precision=\"FP32\">"
      "<dim>1</dim><dim>3</dim><dim>2</dim><dim>2</dim></port></input></layer></layers>"
      "<edges><edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/></edges></net>";
  auto laid_out = core.read_model(with_layout, ov::Tensor());
  BOOST_TEST(ov::layout::get_layout(laid_out->input()).to_string() == ov::Layout("NCHW").to_string());
  BOOST_TEST(ov::layout::channels_idx(ov::layout::get_layout(laid_out->input())) == 1);
  expect_ov_error([&] { core.read_model("no_such_model.xml", "no_such_model.bin"); }, {"no_such_model.xml"});
  expect_ov_error([&] { core.read_model("<?xml version=\"1.0\"?><net/>", ov::Tensor()); }, {"IR"});
  expect_ov_error([&] { core.read_model(path, "", ov::AnyMap{{"X", 1}}); }, {"X"});
}

BOOST_AUTO_TEST_CASE(ops_and_affinities) {
  ov::Core core;
  auto model = core.read_model(add_model());
  auto ops = model->get_ops();
  BOOST_TEST(!ops.empty());
  bool found = false;
  for (auto& op : ops) {
    if (op->get_friendly_name() != "add") continue;
    found = true;
    BOOST_TEST(op->get_type_name() == "Add");
    op->get_rt_info()["affinity"] = "CPU";
    BOOST_TEST(op->get_rt_info()["affinity"].as<std::string>() == "CPU");
    BOOST_TEST(op->get_rt_info().at("affinity").as<std::string>() == "CPU");
    BOOST_TEST(op->get_rt_info().count("affinity") == 1u);
  }
  BOOST_TEST(found);
  // troupe's model sees the same runtime info (it is the same model).
  for (const auto& n : model->troupe_model().get_ops())
    if (n.get_friendly_name() == "add") BOOST_TEST(n.get_rt_info().at("affinity") == "CPU");
  auto supported = core.query_model(model, "CPU");
  BOOST_TEST(supported.at("add") == "CPU");
  auto hetero = core.compile_model(model, "HETERO:CPU");
  BOOST_TEST((hetero.get_property(ov::execution_devices) == std::vector<std::string>{"CPU"}));
  model->get_rt_info()["note"] = "kept";
  BOOST_TEST(model->get_rt_info().at("note").as<std::string>() == "kept");
  expect_ov_error([&] { model->get_rt_info().at("absent"); }, {"'absent'"});
}

BOOST_AUTO_TEST_CASE(async_with_callback) {
  ov::Core core;
  auto compiled = core.compile_model(add_model(), "CPU");
  auto request = compiled.create_infer_request();
  request.set_input_tensor(0, filled({1, 8}, 0));
  std::atomic<int> calls{0};
  std::atomic<bool> error{false};
  request.set_callback([&](std::exception_ptr e) {
    error = error || e != nullptr;
    ++calls;
  });
  request.start_async();
  request.wait();
  BOOST_TEST(calls.load() == 1);
  BOOST_TEST(!error.load());
  request.start_async();
  BOOST_TEST(request.wait_for(std::chrono::milliseconds(60000)));
  BOOST_TEST(calls.load() == 2);
}

BOOST_AUTO_TEST_CASE(preprocessing) {
  ov::Core core;
  auto model = core.read_model(image_model());
  ov::preprocess::PrePostProcessor ppp(model);
  ppp.input().tensor().set_element_type(ov::element::u8).set_layout(ov::Layout("NHWC"));
  ppp.input().model().set_layout("NCHW");
  ppp.output().tensor().set_element_type(ov::element::f32);
  std::shared_ptr<ov::Model> built = ppp.build();
  BOOST_TEST(built.get() == model.get()); // the model itself changes, as OpenVINO's does
  BOOST_TEST(model->input().get_element_type() == ov::element::u8);
  BOOST_TEST((model->input().get_shape() == ov::Shape{1, 2, 2, 3}));
  auto request = core.compile_model(model, "CPU").create_infer_request();
  ov::Tensor frame = request.get_input_tensor();
  for (std::size_t i = 0; i < frame.get_size(); ++i) frame.data<uint8_t>()[i] = static_cast<uint8_t>(i);
  request.infer();
  // NHWC element (h, w, c) = 3 * (2h + w) + c lands at NCHW (c, h, w).
  const float* y = request.get_output_tensor().data<float>();
  BOOST_TEST(y[1 * 4 + 0 * 2 + 1] == 3.0f * 1 + 1);
  BOOST_TEST(y[2 * 4 + 1 * 2 + 1] == 3.0f * 3 + 2);
  ov::preprocess::PrePostProcessor again(model);
  expect_ov_error([&] { again.input("nope"); }, {"'nope'"});
}
