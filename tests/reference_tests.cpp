/// The reference kernels: hand-computed unit cases, then every ONNX node conformance case
/// whose ops all have reference kernels, run op by op straight on the IR (no device, no
/// runtime), so a failure here is the oracle's own.
#define BOOST_TEST_MODULE reference_tests
#include <boost/test/unit_test.hpp>

#include "tests/support/expect_error.hpp"
#include "tests/support/known_failures.hpp"

#include <troupe/exception.hpp>

#include "graph/onnx_reader.hpp"
#include "graph/shape_inference.hpp"
#include "kernels/reference/kernels.hpp"
#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_data.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <numbers>
#include <set>

namespace fs = std::filesystem;
using namespace troupe;
namespace ref = troupe::kernels::reference;
using troupe::tests::expect_error;

namespace {

Tensor make_f32(Shape s, std::vector<float> v) {
  Tensor t(element_type::f32, std::move(s));
  BOOST_REQUIRE_EQUAL(static_cast<std::size_t>(t.get_size()), v.size());
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

Tensor make_i64(Shape s, std::vector<int64_t> v) {
  Tensor t(element_type::i64, std::move(s));
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

graph::Op make_op(std::string type) {
  graph::Op op;
  op.type = std::move(type);
  op.name = "test";
  return op;
}

} // namespace

BOOST_AUTO_TEST_CASE(conv_matches_hand_computed_values) {
  // X 1x1x3x3 = 1..9, W 1x1x2x2 = [1,0;0,-1], bias 10, pad 1 on top/left only via pads.
  auto op = make_op("Conv");
  op.attrs["pads"] = std::vector<int64_t>{0, 0, 0, 0};
  std::vector<Tensor> in{make_f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), make_f32({1, 1, 2, 2}, {1, 0, 0, -1}),
                         make_f32({1}, {10})};
  std::vector<Tensor> out{Tensor(element_type::f32, {1, 1, 2, 2})};
  ref::evaluate(op, in, out);
  // y[i][j] = x[i][j] - x[i+1][j+1] + 10 = -4 + 10 everywhere
  for (int i = 0; i < 4; ++i) BOOST_TEST(out[0].data<float>()[i] == 6.0f);
  // Stride 2 with SAME_UPPER: output 2x2, pads total 1 -> bottom/right.
  op.attrs.clear();
  op.attrs["strides"] = std::vector<int64_t>{2, 2};
  op.attrs["auto_pad"] = std::string("SAME_UPPER");
  out = {Tensor(element_type::f32, {1, 1, 2, 2})};
  ref::evaluate(op, in, out);
  const float* y = out[0].data<float>();
  BOOST_TEST(y[0] == 1 - 5 + 10.0f);
  BOOST_TEST(y[1] == 3 - 0 + 10.0f); // x[1][3] is padding
  BOOST_TEST(y[3] == 9 + 10.0f);
}

BOOST_AUTO_TEST_CASE(softmax_rows_sum_to_one_and_legacy_axis_coerces) {
  auto op = make_op("Softmax");
  std::vector<Tensor> in{make_f32({2, 2, 3}, {1, 2, 3, 4, 5, 6, -1, 0, 1, 100, 100, 100})};
  std::vector<Tensor> out{Tensor(element_type::f32, {2, 2, 3})};
  ref::evaluate(op, in, out); // opset 13: per last axis
  const float* y = out[0].data<float>();
  for (int r = 0; r < 4; ++r) BOOST_TEST(std::fabs(y[3 * r] + y[3 * r + 1] + y[3 * r + 2] - 1.0f) < 1e-6f);
  BOOST_TEST(std::fabs(y[9] - 1.0f / 3) < 1e-6f);
  ref::evaluate(op, in, out, 11); // opset 11: coerced to 2x6 at axis 1
  float s = 0;
  for (int i = 0; i < 6; ++i) s += y[i];
  BOOST_TEST(std::fabs(s - 1.0f) < 1e-6f);
  BOOST_TEST(y[0] < y[3]); // the rows are no longer separate
}

BOOST_AUTO_TEST_CASE(broadcast_integer_arithmetic_and_fused_activation) {
  auto op = make_op("Div");
  std::vector<Tensor> in{make_i64({2, 2}, {7, -7, 9, 10}), make_i64({2}, {2, 3})};
  std::vector<Tensor> out{Tensor(element_type::i64, {2, 2})};
  ref::evaluate(op, in, out);
  BOOST_TEST((std::vector<int64_t>(out[0].data<int64_t>(), out[0].data<int64_t>() + 4) == std::vector<int64_t>{3, -2, 4, 3}));
  in[1] = make_i64({2}, {0, 1});
  BOOST_CHECK_THROW(ref::evaluate(op, in, out), Exception); // integer division by zero is an error, not a crash
  auto add = make_op("Add");
  add.attrs["activation"] = std::string("Clip");
  add.attrs["activation_params"] = std::vector<float>{0.0f, 6.0f};
  std::vector<Tensor> fin{make_f32({3}, {-5, 3, 10}), make_f32({1}, {1})};
  std::vector<Tensor> fout{Tensor(element_type::f32, {3})};
  ref::evaluate(add, fin, fout);
  BOOST_TEST(fout[0].data<float>()[0] == 0.0f);
  BOOST_TEST(fout[0].data<float>()[1] == 4.0f);
  BOOST_TEST(fout[0].data<float>()[2] == 6.0f);
}

/// Slice copies whole runs where the trailing dimensions lie densely in the input (an outer
/// axis cut: one run; a middle axis: runs of the inner size) and element by element where they
/// do not (a step on the last axis); every element lands where the index arithmetic says.
BOOST_AUTO_TEST_CASE(slice_copies_dense_runs_and_strided_elements) {
  const Shape xs{3, 4, 2, 5};
  std::vector<float> xv(120);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
  struct cut {
    int64_t axis, start, end, step;
  };
  for (const cut& c : {cut{0, 1, 2, 1}, cut{1, 1, 3, 1}, cut{2, 1, 2, 1}, cut{3, 0, 5, 2}, cut{1, 3, 0, -2}, cut{0, 0, 3, 1}}) {
    auto op = make_op("Slice");
    std::vector<Tensor> in{make_f32(xs, xv), make_i64({1}, {c.start}), make_i64({1}, {c.end}), make_i64({1}, {c.axis}),
                           make_i64({1}, {c.step})};
    Shape ys = xs;
    const int64_t n = c.step > 0 ? (c.end - c.start + c.step - 1) / c.step : (c.start - c.end - c.step - 1) / -c.step;
    ys[static_cast<std::size_t>(c.axis)] = n;
    std::vector<Tensor> out{Tensor(element_type::f32, ys)};
    ref::evaluate(op, in, out);
    int64_t bad = 0, k = 0;
    for (int64_t a = 0; a < ys[0]; ++a)
      for (int64_t b = 0; b < ys[1]; ++b)
        for (int64_t d = 0; d < ys[2]; ++d)
          for (int64_t e = 0; e < ys[3]; ++e, ++k) {
            int64_t idx[4] = {a, b, d, e};
            idx[c.axis] = c.start + idx[c.axis] * c.step;
            const float want = static_cast<float>(((idx[0] * 4 + idx[1]) * 2 + idx[2]) * 5 + idx[3]);
            bad += out[0].data<float>()[k] != want;
          }
    BOOST_TEST(bad == 0, "axis " << c.axis << " [" << c.start << ":" << c.end << ":" << c.step << "]: " << bad << " wrong");
  }
}

BOOST_AUTO_TEST_CASE(missing_kernel_is_named) {
  auto op = make_op("NoSuchOp");
  std::vector<Tensor> in, out;
  try {
    ref::evaluate(op, in, out);
    BOOST_FAIL("expected an exception");
  } catch (const Exception& e) {
    std::string m = e.what();
    BOOST_TEST(m.find("NoSuchOp") != std::string::npos);
    BOOST_TEST(m.find("no reference kernel") != std::string::npos);
  }
  auto ops = ref::supported_ops();
  BOOST_TEST(std::is_sorted(ops.begin(), ops.end()));
  for (const char* needed : {"Add", "Mul", "Sub", "Div", "Pow", "Sqrt", "Conv", "ConvTranspose", "Clip", "Relu",
                             "HardSigmoid", "Sigmoid", "GlobalAveragePool", "AveragePool", "MaxPool",
                             "BatchNormalization", "Resize", "Concat", "Cast", "MatMul", "Slice", "ReduceMean",
                             "Transpose", "Squeeze", "Unsqueeze", "Reshape", "Shape", "Softmax", "Gather"})
    BOOST_TEST(ref::find_kernel(needed) != nullptr, needed);
}

BOOST_AUTO_TEST_CASE(losses_match_hand_computed_values_and_name_a_bad_target) {
  // log-probabilities of 2 samples over 3 classes; targets 2 and 0 (the second ignored).
  const auto logp = make_f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  auto op = make_op("NegativeLogLikelihoodLoss");
  op.attrs["reduction"] = std::string("none");
  std::vector<Tensor> out{Tensor(element_type::f32, {2})};
  ref::evaluate(op, {logp, make_i64({2}, {2, 0})}, out);
  BOOST_TEST(out[0].data<float>()[0] == 3.0f);
  BOOST_TEST(out[0].data<float>()[1] == 4.0f);
  // Weighted mean: (3 * 0.5 + 4 * 2) / (0.5 + 2); with ignore_index 0 the second drops out.
  op.attrs["reduction"] = std::string("mean");
  std::vector<Tensor> mean{Tensor(element_type::f32, Shape{})};
  ref::evaluate(op, {logp, make_i64({2}, {2, 0}), make_f32({3}, {2, 1, 0.5f})}, mean);
  BOOST_TEST(mean[0].data<float>()[0] == 9.5f / 2.5f);
  op.attrs["ignore_index"] = int64_t{0};
  ref::evaluate(op, {logp, make_i64({2}, {2, 0}), make_f32({3}, {2, 1, 0.5f})}, mean);
  BOOST_TEST(mean[0].data<float>()[0] == 3.0f);
  // SoftmaxCrossEntropyLoss: log_softmax first; equal scores give log(3) per sample.
  auto sce = make_op("SoftmaxCrossEntropyLoss");
  std::vector<Tensor> both{Tensor(element_type::f32, Shape{}), Tensor(element_type::f32, {2, 3})};
  ref::evaluate(sce, {make_f32({2, 3}, {7, 7, 7, 1, 1, 1}), make_i64({2}, {1, 2})}, both);
  BOOST_TEST(std::abs(both[0].data<float>()[0] - std::log(3.0f)) < 1e-6f);
  BOOST_TEST(std::abs(both[1].data<float>()[4] + std::log(3.0f)) < 1e-6f);
  // A class index outside [0, C) is an error naming the op and the value.
  expect_error([&] { ref::evaluate(sce, {make_f32({2, 3}, {7, 7, 7, 1, 1, 1}), make_i64({2}, {1, 3})}, both); },
               {"SoftmaxCrossEntropyLoss", "target value 3 is outside [0, 3)"});
}

BOOST_AUTO_TEST_CASE(selections_keep_what_they_should_and_name_bad_input) {
  // Two boxes overlapping by IoU 0.81 and a third apart: the lower-scored overlap goes.
  auto nms = make_op("NonMaxSuppression");
  const auto boxes = make_f32({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 5, 5, 6, 6});
  const auto scores = make_f32({1, 1, 3}, {0.9f, 0.8f, 0.7f});
  std::vector<Tensor> kept{Tensor(element_type::i64, {2, 3})};
  ref::evaluate(nms, {boxes, scores, make_i64({1}, {10}), make_f32({1}, {0.5f})}, kept);
  const std::vector<int64_t> want{0, 0, 0, 0, 0, 2};
  BOOST_TEST(std::equal(want.begin(), want.end(), kept[0].data<int64_t>()));
  expect_error([&] { ref::evaluate(nms, {make_f32({1, 3, 3}, std::vector<float>(9, 0.0f)), scores, make_i64({1}, {10})}, kept); },
               {"NonMaxSuppression", "boxes must be [batches, boxes, 4], not [1,3,3]"});
  // Unique, sorted: values, first indices, inverse, counts.
  auto unique = make_op("Unique");
  std::vector<Tensor> u{Tensor(element_type::f32, {3}), Tensor(element_type::i64, {3}), Tensor(element_type::i64, {5}),
                        Tensor(element_type::i64, {3})};
  ref::evaluate(unique, {make_f32({5}, {2, 1, 1, 3, 2})}, u);
  const std::vector<float> values{1, 2, 3};
  const std::vector<int64_t> first{1, 0, 3}, inverse{1, 0, 0, 2, 1}, counts{2, 2, 1};
  BOOST_TEST(std::equal(values.begin(), values.end(), u[0].data<float>()));
  BOOST_TEST(std::equal(first.begin(), first.end(), u[1].data<int64_t>()));
  BOOST_TEST(std::equal(inverse.begin(), inverse.end(), u[2].data<int64_t>()));
  BOOST_TEST(std::equal(counts.begin(), counts.end(), u[3].data<int64_t>()));
}

BOOST_AUTO_TEST_CASE(einsum_matches_matmul_broadcasts_ellipses_and_names_a_bad_equation) {
  auto op = make_op("Einsum");
  op.attrs["equation"] = std::string("ij, jk -> ik");
  std::vector<Tensor> y{Tensor(element_type::f32, {2, 2})};
  ref::evaluate(op, {make_f32({2, 3}, {1, 2, 3, 4, 5, 6}), make_f32({3, 2}, {1, 0, 0, 1, 1, 1})}, y);
  const std::vector<float> want{4, 5, 10, 11};
  BOOST_TEST(std::equal(want.begin(), want.end(), y[0].data<float>()));
  // A 1 in one input's ellipsis broadcasts against the other's; implicit output "...ik".
  op.attrs["equation"] = std::string("...ij,...jk");
  std::vector<Tensor> b{Tensor(element_type::f32, {2, 1, 1})};
  ref::evaluate(op, {make_f32({2, 1, 1}, {2, 3}), make_f32({1, 1, 1}, {5})}, b);
  BOOST_TEST(b[0].data<float>()[0] == 10.0f);
  BOOST_TEST(b[0].data<float>()[1] == 15.0f);
  op.attrs["equation"] = std::string("ij,jk->iz");
  expect_error([&] { ref::evaluate(op, {make_f32({2, 3}, {1, 2, 3, 4, 5, 6}), make_f32({3, 2}, {1, 0, 0, 1, 1, 1})}, y); },
               {"Einsum", "output label 'z' is in no input"});
  op.attrs["equation"] = std::string("i->ii"); // numpy and onnxruntime refuse a repeated output label
  std::vector<Tensor> d{Tensor(element_type::f32, {3, 3})};
  expect_error([&] { ref::evaluate(op, {make_f32({3}, {1, 2, 3})}, d); }, {"Einsum", "output label 'i' appears twice"});
}

BOOST_AUTO_TEST_CASE(quantize_rounds_half_to_even_saturates_and_dequantizes_back) {
  auto q = make_op("QuantizeLinear");
  Tensor zp(element_type::u8, Shape{});
  zp.data<uint8_t>()[0] = 128;
  std::vector<Tensor> y{Tensor(element_type::u8, {5})};
  // x / 0.5 = 1, 2.5 -> 2 (to even), 3.5 -> 4, -300 and 300 saturate.
  ref::evaluate(q, {make_f32({5}, {0.5f, 1.25f, 1.75f, -150, 150}), make_f32({}, {0.5f}), zp}, y);
  const std::vector<uint8_t> want{129, 130, 132, 0, 255};
  BOOST_TEST(std::equal(want.begin(), want.end(), y[0].data<uint8_t>()));
  auto dq = make_op("DequantizeLinear");
  std::vector<Tensor> back{Tensor(element_type::f32, {5})};
  ref::evaluate(dq, {y[0], make_f32({}, {0.5f}), zp}, back);
  const std::vector<float> again{0.5f, 1.0f, 2.0f, -64.0f, 63.5f};
  BOOST_TEST(std::equal(again.begin(), again.end(), back[0].data<float>()));
}

BOOST_AUTO_TEST_CASE(a_bidirectional_lstms_backward_half_is_a_forward_lstm_over_the_reversed_sequence) {
  // X [seq 3, batch 1, input 2]; hidden 2; weights differ per direction.
  auto ramp = [](Shape s, float from, float step) {
    Tensor t(element_type::f32, s);
    for (int64_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = from + step * static_cast<float>(i % 7) - 0.3f * static_cast<float>(i % 3);
    return t;
  };
  const auto x = ramp({3, 1, 2}, -0.5f, 0.2f), rx = make_f32({3, 1, 2}, {x.data<float>()[4], x.data<float>()[5], x.data<float>()[2],
                                                                       x.data<float>()[3], x.data<float>()[0], x.data<float>()[1]});
  const auto w2 = ramp({2, 8, 2}, -0.4f, 0.1f), r2 = ramp({2, 8, 2}, 0.3f, -0.1f);
  auto half = [](const Tensor& t) { // direction 1 of a [2, ...] tensor, as [1, ...]
    Shape s = t.get_shape();
    s[0] = 1;
    Tensor h(element_type::f32, s);
    std::copy_n(t.data<float>() + h.get_size(), h.get_size(), h.data<float>());
    return h;
  };
  auto op = make_op("LSTM");
  op.attrs["hidden_size"] = int64_t{2};
  op.attrs["direction"] = std::string("bidirectional");
  std::vector<Tensor> both{Tensor(element_type::f32, {3, 2, 1, 2}), Tensor(element_type::f32, {2, 1, 2})};
  ref::evaluate(op, {x, w2, r2}, both);
  op.attrs["direction"] = std::string("forward");
  std::vector<Tensor> fwd{Tensor(element_type::f32, {3, 1, 1, 2}), Tensor(element_type::f32, {1, 1, 2})};
  ref::evaluate(op, {rx, half(w2), half(r2)}, fwd);
  for (int k = 0; k < 2; ++k) BOOST_TEST(std::abs(both[1].data<float>()[2 + k] - fwd[1].data<float>()[k]) < 1e-6f);
  // Y at time t of the backward half is the forward run's Y at time 2 - t.
  for (int t = 0; t < 3; ++t)
    for (int k = 0; k < 2; ++k)
      BOOST_TEST(std::abs(both[0].data<float>()[(t * 2 + 1) * 2 + k] - fwd[0].data<float>()[(2 - t) * 2 + k]) < 1e-6f);
}

BOOST_AUTO_TEST_CASE(recurrent_inputs_of_the_wrong_size_and_unique_corner_values_are_handled) {
  // A bidirectional LSTM given one direction's weights: named, not read past.
  auto op = make_op("LSTM");
  op.attrs["hidden_size"] = int64_t{2};
  op.attrs["direction"] = std::string("bidirectional");
  std::vector<Tensor> out{Tensor(element_type::f32, {3, 2, 1, 2}), Tensor(element_type::f32, {2, 1, 2})};
  expect_error(
      [&] {
        ref::evaluate(op, {make_f32({3, 1, 2}, std::vector<float>(6, 0.5f)), make_f32({1, 8, 2}, std::vector<float>(16, 0.1f)),
                           make_f32({1, 8, 2}, std::vector<float>(16, 0.1f))},
                      out);
      },
      {"LSTM", "W has 16 values, not 32"});
  // Unique keeps int64 values above 2^53 apart, and takes NaNs as one value, last.
  auto unique = make_op("Unique");
  std::vector<Tensor> u{Tensor(element_type::i64, {2})};
  ref::evaluate(unique, {make_i64({3}, {9007199254740993LL, 9007199254740992LL, 9007199254740993LL})}, u);
  BOOST_TEST(u[0].data<int64_t>()[0] == 9007199254740992LL);
  BOOST_TEST(u[0].data<int64_t>()[1] == 9007199254740993LL);
  std::vector<Tensor> f{Tensor(element_type::f32, {2})};
  ref::evaluate(unique, {make_f32({3}, {std::nanf(""), 1.0f, std::nanf("")})}, f);
  BOOST_TEST(f[0].data<float>()[0] == 1.0f);
  BOOST_TEST(std::isnan(f[0].data<float>()[1]));
}

BOOST_AUTO_TEST_CASE(cast_round_trips_half_and_saturates) {
  auto op = make_op("Cast");
  op.attrs["to"] = int64_t{10};
  std::vector<Tensor> in{make_f32({4}, {1.0f, -2.5f, 65504.0f, 1e6f})};
  std::vector<Tensor> out{Tensor(element_type::f16, {4})};
  ref::evaluate(op, in, out);
  const auto* h = out[0].data<uint16_t>();
  BOOST_TEST(h[0] == 0x3c00);
  BOOST_TEST(h[1] == 0xc100);
  BOOST_TEST(h[2] == 0x7bff);
  BOOST_TEST(h[3] == 0x7c00); // overflow -> inf
  op.attrs["to"] = int64_t{3};
  in = {make_f32({3}, {300.0f, -1000.0f, NAN})};
  out = {Tensor(element_type::i8, {3})};
  ref::evaluate(op, in, out);
  BOOST_TEST(out[0].data<int8_t>()[0] == 127);
  BOOST_TEST(out[0].data<int8_t>()[1] == -128);
  BOOST_TEST(out[0].data<int8_t>()[2] == 0);
}

namespace {

using cplx = std::complex<double>;

/// The n-point DFT of x by its definition (x zero-padded or cut to n): sum_j x[j] e^(-+2 pi i jk/n),
/// scaled by 1/n when inverse.
std::vector<cplx> direct_dft(const std::vector<cplx>& x, std::size_t n, bool inverse) {
  std::vector<cplx> y(n);
  const double sign = inverse ? 1.0 : -1.0;
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t j = 0; j < n && j < x.size(); ++j)
      y[k] += x[j] * std::polar(1.0, sign * 2 * std::numbers::pi * static_cast<double>(j) * static_cast<double>(k) / static_cast<double>(n));
    if (inverse) y[k] /= static_cast<double>(n);
  }
  return y;
}

std::vector<cplx> reals(const std::vector<float>& v) { return std::vector<cplx>(v.begin(), v.end()); }

/// Checks elements [from, from + want.size()) of t, read as (real, imaginary) pairs, against want.
void check_complex(const Tensor& t, const std::vector<cplx>& want, std::size_t from = 0) {
  BOOST_REQUIRE(t.get_shape().back() == 2);
  BOOST_REQUIRE((from + want.size()) * 2 <= static_cast<std::size_t>(t.get_size()));
  for (std::size_t k = 0; k < want.size(); ++k) {
    const cplx got(t.data<float>()[2 * (from + k)], t.data<float>()[2 * (from + k) + 1]);
    BOOST_TEST(std::abs(got - want[k]) < 1e-4 * (1 + std::abs(want[k])), "bin " << k << ": " << got << " != " << want[k]);
  }
}

std::vector<float> ramp_signal(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t j = 0; j < n; ++j) v[j] = std::sin(0.7f * static_cast<float>(j)) + 0.25f * static_cast<float>(j) - (j % 3 == 0 ? 1.0f : 0.0f);
  return v;
}

