/// Real models end to end: PP-OCR cls, det (pre-Sigmoid) and rec on the seeded input agree
/// with onnxruntime's outputs (scripts/fetch_test_data.sh saves them) within
/// 1e-4 * max|ref| + 1e-5 in f32; bf16's error is reported.
#include <boost/test/unit_test.hpp>
#include <boost/test/tools/assertion_result.hpp>

#include <troupe/troupe.hpp>

#include "tests/support/gpu_env.hpp"
#include "tests/support/ppocr_cases.hpp"
#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_data.hpp"

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

/// Precondition of the bf16 cases: skipped, with the reason, on a CPU without bf16.
struct cpu_has_bf16 {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    Core core;
    const auto caps = core.get_property("CPU", "OPTIMIZATION_CAPABILITIES").as_string();
    if (caps.find("BF16") != std::string::npos) return true;
    boost::test_tools::assertion_result r(false);
    r.message() << "this CPU has no bf16 support (OPTIMIZATION_CAPABILITIES " << caps << ")";
    return r;
  }
};

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
BOOST_AUTO_TEST_CASE(cls_bf16, *utf::precondition(cpu_has_bf16()) * tests::needs_case(cls)) { report_bf16(cls); }
BOOST_AUTO_TEST_CASE(rec_bf16, *utf::precondition(cpu_has_bf16()) * tests::needs_case(rec)) { report_bf16(rec); }
BOOST_AUTO_TEST_CASE(det320_bf16, *utf::precondition(cpu_has_bf16()) * tests::needs_case(det320)) { report_bf16(det320); }
