/// The GPU at every size: every op family the Vulkan device lowers, as one-op graphs whose
/// element count, reduced axis, matrix dims or batch cross the device's limits (65535
/// workgroups per dispatch dimension, 64-wide workgroups, 2^16, 2^20 elements), and zero-sized
/// tensors, each compared with the reference kernels (the REFERENCE device's). A shape the GPU
/// cannot take must be refused in query or compile with the op named, never computed wrong.
/// Sized for lavapipe in CI: long rows, not big tensors.
#define BOOST_TEST_MODULE gpu_size_sweep_tests
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>

#include <troupe/core.hpp>
#include <troupe/exception.hpp>
#include <troupe/float16.hpp>

#include "benchmarks/tiny_onnx.hpp"
#include "kernels/vulkan/vulkan_device.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/graph_builder.hpp"
#include "tests/support/test_tensors.hpp"

using namespace troupe;
namespace kv = troupe::kernels::vulkan;
using tests::builder;
using graph::ValueId;

namespace {

kernels::device& gpu() {
  static auto devices = kv::make_vulkan_devices();
  if (devices.empty()) throw Exception("no Vulkan device: lavapipe (mesa-vulkan-drivers) must be installed");
  return *devices.front();
}

/// The sizes the sweep crosses: 1, odd, one workgroup row, the 49155, the 16-bit
/// boundary either side, 2^20.
constexpr int64_t sizes[] = {1, 17, 4096, 49155, 65535, 65537, 1 << 20};
/// The same, without 2^20, for shapes whose other dims multiply it, and 100003: a loop that
/// stops after 65535 iterations (llvmpipe's limit) loses a third of it, not 2 in 65537.
constexpr int64_t row_sizes[] = {1, 17, 4096, 49155, 65535, 65537, 100003};

/// Beyond what one invocation of a one-row-per-invocation shader may loop over on llvmpipe:
/// such an op may be refused (by name) there, never computed wrong.
bool past_loop_limit(int64_t n) { return n > 60000; }

std::string shape_str(const Shape& s) {
  std::ostringstream o;
  o << '[';
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << ']';
  return o.str();
}

Tensor typed_random(element_type t, const Shape& s, unsigned seed, double lo, double hi) {
  Tensor r(t, s);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  for (int64_t i = 0; i < r.get_size(); ++i) {
    const double v = d(rng);
    switch (t) {
    case element_type::f32: r.data<float>()[i] = static_cast<float>(v); break;
    case element_type::i32: r.data<int32_t>()[i] = static_cast<int32_t>(std::floor(v)); break;
    case element_type::i64: r.data<int64_t>()[i] = static_cast<int64_t>(std::floor(v)); break;
    case element_type::u8: r.data<uint8_t>()[i] = static_cast<uint8_t>(std::floor(v)); break;
    case element_type::i8: r.data<int8_t>()[i] = static_cast<int8_t>(std::floor(v)); break;
    case element_type::boolean: r.data<bool>()[i] = v > (lo + hi) / 2; break;
    case element_type::f16: r.data<uint16_t>()[i] = float_to_half_bits(static_cast<float>(v)); break;
    default: throw Exception("typed_random: no filler for " + to_string(t));
    }
  }
  return r;
}

/// One swept case: a graph, the input range, and what it may do.
struct sweep_case {
  std::string what;
  graph::Graph g;
  double lo = -1, hi = 1;
  /// Relative tolerance against max|ref| (plus per element rtol): long float sums drift.
  double tol = 1e-4;
  /// Integer inputs (indices, targets) are drawn from [0, idx_hi).
  int64_t idx_hi = 1;
  /// Errors against max|ref| only (float16 storage rounds small values coarsely).
  bool scaled = false;
};

int refused = 0, compared = 0;
/// What run_case compiles with (f16 storage for the float16 variants of the shaders).
kernels::compile_config sweep_cfg;

/// Compiles on GPU.0, runs, compares with the reference kernels. A refusal (query or compile)
/// must name the op type; it is counted and reported, never compared.
void run_case(const sweep_case& c, bool may_refuse = false) {
  static const bool verbose = std::getenv("TROUPE_SWEEP_VERBOSE") != nullptr;
  if (verbose) std::cout << "  " << c.what << std::endl;
  BOOST_TEST_CONTEXT(c.what) {
    const auto& op = c.g.ops.front();
    for (const auto& o : c.g.ops) {
      auto s = gpu().query(c.g, o);
      if (!s.supported) {
        BOOST_TEST(s.reason.find(o.type) != std::string::npos, "a refusal names the op: " << s.reason);
        BOOST_TEST(may_refuse, c.what << " refused in query: " << s.reason);
        std::cout << "  refused " << c.what << ": " << s.reason << "\n";
        ++refused;
        return;
      }
    }
    std::unique_ptr<kernels::executable> exe;
    try {
      exe = gpu().compile(c.g, sweep_cfg);
    } catch (const Exception& e) {
      BOOST_TEST(std::string(e.what()).find(op.type) != std::string::npos, "a refusal names the op: " << e.what());
      BOOST_TEST(may_refuse, c.what << " refused in compile: " << e.what());
      std::cout << "  refused " << c.what << " at compile: " << e.what() << "\n";
      ++refused;
      return;
    }
    std::vector<Tensor> inputs;
    unsigned seed = 7;
    for (auto v : c.g.inputs) {
      const auto& val = c.g.value(v);
      const bool idx = val.type == element_type::i64 || val.type == element_type::i32;
      inputs.push_back(idx ? typed_random(val.type, val.shape.to_shape(), seed++, 0, static_cast<double>(c.idx_hi))
                           : typed_random(val.type, val.shape.to_shape(), seed++, c.lo, c.hi));
    }
    auto want = tests::run_reference(c.g, inputs);
    auto got = tests::run_like(*exe, inputs, want);
    ++compared;
    for (std::size_t o = 0; o < got.size(); ++o) {
      if (got[o].get_element_type() != element_type::f32) {
        BOOST_TEST(std::memcmp(got[o].data(), want[o].data(), got[o].get_byte_size()) == 0,
                   c.what << ": output " << o << " differs from the reference");
        continue;
      }
      const float* a = got[o].data<float>();
      const float* b = want[o].data<float>();
      const int64_t n = got[o].get_size();
      double top = 0;
      for (int64_t i = 0; i < n; ++i) top = std::max(top, std::abs(double(b[i])));
      // Scaled to the output's largest magnitude (a softmax row of 65537 is ~1.5e-5 per value)
      // and per element, so that a uniformly wrong row fails.
      double worst = 0;
      int64_t at = -1;
      for (int64_t i = 0; i < n; ++i) {
        const double d = std::abs(double(a[i]) - double(b[i]));
        const double err = c.scaled ? d / (top + 1e-30) : d / (std::abs(double(b[i])) + 1e-3 * top + 1e-30);
        if (!(err <= worst) || (std::isnan(a[i]) != std::isnan(b[i]))) {
          if (std::isnan(a[i]) && std::isnan(b[i])) continue;
          worst = std::isnan(err) ? 1e30 : err;
          at = i;
        }
      }
      BOOST_TEST(worst <= c.tol, c.what << ": output " << o << " worst error " << worst << " at " << at << " (gpu "
                                        << (at >= 0 ? a[at] : 0.f) << ", ref " << (at >= 0 ? b[at] : 0.f) << ")");
    }
  }
}

/// One op over inputs of `shapes` (the first `n_inputs` are inputs, the rest come from `extra`).
sweep_case one_op(const std::string& type, const std::vector<Shape>& in_shapes,
                  std::map<std::string, graph::AttributeValue> attrs = {}, double lo = -1, double hi = 1,
                  element_type t = element_type::f32) {
  builder b;
  std::vector<ValueId> in;
  for (const auto& s : in_shapes) in.push_back(b.input(s, t));
  b.output(b.op(type, in, std::move(attrs)));
  std::string what = type;
  for (const auto& s : in_shapes) what.append(" ").append(shape_str(s)); // not " " + ...: GCC 12's -Wrestrict misfires
  return {what, b.g, lo, hi};
}

/// A Reduce op over `axis` of `shape` (axes an input for ReduceSum at opset 13, else an
/// attribute), keepdims, inputs in [0.5, 1.5] so that sums do not cancel.
sweep_case reduce_case(const std::string& type, const Shape& shape, int64_t axis) {
  builder b;
  auto x = b.input(shape);
  if (type == "ReduceSum") b.output(b.op(type, {x, b.i64s({axis})}));
  else b.output(b.op(type, {x}, {{"axes", std::vector<int64_t>{axis}}}));
  sweep_case c{type + " " + shape_str(shape) + " axis " + std::to_string(axis), b.g, 0.5, 1.5};
  return c;
}

struct timer {
  std::string name;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  ~timer() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << name << ": " << s << " s (compared " << compared << ", refused " << refused << ")\n";
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(gpu_size_sweep, *boost::unit_test::precondition(tests::gpu_present()))

BOOST_AUTO_TEST_CASE(elementwise_over_every_size) {
  timer t{"elementwise"};
  for (int64_t n : sizes) {
    run_case(one_op("Sigmoid", {{n}}, {}, -4, 4));
    run_case(one_op("Add", {{n}, {n}}));
    run_case(one_op("Mul", {{n}, {1}}));
    builder w;
    auto cond = w.input({n}, element_type::boolean);
    w.output(w.op("Where", {cond, w.input({n}), w.input({1})}));
    run_case({"Where [" + std::to_string(n) + "]", w.g});
  }
  run_case(one_op("Relu", {{3, 1 << 20}}));
  run_case(one_op("Gelu", {{(1 << 20) + 3}}, {}, -3, 3));
  run_case(one_op("HardSigmoid", {{65537}}, {{"alpha", 0.3f}, {"beta", 0.4f}}, -3, 3));
  run_case(one_op("Max", {{65537}, {65537}, {1}}));
  run_case(one_op("Add", {{65537, 3}, {65537, 1}}));   // broadcast along a long outer axis
  run_case(one_op("Less", {{1 << 20}, {1 << 20}}));    // a typed shader (bool out)
  run_case(one_op("Add", {{1 << 20}, {1 << 20}}, {}, -100, 100, element_type::i32));
  { // Cast f32 -> i32 and -> f16-free u8 over 2^20 + 1
    builder b;
    auto x = b.input({(1 << 20) + 1});
    b.output(b.op("Cast", {x}, {{"to", int64_t(6)}}));
    run_case({"Cast f32->i32 [2^20+1]", b.g, -1000, 1000});
  }
  { // Cast i32 -> f32 over 2^20 (whole texels: cast_i32_f32_v4)
    builder b;
    auto x = b.input({1 << 20}, element_type::i32);
    b.output(b.op("Cast", {x}, {{"to", int64_t(1)}}));
    run_case({"Cast i32->f32 [2^20]", b.g, -100000, 100000});
  }
  { // BatchNormalization over a long spatial dim
    builder b;
    auto x = b.input({1, 2, 65537});
    b.output(b.op("BatchNormalization", {x, b.weights({2}), b.weights({2}), b.weights({2}), b.variance(2, 5)}));
    run_case({"BatchNormalization [1,2,65537]", b.g});
  }
}

BOOST_AUTO_TEST_CASE(softmax_and_layer_norm_over_long_rows) {
  timer t{"softmax/layernorm"};
  for (int64_t n : row_sizes) {
    run_case(one_op("Softmax", {{1, n}}, {{"axis", int64_t(-1)}}, -4, 4));
    run_case(one_op("LogSoftmax", {{1, n}}, {{"axis", int64_t(-1)}}, -4, 4));
    builder b;
    auto x = b.input({2, n});
    b.output(b.op("LayerNormalization", {x, b.weights({n}), b.weights({n})}, {{"axis", int64_t(-1)}}));
    run_case({"LayerNormalization [2," + std::to_string(n) + "]", b.g, -2, 3});
  }
  run_case(one_op("Softmax", {{65537, 3}}, {{"axis", int64_t(0)}}, -4, 4)); // long strided axis
  run_case(one_op("Softmax", {{65537, 5}}, {{"axis", int64_t(-1)}}, -4, 4)); // many rows
  run_case(one_op("Softmax", {{1 << 20}}, {{"axis", int64_t(0)}}, -4, 4));
  {
    builder b;
    auto x = b.input({1, 1 << 20});
    b.output(b.op("LayerNormalization", {x, b.weights({1 << 20}), b.weights({1 << 20})}, {{"axis", int64_t(-1)}}));
    sweep_case c{"LayerNormalization [1,2^20]", b.g, -2, 3};
    c.tol = 1e-3; // float sums of 16384 elements per invocation
    run_case(c);
  }
  {
    builder b;
    auto x = b.input({65537, 4});
    b.output(b.op("LayerNormalization", {x, b.weights({4}), b.weights({4})}, {{"axis", int64_t(-1)}}));
    run_case({"LayerNormalization [65537,4]", b.g, -2, 3});
  }
}

BOOST_AUTO_TEST_CASE(reductions_over_long_axes) {
  timer t{"reductions"};
  for (int64_t n : row_sizes) {
    for (const char* r : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceLogSumExp", "ReduceL2"})
      run_case(reduce_case(r, {2, n}, 1));
    run_case(one_op("ArgMax", {{2, n}}, {{"axis", int64_t(1)}}));
    run_case(one_op("ArgMin", {{2, n}}, {{"axis", int64_t(1)}}));
    run_case(one_op("Hardmax", {{2, n}}, {{"axis", int64_t(1)}}));
  }
  run_case(reduce_case("ReduceSum", {1 << 20}, 0));
  run_case(reduce_case("ReduceMean", {65537, 3}, 0));
  run_case(reduce_case("ReduceMin", {65537, 3}, 1)); // 65537 outputs, 3 each
  run_case(reduce_case("ReduceMean", {3, 4096}, 1));
  run_case(one_op("ArgMax", {{65537, 3}}, {{"axis", int64_t(0)}}));
  run_case(one_op("ArgMin", {{3, 65537}}, {{"axis", int64_t(1)}, {"select_last_index", int64_t(1)}}, 0, 4));
}

BOOST_AUTO_TEST_CASE(cumsum_and_topk_over_long_axes) {
  timer t{"cumsum/topk"};
  for (int64_t n : row_sizes) {
    builder b;
    auto x = b.input({2, n});
    b.output(b.op("CumSum", {x, b.i64s({1})}));
    sweep_case c{"CumSum [2," + std::to_string(n) + "] axis 1", b.g, 0.5, 1.5};
    c.tol = 1e-3;
    run_case(c, past_loop_limit(n));
    builder k;
    auto kx = k.input({2, n});
    const int64_t kk = std::min<int64_t>(n, 5);
    auto kv = k.i64s({kk});
    k.op("TopK", {kx, kv}, {{"axis", int64_t(1)}}, 2);
    k.output(k.g.ops.back().outputs[0]);
    k.output(k.g.ops.back().outputs[1]);
    run_case({"TopK [2," + std::to_string(n) + "] k " + std::to_string(kk), k.g}, past_loop_limit(n));
  }
  builder b;
  auto x = b.input({65537, 2});
  b.output(b.op("CumSum", {x, b.i64s({0})}));
  sweep_case c{"CumSum [65537,2] axis 0", b.g, 0.5, 1.5};
  c.tol = 1e-3;
  run_case(c, true);
}

BOOST_AUTO_TEST_CASE(matmul_and_gemm_past_65535) {
  timer t{"matmul/gemm"};
  run_case(one_op("MatMul", {{1, 100003}, {100003, 1}}, {}, 0, 1), true); // K long
  run_case(one_op("MatMul", {{3, 100004}, {100004, 4}}, {}, 0, 1), true); // K long, N texels
  run_case(one_op("MatMul", {{3, 65536}, {65536, 4}}, {}, 0, 1));         // K long, one loop per 4
  run_case(one_op("MatMul", {{65537, 4}, {4, 3}}));               // M long
  run_case(one_op("MatMul", {{3, 4}, {4, 65537}}));               // N long
  run_case(one_op("MatMul", {{2, 8}, {8, 65540}}));               // N long, whole texels
  run_case(one_op("MatMul", {{65537, 2, 3}, {65537, 3, 2}}));     // batch long
  run_case(one_op("MatMul", {{65537, 1, 4}, {4, 8}}));            // batch long, shared weights (gemm)
  run_case(one_op("MatMul", {{4, 300, 300}, {4, 300, 300}}, {}, 0, 1)); // 360k outputs
  {
    builder b;
    auto a = b.input({65537, 8});
    b.output(b.op("MatMul", {a, b.weights({8, 6})}));
    run_case({"MatMul [65537,8] x const [8,6] (gemm, padded weights)", b.g});
  }
  {
    builder b;
    auto a = b.input({4, 65537});
    b.output(b.op("Gemm", {a, b.weights({5, 65537}), b.weights({5})}, {{"transB", int64_t(1)}}));
    sweep_case c{"Gemm [4,65537] x [5,65537]^T + C", b.g, 0, 1};
    run_case(c, true);
  }
  {
    builder b;
    auto a = b.input({65537, 3});
    b.output(b.op("Gemm", {a, b.weights({3, 4})}));
    run_case({"Gemm [65537,3] x [3,4]", b.g});
  }
}

BOOST_AUTO_TEST_CASE(conv_and_pool_past_65535) {
  timer t{"conv/pool"};
  auto conv = [](const Shape& x, const Shape& w, std::map<std::string, graph::AttributeValue> a, bool bias,
                 const std::string& what) {
    builder b;
    auto xi = b.input(x);
    std::vector<ValueId> in{xi, b.weights(w)};
    if (bias) in.push_back(b.weights({w[0]}));
    b.output(b.op("Conv", in, std::move(a)));
    return sweep_case{what, b.g};
  };
  run_case(conv({1, 2, 1, 65537}, {3, 2, 1, 3}, {{"pads", std::vector<int64_t>{0, 1, 0, 1}}}, true, "Conv W 65537"));
  run_case(conv({1, 2, 65537, 1}, {3, 2, 3, 1}, {{"pads", std::vector<int64_t>{1, 0, 1, 0}}}, true, "Conv H 65537"));
  run_case(conv({1, 2, 65537}, {3, 2, 3}, {}, false, "Conv1D L 65537"));
  run_case(conv({1, 65537, 1, 1}, {4, 65537, 1, 1}, {}, true, "Conv C_in 65537"), true);
  run_case(conv({1, 16384, 1, 1}, {4, 16384, 1, 1}, {}, true, "Conv C_in 16384"));
  run_case(conv({1, 4, 1, 1}, {65537, 4, 1, 1}, {}, true, "Conv C_out 65537"));
  run_case(conv({1, 65537, 1, 2}, {65537, 1, 1, 2}, {{"group", int64_t(65537)}}, true, "Conv depthwise 65537 channels"));
  run_case(conv({65537, 1, 2, 2}, {2, 1, 1, 1}, {}, false, "Conv batch 65537"));
  run_case(conv({70000, 2, 1, 2}, {3, 2, 1, 2}, {}, false, "Conv batch 70000 row"));
  run_case(conv({65537, 4, 2, 2}, {3, 4, 1, 1}, {}, true, "Conv 1x1 (GEMM per image) batch 65537"));
  {
    builder b;
    auto x = b.input({1, 2, 1, 65537});
    b.output(b.op("ConvTranspose", {x, b.weights({2, 3, 1, 2})}, {{"strides", std::vector<int64_t>{1, 2}}}));
    run_case({"ConvTranspose W 65537", b.g});
  }
  run_case(conv({1, 2, 1, 2, 40000}, {3, 2, 1, 1, 3}, {}, true, "Conv 3-D W 40000"));
  run_case(one_op("MaxPool", {{1, 1, 1, 2, 65537}}, {{"kernel_shape", std::vector<int64_t>{1, 1, 3}}}));
  run_case(one_op("MaxPool", {{1, 2, 1, 65537}}, {{"kernel_shape", std::vector<int64_t>{1, 3}}}));
  run_case(one_op("AveragePool", {{1, 2, 65537, 1}}, {{"kernel_shape", std::vector<int64_t>{3, 1}}}));
  run_case(one_op("GlobalAveragePool", {{1, 3, 1, 100003}}));
  run_case(one_op("GlobalMaxPool", {{2, 3, 512, 1024}}));
  run_case(one_op("GlobalAveragePool", {{1, 3, 1, 49155}}));
  run_case(one_op("GlobalMaxPool", {{1, 3, 200, 300}}));
  run_case(one_op("GlobalMaxPool", {{1, 3, 256, 257}}));
  run_case(one_op("GlobalAveragePool", {{1, 3, 2, 2, 100}})); // 3-D, a short plane
  run_case(one_op("GlobalAveragePool", {{65537, 2, 1, 1}}));
  run_case(one_op("MaxPool", {{65537, 1, 1, 2}}, {{"kernel_shape", std::vector<int64_t>{1, 2}}}), true);
}

BOOST_AUTO_TEST_CASE(movement_and_indexing_past_65535) {
  timer t{"movement/indexing"};
  run_case(one_op("Transpose", {{65537, 3}}, {{"perm", std::vector<int64_t>{1, 0}}}));
  run_case(one_op("Transpose", {{2, 1 << 19}}, {{"perm", std::vector<int64_t>{1, 0}}}));
  run_case(one_op("Concat", {{65537, 2}, {65537, 3}}, {{"axis", int64_t(1)}}));
  run_case(one_op("Concat", {{1 << 20}, {17}}, {{"axis", int64_t(0)}}));
  run_case(one_op("Split", {{2, 65538}}, {{"axis", int64_t(1)}}));
  run_case(one_op("Trilu", {{3, 65537}}));
  run_case(one_op("Trilu", {{65537, 3}}, {{"upper", int64_t(0)}}));
  run_case(one_op("DepthToSpace", {{1, 4, 1, 65537}}, {{"blocksize", int64_t(2)}}));
  run_case(one_op("SpaceToDepth", {{1, 1, 2, 65538}}, {{"blocksize", int64_t(2)}}));
  {
    builder b;
    auto x = b.input({2, 65537});
    b.output(b.op("Slice", {x, b.i64s({1}), b.i64s({65537}), b.i64s({1}), b.i64s({2})}));
    run_case({"Slice [2,65537] step 2", b.g});
  }
  {
    builder b;
    auto x = b.input({1, 65537});
    b.output(b.op("Tile", {x, b.i64s({3, 1})}));
    run_case({"Tile [1,65537] x3", b.g});
  }
  {
    builder b;
    auto x = b.input({1, 65537});
    b.output(b.op("Expand", {x, b.i64s({16, 65537})}));
    run_case({"Expand [1,65537] -> [16,65537]", b.g});
  }
  {
    builder b;
    auto x = b.input({2, 65537});
    b.output(b.op("Pad", {x, b.i64s({0, 3, 1, 2})}));
    run_case({"Pad [2,65537]", b.g});
  }
  { // Gather: a long table, many indices, a long inner row
    builder b;
    auto x = b.input({65537, 4});
    auto idx = b.input({65537}, element_type::i32);
    b.output(b.op("Gather", {x, idx}, {{"axis", int64_t(0)}}));
    sweep_case c{"Gather [65537,4] by 65537 i32 indices", b.g};
    c.idx_hi = 65537;
    run_case(c);
  }
  {
    builder b;
    auto x = b.input({3, 65537});
    auto idx = b.input({2}, element_type::i64);
    b.output(b.op("Gather", {x, idx}, {{"axis", int64_t(0)}}));
    sweep_case c{"Gather [3,65537] rows", b.g};
    c.idx_hi = 3;
    run_case(c);
  }
  {
    builder b;
    auto x = b.input({2, 65537});
    auto idx = b.input({2, 65537}, element_type::i64);
    b.output(b.op("GatherElements", {x, idx}, {{"axis", int64_t(1)}}));
    sweep_case c{"GatherElements [2,65537]", b.g};
    c.idx_hi = 65537;
    run_case(c);
  }
  {
    builder b;
    auto x = b.input({65537, 3});
    auto idx = b.input({65537, 1}, element_type::i64);
    b.output(b.op("GatherND", {x, idx}));
    sweep_case c{"GatherND [65537,3]", b.g};
    c.idx_hi = 65537;
    run_case(c);
  }
  {
    builder b;
    auto x = b.input({65537, 2});
    Tensor idx(element_type::i64, {65537, 1});
    for (int64_t i = 0; i < 65537; ++i) idx.data<int64_t>()[i] = 65536 - i; // a permutation
    auto iv = b.constant(idx);
    auto u = b.input({65537, 2});
    b.output(b.op("ScatterND", {x, iv, u}));
    run_case({"ScatterND [65537,2]", b.g}, true); // every output row looks at every index tuple
  }
  {
    builder b;
    auto x = b.input({20000, 2});
    Tensor idx(element_type::i64, {20000, 1});
    for (int64_t i = 0; i < 20000; ++i) idx.data<int64_t>()[i] = 19999 - i;
    auto iv = b.constant(idx);
    auto u = b.input({20000, 2});
    b.output(b.op("ScatterND", {x, iv, u}));
    run_case({"ScatterND [20000,2] by constant int64 indices", b.g});
  }
  {
    builder b;
    auto x = b.input({2, 65537});
    Tensor idx(element_type::i32, {2, 65537});
    for (int64_t i = 0; i < 2 * 65537; ++i) idx.data<int32_t>()[i] = static_cast<int32_t>(65536 - i % 65537);
    auto u = b.input({2, 65537});
    b.output(b.op("ScatterElements", {x, b.constant(idx), u}, {{"axis", int64_t(1)}}));
    run_case({"ScatterElements [2,65537]", b.g}, true);
  }
  {
    builder b;
    auto x = b.input({1, 1, 1, 40000});
    Tensor scales(element_type::f32, {4});
    float sc[] = {1, 1, 2, 2};
    std::copy(sc, sc + 4, scales.data<float>());
    b.output(b.op("Resize", {x, graph::no_value, b.constant(scales)}, {{"mode", std::string("linear")}}));
    run_case({"Resize [1,1,1,40000] x2 linear", b.g});
  }
  run_case(one_op("Einsum", {{2, 100003}, {100003, 3}}, {{"equation", std::string("ij,jk->ik")}}, 0, 1), true);
  run_case(one_op("Einsum", {{2, 4096}, {4096, 3}}, {{"equation", std::string("ij,jk->ik")}}, 0, 1));
  run_case(one_op("Einsum", {{65537, 3}}, {{"equation", std::string("ij->ji")}}));
}

BOOST_AUTO_TEST_CASE(losses_and_attention_past_65535) {
  timer t{"loss/attention"};
  {
    builder b;
    auto x = b.input({65537, 3});
    auto tgt = b.input({65537}, element_type::i64);
    b.output(b.op("NegativeLogLikelihoodLoss", {x, tgt}, {{"reduction", std::string("mean")}}));
    sweep_case c{"NegativeLogLikelihoodLoss N 65537 mean", b.g};
    c.idx_hi = 3;
    run_case(c);
  }
  {
    builder b;
    auto x = b.input({2, 65537});
    auto tgt = b.input({2}, element_type::i64);
    b.output(b.op("SoftmaxCrossEntropyLoss", {x, tgt}, {{"reduction", std::string("none")}}));
    sweep_case c{"SoftmaxCrossEntropyLoss C 65537", b.g};
    c.idx_hi = 65537;
    run_case(c, true);
  }
  { // the fused attention block: scores over a long key axis
    builder b;
    auto q = b.input({1, 2, 8});
    auto k = b.input({1, 8, 65537});
    auto v = b.input({1, 65537, 8});
    auto s = b.op("MatMul", {q, k});
    auto p = b.op("Softmax", {s}, {{"axis", int64_t(-1)}});
    b.output(b.op("MatMul", {p, v}));
    run_case({"attention block, 65537 keys", b.g, -1, 1}, true);
  }
}

/// The float16-storage variants of the workgroup shaders and of the word gather (f16 tensors on
/// the device, f32 at the boundary), at long rows, within float16's rounding.
BOOST_AUTO_TEST_CASE(float16_storage_over_long_rows) {
  timer t{"f16 storage"};
  sweep_cfg.inference_precision = element_type::f16;
  struct restore {
    ~restore() { sweep_cfg = {}; }
  } at_exit;
  auto f16_case = [](sweep_case c) {
    c.tol = 1e-2;
    c.scaled = true;
    return c;
  };
  run_case(f16_case(one_op("Softmax", {{1, 49155}}, {{"axis", int64_t(-1)}}, -4, 4)));
  run_case(f16_case(one_op("LogSoftmax", {{2, 65537}}, {{"axis", int64_t(-1)}}, -4, 4)));
  run_case(f16_case(reduce_case("ReduceMean", {2, 65537}, 1)));
  run_case(f16_case(reduce_case("ReduceMax", {2, 65537}, 1))); // (an arg-max could pick another of two values float16 rounds together)
  run_case(f16_case(one_op("GlobalAveragePool", {{1, 2, 300, 300}})));
  {
    builder b;
    auto x = b.input({2, 65537});
    b.output(b.op("LayerNormalization", {x, b.weights({65537}), b.weights({65537})}, {{"axis", int64_t(-1)}}));
    run_case(f16_case({"LayerNormalization [2,65537]", b.g, -2, 3}));
  }
  {
    builder b;
    auto x = b.input({65537, 3});
    auto idx = b.input({70001}, element_type::i64);
    b.output(b.op("Gather", {x, idx}, {{"axis", int64_t(0)}}));
    sweep_case c{"Gather f32 [65537,3] by 70001 (odd: half a word at the end)", b.g};
    c.idx_hi = 65537;
    run_case(f16_case(c));
  }
}

BOOST_AUTO_TEST_CASE(zero_sized_tensors) {
  timer t{"zero-sized"};
  run_case(one_op("Relu", {{0, 3}}));
  run_case(one_op("Add", {{0, 3}, {1, 3}}));
  run_case(one_op("Softmax", {{0, 5}}, {{"axis", int64_t(-1)}}));
  run_case(reduce_case("ReduceSum", {0, 4}, 0));
  run_case(reduce_case("ReduceMax", {4, 0}, 0));
  run_case(one_op("MatMul", {{0, 4}, {4, 3}}));
  run_case(one_op("MatMul", {{3, 0}, {0, 4}}));
  run_case(one_op("Transpose", {{0, 3}}, {{"perm", std::vector<int64_t>{1, 0}}}));
  run_case(one_op("Concat", {{0, 3}, {2, 3}}, {{"axis", int64_t(0)}}));
  run_case(one_op("ArgMax", {{0, 3}}, {{"axis", int64_t(1)}}));
  {
    builder b;
    auto x = b.input({3, 0});
    b.output(b.op("LayerNormalization", {x, b.weights({0}), b.weights({0})}, {{"axis", int64_t(-1)}}));
    run_case({"LayerNormalization [3,0]", b.g}, true);
  }
  {
    builder b;
    auto x = b.input({4, 3});
    auto idx = b.input({0}, element_type::i32);
    b.output(b.op("Gather", {x, idx}, {{"axis", int64_t(0)}}));
    run_case({"Gather with no indices", b.g});
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---- what a dynamically quantized transformer needs on the GPU ------------------------------

BOOST_AUTO_TEST_SUITE(dynamic_quantization, *boost::unit_test::precondition(tests::gpu_present()))

namespace {

/// Runs `g` on the GPU with `inputs` and compares every output with the reference byte for byte.
/// Returns what each op ran as ("Cast optimized out", "Add vulkan:matmul_integer_w4_f", ...), one
/// per line.
std::string exact(const std::string& what, const graph::Graph& g, const std::vector<Tensor>& inputs,
                  kernels::compile_config cfg = {}) {
  std::string ran;
  cfg.profiling = true;
  BOOST_TEST_CONTEXT(what) {
    for (const auto& o : g.ops) {
      auto s = gpu().query(g, o);
      BOOST_TEST_REQUIRE(s.supported, s.reason);
    }
    auto exe = gpu().compile(g, cfg);
    auto want = tests::run_reference(g, inputs);
    auto got = tests::run_like(*exe, inputs, want);
    for (std::size_t o = 0; o < got.size(); ++o)
      BOOST_TEST(std::memcmp(got[o].data(), want[o].data(), got[o].get_byte_size()) == 0,
                 what << ": output " << o << " differs from the reference");
    for (const auto& p : exe->profile())
      ran += p.node_type + " " + (p.state == kernels::op_profile::status::optimized_out ? std::string("optimized out") : p.exec_type) + "\n";
  }
  return ran;
}

Tensor ids(element_type t, const Shape& s, std::vector<int64_t> v) {
  Tensor r(t, s);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (t == element_type::i64) r.data<int64_t>()[i] = v[i];
    else r.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
  }
  return r;
}

} // namespace

BOOST_AUTO_TEST_CASE(gather_of_every_element_size) {
  // A constant u8 embedding table read by int64 token ids, as quantize_dynamic writes it.
  for (element_type dt : {element_type::u8, element_type::i8, element_type::i32, element_type::f16, element_type::f32}) {
    for (int64_t axis : {0, 1}) {
      builder b;
      auto table = b.constant(typed_random(dt, {1000, 7}, 11, dt == element_type::u8 ? 0 : -100, 100));
      auto idx = b.input({2, 5}, element_type::i64);
      b.output(b.op("Gather", {table, idx}, {{"axis", axis}}));
      exact("Gather " + to_string(dt) + " axis " + std::to_string(axis), b.g,
            {ids(element_type::i64, {2, 5}, {0, 999 * (1 - axis) + 6 * axis, 3, -1, 5, 2, 4, -7 + axis * 6, 1, 0})});
    }
    // Table and indices both inputs, int32 indices, past 65535 entries.
    builder b;
    auto table = b.input({65537, 3}, dt);
    auto idx = b.input({70000}, element_type::i32);
    b.output(b.op("Gather", {table, idx}, {{"axis", int64_t(0)}}));
    std::vector<int64_t> v(70000);
    for (int64_t i = 0; i < 70000; ++i) v[static_cast<std::size_t>(i)] = (i * 7919) % 65537 - (i % 3 == 0 ? 65537 : 0);
    exact("Gather " + to_string(dt) + " [65537,3] by 70000", b.g,
          {typed_random(dt, {65537, 3}, 5, dt == element_type::u8 ? 0 : -100, 100), ids(element_type::i32, {70000}, v)});
  }
}

BOOST_AUTO_TEST_CASE(a_token_id_outside_the_table_is_a_named_error) {
  builder b;
  auto table = b.constant(typed_random(element_type::u8, {1000, 8}, 3, 0, 255));
  auto idx = b.input({1, 4}, element_type::i64);
  b.output(b.op("Gather", {table, idx}));
  auto exe = gpu().compile(b.g, {});
  for (int64_t bad : {int64_t(1000), int64_t(-1001), int64_t(1) << 40}) {
    std::vector<Tensor> out;
    try {
      exe->run({ids(element_type::i64, {1, 4}, {1, 2, bad, 3})}, out);
      BOOST_ERROR("token id " << bad << " in a table of 1000 ran");
    } catch (const kernels::device_error& e) {
      const std::string msg = e.what();
      BOOST_TEST((e.kind() == kernels::failure_kind::bad_input));
      for (const std::string& piece : {std::string("Gather"), std::to_string(bad), std::string("1000 entries")})
        BOOST_TEST(msg.find(piece) != std::string::npos, "'" << msg << "' lacks '" << piece << "'");
    }
    // The next request with good ids runs.
    exe->run({ids(element_type::i64, {1, 4}, {1, 2, 999, -1000})}, out);
    BOOST_TEST(out.at(0).get_byte_size() == 32u);
  }
}

BOOST_AUTO_TEST_CASE(dequantize_linear) {
  { // u8, scalar scale and zero point, a long row
    builder b;
    auto x = b.input({3, 65537}, element_type::u8);
    Tensor zp(element_type::u8, {});
    *zp.data<uint8_t>() = 131;
    b.output(b.op("DequantizeLinear", {x, b.scalar(0.0173f), b.constant(zp)}));
    exact("DequantizeLinear u8 [3,65537]", b.g, {typed_random(element_type::u8, {3, 65537}, 2, 0, 256)});
  }
  { // i8 per axis 1, zero point a run-time input
    builder b;
    auto x = b.input({2, 5, 3}, element_type::i8);
    auto zp = b.input({5}, element_type::i8);
    b.output(b.op("DequantizeLinear", {x, b.constant(tests::random_tensor({5}, 9, 0.01f, 0.1f)), zp}, {{"axis", int64_t(1)}}));
    exact("DequantizeLinear i8 per axis", b.g,
          {typed_random(element_type::i8, {2, 5, 3}, 4, -128, 128), typed_random(element_type::i8, {5}, 5, -20, 20)});
  }
  { // i32, no zero point
    builder b;
    auto x = b.input({4, 9}, element_type::i32);
    b.output(b.op("DequantizeLinear", {x, b.scalar(0.5f)}));
    exact("DequantizeLinear i32", b.g, {typed_random(element_type::i32, {4, 9}, 6, -100000, 100000)});
  }
}

BOOST_AUTO_TEST_CASE(quantize_linear) {
  // Four bytes a word, one word an invocation: past 65535 workgroups of words, odd tails, per
  // axis, and values beyond both ends of the integer range (saturation) and on ties.
  for (const Shape& s : {Shape{3, 262147}, Shape{17}, Shape{1, 4096}}) {
    builder b;
    auto x = b.input(s);
    Tensor zp(element_type::u8, {});
    *zp.data<uint8_t>() = 128;
    b.output(b.op("QuantizeLinear", {x, b.scalar(0.02f), b.constant(zp)}));
    Tensor in = typed_random(element_type::f32, s, 11, -4, 4);
    in.data<float>()[0] = 0.01f; // a tie: 0.5 steps rounds to even
    exact("QuantizeLinear u8 " + to_string(s), b.g, {in});
  }
  { // per axis 1, no zero point (then u8)
    builder b;
    auto x = b.input({2, 5, 7});
    b.output(b.op("QuantizeLinear", {x, b.constant(tests::random_tensor({5}, 12, 0.01f, 0.1f))}, {{"axis", int64_t(1)}}));
    exact("QuantizeLinear u8 per axis, no zero point", b.g, {typed_random(element_type::f32, {2, 5, 7}, 13, -15, 15)});
  }
  { // i8 per axis with zero points, the OpenVINO int8 IR form behind a depthwise convolution
    builder b;
    auto x = b.input({1, 6, 9, 9});
    Tensor zp(element_type::i8, {6});
    for (int c = 0; c < 6; ++c) zp.data<int8_t>()[c] = static_cast<int8_t>(c * 9 - 20);
    b.output(b.op("QuantizeLinear", {x, b.constant(tests::random_tensor({6}, 14, 0.01f, 0.05f)), b.constant(zp)}, {{"axis", int64_t(1)}}));
    exact("QuantizeLinear i8 zero points per axis", b.g, {typed_random(element_type::f32, {1, 6, 9, 9}, 15, -6, 6)});
  }
}

BOOST_AUTO_TEST_CASE(dynamic_quantize_linear) {
  auto dql = [](const Shape& s) {
    builder b;
    auto x = b.input(s);
    b.op("DynamicQuantizeLinear", {x}, {}, 3);
    for (auto v : b.g.ops.back().outputs) b.output(v);
    return b.g;
  };
  exact("DynamicQuantizeLinear [1,4096]", dql({1, 4096}), {typed_random(element_type::f32, {1, 4096}, 8, -3, 5)});
  exact("DynamicQuantizeLinear [2^20]", dql({1 << 20}), {typed_random(element_type::f32, {1 << 20}, 9, -0.2, 7)});
  exact("DynamicQuantizeLinear positive", dql({3, 17}), {typed_random(element_type::f32, {3, 17}, 10, 0.5, 2)});
  Tensor zeros(element_type::f32, {5});
  std::fill(zeros.data<float>(), zeros.data<float>() + 5, 0.0f);
  exact("DynamicQuantizeLinear all zero", dql({5}), {zeros});
}

BOOST_AUTO_TEST_CASE(matmul_integer_as_quantize_dynamic_writes_it) {
  for (element_type wt : {element_type::u8, element_type::i8}) {
    for (bool per_column : {false, true}) {
      // x -> DynamicQuantizeLinear -> MatMulInteger(x_q, W const, x_zp run-time, W_zp const) -> int32
      builder b;
      auto x = b.input({2, 5, 64});
      b.op("DynamicQuantizeLinear", {x}, {}, 3);
      const auto q = b.g.ops.back().outputs;
      auto w = b.constant(typed_random(wt, {64, 48}, 21, wt == element_type::u8 ? 0 : -128, wt == element_type::u8 ? 256 : 128));
      auto wzp = b.constant(typed_random(wt, per_column ? Shape{48} : Shape{}, 22, 0, 100));
      b.output(b.op("MatMulInteger", {q[0], w, q[2], wzp}));
      exact(std::string("DQL -> MatMulInteger, W ") + to_string(wt) + (per_column ? ", zero point per column" : ""), b.g,
            {typed_random(element_type::f32, {2, 5, 64}, 23, -2, 3)});
    }
  }
  { // both operands run-time, batched B, a long K
    builder b;
    auto a = b.input({2, 3, 4096}, element_type::u8);
    auto w = b.input({2, 4096, 5}, element_type::i8);
    auto azp = b.input({}, element_type::u8);
    b.output(b.op("MatMulInteger", {a, w, azp}));
    exact("MatMulInteger batched B, K 4096", b.g,
          {typed_random(element_type::u8, {2, 3, 4096}, 31, 0, 256), typed_random(element_type::i8, {2, 4096, 5}, 32, -128, 128),
           typed_random(element_type::u8, {}, 33, 100, 150)});
  }
  // K and N multiples of 4 take the word-texel shader (matmul_integer_w4: 4 rows x 8 columns per
  // invocation): rows past M, an odd count of words per row, batched B, zero points per row and
  // per column, i8 A; then a vocabulary-sized N past 2^16 columns.
  for (const int64_t n : {int64_t{4}, int64_t{20}, int64_t{24}}) {
    builder b;
    auto a = b.input({2, 7, 16}, element_type::i8);
    auto w = b.input({2, 16, n}, element_type::u8);
    auto azp = b.input({7}, element_type::i8);
    auto wzp = b.input({n}, element_type::u8);
    b.output(b.op("MatMulInteger", {a, w, azp, wzp}));
    exact("MatMulInteger whole words, N " + std::to_string(n), b.g,
          {typed_random(element_type::i8, {2, 7, 16}, 34, -128, 128), typed_random(element_type::u8, {2, 16, n}, 35, 0, 256),
           typed_random(element_type::i8, {7}, 36, -20, 20), typed_random(element_type::u8, {n}, 37, 100, 150)});
  }
  {
    builder b;
    auto a = b.input({1, 5, 128}, element_type::u8);
    auto w = b.constant(typed_random(element_type::i8, {128, 65540}, 38, -128, 128));
    auto azp = b.input({}, element_type::u8);
    b.output(b.op("MatMulInteger", {a, w, azp}));
    exact("MatMulInteger N 65540", b.g, {typed_random(element_type::u8, {1, 5, 128}, 39, 0, 256), typed_random(element_type::u8, {}, 40, 0, 256)});
  }
}

/// ConvInteger as quantize_dynamic writes it for a CNN (DynamicQuantizeLinear's u8 and run-time zero
/// point, constant weights and their zero points), and the shapes that take each of its shaders:
/// 4 channels per texel (conv_integer_oc4), depthwise and odd groups (oc1), 1x1 as a MatMulInteger
/// per image (matmul_integer_w4 with one A for every image), then rows and slices past 65535.
BOOST_AUTO_TEST_CASE(conv_integer_as_quantize_dynamic_writes_it) {
  using ints = std::vector<int64_t>;
  for (element_type wt : {element_type::u8, element_type::i8}) {
    for (bool per_channel : {false, true}) {
      builder b;
      auto x = b.input({1, 3, 17, 19});
      b.op("DynamicQuantizeLinear", {x}, {}, 3);
      const auto q = b.g.ops.back().outputs;
      auto w = b.constant(typed_random(wt, {10, 3, 3, 3}, 51, wt == element_type::u8 ? 0 : -128, wt == element_type::u8 ? 256 : 128));
      auto wzp = b.constant(typed_random(wt, per_channel ? Shape{10} : Shape{}, 52, 0, 100));
      b.output(b.op("ConvInteger", {q[0], w, q[2], wzp}, {{"pads", ints{1, 1, 1, 1}}, {"strides", ints{2, 1}}}));
      exact(std::string("DQL -> ConvInteger 3x3, W ") + to_string(wt) + (per_channel ? ", zero point per channel" : ""), b.g,
            {typed_random(element_type::f32, {1, 3, 17, 19}, 53, -2, 3)});
    }
  }
  auto conv = [](const Shape& xs, element_type xt, const Shape& ws, element_type wt, bool xzp, bool wzp,
                 std::map<std::string, graph::AttributeValue> attrs, const std::string& what) {
    builder b;
    std::vector<ValueId> in{b.input(xs, xt), b.constant(typed_random(wt, ws, 61, wt == element_type::u8 ? 0 : -128,
                                                                      wt == element_type::u8 ? 256 : 128))};
    std::vector<Tensor> data{typed_random(xt, xs, 62, xt == element_type::u8 ? 0 : -128, xt == element_type::u8 ? 256 : 128)};
    if (xzp || wzp) {
      in.push_back(xzp ? b.input({}, xt) : graph::no_value);
      if (xzp) data.push_back(typed_random(xt, {}, 63, -5, 120));
    }
    if (wzp) in.push_back(b.constant(typed_random(wt, {ws[0]}, 64, -5, 120)));
    b.output(b.op("ConvInteger", in, std::move(attrs)));
    exact(what, b.g, data);
    // With float16 storage (INFERENCE_PRECISION_HINT=f16) the shifted weights stay exact.
    kernels::compile_config f16;
    f16.inference_precision = element_type::f16;
    exact(what + " (f16 storage)", b.g, data, f16);
  };
  const auto u8 = element_type::u8, i8 = element_type::i8;
  conv({2, 6, 9, 10}, u8, {6, 1, 3, 3}, i8, true, true, {{"group", int64_t(6)}, {"dilations", ints{2, 2}}, {"pads", ints{2, 2, 2, 2}}},
       "ConvInteger depthwise, dilated");
  conv({1, 4, 5, 5}, i8, {4, 2, 3, 3}, i8, false, false, {{"group", int64_t(2)}}, "ConvInteger 2 groups of 2, no zero points");
  conv({2, 8, 3, 4}, u8, {5, 8, 1, 1}, u8, true, true, {}, "ConvInteger 1x1, 2 images, 5 channels");
  conv({1, 8, 3, 3}, u8, {6, 8, 1, 1}, i8, true, false, {}, "ConvInteger 1x1 over 9 pixels");
  conv({1, 2, 65537}, u8, {3, 2, 3}, u8, true, true, {{"pads", ints{1, 1}}}, "ConvInteger 1-D L 65537");
  conv({65537, 1, 1, 4}, u8, {2, 1, 1, 1}, i8, true, false, {}, "ConvInteger batch 65537");
  conv({1, 4, 1, 1}, u8, {65537, 4, 1, 1}, i8, true, true, {}, "ConvInteger C_out 65537");
}

/// quantize_dynamic's float epilogue (Cast -> Mul by the scale product -> Add bias) runs in the
/// integer op's store, as the separate ops would round it (byte for byte against the reference):
/// MatMulInteger with scales and biases per column, ConvInteger direct (per channel) and 1x1 (as
/// a product whose rows are the channels); where the chain cannot join (its cast value is also
/// an output, or K is not a multiple of 4) the ops run apart.
BOOST_AUTO_TEST_CASE(int8_epilogues_run_in_the_integer_ops_store) {
  using ints = std::vector<int64_t>;
  // x f32 -> DQL -> op(x_q, w, x_zp, w_zp) -> Cast -> Mul(x_scale * w_scale) [-> Add bias].
  auto chain = [](const std::string& type, const Shape& xs, const Shape& ws, const Shape& wscale, const Shape& bias,
                  std::map<std::string, graph::AttributeValue> attrs, bool cast_is_output) {
    builder b;
    auto x = b.input(xs);
    b.op("DynamicQuantizeLinear", {x}, {}, 3);
    const auto q = b.g.ops.back().outputs;
    auto w = b.constant(typed_random(element_type::i8, ws, 71, -128, 128));
    auto wzp = b.constant(typed_random(element_type::i8, {}, 72, -3, 3));
    auto acc = b.op(type, {q[0], w, q[2], wzp}, std::move(attrs));
    auto accf = b.op("Cast", {acc}, {{"to", int64_t(1)}});
    auto scale = b.op("Mul", {q[1], b.constant(tests::random_tensor(wscale, 73, 0.001f, 0.02f))});
    auto y = b.op("Mul", {accf, scale});
    if (!bias.empty()) y = b.op("Add", {y, b.constant(tests::random_tensor(bias, 74, -1.0f, 1.0f))});
    b.output(y);
    if (cast_is_output) b.output(accf);
    return b.g;
  };
  auto input = [](const Shape& s) { return std::vector<Tensor>{typed_random(element_type::f32, s, 75, -2, 3)}; };
  auto fused = [](const std::string& ran, const std::string& shader) {
    BOOST_TEST(ran.find("Cast optimized out") != std::string::npos, ran);
    BOOST_TEST(ran.find(shader + "_f") != std::string::npos, ran);
  };
  fused(exact("MatMulInteger, scale and bias per column", chain("MatMulInteger", {2, 5, 64}, {64, 48}, {48}, {48}, {}, false),
              input({2, 5, 64})),
        "matmul_integer_w4");
  fused(exact("MatMulInteger, scalar scale, no bias", chain("MatMulInteger", {1, 7, 32}, {32, 8}, {}, {}, {}, false),
              input({1, 7, 32})),
        "matmul_integer_w4");
  fused(exact("ConvInteger 3x3, per channel", chain("ConvInteger", {1, 3, 11, 9}, {8, 3, 3, 3}, {1, 8, 1, 1}, {8, 1, 1},
                                                   {{"pads", ints{1, 1, 1, 1}}}, false),
              input({1, 3, 11, 9})),
        "conv_integer_oc4");
  fused(exact("ConvInteger depthwise, scalar scale", chain("ConvInteger", {1, 6, 7, 7}, {6, 1, 3, 3}, {}, {1, 6, 1, 1},
                                                           {{"group", int64_t(6)}}, false),
              input({1, 6, 7, 7})),
        "conv_integer_oc1");
  fused(exact("ConvInteger 1x1, bias per channel", chain("ConvInteger", {2, 8, 4, 4}, {12, 8, 1, 1}, {}, {1, 12, 1, 1}, {}, false),
              input({2, 8, 4, 4})),
        "matmul_integer_w4");
  fused(exact("ConvInteger 1x1, scale per channel", chain("ConvInteger", {1, 8, 2, 6}, {5, 8, 1, 1}, {5, 1, 1}, {5, 1, 1}, {}, false),
              input({1, 8, 2, 6})),
        "matmul_integer_w4");
  { // float16 storage: the scale, bias and result in f16, within f16's rounding of the result
    const auto g = chain("ConvInteger", {1, 3, 11, 9}, {8, 3, 3, 3}, {1, 8, 1, 1}, {8, 1, 1}, {{"pads", ints{1, 1, 1, 1}}}, false);
    kernels::compile_config f16;
    f16.inference_precision = element_type::f16;
    auto exe = gpu().compile(g, f16);
    // The f16 run quantizes an f16-rounded input: compare with the reference on that same input.
    Tensor x = input({1, 3, 11, 9})[0];
    for (int64_t i = 0; i < x.get_size(); ++i) x.data<float>()[i] = static_cast<float>(static_cast<_Float16>(x.data<float>()[i]));
    auto want = tests::run_reference(g, {x});
    auto got = tests::run_like(*exe, {x}, want);
    double worst = 0, top = 0;
    for (int64_t i = 0; i < want[0].get_size(); ++i) {
      worst = std::max(worst, std::abs(double(got[0].data<float>()[i]) - want[0].data<float>()[i]));
      top = std::max(top, std::abs(double(want[0].data<float>()[i])));
    }
    BOOST_TEST(worst <= 2e-3 * top, "ConvInteger epilogue in f16 storage: max error " << worst << " of max " << top);
  }
  for (const auto& [what, ran] :
       {std::pair{"the cast value also an output",
                  exact("cast value also an output", chain("MatMulInteger", {1, 4, 16}, {16, 8}, {8}, {8}, {}, true), input({1, 4, 16}))},
        std::pair{"K 6", exact("MatMulInteger K 6", chain("MatMulInteger", {1, 4, 6}, {6, 8}, {8}, {8}, {}, false), input({1, 4, 6}))}}) {
    BOOST_TEST(ran.find("Cast optimized out") == std::string::npos, what << ":\n" << ran);
    BOOST_TEST(ran.find("_f\n") == std::string::npos, what << ":\n" << ran);
  }
}

/// What onnxruntime's quantize_dynamic writes for an embedding and one linear layer: a u8
/// table read by Gather and dequantized; DynamicQuantizeLinear feeding MatMulInteger with its
/// run-time zero point, Cast, and the scale product. Through the Core, every op on GPU.0,
/// the result as REFERENCE's; a token id outside the table names op, id and table size.
BOOST_AUTO_TEST_CASE(a_quantize_dynamic_block_runs_wholly_on_the_gpu) {
  std::mt19937 rng(5);
  auto bytes = [&](std::size_t n, int lo, int hi) {
    std::string b(n, '\0');
    std::uniform_int_distribution<int> d(lo, hi);
    for (auto& c : b) c = static_cast<char>(d(rng));
    return b;
  };
  auto f32 = [](float v) { return std::string(reinterpret_cast<const char*>(&v), 4); };
  tiny_onnx::model_builder mb(13);
  mb.input("ids", {1, 6}, onnx::TensorProto::INT64).output("y", {1, 6, 32});
  mb.raw_initializer("table", onnx::TensorProto::UINT8, {100, 64}, bytes(6400, 0, 255))
      .raw_initializer("table_scale", onnx::TensorProto::FLOAT, {}, f32(0.02f))
      .raw_initializer("table_zp", onnx::TensorProto::UINT8, {}, std::string(1, char(128)))
      .raw_initializer("w", onnx::TensorProto::INT8, {64, 32}, bytes(2048, -128, 127))
      .raw_initializer("w_scale", onnx::TensorProto::FLOAT, {}, f32(0.01f))
      .raw_initializer("w_zp", onnx::TensorProto::INT8, {}, std::string(1, char(3)));
  mb.node("Gather", {"table", "ids"}, {"emb_q"}, "embed")
      .node("DequantizeLinear", {"emb_q", "table_scale", "table_zp"}, {"emb"}, "embed_dq")
      .node("DynamicQuantizeLinear", {"emb"}, {"x_q", "x_scale", "x_zp"}, "x_quant")
      .node("MatMulInteger", {"x_q", "w", "x_zp", "w_zp"}, {"acc"}, "linear")
      .node("Cast", {"acc"}, {"acc_f"}, "acc_cast")
      .attr("to", int64_t(onnx::TensorProto::FLOAT))
      .node("Mul", {"x_scale", "w_scale"}, {"scale"}, "scale_product")
      .node("Mul", {"acc_f", "scale"}, {"y"}, "rescale");
  const auto path = mb.write(tests::temp_file("gpu_sweep", "quantize_dynamic_block.onnx"));
  Core core;
  auto model = core.read_model(path);
  const auto unsupported = core.query_model_unsupported(model, "GPU.0");
  for (const auto& [node, why] : unsupported) BOOST_ERROR("GPU.0 refuses " << node << ": " << why);
  auto gpu_req = core.compile_model(model, "GPU.0").create_infer_request();
  auto ref_req = core.compile_model(model, "REFERENCE").create_infer_request();
  Tensor tokens(element_type::i64, {1, 6});
  const int64_t good[] = {0, 99, 17, 42, 42, 5};
  std::copy(good, good + 6, tokens.data<int64_t>());
  for (auto* r : {&gpu_req, &ref_req}) {
    r->set_input_tensor(tokens);
    r->infer();
  }
  const Tensor g = gpu_req.get_output_tensor(), r = ref_req.get_output_tensor();
  BOOST_TEST_REQUIRE(g.get_size() == r.get_size());
  double worst = 0, top = 0;
  for (int64_t i = 0; i < g.get_size(); ++i) {
    worst = std::max(worst, std::abs(double(g.data<float>()[i]) - r.data<float>()[i]));
    top = std::max(top, std::abs(double(r.data<float>()[i])));
  }
  BOOST_TEST(worst <= 1e-6 * top, "GPU.0 vs REFERENCE: max error " << worst << " of max " << top);
  tokens.data<int64_t>()[3] = 100; // one past the table
  gpu_req.set_input_tensor(tokens);
  try {
    gpu_req.infer();
    BOOST_ERROR("a token id of 100 in a table of 100 ran on GPU.0");
  } catch (const Exception& e) {
    const std::string msg = e.what();
    for (const std::string& piece : {std::string("embed"), std::string("index 100"), std::string("100 entries")})
      BOOST_TEST(msg.find(piece) != std::string::npos, "'" << msg << "' lacks '" << piece << "'");
  }
}

BOOST_AUTO_TEST_SUITE_END()

/// The repro through the public API: a one-node Softmax over [1,49155] on GPU.0
/// against the REFERENCE device, rows summing to 1.
BOOST_AUTO_TEST_CASE(softmax_49155_through_core_matches_reference, *boost::unit_test::precondition(tests::gpu_present())) {
  const int64_t n = 49155;
  tiny_onnx::model_builder mb;
  mb.input("x", {1, n}).output("y", {1, n});
  mb.node("Softmax", {"x"}, {"y"}, "softmax").attr("axis", int64_t(-1));
  const auto path = mb.write(tests::temp_file("gpu_sweep", "softmax_49155.onnx"));
  Core core;
  auto model = core.read_model(path);
  Tensor x = tests::random_tensor({1, n}, 3, -4, 4);
  auto run = [&](const std::string& dev) {
    auto req = core.compile_model(model, dev).create_infer_request();
    req.set_input_tensor(x);
    req.infer();
    return req.get_output_tensor();
  };
  Tensor g = run("GPU.0"), r = run("REFERENCE");
  double sum = 0, worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += g.data<float>()[i];
    worst = std::max(worst, std::abs(double(g.data<float>()[i]) - r.data<float>()[i]) / (r.data<float>()[i] + 1e-12));
  }
  BOOST_TEST(std::abs(sum - 1.0) < 1e-4, "GPU softmax row sums to " << sum);
  BOOST_TEST(worst < 1e-3, "GPU vs REFERENCE worst relative error " << worst);
}

/// HETERO:GPU,CPU over a long row: the GPU takes the Softmax (a workgroup per row), refuses
/// the CumSum along 70000 on lavapipe (its loop limit) by name, and the CPU runs it; the result
/// is REFERENCE's.
BOOST_AUTO_TEST_CASE(hetero_gives_the_cpu_what_the_gpu_refuses_by_size, *boost::unit_test::precondition(tests::gpu_present())) {
  const int64_t n = 70000;
  tiny_onnx::model_builder mb;
  mb.input("x", {1, n}).output("y", {1, n}).int64_initializer("axis", {}, {1});
  mb.node("Softmax", {"x"}, {"p"}, "softmax").attr("axis", int64_t(-1)).node("CumSum", {"p", "axis"}, {"y"}, "cumsum");
  const auto path = mb.write(tests::temp_file("gpu_sweep", "softmax_cumsum.onnx"));
  Core core;
  auto model = core.read_model(path);
  const auto refused = core.query_model_unsupported(model, "GPU.0");
  BOOST_TEST(refused.count("softmax") == 0u);
  const bool limited = refused.count("cumsum") == 1;
  if (limited) BOOST_TEST(refused.at("cumsum").find("65535") != std::string::npos, refused.at("cumsum"));
  Tensor x = tests::random_tensor({1, n}, 4, -4, 4);
  auto run = [&](const std::string& dev) {
    auto req = core.compile_model(model, dev).create_infer_request();
    req.set_input_tensor(x);
    req.infer();
    return req.get_output_tensor();
  };
  Tensor h = run("HETERO:GPU.0,CPU"), r = run("REFERENCE");
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(double(h.data<float>()[i]) - r.data<float>()[i]));
  BOOST_TEST(worst < 1e-4, "HETERO:GPU.0,CPU vs REFERENCE: max error " << worst << " (the row's sum is 1)");
  BOOST_TEST(std::abs(h.data<float>()[n - 1] - 1.0f) < 1e-4f);
}