std::vector<float> floats_of(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.get_size()); }

} // namespace

BOOST_AUTO_TEST_CASE(dft_matches_the_direct_sum_padded_cut_onesided_along_any_axis_and_inverted) {
  // 12 real samples: the radix-2 halves down to a direct sum of 3.
  const auto x = ramp_signal(12);
  auto op = make_op("DFT");
  std::vector<Tensor> y{Tensor(element_type::f32, {1, 12, 2})};
  ref::evaluate(op, {make_f32({1, 12, 1}, x)}, y);
  check_complex(y[0], direct_dft(reals(x), 12, false));
  // dft_length 16 zero-pads; onesided keeps bins 0..8 of the 16.
  op.attrs["onesided"] = int64_t{1};
  y = {Tensor(element_type::f32, {1, 9, 2})};
  ref::evaluate(op, {make_f32({1, 12, 1}, x), make_i64({}, {16})}, y);
  auto want = direct_dft(reals(x), 16, false);
  want.resize(9);
  check_complex(y[0], want);
  // dft_length 5 cuts the signal to its first 5 samples (an odd length: the direct sum).
  op.attrs.erase("onesided");
  y = {Tensor(element_type::f32, {1, 5, 2})};
  ref::evaluate(op, {make_f32({1, 12, 1}, x), make_i64({}, {5})}, y);
  check_complex(y[0], direct_dft(reals(x), 5, false));
  // Along axis 1 of [2, 3, 4, 1]: 3-point transforms of the columns (strided by 4).
  const auto grid = ramp_signal(24);
  op.attrs["axis"] = int64_t{1};
  y = {Tensor(element_type::f32, {2, 3, 4, 2})};
  ref::evaluate(op, {make_f32({2, 3, 4, 1}, grid)}, y);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 4; ++i) {
      std::vector<cplx> column;
      for (std::size_t a = 0; a < 3; ++a) column.push_back(grid[(b * 3 + a) * 4 + i]);
      const auto spectrum = direct_dft(column, 3, false);
      for (std::size_t k = 0; k < 3; ++k) check_complex(y[0], {spectrum[k]}, (b * 3 + k) * 4 + i);
    }
  // The inverse of a complex signal is the direct inverse sum (1/n), and undoes the forward one.
  std::vector<cplx> z;
  for (std::size_t j = 0; j < 12; ++j) z.emplace_back(x[j], x[11 - j] * 0.5);
  std::vector<float> pairs;
  for (const auto& v : z) pairs.insert(pairs.end(), {static_cast<float>(v.real()), static_cast<float>(v.imag())});
  op.attrs = {{"inverse", int64_t{1}}};
  y = {Tensor(element_type::f32, {1, 12, 2})};
  ref::evaluate(op, {make_f32({1, 12, 2}, pairs)}, y);
  check_complex(y[0], direct_dft(z, 12, true));
  std::vector<Tensor> back{Tensor(element_type::f32, {1, 12, 2})};
  ref::evaluate(make_op("DFT"), {y[0]}, back);
  check_complex(back[0], z);
}

