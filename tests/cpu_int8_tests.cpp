/// The CPU's int8 path (kernels/cpu/int8_ops.cpp) against the reference kernels: QDQ Conv,
/// MatMul and Gemm patterns as a quantizer writes them, the direct integer ops, and the native
/// QuantizeLinear / DequantizeLinear, on odd shapes with per-tensor and per-channel scales,
/// zero points 0 and not, and saturating outputs. Requantized results may differ by one step
/// where the two round a tie differently (oneDNN multiplies by 1 / scale, ONNX divides).
#define BOOST_TEST_MODULE cpu_int8_tests
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "graph/shape_inference.hpp"
#include "kernels/cpu/cpu_device.hpp"
#include "kernels/cpu/int8_ops.hpp"
#include "kernels/cpu/integer_matmul.hpp"
#include "kernels/cpu/native_ops.hpp"
#include "kernels/reference/common.hpp"
#include "runtime/compile_pipeline.hpp"
#include "tests/support/graph_builder.hpp"

using namespace troupe;
using graph::ValueId;
using tests::builder;

namespace {

using ints = std::vector<int64_t>;

Tensor filled(element_type t, const Shape& s, const std::vector<double>& v) {
  Tensor r(t, s);
  for (std::size_t i = 0; i < v.size(); ++i) {
    switch (t) {
    case element_type::f32: r.data<float>()[i] = static_cast<float>(v[i]); break;
    case element_type::u8: r.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]); break;
    case element_type::i8: r.data<int8_t>()[i] = static_cast<int8_t>(v[i]); break;
    case element_type::i32: r.data<int32_t>()[i] = static_cast<int32_t>(v[i]); break;
    default: throw std::runtime_error("filled: type");
    }
  }
  return r;
}

/// Uniform integers in [lo, hi] (or floats in [lo, hi) for f32).
Tensor random_of(element_type t, const Shape& s, unsigned seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::vector<double> v(static_cast<std::size_t>(shape_size(s)));
  for (auto& x : v)
    x = t == element_type::f32 ? std::uniform_real_distribution<double>(lo, hi)(rng)
                               : static_cast<double>(std::uniform_int_distribution<int>(static_cast<int>(lo), static_cast<int>(hi))(rng));
  return filled(t, s, v);
}

ValueId scalar_of(builder& b, element_type t, double v) { return b.constant(filled(t, Shape{}, {v})); }

/// Per-channel (n > 1) or per-tensor weight scales in [lo, hi).
ValueId scales(builder& b, int64_t n, double lo, double hi, unsigned seed) {
  return b.constant(n > 1 ? random_of(element_type::f32, {n}, seed, lo, hi) : filled(element_type::f32, Shape{}, {(lo + hi) / 2}));
}

ValueId zeros(builder& b, element_type t, int64_t n) {
  return b.constant(n > 1 ? filled(t, {n}, std::vector<double>(static_cast<std::size_t>(n), 0)) : filled(t, Shape{}, {0}));
}

/// QuantizeLinear -> DequantizeLinear of an f32 value, uint8.
ValueId qdq(builder& b, ValueId x, float scale, int zp) {
  ValueId s = scalar_of(b, element_type::f32, scale), z = scalar_of(b, element_type::u8, zp);
  return b.op("DequantizeLinear", {b.op("QuantizeLinear", {x, s, z}), s, z});
}

/// DequantizeLinear of constant int8 weights with `n` scales along `axis`.
ValueId dq_weights(builder& b, const Shape& ws, int64_t n, int64_t axis, std::vector<float>& w_scale, unsigned seed) {
  ValueId s = scales(b, n, 0.002, 0.02, seed);
  const Tensor& st = *b.g.value(s).constant;
  w_scale.assign(st.data<float>(), st.data<float>() + st.get_size());
  return b.op("DequantizeLinear", {b.constant(random_of(element_type::i8, ws, seed + 1, -127, 127)), s, zeros(b, element_type::i8, n)},
              {{"axis", axis}});
}

/// int32 bias with scale x_scale * w_scale, as the quantizer writes it.
ValueId dq_bias(builder& b, float x_scale, const std::vector<float>& w_scale, int64_t n, unsigned seed) {
  std::vector<double> bs;
  for (int64_t c = 0; c < n; ++c) bs.push_back(x_scale * w_scale[w_scale.size() > 1 ? static_cast<std::size_t>(c) : 0]);
  ValueId s = b.constant(filled(element_type::f32, {n}, bs));
  return b.op("DequantizeLinear", {b.constant(random_of(element_type::i32, {n}, seed, -3000, 3000)), s, zeros(b, element_type::i32, n)},
              {{"axis", int64_t{0}}});
}

struct outcome {
  int int8_steps = 0;
  std::vector<std::string> kernels; ///< "type exec_type" of every step
};

