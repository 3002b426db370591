/// The CPU's RMS normalization step (kernels/cpu/rms_norm.hpp): the forms exporters write
/// (x / Sqrt(ReduceMean(Pow(x, 2)) + eps) * gamma as in LLaMA's ONNX exports; x *
/// Reciprocal(Sqrt(...)) with Mul(x, x); no gamma; ReduceMean's axes as an input), at row lengths
/// past each 16-wide block, against the reference kernels running every op; and the patterns
/// it must leave to the other steps.
#define BOOST_TEST_MODULE cpu_rms_norm
#include <boost/test/unit_test.hpp>

#include "kernels/cpu/native_ops.hpp"
#include "tests/support/cpu_check.hpp"
#include "tests/support/graph_builder.hpp"

using namespace troupe;
using graph::ValueId;
using tests::builder;
using tests::check;
using tests::count_steps;
using ints = std::vector<int64_t>;

namespace {

struct form {
  bool reciprocal = false, square_by_mul = false, gamma = true, axes_input = false;
};

/// x [rows.., cols] -> RMS normalized over the last axis in the given spelling; the op that
/// reads the result is a Relu (so that the normalized value is no graph output itself).
builder rms_block(const Shape& xs, const form& f) {
  builder b;
  b.g.opset = f.axes_input ? 18 : 13;
  auto x = b.input(xs);
  const int64_t cols = xs.back();
  auto sq = f.square_by_mul ? b.op("Mul", {x, x}) : b.op("Pow", {x, b.scalar(2.0f)});
  auto mean = f.axes_input ? b.op("ReduceMean", {sq, b.i64s({-1})}, {{"keepdims", int64_t{1}}})
                           : b.op("ReduceMean", {sq}, {{"axes", ints{-1}}, {"keepdims", int64_t{1}}});
  auto s = b.op("Sqrt", {b.op("Add", {mean, b.scalar(1e-6f)})});
  auto y = f.reciprocal ? b.op("Mul", {x, b.op("Reciprocal", {s})}) : b.op("Div", {x, s});
  if (f.gamma) y = b.op("Mul", {b.weights({cols}), y});
  b.output(b.op("Relu", {y}));
  return b;
}

} // namespace

BOOST_AUTO_TEST_CASE(spellings_run_as_one_step) {
  if (!kernels::cpu::native_avx512_available()) return; // the step is AVX-512 only
  for (const auto& xs : {Shape{1, 5, 256}, Shape{3, 17}, Shape{1, 1}, Shape{2, 40, 40}, Shape{300, 64}}) {
    for (const form f : {form{}, form{true, true, true, false}, form{false, false, false, false},
                         form{true, false, false, true}, form{false, true, true, true}}) {
      BOOST_TEST_CONTEXT(to_string(xs) << (f.reciprocal ? " reciprocal" : " div") << (f.square_by_mul ? " x*x" : " pow")
                                       << (f.gamma ? " gamma" : "") << (f.axes_input ? " axes input" : "")) {
        auto b = rms_block(xs, f);
        for (int threads : {1, 2}) {
          const auto prof = check(b.g, 1e-5f, element_type::f32, threads);
          BOOST_TEST(count_steps(prof, "native:rms_norm") == 1);
          BOOST_TEST(prof.size() == 2u); // the step and the Relu
        }
      }
    }
  }
}

/// The mean over another axis, a Pow of 3, or the mean square also read elsewhere: no step.
BOOST_AUTO_TEST_CASE(patterns_it_leaves_alone) {
  if (!kernels::cpu::native_avx512_available()) return;
  auto spelled = [](int64_t axis, float power, bool mean_out) {
    builder b;
    b.g.opset = 13;
    auto x = b.input({4, 32});
    auto mean = b.op("ReduceMean", {b.op("Pow", {x, b.scalar(power)})}, {{"axes", ints{axis}}, {"keepdims", int64_t{1}}});
    if (mean_out) b.output(mean);
    b.output(b.op("Div", {x, b.op("Sqrt", {b.op("Add", {mean, b.scalar(1e-5f)})})}));
    return b;
  };
  for (const auto& b : {spelled(0, 2.0f, false), spelled(-1, 3.0f, false), spelled(-1, 2.0f, true)}) {
    const auto prof = check(b.g, 1e-5f);
    BOOST_TEST(count_steps(prof, "native:rms_norm") == 0);
  }
  BOOST_TEST(count_steps(check(spelled(-1, 2.0f, false).g, 1e-5f), "native:rms_norm") == 1); // the control
}