BOOST_AUTO_TEST_CASE(stft_frames_are_windowed_dfts_and_bad_lengths_are_named) {
  // 20 samples, frames of 8 every 4: 4 frames, 5 bins each (onesided).
  const auto x = ramp_signal(20);
  const std::vector<float> window{0.1f, 0.4f, 0.8f, 1, 1, 0.8f, 0.4f, 0.1f};
  auto op = make_op("STFT");
  std::vector<Tensor> y{Tensor(element_type::f32, {1, 4, 5, 2})};
  ref::evaluate(op, {make_f32({1, 20, 1}, x), make_i64({}, {4}), make_f32({8}, window)}, y);
  for (std::size_t f = 0; f < 4; ++f) {
    std::vector<cplx> frame;
    for (std::size_t j = 0; j < 8; ++j) frame.emplace_back(x[f * 4 + j] * window[j]);
    auto want = direct_dft(frame, 8, false);
    want.resize(5);
    check_complex(y[0], want, f * 5);
  }
  // frame_length without a window, all 8 bins: the last frame starts at 12.
  op.attrs["onesided"] = int64_t{0};
  y = {Tensor(element_type::f32, {1, 4, 8, 2})};
  ref::evaluate(op, {make_f32({1, 20, 1}, x), make_i64({}, {4}), Tensor(), make_i64({}, {8})}, y);
  check_complex(y[0], direct_dft(std::vector<cplx>(x.begin() + 12, x.end()), 8, false), 3 * 8);
  expect_error([&] { ref::evaluate(op, {make_f32({1, 20, 1}, x), make_i64({}, {-1}), Tensor(), make_i64({}, {8})}, y); },
               {"STFT", "frame_step -1 is less than 1"});
  expect_error([&] { ref::evaluate(op, {make_f32({1, 20, 1}, x), make_i64({}, {4}), make_f32({8}, window), make_i64({}, {6})}, y); },
               {"STFT", "frame_length 6 differs from the window's length 8"});
  auto dft = make_op("DFT");
  std::vector<Tensor> d{Tensor(element_type::f32, {1, 12, 2})};
  dft.attrs["axis"] = int64_t{2};
  expect_error([&] { ref::evaluate(dft, {make_f32({1, 12, 1}, ramp_signal(12))}, d); }, {"DFT", "axis 2 is the last one"});
  dft.attrs = {{"inverse", int64_t{1}}, {"onesided", int64_t{1}}};
  expect_error([&] { ref::evaluate(dft, {make_f32({1, 12, 1}, ramp_signal(12))}, d); }, {"DFT", "onesided and inverse"});
  expect_error([&] { ref::evaluate(make_op("DFT"), {make_f32({1, 4, 3}, ramp_signal(12))}, d); }, {"DFT", "must end in 1 (real) or 2 (complex)"});
}

