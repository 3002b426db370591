/// The Vulkan (GPU) device on lavapipe in CI: enumeration (incl. two copies of one ICD), every
/// shader against kernels::reference::evaluate on random data, a multi-op subgraph in one
/// command buffer, query() answers, and limits. A missing Vulkan device is a failure.
#define BOOST_TEST_MODULE vulkan_tests
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>

#include <unistd.h>

#include <troupe/exception.hpp>
#include <troupe/float16.hpp>

#include "tests/support/random_tensor.hpp"
#include "kernels/reference/kernels.hpp"
#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/vulkan_device.hpp"
#include "kernels/vulkan/pipeline_cache_file.hpp"
#include "kernels/vulkan/spirv_table.hpp"
#include "kernels/vulkan/vulkan_device_impl.hpp"

using namespace troupe;
namespace kv = troupe::kernels::vulkan;
#include "tests/support/gpu_env.hpp"

namespace fs = std::filesystem;

namespace {


kernels::device& gpu() {
  static auto devices = kv::make_vulkan_devices();
  if (devices.empty()) throw Exception("no Vulkan device: lavapipe (mesa-vulkan-drivers) must be installed");
  return *devices.front();
}

using tests::random_tensor;

/// A hand-built graph: add inputs/constants, ops with their outputs' types and shapes.
struct graph_builder {
  graph::Graph g;
  unsigned seed = 1;
  graph::ValueId input(const std::string& name, const Shape& s, element_type t = element_type::f32) {
    return g.add_input(name, t, PartialShape(s));
  }
  graph::ValueId constant(const std::string& name, Tensor t) { return g.add_constant(name, std::move(t)); }
  graph::ValueId random_constant(const std::string& name, const Shape& s, float lo = -1, float hi = 1) {
    return constant(name, random_tensor(s, seed++, lo, hi));
  }
  graph::ValueId ints(const std::string& name, std::vector<int64_t> v) {
    Tensor t(element_type::i64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return constant(name, t);
  }
  graph::Op& op(const std::string& type, std::vector<graph::ValueId> in, const std::vector<Shape>& out_shapes,
                std::map<std::string, graph::AttributeValue> attrs = {}) {
    graph::Op o;
    o.type = type;
    o.name = type + "_" + std::to_string(g.ops.size());
    o.inputs = std::move(in);
    o.attrs = std::move(attrs);
    for (std::size_t i = 0; i < out_shapes.size(); ++i)
      o.outputs.push_back(g.add_value({o.name + "_out" + std::to_string(i), element_type::f32, PartialShape(out_shapes[i]), std::nullopt}));
    g.ops.push_back(std::move(o));
    return g.ops.back();
  }
  void output(graph::ValueId v) { g.outputs.push_back(v); }
  void outputs_of_last() {
    for (auto v : g.ops.back().outputs) g.outputs.push_back(v);
  }
};

/// Runs the graph op by op on the reference kernels.
std::vector<Tensor> reference_run(const graph::Graph& g, const std::vector<Tensor>& inputs) {
  std::map<graph::ValueId, Tensor> env;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) env[g.inputs[i]] = inputs[i];
  for (std::size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].constant) env[static_cast<graph::ValueId>(v)] = *g.values[v].constant;
  for (const auto& op : g.ops) {
    std::vector<Tensor> in, out;
    for (auto v : op.inputs) in.push_back(v == graph::no_value ? Tensor() : env.at(v));
    for (auto v : op.outputs) out.emplace_back(g.value(v).type, g.value(v).shape.to_shape());
    kernels::reference::evaluate(op, in, out, g.opset);
    for (std::size_t i = 0; i < op.outputs.size(); ++i) env[op.outputs[i]] = out[i];
  }
  std::vector<Tensor> r;
  for (auto v : g.outputs) r.push_back(env.at(v));
  return r;
}

std::vector<Tensor> random_inputs(const graph::Graph& g, float lo, float hi) {
  std::vector<Tensor> r;
  unsigned seed = 100;
  for (auto v : g.inputs) r.push_back(random_tensor(g.value(v).shape.to_shape(), seed++, lo, hi));
  return r;
}

/// What check_against_reference compiles with, and the least tolerance it allows (f16 storage
/// rounds every tensor to 11 significant bits).
kernels::compile_config check_cfg;
float check_tol_floor = 0;

/// For a scope: checks compile with float16 storage and compare within 1e-2; the f32 settings
/// come back at scope exit, even on a throw.
struct f16_checks {
  /// `arithmetic`: float16 math in the Conv/MatMul/Gemm loops too (their _f16math variants),
  /// whose float16 accumulators allow 3e-2.
  explicit f16_checks(bool arithmetic = false) {
    check_cfg.inference_precision = element_type::f16;
    check_cfg.f16_arithmetic = arithmetic;
    check_tol_floor = arithmetic ? 3e-2f : 1e-2f;
  }
  ~f16_checks() {
    check_cfg = {};
    check_tol_floor = 0;
  }
};

/// Compiles `g` on the GPU, runs it on `inputs`, and compares every output with the
/// reference: integer outputs (and every output when `exact`) byte for byte, float ones
/// within `tol` relative.
void compare_with_reference(const graph::Graph& g, const std::vector<Tensor>& inputs, float tol, bool exact) {
  for (const auto& op : g.ops) {
    auto s = gpu().query(g, op);
    BOOST_TEST_REQUIRE(s.supported, s.reason);
  }
  auto exe = gpu().compile(g, check_cfg);
  std::vector<Tensor> got;
  exe->run(inputs, got);
  auto want = reference_run(g, inputs);
  BOOST_TEST_REQUIRE(got.size() == want.size());
  for (std::size_t o = 0; o < got.size(); ++o) {
    BOOST_TEST_REQUIRE((got[o].get_shape() == want[o].get_shape()));
    BOOST_TEST_REQUIRE((got[o].get_element_type() == want[o].get_element_type()));
    if (exact || got[o].get_element_type() != element_type::f32) { // integer outputs (indices): exactly equal
      BOOST_TEST(std::memcmp(got[o].data(), want[o].data(), got[o].get_byte_size()) == 0,
                 g.ops.front().type << " output " << o << " differs from the reference");
      continue;
    }
    double worst = 0;
    int64_t at = -1;
    for (int64_t i = 0; i < got[o].get_size(); ++i) {
      double a = got[o].data<float>()[i], b = want[o].data<float>()[i];
      double err = std::abs(a - b) / (1.0 + std::abs(b));
      if (!(err <= worst)) { worst = err; at = i; }
    }
    BOOST_TEST(worst <= tol, g.ops.front().type << " output " << o << ": worst relative error " << worst << " at " << at
                                                 << " (gpu " << (at >= 0 ? got[o].data<float>()[at] : 0.f) << ", ref "
                                                 << (at >= 0 ? want[o].data<float>()[at] : 0.f) << ")");
  }
}

/// Compiles on the GPU, runs on random inputs in [lo, hi], and compares every output with the reference.
void check_against_reference(const graph::Graph& g, float lo = -1, float hi = 1, float tol = 1e-4f) {
  compare_with_reference(g, random_inputs(g, lo, hi), std::max(tol, check_tol_floor), false);
}

graph::Graph unary(const std::string& type, std::map<std::string, graph::AttributeValue> attrs = {}) {
  graph_builder b;
  auto x = b.input("x", {2, 3, 5, 7});
  b.op(type, {x}, {{2, 3, 5, 7}}, std::move(attrs));
  b.outputs_of_last();
  return b.g;
}

graph::Graph binary(const std::string& type, const Shape& a, const Shape& bs, const Shape& out, bool const_b) {
  graph_builder b;
  auto x = b.input("a", a);
  auto y = const_b ? b.random_constant("b", bs, 0.5f, 2.0f) : b.input("b", bs);
  b.op(type, {x, y}, {out});
  b.outputs_of_last();
  return b.g;
}

graph::Graph conv(Shape x, Shape w, Shape y, std::map<std::string, graph::AttributeValue> attrs, bool bias,
                  bool const_w = true) {
  graph_builder b;
  auto xi = b.input("x", x);
  auto wi = const_w ? b.random_constant("w", w) : b.input("w", w);
  std::vector<graph::ValueId> in{xi, wi};
  if (bias) in.push_back(b.random_constant("b", {y[1]}));
  b.op("Conv", in, {y}, std::move(attrs));
  b.outputs_of_last();
  return b.g;
}

} // namespace

BOOST_AUTO_TEST_SUITE(devices)

BOOST_AUTO_TEST_CASE(at_least_one_device) {
  auto devices = kv::make_vulkan_devices();
  BOOST_TEST_REQUIRE(!devices.empty(), "no Vulkan device (CI needs lavapipe from mesa-vulkan-drivers)");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    BOOST_TEST(devices[i]->name() == "GPU." + std::to_string(i));
    auto info = devices[i]->info();
    BOOST_TEST(!info.at("FULL_DEVICE_NAME").empty());
    BOOST_TEST(std::stoi(info.at("SUBGROUP_SIZE")) > 0);
    BOOST_TEST_MESSAGE(devices[i]->name() << ": " << info.at("FULL_DEVICE_NAME") << " (" << info.at("DEVICE_TYPE")
                                          << ", fp16 " << info.at("FP16_SUPPORTED") << ")");
  }
}