/// Optimizes and compiles `g` on the CPU as a model compile does, runs it on random inputs and
/// compares every output with the reference run of the unoptimized graph: f32 outputs within
/// `steps` x `step` (the output quantization step), integer outputs within `steps`.
/// `derived`: what earlier compiles of the same constants kept (kernels/derived_constants.hpp).
outcome check(const graph::Graph& g, double step, double steps = 1.0,
              std::shared_ptr<kernels::derived_constants> derived = nullptr) {
  graph::Graph opt = g;
  optimize_graph(opt);
  auto dev = kernels::cpu::make_cpu_device();
  kernels::compile_config cfg;
  cfg.num_threads = 2;
  cfg.profiling = true;
  cfg.derived = std::move(derived);
  auto exe = dev->compile(opt, cfg);
  std::vector<Tensor> inputs;
  for (std::size_t k = 0; k < g.inputs.size(); ++k) {
    const auto& v = g.value(g.inputs[k]);
    const bool f = v.type == element_type::f32;
    inputs.push_back(random_of(v.type, v.shape.to_shape(), 7 + static_cast<unsigned>(k), f ? -1 : v.type == element_type::i8 ? -128 : 0,
                               f ? 1 : 127));
  }
  const auto expect = tests::run_reference(g, inputs);
  const auto got = tests::run_like(*exe, inputs, expect);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto a = kernels::reference::to_doubles(got[i]), e = kernels::reference::to_doubles(expect[i]);
    const double unit = got[i].get_element_type() == element_type::f32 ? step : 1.0;
    double worst = 0;
    std::size_t off = 0;
    for (std::size_t j = 0; j < a.size(); ++j) {
      const double d = std::abs(a[j] - e[j]) / unit;
      worst = std::max(worst, d);
      off += d > 1e-3;
    }
    BOOST_TEST_MESSAGE("output " << i << ": worst " << worst << " steps, " << off << " of " << a.size() << " differ");
    BOOST_TEST(worst <= steps * (1 + 1e-3), "output " << i << ": worst error " << worst << " steps");
    BOOST_TEST(off <= a.size() / 50 + 1, "output " << i << ": " << off << " of " << a.size() << " differ");
  }
  outcome r;
  for (const auto& p : exe->profile()) {
    r.kernels.push_back(p.node_type);
    r.kernels.back().append(" ").append(p.exec_type);
    r.int8_steps += p.exec_type.find(" int8") != std::string::npos;
  }
  return r;
}

/// int8 steps where oneDNN's int8 products are exact (VNNI); none elsewhere (the float path
/// runs the QDQ patterns: without VNNI oneDNN sums u8 x s8 pairs in saturating 16 bits).
int int8_steps_here(int n) { return kernels::cpu::int8_exact_here() ? n : 0; }

std::string listing(const outcome& o) {
  std::string s;
  for (const auto& k : o.kernels) s.append(k).append("; ");
  return s;
}

struct conv_case {
  Shape x;
  int64_t oc, k, group, stride, pad;
  int64_t scales;        ///< 1: per tensor, else per output channel
  int x_zp, y_zp;
  float y_scale;
  std::string activation; ///< "", "Relu", "HardSwish"
  bool bias;
};

/// x -> QDQ -> Conv(DQ weights, DQ bias) -> [activation] -> QDQ -> output.
graph::Graph qdq_conv(const conv_case& c) {
  builder b;
  const float x_scale = c.x_zp == 0 ? 1.f / 255 : 2.f / 255;
  ValueId x = qdq(b, b.input(c.x), x_scale, c.x_zp);
  std::vector<float> w_scale;
  const int64_t n = c.scales > 1 ? c.oc : 1;
  ValueId w = dq_weights(b, {c.oc, c.x[1] / c.group, c.k, c.k}, n, 0, w_scale, 11);
  std::vector<ValueId> in{x, w};
  if (c.bias) in.push_back(dq_bias(b, x_scale, w_scale, c.oc, 13));
  ValueId y = b.op("Conv", in,
                   {{"kernel_shape", ints{c.k, c.k}}, {"strides", ints{c.stride, c.stride}}, {"group", c.group},
                    {"pads", ints{c.pad, c.pad, c.pad, c.pad}}});
  if (!c.activation.empty()) y = b.op(c.activation, {y});
  b.output(qdq(b, y, c.y_scale, c.y_zp));
  b.g.opset = 14; // HardSwish
  return b.g;
}

} // namespace

BOOST_AUTO_TEST_CASE(qdq_conv_runs_on_int8_primitives) {
  const std::vector<conv_case> cases{
      {{1, 5, 9, 11}, 7, 3, 1, 1, 1, 7, 128, 128, 0.01f, "", true},          // odd shapes, zero points not 0
      {{1, 5, 9, 11}, 7, 3, 1, 1, 1, 1, 0, 0, 0.01f, "Relu", true},          // per tensor, zero points 0
      {{2, 16, 13, 7}, 24, 1, 1, 1, 0, 24, 100, 3, 0.02f, "HardSwish", true}, // 1x1, batch 2
      {{1, 24, 10, 10}, 24, 3, 24, 2, 1, 24, 131, 128, 0.01f, "", false},    // depthwise, stride 2, no bias
      {{1, 8, 6, 6}, 32, 3, 1, 1, 1, 32, 128, 128, 0.0005f, "", true},       // output saturates at 0 and 255
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    BOOST_TEST_CONTEXT("case " << i) {
      const auto r = check(qdq_conv(cases[i]), cases[i].y_scale);
      BOOST_TEST(r.int8_steps == int8_steps_here(1), listing(r));
    }
  }
}

BOOST_AUTO_TEST_CASE(qdq_conv_absorbs_its_quantize_and_dequantize) {
  // The output's QuantizeLinear and the input's DequantizeLinear leave no step of their own:
  // what remains is the input's QuantizeLinear, the int8 Conv and the output's DequantizeLinear
  // (and the reorders between their plain buffers and the Conv's layouts).
  const auto r = check(qdq_conv({{1, 5, 9, 11}, 7, 3, 1, 1, 1, 7, 128, 128, 0.01f, "Relu", true}), 0.01);
  const auto ops = std::count_if(r.kernels.begin(), r.kernels.end(), [](const std::string& k) { return k.rfind("Reorder", 0) != 0; });
  if (kernels::cpu::int8_exact_here()) BOOST_TEST(ops == 3, listing(r));
  BOOST_TEST(r.int8_steps == int8_steps_here(1), listing(r));
}

BOOST_AUTO_TEST_CASE(qdq_conv_result_read_in_f32_as_well) {
  // The Conv's result is also a graph output: no requantization inside, an f32 int8 primitive.
  builder b;
  const float x_scale = 2.f / 255;
  ValueId x = qdq(b, b.input({1, 6, 8, 8}), x_scale, 120);
  std::vector<float> w_scale;
  ValueId w = dq_weights(b, {10, 6, 3, 3}, 10, 0, w_scale, 21);
  ValueId y = b.op("Conv", {x, w, dq_bias(b, x_scale, w_scale, 10, 22)}, {{"pads", ints{1, 1, 1, 1}}});
  b.output(y);
  b.output(qdq(b, y, 0.01f, 128));
  const auto r = check(b.g, 0.01);
  BOOST_TEST(r.int8_steps == int8_steps_here(1), listing(r));
}

