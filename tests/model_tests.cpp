/// Real models end to end: PP-OCR cls, det (pre-Sigmoid) and rec on the seeded input agree
/// with onnxruntime's outputs (scripts/fetch_test_data.sh saves them) within
/// 1e-4 * max|ref| + 1e-5 in f32; bf16's error is reported.
#include <boost/test/unit_test.hpp>
#include <boost/test/tools/assertion_result.hpp>

#include <troupe/troupe.hpp>

#include "tests/support/gpu_env.hpp"
#include "tests/support/tensor_compare.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

namespace fs = std::filesystem;
using namespace troupe;

namespace {

struct model_case {
  std::string model;  ///< file in data/models without .onnx
  Shape shape;
  std::string tag;    ///< 1x3x48x192
};

const model_case cls{"ch_ppocr_mobile_v2.0_cls_infer", {1, 3, 48, 192}, "1x3x48x192"};
const model_case rec{"ch_PP-OCRv4_rec_infer", {1, 3, 48, 320}, "1x3x48x320"};
const model_case det320{"ch_PP-OCRv4_det_presigmoid", {1, 3, 320, 320}, "1x3x320x320"};
const model_case det640{"ch_PP-OCRv4_det_presigmoid", {1, 3, 640, 640}, "1x3x640x640"};

fs::path data_dir() { return TROUPE_DATA_DIR; }

/// The reference folder's output file for the model's only output.
fs::path ref_output(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("output_", 0) == 0) return e.path();
  throw Exception("no reference output in " + dir.string());
}

/// Runs the case on a device and returns the comparison with onnxruntime.
tests::comparison run_case(Core& core, const model_case& c, const std::string& device, const AnyMap& props = {}) {
  const fs::path ref = data_dir() / "ort" / (c.model + "_" + c.tag);
  BOOST_REQUIRE_MESSAGE(fs::exists(ref / "meta.json"),
                        "missing " << ref << ": run scripts/fetch_test_data.sh (the test data is part of the tests)");
  Model model = core.read_model((data_dir() / "models" / (c.model + ".onnx")).string());
  model.reshape({{model.input().get_any_name(), PartialShape(c.shape)}});
  CompiledModel compiled = core.compile_model(model, device, props);
  InferRequest request = compiled.create_infer_request();

  auto input = tests::read_f32_file((ref / "input_x.f32").string());
  Tensor x(element_type::f32, c.shape);
  BOOST_REQUIRE_EQUAL(static_cast<int64_t>(input.size()), x.get_size());
  std::memcpy(x.data(), input.data(), input.size() * sizeof(float));
  request.set_input_tensor(x);
  request.infer();
  Tensor out = request.get_output_tensor();
  BOOST_REQUIRE(out.get_element_type() == element_type::f32);
  std::vector<float> got(out.data<float>(), out.data<float>() + out.get_size());
  return tests::compare_scaled(got, tests::read_f32_file(ref_output(ref).string()), 1e-4, 1e-5);
}

void check_f32(const model_case& c, const std::string& device) {
  Core core;
  auto r = run_case(core, c, device);
  std::cout << c.model << " " << c.tag << " on " << device << ": " << r.message << "\n";
  BOOST_TEST(r.ok, c.model << " " << c.tag << " on " << device << ": " << r.message);
}

void report_bf16(const model_case& c) {
  Core core;
  auto caps = core.get_property("CPU", "OPTIMIZATION_CAPABILITIES").as_string();
  if (caps.find("BF16") == std::string::npos) {
    std::cout << "bf16: this CPU has no bf16 support (" << caps << ")\n";
    return;
  }
  auto r = run_case(core, c, "CPU", {inference_precision(element_type::bf16)});
  const double rel = r.max_abs_ref > 0 ? r.max_abs_error / r.max_abs_ref : r.max_abs_error;
  std::cout << c.model << " " << c.tag << " bf16 on CPU: max abs error " << r.max_abs_error << " (" << rel
            << " of max |ref|)\n";
  // bf16 keeps 8 mantissa bits; over dozens of layers a few percent of the range is expected.
  BOOST_TEST(rel < 0.1, "bf16 error " << rel << " of max|ref| is beyond bf16 rounding");
}


} // namespace

BOOST_AUTO_TEST_CASE(cls_cpu) { check_f32(cls, "CPU"); }
BOOST_AUTO_TEST_CASE(rec_cpu) { check_f32(rec, "CPU"); }
BOOST_AUTO_TEST_CASE(det320_cpu) { check_f32(det320, "CPU"); }
BOOST_AUTO_TEST_CASE(det640_cpu) { check_f32(det640, "CPU"); }
BOOST_AUTO_TEST_CASE(cls_reference) { check_f32(cls, "REFERENCE"); }
BOOST_AUTO_TEST_CASE(rec_reference) { check_f32(rec, "REFERENCE"); }
BOOST_AUTO_TEST_CASE(det320_reference) { check_f32(det320, "REFERENCE"); }
BOOST_AUTO_TEST_CASE(cls_gpu, *boost::unit_test::precondition(tests::gpu_present())) { check_f32(cls, "GPU"); }
BOOST_AUTO_TEST_CASE(rec_gpu, *boost::unit_test::precondition(tests::gpu_present())) { check_f32(rec, "GPU"); }
BOOST_AUTO_TEST_CASE(det320_gpu, *boost::unit_test::precondition(tests::gpu_present())) { check_f32(det320, "GPU"); }
BOOST_AUTO_TEST_CASE(cls_bf16) { report_bf16(cls); }
BOOST_AUTO_TEST_CASE(rec_bf16) { report_bf16(rec); }
BOOST_AUTO_TEST_CASE(det320_bf16) { report_bf16(det320); }