BOOST_AUTO_TEST_CASE(mel_weight_matrix_is_a_triangle_on_the_mel_spaced_bins) {
  // One band over 0..800 Hz of a 16-point DFT at 1600 Hz: its edges mel-spaced at 0, 202.5
  // and 463.7 Hz fall on bins floor(17 f / 1600) = 0, 2 and 4.
  auto op = make_op("MelWeightMatrix");
  std::vector<Tensor> y{Tensor(element_type::f32, {9, 1})};
  ref::evaluate(op, {make_i64({}, {1}), make_i64({}, {16}), make_i64({}, {1600}), make_f32({}, {0}), make_f32({}, {800})}, y);
  BOOST_TEST(floats_of(y[0]) == (std::vector<float>{0, 0.5f, 1, 0.5f, 0, 0, 0, 0, 0}), boost::test_tools::per_element());
  // Two bands over 0..4000 Hz of an 8-point DFT at 8000 Hz: edges on bins 0, 0, 1, 2 make two
  // one-bin peaks.
  y = {Tensor(element_type::f32, {5, 2})};
  ref::evaluate(op, {make_i64({}, {2}), make_i64({}, {8}), make_i64({}, {8000}), make_f32({}, {0}), make_f32({}, {4000})}, y);
  BOOST_TEST(floats_of(y[0]) == (std::vector<float>{1, 0, 0, 1, 0, 0, 0, 0, 0, 0}), boost::test_tools::per_element());
  expect_error([&] { ref::evaluate(op, {make_i64({}, {2}), make_i64({}, {8}), make_i64({}, {8000}), make_f32({}, {0}), make_f32({}, {20000})}, y); },
               {"MelWeightMatrix", "falls outside the 5 spectrogram bins"});
}