BOOST_AUTO_TEST_CASE(two_copies_of_one_icd_are_two_devices) {
  const fs::path icd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
  BOOST_TEST_REQUIRE(fs::exists(icd), "lavapipe's ICD file is missing: install mesa-vulkan-drivers");
  fs::path dir = fs::temp_directory_path() / ("troupe_vk_icd_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::copy_file(icd, dir / "a.json", fs::copy_options::overwrite_existing);
  fs::copy_file(icd, dir / "b.json", fs::copy_options::overwrite_existing);
  {
    tests::scoped_env files("VK_DRIVER_FILES", (dir / "a.json").string() + ":" + (dir / "b.json").string());
    tests::scoped_env legacy("VK_ICD_FILENAMES", (dir / "a.json").string() + ":" + (dir / "b.json").string());
    auto devices = kv::make_vulkan_devices();
    BOOST_TEST_REQUIRE(devices.size() == 2u);
    BOOST_TEST(devices[0]->name() == "GPU.0");
    BOOST_TEST(devices[1]->name() == "GPU.1");
    BOOST_TEST(devices[0]->info().at("FULL_DEVICE_NAME") == devices[1]->info().at("FULL_DEVICE_NAME"));
    BOOST_TEST(devices[0]->info().at("DEVICE_INDEX") != devices[1]->info().at("DEVICE_INDEX"));
    // Both run work independently.
    auto g = unary("Relu");
    auto in = random_inputs(g, -1, 1);
    for (auto& d : devices) {
      std::vector<Tensor> out;
      d->compile(g, {})->run(in, out);
      BOOST_TEST(out.at(0).data<float>()[0] == std::max(0.f, in[0].data<float>()[0]));
    }
  }
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(no_icd_means_no_devices_not_a_crash) {
  tests::scoped_env files("VK_DRIVER_FILES", "/nonexistent/troupe_no_such_icd.json");
  tests::scoped_env legacy("VK_ICD_FILENAMES", "/nonexistent/troupe_no_such_icd.json");
  std::vector<std::unique_ptr<kernels::device>> devices;
  BOOST_CHECK_NO_THROW(devices = kv::make_vulkan_devices());
  BOOST_TEST(devices.empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(shaders_vs_reference)

BOOST_AUTO_TEST_CASE(unary_ops) {
  for (const char* t : {"Relu", "Sigmoid", "Tanh", "HardSwish", "Exp", "Abs", "Neg", "Floor", "Ceil", "Erf", "Softplus"})
    check_against_reference(unary(t), -3, 3);
  check_against_reference(unary("HardSigmoid", {{"alpha", 0.3f}, {"beta", 0.4f}}), -3, 3);
  check_against_reference(unary("LeakyRelu", {{"alpha", 0.2f}}), -3, 3);
  check_against_reference(unary("Clip", {{"min", -0.5f}, {"max", 0.7f}}), -3, 3); // opset < 11 style
  for (const char* t : {"Sqrt", "Log", "Reciprocal"}) check_against_reference(unary(t), 0.1f, 3);
  for (const char* t : {"Tan", "Atan", "Sinh", "Cosh", "Asinh", "Softsign", "Selu", "ThresholdedRelu", "Celu", "Mish", "Shrink"})
    check_against_reference(unary(t), -1.4f, 1.4f);
  for (const char* t : {"Asin", "Acos", "Atanh"}) check_against_reference(unary(t), -0.9f, 0.9f);
  check_against_reference(unary("Acosh"), 1.1f, 3);
  check_against_reference(unary("Selu", {{"alpha", 2.0f}, {"gamma", 3.0f}}), -3, 3);
  check_against_reference(unary("Shrink", {{"bias", 0.3f}, {"lambd", 0.8f}}), -3, 3);
  check_against_reference(unary("Celu", {{"alpha", 2.0f}}), -3, 3);
}

BOOST_AUTO_TEST_CASE(clip_with_constant_bounds) {
  graph_builder b;
  auto x = b.input("x", {4, 9});
  Tensor lo(element_type::f32, {}), hi(element_type::f32, {});
  *lo.data<float>() = 0.0f;
  *hi.data<float>() = 6.0f;
  b.op("Clip", {x, b.constant("lo", lo), b.constant("hi", hi)}, {{4, 9}});
  b.outputs_of_last();
  check_against_reference(b.g, -10, 10);
}

BOOST_AUTO_TEST_CASE(binary_ops_with_broadcasting) {
  for (const char* t : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    check_against_reference(binary(t, {2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}, false));
    check_against_reference(binary(t, {2, 3, 4, 5}, {3, 1, 1}, {2, 3, 4, 5}, true));
    check_against_reference(binary(t, {1, 3, 1, 5}, {2, 1, 4, 1}, {2, 3, 4, 5}, false), 0.5f, 2);
  }
  check_against_reference(binary("Pow", {2, 3, 4}, {1}, {2, 3, 4}, true), 0.1f, 2);
  check_against_reference(binary("Add", {5}, {}, {5}, true));
  {
    graph_builder b;
    auto x = b.input("x", {2, 3});
    Tensor two(element_type::f32, {});
    *two.data<float>() = 2.0f;
    b.op("Pow", {x, b.constant("two", two)}, {{2, 3}}); // x^2 of negative x (decomposed LayerNorm)
    b.outputs_of_last();
    check_against_reference(b.g, -2, 2);
  }
}

/// Runs `g` on the GPU and the reference with the given inputs; every output must be equal
/// (bit for bit: gathers move values, they do not compute).
void check_exact(const graph::Graph& g, const std::vector<Tensor>& inputs) { compare_with_reference(g, inputs, 0, true); }

template <class T>
Tensor ints_of(Shape s, std::vector<int64_t> v) {
  Tensor t(sizeof(T) == 8 ? element_type::i64 : element_type::i32, std::move(s));
  for (std::size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = static_cast<T>(v[i]);
  return t;
}

/// A tensor of `t` whose values every cast to `to` keeps well defined: integers in range of
/// both types, floats on a 1/8 grid (exact in f16) inside the integer range.
Tensor cast_input(element_type t, element_type to, const Shape& s, unsigned seed) {
  std::mt19937 rng(seed);
  const bool unsigned_to = to == element_type::u8 || to == element_type::u32 || to == element_type::boolean;
  const bool unsigned_from = t == element_type::u8 || t == element_type::u32 || t == element_type::boolean;
  const int lo = (unsigned_to && (t == element_type::f32 || t == element_type::f16)) || unsigned_from ? 0 : -120;
  const int hi = t == element_type::boolean ? 2 : t == element_type::u8 ? 250 : 120;
  std::uniform_int_distribution<int> d(lo * 8, hi * 8 - 1);
  Tensor x(t, s);
  for (int64_t i = 0; i < x.get_size(); ++i) {
    const int v = d(rng);
    switch (t) {
    case element_type::f32: x.data<float>()[i] = static_cast<float>(v) / 8; break;
    case element_type::f16: x.data<uint16_t>()[i] = float_to_half_bits(static_cast<float>(v) / 8); break;
    case element_type::i32: x.data<int32_t>()[i] = v / 8 * 1000003; break; // narrower types keep the low bits
    case element_type::u32: x.data<uint32_t>()[i] = static_cast<uint32_t>(v / 8) * 1000003u; break;
    case element_type::i64: x.data<int64_t>()[i] = int64_t{v / 8} * 1000000007LL; break;
    case element_type::u8: x.data<uint8_t>()[i] = static_cast<uint8_t>(v / 8); break;
    case element_type::i8: x.data<int8_t>()[i] = static_cast<int8_t>(v / 8); break;
    case element_type::boolean: x.data<bool>()[i] = v / 8 != 0; break;
    default: BOOST_FAIL("no input for " << to_string(t));
    }
  }
  return x;
}

/// Cast between every pair of the GPU's types, on odd and empty shapes, byte for byte
/// against the reference; in f16 storage too.
BOOST_AUTO_TEST_CASE(cast_between_types, *boost::unit_test::precondition(tests::gpu_present())) {
  const std::vector<element_type> types{element_type::f32, element_type::f16, element_type::i32, element_type::u32,
                                        element_type::i64, element_type::u8,  element_type::i8,  element_type::boolean};
  unsigned seed = 1;
  auto check = [&](element_type from, element_type to, const Shape& s) {
    graph::Graph g;
    auto x = g.add_input("x", from, PartialShape(s));
    graph::Op op;
    op.type = "Cast";
    op.name = "cast";
    op.inputs = {x};
    op.attrs["to"] = static_cast<int64_t>(to);
    op.outputs = {g.add_value({"y", to, PartialShape(s), std::nullopt})};
    g.ops.push_back(op);
    g.outputs = {op.outputs[0]};
    BOOST_TEST_CONTEXT(to_string(from) << " to " << to_string(to) << " " << to_string(s)) {
      // Exact: every value here converts without rounding (f16 storage rounds only f32 data, on a 1/8 grid).
      compare_with_reference(g, {cast_input(from, to, s, seed++)}, 0, true);
    }
  };
  for (auto from : types)
    for (auto to : types)
      for (const Shape& s : {Shape{3, 5, 7}, Shape{4, 6}, Shape{0, 3}, Shape{1}}) check(from, to, s); // {4,6}: whole texels
  f16_checks f16;
  for (auto from : {element_type::u8, element_type::f32, element_type::i8}) // values within half range
    for (auto to : {element_type::f32, element_type::i32, element_type::u8}) check(from, to, {2, 9});
}

BOOST_AUTO_TEST_CASE(gather_and_gather_elements) {
  const auto data = random_tensor({3, 5, 4}, 7, -1, 1);
  for (int64_t axis : {0, 1, -1}) {
    graph_builder b;
    const int64_t len = data.get_shape()[static_cast<std::size_t>(axis < 0 ? axis + 3 : axis)];
    Shape y = data.get_shape();
    y.erase(y.begin() + (axis < 0 ? axis + 3 : axis));
    y.insert(y.begin() + (axis < 0 ? axis + 3 : axis), {2, 2});
    b.op("Gather", {b.input("x", {3, 5, 4}), b.input("i", {2, 2}, element_type::i64)}, {y}, {{"axis", axis}});
    b.outputs_of_last();
    check_exact(b.g, {data, ints_of<int64_t>({2, 2}, {0, len - 1, -1, 1})});
  }
  for (int64_t axis : {0, 1}) {
    graph_builder b;
    b.op("GatherElements", {b.input("x", {3, 5, 4}), b.input("i", {3, 2, 4}, element_type::i32)}, {{3, 2, 4}}, {{"axis", axis}});
    b.outputs_of_last();
    std::vector<int64_t> idx(24);
    for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = static_cast<int64_t>(k * 7 % 3) - (k % 5 == 0 ? 1 : 0);
    check_exact(b.g, {data, ints_of<int32_t>({3, 2, 4}, idx)});
  }
}

BOOST_AUTO_TEST_CASE(variadic_max_min_sum_mean) {
  for (const char* t : {"Max", "Min", "Sum", "Mean"}) {
    for (std::size_t n : {1, 2, 3, 4}) {
      graph_builder b;
      std::vector<graph::ValueId> in;
      const Shape shapes[] = {{2, 3, 4}, {3, 1}, {4}, {2, 3, 4}};
      const char* names[] = {"x0", "x1", "x2", "x3"};
      for (std::size_t i = 0; i < n; ++i) in.push_back(b.input(names[i], n == 1 ? Shape{2, 3, 4} : shapes[i]));
      b.op(t, in, {{2, 3, 4}});
      b.outputs_of_last();
      check_against_reference(b.g);
    }
  }
}

BOOST_AUTO_TEST_CASE(fused_activation_on_add) {
  graph_builder b;
  auto x = b.input("x", {2, 8});
  auto y = b.input("y", {8});
  b.op("Add", {x, y}, {{2, 8}}, {{"activation", std::string("HardSigmoid")}, {"activation_params", std::vector<float>{0.2f, 0.5f}}});
  b.outputs_of_last();
  check_against_reference(b.g, -4, 4);
}

BOOST_AUTO_TEST_CASE(conv_variants) {
  using A = std::map<std::string, graph::AttributeValue>;
  using V = std::vector<int64_t>;
  // plain 3x3 pad 1, with bias and fused Relu
  check_against_reference(conv({1, 8, 9, 11}, {16, 8, 3, 3}, {1, 16, 9, 11},
                               A{{"pads", V{1, 1, 1, 1}}, {"activation", std::string("Relu")}}, true), -1, 1, 1e-4f);
  // stride 2, OC not a multiple of 4, no bias, asymmetric pads
  check_against_reference(conv({2, 3, 10, 10}, {6, 3, 3, 3}, {2, 6, 5, 5}, A{{"pads", V{1, 1, 0, 0}}, {"strides", V{2, 2}}}, false));
  // depthwise 5x5 stride 2 with HardSwish
  check_against_reference(conv({1, 12, 13, 13}, {12, 1, 5, 5}, {1, 12, 7, 7},
                               A{{"group", int64_t(12)}, {"pads", V{2, 2, 2, 2}}, {"strides", V{2, 2}},
                                 {"activation", std::string("HardSwish")}}, true));
  // groups with 4 channels per group (blocked path) and dilation 2
  check_against_reference(conv({1, 8, 12, 12}, {8, 4, 3, 3}, {1, 8, 8, 8},
                               A{{"group", int64_t(2)}, {"dilations", V{2, 2}}}, true));
  // 1x1 pointwise, SAME_UPPER, non-constant weights (unblocked path)
  check_against_reference(conv({1, 16, 6, 7}, {10, 16, 1, 1}, {1, 10, 6, 7}, A{{"auto_pad", std::string("SAME_UPPER")}}, false, false));
  // stride (2,1) as in PP-OCR rec
  check_against_reference(conv({1, 4, 8, 10}, {8, 4, 3, 3}, {1, 8, 4, 10}, A{{"pads", V{1, 1, 1, 1}}, {"strides", V{2, 1}}}, true));
}

BOOST_AUTO_TEST_CASE(conv_transpose) {
  graph_builder b;
  auto x = b.input("x", {1, 6, 5, 5});
  auto w = b.random_constant("w", {6, 4, 2, 2});
  auto bias = b.random_constant("b", {4});
  b.op("ConvTranspose", {x, w, bias}, {{1, 4, 10, 10}}, {{"strides", std::vector<int64_t>{2, 2}}});
  b.outputs_of_last();
  check_against_reference(b.g);
  graph_builder c;
  auto x2 = c.input("x", {1, 4, 6, 6});
  c.op("ConvTranspose", {x2, c.random_constant("w", {4, 3, 3, 3})}, {{1, 6, 11, 11}},
       {{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", int64_t(2)}});
  c.outputs_of_last();
  check_against_reference(c.g);
}

BOOST_AUTO_TEST_CASE(conv_transpose_pads_from_shapes) {
  using A = std::map<std::string, graph::AttributeValue>;
  using V = std::vector<int64_t>;
  // The pads follow from the output size, as the reference computes them: SAME_UPPER puts the
  // odd pixel of padding at the end, SAME_LOWER and output_shape at the beginning.
  auto ct = [](const Shape& x, const Shape& w, const Shape& y, A attrs) {
    graph_builder b;
    auto xi = b.input("x", x);
    b.op("ConvTranspose", {xi, b.random_constant("w", w), b.random_constant("b", {y[1]})}, {y}, std::move(attrs));
    b.outputs_of_last();
    for (const auto& op : b.g.ops) BOOST_TEST(gpu().query(b.g, op).supported, gpu().query(b.g, op).reason);
    return b.g;
  };
  // kernel 3 stride 2: total padding 1 (odd)
  check_against_reference(ct({1, 4, 5, 6}, {4, 3, 3, 3}, {1, 3, 10, 12}, A{{"strides", V{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}));
  check_against_reference(ct({1, 4, 5, 6}, {4, 3, 3, 3}, {1, 3, 10, 12}, A{{"strides", V{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}}));
  // kernel 4 stride 2, dilation 1x2, groups: even and odd totals per axis
  check_against_reference(ct({1, 4, 5, 6}, {4, 2, 4, 4}, {1, 4, 10, 12},
                             A{{"strides", V{2, 2}}, {"dilations", V{1, 2}}, {"group", int64_t(2)}, {"auto_pad", std::string("SAME_UPPER")}}));
  // output_shape (with output_padding), which overrides pads
  check_against_reference(ct({1, 3, 4, 5}, {3, 2, 3, 3}, {1, 2, 9, 10},
                             A{{"strides", V{2, 2}}, {"output_shape", V{9, 10}}, {"output_padding", V{1, 0}}}));
  check_against_reference(ct({2, 3, 4, 5}, {3, 2, 3, 3}, {2, 2, 8, 11},
                             A{{"strides", V{2, 3}}, {"output_shape", V{8, 11}}, {"pads", V{5, 5, 5, 5}}}));
}

BOOST_AUTO_TEST_CASE(matmul_and_gemm) {
  check_against_reference(binary("MatMul", {7, 13}, {13, 9}, {7, 9}, true), -1, 1, 1e-4f);
  check_against_reference(binary("MatMul", {2, 3, 5, 6}, {2, 3, 6, 4}, {2, 3, 5, 4}, false));
  check_against_reference(binary("MatMul", {2, 1, 5, 6}, {3, 6, 7}, {2, 3, 5, 7}, false));
  check_against_reference(binary("MatMul", {6}, {6, 3}, {3}, false));
  check_against_reference(binary("MatMul", {4, 6}, {6}, {4}, false));
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      graph_builder b;
      auto a = b.input("a", ta ? Shape{6, 5} : Shape{5, 6});
      auto w = b.random_constant("w", tb ? Shape{7, 6} : Shape{6, 7});
      auto c = b.random_constant("c", tb ? Shape{7} : Shape{5, 1});
      b.op("Gemm", {a, w, c}, {{5, 7}},
           {{"transA", int64_t(ta)}, {"transB", int64_t(tb)}, {"alpha", 0.5f}, {"beta", 2.0f}});
      b.outputs_of_last();
      check_against_reference(b.g);
    }
}

/// The shader variant the GPU picked for the graph's first op (profiling row exec_type), compiled
/// with `cfg` (f32 by default; check_cfg for the f16 modes).
std::string exec_type_of(const graph::Graph& g, kernels::compile_config cfg = {}) {
  cfg.profiling = true;
  auto exe = gpu().compile(g, cfg);
  std::vector<Tensor> out;
  exe->run(random_inputs(g, -1, 1), out);
  auto prof = exe->profile();
  return prof.size() > 1 ? prof[1].exec_type : std::string();
}

BOOST_AUTO_TEST_CASE(conv_transpose_as_gemm) {
  using A = std::map<std::string, graph::AttributeValue>;
  using V = std::vector<int64_t>;
  // kernel == stride, IC % 4 == 0, IH*IW % 4 == 0: one GEMM with a scattered store (PP-OCR det's
  // head); batch 2, a non-square kernel, bias and a fused Relu
  auto gemm_case = [](const Shape& x, const Shape& w, const Shape& y, A attrs, bool bias) {
    graph_builder b;
    std::vector<graph::ValueId> in{b.input("x", x), b.random_constant("w", w)};
    if (bias) in.push_back(b.random_constant("b", {y[1]}));
    b.op("ConvTranspose", in, {y}, std::move(attrs));
    b.outputs_of_last();
    return b.g;
  };
  auto g1 = gemm_case({2, 8, 3, 4}, {8, 3, 2, 3}, {2, 3, 6, 12}, A{{"strides", V{2, 3}}, {"activation", std::string("Relu")}}, true);
  check_against_reference(g1, -1, 1, 1e-4f);
  BOOST_TEST(exec_type_of(g1) == "vulkan:gemm_m8");
  auto g2 = gemm_case({1, 24, 4, 5}, {24, 1, 2, 2}, {1, 1, 8, 10}, A{{"strides", V{2, 2}}}, false); // det's last layer
  check_against_reference(g2, -1, 1, 1e-4f);
  BOOST_TEST(exec_type_of(g2) == "vulkan:gemm_m8");
  // and what stays on conv_transpose.comp: IC % 4 != 0, overlapping taps
  auto g3 = gemm_case({1, 6, 4, 4}, {6, 2, 2, 2}, {1, 2, 8, 8}, A{{"strides", V{2, 2}}}, true);
  check_against_reference(g3);
  BOOST_TEST(exec_type_of(g3) == "vulkan:conv_transpose");
  auto g4 = gemm_case({1, 8, 4, 4}, {8, 2, 3, 3}, {1, 2, 9, 9}, A{{"strides", V{2, 2}}}, true);
  check_against_reference(g4);
  BOOST_TEST(exec_type_of(g4) == "vulkan:conv_transpose");
}

BOOST_AUTO_TEST_CASE(gemm_variants) {
  using A = std::map<std::string, graph::AttributeValue>;
  // 1x1 convolutions as GEMM: 8-row blocks (OC < 32, OC not a multiple of 8), bias + HardSwish
  auto c1 = conv({1, 12, 6, 10}, {20, 12, 1, 1}, {1, 20, 6, 10}, A{{"activation", std::string("HardSwish")}}, true);
  check_against_reference(c1, -1, 1, 1e-4f);
  BOOST_TEST(exec_type_of(c1) == "vulkan:gemm_m8");
  // 16-row blocks (OC >= 64, a multiple of 16), batch 2, HW not a multiple of 64, no bias
  auto c2 = conv({2, 40, 5, 4}, {64, 40, 1, 1}, {2, 64, 5, 4}, {}, false);
  check_against_reference(c2, -1, 1, 1e-4f);
  BOOST_TEST(exec_type_of(c2) == "vulkan:gemm_m16");
  // non-constant weights
  check_against_reference(conv({1, 8, 4, 4}, {12, 8, 1, 1}, {1, 12, 4, 4}, {}, true, false));
  // MatMul with 2-D weights: batch rows flattened; N a multiple of 4, and N = 9 (padded weights)
  auto m1 = binary("MatMul", {2, 40, 12}, {12, 36}, {2, 40, 36}, true);
  check_against_reference(m1, -1, 1, 1e-4f);
  BOOST_TEST(exec_type_of(m1) == "vulkan:gemm_m16");
  auto m2 = binary("MatMul", {3, 8}, {8, 9}, {3, 9}, true);
  check_against_reference(m2, -1, 1, 1e-4f);
  BOOST_TEST(exec_type_of(m2) == "vulkan:gemm_m8");
  // non-constant right operand, 1-D left operand
  check_against_reference(binary("MatMul", {5, 16}, {16, 8}, {5, 8}, false));
  check_against_reference(binary("MatMul", {16}, {16, 12}, {12}, true));
  // shapes the GEMM layout does not cover keep the generic shader: B rows in whole texels
  // (N % 4 == 0) take its 4x8-block variant
  BOOST_TEST(exec_type_of(binary("MatMul", {3, 6}, {6, 5}, {3, 5}, false)) == "vulkan:matmul");
  auto attn = binary("MatMul", {1, 8, 40, 15}, {1, 8, 15, 40}, {1, 8, 40, 40}, false); // PP-OCR rec's q x k^T
  check_against_reference(attn, -1, 1, 1e-4f);
  BOOST_TEST(exec_type_of(attn) == "vulkan:matmul_b4");
  // broadcast batch, an odd number of column texels (the last block's second texel is clamped), M % 4 != 0
  auto odd = binary("MatMul", {2, 1, 7, 5}, {3, 5, 12}, {2, 3, 7, 12}, false);
  check_against_reference(odd, -1, 1, 1e-4f);
  BOOST_TEST(exec_type_of(odd) == "vulkan:matmul_b4");
}

BOOST_AUTO_TEST_CASE(conv_row_variants) {
  using A = std::map<std::string, graph::AttributeValue>;
  using V = std::vector<int64_t>;
  // (shapes with >= 64 output blocks per channel block: smaller maps keep conv.comp)
  // 3x3 pad 1, 8-channel blocks (OC 12: a partial block), batch 2, bias + Relu, OW not a multiple of 8
  auto c1 = conv({2, 5, 22, 12}, {12, 5, 3, 3}, {2, 12, 22, 12}, A{{"pads", V{1, 1, 1, 1}}, {"activation", std::string("Relu")}}, true);
  check_against_reference(c1);
  BOOST_TEST(exec_type_of(c1) == "vulkan:conv_row_oc8");
  // depthwise 5x5 pad 2 (segment of 4 texels), HardSwish
  auto c2 = conv({1, 6, 24, 20}, {6, 1, 5, 5}, {1, 6, 24, 20},
                 A{{"group", int64_t(6)}, {"pads", V{2, 2, 2, 2}}, {"activation", std::string("HardSwish")}}, true);
  check_against_reference(c2);
  BOOST_TEST(exec_type_of(c2) == "vulkan:conv_dw"); // depthwise with constant weights: conv_dw.comp
  // 1x3 kernel with pads (0,1) as in SVTR, 4-channel blocks
  auto c3 = conv({1, 16, 13, 40}, {4, 16, 1, 3}, {1, 4, 13, 40}, A{{"pads", V{0, 1, 0, 1}}}, true);
  check_against_reference(c3);
  BOOST_TEST(exec_type_of(c3) == "vulkan:conv_row_oc4");
  // vertical stride 2, asymmetric pads (none left/top, 2 right/bottom), no bias
  auto c4 = conv({1, 3, 129, 8}, {8, 3, 3, 3}, {1, 8, 65, 8}, A{{"pads", V{0, 0, 2, 2}}, {"strides", V{2, 1}}}, false);
  check_against_reference(c4);
  BOOST_TEST(exec_type_of(c4) == "vulkan:conv_row_oc8");
  // dilation 2 with 5 left pad (lead of 2 texels), non-constant weights
  auto c5 = conv({1, 2, 25, 16}, {3, 2, 3, 3}, {1, 3, 25, 22}, A{{"pads", V{1, 5, 1, 5}}, {"dilations", V{1, 2}}}, true, false);
  check_against_reference(c5);
  BOOST_TEST(exec_type_of(c5) == "vulkan:conv_row_oc1");
  // horizontal stride 2 (segments of (OWB-1)*2 + KW floats): a stem-like 3-channel 3x3 conv
  // with Relu (OW a multiple of 4: whole-texel stores) ...
  auto s1 = conv({1, 3, 40, 32}, {16, 3, 3, 3}, {1, 16, 20, 16},
                 A{{"pads", V{1, 1, 1, 1}}, {"strides", V{2, 2}}, {"activation", std::string("Relu")}}, true);
  check_against_reference(s1);
  BOOST_TEST(exec_type_of(s1) == "vulkan:conv_row_oc8");
  // ... depthwise 5x5 stride 2 (a 6-texel segment; OW 12: the last 8-column block half empty) ...
  auto s2 = conv({1, 6, 48, 24}, {6, 1, 5, 5}, {1, 6, 24, 12},
                 A{{"group", int64_t(6)}, {"pads", V{2, 2, 2, 2}}, {"strides", V{2, 2}}, {"activation", std::string("HardSwish")}},
                 true);
  check_against_reference(s2);
  BOOST_TEST(exec_type_of(s2) == "vulkan:conv_dw");
  // ... OW 10 (not whole texels: one float per store), asymmetric pads, no bias
  auto s3 = conv({1, 4, 40, 20}, {8, 4, 3, 3}, {1, 8, 20, 10}, A{{"pads", V{1, 1, 0, 0}}, {"strides", V{2, 2}}}, false);
  check_against_reference(s3);
  BOOST_TEST(exec_type_of(s3) == "vulkan:conv_row_oc8");
  // a segment over 6 texels (stride 2, 11 wide kernel, 8 columns: 3 + 14 + 10 + 1 floats) keeps conv.comp
  auto s4 = conv({1, 2, 64, 64}, {2, 1, 11, 11}, {1, 2, 32, 32},
                 A{{"group", int64_t(2)}, {"pads", V{5, 5, 5, 5}}, {"strides", V{2, 2}}}, true);
  check_against_reference(s4);
  BOOST_TEST(exec_type_of(s4) == "vulkan:conv_oc1");
}

BOOST_AUTO_TEST_CASE(conv_dw_variants) {
  // Depthwise (group = IC = OC, constant weights) on conv_dw.comp: 4x4 tiles, 4x8 when OW % 8 == 0.
  using A = std::map<std::string, graph::AttributeValue>;
  using V = std::vector<int64_t>;
  auto expect = [](const graph::Graph& g, const std::string& type) {
    check_against_reference(g);
    BOOST_TEST(exec_type_of(g) == type);
  };
  // det's 5x5 pad 2 at 20x20 (small), bias + HardSwish
  expect(conv({1, 8, 20, 20}, {8, 1, 5, 5}, {1, 8, 20, 20},
              A{{"group", int64_t(8)}, {"pads", V{2, 2, 2, 2}}, {"activation", std::string("HardSwish")}}, true),
         "vulkan:conv_dw");
  // rec-like wide rows (8-column tiles), batch 2, OH 14: the last row tile half empty, no bias
  expect(conv({2, 6, 14, 32}, {6, 1, 5, 5}, {2, 6, 14, 32}, A{{"group", int64_t(6)}, {"pads", V{2, 2, 2, 2}}}, false),
         "vulkan:conv_dw_w8");
  // 3x3 pad 1 with Relu
  expect(conv({1, 5, 9, 16}, {5, 1, 3, 3}, {1, 5, 9, 16},
              A{{"group", int64_t(5)}, {"pads", V{1, 1, 1, 1}}, {"activation", std::string("Relu")}}, true),
         "vulkan:conv_dw_w8");
  // no pads, OW 18: one float per store, the last column tile half empty
  expect(conv({1, 4, 12, 20}, {4, 1, 3, 3}, {1, 4, 10, 18}, A{{"group", int64_t(4)}}, true), "vulkan:conv_dw");
  // stride 2 both ways, 8-column tiles (a 6-texel segment)
  expect(conv({1, 3, 20, 32}, {3, 1, 5, 5}, {1, 3, 10, 16},
              A{{"group", int64_t(3)}, {"pads", V{2, 2, 2, 2}}, {"strides", V{2, 2}}}, true),
         "vulkan:conv_dw_w8");
  // vertical stride only
  expect(conv({1, 4, 21, 16}, {4, 1, 3, 3}, {1, 4, 11, 16},
              A{{"group", int64_t(4)}, {"pads", V{1, 1, 1, 1}}, {"strides", V{2, 1}}}, true),
         "vulkan:conv_dw_w8");
  // dilation 2 with asymmetric pads (3 left: a segment that starts 1 float into its first texel)
  expect(conv({1, 4, 15, 24}, {4, 1, 3, 3}, {1, 4, 14, 23},
              A{{"group", int64_t(4)}, {"pads", V{2, 3, 1, 0}}, {"dilations", V{2, 2}}}, true),
         "vulkan:conv_dw");
  // what conv_dw.comp does not take: non-constant weights, channel multiplier 2, 7x7 (49 weights
  // over the shader's 28), rows that are not whole texels
  expect(conv({1, 6, 24, 20}, {6, 1, 5, 5}, {1, 6, 24, 20}, A{{"group", int64_t(6)}, {"pads", V{2, 2, 2, 2}}}, true, false),
         "vulkan:conv_row_oc1");
  auto m2 = conv({1, 4, 24, 20}, {8, 1, 3, 3}, {1, 8, 24, 20}, A{{"group", int64_t(4)}, {"pads", V{1, 1, 1, 1}}}, true);
  check_against_reference(m2);
  BOOST_TEST(exec_type_of(m2).find("conv_dw") == std::string::npos);
  auto k7 = conv({1, 4, 24, 20}, {4, 1, 7, 7}, {1, 4, 24, 20}, A{{"group", int64_t(4)}, {"pads", V{3, 3, 3, 3}}}, true);
  check_against_reference(k7);
  BOOST_TEST(exec_type_of(k7).find("conv_dw") == std::string::npos);
  expect(conv({1, 4, 13, 13}, {4, 1, 5, 5}, {1, 4, 13, 13}, A{{"group", int64_t(4)}, {"pads", V{2, 2, 2, 2}}}, true),
         "vulkan:conv_oc1");
  // float16 storage
  f16_checks mode;
  auto h = conv({1, 8, 20, 20}, {8, 1, 5, 5}, {1, 8, 20, 20}, A{{"group", int64_t(8)}, {"pads", V{2, 2, 2, 2}}}, true);
  check_against_reference(h);
  BOOST_TEST(exec_type_of(h, check_cfg) == "vulkan:conv_dw_f16");
}

BOOST_AUTO_TEST_CASE(f16_storage_variants) {
  // INFERENCE_PRECISION_HINT=f16: every float tensor and weight is float16 on the device, the
  // arithmetic f32; f32 at the boundary. The same graphs as above, against the f32 reference.
  auto& dev = dynamic_cast<kv::vulkan_device&>(gpu());
  BOOST_TEST_REQUIRE(dev.context().facts().fp16, "lavapipe has shaderFloat16 + 16-bit storage");
  f16_checks mode;
  using A = std::map<std::string, graph::AttributeValue>;
  using V = std::vector<int64_t>;
  check_against_reference(conv({1, 8, 9, 11}, {16, 8, 3, 3}, {1, 16, 9, 11}, A{{"pads", V{1, 1, 1, 1}}, {"activation", std::string("Relu")}}, true));
  check_against_reference(conv({2, 3, 10, 10}, {6, 3, 3, 3}, {2, 6, 5, 5}, A{{"pads", V{1, 1, 0, 0}}, {"strides", V{2, 2}}}, false));
  check_against_reference(conv({1, 12, 13, 13}, {12, 1, 5, 5}, {1, 12, 7, 7},
                               A{{"group", int64_t(12)}, {"pads", V{2, 2, 2, 2}}, {"strides", V{2, 2}}}, true));
  check_against_reference(conv({1, 16, 6, 7}, {10, 16, 1, 1}, {1, 10, 6, 7}, A{{"auto_pad", std::string("SAME_UPPER")}}, false, false));
  // conv_row (stride 1, rows of whole texels) and the GEMM shaders
  auto row = conv({1, 8, 16, 64}, {16, 8, 3, 3}, {1, 16, 16, 64}, A{{"pads", V{1, 1, 1, 1}}}, true);
  check_against_reference(row);
  auto c2 = conv({2, 40, 5, 4}, {64, 40, 1, 1}, {2, 64, 5, 4}, {}, false);
  check_against_reference(c2);
  auto m1 = binary("MatMul", {2, 40, 12}, {12, 36}, {2, 40, 36}, true);
  check_against_reference(m1);
  check_against_reference(binary("MatMul", {2, 3, 5, 6}, {2, 3, 6, 4}, {2, 3, 5, 4}, false));
  check_against_reference(binary("Add", {2, 3, 4, 5}, {3, 1, 5}, {2, 3, 4, 5}, false));
  check_against_reference(binary("Mul", {2, 3, 4, 5}, {1, 3, 1, 1}, {2, 3, 4, 5}, true));
  check_against_reference(unary("Sigmoid"));
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 7});
    b.op("Softmax", {x}, {{2, 3, 7}}, {{"axis", int64_t(-1)}});
    b.outputs_of_last();
    check_against_reference(b.g, -5, 5);
  }
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 4, 5});
    b.op("ReduceMean", {x}, {{2, 1, 4, 1}}, {{"axes", V{1, 3}}, {"keepdims", int64_t(1)}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 9, 10});
    b.op("MaxPool", {x}, {{2, 3, 5, 5}}, {{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 4});
    b.op("Transpose", {x}, {{4, 2, 3}}, {{"perm", V{2, 0, 1}}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  // The f16 variants ran, and the tensors take half the memory.
  kernels::compile_config f16 = check_cfg;
  BOOST_TEST(exec_type_of(row, check_cfg) == "vulkan:conv_row_oc8_f16");
  auto before = dev.context().device_memory().bytes_in_use();
  std::size_t f32_bytes, f16_bytes;
  {
    auto exe = gpu().compile(m1, {});
    f32_bytes = dev.context().device_memory().bytes_in_use() - before;
  }
  {
    auto exe = gpu().compile(m1, f16);
    f16_bytes = dev.context().device_memory().bytes_in_use() - before;
  }
  BOOST_TEST(f16_bytes < f32_bytes, f16_bytes << " bytes in f16, " << f32_bytes << " in f32");
  // bf16 is no GPU precision.
  kernels::compile_config bf = {};
  bf.inference_precision = element_type::bf16;
  BOOST_CHECK_EXCEPTION(gpu().compile(m1, bf), Exception, [](const Exception& e) {
    return std::string(e.what()).find("INFERENCE_PRECISION_HINT") != std::string::npos;
  });
}

BOOST_AUTO_TEST_CASE(f16_arithmetic_variants) {
  // GPU_F16_ARITHMETIC: the Conv, MatMul and Gemm loops load float16 operands and accumulate in
  // float16 (the _f16math shader variants); each family against the f32 reference.
  auto& dev = dynamic_cast<kv::vulkan_device&>(gpu());
  BOOST_TEST_REQUIRE(dev.context().facts().fp16, "lavapipe has shaderFloat16 + 16-bit storage");
  f16_checks mode(true);
  using A = std::map<std::string, graph::AttributeValue>;
  using V = std::vector<int64_t>;
  auto expect = [&](const graph::Graph& g, const std::string& exec_type) {
    check_against_reference(g);
    BOOST_TEST(exec_type_of(g, check_cfg) == exec_type);
  };
  expect(conv({1, 8, 9, 11}, {16, 8, 3, 3}, {1, 16, 9, 11}, A{{"pads", V{1, 1, 1, 1}}, {"activation", std::string("Relu")}}, true),
         "vulkan:conv_oc8_f16math");
  expect(conv({2, 3, 10, 10}, {6, 3, 3, 3}, {2, 6, 5, 5}, A{{"pads", V{1, 1, 0, 0}}, {"strides", V{2, 2}}}, false),
         "vulkan:conv_oc4_f16math");
  expect(conv({1, 8, 16, 64}, {16, 8, 3, 3}, {1, 16, 16, 64}, A{{"pads", V{1, 1, 1, 1}}}, true), "vulkan:conv_row_oc8_f16math");
  expect(conv({1, 8, 20, 20}, {8, 1, 5, 5}, {1, 8, 20, 20}, A{{"group", int64_t(8)}, {"pads", V{2, 2, 2, 2}}}, true),
         "vulkan:conv_dw_f16math");
  expect(conv({2, 40, 5, 4}, {64, 40, 1, 1}, {2, 64, 5, 4}, {}, false), "vulkan:gemm_m16_f16math");
  expect(binary("MatMul", {1, 40, 12}, {12, 36}, {1, 40, 36}, true), "vulkan:gemm_m8_f16math");
  expect(binary("MatMul", {2, 3, 5, 6}, {2, 3, 6, 4}, {2, 3, 5, 4}, false), "vulkan:matmul_b4_f16math");
  expect(binary("MatMul", {2, 3, 5, 6}, {2, 3, 6, 3}, {2, 3, 5, 3}, false), "vulkan:matmul_f16math");
  // Ops without an f16math variant keep f32 math on float16 storage.
  expect(binary("Add", {2, 3, 4, 5}, {3, 1, 5}, {2, 3, 4, 5}, false), "vulkan:eltwise_v4_f16");
  // Without f16 storage the flag does nothing.
  kernels::compile_config f32 = check_cfg;
  f32.inference_precision = element_type::f32;
  auto g = conv({1, 8, 16, 64}, {16, 8, 3, 3}, {1, 16, 16, 64}, A{{"pads", V{1, 1, 1, 1}}}, true);
  BOOST_TEST(exec_type_of(g, f32) == "vulkan:conv_row_oc8");
}

BOOST_AUTO_TEST_CASE(pooling) {
  using V = std::vector<int64_t>;
  auto pool = [](const std::string& t, Shape y, std::map<std::string, graph::AttributeValue> a) {
    graph_builder b;
    auto x = b.input("x", {2, 3, 9, 10});
    b.op(t, {x}, {y}, std::move(a));
    b.outputs_of_last();
    return b.g;
  };
  check_against_reference(pool("MaxPool", {2, 3, 5, 5}, {{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}));
  check_against_reference(pool("AveragePool", {2, 3, 5, 5}, {{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}));
  check_against_reference(pool("AveragePool", {2, 3, 5, 5},
                               {{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}, {"count_include_pad", int64_t(1)}}));
  check_against_reference(pool("MaxPool", {2, 3, 4, 5}, {{"kernel_shape", V{2, 2}}, {"strides", V{2, 2}}}));
  check_against_reference(pool("GlobalAveragePool", {2, 3, 1, 1}, {}));
  check_against_reference(pool("GlobalMaxPool", {2, 3, 1, 1}, {}));
}

BOOST_AUTO_TEST_CASE(batch_normalization) {
  graph_builder b;
  auto x = b.input("x", {2, 5, 3, 4});
  auto s = b.random_constant("s", {5}), bb = b.random_constant("bb", {5}), m = b.random_constant("m", {5});
  auto v = b.random_constant("v", {5}, 0.5f, 2.0f);
  b.op("BatchNormalization", {x, s, bb, m, v}, {{2, 5, 3, 4}}, {{"epsilon", 1e-3f}});
  b.outputs_of_last();
  check_against_reference(b.g);
}

BOOST_AUTO_TEST_CASE(resize) {
  auto rs = [](std::map<std::string, graph::AttributeValue> a, std::vector<float> scales, Shape y) {
    graph_builder b;
    b.g.opset = 13;
    auto x = b.input("x", {1, 2, 5, 6});
    Tensor sc(element_type::f32, {4});
    std::copy(scales.begin(), scales.end(), sc.data<float>());
    b.op("Resize", {x, graph::no_value, b.constant("scales", sc)}, {y}, std::move(a));
    b.outputs_of_last();
    return b.g;
  };
  check_against_reference(rs({{"mode", std::string("nearest")}}, {1, 1, 2, 2}, {1, 2, 10, 12}));
  check_against_reference(rs({{"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string("asymmetric")},
                              {"nearest_mode", std::string("floor")}}, {1, 1, 2, 2}, {1, 2, 10, 12}));
  check_against_reference(rs({{"mode", std::string("linear")}}, {1, 1, 2, 2}, {1, 2, 10, 12}));
  check_against_reference(rs({{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}},
                             {1, 1, 1.5f, 0.5f}, {1, 2, 7, 3}));
  for (const char* mode : {"nearest", "linear"}) // scales whose output length rounds
    check_against_reference(rs({{"mode", std::string(mode)}, {"coordinate_transformation_mode", std::string("half_pixel_symmetric")}},
                               {1, 1, 1.7f, 0.55f}, {1, 2, 8, 3}));
}

BOOST_AUTO_TEST_CASE(movement_ops) {
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 4});
    auto y = b.input("y", {2, 5, 4});
    b.op("Concat", {x, y, b.random_constant("z", {2, 1, 4})}, {{2, 9, 4}}, {{"axis", int64_t(1)}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 4, 5});
    b.op("Transpose", {x}, {{5, 2, 4, 3}}, {{"perm", std::vector<int64_t>{3, 0, 2, 1}}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  {
    graph_builder b;
    auto x = b.input("x", {4, 10});
    b.op("Slice", {x, b.ints("st", {1, -2}), b.ints("en", {3, 0}), b.ints("ax", {0, 1}), b.ints("sp", {1, -3})}, {{2, 3}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  {
    graph_builder b;
    auto x = b.input("x", {2, 6});
    b.op("Split", {x, b.ints("sp", {2, 4})}, {{2, 2}, {2, 4}}, {{"axis", int64_t(1)}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  {
    graph_builder b;
    auto x = b.input("x", {3, 1});
    b.op("Expand", {x, b.ints("shape", {2, 3, 4})}, {{2, 3, 4}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 4});
    b.op("Tile", {x, b.ints("rep", {2, 1, 3})}, {{4, 3, 12}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  { // every dim repeated: more dims than one copy has, so one copy per repeated dim
    graph_builder b;
    auto x = b.input("x", {2, 3, 1, 5});
    b.op("Tile", {x, b.ints("rep", {3, 2, 4, 2})}, {{6, 6, 4, 10}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  { // a repeat of 0: an empty output, nothing written
    graph_builder b;
    auto x = b.input("x", {64, 64});
    b.op("Tile", {x, b.ints("rep", {0, 1})}, {{0, 64}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  for (const char* mode : {"DCR", "CRD"}) {
    graph_builder b;
    auto x = b.input("x", {2, 8, 2, 3});
    b.op("DepthToSpace", {x}, {{2, 2, 4, 6}}, {{"blocksize", int64_t(2)}, {"mode", std::string(mode)}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 4, 6});
    b.op("SpaceToDepth", {x}, {{2, 12, 2, 3}}, {{"blocksize", int64_t(2)}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 4});
    b.op("Reshape", {x, b.ints("shape", {6, 4})}, {{6, 4}});
    b.op("Relu", {b.g.ops.back().outputs[0]}, {{6, 4}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
}

namespace {

/// Integers of type T in [lo, hi] (seeded), for the integer variants.
template <class T>
Tensor random_ints(Shape s, unsigned seed, int64_t lo, int64_t hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> d(lo, hi);
  std::vector<int64_t> v(static_cast<std::size_t>(shape_size(s)));
  for (auto& e : v) e = d(rng);
  return ints_of<T>(std::move(s), std::move(v));
}

/// One op with outputs of `out_type` (f32 by default), its outputs the graph's.
graph::Graph one_op(graph_builder& b, const std::string& type, std::vector<graph::ValueId> in, const std::vector<Shape>& out,
                    std::map<std::string, graph::AttributeValue> attrs = {}, std::vector<element_type> out_types = {}) {
  auto& op = b.op(type, std::move(in), out, std::move(attrs));
  for (std::size_t i = 0; i < out_types.size(); ++i) b.g.value(op.outputs[i]).type = out_types[i];
  b.outputs_of_last();
  return b.g;
}

} // namespace

BOOST_AUTO_TEST_CASE(pad_every_mode) {
  using V = std::vector<int64_t>;
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    { // odd sizes, padding on three dims and cropping (a negative pad) on one
      graph_builder b;
      auto x = b.input("x", {2, 3, 5, 4});
      auto g = one_op(b, "Pad", {x, b.ints("p", {0, 2, 1, -1, 1, 1, 3, 2})}, {{3, 6, 9, 5}}, {{"mode", std::string(mode)}});
      check_against_reference(g);
    }
    { // int32 and int64 data: the word-moving variant; pads beyond the length (periodic reflect)
      for (auto t : {element_type::i32, element_type::i64}) {
        graph_builder b;
        auto x = b.input("x", {3, 4}, t);
        auto g = one_op(b, "Pad", {x, b.ints("p", {4, 0, 2, 5})}, {{9, 9}}, {{"mode", std::string(mode)}}, {t});
        const auto data = t == element_type::i32 ? random_ints<int32_t>({3, 4}, 3, -1000, 1000)
                                                 : random_ints<int64_t>({3, 4}, 3, -5000000000LL, 5000000000LL);
        check_exact(g, {data});
      }
    }
  }
  { // constant_value as an input, axes (opset 18) with a negative axis
    graph_builder b;
    b.g.opset = 18;
    auto x = b.input("x", {2, 3, 4});
    Tensor v(element_type::f32, Shape{});
    v.data<float>()[0] = 2.5f;
    auto g = one_op(b, "Pad", {x, b.ints("p", {1, -1, 2, 3}), b.constant("v", v), b.ints("axes", {-1, 0})}, {{4, 3, 7}});
    check_against_reference(g);
  }
  { // an int64 constant_value beyond 32 bits
    graph_builder b;
    auto x = b.input("x", {2, 2}, element_type::i64);
    auto g = one_op(b, "Pad", {x, b.ints("p", {1, 0, 0, 2}), b.constant("v", ints_of<int64_t>({}, {-7000000000LL}))}, {{3, 4}}, {},
                    {element_type::i64});
    check_exact(g, {random_ints<int64_t>({2, 2}, 5, -9, 9)});
  }
  { // constant_value given at run time: read from its buffer (f32, and an int64 beyond 32 bits)
    graph_builder b;
    auto x = b.input("x", {3, 5});
    auto g = one_op(b, "Pad", {x, b.ints("p", {1, 2, 2, 0}), b.input("v", {})}, {{6, 7}});
    check_against_reference(g);
    graph_builder c;
    auto xi = c.input("x", {2, 2}, element_type::i64);
    auto gi = one_op(c, "Pad", {xi, c.ints("p", {0, 1, 2, 1}), c.input("v", {}, element_type::i64)}, {{4, 4}}, {},
                     {element_type::i64});
    check_exact(gi, {random_ints<int64_t>({2, 2}, 6, -9, 9), ints_of<int64_t>({}, {9000000001LL})});
  }
  { // opset < 11: pads and value are attributes; rank 6
    graph_builder b;
    b.g.opset = 2;
    auto x = b.input("x", {2, 1, 2, 3, 1, 2});
    auto g = one_op(b, "Pad", {x}, {{2, 3, 2, 4, 2, 3}},
                    {{"pads", V{0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1}}, {"value", 1.5f}, {"mode", std::string("constant")}});
    check_against_reference(g);
  }
  { // an empty input padded with the constant, and an empty output (nothing dispatched)
    graph_builder b;
    auto x = b.input("x", {2, 0, 3});
    auto g = one_op(b, "Pad", {x, b.ints("p", {0, 1, 0, 0, 1, 0})}, {{2, 2, 3}});
    check_against_reference(g);
    graph_builder c;
    auto g2 = one_op(c, "Pad", {c.input("x", {2, 3}), c.ints("p", {0, 0, -2, 0})}, {{0, 3}});
    check_against_reference(g2);
  }
  { // what the shader cannot do is refused, naming the input
    graph_builder b;
    auto x = b.input("x", {2, 3});
    b.op("Pad", {x, b.input("p", {4}, element_type::i64)}, {{4, 5}});
    auto s = gpu().query(b.g, b.g.ops[0]);
    BOOST_TEST(!s.supported);
    BOOST_TEST(s.reason.find("pads (input 1) is not a constant") != std::string::npos, s.reason);
  }
}

BOOST_AUTO_TEST_CASE(cumsum_every_attribute) {
  for (int64_t axis : {0, 1, -1})
    for (int64_t excl : {0, 1})
      for (int64_t rev : {0, 1}) {
        std::map<std::string, graph::AttributeValue> a{{"exclusive", excl}, {"reverse", rev}};
        graph_builder b;
        check_against_reference(one_op(b, "CumSum", {b.input("x", {3, 7, 5}), b.ints("axis", {axis})}, {{3, 7, 5}}, a));
        for (auto t : {element_type::i32, element_type::i64}) {
          graph_builder c;
          auto g = one_op(c, "CumSum", {c.input("x", {4, 5, 3}, t), c.ints("axis", {axis})}, {{4, 5, 3}}, a, {t});
          // int64 sums that cross 32 bits (a carry between the words); no int32 overflow (undefined
          // behaviour in the reference's arithmetic)
          check_exact(g, {t == element_type::i32 ? random_ints<int32_t>({4, 5, 3}, 9, -200000000, 200000000)
                                                 : random_ints<int64_t>({4, 5, 3}, 9, -4000000000LL, 4000000000LL)});
        }
      }
  { // the axis a run-time input (as ONNX's conformance cases give it), int64 or int32
    graph_builder b;
    auto g = one_op(b, "CumSum", {b.input("x", {3, 7, 5}), b.input("axis", {}, element_type::i64)}, {{3, 7, 5}}, {{"exclusive", int64_t(1)}});
    auto exe = gpu().compile(g, {});
    const auto x = random_tensor({3, 7, 5}, 4);
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      const std::vector<Tensor> in{x, ints_of<int64_t>({}, {axis})};
      std::vector<Tensor> got;
      exe->run(in, got);
      const auto want = reference_run(g, in);
      double worst = 0;
      for (int64_t i = 0; i < want[0].get_size(); ++i)
        worst = std::max<double>(worst, std::abs(got.at(0).data<float>()[i] - want[0].data<float>()[i]));
      BOOST_TEST(worst <= 1e-5, "axis " << axis << ": worst error " << worst);
    }
    graph_builder c;
    auto gi = one_op(c, "CumSum", {c.input("x", {4, 6}, element_type::i32), c.input("axis", {1}, element_type::i32)}, {{4, 6}},
                     {{"reverse", int64_t(1)}}, {element_type::i32});
    check_exact(gi, {random_ints<int32_t>({4, 6}, 2, -1000, 1000), ints_of<int32_t>({1}, {-2})});
  }
  graph_builder b; // empty: no dispatch
  check_against_reference(one_op(b, "CumSum", {b.input("x", {3, 0}), b.ints("axis", {1})}, {{3, 0}}));
}

BOOST_AUTO_TEST_CASE(top_k_values_and_indices) {
  for (int64_t axis : {1, -1, 0})
    for (int64_t largest : {0, 1}) {
      const Shape x{4, 9, 6};
      const auto len = x[static_cast<std::size_t>(axis < 0 ? axis + 3 : axis)];
      for (int64_t k : {int64_t(1), int64_t(3), len}) {
        Shape y = x;
        y[static_cast<std::size_t>(axis < 0 ? axis + 3 : axis)] = k;
        graph_builder b;
        auto g = one_op(b, "TopK", {b.input("x", x), b.ints("k", {k})}, {y, y},
                        {{"axis", axis}, {"largest", largest}, {"sorted", int64_t(1)}}, {element_type::f32, element_type::i64});
        // values on a coarse grid: many ties, which go to the lower index first
        auto data = random_tensor(x, 11, -2, 2);
        for (int64_t i = 0; i < data.get_size(); ++i) data.data<float>()[i] = std::round(data.data<float>()[i] * 2) / 2;
        check_exact(g, {data});
      }
    }
  { // opset 1: K an attribute; K = 0 gives empty outputs
    graph_builder b;
    b.g.opset = 1;
    check_against_reference(one_op(b, "TopK", {b.input("x", {3, 5})}, {{3, 2}, {3, 2}}, {{"k", int64_t(2)}},
                                   {element_type::f32, element_type::i64}));
    graph_builder c;
    check_against_reference(one_op(c, "TopK", {c.input("x", {3, 5}), c.ints("k", {0})}, {{3, 0}, {3, 0}}, {},
                                   {element_type::f32, element_type::i64}));
  }
}

BOOST_AUTO_TEST_CASE(gather_nd_and_scatters) {
  const auto data = random_tensor({4, 3, 5}, 21, -1, 1);
  { // GatherND: tuples of 1 and 2 indices (negative ones too), batch_dims 1, int32 data
    graph_builder b;
    check_exact(one_op(b, "GatherND", {b.input("x", {4, 3, 5}), b.input("i", {2, 2, 2}, element_type::i64)}, {{2, 2, 5}}),
                {data, ints_of<int64_t>({2, 2, 2}, {0, 1, 3, -1, -4, 2, 2, 0})});
    graph_builder c;
    check_exact(one_op(c, "GatherND", {c.input("x", {4, 3, 5}), c.input("i", {4, 1}, element_type::i32)}, {{4, 3, 5}}),
                {data, ints_of<int32_t>({4, 1}, {3, 0, -1, 1})});
    graph_builder d;
    auto g = one_op(d, "GatherND", {d.input("x", {4, 3, 5}, element_type::i64), d.input("i", {4, 2, 1}, element_type::i64)},
                    {{4, 2, 5}}, {{"batch_dims", int64_t(1)}}, {element_type::i64});
    check_exact(g, {random_ints<int64_t>({4, 3, 5}, 4, -5000000000LL, 5000000000LL),
                    ints_of<int64_t>({4, 2, 1}, {0, 2, 1, 1, -1, 0, 2, 2})});
  }
  for (const char* red : {"none", "add", "mul"}) {
    std::map<std::string, graph::AttributeValue> a{{"reduction", std::string(red)}};
    { // ScatterND: duplicate tuples apply in order (the last one wins with none)
      graph_builder b;
      auto g = one_op(b, "ScatterND", {b.input("x", {4, 3, 5}), b.input("i", {3, 2}, element_type::i64), b.input("u", {3, 5})},
                      {{4, 3, 5}}, a);
      check_exact(g, {data, ints_of<int64_t>({3, 2}, {1, 2, -3, -1, 1, 2}), random_tensor({3, 5}, 22, -2, 2)});
      for (auto t : {element_type::i32, element_type::i64}) {
        graph_builder c;
        auto gi = one_op(c, "ScatterND", {c.input("x", {4, 3}, t), c.input("i", {3, 1}, element_type::i32), c.input("u", {3, 3}, t)},
                         {{4, 3}}, a, {t});
        // int64 sums and products past 32 bits (a carry, the high product word); no overflow,
        // which is undefined behaviour in the reference's arithmetic
        const bool mul = std::string(red) == "mul";
        auto r = [&](Shape s, unsigned seed) {
          return t == element_type::i32 ? random_ints<int32_t>(s, seed, mul ? -40 : -70000, mul ? 40 : 70000)
                                        : random_ints<int64_t>(s, seed, mul ? -100000 : -3000000000LL, mul ? 100000 : 3000000000LL);
        };
        check_exact(gi, {r({4, 3}, 1), ints_of<int32_t>({3, 1}, {2, 0, 2}), r({3, 3}, 2)});
      }
    }
    for (int64_t axis : {0, -1}) { // ScatterElements, duplicates along the axis
      graph_builder b;
      auto g = one_op(b, "ScatterElements", {b.input("x", {4, 3, 5}), b.input("i", {2, 3, 4}, element_type::i32), b.input("u", {2, 3, 4})},
                      {{4, 3, 5}}, {{"axis", axis}, {"reduction", std::string(red)}});
      std::vector<int64_t> idx(24);
      for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = static_cast<int64_t>(k * 5 % 4) - (k % 7 == 0 ? 1 : 0);
      check_exact(g, {data, ints_of<int32_t>({2, 3, 4}, idx), random_tensor({2, 3, 4}, 23, -2, 2)});
    }
  }
  { // the legacy Scatter (opset 10), int64 data
    graph_builder b;
    b.g.opset = 10;
    auto g = one_op(b, "Scatter", {b.input("x", {3, 4}, element_type::i64), b.input("i", {3, 2}, element_type::i64), b.input("u", {3, 2}, element_type::i64)},
                    {{3, 4}}, {{"axis", int64_t(1)}}, {element_type::i64});
    check_exact(g, {random_ints<int64_t>({3, 4}, 7, -9, 9), ints_of<int64_t>({3, 2}, {0, 3, -1, 1, 2, 2}),
                    random_ints<int64_t>({3, 2}, 8, -5000000000LL, 5000000000LL)});
  }
  { // empty indices: the copy alone
    graph_builder b;
    auto g = one_op(b, "ScatterElements", {b.input("x", {4, 3}), b.input("i", {0, 3}, element_type::i64), b.input("u", {0, 3})}, {{4, 3}});
    check_exact(g, {random_tensor({4, 3}, 1), ints_of<int64_t>({0, 3}, {}), random_tensor({0, 3}, 2)});
  }
}

BOOST_AUTO_TEST_CASE(one_d_windows) {
  using V = std::vector<int64_t>;
  using A = std::map<std::string, graph::AttributeValue>;
  check_against_reference(conv({2, 3, 11}, {4, 3, 3}, {2, 4, 5}, A{{"pads", V{1, 0}}, {"strides", V{2}}}, true));
  check_against_reference(conv({1, 6, 16}, {6, 2, 5}, {1, 6, 8}, A{{"group", int64_t(3)}, {"dilations", V{2}}, {"auto_pad", std::string("SAME_UPPER")}, {"strides", V{2}}}, false));
  check_against_reference(conv({1, 8, 13}, {8, 1, 3}, {1, 8, 13}, A{{"group", int64_t(8)}, {"pads", V{1, 1}}}, true));
  check_against_reference(conv({2, 8, 12}, {5, 8, 1}, {2, 5, 12}, {}, false, false));
  {
    graph_builder b;
    b.op("ConvTranspose", {b.input("x", {2, 3, 7}), b.random_constant("w", {3, 4, 3}), b.random_constant("b", {4})}, {{2, 4, 15}},
         {{"strides", V{2}}, {"pads", V{0, 1}}, {"output_padding", V{1}}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  for (const char* t : {"MaxPool", "AveragePool"}) {
    graph_builder b;
    b.op(t, {b.input("x", {2, 3, 11})}, {{2, 3, 6}}, {{"kernel_shape", V{3}}, {"strides", V{2}}, {"pads", V{1, 1}}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  {
    graph_builder b;
    b.op("AveragePool", {b.input("x", {2, 3, 10})}, {{2, 3, 5}},
         {{"kernel_shape", V{4}}, {"strides", V{2}}, {"auto_pad", std::string("SAME_LOWER")}, {"count_include_pad", int64_t(1)}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  for (int64_t order : {0, 1}) { // MaxPool's Indices, 2-D (either storage order) and 1-D; ties to the first
    graph_builder b;
    auto g = one_op(b, "MaxPool", {b.input("x", {2, 3, 7, 9})}, {{2, 3, 4, 4}, {2, 3, 4, 4}},
                    {{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 0, 1, 0}}, {"storage_order", order}},
                    {element_type::f32, element_type::i64});
    auto x = random_tensor({2, 3, 7, 9}, 5, -2, 2);
    for (int64_t i = 0; i < x.get_size(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i] * 2);
    check_exact(g, {x});
    graph_builder c;
    auto g1 = one_op(c, "MaxPool", {c.input("x", {2, 3, 11})}, {{2, 3, 4}, {2, 3, 4}},
                     {{"kernel_shape", V{3}}, {"strides", V{2}}, {"dilations", V{2}}, {"storage_order", order}},
                     {element_type::f32, element_type::i64});
    check_against_reference(g1);
  }
  for (const char* t : {"GlobalMaxPool", "GlobalAveragePool"}) {
    graph_builder b;
    b.op(t, {b.input("x", {2, 3, 10})}, {{2, 3, 1}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
}

BOOST_AUTO_TEST_CASE(three_d_pools) {
  using V = std::vector<int64_t>;
  for (int64_t include : {0, 1}) {
    graph_builder b;
    b.op("AveragePool", {b.input("x", {2, 3, 5, 6, 7})}, {{2, 3, 3, 3, 4}},
         {{"kernel_shape", V{3, 2, 3}}, {"strides", V{2, 2, 2}}, {"pads", V{1, 0, 1, 1, 1, 1}}, {"count_include_pad", include}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  for (int64_t order : {0, 1}) { // with Indices, ties to the first
    graph_builder b;
    auto g = one_op(b, "MaxPool", {b.input("x", {1, 2, 5, 4, 6})}, {{1, 2, 2, 3, 3}, {1, 2, 2, 3, 3}},
                    {{"kernel_shape", V{2, 2, 3}}, {"strides", V{2, 1, 2}}, {"dilations", V{2, 1, 1}}, {"pads", V{0, 0, 1, 0, 0, 0}},
                     {"storage_order", order}},
                    {element_type::f32, element_type::i64});
    auto x = random_tensor({1, 2, 5, 4, 6}, 9, -2, 2);
    for (int64_t i = 0; i < x.get_size(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i] * 2);
    check_exact(g, {x});
  }
  for (const char* t : {"GlobalMaxPool", "GlobalAveragePool"}) {
    graph_builder b;
    b.op(t, {b.input("x", {2, 3, 4, 5, 3})}, {{2, 3, 1, 1, 1}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  graph_builder b; // SAME_* pads on a 3-D window are refused, named
  b.op("MaxPool", {b.input("x", {1, 1, 4, 4, 4})}, {{1, 1, 4, 4, 4}}, {{"kernel_shape", V{3, 3, 3}}, {"auto_pad", std::string("SAME_UPPER")}});
  auto s = gpu().query(b.g, b.g.ops[0]);
  BOOST_TEST(!s.supported);
  BOOST_TEST(s.reason.find("auto_pad 'SAME_UPPER'") != std::string::npos, s.reason);
}

BOOST_AUTO_TEST_CASE(three_d_convs) {
  using V = std::vector<int64_t>;
  using A = std::map<std::string, graph::AttributeValue>;
  auto c3 = [](Shape x, Shape w, Shape y, A attrs, bool bias, bool const_w = true) { return conv(x, w, y, std::move(attrs), bias, const_w); };
  // pads, bias and a fused activation; odd sizes
  check_against_reference(c3({1, 3, 5, 6, 7}, {4, 3, 3, 3, 3}, {1, 4, 5, 6, 7},
                             A{{"pads", V{1, 1, 1, 1, 1, 1}}, {"activation", std::string("Relu")}}, true));
  // strides, dilations, asymmetric pads, groups, weights as an input
  check_against_reference(c3({2, 4, 7, 6, 9}, {6, 2, 2, 3, 2}, {2, 6, 3, 3, 5},
                             A{{"group", int64_t(2)}, {"strides", V{2, 2, 2}}, {"dilations", V{2, 1, 1}}, {"pads", V{0, 1, 1, 1, 0, 0}}},
                             false, false));
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER"}) // odd total padding: the extra one at the end or the start
    check_against_reference(c3({1, 2, 5, 4, 6}, {3, 2, 2, 3, 2}, {1, 3, 3, 2, 3}, A{{"auto_pad", std::string(ap)}, {"strides", V{2, 2, 2}}}, true));
  check_against_reference(c3({1, 2, 5, 4, 6}, {3, 2, 3, 3, 2}, {1, 3, 3, 2, 5},
                             A{{"auto_pad", std::string("VALID")}, {"pads", V{1, 1, 1, 1, 1, 1}}, {"activation", std::string("LeakyRelu")},
                               {"activation_params", std::vector<float>{0.1f}}}, true));
  // ConvTranspose: strides, pads, output_padding, groups, dilations, bias
  auto ct = [](Shape x, Shape w, Shape y, A attrs, bool bias) {
    graph_builder b;
    std::vector<graph::ValueId> in{b.input("x", x), b.random_constant("w", w)};
    if (bias) in.push_back(b.random_constant("b", {y[1]}));
    return one_op(b, "ConvTranspose", in, {y}, std::move(attrs));
  };
  check_against_reference(ct({1, 2, 3, 4, 5}, {2, 3, 3, 3, 3}, {1, 3, 5, 6, 7}, {}, true));
  check_against_reference(ct({2, 4, 3, 3, 4}, {4, 2, 3, 2, 3}, {2, 4, 6, 5, 9},
                             A{{"group", int64_t(2)}, {"strides", V{2, 2, 2}}, {"pads", V{1, 0, 0, 0, 0, 0}}, {"output_padding", V{1, 0, 1}},
                               {"dilations", V{1, 2, 1}}}, false));
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER"})
    check_against_reference(ct({1, 2, 3, 2, 3}, {2, 2, 3, 3, 2}, {1, 2, 6, 4, 6}, A{{"auto_pad", std::string(ap)}, {"strides", V{2, 2, 2}}}, true));
  check_against_reference(ct({1, 2, 3, 2, 3}, {2, 2, 3, 3, 2}, {1, 2, 7, 6, 6},
                             A{{"output_shape", V{7, 6, 6}}, {"strides", V{2, 2, 2}}, {"pads", V{5, 5, 5, 5, 5, 5}}}, true));
  {
    f16_checks mode;
    check_against_reference(c3({1, 3, 4, 5, 6}, {4, 3, 3, 3, 3}, {1, 4, 2, 3, 4}, {}, true));
    check_against_reference(ct({1, 2, 3, 4, 5}, {2, 3, 3, 3, 3}, {1, 3, 7, 9, 11}, A{{"strides", V{2, 2, 2}}}, true));
  }
  { // scalar Mul and Add after a 3-D conv fold into its store (lower_post_affine.cpp)
    graph_builder b;
    auto scalar = [&](const char* name, float f) {
      Tensor t(element_type::f32, {1});
      t.data<float>()[0] = f;
      return b.constant(name, t);
    };
    auto v = b.op("Conv", {b.input("x", {1, 2, 3, 4, 5}), b.random_constant("w", {3, 2, 2, 2, 2})}, {{1, 3, 2, 3, 4}},
                  A{{"activation", std::string("HardSwish")}}).outputs[0];
    v = b.op("Mul", {v, scalar("k", 1.75f)}, {{1, 3, 2, 3, 4}}).outputs[0];
    v = b.op("Add", {v, scalar("c", -0.5f)}, {{1, 3, 2, 3, 4}}).outputs[0];
    b.output(v);
    check_against_reference(b.g);
  }
  // what is refused names the attribute
  graph_builder b;
  b.op("Conv", {b.input("x", {1, 2, 4, 4, 4}), b.random_constant("w", {2, 2, 3, 3, 3})}, {{1, 2, 2, 2, 2}}, {{"strides", V{1, 1}}});
  auto s = gpu().query(b.g, b.g.ops[0]);
  BOOST_TEST(!s.supported);
  BOOST_TEST(s.reason.find("strides must have 3 values") != std::string::npos, s.reason);
}

BOOST_AUTO_TEST_CASE(resize_cubic_and_crop) {
  using A = std::map<std::string, graph::AttributeValue>;
  auto rs = [](A a, std::vector<float> scales, Shape y, std::vector<float> roi = {}) {
    graph_builder b;
    b.g.opset = 13;
    auto x = b.input("x", {y[0], y[1], 5, 7});
    auto floats = [&](const std::string& name, const std::vector<float>& v) {
      Tensor t(element_type::f32, {static_cast<int64_t>(v.size())});
      std::copy(v.begin(), v.end(), t.data<float>());
      return b.constant(name, t);
    };
    auto roi_v = roi.empty() ? graph::no_value : floats("roi", roi);
    if (scales.empty()) b.op("Resize", {x, roi_v, graph::no_value, b.ints("sizes", {y[0], y[1], y[2], y[3]})}, {y}, std::move(a));
    else b.op("Resize", {x, roi_v, floats("scales", scales)}, {y}, std::move(a));
    b.outputs_of_last();
    return b.g;
  };
  const std::string cubic = "cubic";
  for (const char* ct : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric"}) {
    BOOST_TEST_CONTEXT(ct) {
      check_against_reference(rs({{"mode", cubic}, {"coordinate_transformation_mode", std::string(ct)}}, {1, 1, 2, 1.5f}, {2, 3, 10, 10}));
      check_against_reference(rs({{"mode", cubic}, {"coordinate_transformation_mode", std::string(ct)}}, {}, {2, 3, 3, 4}));
    }
  }
  for (int64_t exclude : {0, 1})
    for (float a : {-0.5f, -0.75f}) {
      check_against_reference(rs({{"mode", cubic}, {"cubic_coeff_a", a}, {"exclude_outside", exclude}}, {1, 1, 0.6f, 1.3f}, {2, 3, 3, 9}));
      check_against_reference(rs({{"mode", cubic}, {"cubic_coeff_a", a}, {"exclude_outside", exclude}}, {}, {2, 3, 11, 4}));
    }
  // tf_half_pixel_for_nn moves N and C by half a pixel too (the reference interpolates across
  // them): one image of one channel, or refused
  const std::string nn = "tf_half_pixel_for_nn";
  check_against_reference(rs({{"mode", cubic}, {"coordinate_transformation_mode", nn}}, {1, 1, 2, 1.5f}, {1, 1, 10, 10}));
  check_against_reference(rs({{"mode", std::string("linear")}, {"coordinate_transformation_mode", nn}}, {}, {1, 1, 3, 4}));
  check_against_reference(rs({{"mode", std::string("nearest")}, {"coordinate_transformation_mode", nn}}, {}, {2, 3, 3, 4}));
  for (const char* mode : {"linear", "cubic"}) {
    auto g = rs({{"mode", std::string(mode)}, {"coordinate_transformation_mode", nn}}, {}, {2, 3, 3, 4});
    BOOST_TEST(gpu().query(g, g.ops[0]).reason.find("N or C") != std::string::npos, gpu().query(g, g.ops[0]).reason);
  }
  {
    auto g = rs({{"nearest_mode", std::string("ceil")}, {"coordinate_transformation_mode", nn}}, {}, {2, 3, 3, 4});
    BOOST_TEST(!gpu().query(g, g.ops[0]).supported);
  }
  // tf_crop_and_resize: a crop partly outside the input (extrapolated), every mode, scales or sizes
  const std::vector<float> roi{0, 0, -0.2f, 0.3f, 1, 1, 0.9f, 1.4f};
  const std::string crop = "tf_crop_and_resize";
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    BOOST_TEST_CONTEXT(mode) check_against_reference(rs({{"mode", std::string(mode)}, {"coordinate_transformation_mode", crop}, {"extrapolation_value", 7.5f}}, {},
                               {2, 3, 6, 5}, roi));
    check_against_reference(rs({{"mode", std::string(mode)}, {"coordinate_transformation_mode", crop}}, {1, 1, 0.8f, 1.5f}, {2, 3, 4, 10},
                               {0, 0, 0.1f, 0.2f, 1, 1, 0.7f, 0.9f}));
  }
  check_against_reference(rs({{"mode", cubic}, {"coordinate_transformation_mode", crop}}, {}, {2, 3, 1, 1}, roi)); // one output: the roi's middle
  {
    f16_checks mode;
    check_against_reference(rs({{"mode", cubic}}, {1, 1, 2, 1.5f}, {2, 3, 10, 10}));
    check_against_reference(rs({{"mode", cubic}, {"coordinate_transformation_mode", crop}, {"extrapolation_value", 2.0f}}, {}, {2, 3, 6, 5}, roi));
  }
  { // a wide input, the roi ending on its edge: the last column interpolates the edge pixel (a
    // float test in the shader put its 896.000122 outside 896 and wrote the extrapolation value)
    graph_builder b;
    b.g.opset = 13;
    Tensor r(element_type::f32, {8});
    const float v[] = {0, 0, 0, 0.4f, 1, 1, 1, 1};
    std::copy(std::begin(v), std::end(v), r.data<float>());
    b.op("Resize", {b.input("x", {1, 1, 8, 897}), b.constant("roi", r), graph::no_value, b.ints("sizes", {1, 1, 8, 64})},
         {{1, 1, 8, 64}}, {{"mode", std::string("linear")}, {"coordinate_transformation_mode", crop}, {"extrapolation_value", 1000.0f}});
    b.outputs_of_last();
    check_against_reference(b.g);
  }
  // the roi ending just past the input (4.00008 on an H of 5): the reference extrapolates the
  // last row; a shader test with slack interpolated it
  check_against_reference(rs({{"mode", std::string("linear")}, {"coordinate_transformation_mode", crop}, {"extrapolation_value", 1000.0f}},
                             {}, {1, 1, 3, 4}, {0, 0, 0, 0, 1, 1, 1.00002f, 1}));
  { // a crop whose shapes wait on input values (sizes as an input) is refused while they wait:
    // its roi would stay an input, and the shader needs it as a constant
    graph_builder b;
    b.g.opset = 13;
    auto g = one_op(b, "Resize", {b.input("x", {1, 1, 5, 7}), b.input("roi", {8}), graph::no_value, b.input("sizes", {4}, element_type::i64)},
                    {{1, 1, 3, 4}}, {{"coordinate_transformation_mode", crop}});
    auto s = kv::query_op_pending(g, g.ops[0]);
    BOOST_TEST(!s.supported);
    BOOST_TEST(s.reason.find("tf_crop_and_resize whose output shape waits") != std::string::npos, s.reason);
    // a constant roi stays one in the per-value compile
    Tensor r(element_type::f32, {8});
    const float v[] = {0, 0, 0.1f, 0.1f, 1, 1, 0.9f, 0.9f};
    std::copy(std::begin(v), std::end(v), r.data<float>());
    auto g_const = g;
    g_const.ops[0].inputs[1] = g_const.add_constant("roi_c", r);
    BOOST_TEST(kv::query_op_pending(g_const, g_const.ops[0]).supported, kv::query_op_pending(g_const, g_const.ops[0]).reason);
    g.ops[0].attrs["coordinate_transformation_mode"] = std::string("half_pixel");
    BOOST_TEST(kv::query_op_pending(g, g.ops[0]).supported);
  }
  // refusals name what is not handled
  auto why = [](const graph::Graph& g) { return gpu().query(g, g.ops[0]).reason; };
  BOOST_TEST(why(rs({{"mode", std::string("cubic")}, {"coordinate_transformation_mode", crop}}, {}, {2, 3, 6, 5},
                    {0, 0.5f, 0, 0, 1, 1, 1, 1})).find("cropping N or C") != std::string::npos);
  BOOST_TEST(why(rs({{"mode", std::string("cubic")}, {"antialias", int64_t(1)}}, {}, {2, 3, 3, 4})).find("antialias") != std::string::npos);
  BOOST_TEST(why(rs({{"coordinate_transformation_mode", std::string("pixel_perfect")}}, {}, {2, 3, 3, 4}))
                 .find("coordinate_transformation_mode 'pixel_perfect'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(einsum_equations) {
  struct eq_case {
    std::string eq;
    std::vector<Shape> in;
    Shape out;
  };
  const std::vector<eq_case> cases = {
      {"ij->ji", {{3, 5}}, {5, 3}},
      {"ij->i", {{4, 7}}, {4}},
      {"ij->", {{4, 7}}, {}},
      {"i,i", {{9}, {9}}, {}},
      {"ii->i", {{5, 5}}, {5}},
      {"ii", {{5, 5}}, {}},
      {"bij,bjk->bik", {{3, 2, 5}, {3, 5, 4}}, {3, 2, 4}},
      {"...ii->...i", {{3, 2, 4, 4}}, {3, 2, 4}},
      {"i,j->ij", {{3}, {5}}, {3, 5}},
      {"bhqd,bhkd->bhqk", {{2, 3, 5, 7}, {2, 3, 6, 7}}, {2, 3, 5, 6}},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}, {2, 5}},
      {"abc,cd->dba", {{2, 3, 4}, {4, 5}}, {5, 3, 2}},
      {"...j,j->...", {{2, 1, 3}, {3}}, {2, 1}},
      {"bi,...i->b...", {{2, 4}, {3, 4}}, {2, 3}},
  };
  auto build = [](const eq_case& c) {
    graph_builder b;
    std::vector<graph::ValueId> in;
    const char* names[] = {"x0", "x1", "x2"}; // (not "x" + to_string: GCC 12's -Wrestrict false positive)
    for (std::size_t k = 0; k < c.in.size(); ++k) in.push_back(b.input(names[k], c.in[k]));
    return one_op(b, "Einsum", in, {c.out}, {{"equation", c.eq}});
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.eq) { check_against_reference(build(c)); }
  }
  {
    f16_checks mode;
    check_against_reference(build(cases[6]));
  }
  for (std::size_t i : {0, 4, 6, 7, 10}) { // float64 (einsum_f64: summed in double), as ONNX's own cases
    BOOST_TEST_CONTEXT(cases[i].eq << " in f64") {
      graph_builder b;
      std::vector<graph::ValueId> in;
      std::vector<Tensor> data;
      const char* names[] = {"x0", "x1", "x2"};
      for (std::size_t k = 0; k < cases[i].in.size(); ++k) {
        in.push_back(b.input(names[k], cases[i].in[k], element_type::f64));
        Tensor f = random_tensor(cases[i].in[k], static_cast<unsigned>(7 + k), -1, 1), d(element_type::f64, cases[i].in[k]);
        for (int64_t e = 0; e < f.get_size(); ++e) d.data<double>()[e] = f.data<float>()[e] * (1 + 1e-9 * e);
        data.push_back(d);
      }
      auto g = one_op(b, "Einsum", in, {cases[i].out}, {{"equation", cases[i].eq}}, {element_type::f64});
      BOOST_TEST_REQUIRE(gpu().query(g, g.ops[0]).supported, gpu().query(g, g.ops[0]).reason);
      auto want = reference_run(g, data);
      kernels::compile_config f16; // f16 storage narrows f32 tensors only: f64 stays f64
      f16.inference_precision = element_type::f16;
      for (const auto& cfg : {kernels::compile_config{}, f16}) {
        auto exe = gpu().compile(g, cfg);
        std::vector<Tensor> got;
        exe->run(data, got);
        BOOST_TEST_REQUIRE((got[0].get_element_type() == element_type::f64));
        double worst = 0;
        for (int64_t e = 0; e < want[0].get_size(); ++e)
          worst = std::max(worst, std::abs(got[0].data<double>()[e] - want[0].data<double>()[e]));
        BOOST_TEST(worst <= 1e-12); // (float inputs times 1 + 1e-9 e: an f32 sum would miss by 1e-8)
      }
    }
  }
  graph_builder b; // 9 labels: refused, named
  one_op(b, "Einsum", {b.input("x", {1, 1, 1, 1, 1, 1, 1, 1, 2})}, {{2}}, {{"equation", std::string("abcdefghi->i")}});
  auto s = gpu().query(b.g, b.g.ops[0]);
  BOOST_TEST(!s.supported);
  BOOST_TEST(s.reason.find("9 labels") != std::string::npos, s.reason);
  // 2^64 terms (every dim 256) once wrapped to 0 and passed; one output element summing 2^22
  // terms would run in a single invocation.
  for (const auto& [eq, ins, want] : std::vector<std::tuple<std::string, std::vector<Shape>, std::string>>{
           {"abc,def,gh->", {{256, 256, 256}, {256, 256, 256}, {256, 256}}, "more than 2^32"},
           {"ij->", {{2048, 2048}}, "sums 4194304 terms"}}) {
    graph_builder lb;
    std::vector<graph::ValueId> in;
    const char* names[] = {"x0", "x1", "x2"};
    for (std::size_t k = 0; k < ins.size(); ++k) in.push_back(lb.input(names[k], ins[k]));
    one_op(lb, "Einsum", in, {Shape{}}, {{"equation", eq}});
    auto r = gpu().query(lb.g, lb.g.ops[0]);
    BOOST_TEST(!r.supported, eq);
    BOOST_TEST(r.reason.find(want) != std::string::npos, eq << ": " << r.reason);
  }
}

BOOST_AUTO_TEST_CASE(gelu_both_approximations) {
  check_against_reference(unary("Gelu"), -5, 5);
  check_against_reference(unary("Gelu", {{"approximate", std::string("none")}}), -5, 5);
  check_against_reference(unary("Gelu", {{"approximate", std::string("tanh")}}), -5, 5);
  check_against_reference(unary("Gelu", {{"approximate", std::string("tanh")}}), -30, 30); // tanh saturates
  {
    f16_checks mode;
    check_against_reference(unary("Gelu"), -5, 5);
    check_against_reference(unary("Gelu", {{"approximate", std::string("tanh")}}), -5, 5);
  }
  auto g = unary("Gelu", {{"approximate", std::string("fast")}});
  auto s = gpu().query(g, g.ops[0]);
  BOOST_TEST(!s.supported);
  BOOST_TEST(s.reason.find("approximate 'fast'") != std::string::npos, s.reason);
}

BOOST_AUTO_TEST_CASE(index_ops_in_f16_storage) {
  f16_checks mode;
  {
    graph_builder b;
    check_against_reference(one_op(b, "Pad", {b.input("x", {2, 3, 5}), b.ints("p", {0, 2, 3, 1, 1, 2})}, {{3, 6, 10}},
                                   {{"mode", std::string("reflect")}}));
  }
  {
    graph_builder b;
    check_against_reference(one_op(b, "Pad", {b.input("x", {2, 3}), b.ints("p", {1, 1, 1, 1})}, {{4, 5}}));
  }
  { // a run-time constant_value, stored as a half like the data
    graph_builder b;
    check_against_reference(one_op(b, "Pad", {b.input("x", {2, 3}), b.ints("p", {1, 0, 1, 2}), b.input("v", {})}, {{4, 5}}));
  }
  {
    graph_builder b;
    check_against_reference(one_op(b, "CumSum", {b.input("x", {3, 6, 4}), b.ints("axis", {-2})}, {{3, 6, 4}}, {{"reverse", int64_t(1)}}));
  }
  { // distinct values exact in f16: the same order as in f32
    graph_builder b;
    auto g = one_op(b, "TopK", {b.input("x", {3, 8}), b.ints("k", {3})}, {{3, 3}, {3, 3}}, {}, {element_type::f32, element_type::i64});
    Tensor x(element_type::f32, {3, 8});
    for (int64_t i = 0; i < 24; ++i) x.data<float>()[i] = static_cast<float>((i * 7) % 24) / 8.0f;
    compare_with_reference(g, {x}, 1e-2f, false);
  }
  {
    graph_builder b;
    auto g = one_op(b, "ScatterND", {b.input("x", {4, 3}), b.input("i", {2, 1}, element_type::i64), b.input("u", {2, 3})}, {{4, 3}},
                    {{"reduction", std::string("add")}});
    compare_with_reference(g, {random_tensor({4, 3}, 1), ints_of<int64_t>({2, 1}, {3, 3}), random_tensor({2, 3}, 2)}, 1e-2f, false);
  }
  {
    graph_builder b;
    auto g = one_op(b, "ScatterElements", {b.input("x", {4, 3}), b.input("i", {2, 3}, element_type::i32), b.input("u", {2, 3})}, {{4, 3}});
    compare_with_reference(g, {random_tensor({4, 3}, 1), ints_of<int32_t>({2, 3}, {3, 0, 1, -1, 2, 0}), random_tensor({2, 3}, 2)}, 1e-2f, false);
  }
  {
    graph_builder b;
    auto g = one_op(b, "GatherND", {b.input("x", {4, 3}), b.input("i", {2, 2}, element_type::i64)}, {{2}});
    compare_with_reference(g, {random_tensor({4, 3}, 1), ints_of<int64_t>({2, 2}, {3, 2, -1, 0})}, 1e-2f, false);
  }
  {
    using V = std::vector<int64_t>;
    check_against_reference(conv({1, 4, 9}, {6, 4, 3}, {1, 6, 9}, {{"pads", V{1, 1}}}, true));
  }
}

BOOST_AUTO_TEST_CASE(layer_normalization) {
  for (int64_t axis : {-1, 1}) {
    graph_builder b;
    auto x = b.input("x", {2, 3, 7});
    const Shape norm = axis == -1 ? Shape{7} : Shape{3, 7};
    b.op("LayerNormalization", {x, b.random_constant("scale", norm), b.random_constant("bias", norm)}, {{2, 3, 7}},
         {{"axis", axis}, {"epsilon", 1e-3f}});
    b.outputs_of_last();
    check_against_reference(b.g, -5, 5);
  }
  graph_builder b; // no bias; Mean and InvStdDev outputs
  auto x = b.input("x", {4, 9});
  b.op("LayerNormalization", {x, b.random_constant("scale", {9})}, {{4, 9}, {4, 1}, {4, 1}});
  b.outputs_of_last();
  check_against_reference(b.g, -5, 5);
}

BOOST_AUTO_TEST_CASE(arg_reduce_hardmax_and_trilu) {
  for (const char* type : {"ArgMax", "ArgMin"})
    for (int64_t keep : {0, 1})
      for (int64_t last : {0, 1}) {
        graph_builder b;
        auto x = b.input("x", {2, 5, 3});
        auto& op = b.op(type, {x}, {{keep ? Shape{2, 1, 3} : Shape{2, 3}}},
                        {{"axis", int64_t(1)}, {"keepdims", keep}, {"select_last_index", last}});
        b.g.value(op.outputs[0]).type = element_type::i64;
        b.outputs_of_last();
        check_against_reference(b.g, -2, 2);
      }
  for (int64_t axis : {-1, 0}) {
    graph_builder b;
    auto x = b.input("x", {4, 6});
    b.op("Hardmax", {x}, {{4, 6}}, {{"axis", axis}});
    b.outputs_of_last();
    check_against_reference(b.g, -2, 2);
  }
  for (int64_t upper : {0, 1})
    for (int64_t k : {-2, 0, 3}) {
      graph_builder b;
      auto x = b.input("x", {2, 4, 5});
      b.op("Trilu", {x, b.ints("k", {k})}, {{2, 4, 5}}, {{"upper", upper}});
      b.outputs_of_last();
      check_against_reference(b.g);
    }
  { // an int64 matrix: the word-moving variant
    graph_builder b;
    // k a run-time input too: read from its buffer, clamped as the host clamps a constant.
    auto& op = b.op("Trilu", {b.input("m", {6, 2}, element_type::i64), b.input("k", {}, element_type::i64)}, {{6, 2}},
                    {{"upper", int64_t(0)}});
    b.g.value(op.outputs[0]).type = element_type::i64;
    b.outputs_of_last();
    Tensor m(element_type::i64, {6, 2});
    for (int64_t i = 0; i < 12; ++i) m.data<int64_t>()[i] = (i - 6) * 1000000007LL;
    auto exe = gpu().compile(b.g, {});
    for (int64_t kv : {int64_t(-1), int64_t(0), int64_t(2), int64_t(-4), int64_t(-5000000000LL), int64_t(5000000000LL),
                       int64_t(-4294967296LL + 5)}) {
      Tensor k(element_type::i64, Shape{});
      k.data<int64_t>()[0] = kv;
      std::vector<Tensor> got;
      exe->run({m, k}, got);
      const auto want = reference_run(b.g, {m, k});
      BOOST_TEST(std::memcmp(got.at(0).data(), want.at(0).data(), want.at(0).get_byte_size()) == 0, "k = " << kv);
    }
  }
}

BOOST_AUTO_TEST_CASE(softmax_and_reduce) {
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 7});
    b.op("Softmax", {x}, {{2, 3, 7}}, {{"axis", int64_t(-1)}});
    b.outputs_of_last();
    check_against_reference(b.g, -5, 5);
  }
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 7});
    b.op("Softmax", {x}, {{2, 3, 7}}, {{"axis", int64_t(1)}});
    b.outputs_of_last();
    check_against_reference(b.g, -5, 5);
  }
  {
    graph_builder b;
    auto x = b.input("x", {2, 3, 7});
    b.op("LogSoftmax", {x}, {{2, 3, 7}}, {{"axis", int64_t(2)}});
    b.outputs_of_last();
    check_against_reference(b.g, -5, 5);
  }
  for (const char* t : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceL1", "ReduceProd",
                        "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    const float lo = std::string(t) == "ReduceLogSum" ? 0.1f : -1.0f; // a log of a positive sum
    graph_builder b;
    auto x = b.input("x", {2, 3, 4, 5});
    b.op(t, {x}, {{2, 1, 4, 1}}, {{"axes", std::vector<int64_t>{1, 3}}, {"keepdims", int64_t(1)}});
    b.outputs_of_last();
    check_against_reference(b.g, lo, 1);
    graph_builder c;
    auto y = c.input("x", {2, 3, 4, 5});
    c.op(t, {y}, {{2, 3, 4}}, {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t(0)}});
    c.outputs_of_last();
    check_against_reference(c.g, lo, 1);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(executables)

BOOST_AUTO_TEST_CASE(multi_op_subgraph_in_one_command_buffer) {
  // Conv+Relu -> GlobalAveragePool -> Reshape -> Gemm -> Softmax, plus a side output.
  graph_builder b;
  auto x = b.input("x", {1, 3, 16, 16});
  auto& c = b.op("Conv", {x, b.random_constant("w", {8, 3, 3, 3}), b.random_constant("cb", {8})}, {{1, 8, 16, 16}},
                 {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"activation", std::string("Relu")}});
  auto conv_out = c.outputs[0];
  auto gap = b.op("GlobalAveragePool", {conv_out}, {{1, 8, 1, 1}}).outputs[0];
  auto flat = b.op("Reshape", {gap, b.ints("s", {1, 8})}, {{1, 8}}).outputs[0];
  auto fc = b.op("Gemm", {flat, b.random_constant("fw", {8, 5}), b.random_constant("fb", {5})}, {{1, 5}}).outputs[0];
  auto sm = b.op("Softmax", {fc}, {{1, 5}}, {{"axis", int64_t(-1)}}).outputs[0];
  b.output(sm);
  b.output(conv_out);
  check_against_reference(b.g);

  kernels::compile_config cfg;
  cfg.profiling = true;
  auto exe = gpu().compile(b.g, cfg);
  auto inputs = random_inputs(b.g, -1, 1);
  std::vector<Tensor> out1, out2;
  exe->run(inputs, out1);
  auto clone = exe->clone();
  clone->run(inputs, out2);
  BOOST_TEST_REQUIRE(out1.size() == 2u);
  for (int64_t i = 0; i < out1[0].get_size(); ++i) BOOST_TEST(out1[0].data<float>()[i] == out2[0].data<float>()[i]);
  auto prof = exe->profile();
  BOOST_TEST_REQUIRE(prof.size() == b.g.ops.size() + 2);
  BOOST_TEST(prof.front().node_type == "Upload");
  BOOST_TEST(prof.back().node_type == "Download");
  int executed = 0, optimized = 0;
  for (auto& r : prof) {
    if (r.state == kernels::op_profile::status::optimized_out) ++optimized;
    else ++executed;
  }
  BOOST_TEST(optimized == 1); // the Reshape aliases its input
  BOOST_TEST(executed == 6);
  BOOST_TEST(prof[1].exec_type == "vulkan:conv_row_oc8"); // stride 1, rows of whole texels
}

BOOST_AUTO_TEST_CASE(wrong_input_is_a_named_error) {
  auto g = unary("Relu");
  auto exe = gpu().compile(g, {});
  std::vector<Tensor> out;
  BOOST_CHECK_EXCEPTION(exe->run({Tensor(element_type::f32, {1, 2})}, out), Exception,
                        [](const Exception& e) { return std::string(e.what()).find("'x'") != std::string::npos; });
}

BOOST_AUTO_TEST_CASE(query_says_why_unsupported) {
  graph_builder b;
  auto x = b.input("x", {1, 4, 8});
  b.op("NonMaxSuppression", {x}, {{1, 3}});
  b.op("Conv", {b.input("x3", {1, 4, 5, 5, 5, 5}), b.random_constant("w", {2, 4, 3, 3, 3, 3})}, {{1, 2, 3, 3, 3, 3}}); // 4-D convolution
  b.op("Resize", {x, graph::no_value, graph::no_value, b.ints("sizes", {1, 4, 16})}, {{1, 4, 16}}, {{"mode", std::string("cubic")}});
  auto s0 = gpu().query(b.g, b.g.ops[0]);
  BOOST_TEST(!s0.supported);
  BOOST_TEST(s0.reason.find("NonMaxSuppression") != std::string::npos, s0.reason);
  auto s1 = gpu().query(b.g, b.g.ops[1]);
  BOOST_TEST(!s1.supported);
  BOOST_TEST(s1.reason.find("2-D") != std::string::npos, s1.reason);
  auto s2 = gpu().query(b.g, b.g.ops[2]);
  BOOST_TEST(!s2.supported);
  BOOST_TEST(!s2.reason.empty());
  graph_builder c;
  // An element type no shader has (i64 Relu runs on the typed shader since 2026-11-25).
  auto i = c.input("i", {4}, element_type::f64);
  auto& op = c.op("Relu", {i}, {{4}});
  c.g.value(op.outputs[0]).type = element_type::f64;
  auto s3 = gpu().query(c.g, c.g.ops[0]);
  BOOST_TEST(!s3.supported);
  BOOST_TEST(s3.reason.find("f64") != std::string::npos, s3.reason);
  BOOST_CHECK_THROW(gpu().compile(b.g, {}), Exception);
}

BOOST_AUTO_TEST_CASE(tensor_larger_than_the_device_allows) {
  auto& dev = dynamic_cast<kv::vulkan_device&>(gpu());
  auto before_bytes = dev.context().device_memory().bytes_in_use();
  auto before_blocks = dev.context().device_memory().block_count();
  graph_builder b;
  auto x = b.input("x", {1, 64, 1024, 1024}); // 256 MiB: above lavapipe's 128 MiB storage-buffer range
  b.op("Relu", {x}, {{1, 64, 1024, 1024}});
  b.outputs_of_last();
  auto s = dev.query(b.g, b.g.ops[0]);
  BOOST_TEST(!s.supported);
  BOOST_TEST(s.reason.find("larger") != std::string::npos, s.reason);
  BOOST_CHECK_EXCEPTION(dev.compile(b.g, {}), Exception, [](const Exception& e) {
    BOOST_TEST_MESSAGE(e.what());
    return std::string(e.what()).find("'x'") != std::string::npos;
  });
  BOOST_TEST(dev.context().device_memory().bytes_in_use() == before_bytes);
  BOOST_TEST(dev.context().device_memory().block_count() == before_blocks);
  // Sizes count as stored: 192 MiB of float32 is 96 MiB in f16 storage, which fits.
  graph_builder h;
  auto hx = h.input("x", {1, 48, 1024, 1024});
  h.op("Relu", {hx}, {{1, 48, 1024, 1024}});
  h.outputs_of_last();
  BOOST_CHECK_THROW(dev.compile(h.g, {}), Exception);
  if (dev.context().facts().fp16) {
    kernels::compile_config f16;
    f16.inference_precision = element_type::f16;
    BOOST_CHECK_NO_THROW(dev.compile(h.g, f16));
  }
  BOOST_TEST(dev.context().device_memory().bytes_in_use() == before_bytes);
}

/// Runs `g` on `exe` with inputs from `seed` and compares with the reference.
bool matches_reference(kernels::executable& exe, const graph::Graph& g, unsigned seed) {
  std::vector<Tensor> inputs;
  for (auto v : g.inputs) inputs.push_back(random_tensor(g.value(v).shape.to_shape(), seed++));
  std::vector<Tensor> got;
  exe.run(inputs, got);
  auto want = reference_run(g, inputs);
  for (int64_t i = 0; i < want[0].get_size(); ++i)
    if (std::abs(got[0].data<float>()[i] - want[0].data<float>()[i]) > 1e-4f * (1 + std::abs(want[0].data<float>()[i])))
      return false;
  return true;
}

BOOST_AUTO_TEST_CASE(a_lost_device_fails_the_request_and_the_next_one_runs) {
  auto& dev = dynamic_cast<kv::vulkan_device&>(gpu());
  auto g = conv({1, 8, 9, 11}, {16, 8, 3, 3}, {1, 16, 9, 11}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, true);
  auto exe = dev.compile(g, {});
  BOOST_TEST_REQUIRE(matches_reference(*exe, g, 1));
  struct unhook {
    kv::gpu_context& c;
    ~unhook() { c.set_submit_hook({}); }
  } guard{dev.context()};
  // 1: the submit fails before anything runs.
  int calls = 0;
  dev.context().set_submit_hook([&](VkQueue, const VkSubmitInfo&, VkFence) {
    ++calls;
    return VK_ERROR_DEVICE_LOST;
  });
  std::vector<Tensor> out;
  BOOST_CHECK_EXCEPTION(exe->run({random_tensor({1, 8, 9, 11}, 2)}, out), kernels::device_error,
                        [](const kernels::device_error& e) {
                          BOOST_TEST_MESSAGE(e.what());
                          std::string m = e.what();
                          // The kind a scheduler reads: the device is gone, not the input at fault.
                          return e.kind() == kernels::failure_kind::device_lost &&
                                 m.find("VK_ERROR_DEVICE_LOST") != std::string::npos &&
                                 m.find("lost") != std::string::npos && m.find(gpu().name()) != std::string::npos;
                        });
  BOOST_TEST(calls == 1);
  dev.context().set_submit_hook({});
  BOOST_TEST(matches_reference(*exe, g, 3));
  // 2: the work was submitted (the fence will signal) and the driver still reports a loss:
  // the executable must wait and unsignal its fence before the next request.
  VkFence fence = VK_NULL_HANDLE;
  dev.context().set_submit_hook([&](VkQueue q, const VkSubmitInfo& si, VkFence f) {
    ++calls;
    fence = f;
    VkResult r = vkQueueSubmit(q, 1, &si, f);
    return r == VK_SUCCESS ? VK_ERROR_DEVICE_LOST : r;
  });
  BOOST_CHECK_THROW(exe->run({random_tensor({1, 8, 9, 11}, 4)}, out), Exception);
  BOOST_TEST(calls == 2);
  // Vulkan forbids submitting with a signaled fence (lavapipe lets it pass): the failed request
  // must have waited for its work and unsignaled the fence.
  BOOST_TEST_REQUIRE(fence != VK_NULL_HANDLE);
  BOOST_TEST(vkGetFenceStatus(dev.context().device(), fence) == VK_NOT_READY);
  dev.context().set_submit_hook({});
  // Fresh inputs each time: a stale fence would hand back the failed request's output.
  for (unsigned i = 0; i < 3; ++i) BOOST_TEST(matches_reference(*exe, g, 10 + i));
  // A clone and a fresh compile work too.
  BOOST_TEST(matches_reference(*exe->clone(), g, 20));
  BOOST_TEST(matches_reference(*dev.compile(g, {}), g, 21));
}

BOOST_AUTO_TEST_CASE(a_shader_that_fails_to_load_is_named) {
  auto& ctx = dynamic_cast<kv::vulkan_device&>(gpu()).context();
  auto expect = [&](const std::vector<uint32_t>& words, const std::string& piece) {
    BOOST_CHECK_EXCEPTION(ctx.load_shader("broken_test_shader", words.data(), words.size()), Exception,
                          [&](const Exception& e) {
                            BOOST_TEST_MESSAGE(e.what());
                            std::string m = e.what();
                            return m.find("'broken_test_shader'") != std::string::npos &&
                                   m.find(ctx.facts().name) != std::string::npos && m.find(piece) != std::string::npos;
                          });
  };
  expect({0xdeadbeef, 1, 2, 3, 4, 5, 6, 7}, "not SPIR-V");
  expect({0x07230203, 0x10000}, "shorter than a SPIR-V header");
  // A real module, cut in the middle of an instruction.
  const auto& blobs = kv::spirv_blobs();
  BOOST_TEST_REQUIRE(!blobs.empty());
  std::vector<uint32_t> cut(blobs.front().words, blobs.front().words + blobs.front().count);
  std::size_t at = 5;
  while (at + (cut[at] >> 16) < cut.size() / 2) at += cut[at] >> 16;
  cut.resize(at + 1);
  cut[at] |= 0xff0000u; // its length now runs past the end
  expect(cut, "truncated or corrupt");
  // Every embedded shader passes the same checks.
  for (const auto& b : blobs) BOOST_CHECK_NO_THROW(ctx.load_shader(std::string("reloaded_") + b.name, b.words, b.count));
}

BOOST_AUTO_TEST_CASE(memory_returns_to_the_pool) {
  auto& dev = dynamic_cast<kv::vulkan_device&>(gpu());
  auto before = dev.context().device_memory().bytes_in_use();
  {
    auto exe = gpu().compile(conv({1, 8, 9, 11}, {16, 8, 3, 3}, {1, 16, 9, 11}, {}, true), {});
    BOOST_TEST(dev.context().device_memory().bytes_in_use() > before);
  }
  BOOST_TEST(dev.context().device_memory().bytes_in_use() == before);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- attention as one dispatch (kernels/vulkan/lower_attention.cpp) ----------------------------

namespace {

/// What the block builder puts between the pieces of MatMul -> Softmax -> MatMul.
struct attention_shape {
  Shape batch{1, 8};
  int64_t m = 40, n = 40, d = 15, dv = 15;
  bool q_scale = true;        ///< Mul(q, 1/sqrt(d)) before the first MatMul (PP-OCR rec)
  bool k_transpose = true;    ///< K given as [.., N, D] through a Transpose (PP-OCR rec)
  bool score_div = false;     ///< Div(scores, sqrt(d)) between MatMul and Softmax
  int64_t softmax_axis = -1;
  bool scores_out = false;    ///< the scores also a graph output: another reader, no fusion
  bool v_after_head = false;  ///< V produced (by a Mul) after the first MatMul in op order
};

Shape with_batch(const Shape& b, std::initializer_list<int64_t> tail) {
  Shape s = b;
  s.insert(s.end(), tail);
  return s;
}

graph::Graph attention_block(const attention_shape& a) {
  graph_builder gb;
  auto q = gb.input("q", with_batch(a.batch, {a.m, a.d}));
  auto k = gb.input("k", a.k_transpose ? with_batch(a.batch, {a.n, a.d}) : with_batch(a.batch, {a.d, a.n}));
  auto v = gb.input("v", with_batch(a.batch, {a.n, a.dv}));
  auto scalar = [&](const char* name, float f) {
    Tensor t(element_type::f32, {1});
    t.data<float>()[0] = f;
    return gb.constant(name, t);
  };
  if (a.q_scale) q = gb.op("Mul", {q, scalar("qscale", 1.0f / std::sqrt(float(a.d)))}, {with_batch(a.batch, {a.m, a.d})}).outputs[0];
  if (a.k_transpose) {
    std::vector<int64_t> perm;
    for (std::size_t i = 0; i < a.batch.size(); ++i) perm.push_back(static_cast<int64_t>(i));
    perm.push_back(static_cast<int64_t>(a.batch.size()) + 1);
    perm.push_back(static_cast<int64_t>(a.batch.size()));
    k = gb.op("Transpose", {k}, {with_batch(a.batch, {a.d, a.n})}, {{"perm", perm}}).outputs[0];
  }
  Shape ss = with_batch(a.batch, {a.m, a.n});
  auto s = gb.op("MatMul", {q, k}, {ss}).outputs[0];
  auto scores = s;
  if (a.v_after_head) v = gb.op("Mul", {v, scalar("vscale", 0.5f)}, {with_batch(a.batch, {a.n, a.dv})}).outputs[0];
  if (a.score_div) s = gb.op("Div", {s, scalar("sdiv", std::sqrt(float(a.d)))}, {ss}).outputs[0];
  auto p = gb.op("Softmax", {s}, {ss}, {{"axis", a.softmax_axis}}).outputs[0];
  gb.output(gb.op("MatMul", {p, v}, {with_batch(a.batch, {a.m, a.dv})}).outputs[0]);
  if (a.scores_out) gb.output(scores);
  return gb.g;
}

/// Profiling rows of the graph's ops (upload/download left out) after one run.
std::vector<kernels::op_profile> op_rows(const graph::Graph& g) {
  kernels::compile_config cfg = check_cfg;
  cfg.profiling = true;
  auto exe = gpu().compile(g, cfg);
  std::vector<Tensor> out;
  exe->run(random_inputs(g, -1, 1), out);
  auto prof = exe->profile();
  BOOST_TEST_REQUIRE(prof.size() == g.ops.size() + 2);
  return std::vector<kernels::op_profile>(prof.begin() + 1, prof.end() - 1);
}

/// How many ops ran a dispatch of their own, and whether one of them ran the fused shader.
std::pair<int, bool> dispatch_summary(const graph::Graph& g) {
  int executed = 0;
  bool fused = false;
  for (const auto& r : op_rows(g)) {
    if (r.state == kernels::op_profile::status::executed) ++executed;
    if (r.exec_type.find("vulkan:attention") == 0) fused = true;
  }
  return {executed, fused};
}

} // namespace

BOOST_AUTO_TEST_SUITE(attention_fusion)

BOOST_AUTO_TEST_CASE(ppocr_rec_block_is_one_dispatch) {
  // The real pattern: Mul(q, scale), Transpose(k), MatMul, Softmax(axis 3), MatMul; 8 heads.
  attention_shape a;
  a.softmax_axis = 3;
  auto g = attention_block(a);
  check_against_reference(g);
  auto rows = op_rows(g);
  int executed = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].state != kernels::op_profile::status::executed) continue;
    ++executed;
    BOOST_TEST(g.ops[i].type == "MatMul");
    BOOST_TEST(rows[i].exec_type == "vulkan:attention");
    BOOST_TEST(rows[i].node_name == g.ops[2].name, "the fused dispatch is recorded on the first MatMul");
  }
  BOOST_TEST(executed == 1, "Mul, Transpose, Softmax and the second MatMul are optimized out");
}

BOOST_AUTO_TEST_CASE(variants_match_the_reference) {
  attention_shape a;
  // K^T given directly, the scale on the scores, odd sizes, a rank-3 batch.
  a.batch = {3};
  a.m = 7;
  a.n = 13;
  a.d = 5;
  a.dv = 9;
  a.q_scale = false;
  a.k_transpose = false;
  a.score_div = true;
  check_against_reference(attention_block(a));
  BOOST_TEST((dispatch_summary(attention_block(a)) == std::pair<int, bool>{1, true}));
  // Both scales, two batch dims, one key, no batch dims at all.
  a = {};
  a.batch = {2, 3};
  a.n = 1;
  a.score_div = true;
  check_against_reference(attention_block(a));
  a = {};
  a.batch = {};
  a.m = 33;
  a.n = 70;
  a.d = 64;
  a.dv = 3;
  check_against_reference(attention_block(a), -2, 2);
  BOOST_TEST((dispatch_summary(attention_block(a)) == std::pair<int, bool>{1, true}));
  // V computed after the first MatMul: the dispatch waits for it (recorded on the last MatMul).
  a = {};
  a.v_after_head = true;
  check_against_reference(attention_block(a));
  BOOST_TEST((dispatch_summary(attention_block(a)) == std::pair<int, bool>{2, true}), "the Mul on v and the block");
}

BOOST_AUTO_TEST_CASE(scores_with_another_reader_are_not_fused) {
  attention_shape a;
  a.scores_out = true; // the scores are a graph output as well
  auto g = attention_block(a);
  check_against_reference(g);
  auto [executed, fused] = dispatch_summary(g);
  BOOST_TEST(!fused);
  BOOST_TEST(executed == 5, "Mul, Transpose, MatMul, Softmax, MatMul each dispatch");
}

BOOST_AUTO_TEST_CASE(softmax_over_another_axis_is_not_fused) {
  attention_shape a;
  a.softmax_axis = 2;
  auto g = attention_block(a);
  check_against_reference(g);
  BOOST_TEST(!dispatch_summary(g).second);
}

BOOST_AUTO_TEST_CASE(transpose_with_another_reader_stays) {
  // The Transpose of K is also a graph output: the block fuses from the transposed K instead.
  attention_shape a;
  auto g = attention_block(a);
  g.outputs.push_back(g.ops[1].outputs[0]);
  check_against_reference(g);
  auto [executed, fused] = dispatch_summary(g);
  BOOST_TEST(fused);
  BOOST_TEST(executed == 2, "the Transpose and the block");
}

BOOST_AUTO_TEST_CASE(f16_storage) {
  f16_checks mode;
  attention_shape a;
  check_against_reference(attention_block(a));
  BOOST_TEST(dispatch_summary(attention_block(a)).second);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(post_affine_fusion)

namespace {

graph::ValueId scalar_constant(graph_builder& gb, const std::string& name, float f) {
  Tensor t(element_type::f32, {1});
  t.data<float>()[0] = f;
  return gb.constant(name, t);
}

/// Conv (fused HardSwish) -> the ops of `chain` ("Mul", "Add", "Sub", "Div"; "rMul" etc. put the
/// constant first) by scalar constants; `extra_reader`: the conv output is a graph output too.
graph::Graph conv_chain(const std::string& conv_type, const std::vector<std::string>& chain, bool extra_reader = false) {
  graph_builder gb;
  Shape y = conv_type == "Conv" ? Shape{1, 8, 6, 6} : Shape{1, 8, 12, 12};
  auto x = gb.input("x", {1, 4, 6, 6});
  graph::ValueId w = conv_type == "Conv" ? gb.random_constant("w", {8, 4, 3, 3}) : gb.random_constant("w", {4, 8, 2, 2});
  std::map<std::string, graph::AttributeValue> attrs{{"activation", std::string("HardSwish")}};
  if (conv_type == "Conv") attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  else attrs["strides"] = std::vector<int64_t>{2, 2};
  auto v = gb.op(conv_type, {x, w, gb.random_constant("b", {8})}, {y}, attrs).outputs[0];
  if (extra_reader) gb.output(v);
  float k = 0.75f;
  for (const auto& s : chain) {
    bool rev = s[0] == 'r';
    std::string name = "c";
    name += std::to_string(gb.g.ops.size());
    auto c = scalar_constant(gb, name, k);
    k += 0.5f;
    v = gb.op(rev ? s.substr(1) : s, rev ? std::vector<graph::ValueId>{c, v} : std::vector<graph::ValueId>{v, c}, {y}).outputs[0];
  }
  gb.output(v);
  return gb.g;
}

/// (ops that ran a dispatch, exec types of those).
std::pair<int, std::string> executed(const graph::Graph& g) {
  int n = 0;
  std::string types;
  for (const auto& r : op_rows(g))
    if (r.state == kernels::op_profile::status::executed) {
      ++n;
      if (!types.empty()) types += ' ';
      types += r.exec_type;
    }
  return {n, types};
}

} // namespace

BOOST_AUTO_TEST_CASE(scale_and_shift_after_a_conv_are_its_store) {
  // PP-OCRv4's learnable affine block after HardSwish: one dispatch, on every conv path
  for (const char* conv : {"Conv", "ConvTranspose"}) {
    auto g = conv_chain(conv, {"Mul", "Add"});
    check_against_reference(g, -1, 1, 1e-4f);
    BOOST_TEST(executed(g).first == 1, conv << ": Mul and Add are optimized out");
  }
  auto g = conv_chain("Conv", {"rMul", "Sub", "Div", "rAdd"});
  check_against_reference(g, -1, 1, 1e-4f);
  BOOST_TEST(executed(g).first == 1);
}

BOOST_AUTO_TEST_CASE(what_is_not_affine_in_the_conv_keeps_its_dispatch) {
  // c - x and c / x end the chain; the ops before them still fold
  auto g1 = conv_chain("Conv", {"Mul", "rSub", "Add"});
  check_against_reference(g1, -1, 1, 1e-4f);
  BOOST_TEST(executed(g1).first == 3);
  auto g2 = conv_chain("Conv", {"rDiv"});
  check_against_reference(g2, -1, 1, 1e-4f);
  BOOST_TEST(executed(g2).first == 2);
  // the conv output is read twice (a graph output too): nothing folds
  auto g3 = conv_chain("Conv", {"Mul", "Add"}, true);
  check_against_reference(g3, -1, 1, 1e-4f);
  BOOST_TEST(executed(g3).first == 3);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- CACHE_DIR's file --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(pipeline_cache_file_round_trips_and_rejects_what_it_must) {
  kv::cache_identity id{0x10005, 0x1234, {}};
  for (int i = 0; i < 16; ++i) id.uuid[static_cast<std::size_t>(i)] = static_cast<uint8_t>(i * 7);
  // A Vulkan blob: VkPipelineCacheHeaderVersionOne (32 bytes), then the driver's data.
  std::vector<uint8_t> blob(32 + 100);
  const uint32_t head[4] = {32, VK_PIPELINE_CACHE_HEADER_VERSION_ONE, id.vendor_id, id.device_id};
  std::memcpy(blob.data(), head, sizeof head);
  std::memcpy(blob.data() + 16, id.uuid.data(), 16);
  for (std::size_t i = 32; i < blob.size(); ++i) blob[i] = static_cast<uint8_t>(i);

  const fs::path dir = fs::temp_directory_path() / ("troupe_vk_cache_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = kv::cache_file_path(dir.string(), id);
  BOOST_TEST(path.find("troupe-vulkan-10005-1234-00070e") != std::string::npos, path);
  std::string why;
  BOOST_TEST(!kv::read_cache_file(path, id, why));
  BOOST_TEST(why.find("no cache file") != std::string::npos, why);

  kv::write_cache_file(path, blob);
  auto back = kv::read_cache_file(path, id, why);
  BOOST_TEST_REQUIRE(back.has_value(), why);
  BOOST_TEST(*back == blob);
  BOOST_TEST(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1, "no temporary file left");

  auto with = [&](const std::vector<uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    std::string w;
    BOOST_TEST(!kv::read_cache_file(path, id, w));
    return w;
  };
  const auto good = kv::wrap_cache_blob(blob);
  BOOST_TEST(with({good.begin(), good.end() - 1}).find("truncated") != std::string::npos);
  auto flipped = good;
  flipped.back() ^= 1;
  BOOST_TEST(with(flipped).find("checksum") != std::string::npos);
  auto version = good;
  version[8] = 99;
  BOOST_TEST(with(version).find("cache format 99") != std::string::npos);
  BOOST_TEST(with({'h', 'e', 'l', 'l', 'o'}).find("not a troupe pipeline cache") != std::string::npos);
  auto other = blob;
  other[20] ^= 1; // another pipelineCacheUUID: another driver build
  BOOST_TEST(with(kv::wrap_cache_blob(other)).find("another device or driver") != std::string::npos);
  auto headless = blob;
  headless[4] = 7; // not VK_PIPELINE_CACHE_HEADER_VERSION_ONE
  BOOST_TEST(with(kv::wrap_cache_blob(headless)).find("no Vulkan pipeline cache header") != std::string::npos);

  BOOST_CHECK_EXCEPTION(kv::write_cache_file((dir / "no" / "such" / "f.cache").string(), blob), Exception,
                        [](const Exception& e) {
                          return std::string(e.what()).find("cannot write the GPU pipeline cache") != std::string::npos;
                        });
  fs::remove_all(dir);
}

// ---- typed element-wise ops (shaders/eltwise_typed.comp) ----------------------------------

namespace {

bool is_unsigned_type(element_type t) {
  return t == element_type::u8 || t == element_type::u16 || t == element_type::u32 || t == element_type::u64 ||
         t == element_type::boolean;
}

/// Values of `t` in [lo, hi] (floats on a 1/8 grid, exact in f16; unsigned types from 0; bool
/// 0 or 1), never 0 with `nonzero`. With `wide`, u32/u64 values get their top bit set at random
/// and i32/i64 ones are scaled out of the 16/32-bit range, so that signed or narrow arithmetic
/// on them shows.
Tensor typed_tensor(element_type t, const Shape& s, unsigned seed, int lo, int hi, bool nonzero = false, bool wide = false) {
  std::mt19937 rng(seed);
  if (is_unsigned_type(t)) lo = std::max(lo, 0);
  if (t == element_type::boolean) hi = std::min(hi, 1);
  hi = std::max(hi, lo);
  const bool fl = t == element_type::f32 || t == element_type::f16;
  std::uniform_int_distribution<int> d(fl ? lo * 8 : lo, fl ? hi * 8 : hi);
  Tensor x(t, s);
  auto* p = static_cast<uint8_t*>(x.data());
  for (int64_t i = 0; i < x.get_size(); ++i) {
    int v = d(rng);
    while (nonzero && v == 0) v = d(rng);
    const bool top = wide && (rng() & 1);
    auto put = [&](auto value) { std::memcpy(p + static_cast<std::size_t>(i) * sizeof value, &value, sizeof value); };
    switch (t) {
    case element_type::f32: put(static_cast<float>(v) / 8); break;
    case element_type::f16: put(float_to_half_bits(static_cast<float>(v) / 8)); break;
    case element_type::i8: put(static_cast<int8_t>(v)); break;
    case element_type::u8: put(static_cast<uint8_t>(v)); break;
    case element_type::boolean: put(static_cast<uint8_t>(v != 0)); break;
    case element_type::i16: put(static_cast<int16_t>(v)); break;
    case element_type::u16: put(static_cast<uint16_t>(v)); break;
    case element_type::i32: put(static_cast<int32_t>(wide ? int64_t{v} * 40000019 : v)); break;
    case element_type::u32: put(static_cast<uint32_t>(v) | (top ? 0x80000000u : 0u)); break;
    case element_type::i64: put(static_cast<int64_t>(wide ? v * 1000000000007LL : v)); break;
    case element_type::u64: put(static_cast<uint64_t>(v) | (top ? uint64_t{1} << 63 : 0)); break;
    default: BOOST_FAIL("no values for " << to_string(t));
    }
  }
  return x;
}

/// One op on graph inputs (or, where `constants` holds a tensor, a constant), its output of
/// type `out` and shape `out_shape`.
graph::Graph typed_op(const std::string& type, const std::vector<Tensor>& in, element_type out, const Shape& out_shape,
                      std::map<std::string, graph::AttributeValue> attrs = {}, std::vector<bool> constant = {}) {
  graph_builder b;
  std::vector<graph::ValueId> ids;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    ids.push_back(i < constant.size() && constant[i] ? b.constant(name, in[i])
                                                     : b.input(name, in[i].get_shape(), in[i].get_element_type()));
  }
  auto& o = b.op(type, ids, {out_shape}, std::move(attrs));
  b.g.values[static_cast<std::size_t>(o.outputs[0])].type = out;
  b.outputs_of_last();
  return b.g;
}

/// Runs typed_op on the GPU and the reference: integer and bool outputs byte for byte, float ones
/// within the check tolerance (f16 outputs byte for byte).
void check_typed(const std::string& type, const std::vector<Tensor>& in, element_type out, const Shape& out_shape,
                 std::map<std::string, graph::AttributeValue> attrs = {}, std::vector<bool> constant = {}) {
  auto g = typed_op(type, in, out, out_shape, std::move(attrs), constant);
  std::vector<Tensor> inputs;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (!(i < constant.size() && constant[i])) inputs.push_back(in[i]);
  std::ostringstream what;
  what << type;
  for (const auto& t : in) what << ' ' << to_string(t.get_element_type()) << to_string(t.get_shape());
  BOOST_TEST_CONTEXT(what.str()) { compare_with_reference(g, inputs, std::max(1e-5f, check_tol_floor), false); }
}

const std::vector<element_type> all_typed = {element_type::f32, element_type::f16, element_type::i8,  element_type::u8,
                                             element_type::i16, element_type::u16, element_type::i32, element_type::u32,
                                             element_type::i64, element_type::u64, element_type::boolean};
const std::vector<element_type> int_types = {element_type::i8,  element_type::u8,  element_type::i16, element_type::u16,
                                             element_type::i32, element_type::u32, element_type::i64, element_type::u64};

/// (a, b, out) shapes: equal and odd, broadcasting both ways, a scalar, rank 6, and empty.
const std::vector<std::array<Shape, 3>> binary_shapes = {{Shape{3, 5, 7}, Shape{3, 5, 7}, Shape{3, 5, 7}},
                                                         {Shape{2, 1, 5}, Shape{3, 1}, Shape{2, 3, 5}},
                                                         {Shape{}, Shape{4, 3}, Shape{4, 3}},
                                                         {Shape{2, 1, 3, 1, 2, 3}, Shape{1, 4, 1, 3}, Shape{2, 1, 3, 4, 2, 3}},
                                                         {Shape{0, 3}, Shape{3}, Shape{0, 3}}};

} // namespace

BOOST_AUTO_TEST_SUITE(typed_eltwise)

BOOST_AUTO_TEST_CASE(comparisons_on_every_type, *boost::unit_test::precondition(tests::gpu_present())) {
  unsigned seed = 1;
  for (const char* op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
    for (auto t : all_typed)
      for (const auto& [a, b, y] : binary_shapes) {
        // Small values, so that equal pairs happen; wide ones, so that the sign bit of u32/u64 counts.
        check_typed(op, {typed_tensor(t, a, seed, -3, 3), typed_tensor(t, b, seed + 1, -3, 3)}, element_type::boolean, y);
        check_typed(op, {typed_tensor(t, a, seed + 2, -3, 3, false, true), typed_tensor(t, b, seed + 3, -3, 3, false, true)},
                    element_type::boolean, y);
        seed += 4;
      }
  // A scalar constant operand (held in specialization constants), of a 64-bit type too.
  for (auto t : {element_type::i64, element_type::f32, element_type::u8})
    check_typed("Less", {typed_tensor(t, {4, 5}, 3, -3, 3), typed_tensor(t, {}, 4, 1, 1)}, element_type::boolean, {4, 5}, {},
                {false, true});
}

BOOST_AUTO_TEST_CASE(logic_and_where, *boost::unit_test::precondition(tests::gpu_present())) {
  const auto B = element_type::boolean;
  unsigned seed = 1;
  for (const char* op : {"And", "Or", "Xor"})
    for (const auto& [a, b, y] : binary_shapes) check_typed(op, {typed_tensor(B, a, seed++, 0, 1), typed_tensor(B, b, seed++, 0, 1)}, B, y);
  for (const Shape& s : {Shape{3, 5, 7}, Shape{1}, Shape{0}}) check_typed("Not", {typed_tensor(B, s, seed++, 0, 1)}, B, s);
  // Where: condition, X and Y broadcast against each other, X/Y of every type.
  for (auto t : all_typed) {
    check_typed("Where", {typed_tensor(B, {3, 1, 5}, seed, 0, 1), typed_tensor(t, {4, 1}, seed + 1, -9, 9, false, true),
                          typed_tensor(t, {3, 4, 5}, seed + 2, -9, 9, false, true)},
                t, {3, 4, 5});
    check_typed("Where", {typed_tensor(B, {7}, seed, 0, 1), typed_tensor(t, {7}, seed + 1, -9, 9), typed_tensor(t, {}, seed + 2, 2, 2)},
                t, {7}, {}, {false, false, true});
    check_typed("Where", {typed_tensor(B, {0, 2}, seed, 0, 1), typed_tensor(t, {2}, seed, 0, 1), typed_tensor(t, {1}, seed, 0, 1)}, t, {0, 2});
    // Constants of every width, not only scalars: a causal mask folds into a bool constant (a
    // decoder's Trilu -> Where, once the length is known), its values into 8- or 64-bit ones.
    check_typed("Where", {typed_tensor(B, {5, 5}, seed, 0, 1), typed_tensor(t, {5, 1}, seed + 1, -9, 9),
                          typed_tensor(t, {1, 5}, seed + 2, -9, 9)},
                t, {5, 5}, {}, {true, true, false});
    seed += 3;
  }
  for (auto t : {element_type::u8, element_type::i64, element_type::f16, element_type::boolean})
    check_typed("Equal", {typed_tensor(t, {3, 7}, seed, -3, 3), typed_tensor(t, {7}, seed + 1, -3, 3)}, B, {3, 7}, {},
                {false, true});
}

BOOST_AUTO_TEST_CASE(mod_bitshift_isinf_isnan, *boost::unit_test::precondition(tests::gpu_present())) {
  unsigned seed = 1;
  for (auto t : all_typed) {
    if (t == element_type::boolean) continue;
    for (int64_t f : {0, 1})
      for (const auto& [a, b, y] : binary_shapes)
        check_typed("Mod", {typed_tensor(t, a, seed++, -40, 40, false, true), typed_tensor(t, b, seed++, -9, 9, true)}, t, y,
                    {{"fmod", f}});
  }
  for (auto t : {element_type::u8, element_type::u16, element_type::u32, element_type::u64, element_type::i32})
    for (const char* dir : {"LEFT", "RIGHT"})
      for (const auto& [a, b, y] : binary_shapes) {
        const int bits = static_cast<int>(element_size(t) * 8);
        check_typed("BitShift", {typed_tensor(t, a, seed++, 0, 255, false, true), typed_tensor(t, b, seed++, 0, bits + 2)}, t, y,
                    {{"direction", std::string(dir)}});
      }
  for (auto t : {element_type::f32, element_type::f16}) {
    Tensor x = typed_tensor(t, {3, 7}, seed++, -4, 4);
    const float specials[] = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()};
    for (int i = 0; i < 4; ++i) {
      if (t == element_type::f32) x.data<float>()[i * 5] = specials[i];
      else x.data<uint16_t>()[i * 5] = float_to_half_bits(specials[i]);
    }
    check_typed("IsNaN", {x}, element_type::boolean, {3, 7});
    for (int64_t pos : {0, 1})
      for (int64_t neg : {0, 1})
        check_typed("IsInf", {x}, element_type::boolean, {3, 7}, {{"detect_positive", pos}, {"detect_negative", neg}});
  }
}

BOOST_AUTO_TEST_CASE(integer_arithmetic, *boost::unit_test::precondition(tests::gpu_present())) {
  unsigned seed = 1;
  for (auto t : int_types) {
    for (const char* op : {"Add", "Sub", "Mul", "Min", "Max"})
      for (const auto& [a, b, y] : binary_shapes)
        check_typed(op, {typed_tensor(t, a, seed++, -100, 100, false, true), typed_tensor(t, b, seed++, -100, 100, false, true)}, t, y);
    for (const auto& [a, b, y] : binary_shapes)
      check_typed("Div", {typed_tensor(t, a, seed++, -100, 100, false, true), typed_tensor(t, b, seed++, -9, 9, true)}, t, y);
    // Pow: small exponents (overflow saturates as the reference's double pow converts), negative ones.
    check_typed("Pow", {typed_tensor(t, {4, 6}, seed++, -5, 5), typed_tensor(t, {6}, seed++, 0, 6)}, t, {4, 6});
    check_typed("Pow", {typed_tensor(t, {4, 6}, seed++, -2, 2), typed_tensor(t, {4, 1}, seed++, -3, 0)}, t, {4, 6});
    for (const char* op : {"Neg", "Abs", "Sign", "Relu"})
      for (const Shape& s : {Shape{3, 5, 7}, Shape{}, Shape{0, 2}})
        check_typed(op, {typed_tensor(t, s, seed++, -100, 100, false, true)}, t, s);
    // Variadic Min/Max/Sum of three inputs, and of one.
    for (const char* op : {"Min", "Max", "Sum"}) {
      check_typed(op, {typed_tensor(t, {2, 3, 5}, seed++, -50, 50), typed_tensor(t, {3, 1}, seed++, -50, 50),
                       typed_tensor(t, {5}, seed++, -50, 50)}, t, {2, 3, 5});
      check_typed(op, {typed_tensor(t, {9}, seed++, -50, 50)}, t, {9});
    }
  }
  // Pow across types: float base with an integer exponent, integer base with a float exponent
  // (a fraction truncates; a negative base gives NaN, then 0).
  for (auto e : {element_type::i32, element_type::i64, element_type::u32})
    check_typed("Pow", {typed_tensor(element_type::f32, {3, 4}, seed++, -2, 2, true), typed_tensor(e, {4}, seed++, -3, 3)},
                element_type::f32, {3, 4});
  for (auto base : {element_type::i32, element_type::i64}) {
    Tensor x(base, {8}), y(element_type::f32, {8});
    const int64_t xs[] = {2, 3, 2, 3, -2, 5, 0, 7};
    const float ys[] = {0.5f, 1.5f, 2.5f, 2.5f, 0.5f, 3.0f, 2.0f, -1.0f};
    for (int i = 0; i < 8; ++i) {
      if (base == element_type::i32) x.data<int32_t>()[i] = static_cast<int32_t>(xs[i]);
      else x.data<int64_t>()[i] = xs[i];
      y.data<float>()[i] = ys[i];
    }
    check_typed("Pow", {x, y}, base, {8});
  }
}

BOOST_AUTO_TEST_CASE(clip_with_tensor_bounds, *boost::unit_test::precondition(tests::gpu_present())) {
  unsigned seed = 1;
  for (auto t : {element_type::f32, element_type::f16, element_type::i8, element_type::u8, element_type::i32,
                 element_type::i64, element_type::u64}) {
    const Shape s{3, 5, 7};
    auto lo = typed_tensor(t, {}, seed++, -20, -1), hi = typed_tensor(t, {1}, seed++, 1, 20);
    check_typed("Clip", {typed_tensor(t, s, seed++, -40, 40), lo, hi}, t, s);                     // tensors
    check_typed("Clip", {typed_tensor(t, s, seed++, -40, 40), lo, hi}, t, s, {}, {false, true, true}); // constants
    // Only a min (a constant), only a max (a tensor), neither.
    auto g = typed_op("Clip", {typed_tensor(t, s, seed, -40, 40), lo}, t, s, {}, {false, true});
    compare_with_reference(g, {typed_tensor(t, s, seed++, -40, 40)}, 1e-5f, false);
    graph_builder b;
    auto x = b.input("x", s, t), h = b.input("hi", {}, t);
    auto& o = b.op("Clip", {x, graph::no_value, h}, {s});
    b.g.values[static_cast<std::size_t>(o.outputs[0])].type = t;
    b.outputs_of_last();
    compare_with_reference(b.g, {typed_tensor(t, s, seed++, -40, 40), typed_tensor(t, {}, seed++, 0, 9)}, 1e-5f, false);
    check_typed("Clip", {typed_tensor(t, s, seed++, -40, 40, false, true)}, t, s);
  }
}

BOOST_AUTO_TEST_CASE(float16_storage, *boost::unit_test::precondition(tests::gpu_present())) {
  // INFERENCE_PRECISION_HINT=f16: f32 tensors are halves on the device, integers keep their width.
  f16_checks mode;
  const auto F = element_type::f32, B = element_type::boolean;
  unsigned seed = 1;
  for (const char* op : {"Equal", "Less", "GreaterOrEqual"})
    for (const auto& [a, b, y] : binary_shapes) check_typed(op, {typed_tensor(F, a, seed++, -3, 3), typed_tensor(F, b, seed++, -3, 3)}, B, y);
  for (const auto& [a, b, y] : binary_shapes) {
    check_typed("Where", {typed_tensor(B, a, seed++, 0, 1), typed_tensor(F, b, seed++, -3, 3), typed_tensor(F, y, seed++, -3, 3)}, F, y);
    check_typed("Mod", {typed_tensor(F, a, seed++, -20, 20), typed_tensor(F, b, seed++, -5, 5, true)}, F, y, {{"fmod", int64_t{1}}});
    check_typed("Mod", {typed_tensor(F, a, seed++, -20, 20), typed_tensor(F, b, seed++, -5, 5, true)}, F, y);
  }
  Tensor x = typed_tensor(F, {2, 9}, seed++, -4, 4);
  x.data<float>()[1] = std::numeric_limits<float>::infinity();
  x.data<float>()[4] = -std::numeric_limits<float>::infinity();
  x.data<float>()[7] = std::numeric_limits<float>::quiet_NaN();
  check_typed("IsInf", {x}, B, {2, 9}, {{"detect_negative", int64_t{0}}});
  check_typed("IsNaN", {x}, B, {2, 9});
  check_typed("Clip", {typed_tensor(F, {3, 5}, seed++, -9, 9), typed_tensor(F, {}, seed++, -3, -1), typed_tensor(F, {}, seed++, 1, 3)}, F, {3, 5});
  check_typed("Pow", {typed_tensor(F, {3, 5}, seed++, -2, 2, true), typed_tensor(element_type::i64, {5}, seed++, -2, 3)}, F, {3, 5});
  check_typed("Add", {typed_tensor(element_type::i32, {3, 5}, seed++, -9, 9), typed_tensor(element_type::i32, {5}, seed++, -9, 9)},
              element_type::i32, {3, 5});
}

BOOST_AUTO_TEST_CASE(typed_rules_and_refusals, *boost::unit_test::precondition(tests::gpu_present())) {
  // f32 arithmetic keeps the f32 shader; other types go to the typed one, 64-bit ones to its
  // INT64 variant (shaderInt64, which lavapipe has).
  auto ex = [](element_type t) {
    std::vector<Tensor> in{typed_tensor(t, {8}, 1, 0, 3), typed_tensor(t, {8}, 2, 0, 3)}, out;
    kernels::compile_config cfg;
    cfg.profiling = true;
    auto exe = gpu().compile(typed_op("Add", in, t, {8}), cfg);
    exe->run(in, out);
    return exe->profile().at(1).exec_type;
  };
  BOOST_TEST(ex(element_type::f32) == "vulkan:eltwise_v4");
  BOOST_TEST(ex(element_type::i32) == "vulkan:eltwise_typed");
  BOOST_TEST(ex(element_type::i64) == "vulkan:eltwise_typed_i64");
  auto g64 = typed_op("Add", {typed_tensor(element_type::i64, {8}, 1, 0, 3), typed_tensor(element_type::i64, {8}, 2, 0, 3)},
                      element_type::i64, {8});
  BOOST_TEST(kv::needs_shader_int64(g64, g64.ops[0]));
  auto g32 = typed_op("Less", {typed_tensor(element_type::i32, {8}, 1, 0, 3), typed_tensor(element_type::i32, {8}, 2, 0, 3)},
                      element_type::boolean, {8});
  BOOST_TEST(!kv::needs_shader_int64(g32, g32.ops[0]));
  auto refused = [](const graph::Graph& g, const std::string& why) {
    auto s = gpu().query(g, g.ops[0]);
    BOOST_TEST(!s.supported);
    BOOST_TEST(s.reason.find(why) != std::string::npos, s.reason << " does not say " << why);
  };
  Tensor d(element_type::f64, {4});
  std::fill(d.data<double>(), d.data<double>() + 4, 1.0);
  refused(typed_op("Equal", {d, d}, element_type::boolean, {4}), "input 0 is f64");
  auto i = typed_tensor(element_type::i32, {4}, 1, 1, 3);
  refused(typed_op("Mod", {i, i}, element_type::i32, {4}, {{"fmod", int64_t{2}}}), "fmod must be 0 or 1");
  refused(typed_op("BitShift", {i, i}, element_type::i32, {4}, {{"direction", std::string("UP")}}), "direction 'UP'");
  refused(typed_op("And", {i, i}, element_type::boolean, {4}), "input 0 is i32; the op takes bool");
  refused(typed_op("Add", {i, typed_tensor(element_type::i64, {4}, 1, 1, 3)}, element_type::i32, {4}),
          "inputs of types i32 and i64");
  // A constant of any width is uploaded as its raw bytes (it was refused when not 32-bit).
  auto l = typed_tensor(element_type::i64, {4}, 1, 1, 3);
  check_typed("Add", {l, l}, element_type::i64, {4}, {}, {false, true});
}

BOOST_AUTO_TEST_SUITE_END()

// ---- losses (shaders/loss.comp) -----------------------------------------------------------

namespace {

/// One loss case: op (NegativeLogLikelihoodLoss or SoftmaxCrossEntropyLoss) over x [N, C, d..].
struct loss_case {
  std::string op = "NegativeLogLikelihoodLoss";
  Shape x{3, 5};
  std::string reduction = "mean";
  int weight = 0;                       ///< 0 none, 1 an input, 2 a constant
  std::optional<int64_t> ignore;        ///< ignore_index, when given
  element_type target = element_type::i64;
  bool log_prob = false;                ///< SoftmaxCrossEntropyLoss's second output
  bool all_ignored = false;             ///< every target is the ignore index
};

Shape loss_targets_shape(const Shape& x) {
  Shape t = x;
  t.erase(t.begin() + 1);
  return t;
}

/// Targets in [0, C), a quarter of them the ignore index when one is given (or all of them).
Tensor loss_targets(const loss_case& c, unsigned seed) {
  std::mt19937 rng(seed);
  Tensor t(c.target, loss_targets_shape(c.x));
  std::uniform_int_distribution<int64_t> cls(0, c.x[1] - 1);
  for (int64_t i = 0; i < t.get_size(); ++i) {
    int64_t v = cls(rng);
    if (c.ignore && (c.all_ignored || rng() % 4 == 0)) v = *c.ignore;
    if (c.target == element_type::i64) t.data<int64_t>()[i] = v;
    else t.data<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return t;
}

/// The case's graph and its inputs.
std::pair<graph::Graph, std::vector<Tensor>> loss_graph(const loss_case& c, unsigned seed) {
  graph_builder b;
  std::vector<Tensor> inputs{random_tensor(c.x, seed, -3, 3), loss_targets(c, seed + 1)};
  std::vector<graph::ValueId> in{b.input("x", c.x), b.input("t", inputs[1].get_shape(), c.target)};
  const Tensor w = random_tensor({c.x[1]}, seed + 2, 0.2f, 2.0f);
  if (c.weight == 1) {
    in.push_back(b.input("w", {c.x[1]}));
    inputs.push_back(w);
  } else if (c.weight == 2) {
    in.push_back(b.constant("w", w));
  }
  std::map<std::string, graph::AttributeValue> attrs{{"reduction", c.reduction}};
  if (c.ignore) attrs["ignore_index"] = *c.ignore;
  std::vector<Shape> outs{c.reduction == "none" ? loss_targets_shape(c.x) : Shape{}};
  if (c.log_prob) outs.push_back(c.x);
  b.op(c.op, in, outs, std::move(attrs));
  b.outputs_of_last();
  return {b.g, inputs};
}

loss_case lc(std::string op, Shape x, std::string reduction, int weight = 0, std::optional<int64_t> ignore = std::nullopt,
             element_type target = element_type::i64, bool log_prob = false, bool all_ignored = false) {
  return {std::move(op), std::move(x), std::move(reduction), weight, ignore, target, log_prob, all_ignored};
}

std::string describe(const loss_case& c) {
  std::ostringstream s;
  s << c.op << ' ' << to_string(c.x) << ' ' << c.reduction << " weight " << c.weight << " ignore "
    << (c.ignore ? std::to_string(*c.ignore) : "-") << ' ' << to_string(c.target) << (c.log_prob ? " log_prob" : "")
    << (c.all_ignored ? " all ignored" : "");
  return s.str();
}

void check_loss(const loss_case& c, unsigned seed) {
  auto [g, inputs] = loss_graph(c, seed);
  BOOST_TEST_CONTEXT(describe(c)) { compare_with_reference(g, inputs, std::max(1e-4f, check_tol_floor), false); }
}

/// Every reduction, weight (none, input, constant) and ignore index (none, a class, negative,
/// beyond int32) on x of k = 0, 1, 2 and 4 spatial dims; int32 and int64 targets alternate, as
/// does SoftmaxCrossEntropyLoss's log_prob.
void check_every_loss(const std::vector<Shape>& shapes) {
  unsigned seed = 1;
  const std::optional<int64_t> ignores[] = {std::nullopt, int64_t{1}, int64_t{-3}, int64_t{1} << 40};
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"})
    for (const auto& x : shapes)
      for (const char* r : {"none", "sum", "mean"})
        for (int w : {0, 1, 2})
          for (const auto& ii : ignores) {
            check_loss(lc(op, x, r, w, ii, seed % 2 ? element_type::i32 : element_type::i64,
                          std::string(op) == "SoftmaxCrossEntropyLoss" && seed % 3 != 0),
                       seed);
            ++seed;
          }
}

/// Runs a one-loss graph on the GPU only.
std::vector<Tensor> gpu_run(const graph::Graph& g, const std::vector<Tensor>& inputs) {
  auto exe = gpu().compile(g, check_cfg);
  std::vector<Tensor> got;
  exe->run(inputs, got);
  return got;
}

} // namespace

BOOST_AUTO_TEST_SUITE(losses)

BOOST_AUTO_TEST_CASE(every_reduction_weight_and_ignore_index, *boost::unit_test::precondition(tests::gpu_present())) {
  check_every_loss({{5, 3}, {4, 7, 3}, {2, 5, 3, 4}, {2, 3, 2, 1, 3, 2}});
}

BOOST_AUTO_TEST_CASE(many_targets_in_one_workgroup, *boost::unit_test::precondition(tests::gpu_present())) {
  // More targets than the workgroup's 64 invocations, many times over and not a multiple of 64.
  unsigned seed = 50;
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"})
    for (const char* r : {"sum", "mean"}) {
      check_loss(lc(op, {7, 11, 1001}, r, 1, int64_t{2}, element_type::i64), seed++);
      check_loss(lc(op, {3, 4, 2, 1500}, r, 0, std::nullopt, element_type::i32), seed++);
    }
}

BOOST_AUTO_TEST_CASE(mean_with_every_target_ignored_is_nan, *boost::unit_test::precondition(tests::gpu_present())) {
  // 0 / 0, as the reference's double division gives it; sum is 0.
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"})
    for (int w : {0, 1})
      for (const char* r : {"mean", "sum"}) {
        const loss_case c = lc(op, {4, 3, 5}, r, w, int64_t{-1}, element_type::i64, false, true);
        auto [g, inputs] = loss_graph(c, 7);
        const auto got = gpu_run(g, inputs), want = reference_run(g, inputs);
        BOOST_TEST_CONTEXT(describe(c)) {
          const float a = got.at(0).data<float>()[0], e = want.at(0).data<float>()[0];
          BOOST_TEST(std::isnan(e) == (std::string(r) == "mean"));
          BOOST_TEST(std::isnan(a) == std::isnan(e), "gpu " << a << ", reference " << e);
          if (!std::isnan(e)) BOOST_TEST(a == e);
        }
      }
}

BOOST_AUTO_TEST_CASE(target_out_of_range_loses_nothing, *boost::unit_test::precondition(tests::gpu_present())) {
  // The reference fails the request; the shader cannot, and gives those targets loss 0 and
  // weight 0 (docs/limits.md).
  for (auto t : {element_type::i32, element_type::i64}) {
    const loss_case c = lc("NegativeLogLikelihoodLoss", {6, 3}, "none", 0, std::nullopt, t);
    auto [g, inputs] = loss_graph(c, 3);
    const int64_t bad[] = {3, -1, 1, 100, 0, int64_t{1} << 33};
    for (int i = 0; i < 6; ++i) {
      if (t == element_type::i64) inputs[1].data<int64_t>()[i] = bad[i];
      else inputs[1].data<int32_t>()[i] = static_cast<int32_t>(bad[i] == int64_t{1} << 33 ? -7 : bad[i]);
    }
    const auto got = gpu_run(g, inputs);
    const float* y = got.at(0).data<float>();
    const float* x = inputs[0].data<float>();
    BOOST_TEST_CONTEXT(to_string(t)) {
      for (int i : {0, 1, 3, 5}) BOOST_TEST(y[i] == 0.0f);
      BOOST_TEST(y[2] == -x[2 * 3 + 1]);
      BOOST_TEST(y[4] == -x[4 * 3 + 0]);
      // Their weight is 0 in a mean as well: the mean of the two others.
      auto mean = g;
      mean.ops[0].attrs["reduction"] = std::string("mean");
      mean.values[static_cast<std::size_t>(mean.outputs[0])].shape = PartialShape(Shape{});
      const float m = gpu_run(mean, inputs).at(0).data<float>()[0];
      BOOST_TEST(std::abs(m - (y[2] + y[4]) / 2) <= 1e-6f * (1 + std::abs(m)), "mean " << m);
    }
  }
}

BOOST_AUTO_TEST_CASE(float16_storage, *boost::unit_test::precondition(tests::gpu_present())) {
  f16_checks mode;
  check_every_loss({{4, 7, 3}});
}

BOOST_AUTO_TEST_CASE(refusals, *boost::unit_test::precondition(tests::gpu_present())) {
  auto refused = [](const graph::Graph& g, const std::string& why) {
    auto s = gpu().query(g, g.ops[0]);
    BOOST_TEST(!s.supported);
    BOOST_TEST(s.reason.find(why) != std::string::npos, s.reason << " does not say " << why);
  };
  refused(loss_graph(lc("NegativeLogLikelihoodLoss", {3, 4}, "max"), 1).first, "reduction 'max'");
  { // an int64 constant target is not uploaded; an int32 one is
    graph_builder b;
    b.op("NegativeLogLikelihoodLoss", {b.input("x", {2, 3}), b.constant("t", shaders_vs_reference::ints_of<int64_t>({2}, {0, 2}))}, {{}});
    b.outputs_of_last();
    refused(b.g, "constant int64 target");
    graph_builder b32;
    b32.op("NegativeLogLikelihoodLoss", {b32.input("x", {2, 3}), b32.constant("t", shaders_vs_reference::ints_of<int32_t>({2}, {0, 2}))}, {{}},
           {{"reduction", std::string("sum")}});
    b32.outputs_of_last();
    compare_with_reference(b32.g, {random_tensor({2, 3}, 4)}, 1e-5f, false);
  }
  refused(loss_graph(lc("SoftmaxCrossEntropyLoss", {2, 2, 1 << 20}, "sum"), 1).first, "more than 1048576 targets");
}

BOOST_AUTO_TEST_SUITE_END()
