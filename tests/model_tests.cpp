/// Real models end to end: PP-OCR cls, det (pre-Sigmoid) and rec on the seeded input agree
/// with onnxruntime's outputs (scripts/fetch_test_data.sh saves them) within
/// 1e-4 * max|ref| + 1e-5 in f32; bf16's error is reported.
#define BOOST_TEST_MODULE model_tests
#include <boost/test/unit_test.hpp>
#include <boost/test/tools/assertion_result.hpp>

#include <troupe/troupe.hpp>

#include "tests/support/cpu_caps.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/ppocr_cases.hpp"
#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_data.hpp"

#include <algorithm>
#include <iostream>

using namespace troupe;

namespace {

using tests::model_case;
const model_case& cls = tests::ppocr_cls;
const model_case& rec = tests::ppocr_rec;
const model_case& det320 = tests::ppocr_det320;
const model_case& det640 = tests::ppocr_det640;

/// Runs the case on a device and returns the comparison with onnxruntime.
tests::comparison run_case(Core& core, const model_case& c, const std::string& device, const AnyMap& props = {}) {
  return tests::compare_scaled(tests::run_on_device(core, c, device, props), tests::ort_output(c), 1e-4, 1e-5);
}

void check_f32(const model_case& c, const std::string& device) {
  Core core;
  auto r = run_case(core, c, device);
  std::cout << c.model << " " << c.tag << " on " << device << ": " << r.message << "\n";
  BOOST_TEST(r.ok, c.model << " " << c.tag << " on " << device << ": " << r.message);
}

void report_bf16(const model_case& c) {
  Core core;
  auto r = run_case(core, c, "CPU", {inference_precision(element_type::bf16)});
  const double rel = r.max_abs_ref > 0 ? r.max_abs_error / r.max_abs_ref : r.max_abs_error;
  std::cout << c.model << " " << c.tag << " bf16 on CPU: max abs error " << r.max_abs_error << " (" << rel
            << " of max |ref|)\n";
  // bf16 keeps 8 mantissa bits; over dozens of layers a few percent of the range is expected.
  BOOST_TEST(rel < 0.1, "bf16 error " << rel << " of max|ref| is beyond bf16 rounding");
}


} // namespace

namespace utf = boost::unit_test;

BOOST_AUTO_TEST_CASE(cls_cpu, *tests::needs_case(cls)) { check_f32(cls, "CPU"); }
BOOST_AUTO_TEST_CASE(rec_cpu, *tests::needs_case(rec)) { check_f32(rec, "CPU"); }
BOOST_AUTO_TEST_CASE(det320_cpu, *tests::needs_case(det320)) { check_f32(det320, "CPU"); }
BOOST_AUTO_TEST_CASE(det640_cpu, *tests::needs_case(det640)) { check_f32(det640, "CPU"); }
BOOST_AUTO_TEST_CASE(cls_reference, *tests::needs_case(cls)) { check_f32(cls, "REFERENCE"); }
BOOST_AUTO_TEST_CASE(rec_reference, *tests::needs_case(rec)) { check_f32(rec, "REFERENCE"); }
BOOST_AUTO_TEST_CASE(det320_reference, *tests::needs_case(det320)) { check_f32(det320, "REFERENCE"); }
BOOST_AUTO_TEST_CASE(cls_gpu, *utf::precondition(tests::gpu_present()) * tests::needs_case(cls)) { check_f32(cls, "GPU"); }
BOOST_AUTO_TEST_CASE(rec_gpu, *utf::precondition(tests::gpu_present()) * tests::needs_case(rec)) { check_f32(rec, "GPU"); }
BOOST_AUTO_TEST_CASE(det320_gpu, *utf::precondition(tests::gpu_present()) * tests::needs_case(det320)) {
  check_f32(det320, "GPU");
}
BOOST_AUTO_TEST_CASE(cls_bf16, *utf::precondition(tests::cpu_has_bf16()) * tests::needs_case(cls)) { report_bf16(cls); }
BOOST_AUTO_TEST_CASE(rec_bf16, *utf::precondition(tests::cpu_has_bf16()) * tests::needs_case(rec)) { report_bf16(rec); }
BOOST_AUTO_TEST_CASE(det320_bf16, *utf::precondition(tests::cpu_has_bf16()) * tests::needs_case(det320)) { report_bf16(det320); }

/// A batch of 0 (no text boxes found: an empty recognizer batch) on every device: cls and det
/// run and give empty outputs of the right shape; rec is refused when compiled, naming the
/// Reshape whose -1 cannot be worked out from 0 elements (as onnxruntime and numpy refuse it).
BOOST_AUTO_TEST_CASE(a_batch_of_zero_on_every_device, *tests::needs_model_of(cls) * tests::needs_model_of(det320) *
                                                          tests::needs_model_of(rec)) {
  Core core;
  std::vector<std::string> devices{"CPU", "REFERENCE"};
  const auto all = core.available_devices();
  if (std::find(all.begin(), all.end(), "GPU.0") != all.end())
    for (const char* d : {"GPU", "MULTI:GPU,CPU", "HETERO:GPU,CPU"}) devices.push_back(d);
  struct empty_case {
    const model_case* c;
    Shape in, out;
  };
  for (const auto& e : {empty_case{&cls, {0, 3, 48, 192}, {0, 2}}, empty_case{&det320, {0, 3, 320, 320}, {0, 1, 320, 320}}})
    for (const auto& d : devices) {
      auto model = core.read_model(tests::ppocr_model(e.c->model).path.string());
      model.reshape(PartialShape(e.in));
      auto req = core.compile_model(model, d).create_infer_request();
      req.set_input_tensor(Tensor(element_type::f32, e.in));
      req.infer();
      const auto y = req.get_output_tensor();
      BOOST_TEST((y.get_shape() == e.out), e.c->model << " on " << d << ": output " << to_string(y.get_shape()));
    }
  for (const auto& d : devices) {
    auto model = core.read_model(tests::ppocr_model(rec.model).path.string());
    try {
      model.reshape(PartialShape(Shape{0, 3, 48, 320}));
      core.compile_model(model, d);
      BOOST_ERROR("rec at batch 0 compiled on " << d);
    } catch (const Exception& e) {
      const std::string m = e.what();
      BOOST_TEST(m.find("Reshape node") != std::string::npos, m);
      BOOST_TEST(m.find("cannot reshape [0,") != std::string::npos, m);
    }
  }
}