BOOST_AUTO_TEST_CASE(max_unpool_puts_each_value_where_max_pool_found_it) {
  auto op = make_op("MaxUnpool");
  op.attrs = {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}};
  const auto x = make_f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const auto at = make_i64({1, 1, 2, 2}, {5, 7, 13, 15});
  std::vector<Tensor> y{Tensor(element_type::f32, {1, 1, 4, 4})};
  ref::evaluate(op, {x, at}, y);
  BOOST_TEST(floats_of(y[0]) == (std::vector<float>{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}), boost::test_tools::per_element());
  // A 5x5 output_shape holds the 4x4 the indices address at its origin (ONNX's reference).
  y = {Tensor(element_type::f32, {1, 1, 5, 5})};
  ref::evaluate(op, {x, at, make_i64({4}, {1, 1, 5, 5})}, y);
  std::vector<float> want(25, 0.0f);
  want[6] = 1, want[8] = 2, want[16] = 3, want[18] = 4;
  BOOST_TEST(floats_of(y[0]) == want, boost::test_tools::per_element());
  // MaxPool's indices over 2 channels (they count the channel's offset) bring every maximum back.
  auto pool = make_op("MaxPool");
  pool.attrs = op.attrs;
  std::vector<float> xv(32);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 7) % 11) + 1;
  std::vector<Tensor> pooled{Tensor(element_type::f32, {1, 2, 2, 2}), Tensor(element_type::i64, {1, 2, 2, 2})};
  ref::evaluate(pool, {make_f32({1, 2, 4, 4}, xv)}, pooled);
  std::vector<Tensor> u{Tensor(element_type::f32, {1, 2, 4, 4})};
  ref::evaluate(op, {pooled[0], pooled[1]}, u);
  int kept = 0;
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const float v = u[0].data<float>()[i];
    BOOST_TEST((v == 0.0f || v == xv[i]));
    kept += v != 0.0f;
  }
  BOOST_TEST(kept == 8);
  for (int i = 0; i < 8; ++i) BOOST_TEST(u[0].data<float>()[pooled[1].data<int64_t>()[i]] == pooled[0].data<float>()[i]);
  expect_error([&] { ref::evaluate(op, {x, make_i64({1, 1, 2, 2}, {5, 7, 13, 16})}, y); }, {"MaxUnpool", "index 16 is outside the unpooled [1,1,4,4]"});
  y = {Tensor(element_type::f32, {1, 1, 3, 3})};
  expect_error([&] { ref::evaluate(op, {x, at, make_i64({4}, {1, 1, 3, 3})}, y); }, {"MaxUnpool", "cannot hold the unpooled [1,1,4,4]"});
}