/// QuantizeLinear -> DequantizeLinear along axis 1 with a scale per channel and one zero point:
/// how OpenVINO's int8 IRs quantize the inputs of depthwise convolutions (graph/ir: FakeQuantize).
ValueId channel_qdq(builder& b, ValueId x, int64_t channels, int zp, unsigned seed) {
  ValueId s = scales(b, channels, 0.004, 0.03, seed), z = b.constant(filled(element_type::u8, {channels}, std::vector<double>(static_cast<std::size_t>(channels), zp)));
  return b.op("DequantizeLinear", {b.op("QuantizeLinear", {x, s, z}, {{"axis", int64_t{1}}}), s, z}, {{"axis", int64_t{1}}});
}

BOOST_AUTO_TEST_CASE(channel_quantized_activations_around_a_depthwise_conv) {
  // 1x1 Conv -> Relu -> per-channel QDQ -> depthwise Conv -> QDQ: the 1x1 requantizes into the
  // per-channel scales (folded into its output scales), the depthwise one takes them into its
  // weights' scales (each output channel reads one input channel). With Clip instead of Relu the
  // requantization cannot be folded (clip(a x) != a clip(x)): the 1x1 writes f32, still right.
  for (const std::string act : {"Relu", "Clip"}) {
    BOOST_TEST_CONTEXT(act) {
      builder b;
      const int64_t c = 12;
      ValueId x = qdq(b, b.input({1, 8, 9, 7}), 2.f / 255, 128);
      std::vector<float> w1, w2;
      ValueId y = b.op("Conv", {x, dq_weights(b, {c, 8, 1, 1}, c, 0, w1, 41)});
      y = act == "Relu" ? b.op("Relu", {y}) : b.op("Clip", {y, scalar_of(b, element_type::f32, 0), scalar_of(b, element_type::f32, 6)});
      y = channel_qdq(b, y, c, 0, 43);
      y = b.op("Conv", {y, dq_weights(b, {c, 1, 3, 3}, c, 0, w2, 45)}, {{"group", c}, {"pads", ints{1, 1, 1, 1}}});
      b.output(qdq(b, y, 0.01f, 128));
      const auto r = check(b.g, 0.01, 2.0);
      BOOST_TEST(r.int8_steps == int8_steps_here(2), listing(r));
      if (kernels::cpu::int8_exact_here() && act == "Relu") {
        // Nothing but the input's QuantizeLinear, two int8 Convs and the output's DequantizeLinear.
        const auto ops = std::count_if(r.kernels.begin(), r.kernels.end(), [](const std::string& k) { return k.rfind("Reorder", 0) != 0; });
        BOOST_TEST(ops == 4, listing(r));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(channel_quantized_input_of_a_full_conv_stays_float) {
  // A per-channel input scale cannot move into a convolution that sums over channels.
  builder b;
  ValueId x = channel_qdq(b, b.input({1, 6, 7, 7}), 6, 0, 51);
  std::vector<float> w;
  b.output(qdq(b, b.op("Conv", {x, dq_weights(b, {4, 6, 3, 3}, 4, 0, w, 53)}), 0.01f, 128));
  const auto r = check(b.g, 0.01);
  BOOST_TEST(r.int8_steps == 0, listing(r));
}

BOOST_AUTO_TEST_CASE(float_weights_stay_on_the_float_path) {
  // Weights that are no int8 grid (an f32 model's own) are not requantized: the f32 Conv runs.
  builder b;
  ValueId x = qdq(b, b.input({1, 4, 7, 7}), 2.f / 255, 128);
  ValueId y = b.op("Conv", {x, b.weights({6, 4, 3, 3})}, {{"pads", ints{1, 1, 1, 1}}});
  b.output(qdq(b, y, 0.02f, 128));
  const auto r = check(b.g, 0.02);
  BOOST_TEST(r.int8_steps == 0, listing(r));
}

BOOST_AUTO_TEST_CASE(qdq_matmul_and_gemm_run_on_int8_primitives) {
  for (int zp : {0, 77}) {
    BOOST_TEST_CONTEXT("x zero point " << zp) {
      builder b; // MatMul of rank 3 by [K, N], per-column scales
      const float x_scale = zp == 0 ? 1.f / 255 : 2.f / 255;
      ValueId x = qdq(b, b.input({2, 5, 19}), x_scale, zp);
      std::vector<float> w_scale;
      ValueId y = b.op("MatMul", {x, dq_weights(b, {19, 13}, 13, 1, w_scale, 31)});
      b.output(qdq(b, y, 0.005f, 128));
      auto r = check(b.g, 0.005);
      BOOST_TEST(r.int8_steps == int8_steps_here(1), listing(r));
    }
  }
  for (int64_t trans_b : {0, 1}) {
    BOOST_TEST_CONTEXT("transB " << trans_b) {
      builder b; // Gemm with bias, alpha
      const float x_scale = 2.f / 255;
      ValueId x = qdq(b, b.input({3, 17}), x_scale, 128);
      std::vector<float> w_scale;
      const Shape ws = trans_b ? Shape{11, 17} : Shape{17, 11};
      ValueId w = dq_weights(b, ws, 11, trans_b ? 0 : 1, w_scale, 41);
      ValueId y = b.op("Gemm", {x, w, b.weights({11})}, {{"transB", trans_b}, {"alpha", 0.5f}});
      b.output(qdq(b, y, 0.01f, 128));
      auto r = check(b.g, 0.01);
      BOOST_TEST(r.int8_steps == int8_steps_here(1), listing(r));
    }
  }
}

BOOST_AUTO_TEST_CASE(gemm_bias_along_rows_stays_on_the_float_path) {
  // C of shape [M, 1] with M = N adds along rows, not output channels: no int8 bias for it.
  builder b;
  ValueId x = qdq(b, b.input({3, 17}), 2.f / 255, 128);
  std::vector<float> w_scale;
  ValueId w = dq_weights(b, {17, 3}, 3, 1, w_scale, 45);
  b.output(qdq(b, b.op("Gemm", {x, w, b.weights({3, 1})}), 0.01f, 128));
  auto r = check(b.g, 0.01);
  BOOST_TEST(r.int8_steps == 0, listing(r));
}

int count_kernels(const outcome& o, const std::string& what) {
  return static_cast<int>(std::count_if(o.kernels.begin(), o.kernels.end(),
                                        [&](const std::string& k) { return k.find(what) != std::string::npos; }));
}

namespace {

/// The products a MatMulInteger takes: one integer_gemm_s16 step (AVX2 without VNNI), or
/// oneDNN's int8 matmul (two of split weights without VNNI) and the epilogue.
enum class int8_path { s16, onednn };

/// Runs `body` on each path this CPU has: integer_gemm_s16 where it is chosen, and oneDNN's
/// products always (TROUPE_CPU_NO_INT8_S16, read per compile).
template <class F> void on_each_int8_path(F body) {
  if (kernels::cpu::integer_gemm_s16_chosen()) {
    BOOST_TEST_CONTEXT("integer_gemm_s16") body(int8_path::s16);
  }
  struct unset {
    ~unset() { unsetenv("TROUPE_CPU_NO_INT8_S16"); }
  } guard;
  setenv("TROUPE_CPU_NO_INT8_S16", "1", 1);
  BOOST_TEST_CONTEXT("oneDNN int8 products") body(int8_path::onednn);
}

/// Checks the steps of `products` MatMulIntegers, `split` of them with weights oneDNN takes in
/// two products without VNNI.
void expect_integer_products(const outcome& r, int8_path path, int products, int split) {
  if (path == int8_path::s16) {
    BOOST_TEST(count_kernels(r, "native:integer_gemm_s16") == products, listing(r));
    BOOST_TEST(r.int8_steps == 0, listing(r));
  } else {
    BOOST_TEST(count_kernels(r, "native:integer_matmul_epilogue") == products, listing(r));
    BOOST_TEST(r.int8_steps == products + (kernels::cpu::int8_exact_here() ? 0 : split), listing(r));
  }
  BOOST_TEST(count_kernels(r, "MatMulInteger ref") == 0, listing(r));
}

} // namespace

BOOST_AUTO_TEST_CASE(direct_integer_ops_run_on_int8_primitives) {
  { // QLinearConv, per-channel weight scales, int32 bias, zero points not 0
    builder b;
    ValueId x = b.input({1, 6, 9, 7}, element_type::u8);
    ValueId w = b.constant(random_of(element_type::i8, {5, 6, 3, 3}, 51, -127, 127));
    ValueId y = b.op("QLinearConv",
                     {x, scalar_of(b, element_type::f32, 0.02), scalar_of(b, element_type::u8, 120), w, scales(b, 5, 0.002, 0.02, 52),
                      zeros(b, element_type::i8, 5), scalar_of(b, element_type::f32, 0.05), scalar_of(b, element_type::u8, 100),
                      b.constant(random_of(element_type::i32, {5}, 53, -2000, 2000))},
                     {{"pads", ints{1, 0, 1, 0}}, {"strides", ints{2, 1}}});
    b.output(y);
    auto r = check(b.g, 1.0);
    BOOST_TEST(r.int8_steps == int8_steps_here(1), listing(r));
  }
  { // QLinearMatMul, per-tensor, s8 input
    builder b;
    ValueId a = b.input({4, 23}, element_type::i8);
    ValueId m = b.constant(random_of(element_type::i8, {23, 9}, 61, -127, 127));
    ValueId y = b.op("QLinearMatMul", {a, scalar_of(b, element_type::f32, 0.03), scalar_of(b, element_type::i8, -5), m,
                                       scalar_of(b, element_type::f32, 0.01), scalar_of(b, element_type::i8, 0),
                                       scalar_of(b, element_type::f32, 0.2), scalar_of(b, element_type::u8, 128)});
    b.output(y);
    auto r = check(b.g, 1.0);
    BOOST_TEST(r.int8_steps == int8_steps_here(1), listing(r));
  }
  { // ConvInteger and MatMulInteger: int32 out, exact
    builder b;
    ValueId x = b.input({1, 3, 8, 8}, element_type::u8);
    b.output(b.op("ConvInteger", {x, b.constant(random_of(element_type::i8, {4, 3, 3, 3}, 71, -127, 127)),
                                  scalar_of(b, element_type::u8, 9)}));
    ValueId a = b.input({3, 12}, element_type::u8);
    b.output(b.op("MatMulInteger", {a, b.constant(random_of(element_type::i8, {12, 5}, 72, -128, 127)),
                                    scalar_of(b, element_type::u8, 200)}));
    // With VNNI one step each; without, the ConvInteger's s32 result on the reference kernel
    // and the MatMulInteger on integer_gemm_s16 (AVX2), or on two oneDNN products of its split
    // weights (integer_matmul.hpp).
    on_each_int8_path([&](int8_path path) {
      auto r = check(b.g, 1.0, 0.0);
      if (kernels::cpu::int8_exact_here()) BOOST_TEST(r.int8_steps == 2, listing(r));
      else BOOST_TEST(r.int8_steps == (path == int8_path::s16 ? 0 : 2), listing(r));
    });
  }
}


BOOST_AUTO_TEST_CASE(native_quantize_and_dequantize_match_the_reference) {
  // Per axis along 1, int8 with zero points: the native loops, exactly the reference's results.
  builder b;
  ValueId x = b.input({2, 3, 5, 7});
  ValueId s = b.constant(filled(element_type::f32, {3}, {0.01, 0.1, 0.003}));
  ValueId z = b.constant(filled(element_type::i8, {3}, {-3, 0, 100}));
  ValueId q = b.op("QuantizeLinear", {x, s, z});
  b.output(q);
  b.output(b.op("DequantizeLinear", {q, s, z}));
  auto r = check(b.g, 1e-9, 0.0);
  BOOST_TEST(count_kernels(r, "native:quantize") == 2, listing(r));
}

BOOST_AUTO_TEST_CASE(per_tensor_quantize_and_dequantize_run_as_reorders) {
  // Per tensor, uint8, a scale small enough to saturate: oneDNN reorders, the QuantizeLinear in
  // the channels-last layout the int8 convolutions read. Within one step of the reference (it
  // multiplies by 1 / scale); the DequantizeLinear exactly float(q - zp) * scale.
  builder b;
  ValueId x = b.input({2, 3, 5, 7});
  ValueId s = scalar_of(b, element_type::f32, 0.002), z = scalar_of(b, element_type::u8, 128);
  ValueId q = b.op("QuantizeLinear", {x, s, z});
  b.output(q);
  b.output(b.op("DequantizeLinear", {q, s, z}));
  auto r = check(b.g, 0.002, 1.0);
  BOOST_TEST(count_kernels(r, "QuantizeLinear jit") == 1, listing(r));
  BOOST_TEST(count_kernels(r, "DequantizeLinear jit") == 1, listing(r));
}

namespace {

/// DynamicQuantizeLinear(x): its u8 output, scale and zero point, as quantize_dynamic writes
/// before every integer product.
struct quantized {
  ValueId q, scale, zero_point;
};
quantized dynamic_quantized(builder& b, ValueId x) {
  b.op("DynamicQuantizeLinear", {x}, {}, 3);
  const auto& out = b.g.ops.back().outputs;
  return {out[0], out[1], out[2]};
}

/// DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W, x_zp, W_zp) -> Cast -> Mul(x_scale *
/// W_scale) [-> Add(bias)], as onnxruntime's quantize_dynamic writes a MatMul. `chain`: 0 the
/// int32 product alone, 1 with the Cast, 2 with the Mul, 3 with the bias Add.
ValueId dynamic_matmul(builder& b, ValueId xq, ValueId xs, ValueId xz, int64_t k, int64_t n, element_type wt,
                       int64_t zps, int64_t scales_n, int chain, unsigned seed) {
  const bool u8 = wt == element_type::u8;
  ValueId w = b.constant(random_of(wt, {k, n}, seed, u8 ? 0 : -128, u8 ? 255 : 127));
  std::vector<ValueId> in{xq, w, xz};
  if (zps > 0) in.push_back(zps > 1 ? b.constant(random_of(wt, {zps}, seed + 1, u8 ? 100 : -20, u8 ? 160 : 20))
                                    : scalar_of(b, wt, u8 ? 131 : 0));
  ValueId y = b.op("MatMulInteger", in);
  if (chain < 1) return y;
  y = b.op("Cast", {y}, {{"to", int64_t{1}}});
  if (chain < 2) return y;
  y = b.op("Mul", {b.op("Mul", {xs, scales(b, scales_n, 0.001, 0.01, seed + 2)}), y});
  if (chain < 3) return y;
  return b.op("Add", {y, b.constant(random_of(element_type::f32, {n}, seed + 3, -2, 2))});
}

} // namespace


BOOST_AUTO_TEST_CASE(dynamic_int8_matmuls_run_natively_and_match_the_reference) {
  // One DynamicQuantizeLinear read by five products: s8 and u8 weights, zero points none,
  // one and one per column, scales per tensor and per column, every chain length. Exact but
  // for the float roundings of the chain (the reference computes it through doubles). 14 rows
  // (tiles of 6 and a tail), K odd, N not a multiple of 16.
  builder b;
  ValueId x = b.input({2, 7, 33});
  const auto [xq, xs, xz] = dynamic_quantized(b, x);
  b.output(dynamic_matmul(b, xq, xs, xz, 33, 19, element_type::i8, 0, 1, 3, 81));
  b.output(dynamic_matmul(b, xq, xs, xz, 33, 40, element_type::u8, 1, 1, 3, 82));
  b.output(dynamic_matmul(b, xq, xs, xz, 33, 21, element_type::u8, 21, 21, 2, 83));
  b.output(dynamic_matmul(b, xq, xs, xz, 33, 17, element_type::i8, 17, 1, 1, 84));
  b.output(dynamic_matmul(b, xq, xs, xz, 33, 9, element_type::u8, 1, 1, 0, 85));
  on_each_int8_path([&](int8_path path) {
    auto r = check(b.g, 1e-5, 1.0);
    expect_integer_products(r, path, 5, 5);
    BOOST_TEST(count_kernels(r, "DynamicQuantizeLinear native:quantize") == 1, listing(r));
  });
}

BOOST_AUTO_TEST_CASE(a_gelu_after_a_dynamic_int8_matmul_runs_in_its_epilogue) {
  // A transformer's feed-forward layer as quantize_dynamic writes it: ... -> Add(bias) -> Gelu,
  // in both forms. Where the CPU has AVX-512 (and the product is one int8 product) the Gelu is
  // computed in the epilogue's pass; elsewhere it stays a step of its own. Either way within
  // 4e-7 of the reference (its erf in double) relative to the output's largest value (a few
  // float roundings), with
  // arguments of either sign up to a few units.
  for (const std::string form : {"none", "tanh"}) {
    BOOST_TEST_CONTEXT("approximate=" << form) {
      builder b;
      ValueId x = b.input({13, 64});
      const auto [xq, xs, xz] = dynamic_quantized(b, x);
      ValueId y = dynamic_matmul(b, xq, xs, xz, 64, 45, element_type::u8, 45, 45, 3, 131);
      b.output(b.op("Gelu", {y}, {{"approximate", form}}));
      graph::Graph opt = b.g;
      optimize_graph(opt);
      kernels::compile_config cfg;
      cfg.profiling = true;
      auto exe = kernels::cpu::make_cpu_device()->compile(opt, cfg);
      const std::vector<Tensor> in{random_of(element_type::f32, {13, 64}, 5, -1, 1)};
      const auto expect = tests::run_reference(b.g, in);
      const auto got = tests::run_like(*exe, in, expect);
      const auto a = kernels::reference::to_doubles(got[0]), e = kernels::reference::to_doubles(expect[0]);
      double worst = 0, largest = 0, lowest = 0;
      for (std::size_t j = 0; j < a.size(); ++j) {
        worst = std::max(worst, std::abs(a[j] - e[j]));
        largest = std::max(largest, std::abs(e[j]));
        lowest = std::min(lowest, e[j]);
      }
      BOOST_TEST_MESSAGE("worst " << worst << " of " << largest << ", lowest " << lowest);
      BOOST_TEST(largest > 1.5);      // the arguments reach the range the test means
      BOOST_TEST(lowest < -0.1);      // and the negative side
      BOOST_TEST(worst <= 4e-7 * largest, "worst " << worst << " of " << largest);
      std::string kinds;
      int fused = 0, separate = 0;
      for (const auto& p : exe->profile()) {
        kinds += p.node_type + " " + p.exec_type + "; ";
        fused += p.exec_type == "native:integer_matmul_epilogue+gelu";
        separate += p.node_type == "Gelu" && p.exec_type != "native:integer_matmul_epilogue+gelu";
      }
      const bool here = kernels::cpu::native_avx512_available() && kernels::cpu::int8_exact_here() &&
                        !kernels::cpu::integer_gemm_s16_chosen();
      BOOST_TEST(fused == (here ? 1 : 0), kinds);
      BOOST_TEST(separate == (here ? 0 : 1), kinds);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_residual_add_after_a_dynamic_int8_matmul_runs_in_its_epilogue) {
  // ... -> Add(bias) -> Add(residual), a transformer's output projections: where the CPU has
  // AVX-512 (one int8 product) the residual is added in the epilogue's pass, else by a step of
  // its own; bit for bit the separate Adds' result either way (each addition rounded alone).
  // Also a residual Add whose other operand is a constant (not a residual: stays a step), and
  // one read twice (stays a step).
  builder b;
  ValueId x = b.input({13, 64}), r = b.input({13, 45});
  const auto [xq, xs, xz] = dynamic_quantized(b, x);
  b.output(b.op("Add", {r, dynamic_matmul(b, xq, xs, xz, 64, 45, element_type::u8, 45, 45, 3, 141)}));
  b.output(b.op("Add", {dynamic_matmul(b, xq, xs, xz, 64, 45, element_type::i8, 0, 1, 3, 142),
                        b.constant(random_of(element_type::f32, {13, 45}, 143, -1, 1))}));
  const ValueId twice = dynamic_matmul(b, xq, xs, xz, 64, 45, element_type::i8, 1, 45, 3, 144);
  b.output(b.op("Add", {twice, r}));
  b.output(b.op("Relu", {twice}));
  on_each_int8_path([&](int8_path path) {
    auto r8 = check(b.g, 1e-5, 1.0);
    int fused = 0;
    for (const auto& k : r8.kernels) fused += k == "Add native:integer_matmul_epilogue";
    const bool here = path == int8_path::onednn && kernels::cpu::native_avx512_available() && kernels::cpu::int8_exact_here();
    // The residual Add's step is the epilogue where fused; the bias Adds' are elsewhere: count
    // the plain Add steps instead (jit or reference), one per unfused Add after a bias.
    int plain_adds = 0;
    for (const auto& k : r8.kernels) plain_adds += k.rfind("Add ", 0) == 0 && k.find("epilogue") == std::string::npos;
    BOOST_TEST(plain_adds == (here ? 2 : 3), listing(r8));
    BOOST_TEST(fused == (path == int8_path::onednn ? 3 : 0), listing(r8));
  });
}

BOOST_AUTO_TEST_CASE(large_dynamic_int8_matmuls_match_the_reference_on_every_row_and_column) {
  // Past the threading cut-over, every row tail (61 = 10 x 6 + 1; 64 rows in the second) and
  // column tail (530 = 33 x 16 + 2), K odd and long: u8 weights over their whole range with
  // zero points per column and a bias, and s8 weights with the s32 product alone.
  builder b;
  ValueId x = b.input({61, 301});
  const auto [xq, xs, xz] = dynamic_quantized(b, x);
  b.output(dynamic_matmul(b, xq, xs, xz, 301, 530, element_type::u8, 530, 530, 3, 121));
  b.output(dynamic_matmul(b, xq, xs, xz, 301, 67, element_type::i8, 1, 1, 0, 122));
  on_each_int8_path([&](int8_path path) {
    auto r = check(b.g, 1e-4, 1.0);
    expect_integer_products(r, path, 2, 2);
  });
}

BOOST_AUTO_TEST_CASE(seven_bit_weights_take_one_int8_product) {
  // Weights within a window of 129 values (reduce_range's 7 bits: s8 in [-64, 63], u8 in
  // [0, 127]; any max - min <= 128) are shifted into [-64, 64], where oneDNN's int8 product is
  // exact even without VNNI (255 x 128 < 2^15): one product each. A window of 130 values still
  // needs the split. Exact.
  builder b;
  ValueId x = b.input({3, 5, 40});
  const auto [xq, xs, xz] = dynamic_quantized(b, x);
  auto product = [&](element_type wt, double lo, double hi, int64_t zps, unsigned seed) {
    Tensor w = random_of(wt, {40, 24}, seed, lo, hi);
    if (wt == element_type::u8) w.data<uint8_t>()[0] = static_cast<uint8_t>(lo), w.data<uint8_t>()[1] = static_cast<uint8_t>(hi);
    else w.data<int8_t>()[0] = static_cast<int8_t>(lo), w.data<int8_t>()[1] = static_cast<int8_t>(hi); // the whole window
    std::vector<ValueId> in{xq, b.constant(w), xz};
    if (zps > 0) in.push_back(zps > 1 ? b.constant(random_of(wt, {zps}, seed + 1, lo, hi)) : scalar_of(b, wt, (lo + hi) / 2));
    ValueId y = b.op("Cast", {b.op("MatMulInteger", in)}, {{"to", int64_t{1}}});
    b.output(b.op("Mul", {b.op("Mul", {xs, scales(b, 1, 0.001, 0.01, seed + 2)}), y}));
  };
  product(element_type::i8, -64, 63, 0, 101);   // reduce_range, symmetric
  product(element_type::u8, 0, 127, 1, 102);    // reduce_range, asymmetric
  product(element_type::u8, 100, 227, 24, 103); // a 128-value window, zero points per column
  product(element_type::i8, -64, 64, 0, 104);   // 129 values, the widest window that fits
  product(element_type::i8, -65, 64, 1, 105);   // 130 values: split
  on_each_int8_path([&](int8_path path) {
    auto r = check(b.g, 1e-5, 1.0);
    expect_integer_products(r, path, 5, 1);
  });
}

BOOST_AUTO_TEST_CASE(a_compile_for_another_shape_reuses_the_derived_weights_and_matches) {
  // A dynamic model compiles once per new shape: the second compile takes the weights the first
  // derived (shifted, split, column sums, oneDNN's layout or integer_gemm_s16's panels) and
  // must compute the same.
  builder b;
  ValueId x = b.input({2, 7, 33});
  const auto [xq, xs, xz] = dynamic_quantized(b, x);
  b.output(dynamic_matmul(b, xq, xs, xz, 33, 40, element_type::u8, 1, 1, 3, 91));
  b.output(dynamic_matmul(b, xq, xs, xz, 33, 21, element_type::i8, 21, 21, 2, 92));
  on_each_int8_path([&](int8_path path) {
    auto derived = std::make_shared<kernels::derived_constants>();
    check(b.g, 1e-5, 1.0, derived);
    const std::size_t made = derived->size();
    // Per product its weights (s16: in panels), and on oneDNN their layout (two when split).
    BOOST_TEST(made >= (path == int8_path::s16 ? 2u : 4u));
    BOOST_TEST(derived->hits() == 0);
    graph::Graph other = with_input_shapes(b.g, {Shape{3, 5, 33}});
    graph::infer_shapes(other);
    auto r = check(other, 1e-5, 1.0, derived);
    BOOST_TEST(derived->size() == made, "the second shape derived its weights again");
    BOOST_TEST(derived->hits() == made);
    expect_integer_products(r, path, 2, 2);
  });
}

BOOST_AUTO_TEST_CASE(dynamic_quantize_linear_native_is_the_reference_exactly) {
  // All-zero input (scale 0), all-positive, all-negative and mixed ranges, on sizes past the
  // threaded cut-over: u8, scale and zero point equal to the reference's.
  for (int64_t n : {int64_t{1}, int64_t{17}, int64_t{70000}}) {
    for (int range = 0; range < 4; ++range) {
      builder b;
      ValueId x = b.input({n});
      ValueId c = range == 0 ? b.op("Mul", {x, scalar_of(b, element_type::f32, 0)})
                  : range == 1 ? b.op("Abs", {x})
                  : range == 2 ? b.op("Neg", {b.op("Abs", {x})})
                               : b.op("Mul", {x, scalar_of(b, element_type::f32, 3.7)});
      b.op("DynamicQuantizeLinear", {c}, {}, 3);
      for (auto v : b.g.ops.back().outputs) b.output(v);
      auto r = check(b.g, 1e-12, 0.0);
      BOOST_TEST(count_kernels(r, "DynamicQuantizeLinear native:quantize") == 1, listing(r));
    }
  }
}

BOOST_AUTO_TEST_CASE(dynamic_quantize_linear_rounds_ties_to_even_and_zeroes_nan_as_the_reference) {
  // Range [0, 255]: scale 1, zero point 0, so x.5 is a tie (2.5 -> 2, 3.5 -> 4); NaN -> 0 and
  // leaves the range alone. 100 and 1000 elements: the 32-wide steps and their scalar tail.
  for (int64_t n : {int64_t{100}, int64_t{1000}}) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<double>(i % 255) + 0.5;
    v[0] = 0, v[1] = 255, v[7] = std::nan(""), v[static_cast<std::size_t>(n - 1)] = std::nan("");
    builder b;
    ValueId zero = b.op("Mul", {b.input({n}), scalar_of(b, element_type::f32, 0)}); // not folded away
    b.op("DynamicQuantizeLinear", {b.op("Add", {zero, b.constant(filled(element_type::f32, {n}, v))})}, {}, 3);
    for (auto out : b.g.ops.back().outputs) b.output(out);
    auto r = check(b.g, 1e-12, 0.0);
    BOOST_TEST(count_kernels(r, "DynamicQuantizeLinear native:quantize") == 1, listing(r));
  }
}

BOOST_AUTO_TEST_CASE(dynamic_int8_convs_run_on_int8_primitives_and_match_the_reference) {
  // DynamicQuantizeLinear -> ConvInteger(s8 or 128-centred u8 weights, padded, strided,
  // grouped) -> Cast -> Mul(x_scale * w_scale) -> Add(bias [C, 1, 1]), and one without the chain:
  // the run-time zero point goes to oneDNN, its padding counts as the zero point as ONNX's does.
  builder b;
  ValueId x = b.input({1, 6, 11, 9});
  const auto [xq, xs, xz] = dynamic_quantized(b, x);
  struct conv_case {
    element_type wt;
    int64_t oc, k, group, stride, pad;
    bool chain;
  };
  unsigned seed = 90;
  for (const conv_case& c : {conv_case{element_type::i8, 8, 3, 1, 1, 1, true}, conv_case{element_type::u8, 5, 3, 1, 2, 1, true},
                             conv_case{element_type::i8, 6, 3, 6, 1, 1, true}, conv_case{element_type::i8, 4, 1, 1, 1, 0, false}}) {
    const bool u8 = c.wt == element_type::u8;
    std::vector<ValueId> in{xq, b.constant(random_of(c.wt, {c.oc, 6 / c.group, c.k, c.k}, ++seed, u8 ? 0 : -128, u8 ? 255 : 127)), xz};
    if (u8) in.push_back(scalar_of(b, element_type::u8, 128));
    ValueId y = b.op("ConvInteger", in,
                     {{"kernel_shape", ints{c.k, c.k}}, {"strides", ints{c.stride, c.stride}}, {"group", c.group},
                      {"pads", ints{c.pad, c.pad, c.pad, c.pad}}});
    if (c.chain) {
      y = b.op("Cast", {y}, {{"to", int64_t{1}}});
      y = b.op("Mul", {y, b.op("Mul", {xs, scalar_of(b, element_type::f32, 0.004)})});
      y = b.op("Add", {y, b.constant(random_of(element_type::f32, {c.oc, 1, 1}, ++seed, -1, 1))});
    }
    b.output(y);
  }
  auto r = check(b.g, 1e-5, 1.0);
  // Without VNNI: two convolutions each and the epilogue; the s32 result alone stays on the reference.
  // With VNNI: one convolution each, the chain in oneDNN's output scales and bias post-op where
  // oneDNN 2.6 has a kernel for them, else (AVX-512 VNNI with a run-time zero point: only its
  // reference one) in the native epilogue; never the reference kernel.
  const bool exact = kernels::cpu::int8_exact_here();
  BOOST_TEST(r.int8_steps == (exact ? 4 : 6), listing(r));
  BOOST_TEST(count_kernels(r, "ConvInteger ref") == (exact ? 0 : 1), listing(r));
  if (exact) BOOST_TEST(count_kernels(r, "native:integer_conv_epilogue") <= 3, listing(r));
  else BOOST_TEST(count_kernels(r, "native:integer_conv_epilogue") == 3, listing(r));
}

BOOST_AUTO_TEST_CASE(seven_bit_conv_weights_take_one_int8_convolution) {
  // s8 weights in [-64, 64] (reduce_range) need no split even without VNNI: one oneDNN int8
  // convolution each (the chain fused into it where oneDNN has such a kernel, else run by the
  // native epilogue),
  // the s32 result too; exact.
  builder b;
  ValueId x = b.input({1, 5, 10, 7});
  const auto [xq, xs, xz] = dynamic_quantized(b, x);
  for (bool chain : {true, false}) {
    Tensor w = random_of(element_type::i8, {6, 5, 3, 3}, chain ? 120 : 121, -64, 64);
    w.data<int8_t>()[0] = -64, w.data<int8_t>()[1] = 64; // the whole window
    ValueId y = b.op("ConvInteger", {xq, b.constant(w), xz},
                     {{"kernel_shape", ints{3, 3}}, {"pads", ints{1, 1, 1, 1}}});
    if (chain) {
      y = b.op("Cast", {y}, {{"to", int64_t{1}}});
      y = b.op("Mul", {y, b.op("Mul", {xs, scalar_of(b, element_type::f32, 0.004)})});
    }
    b.output(y);
  }
  auto r = check(b.g, 1e-5, 1.0);
  BOOST_TEST(r.int8_steps == 2, listing(r));
  BOOST_TEST(count_kernels(r, "ConvInteger ref") == 0, listing(r));
  // (With VNNI the chain may go either way, as in the case above.)
  if (!kernels::cpu::int8_exact_here()) BOOST_TEST(count_kernels(r, "native:integer_conv_epilogue") == 1, listing(r));
}

BOOST_AUTO_TEST_CASE(conv_weight_zero_points_of_any_value_run_on_int8_convolutions) {
  // quantize_dynamic's asymmetric u8 weights: zero points anywhere in 0..255, per tensor or per
  // output channel, depthwise or not, and s8 weights with a zero point. oneDNN's
  // convolution takes none: a second convolution of ones sums each window of x - x_zp per
  // group, and the epilogue takes zp[oc] x that sum off. Exact, with and without VNNI.
  builder b;
  ValueId x = b.input({1, 6, 9, 11});
  const auto [xq, xs, xz] = dynamic_quantized(b, x);
  struct conv_case {
    element_type wt;
    int64_t oc, group, zps, stride;
    unsigned seed;
  };
  // (oneDNN 2.6 has no int8 kernel for groups of 3 input channels but depthwise: not here.)
  for (const conv_case& c : {conv_case{element_type::u8, 8, 1, 1, 1, 130}, conv_case{element_type::u8, 6, 6, 6, 2, 131},
                             conv_case{element_type::u8, 12, 1, 12, 2, 132}, conv_case{element_type::i8, 5, 1, 1, 1, 133}}) {
    const bool u8 = c.wt == element_type::u8;
    ValueId zp = c.zps > 1 ? b.constant(random_of(c.wt, {c.zps}, c.seed + 1, u8 ? 30 : -20, u8 ? 220 : 20))
                           : scalar_of(b, c.wt, u8 ? 77 : -9);
    ValueId y = b.op("ConvInteger", {xq, b.constant(random_of(c.wt, {c.oc, 6 / c.group, 3, 3}, c.seed, u8 ? 0 : -128, u8 ? 255 : 127)), xz, zp},
                     {{"kernel_shape", ints{3, 3}}, {"strides", ints{c.stride, c.stride}}, {"group", c.group}, {"pads", ints{1, 1, 1, 1}}});
    y = b.op("Cast", {y}, {{"to", int64_t{1}}});
    b.output(b.op("Mul", {y, b.op("Mul", {xs, scalar_of(b, element_type::f32, 0.003)})}));
  }
  auto r = check(b.g, 1e-5, 1.0);
  BOOST_TEST(count_kernels(r, "ConvInteger ref") == 0, listing(r));
  BOOST_TEST(count_kernels(r, "native:integer_conv_epilogue") == 4, listing(r));
  // Per convolution: the window sums and the product (two of split weights without VNNI).
  BOOST_TEST(r.int8_steps == (kernels::cpu::int8_exact_here() ? 8 : 12), listing(r));
}