BOOST_AUTO_TEST_CASE(roi_align_averages_bilinear_samples_and_maxes_weighted_corners) {
  // X = 4 * row + column: bilinear samples of it are exact, so a bin's average is X at its centre.
  std::vector<float> ramp(16);
  for (std::size_t i = 0; i < 16; ++i) ramp[i] = static_cast<float>(i);
  const auto x = make_f32({1, 1, 4, 4}, ramp);
  auto op = make_op("RoiAlign");
  op.attrs = {{"output_height", int64_t{2}}, {"output_width", int64_t{2}}, {"sampling_ratio", int64_t{2}},
              {"coordinate_transformation_mode", std::string("half_pixel")}};
  std::vector<Tensor> y{Tensor(element_type::f32, {1, 1, 2, 2})};
  // [1, 1, 3, 3] shifted by half a pixel: bins centred on rows and columns 1 and 2.
  ref::evaluate(op, {x, make_f32({1, 4}, {1, 1, 3, 3}), make_i64({1}, {0})}, y, 16);
  BOOST_TEST(floats_of(y[0]) == (std::vector<float>{5, 6, 9, 10}), boost::test_tools::per_element());
  // output_half_pixel, RoiAlign-10's behaviour and its default: centres at 0.5, 1.5, 2.5.
  op.attrs = {{"output_height", int64_t{3}}, {"output_width", int64_t{3}}, {"sampling_ratio", int64_t{2}}};
  const std::vector<float> unshifted{2.5f, 3.5f, 4.5f, 6.5f, 7.5f, 8.5f, 10.5f, 11.5f, 12.5f};
  y = {Tensor(element_type::f32, {1, 1, 3, 3})};
  ref::evaluate(op, {x, make_f32({1, 4}, {0, 0, 3, 3}), make_i64({1}, {0})}, y, 10);
  BOOST_TEST(floats_of(y[0]) == unshifted, boost::test_tools::per_element());
  ref::evaluate(op, {x, make_f32({1, 4}, {0, 0, 3, 3}), make_i64({1}, {0})}, y, 16); // half_pixel by default
  BOOST_TEST(y[0].data<float>()[8] != 12.5f);
  // max over [[4, 0], [0, 8]] sampled at 0.25 and 0.75 on each axis: the largest weighted
  // corner, 8 * 0.75 * 0.75 = 4.5 at (0.75, 0.75), where the largest interpolated value would
  // be 4.75 there (and the samples' average is 3).
  op.attrs = {{"mode", std::string("max")}, {"sampling_ratio", int64_t{2}}};
  y = {Tensor(element_type::f32, {1, 1, 1, 1})};
  const auto corners = make_f32({1, 1, 2, 2}, {4, 0, 0, 8});
  ref::evaluate(op, {corners, make_f32({1, 4}, {0, 0, 1, 1}), make_i64({1}, {0})}, y, 10);
  BOOST_TEST(y[0].data<float>()[0] == 4.5f);
  op.attrs["mode"] = std::string("avg");
  ref::evaluate(op, {corners, make_f32({1, 4}, {0, 0, 1, 1}), make_i64({1}, {0})}, y, 10);
  BOOST_TEST(y[0].data<float>()[0] == 3.0f);
  expect_error([&] { ref::evaluate(op, {corners, make_f32({1, 4}, {0, 0, 1, 1}), make_i64({1}, {1})}, y, 10); },
               {"RoiAlign", "batch index 1 is outside [0, 1)"});
}

BOOST_AUTO_TEST_CASE(tfidf_vectorizer_counts_skipping_n_grams_per_row) {
  // Pool: the 1-gram [5] at coordinate 1, the 2-gram [5, 5] at coordinate 0.
  auto op = make_op("TfIdfVectorizer");
  op.attrs = {{"mode", std::string("TF")},           {"min_gram_length", int64_t{1}},         {"max_gram_length", int64_t{2}},
              {"max_skip_count", int64_t{1}},        {"ngram_counts", std::vector<int64_t>{0, 1}}, {"ngram_indexes", std::vector<int64_t>{1, 0}},
              {"pool_int64s", std::vector<int64_t>{5, 5, 5}}};
  // [5, 5, 5, 5]: four 1-grams (counted once, whatever the skip); [5, 5] three times adjacent
  // and twice one apart.
  Tensor x(element_type::i32, {4});
  std::fill_n(x.data<int32_t>(), 4, 5);
  std::vector<Tensor> y{Tensor(element_type::f32, {2})};
  ref::evaluate(op, {x}, y);
  BOOST_TEST(floats_of(y[0]) == (std::vector<float>{5, 4}), boost::test_tools::per_element());
  op.attrs["weights"] = std::vector<float>{0.5f, 2};
  op.attrs["mode"] = std::string("IDF");
  ref::evaluate(op, {x}, y);
  BOOST_TEST(floats_of(y[0]) == (std::vector<float>{2, 0.5f}), boost::test_tools::per_element());
  op.attrs["mode"] = std::string("TFIDF");
  ref::evaluate(op, {x}, y);
  BOOST_TEST(floats_of(y[0]) == (std::vector<float>{10, 2}), boost::test_tools::per_element());
  // Rows count apart: [5, 5] and [5, 7].
  op.attrs["mode"] = std::string("TF");
  Tensor rows(element_type::i64, {2, 2});
  const std::vector<int64_t> rv{5, 5, 5, 7};
  std::copy(rv.begin(), rv.end(), rows.data<int64_t>());
  y = {Tensor(element_type::f32, {2, 2})};
  ref::evaluate(op, {rows}, y);
  BOOST_TEST(floats_of(y[0]) == (std::vector<float>{1, 2, 0, 1}), boost::test_tools::per_element());
  op.attrs["ngram_counts"] = std::vector<int64_t>{0, 0};
  expect_error([&] { ref::evaluate(op, {rows}, y); }, {"TfIdfVectorizer", "ngram_counts does not split the pool"});
}

BOOST_AUTO_TEST_CASE(tfidf_vectorizer_counts_string_n_grams) {
  // Pool: "b" at coordinate 0, "a b" at 2, "b c" at 1; "z" is in no n-gram.
  auto op = make_op("TfIdfVectorizer");
  op.attrs = {{"mode", std::string("TF")},           {"min_gram_length", int64_t{1}},         {"max_gram_length", int64_t{2}},
              {"max_skip_count", int64_t{0}},        {"ngram_counts", std::vector<int64_t>{0, 1}}, {"ngram_indexes", std::vector<int64_t>{0, 2, 1}},
              {"pool_strings", std::vector<std::string>{"b", "a", "b", "b", "c"}}};
  Tensor x(element_type::string, {2, 3});
  const std::vector<std::string> words{"a", "b", "c", "b", "z", "b"};
  std::copy(words.begin(), words.end(), x.data<std::string>());
  std::vector<Tensor> y{Tensor(element_type::f32, {2, 3})};
  ref::evaluate(op, {x}, y);
  BOOST_TEST(floats_of(y[0]) == (std::vector<float>{1, 1, 1, 2, 0, 0}), boost::test_tools::per_element());
  op.attrs.erase("pool_strings");
  expect_error([&] { ref::evaluate(op, {x}, y); }, {"TfIdfVectorizer", "'pool_strings' is missing"});
}

namespace {

const auto& known_failures = tests::known_failures();

struct case_outcome {
  enum { passed, failed, skipped } kind = passed;
  std::string detail;
};

/// ONNX 1.12 stores bfloat16 test tensors as uint16 bit patterns: view them as bf16.
Tensor as_bf16(const Tensor& t) {
  Tensor r(element_type::bf16, t.get_shape());
  if (t.get_byte_size()) std::memcpy(r.data(), t.data(), t.get_byte_size());
  return r;
}

case_outcome run_case(const fs::path& dir) {
  graph::Graph g;
  try {
    g = graph::read_onnx_file((dir / "model.onnx").string());
  } catch (const std::exception& e) {
    return {case_outcome::skipped, std::string("reader: ") + e.what()};
  }
  std::set<std::string> missing;
  for (const auto& op : g.ops)
    if (!ref::find_kernel(op.type) || (!op.domain.empty() && op.domain != "ai.onnx")) missing.insert(op.domain.empty() ? op.type : op.domain + "." + op.type);
  if (!missing.empty()) {
    std::string m = "no reference kernel for";
    for (const auto& s : missing) m += " " + s;
    return {case_outcome::skipped, m};
  }
  fs::path data = dir / "test_data_set_0";
  // Graph inputs get their values as constants, so data-dependent shapes resolve as we go.
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    fs::path p = data / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break; // trailing optional inputs without data
    Tensor t;
    try {
      t = graph::read_onnx_tensor_file(p.string());
    } catch (const std::exception& e) {
      return {case_outcome::skipped, std::string("input tensor: ") + e.what()};
    }
    graph::Value& v = g.value(g.inputs[i]);
    if (v.type == element_type::bf16 && t.get_element_type() == element_type::u16) t = as_bf16(t);
    v.type = t.get_element_type();
    v.shape = PartialShape(t.get_shape());
    v.constant = t;
  }
  for (const auto& op : g.ops) {
    std::vector<graph::value_info> infos;
    try {
      infos = graph::infer_op(g, op);
    } catch (const std::exception& e) {
      return {case_outcome::skipped, std::string("shape inference: ") + e.what()};
    }
    std::vector<Tensor> in, out;
    for (auto v : op.inputs) {
      if (v == graph::no_value) { in.emplace_back(); continue; }
      const auto& val = g.value(v);
      if (!val.constant) return {case_outcome::skipped, "input '" + val.name + "' has no value (no test data for it)"};
      in.push_back(*val.constant);
    }
    for (std::size_t i = 0; i < op.outputs.size(); ++i) {
      if (op.outputs[i] == graph::no_value) { out.emplace_back(); continue; }
      if (!infos[i].shape.is_static()) return {case_outcome::skipped, "shape inference: " + graph::describe(op) + " output " + std::to_string(i) + " is not static"};
      if (element_size(infos[i].type) == 0 && infos[i].type != element_type::string)
        return {case_outcome::skipped, "unsupported element type " + to_string(infos[i].type)};
      out.emplace_back(infos[i].type, infos[i].shape.to_shape());
    }
    try {
      ref::evaluate(op, in, out, g.opset);
    } catch (const std::exception& e) {
      return {case_outcome::failed, e.what()};
    }
    for (std::size_t i = 0; i < op.outputs.size(); ++i) {
      if (op.outputs[i] == graph::no_value) continue;
      graph::Value& v = g.value(op.outputs[i]);
      v.type = out[i].get_element_type();
      v.shape = PartialShape(out[i].get_shape());
      v.constant = out[i];
    }
  }
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    fs::path p = data / ("output_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) return {case_outcome::failed, "missing " + p.string()};
    Tensor expected;
    try {
      expected = graph::read_onnx_tensor_file(p.string());
    } catch (const std::exception& e) {
      return {case_outcome::skipped, std::string("output tensor: ") + e.what()};
    }
    const auto& v = g.value(g.outputs[i]);
    if (!v.constant) return {case_outcome::failed, "output " + std::to_string(i) + " was not computed"};
    const Tensor& got = *v.constant;
    if (got.get_element_type() == element_type::bf16 && expected.get_element_type() == element_type::u16) expected = as_bf16(expected);
    if (got.get_element_type() != expected.get_element_type())
      return {case_outcome::failed, "output " + std::to_string(i) + " type " + to_string(got.get_element_type()) + " != expected " +
                                        to_string(expected.get_element_type())};
    element_type t = expected.get_element_type();
    bool is_float = t == element_type::f32 || t == element_type::f64 || t == element_type::f16 || t == element_type::bf16;
    double rtol = is_float ? 1e-3 : 0, atol = is_float ? 1e-5 : 0;
    if (t == element_type::f16 || t == element_type::bf16) atol = 1e-3; // one ulp of a 16-bit float near 1
    auto c = tests::compare(got, expected, rtol, atol);
    if (!c.ok) return {case_outcome::failed, "output " + std::to_string(i) + ": " + c.message};
  }
  return {case_outcome::passed, ""};
}

} // namespace

BOOST_AUTO_TEST_CASE(onnx_node_conformance, *tests::needs_onnx_testdata()) {
  const fs::path root = tests::onnx_testdata().path;
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root))
    if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  int passed = 0, failed = 0, skipped = 0, known = 0;
  std::vector<std::string> failures, skips, known_lines, stale;
  for (const auto& dir : cases) {
    std::string id = dir.filename().string();
    case_outcome r;
    try {
      r = run_case(dir);
    } catch (const std::exception& e) {
      r = {case_outcome::failed, std::string("unexpected: ") + e.what()};
    }
    auto k = known_failures.find(id);
    if (r.kind == case_outcome::passed) {
      ++passed;
      if (k != known_failures.end()) stale.push_back(id);
    } else if (r.kind == case_outcome::skipped) {
      ++skipped;
      skips.push_back(id + ": " + r.detail);
    } else if (k != known_failures.end()) {
      ++known;
      known_lines.push_back(id + ": " + r.detail + " [known: " + k->second + "]");
    } else {
      ++failed;
      failures.push_back(id + ": " + r.detail);
    }
  }
  std::cout << "reference conformance: " << passed << " passed, " << failed << " failed, " << skipped << " skipped, "
            << known << " known failures\n";
  for (const auto& f : failures) std::cout << "  FAILED " << f << "\n";
  for (const auto& f : known_lines) std::cout << "  KNOWN FAILURE " << f << "\n";
  for (const auto& s : skips) std::cout << "  skipped " << s << "\n";
  for (const auto& s : stale) std::cout << "  NOW PASSES (remove from known_failures) " << s << "\n";
  std::cout.flush();
  BOOST_TEST(failed == 0);
  BOOST_TEST(stale.empty());
  BOOST_TEST(passed > 500); // guards against a runner that silently skips everything
}
