/// OpenVINO IR (.xml + .bin, v10/v11) reader and writer (graph/ir_xml_*.cpp).
///
/// Mappings: small IR nets written by hand here after OpenVINO's opset specifications, read into
/// troupe's graph and run with the reference kernels against the same computation written as
/// ONNX ops (tests/support/graph_builder.hpp) or worked out by hand on known inputs.
/// Bad input: every malformed file is one troupe::Exception naming the file, the layer and why.
/// Round trip: save_model of the PP-OCR and transformer test models, read back and run on CPU
/// with onnxruntime's seeded inputs: equal to the ONNX path's outputs (the count of bit-equal
/// elements is printed) and to onnxruntime's within the model tests' bound.
#define BOOST_TEST_MODULE openvino_ir_tests
#include <boost/test/unit_test.hpp>

#include <troupe/float16.hpp>
#include <troupe/troupe.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "graph/ir_xml.hpp"
#include "kernels/cpu/int8_ops.hpp"
#include "kernels/reference/interpreter.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/graph_builder.hpp"
#include "tests/support/ort_case.hpp"
#include "tests/support/random_tensor.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/test_data.hpp"

using namespace troupe;
namespace fs = std::filesystem;

namespace {

/// Writes an IR net by hand: layers with their ports (inputs first, then outputs, numbered in
/// that order) and the edges between them; Const bytes go into `bin`.
struct ir_net {
  std::vector<std::string> layers;
  std::vector<std::string> edges;
  std::string bin;
  int next = 0;
  int version = 11;

  struct port_ref { int layer, port; std::string precision; std::vector<int64_t> dims; };

  static std::string dims_xml(const std::vector<int64_t>& d) {
    std::string s;
    for (auto x : d) s += "<dim>" + std::to_string(x) + "</dim>";
    return s;
  }
  static std::string csv(const std::vector<int64_t>& d) {
    std::string s;
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s;
  }

  /// A layer; `outs` lists its outputs' (precision, dims, names).
  std::vector<port_ref> layer(const std::string& type, const std::string& version, const std::string& data,
                              const std::vector<port_ref>& in,
                              const std::vector<std::tuple<std::string, std::vector<int64_t>, std::string>>& outs,
                              const std::string& name = "", const std::string& extra = "") {
    int id = next++;
    std::string x = "<layer id=\"" + std::to_string(id) + "\" name=\"" + (name.empty() ? type + std::to_string(id) : name) +
                    "\" type=\"" + type + "\" version=\"" + version + "\">";
    if (!data.empty()) x += "<data " + data + "/>";
    int port = 0;
    if (!in.empty()) {
      x += "<input>";
      for (const auto& p : in) {
        x += "<port id=\"" + std::to_string(port) + "\" precision=\"" + p.precision + "\">" + dims_xml(p.dims) + "</port>";
        edges.push_back("<edge from-layer=\"" + std::to_string(p.layer) + "\" from-port=\"" + std::to_string(p.port) +
                        "\" to-layer=\"" + std::to_string(id) + "\" to-port=\"" + std::to_string(port) + "\"/>");
        ++port;
      }
      x += "</input>";
    }
    std::vector<port_ref> r;
    if (!outs.empty()) {
      x += "<output>";
      for (const auto& [prec, dims, names] : outs) {
        x += "<port id=\"" + std::to_string(port) + "\" precision=\"" + prec + "\"" +
             (names.empty() ? std::string() : " names=\"" + names + "\"") + ">" + dims_xml(dims) + "</port>";
        r.push_back({id, port, prec, dims});
        ++port;
      }
      x += "</output>";
    }
    x += extra + "</layer>";
    layers.push_back(x);
    return r;
  }
  port_ref param(const std::string& name, const std::string& prec, const std::string& et, std::vector<int64_t> dims,
                 const std::string& shape_text = "") {
    return layer("Parameter", "opset1", "shape=\"" + (shape_text.empty() ? csv(dims) : shape_text) + "\" element_type=\"" + et + "\"",
                 {}, {{prec, dims, name}}, name)[0];
  }
  port_ref constant(const Tensor& t, const std::string& prec, const std::string& et) {
    std::size_t offset = bin.size();
    bin.append(static_cast<const char*>(t.data()), t.get_byte_size());
    return layer("Const", "opset1",
                 "element_type=\"" + et + "\" shape=\"" + csv(t.get_shape()) + "\" offset=\"" + std::to_string(offset) +
                     "\" size=\"" + std::to_string(t.get_byte_size()) + "\"",
                 {}, {{prec, t.get_shape(), ""}})[0];
  }
  port_ref f32(const std::vector<float>& v, Shape s) {
    Tensor t(element_type::f32, s);
    std::copy(v.begin(), v.end(), t.data<float>());
    return constant(t, "FP32", "f32");
  }
  port_ref i64(const std::vector<int64_t>& v, Shape s = {}) {
    if (s.empty() && v.size() != 1) s = {static_cast<int64_t>(v.size())};
    Tensor t(element_type::i64, s);
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return constant(t, "I64", "i64");
  }
  port_ref i64s(const std::vector<int64_t>& v) {
    Tensor t(element_type::i64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return constant(t, "I64", "i64");
  }
  /// One-output op of FP32 with dims `out`.
  port_ref op(const std::string& type, const std::string& version, const std::string& data, const std::vector<port_ref>& in,
              std::vector<int64_t> out, const std::string& prec = "FP32", const std::string& names = "") {
    return layer(type, version, data, in, {{prec, out, names}})[0];
  }
  void result(const port_ref& p, const std::string& name = "") {
    layer("Result", "opset1", "", {p}, {}, name);
  }
  /// The layers and edges, as a body of If, TensorIterator or Loop holds them.
  std::string inner() const {
    std::string s = "<layers>";
    for (const auto& l : layers) s += l;
    s += "</layers><edges>";
    for (const auto& e : edges) s += e;
    return s + "</edges>";
  }
  std::string xml() const {
    return "<?xml version=\"1.0\"?>\n<net name=\"test\" version=\"" + std::to_string(version) + "\">" + inner() + "</net>";
  }
  graph::Graph read(const std::string& source = "test.xml") const {
    return graph::read_ir_memory(xml(), bin.data(), bin.size(), source);
  }
};

Tensor f32_tensor(const Shape& s, std::vector<float> v) {
  Tensor t(element_type::f32, s);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> r(static_cast<std::size_t>(t.get_size()));
  for (std::size_t i = 0; i < r.size(); ++i) {
    switch (t.get_element_type()) {
    case element_type::f32: r[i] = t.data<float>()[i]; break;
    case element_type::i64: r[i] = static_cast<float>(t.data<int64_t>()[i]); break;
    case element_type::i32: r[i] = static_cast<float>(t.data<int32_t>()[i]); break;
    case element_type::boolean: r[i] = t.data<bool>()[i]; break;
    default: BOOST_FAIL("unexpected element type " << to_string(t.get_element_type()));
    }
  }
  return r;
}

/// max |a - b| <= tol * (1 + max|b|), same shapes.
void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  BOOST_TEST_REQUIRE((got.get_shape() == want.get_shape()), what << ": shape " << to_string(got.get_shape()) << " vs "
                                                                   << to_string(want.get_shape()));
  auto a = floats(got), b = floats(want);
  double err = 0, ref = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, static_cast<double>(std::abs(a[i] - b[i])));
    ref = std::max(ref, static_cast<double>(std::abs(b[i])));
    if (std::isnan(a[i]) != std::isnan(b[i])) err = 1e30;
  }
  BOOST_TEST(err <= tol * (1 + ref), what << ": max error " << err << " (max |ref| " << ref << ")");
}

/// The IR net read and run by the reference kernels against the ONNX graph `want` on `in`.
void expect_same(const ir_net& net, const graph::Graph& want, const std::vector<Tensor>& in, double tol,
                 const std::string& what) {
  graph::Graph got = net.read();
  auto a = tests::run_reference(got, in), b = tests::run_reference(want, in);
  BOOST_TEST_REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) expect_close(a[i], b[i], tol, what + " output " + std::to_string(i));
}

std::vector<Tensor> run_ir(const ir_net& net, const std::vector<Tensor>& in) {
  return tests::run_reference(net.read(), in);
}

/// The same on the reference interpreter, which sizes at run time what depends on values
/// (PriorBox's output on the feature map's shape).
std::vector<Tensor> interpret_ir(const ir_net& net, const std::vector<Tensor>& in) {
  return kernels::reference::interpreter(std::make_shared<const graph::Graph>(net.read())).run(in);
}

/// The net compiled on the CPU through Core, run on `inputs` (by name); `outputs` by name.
std::vector<Tensor> run_on_cpu(const ir_net& net, const std::string& source,
                               const std::vector<std::pair<std::string, Tensor>>& inputs,
                               const std::vector<std::string>& outputs) {
  Core core;
  auto req = core.compile_model(core.read_ir_from_memory(net.xml(), net.bin.data(), net.bin.size(), source), "CPU")
                 .create_infer_request();
  for (const auto& [name, t] : inputs) req.set_tensor(name, t);
  req.infer();
  std::vector<Tensor> r;
  for (const auto& name : outputs) r.push_back(req.get_tensor(name));
  return r;
}

/// With TROUPE_IR_SEED_DIR set, the net as the IR fuzzer reads its inputs (xml, NUL, bin), named
/// `name`.ir: how the seeds of fuzz/corpus/ir for forms `troupe convert` cannot write were made.
void write_fuzz_seed(const ir_net& net, const std::string& name) {
  const char* dir = std::getenv("TROUPE_IR_SEED_DIR");
  if (!dir) return;
  std::ofstream f(std::filesystem::path(dir) / (name + ".ir"), std::ios::binary);
  f << net.xml() << '\0' << net.bin;
}

/// interpret_ir's outputs must also come from the IR the writer makes of the net, read back.
void expect_written_back_alike(const ir_net& net, const std::vector<Tensor>& in, const std::vector<Tensor>& want) {
  std::string xml, bin;
  graph::write_ir(net.read(), "again", xml, bin);
  auto again = graph::read_ir_memory(xml, bin.data(), bin.size(), "again.xml");
  auto got = kernels::reference::interpreter(std::make_shared<const graph::Graph>(std::move(again))).run(in);
  BOOST_TEST_REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], 0, "written and read back, output " + std::to_string(i));
}

} // namespace

BOOST_AUTO_TEST_SUITE(mappings)

BOOST_AUTO_TEST_CASE(convolution_bias_relu) {
  Tensor w = tests::random_tensor({4, 3, 3, 3}, 7), bias = tests::random_tensor({4}, 8), x = tests::random_tensor({1, 3, 8, 8}, 9);
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {1, 3, 8, 8});
  auto c = n.op("Convolution", "opset1", "strides=\"2,2\" dilations=\"1,1\" pads_begin=\"1,1\" pads_end=\"0,0\" auto_pad=\"explicit\"",
                {p, n.constant(w, "FP32", "f32")}, {1, 4, 4, 4});
  auto a = n.op("Add", "opset1", "auto_broadcast=\"numpy\"", {c, n.constant(bias.reshaped({1, 4, 1, 1}), "FP32", "f32")}, {1, 4, 4, 4});
  n.result(n.op("Relu", "opset1", "", {a}, {1, 4, 4, 4}));
  tests::builder b;
  auto bx = b.input({1, 3, 8, 8});
  auto conv = b.op("Conv", {bx, b.constant(w), b.constant(bias)}, {{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 0, 0}}});
  b.output(b.op("Relu", {conv}));
  expect_same(n, b.g, {x}, 1e-5, "Convolution");
}

BOOST_AUTO_TEST_CASE(group_convolution_depthwise_and_backprop) {
  Tensor w = tests::random_tensor({4, 1, 1, 3, 3}, 11), x = tests::random_tensor({1, 4, 6, 6}, 12);
  Tensor wt = tests::random_tensor({4, 2, 2, 2}, 13);
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {1, 4, 6, 6});
  auto g = n.op("GroupConvolution", "opset1", "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\"",
                {p, n.constant(w, "FP32", "f32")}, {1, 4, 6, 6});
  n.result(n.op("ConvolutionBackpropData", "opset1", "strides=\"2,2\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\"",
                {g, n.constant(wt, "FP32", "f32")}, {1, 2, 12, 12}));
  tests::builder b;
  auto bx = b.input({1, 4, 6, 6});
  auto c = b.op("Conv", {bx, b.constant(w.reshaped({4, 1, 3, 3}))}, {{"group", int64_t{4}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  b.output(b.op("ConvTranspose", {c, b.constant(wt)}, {{"strides", std::vector<int64_t>{2, 2}}}));
  expect_same(n, b.g, {x}, 1e-5, "GroupConvolution + ConvolutionBackpropData");
}

BOOST_AUTO_TEST_CASE(pooling_and_batch_norm) {
  Tensor x = tests::random_tensor({1, 2, 7, 7}, 21);
  Tensor gamma = tests::random_tensor({2}, 22), beta = tests::random_tensor({2}, 23), mean = tests::random_tensor({2}, 24);
  Tensor var = f32_tensor({2}, {0.5f, 2.0f});
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {1, 2, 7, 7});
  auto bn = n.op("BatchNormInference", "opset5", "epsilon=\"0.001\"",
                 {p, n.constant(gamma, "FP32", "f32"), n.constant(beta, "FP32", "f32"), n.constant(mean, "FP32", "f32"), n.constant(var, "FP32", "f32")},
                 {1, 2, 7, 7});
  auto mp = n.op("MaxPool", "opset1", "strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" kernel=\"3,3\" rounding_type=\"ceil\" auto_pad=\"explicit\"",
                 {bn}, {1, 2, 3, 3});
  n.result(mp);
  n.result(n.op("AvgPool", "opset1", "strides=\"2,2\" pads_begin=\"1,1\" pads_end=\"1,1\" kernel=\"3,3\" exclude-pad=\"true\" rounding_type=\"floor\"",
                {bn}, {1, 2, 4, 4}));
  tests::builder b;
  auto bx = b.input({1, 2, 7, 7});
  auto bb = b.op("BatchNormalization", {bx, b.constant(gamma), b.constant(beta), b.constant(mean), b.constant(var)}, {{"epsilon", 0.001f}});
  b.output(b.op("MaxPool", {bb}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}, {"ceil_mode", int64_t{1}}}));
  b.output(b.op("AveragePool", {bb}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}},
                                      {"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  expect_same(n, b.g, {x}, 1e-6, "pooling");
}

BOOST_AUTO_TEST_CASE(matmul_transpose_softmax_mvn) {
  Tensor x = tests::random_tensor({2, 3, 4}, 31), w = tests::random_tensor({5, 4}, 32);
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {2, 3, 4});
  auto mm = n.op("MatMul", "opset1", "transpose_a=\"false\" transpose_b=\"true\"", {p, n.constant(w, "FP32", "f32")}, {2, 3, 5});
  n.result(n.op("SoftMax", "opset1", "axis=\"2\"", {mm}, {2, 3, 5}));
  n.result(n.op("Softmax", "opset8", "axis=\"-2\"", {mm}, {2, 3, 5}));
  n.result(n.op("MVN", "opset6", "eps=\"1e-5\" normalize_variance=\"true\" eps_mode=\"inside_sqrt\"", {mm, n.i64s({-1})}, {2, 3, 5}));
  tests::builder b;
  auto bx = b.input({2, 3, 4});
  auto bm = b.op("MatMul", {bx, b.op("Transpose", {b.constant(w)}, {{"perm", std::vector<int64_t>{1, 0}}})});
  b.output(b.op("Softmax", {bm}, {{"axis", int64_t{2}}}));
  b.output(b.op("Softmax", {bm}, {{"axis", int64_t{-2}}}));
  Tensor ones = f32_tensor({5}, std::vector<float>(5, 1.0f)), zeros = f32_tensor({5}, std::vector<float>(5, 0.0f));
  b.output(b.op("LayerNormalization", {bm, b.constant(ones), b.constant(zeros)}, {{"epsilon", 1e-5f}}));
  b.g.opset = 17;
  expect_same(n, b.g, {x}, 1e-5, "MatMul/SoftMax/MVN");
}

BOOST_AUTO_TEST_CASE(activations_on_known_values) {
  std::vector<float> xs{-4.0f, -1.5f, -0.25f, 0.0f, 0.5f, 2.0f, 3.5f, 7.0f};
  Tensor x = f32_tensor({8}, xs);
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {8});
  std::vector<std::pair<std::string, std::string>> ops{
      {"Clamp", "min=\"-1\" max=\"2.5\""}, {"HSwish", ""}, {"HSigmoid", ""}, {"Swish", ""}, {"Gelu", "approximation_mode=\"ERF\""},
      {"Sigmoid", ""}, {"Tanh", ""}, {"Exp", ""}, {"Erf", ""}, {"Elu", "alpha=\"0.5\""}, {"Negative", ""}, {"Abs", ""}};
  for (const auto& [t, d] : ops) n.result(n.op(t, t == "Gelu" ? "opset7" : t == "HSwish" || t == "HSigmoid" || t == "Swish" ? "opset4" : "opset1", d, {p}, {8}));
  auto y = run_ir(n, {x});
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  std::vector<std::function<double(double)>> f{
      [](double v) { return std::min(2.5, std::max(-1.0, v)); },
      [](double v) { return v * std::min(6.0, std::max(0.0, v + 3)) / 6; },
      [](double v) { return std::min(6.0, std::max(0.0, v + 3)) / 6; },
      [&](double v) { return v * sig(v); },
      [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); },
      sig,
      [](double v) { return std::tanh(v); },
      [](double v) { return std::exp(v); },
      [](double v) { return std::erf(v); },
      [](double v) { return v >= 0 ? v : 0.5 * (std::exp(v) - 1); },
      [](double v) { return -v; },
      [](double v) { return std::abs(v); }};
  BOOST_TEST_REQUIRE(y.size() == f.size());
  for (std::size_t k = 0; k < f.size(); ++k)
    for (std::size_t i = 0; i < xs.size(); ++i)
      BOOST_TEST(std::abs(y[k].data<float>()[i] - f[k](xs[i])) <= 1e-5 * (1 + std::abs(f[k](xs[i]))),
                 ops[k].first << "(" << xs[i] << ") = " << y[k].data<float>()[i] << ", want " << f[k](xs[i]));
}

BOOST_AUTO_TEST_CASE(binary_broadcast_power_divide_select) {
  Tensor a = f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6}), c = f32_tensor({3}, {2, 4, 8});
  ir_net n;
  auto pa = n.param("a", "FP32", "f32", {2, 3});
  auto pc = n.param("c", "FP32", "f32", {3});
  n.result(n.op("Subtract", "opset1", "auto_broadcast=\"numpy\"", {pa, pc}, {2, 3}));
  n.result(n.op("Divide", "opset1", "auto_broadcast=\"numpy\" m_pythondiv=\"true\"", {pa, pc}, {2, 3}));
  n.result(n.op("Power", "opset1", "auto_broadcast=\"numpy\"", {pa, n.f32({2}, {})}, {2, 3}));
  auto eq = n.op("Greater", "opset1", "auto_broadcast=\"numpy\"", {pa, pc}, {2, 3}, "BOOL");
  n.result(n.op("Select", "opset1", "auto_broadcast=\"numpy\"", {eq, pa, pc}, {2, 3}));
  // integer division floors (python division) where ONNX's Div truncates
  ir_net m;
  auto ia = m.param("a", "I64", "i64", {4});
  m.result(m.op("Divide", "opset1", "auto_broadcast=\"numpy\"", {ia, m.i64({-2}, {})}, {4}, "I64"));
  auto y = run_ir(n, {a, c});
  BOOST_TEST(floats(y[0]) == (std::vector<float>{-1, -2, -5, 2, 1, -2}), boost::test_tools::per_element());
  BOOST_TEST(floats(y[1]) == (std::vector<float>{0.5f, 0.5f, 0.375f, 2, 1.25f, 0.75f}), boost::test_tools::per_element());
  BOOST_TEST(floats(y[2]) == (std::vector<float>{1, 4, 9, 16, 25, 36}), boost::test_tools::per_element());
  BOOST_TEST(floats(y[3]) == (std::vector<float>{2, 4, 8, 4, 5, 8}), boost::test_tools::per_element());
  Tensor ints(element_type::i64, {4});
  for (int i = 0; i < 4; ++i) ints.data<int64_t>()[i] = std::vector<int64_t>{7, -7, 6, -1}[static_cast<std::size_t>(i)];
  auto z = run_ir(m, {ints});
  BOOST_TEST(floats(z[0]) == (std::vector<float>{-4, 3, -3, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(shape_ops_on_known_values) {
  Tensor x(element_type::f32, {2, 3, 4});
  for (int i = 0; i < 24; ++i) x.data<float>()[i] = static_cast<float>(i);
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {2, 3, 4});
  n.result(n.op("Reshape", "opset1", "special_zero=\"true\"", {p, n.i64s({0, -1})}, {2, 12}));                   // 0
  n.result(n.op("Transpose", "opset1", "", {p, n.i64s({2, 0, 1})}, {4, 2, 3}));                                  // 1
  n.result(n.op("Concat", "opset1", "axis=\"1\"", {p, p}, {2, 6, 4}));                                             // 2
  n.result(n.op("Unsqueeze", "opset1", "", {p, n.i64s({0})}, {1, 2, 3, 4}));                                        // 3
  n.result(n.op("Gather", "opset8", "batch_dims=\"0\"", {p, n.i64s({2, 0}), n.i64({1}, {})}, {2, 2, 4}));           // 4
  n.result(n.op("ShapeOf", "opset3", "output_type=\"i64\"", {p}, {3}, "I64"));                                     // 5
  n.result(n.op("StridedSlice", "opset1", "begin_mask=\"0,1,0\" end_mask=\"0,1,0\" new_axis_mask=\"\" shrink_axis_mask=\"1,0,0\" ellipsis_mask=\"\"",
                {p, n.i64s({1, 0, 1}), n.i64s({2, 0, 4}), n.i64s({1, 1, 2})}, {3, 2}));                              // 6
  n.result(n.op("Slice", "opset8", "", {p, n.i64s({-1}), n.i64s({-100}), n.i64s({-2}), n.i64s({2})}, {2, 3, 2}));     // 7
  auto sp = n.layer("VariadicSplit", "opset1", "", {p, n.i64({2}, {}), n.i64s({1, -1})}, {{"FP32", {2, 3, 1}, ""}, {"FP32", {2, 3, 3}, ""}});
  n.result(sp[1]);                                                                                                  // 8
  n.result(n.op("Pad", "opset1", "pad_mode=\"constant\"", {p, n.i64s({0, 1, 0}), n.i64s({0, 0, 1}), n.f32({-1}, {})}, {2, 4, 5})); // 9
  n.result(n.op("ReduceMean", "opset1", "keep_dims=\"false\"", {p, n.i64s({1, 2})}, {2}));                         // 10
  n.result(n.op("Broadcast", "opset3", "mode=\"numpy\"", {n.f32({3}, {}), n.i64s({2, 2})}, {2, 2}));               // 11
  n.result(n.op("Squeeze", "opset1", "", {n.op("Unsqueeze", "opset1", "", {p, n.i64s({1})}, {2, 1, 3, 4}), n.i64s({1})}, {2, 3, 4})); // 12
  auto y = run_ir(n, {x});
  auto v = [&](std::size_t k) { return floats(y[k]); };
  BOOST_TEST((y[0].get_shape() == Shape{2, 12}));
  BOOST_TEST(v(0) == floats(x), boost::test_tools::per_element());
  BOOST_TEST((y[1].get_shape() == Shape{4, 2, 3}));
  BOOST_TEST(v(1)[1] == 4.0f); // [0, 0, 1] of the transposed: x[0, 1, 0]
  BOOST_TEST((y[2].get_shape() == Shape{2, 6, 4}));
  BOOST_TEST((y[3].get_shape() == Shape{1, 2, 3, 4}));
  BOOST_TEST(v(4) == (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 12, 13, 14, 15}), boost::test_tools::per_element());
  BOOST_TEST(v(5) == (std::vector<float>{2, 3, 4}), boost::test_tools::per_element());
  BOOST_TEST((y[6].get_shape() == Shape{3, 2}));
  BOOST_TEST(v(6) == (std::vector<float>{13, 15, 17, 19, 21, 23}), boost::test_tools::per_element());
  BOOST_TEST(v(7) == (std::vector<float>{3, 1, 7, 5, 11, 9, 15, 13, 19, 17, 23, 21}), boost::test_tools::per_element());
  BOOST_TEST((y[8].get_shape() == Shape{2, 3, 3}));
  BOOST_TEST(v(8)[0] == 1.0f);
  BOOST_TEST((y[9].get_shape() == Shape{2, 4, 5}));
  BOOST_TEST(v(9)[0] == -1.0f);
  BOOST_TEST(v(9)[5] == 0.0f);
  BOOST_TEST(v(10) == (std::vector<float>{5.5f, 17.5f}), boost::test_tools::per_element());
  BOOST_TEST(v(11) == (std::vector<float>{3, 3, 3, 3}), boost::test_tools::per_element());
  BOOST_TEST(v(12) == floats(x), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(interpolate_4_and_11) {
  Tensor x = tests::random_tensor({1, 2, 3, 4}, 41);
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {1, 2, 3, 4});
  n.result(n.op("Interpolate", "opset4",
                "mode=\"nearest\" shape_calculation_mode=\"scales\" coordinate_transformation_mode=\"asymmetric\" nearest_mode=\"floor\" antialias=\"false\" pads_begin=\"0,0,0,0\" pads_end=\"0,0,0,0\" cube_coeff=\"-0.75\"",
                {p, n.i64s({6, 8}), n.f32({2, 2}, {2}), n.i64s({2, 3})}, {1, 2, 6, 8}));
  n.result(n.op("Interpolate", "opset11",
                "mode=\"linear_onnx\" shape_calculation_mode=\"sizes\" coordinate_transformation_mode=\"half_pixel\" antialias=\"false\"",
                {p, n.i64s({5, 7}), n.i64s({2, 3})}, {1, 2, 5, 7}));
  tests::builder b;
  auto bx = b.input({1, 2, 3, 4});
  Tensor scales = f32_tensor({4}, {1, 1, 2, 2});
  b.output(b.op("Resize", {bx, graph::no_value, b.constant(scales)},
                {{"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", std::string("floor")}}));
  b.output(b.op("Resize", {bx, graph::no_value, graph::no_value, b.i64s({1, 2, 5, 7})},
                {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("half_pixel")}}));
  expect_same(n, b.g, {x}, 1e-6, "Interpolate");
}

/// f16 and i8 weights (Const then Convert, a dequantizing Multiply) and FakeQuantize.
BOOST_AUTO_TEST_CASE(compressed_weights_and_fake_quantize) {
  Tensor h(element_type::f16, {3});
  for (int i = 0; i < 3; ++i) h.data<uint16_t>()[i] = float_to_half_bits(std::vector<float>{0.5f, -2.0f, 1024.0f}[static_cast<std::size_t>(i)]);
  Tensor q(element_type::i8, {3});
  for (int i = 0; i < 3; ++i) q.data<int8_t>()[i] = static_cast<int8_t>(std::vector<int>{-128, 3, 127}[static_cast<std::size_t>(i)]);
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {3});
  auto wh = n.op("Convert", "opset1", "destination_type=\"f32\"", {n.constant(h, "FP16", "f16")}, {3});
  auto wq = n.op("Multiply", "opset1", "", {n.op("Convert", "opset1", "destination_type=\"f32\"", {n.constant(q, "I8", "i8")}, {3}), n.f32({0.5f}, {})}, {3});
  n.result(n.op("Add", "opset1", "", {p, wh}, {3}));
  n.result(n.op("Multiply", "opset1", "", {p, wq}, {3}));
  n.result(n.op("FakeQuantize", "opset1", "levels=\"5\" auto_broadcast=\"numpy\"",
                {p, n.f32({0}, {}), n.f32({2}, {}), n.f32({-1}, {}), n.f32({1}, {})}, {3}));
  auto y = run_ir(n, {f32_tensor({3}, {1.0f, 0.375f, 5.0f})});
  BOOST_TEST(floats(y[0]) == (std::vector<float>{1.5f, -1.625f, 1029.0f}), boost::test_tools::per_element());
  BOOST_TEST(floats(y[1]) == (std::vector<float>{-64.0f, 0.5625f, 317.5f}), boost::test_tools::per_element());
  // levels 5 over [0, 2]: steps of 0.5 -> outputs -1, -0.5, 0, 0.5, 1; 0.375 rounds to step 1 (0.5)
  BOOST_TEST(floats(y[2]) == (std::vector<float>{0.0f, -0.5f, 1.0f}), boost::test_tools::per_element());
}

/// FakeQuantize as its specification computes it, element by element (ranges of one value or
/// one per channel along axis 1 of [N, C, H, W]).
std::vector<float> fake_quantized(const Tensor& x, const std::vector<float>& il, const std::vector<float>& ih, int levels) {
  const Shape& s = x.get_shape();
  std::vector<float> r(static_cast<std::size_t>(x.get_size()));
  const int64_t hw = s[2] * s[3];
  for (std::size_t i = 0; i < r.size(); ++i) {
    const std::size_t c = il.size() == 1 ? 0 : static_cast<std::size_t>((static_cast<int64_t>(i) / hw) % s[1]);
    const double lo = il[c], hi = ih[c], v = std::clamp(static_cast<double>(x.data<float>()[i]), lo, hi);
    const double q = std::nearbyint((v - lo) / (hi - lo) * (levels - 1));
    r[i] = static_cast<float>(q / (levels - 1) * (hi - lo) + lo);
  }
  return r;
}

BOOST_AUTO_TEST_CASE(fake_quantize_on_the_grid_reads_as_quantize_dequantize) {
  // NNCF/POT write 256-level FakeQuantize with equal input and output ranges whose zero lies on
  // the grid: QuantizeLinear + DequantizeLinear (what the int8 kernels take). Any other stays the
  // decomposed form. Both compute what the specification says, on REFERENCE and CPU.
  struct fq_case {
    std::vector<float> il, ih;
    int levels;
    bool qdq;
  };
  const std::vector<fq_case> cases{
      {{-1.28f}, {1.27f}, 256, true},                    // symmetric, zero point 128
      {{0.f, 0.f, 0.f}, {2.55f, 0.51f, 5.1f}, 256, true}, // per channel, zero point 0
      {{-1.003f}, {1.5f}, 256, false},                   // zero off the grid
      {{-1.28f}, {1.27f}, 255, false},                   // 255 levels
  };
  Tensor x = tests::random_tensor({1, 3, 4, 5}, 61);
  for (int64_t k = 0; k < x.get_size(); ++k) x.data<float>()[k] *= 4; // beyond every range
  for (std::size_t i = 0; i < cases.size(); ++i) {
    BOOST_TEST_CONTEXT("case " << i) {
      const auto& c = cases[i];
      ir_net n;
      const Shape rs = c.il.size() == 1 ? Shape{} : Shape{1, 3, 1, 1};
      auto p = n.param("x", "FP32", "f32", {1, 3, 4, 5});
      auto lo = n.f32(c.il, rs), hi = n.f32(c.ih, rs);
      n.result(n.op("FakeQuantize", "opset1", "levels=\"" + std::to_string(c.levels) + "\" auto_broadcast=\"numpy\"", {p, lo, hi, lo, hi},
                    {1, 3, 4, 5}));
      Core core;
      Model m = core.read_ir_from_memory(n.xml(), n.bin.data(), n.bin.size(), "fq.xml");
      int quantize = 0;
      for (auto& op : m.get_ops()) quantize += op.get_type_name() == "QuantizeLinear";
      BOOST_TEST(quantize == (c.qdq ? 1 : 0));
      const auto want = fake_quantized(x, c.il, c.ih, c.levels);
      for (const std::string device : {"REFERENCE", "CPU"}) {
        auto req = core.compile_model(m, device).create_infer_request();
        req.set_tensor("x", x);
        req.infer();
        const auto got = floats(req.get_tensor(m.output().get_any_name()));
        double err = 0;
        for (std::size_t k = 0; k < got.size(); ++k) err = std::max(err, static_cast<double>(std::abs(got[k] - want[k])));
        BOOST_TEST(err <= 1e-5, device << ": max error " << err);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(int8_ir_runs_on_int8_kernels) {
  // OpenVINO's int8 IR of a separable block as POT writes it: FakeQuantize on activations (per
  // tensor, and per channel ahead of the depthwise convolution), int8 weights as Convert, a
  // Subtract of a zero point that is 0 up to its float residue (+-2^-17), a per-channel Multiply.
  // The CPU runs both convolutions as int8 primitives (where int8 products are exact: VNNI) and
  // agrees with REFERENCE within one output step.
  const int64_t c = 12;
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {1, 8, 10, 10});
  auto fq = [&](const ir_net::port_ref& v, std::vector<float> lo, std::vector<float> hi, std::vector<int64_t> dims) {
    const Shape rs = lo.size() == 1 ? Shape{} : Shape{1, static_cast<int64_t>(lo.size()), 1, 1};
    auto l = n.f32(lo, rs), h = n.f32(hi, rs);
    return n.op("FakeQuantize", "opset1", "levels=\"256\" auto_broadcast=\"numpy\"", {v, l, h, l, h}, dims);
  };
  auto weights = [&](Shape ws, unsigned seed) {
    Tensor q = tests::random_tensor(ws, seed);
    Tensor qi(element_type::i8, ws);
    for (int64_t k = 0; k < q.get_size(); ++k) qi.data<int8_t>()[k] = static_cast<int8_t>(std::lround(q.data<float>()[k] * 127));
    std::vector<float> zp(static_cast<std::size_t>(ws[0])), sc(zp.size());
    for (std::size_t o = 0; o < zp.size(); ++o) {
      zp[o] = o % 3 == 0 ? 0.f : (o % 3 == 1 ? 1.f : -1.f) * 7.62939453125e-06f;
      sc[o] = 0.004f + 0.001f * static_cast<float>(o);
    }
    std::vector<int64_t> dims(ws.begin(), ws.end());
    auto conv = n.op("Convert", "opset1", "destination_type=\"f32\"", {n.constant(qi, "I8", "i8")}, dims);
    auto sub = n.op("Subtract", "opset1", "auto_broadcast=\"numpy\"", {conv, n.f32(zp, {ws[0], 1, 1, 1})}, dims);
    return n.op("Multiply", "opset1", "auto_broadcast=\"numpy\"", {sub, n.f32(sc, {ws[0], 1, 1, 1})}, dims);
  };
  auto x = fq(p, {-1.28f}, {1.27f}, {1, 8, 10, 10});
  auto y = n.op("Convolution", "opset1", "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" auto_pad=\"explicit\"",
                {x, weights({c, 8, 1, 1}, 63)}, {1, c, 10, 10});
  std::vector<float> bias(c);
  for (int64_t o = 0; o < c; ++o) bias[static_cast<std::size_t>(o)] = 0.05f * static_cast<float>(o % 5) - 0.1f;
  y = n.op("Add", "opset1", "auto_broadcast=\"numpy\"", {y, n.f32(bias, {1, c, 1, 1})}, {1, c, 10, 10});
  y = n.op("ReLU", "opset1", "", {y}, {1, c, 10, 10});
  std::vector<float> zeros(c, 0.f), highs(c);
  for (int64_t o = 0; o < c; ++o) highs[static_cast<std::size_t>(o)] = 0.255f * static_cast<float>(1 + o % 4);
  y = fq(y, zeros, highs, {1, c, 10, 10});
  auto dw = n.op("Reshape", "opset1", "special_zero=\"false\"", {weights({c, 1, 3, 3}, 65), n.i64s({c, 1, 1, 3, 3})}, {c, 1, 1, 3, 3});
  y = n.op("GroupConvolution", "opset1", "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" auto_pad=\"explicit\"",
           {y, dw}, {1, c, 10, 10});
  n.result(fq(y, {-2.56f}, {2.54f}, {1, c, 10, 10}));
  Core core;
  Model m = core.read_ir_from_memory(n.xml(), n.bin.data(), n.bin.size(), "int8_block.xml");
  Tensor in = tests::random_tensor({1, 8, 10, 10}, 67);
  std::map<std::string, std::vector<float>> out;
  int int8_steps = 0;
  for (const std::string device : {"REFERENCE", "CPU"}) {
    auto req = core.compile_model(m, device, {enable_profiling(device == "CPU")}).create_infer_request();
    req.set_tensor("x", in);
    req.infer();
    out[device] = floats(req.get_tensor(m.output().get_any_name()));
    if (device == "CPU")
      for (const auto& pi : req.get_profiling_info()) int8_steps += pi.exec_type.find(" int8") != std::string::npos;
  }
  const double step = 5.1 / 255;
  double worst = 0;
  std::size_t off = 0;
  for (std::size_t k = 0; k < out["CPU"].size(); ++k) {
    const double d = std::abs(out["CPU"][k] - out["REFERENCE"][k]) / step;
    worst = std::max(worst, d);
    off += d > 1e-3;
  }
  BOOST_TEST_MESSAGE("int8 IR block: " << int8_steps << " int8 steps; CPU vs REFERENCE worst " << worst << " steps, " << off << " of "
                                        << out["CPU"].size() << " differ");
  BOOST_TEST(worst <= 1.001);
  BOOST_TEST(off <= out["CPU"].size() / 50 + 1);
  BOOST_TEST(int8_steps == (kernels::cpu::int8_exact_here() ? 2 : 0));
}

/// LSTMSequence-5, GRUSequence-5 (with and without linear_before_reset) and RNNSequence-5 against
/// ONNX's LSTM / GRU / RNN written independently: sequence-first (layout 0, transposes around
/// it), the gates regrouped here from IR's order (LSTM: f, i, c, o -> i, o, f, c) and IR's
/// biases split into ONNX's W and R biases; one sequence shorter than the other.
BOOST_AUTO_TEST_CASE(recurrent_sequences) {
  struct rnn_case {
    std::string ir, onnx, direction;
    int64_t gates;
    bool lbr;
  };
  const int64_t batch = 2, seq = 5, in = 3, hid = 4;
  for (const rnn_case& c : {rnn_case{"LSTMSequence", "LSTM", "bidirectional", 4, false}, rnn_case{"LSTMSequence", "LSTM", "forward", 4, false}, rnn_case{"GRUSequence", "GRU", "forward", 3, false},
                            rnn_case{"GRUSequence", "GRU", "reverse", 3, true}, rnn_case{"RNNSequence", "RNN", "reverse", 1, false}}) {
    BOOST_TEST_CONTEXT(c.ir << " " << c.direction << (c.lbr ? " linear_before_reset" : "")) {
      const bool lstm = c.onnx == "LSTM";
      const int64_t dirs = c.direction == "bidirectional" ? 2 : 1, gh = c.gates * hid, nb = c.lbr ? 4 * hid : gh;
      Tensor W = tests::random_tensor({dirs, gh, in}, 81), R = tests::random_tensor({dirs, gh, hid}, 82), B = tests::random_tensor({dirs, nb}, 83);
      Tensor lens(element_type::i64, {batch});
      lens.data<int64_t>()[0] = seq;
      lens.data<int64_t>()[1] = 3;
      ir_net n;
      auto x = n.param("x", "FP32", "f32", {batch, seq, in});
      auto h0 = n.param("h0", "FP32", "f32", {batch, dirs, hid});
      std::vector<ir_net::port_ref> ins{x, h0};
      if (lstm) ins.push_back(n.param("c0", "FP32", "f32", {batch, dirs, hid}));
      ins.push_back(n.constant(lens, "I64", "i64"));
      ins.push_back(n.constant(W, "FP32", "f32"));
      ins.push_back(n.constant(R, "FP32", "f32"));
      ins.push_back(n.constant(B, "FP32", "f32"));
      std::vector<std::tuple<std::string, std::vector<int64_t>, std::string>> outs{{"FP32", {batch, dirs, seq, hid}, ""}, {"FP32", {batch, dirs, hid}, ""}};
      if (lstm) outs.push_back({"FP32", {batch, dirs, hid}, ""});
      std::string data = "hidden_size=\"4\" direction=\"" + c.direction + "\"";
      if (c.onnx == "GRU") data += std::string(" linear_before_reset=\"") + (c.lbr ? "true" : "false") + "\"";
      auto y = n.layer(c.ir, "opset5", data, ins, outs);
      for (auto& o : y) n.result(o);
      // ONNX: the gate blocks of IR's rows in ONNX's order.
      const std::vector<int64_t> order = lstm ? std::vector<int64_t>{1, 3, 0, 2} : c.gates == 3 ? std::vector<int64_t>{0, 1, 2} : std::vector<int64_t>{0};
      auto regroup = [&](const Tensor& t) {
        Tensor r(element_type::f32, t.get_shape());
        const int64_t cols = t.get_shape().size() == 3 ? t.get_shape()[2] : 1;
        for (int64_t d = 0; d < dirs; ++d)
          for (int64_t g = 0; g < c.gates; ++g)
            std::copy_n(t.data<float>() + (d * gh + order[static_cast<std::size_t>(g)] * hid) * cols, hid * cols,
                        r.data<float>() + (d * gh + g * hid) * cols);
        return r;
      };
      Tensor ob(element_type::f32, {dirs, 2 * gh}); // W's biases, then R's
      std::fill(ob.data<float>(), ob.data<float>() + ob.get_size(), 0.0f);
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t g = 0; g < c.gates; ++g)
          for (int64_t k = 0; k < hid; ++k) {
            const int64_t from = c.lbr ? g * hid + k : order[static_cast<std::size_t>(g)] * hid + k;
            ob.data<float>()[d * 2 * gh + g * hid + k] = B.data<float>()[d * nb + from];
            if (c.lbr && g == 2) ob.data<float>()[d * 2 * gh + gh + 2 * hid + k] = B.data<float>()[d * nb + 3 * hid + k];
          }
      tests::builder b;
      auto bx = b.input({batch, seq, in}), bh = b.input({batch, dirs, hid});
      const std::vector<int64_t> swap{1, 0, 2};
      std::vector<graph::ValueId> oin{b.op("Transpose", {bx}, {{"perm", swap}}), b.constant(regroup(W)), b.constant(regroup(R)), b.constant(ob)};
      Tensor lens32(element_type::i32, {batch});
      lens32.data<int32_t>()[0] = seq;
      lens32.data<int32_t>()[1] = 3;
      oin.push_back(b.constant(lens32));
      oin.push_back(b.op("Transpose", {bh}, {{"perm", swap}}));
      if (lstm) oin.push_back(b.op("Transpose", {b.input({batch, dirs, hid})}, {{"perm", swap}}));
      std::map<std::string, graph::AttributeValue> a{{"hidden_size", hid}, {"direction", c.direction}};
      if (c.onnx == "GRU") a["linear_before_reset"] = int64_t{c.lbr};
      b.op(c.onnx, oin, a, lstm ? 3 : 2);
      const auto res = b.g.ops.back().outputs;
      b.output(b.op("Transpose", {res[0]}, {{"perm", std::vector<int64_t>{2, 1, 0, 3}}}));
      for (std::size_t k = 1; k < res.size(); ++k) b.output(b.op("Transpose", {res[k]}, {{"perm", swap}}));
      std::vector<Tensor> inputs{tests::random_tensor({batch, seq, in}, 84), tests::random_tensor({batch, dirs, hid}, 85)};
      if (lstm) inputs.push_back(tests::random_tensor({batch, dirs, hid}, 86));
      expect_same(n, b.g, inputs, 1e-6, c.ir);
    }
  }
}

/// LSTMCell-4, GRUCell-3 (with linear_before_reset) and RNNCell-1: one step, against ONNX's
/// LSTM / GRU / RNN of one step in the sequence-first layout, gates regrouped by the test.
BOOST_AUTO_TEST_CASE(recurrent_cells) {
  struct cell_case {
    std::string ir, version, onnx;
    int64_t gates;
    bool lbr, peepholes = false;
  };
  const int64_t batch = 3, in = 5, hid = 4;
  for (const cell_case& c : {cell_case{"LSTMCell", "opset4", "LSTM", 4, false}, cell_case{"GRUCell", "opset3", "GRU", 3, true},
                             cell_case{"RNNCell", "opset1", "RNN", 1, false}, cell_case{"LSTMCell", "opset1", "LSTM", 4, false, true}}) {
    BOOST_TEST_CONTEXT(c.ir << " " << c.version) {
      const bool lstm = c.onnx == "LSTM";
      const int64_t gh = c.gates * hid, nb = c.lbr ? 4 * hid : gh;
      Tensor W = tests::random_tensor({gh, in}, 91), R = tests::random_tensor({gh, hid}, 92), B = tests::random_tensor({nb}, 93);
      ir_net n;
      std::vector<ir_net::port_ref> ins{n.param("x", "FP32", "f32", {batch, in}), n.param("h", "FP32", "f32", {batch, hid})};
      if (lstm) ins.push_back(n.param("c", "FP32", "f32", {batch, hid}));
      ins.push_back(n.constant(W, "FP32", "f32"));
      ins.push_back(n.constant(R, "FP32", "f32"));
      ins.push_back(n.constant(B, "FP32", "f32"));
      const Tensor P = tests::random_tensor({3 * hid}, 97); // input, output, forget: ONNX's order
      if (c.peepholes) ins.push_back(n.constant(P, "FP32", "f32"));
      std::vector<std::tuple<std::string, std::vector<int64_t>, std::string>> outs{{"FP32", {batch, hid}, ""}};
      if (lstm) outs.push_back({"FP32", {batch, hid}, ""});
      std::string data = "hidden_size=\"4\"";
      if (c.onnx == "GRU") data += std::string(" linear_before_reset=\"") + (c.lbr ? "true" : "false") + "\"";
      for (auto& o : n.layer(c.ir, c.version, data, ins, outs)) n.result(o);
      const std::vector<int64_t> order = lstm ? std::vector<int64_t>{1, 3, 0, 2} : c.gates == 3 ? std::vector<int64_t>{0, 1, 2} : std::vector<int64_t>{0};
      auto regroup = [&](const Tensor& t) { // [gh, cols] -> [1, gh, cols] in ONNX's gate order
        const int64_t cols = t.get_shape()[1];
        Tensor r(element_type::f32, {1, gh, cols});
        for (int64_t g = 0; g < c.gates; ++g)
          std::copy_n(t.data<float>() + order[static_cast<std::size_t>(g)] * hid * cols, hid * cols, r.data<float>() + g * hid * cols);
        return r;
      };
      Tensor ob(element_type::f32, {1, 2 * gh});
      std::fill(ob.data<float>(), ob.data<float>() + ob.get_size(), 0.0f);
      for (int64_t g = 0; g < c.gates; ++g)
        for (int64_t k = 0; k < hid; ++k) {
          ob.data<float>()[g * hid + k] = B.data<float>()[(c.lbr ? g : order[static_cast<std::size_t>(g)]) * hid + k];
          if (c.lbr && g == 2) ob.data<float>()[gh + 2 * hid + k] = B.data<float>()[3 * hid + k];
        }
      tests::builder b;
      auto step = [&](graph::ValueId v, int64_t last) { return b.op("Reshape", {v, b.i64s({1, batch, last})}); };
      std::vector<graph::ValueId> oin{step(b.input({batch, in}), in), b.constant(regroup(W)), b.constant(regroup(R)), b.constant(ob), graph::no_value,
                                      step(b.input({batch, hid}), hid)};
      if (lstm) oin.push_back(step(b.input({batch, hid}), hid));
      if (c.peepholes) oin.push_back(b.constant(P.reshaped({1, 3 * hid})));
      std::map<std::string, graph::AttributeValue> a{{"hidden_size", hid}};
      if (c.onnx == "GRU") a["linear_before_reset"] = int64_t{c.lbr};
      b.op(c.onnx, oin, a, lstm ? 3 : 2);
      const auto res = b.g.ops.back().outputs;
      for (std::size_t k = 1; k < res.size(); ++k) b.output(b.op("Reshape", {res[k], b.i64s({batch, hid})}));
      std::vector<Tensor> inputs{tests::random_tensor({batch, in}, 94), tests::random_tensor({batch, hid}, 95)};
      if (lstm) inputs.push_back(tests::random_tensor({batch, hid}, 96));
      expect_same(n, b.g, inputs, 1e-6, c.ir);
    }
  }
}

/// NonMaxSuppression-5 and -9 on boxes whose results were worked out by hand: a score equal to
/// score_threshold is kept (OpenVINO's >=, ONNX's > would drop box 5 of batch 0 class 0),
/// selected_scores and valid_outputs, the sort across batches and classes (5, default) or
/// ONNX's batch/class order (9, sort_result_descending false), i32 and i64 outputs; run by the
/// interpreter and by the CPU device. Soft-NMS is refused by name.
BOOST_AUTO_TEST_CASE(non_max_suppression_5_and_9) {
  const std::vector<float> one_image{0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101};
  std::vector<float> boxes = one_image;
  boxes.insert(boxes.end(), one_image.begin(), one_image.end());
  const std::vector<float> scores{0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f,  0.35f, 0.2f, 0.1f, 0.4f, 0.45f, 0.05f,
                                  0.3f, 0.31f, 0.2f, 0.1f,  0.99f, 0.2f, 0.2f,  0.2f, 0.2f, 0.2f, 0.2f,  0.2f};
  // (batch, class, box, score) in ONNX's order.
  const std::vector<std::array<float, 4>> onnx_order{{0, 0, 3, 0.95f}, {0, 0, 0, 0.9f},  {0, 0, 5, 0.3f}, {0, 1, 4, 0.45f},
                                                     {0, 1, 0, 0.35f}, {1, 0, 4, 0.99f}, {1, 0, 1, 0.31f}};
  const std::vector<std::array<float, 4>> by_score{{1, 0, 4, 0.99f}, {0, 0, 3, 0.95f}, {0, 0, 0, 0.9f},  {0, 1, 4, 0.45f},
                                                   {0, 1, 0, 0.35f}, {1, 0, 1, 0.31f}, {0, 0, 5, 0.3f}};
  const std::vector<Tensor> in{f32_tensor({2, 6, 4}, boxes), f32_tensor({2, 2, 6}, scores)};
  struct variant {
    std::string version, data;
    const std::vector<std::array<float, 4>>* want;
    bool i32;
  };
  for (const auto& c : {variant{"opset5", "output_type=\"i32\"", &by_score, true},
                        variant{"opset9", "sort_result_descending=\"false\" box_encoding=\"corner\"", &onnx_order, false}}) {
    BOOST_TEST_CONTEXT(c.version) {
      ir_net n;
      auto bx = n.param("boxes", "FP32", "f32", {2, 6, 4});
      auto sc = n.param("scores", "FP32", "f32", {2, 2, 6});
      const std::string ip = c.i32 ? "I32" : "I64";
      auto outs = n.layer("NonMaxSuppression", c.version, c.data,
                          {bx, sc, n.i64({3}), n.f32({0.5f}, {}), n.f32({0.3f}, {}), n.f32({0.0f}, {})},
                          {{ip, {-1, 3}, "selected_indices"}, {"FP32", {-1, 3}, "selected_scores"}, {ip, {1}, "valid_outputs"}});
      for (const auto& o : outs) n.result(o);
      auto check = [&](const std::vector<Tensor>& got, const std::string& where) {
        BOOST_TEST_REQUIRE(got.size() == 3u, where);
        const auto k = static_cast<int64_t>(c.want->size());
        BOOST_TEST((got[0].get_shape() == Shape{k, 3}), where << " " << to_string(got[0].get_shape()));
        BOOST_TEST((got[1].get_shape() == Shape{k, 3}), where);
        BOOST_TEST((got[2].get_shape() == Shape{1}), where);
        BOOST_TEST((got[0].get_element_type() == (c.i32 ? element_type::i32 : element_type::i64)), where);
        auto index = [&](const Tensor& t, int64_t i) {
          return c.i32 ? int64_t{t.data<int32_t>()[i]} : t.data<int64_t>()[i];
        };
        BOOST_TEST(index(got[2], 0) == k, where);
        for (int64_t r = 0; r < k && got[0].get_size() == 3 * k && got[1].get_size() == 3 * k; ++r) {
          const auto& w = (*c.want)[static_cast<std::size_t>(r)];
          for (int64_t j = 0; j < 3; ++j) BOOST_TEST(index(got[0], 3 * r + j) == static_cast<int64_t>(w[static_cast<std::size_t>(j)]), where << " row " << r);
          BOOST_TEST(got[1].data<float>()[3 * r] == w[0], where << " row " << r);
          BOOST_TEST(got[1].data<float>()[3 * r + 1] == w[1], where << " row " << r);
          BOOST_TEST(got[1].data<float>()[3 * r + 2] == w[3], where << " row " << r);
        }
      };
      const auto interpreted = interpret_ir(n, in);
      check(interpreted, "interpreter");
      expect_written_back_alike(n, in, interpreted); // ONNX's op written as NonMaxSuppression-9
      check(run_on_cpu(n, "nms.xml", {{"boxes", in[0]}, {"scores", in[1]}}, {"selected_indices", "selected_scores", "valid_outputs"}),
            "CPU");
    }
  }
  ir_net soft;
  auto bx = soft.param("boxes", "FP32", "f32", {1, 6, 4});
  auto sc = soft.param("scores", "FP32", "f32", {1, 1, 6});
  auto o = soft.layer("NonMaxSuppression", "opset9", "", {bx, sc, soft.i64({3}), soft.f32({0.5f}, {}), soft.f32({0.0f}, {}), soft.f32({0.5f}, {})},
                      {{"I64", {-1, 3}, ""}, {"FP32", {-1, 3}, ""}, {"I64", {1}, ""}});
  for (const auto& p : o) soft.result(p);
  tests::expect_error([&] { soft.read("soft_nms.xml"); }, {"'soft_nms.xml'", "NonMaxSuppression", "soft_nms_sigma 0.5", "Soft-NMS"});
}

/// If-8: the bodies read the If's inputs through their port maps (input 2 by the then body
/// only), each gives the output; on the interpreter and the CPU, with both conditions.
BOOST_AUTO_TEST_CASE(if_8) {
  ir_net then_body, else_body;
  {
    auto a = then_body.param("a", "FP32", "f32", {2, 3}), b = then_body.param("b", "FP32", "f32", {2, 3});
    then_body.result(then_body.op("Add", "opset1", "", {a, b}, {2, 3}));          // layers 0, 1, 2, 3
    auto x = else_body.param("a", "FP32", "f32", {2, 3});
    else_body.result(else_body.op("Negative", "opset1", "", {x}, {2, 3}));        // layers 0, 1, 2
  }
  ir_net n;
  auto c = n.param("cond", "BOOL", "boolean", {});
  auto x = n.param("x", "FP32", "f32", {2, 3});
  auto y = n.param("y", "FP32", "f32", {2, 3});
  const std::string extra =
      "<then_port_map><input external_port_id=\"1\" internal_layer_id=\"0\"/><input external_port_id=\"2\" "
      "internal_layer_id=\"1\"/><output external_port_id=\"3\" internal_layer_id=\"3\"/></then_port_map>"
      "<else_port_map><input external_port_id=\"1\" internal_layer_id=\"0\"/><output external_port_id=\"3\" "
      "internal_layer_id=\"2\"/></else_port_map><then_body>" + then_body.inner() + "</then_body><else_body>" +
      else_body.inner() + "</else_body>";
  auto out = n.layer("If", "opset8", "", {c, x, y}, {{"FP32", {2, 3}, "z"}}, "if", extra);
  n.result(out[0]);
  write_fuzz_seed(n, "if_8");
  const Tensor tx = f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6}), ty = f32_tensor({2, 3}, {10, 20, 30, 40, 50, 60});
  for (bool cond : {true, false}) {
    BOOST_TEST_CONTEXT("cond " << cond) {
      Tensor tc(element_type::boolean, Shape{});
      tc.data<bool>()[0] = cond;
      std::vector<float> want(6);
      for (std::size_t i = 0; i < 6; ++i) want[i] = cond ? tx.data<float>()[i] + ty.data<float>()[i] : -tx.data<float>()[i];
      expect_close(interpret_ir(n, {tc, tx, ty}).at(0), f32_tensor({2, 3}, want), 0, "interpreter");
      expect_close(run_on_cpu(n, "if.xml", {{"cond", tc}, {"x", tx}, {"y", ty}}, {"z"}).at(0), f32_tensor({2, 3}, want), 0,
                   "CPU");
    }
  }
  // A body Parameter that no input feeds.
  ir_net bad;
  auto bc = bad.param("cond", "BOOL", "boolean", {});
  auto bx = bad.param("x", "FP32", "f32", {2, 3});
  auto bo = bad.layer("If", "opset8", "", {bc, bx}, {{"FP32", {2, 3}, "z"}}, "if",
                      "<then_port_map><output external_port_id=\"2\" internal_layer_id=\"3\"/></then_port_map>"
                      "<else_port_map><input external_port_id=\"1\" internal_layer_id=\"0\"/><output external_port_id=\"2\" "
                      "internal_layer_id=\"2\"/></else_port_map><then_body>" + then_body.inner() + "</then_body><else_body>" +
                          else_body.inner() + "</else_body>");
  bad.result(bo[0]);
  tests::expect_error([&] { bad.read("if_unfed.xml"); }, {"'if_unfed.xml'", "If", "then_body", "Parameter"});
}

/// TensorIterator-1 as a recurrent step the way converters write one: the sequence sliced on
/// axis 1 (Squeeze in the body), a state fed back, an invariant input, the outputs concatenated
/// on axis 1 (Unsqueeze in the body), the final state and the last value of a non-state result;
/// forwards and backwards (stride -1 on input and output). Against the loop written out here.
BOOST_AUTO_TEST_CASE(tensor_iterator_1) {
  const int64_t B = 2, T = 4, F = 3;
  const Tensor tx = tests::random_tensor({B, T, F}, 21), th = tests::random_tensor({B, F}, 22),
               tw = tests::random_tensor({B, F}, 23);
  for (int stride : {1, -1}) {
    BOOST_TEST_CONTEXT("stride " << stride) {
      ir_net n;
      auto x = n.param("x", "FP32", "f32", {B, T, F});
      auto h0 = n.param("h0", "FP32", "f32", {B, F});
      auto w = n.param("w", "FP32", "f32", {B, F});
      ir_net body;
      body.bin = std::move(n.bin); // the body's constants live in the same .bin
      auto xs = body.param("xs", "FP32", "f32", {B, 1, F});  // layer 0
      auto h = body.param("h", "FP32", "f32", {B, F});       // layer 1
      auto bw = body.param("w", "FP32", "f32", {B, F});      // layer 2
      auto sq = body.op("Squeeze", "opset1", "", {xs, body.i64s({1})}, {B, F});            // 3 (const), 4
      auto t = body.op("Add", "opset1", "", {sq, h}, {B, F});                             // 5
      auto hn = body.op("Tanh", "opset1", "", {body.op("Multiply", "opset1", "", {t, bw}, {B, F})}, {B, F}); // 6, 7
      body.result(hn);                                                                    // 8
      body.result(body.op("Unsqueeze", "opset1", "", {hn, body.i64s({1})}, {B, 1, F}));   // 9 (const), 10, 11
      body.result(t);                                                                     // 12
      n.bin = std::move(body.bin);
      const std::string st = std::to_string(stride), se = stride == 1 ? "" : " start=\"-1\" end=\"0\"";
      const std::string extra =
          "<port_map><input external_port_id=\"0\" internal_layer_id=\"0\" axis=\"1\" part_size=\"1\" stride=\"" + st + "\"" + se +
          "/><input external_port_id=\"1\" internal_layer_id=\"1\"/><input external_port_id=\"2\" internal_layer_id=\"2\"/>"
          "<output external_port_id=\"3\" internal_layer_id=\"11\" axis=\"1\" part_size=\"1\" stride=\"" + st + "\"" + se +
          "/><output external_port_id=\"4\" internal_layer_id=\"8\"/><output external_port_id=\"5\" internal_layer_id=\"12\"/>"
          "</port_map><back_edges><edge from-layer=\"8\" to-layer=\"1\"/></back_edges><body>" + body.inner() + "</body>";
      auto outs = n.layer("TensorIterator", "opset1", "", {x, h0, w},
                          {{"FP32", {B, T, F}, "y"}, {"FP32", {B, F}, "h_last"}, {"FP32", {B, F}, "t_last"}}, "ti", extra);
      for (const auto& o : outs) n.result(o);
      write_fuzz_seed(n, "tensor_iterator_1_stride" + std::to_string(stride));
      // The loop, written out.
      std::vector<float> hv(th.data<float>(), th.data<float>() + B * F), tv(B * F), y(B * T * F);
      for (int64_t k = 0; k < T; ++k) {
        const int64_t s = stride == 1 ? k : T - 1 - k;
        for (int64_t bi = 0; bi < B; ++bi)
          for (int64_t f = 0; f < F; ++f) {
            const auto i = static_cast<std::size_t>(bi * F + f);
            tv[i] = tx.data<float>()[(bi * T + s) * F + f] + hv[i];
            hv[i] = std::tanh(tv[i] * tw.data<float>()[i]);
            y[static_cast<std::size_t>((bi * T + s) * F + f)] = hv[i];
          }
      }
      const std::vector<Tensor> want{f32_tensor({B, T, F}, y), f32_tensor({B, F}, hv), f32_tensor({B, F}, tv)};
      auto got = interpret_ir(n, {tx, th, tw});
      BOOST_TEST_REQUIRE(got.size() == 3u);
      for (std::size_t i = 0; i < 3; ++i) expect_close(got[i], want[i], 1e-6, "interpreter output " + std::to_string(i));
      got = run_on_cpu(n, "ti.xml", {{"x", tx}, {"h0", th}, {"w", tw}}, {"y", "h_last", "t_last"});
      for (std::size_t i = 0; i < 3; ++i) expect_close(got[i], want[i], 1e-6, "CPU output " + std::to_string(i));
    }
  }
}

/// Loop-5 running the same recurrent step for as long as its trip count and its body's
/// execution condition (iteration < 2) allow: trip count 4 (three iterations), -1 (none: three)
/// and 2 without the condition (two); the current_iteration Parameter as i64 [1], the sequence gathered per
/// iteration, outputs stacked on axis 1 (as many as ran), the final state and a last value.
BOOST_AUTO_TEST_CASE(loop_5) {
  const int64_t B = 2, T = 4, F = 3;
  const Tensor tx = tests::random_tensor({B, T, F}, 31), th = tests::random_tensor({B, F}, 32),
               tw = tests::random_tensor({B, F}, 33);
  for (int64_t trips : {4, -1, 2}) {
    BOOST_TEST_CONTEXT("trip count " << trips) {
      const int64_t runs = trips == 2 ? 2 : 3;
      ir_net n;
      auto x = n.param("x", "FP32", "f32", {B, T, F});
      auto h0 = n.param("h0", "FP32", "f32", {B, F});
      auto w = n.param("w", "FP32", "f32", {B, F});
      // Trip count -1 computed at run time (0 - 1): no limit, as a constant -1.
      auto trip = trips == -1 ? n.op("Subtract", "opset1", "", {n.i64({0}), n.i64({1})}, {}, "I64") : n.i64({trips});
      Tensor yes(element_type::boolean, Shape{});
      yes.data<bool>()[0] = true;
      auto go = n.constant(yes, "BOOL", "boolean");
      ir_net body;
      body.bin = std::move(n.bin);
      auto it = body.param("it", "I64", "i64", {1});          // layer 0
      auto xs = body.param("xs", "FP32", "f32", {B, 1, F});   // 1
      auto h = body.param("h", "FP32", "f32", {B, F});        // 2
      auto bw = body.param("w", "FP32", "f32", {B, F});       // 3
      auto sq = body.op("Squeeze", "opset1", "", {xs, body.i64s({1})}, {B, F});                              // 4, 5
      auto t = body.op("Add", "opset1", "", {sq, h}, {B, F});                                               // 6
      auto hn = body.op("Tanh", "opset1", "", {body.op("Multiply", "opset1", "", {t, bw}, {B, F})}, {B, F}); // 7, 8
      body.result(hn);                                                                                      // 9
      body.result(body.op("Unsqueeze", "opset1", "", {hn, body.i64s({1})}, {B, 1, F}));                     // 10, 11, 12
      body.result(t);                                                                                       // 13
      body.result(body.op("Less", "opset1", "", {it, body.i64({2}, {1})}, {1}, "BOOL"));                    // 14, 15, 16
      n.bin = std::move(body.bin);
      const std::string extra =
          std::string("<port_map><input external_port_id=\"2\" internal_layer_id=\"1\" axis=\"1\"/><input external_port_id=\"3\" "
          "internal_layer_id=\"2\"/><input external_port_id=\"4\" internal_layer_id=\"3\"/><input external_port_id=\"-1\" "
          "internal_layer_id=\"0\" purpose=\"current_iteration\"/><output external_port_id=\"5\" internal_layer_id=\"12\" "
          "axis=\"1\"/><output external_port_id=\"6\" internal_layer_id=\"9\"/><output external_port_id=\"7\" "
          "internal_layer_id=\"13\"/>") +
          // Trip count 2 alone stops the loop: no execution condition (always true).
          (trips == 2 ? "" : "<output external_port_id=\"-1\" internal_layer_id=\"16\" purpose=\"execution_condition\"/>") +
          "</port_map><back_edges><edge from-layer=\"9\" to-layer=\"2\"/></back_edges><body>" + body.inner() + "</body>";
      auto outs = n.layer("Loop", "opset5", "", {trip, go, x, h0, w},
                          {{"FP32", {B, -1, F}, "y"}, {"FP32", {B, F}, "h_last"}, {"FP32", {B, F}, "t_last"}}, "loop", extra);
      for (const auto& o : outs) n.result(o);
      if (trips == 4) write_fuzz_seed(n, "loop_5");
      std::vector<float> hv(th.data<float>(), th.data<float>() + B * F), tv(B * F), y(B * runs * F);
      for (int64_t s = 0; s < runs; ++s)
        for (int64_t bi = 0; bi < B; ++bi)
          for (int64_t f = 0; f < F; ++f) {
            const auto i = static_cast<std::size_t>(bi * F + f);
            tv[i] = tx.data<float>()[(bi * T + s) * F + f] + hv[i];
            hv[i] = std::tanh(tv[i] * tw.data<float>()[i]);
            y[static_cast<std::size_t>((bi * runs + s) * F + f)] = hv[i];
          }
      const std::vector<Tensor> want{f32_tensor({B, runs, F}, y), f32_tensor({B, F}, hv), f32_tensor({B, F}, tv)};
      auto got = interpret_ir(n, {tx, th, tw});
      BOOST_TEST_REQUIRE(got.size() == 3u);
      for (std::size_t i = 0; i < 3; ++i) expect_close(got[i], want[i], 1e-6, "interpreter output " + std::to_string(i));
      got = run_on_cpu(n, "loop.xml", {{"x", tx}, {"h0", th}, {"w", tw}}, {"y", "h_last", "t_last"});
      for (std::size_t i = 0; i < 3; ++i) expect_close(got[i], want[i], 1e-6, "CPU output " + std::to_string(i));
    }
  }
}

BOOST_AUTO_TEST_CASE(roi_align_3_and_9) {
  // X[c, h, w] = w: a region [0, 0, 3, 3], one bin, 2 x 2 samples. asymmetric samples x at 0.75
  // and 2.25 (mean 1.5); half_pixel shifts them by -0.5 (mean 1.0). The second region reads batch
  // 1 (X + 10). max mode is refused by name.
  Tensor x(element_type::f32, {2, 2, 4, 4});
  for (int64_t i = 0; i < x.get_size(); ++i) x.data<float>()[i] = static_cast<float>(i % 4 + (i >= 32 ? 10 : 0));
  for (const auto& [version, aligned, want] : {std::tuple{"opset3", "", 1.5f}, std::tuple{"opset9", "asymmetric", 1.5f},
                                                std::tuple{"opset9", "half_pixel", 1.0f}}) {
    BOOST_TEST_CONTEXT(version << " " << aligned) {
      ir_net n;
      auto p = n.param("x", "FP32", "f32", {2, 2, 4, 4});
      Tensor idx(element_type::i32, {2});
      idx.data<int32_t>()[0] = 0;
      idx.data<int32_t>()[1] = 1;
      std::string data = "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"avg\"";
      if (*aligned) data += std::string(" aligned_mode=\"") + aligned + "\"";
      n.result(n.op("ROIAlign", version, data, {p, n.f32({0, 0, 3, 3, 0, 0, 3, 3}, {2, 4}), n.constant(idx, "I32", "i32")}, {2, 2, 1, 1}));
      auto y = floats(run_ir(n, {x})[0]);
      BOOST_TEST_REQUIRE(y.size() == 4u);
      BOOST_TEST(y[0] == want, boost::test_tools::tolerance(1e-6f));
      BOOST_TEST(y[1] == want, boost::test_tools::tolerance(1e-6f));
      BOOST_TEST(y[2] == want + 10, boost::test_tools::tolerance(1e-6f));
    }
  }
  ir_net m;
  auto p = m.param("x", "FP32", "f32", {2, 2, 4, 4});
  Tensor idx(element_type::i32, {1});
  idx.data<int32_t>()[0] = 0;
  m.result(m.op("ROIAlign", "opset3", "pooled_h=\"1\" pooled_w=\"1\" sampling_ratio=\"2\" spatial_scale=\"1\" mode=\"max\"",
                {p, m.f32({0, 0, 3, 3}, {1, 4}), m.constant(idx, "I32", "i32")}, {1, 2, 1, 1}));
  tests::expect_error([&] { m.read("roi_max.xml"); }, {"'roi_max.xml'", "ROIAlign", "mode 'max'"});
}

BOOST_AUTO_TEST_CASE(dynamic_dims_names_and_rt_info) {
  ir_net n;
  auto p = n.param("pixel_values", "FP32", "f32", {-1, 3, -1, -1}, "?,3,1..64,-1");
  auto r = n.layer("Relu", "opset1", "", {p}, {{"FP32", {-1, 3, -1, -1}, "features,features_alias"}}, "relu_1",
                   "<rt_info><attribute name=\"fused_names\" version=\"0\" value=\"relu_1,bn_1\"/></rt_info>")[0];
  n.result(r, "features/sink_port_0");
  Core core;
  Model m = core.read_ir_from_memory(n.xml(), n.bin.data(), n.bin.size(), "dyn.xml");
  BOOST_TEST(m.input().get_any_name() == "pixel_values");
  // The bound is kept (OpenVINO's "1..64"), checked on every request, written back.
  BOOST_TEST(m.input().get_partial_shape().to_string() == "[?,3,1..64,?]");
  BOOST_TEST(m.output().get_any_name() == "features");
  BOOST_TEST(m.get_friendly_name() == "dyn");
  bool found = false;
  for (auto& op : m.get_ops())
    if (op.get_friendly_name() == "relu_1") {
      found = true;
      BOOST_TEST(op.get_type_name() == "Relu");
      BOOST_TEST(op.get_rt_info().at("fused_names") == "relu_1,bn_1");
    }
  BOOST_TEST(found);
  // and it runs at two sizes on CPU
  auto compiled = core.compile_model(m, "CPU");
  auto req = compiled.create_infer_request();
  for (int64_t s : {4, 9}) {
    Tensor x = tests::random_tensor({1, 3, s, 5}, 5);
    req.set_tensor("pixel_values", x);
    req.infer();
    Tensor y = req.get_tensor("features");
    BOOST_TEST((y.get_shape() == Shape{1, 3, s, 5}));
    BOOST_TEST(y.data<float>()[0] == std::max(0.0f, x.data<float>()[0]));
  }
  tests::expect_error([&] { req.set_tensor("pixel_values", tests::random_tensor({1, 3, 65, 5}, 5)); },
                      {"'pixel_values'", "[?,3,1..64,?]", "dimension 2 is 65", "outside 1..64"});
  const auto path = (std::filesystem::temp_directory_path() / "troupe_bounded_dims.xml").string();
  save_model(m, path);
  BOOST_TEST(core.read_model(path).input().get_partial_shape().to_string() == "[?,3,1..64,?]");
  std::filesystem::remove(path);
  std::filesystem::remove(std::filesystem::path(path).replace_extension(".bin"));
  tests::expect_error([&] {
    ir_net bad;
    bad.result(bad.param("x", "FP32", "f32", {-1}, "9..3"));
    bad.read("empty_range.xml");
  }, {"'empty_range.xml'", "'9..3'", "empty range"});
}

BOOST_AUTO_TEST_CASE(unsupported_ops_are_listed_in_one_error) {
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {1, 4});
  auto a = n.op("Proposal", "opset4", "", {p}, {1, 4});
  auto b = n.op("Relu", "opset99", "", {a}, {1, 4});
  auto c = n.op("NoSuchOp", "opset3", "", {b}, {1, 4});
  n.result(c);
  tests::expect_error([&] { n.read("bad_ops.xml"); },
                      {"'bad_ops.xml'", "cannot map", "Proposal (opset4) at layer 1 'Proposal1'", "Relu (opset99) at layer 2",
                       "NoSuchOp (opset3) at layer 3 'NoSuchOp3'"});
}

/// ScaledDotProductAttention-13 (what OpenVINO's converter makes of a transformer's attention)
/// against softmax(Q·Kᵀ·scale + mask)·V worked out element by element: the default scale, an
/// added mask with a given scale, a boolean mask, and causal (queries 3, keys 5: col > row off).
BOOST_AUTO_TEST_CASE(scaled_dot_product_attention) {
  const int64_t H = 2, L = 3, S = 5, E = 4, Ev = 6;
  ir_net n;
  auto q = n.param("q", "FP32", "f32", {1, H, L, E});
  auto k = n.param("k", "FP32", "f32", {1, H, S, E});
  auto v = n.param("v", "FP32", "f32", {1, H, S, Ev});
  auto add_mask = n.param("add_mask", "FP32", "f32", {L, S});
  auto keep = n.param("keep", "BOOL", "boolean", {L, S});
  const std::vector<int64_t> out{1, H, L, Ev};
  n.result(n.op("ScaledDotProductAttention", "opset13", "causal=\"false\"", {q, k, v}, out));
  n.result(n.op("ScaledDotProductAttention", "opset13", "causal=\"false\"", {q, k, v, add_mask, n.f32({0.3f}, {})}, out));
  n.result(n.op("ScaledDotProductAttention", "opset13", "causal=\"false\"", {q, k, v, keep}, out));
  n.result(n.op("ScaledDotProductAttention", "opset13", "causal=\"true\"", {q, k, v}, out));
  const Tensor tq = tests::random_tensor({1, H, L, E}, 11), tk = tests::random_tensor({1, H, S, E}, 12),
               tv = tests::random_tensor({1, H, S, Ev}, 13), tm = tests::random_tensor({L, S}, 14);
  Tensor tb(element_type::boolean, {L, S});
  for (int64_t i = 0; i < L * S; ++i) tb.data<bool>()[i] = (i % 3) != 1; // each row keeps some
  auto y = interpret_ir(n, {tq, tk, tv, tm, tb});
  // mask(l, s): what is added to the score; -inf drops the key.
  auto attention = [&](float scale, const std::function<float(int64_t, int64_t)>& mask) {
    std::vector<float> r;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t l = 0; l < L; ++l) {
        std::vector<double> w(S);
        double top = -1e300, sum = 0;
        for (int64_t s = 0; s < S; ++s) {
          double d = 0;
          for (int64_t e = 0; e < E; ++e) d += tq.data<float>()[(h * L + l) * E + e] * tk.data<float>()[(h * S + s) * E + e];
          w[s] = d * scale + mask(l, s);
          top = std::max(top, w[s]);
        }
        for (auto& x : w) sum += (x = std::exp(x - top));
        for (int64_t c = 0; c < Ev; ++c) {
          double o = 0;
          for (int64_t s = 0; s < S; ++s) o += w[s] / sum * tv.data<float>()[(h * S + s) * Ev + c];
          r.push_back(static_cast<float>(o));
        }
      }
    return f32_tensor({1, H, L, Ev}, r);
  };
  const float inf = std::numeric_limits<float>::infinity();
  expect_close(y[0], attention(0.5f, [](int64_t, int64_t) { return 0.0f; }), 1e-5, "default scale 1/sqrt(4)");
  expect_close(y[1], attention(0.3f, [&](int64_t l, int64_t s) { return tm.data<float>()[l * S + s]; }), 1e-5, "added mask, scale 0.3");
  expect_close(y[2], attention(0.5f, [&](int64_t l, int64_t s) { return tb.data<bool>()[l * S + s] ? 0.0f : -inf; }), 1e-5,
               "boolean mask");
  expect_close(y[3], attention(0.5f, [&](int64_t l, int64_t s) { return s <= l ? 0.0f : -inf; }), 1e-5, "causal");
  // The CPU (folded masks, oneDNN products) agrees with the reference interpreter.
  Core core;
  auto req = core.compile_model(core.read_ir_from_memory(n.xml(), n.bin.data(), n.bin.size(), "sdpa.xml"), "CPU")
                 .create_infer_request();
  const std::vector<std::string> names{"q", "k", "v", "add_mask", "keep"};
  const std::vector<Tensor> in{tq, tk, tv, tm, tb};
  for (std::size_t i = 0; i < in.size(); ++i) req.set_tensor(names[i], in[i]);
  req.infer();
  for (std::size_t i = 0; i < y.size(); ++i)
    expect_close(req.get_output_tensor(i), y[i], 1e-5, "CPU output " + std::to_string(i));
}

/// Layouts in a port's rt_info (as OpenVINO's converter writes them): kept on the model's
/// ports, taken by PrePostProcessor as the model's layout, written back by the writer; one
/// troupe's one-letter layouts cannot hold ("[N,SEQ]") reads as none.
BOOST_AUTO_TEST_CASE(layouts_from_rt_info) {
  ir_net n;
  auto image = n.param("image", "FP32", "f32", {1, 3, 4, 5});
  auto tokens = n.param("tokens", "FP32", "f32", {1, 7});
  n.result(n.op("Relu", "opset1", "", {image}, {1, 3, 4, 5}, "FP32", "features"));
  n.result(n.op("Relu", "opset1", "", {tokens}, {1, 7}, "FP32", "tokens_out"));
  auto with_layout = [](std::string xml, const std::string& port_end, const std::string& layout, int skip) {
    std::size_t at = 0;
    for (int k = 0; k <= skip; ++k) at = xml.find(port_end, k ? at + 1 : 0);
    BOOST_TEST_REQUIRE(at != std::string::npos);
    return xml.insert(at + port_end.size() - 7,
                      "<rt_info><attribute name=\"layout\" version=\"0\" layout=\"" + layout + "\"/></rt_info>");
  };
  // The Parameters' output ports, then the first Result's input port (after the Relu's two).
  std::string xml = with_layout(n.xml(), "<dim>5</dim></port>", "[N,C,H,W]", 0);
  xml = with_layout(xml, "<dim>7</dim></port>", "[N,SEQ]", 0);
  xml = with_layout(xml, "<dim>5</dim></port>", "[N,C,H,W]", 2);
  Core core;
  Model m = core.read_ir_from_memory(xml, n.bin.data(), n.bin.size(), "layouts.xml");
  BOOST_TEST(m.input("image").get_layout().to_string() == Layout("NCHW").to_string());
  BOOST_TEST(m.input("tokens").get_layout().empty());
  BOOST_TEST(m.output("features").get_layout().to_string() == Layout("NCHW").to_string());
  // PrePostProcessor: an NHWC tensor for a model that says NCHW needs no model().set_layout.
  preprocess::PrePostProcessor ppp(m);
  ppp.input("image").tensor().set_layout("NHWC");
  Model pre = ppp.build();
  BOOST_TEST(pre.input("image").get_partial_shape().to_string() == "[1,4,5,3]");
  // Written back: the layouts stay on the ports (OpenVINO's spelling).
  std::string written, bin;
  graph::write_ir(graph::read_ir_memory(xml, n.bin.data(), n.bin.size(), "layouts.xml"), "layouts", written, bin);
  BOOST_TEST(written.find("layout=\"[N,C,H,W]\"") != std::string::npos);
  BOOST_TEST(written.find("layout=\"[N,SEQ]\"") != std::string::npos);
  Model again = core.read_ir_from_memory(written, bin.data(), bin.size(), "again.xml");
  BOOST_TEST(again.input("image").get_layout().to_string() == Layout("NCHW").to_string());
  BOOST_TEST(again.output("features").get_layout().to_string() == Layout("NCHW").to_string());
}

/// PriorBox and PriorBoxClustered over a 1x2 feature map of a 20x40 image, sizes taken from
/// the inputs' shapes as SSD models do (ShapeOf, StridedSlice), against the boxes written out.
BOOST_AUTO_TEST_CASE(prior_boxes_on_known_values) {
  ir_net n;
  auto map = n.param("map", "FP32", "f32", {1, 1, 1, 2});
  auto img = n.param("img", "FP32", "f32", {1, 3, 20, 40});
  auto hw = [&](const ir_net::port_ref& x) {
    return n.op("StridedSlice", "opset1", "begin_mask=\"0\" end_mask=\"0\" new_axis_mask=\"\" shrink_axis_mask=\"\" ellipsis_mask=\"\"",
                {n.op("ShapeOf", "opset3", "output_type=\"i64\"", {x}, {4}, "I64"), n.i64s({2}), n.i64s({4}), n.i64s({1})}, {2},
                "I64");
  };
  n.result(n.op("PriorBox", "opset1",
                "min_size=\"4\" max_size=\"9\" aspect_ratio=\"2\" flip=\"true\" clip=\"false\" step=\"10\" offset=\"0.5\" "
                "variance=\"0.1,0.1,0.2,0.2\" density=\"\" fixed_ratio=\"\" fixed_size=\"\" scale_all_sizes=\"true\"",
                {hw(map), hw(img)}, {2, 32}));
  n.result(n.op("PriorBoxClustered", "opset1", "width=\"4,8\" height=\"6,2\" clip=\"true\" step=\"0\" offset=\"0.5\" variance=\"0.1\"",
                {hw(map), hw(img)}, {2, 16}));
  const std::vector<Tensor> in{tests::random_tensor({1, 1, 1, 2}, 1), tests::random_tensor({1, 3, 20, 40}, 2)};
  auto y = interpret_ir(n, in);
  expect_written_back_alike(n, in, y);
  auto box = [](std::vector<float>& v, float cx, float cy, float hw, float hh) {
    v.insert(v.end(), {(cx - hw) / 40, (cy - hh) / 20, (cx + hw) / 40, (cy + hh) / 20});
  };
  // PriorBox: per cell (centres (0.5 + x) * step) the min square, sqrt(min * max)'s square, then
  // ratio 2 and its flip 1/2 (half sides min/2 * sqrt(r), min/2 / sqrt(r)); then the variances.
  std::vector<float> want;
  const float r2 = std::sqrt(2.0f);
  for (float cx : {5.0f, 15.0f}) {
    box(want, cx, 5, 2, 2);
    box(want, cx, 5, 3, 3);
    box(want, cx, 5, 2 * r2, 2 / r2);
    box(want, cx, 5, 2 / r2, 2 * r2);
  }
  for (int i = 0; i < 8; ++i) want.insert(want.end(), {0.1f, 0.1f, 0.2f, 0.2f});
  expect_close(y[0], f32_tensor({2, 32}, want), 1e-6, "PriorBox");
  // PriorBoxClustered: step 0 spreads the cells over the image (20 pixels each way), one box
  // per width/height pair, clipped to [0, 1]; one variance for all.
  want.clear();
  for (float cx : {10.0f, 30.0f}) {
    box(want, cx, 10, 2, 3);
    box(want, cx, 10, 4, 1);
  }
  for (auto& e : want) e = std::clamp(e, 0.0f, 1.0f);
  want.resize(32, 0.1f);
  expect_close(y[1], f32_tensor({2, 16}, want), 1e-6, "PriorBoxClustered");
}

/// DetectionOutput (Caffe's SSD): three priors, the second overlapping the first (IoU 0.68),
/// the third moved by its offsets; class 0 is the background.
BOOST_AUTO_TEST_CASE(detection_output_on_known_values) {
  ir_net n;
  auto loc = n.param("loc", "FP32", "f32", {1, 12});
  auto conf = n.param("conf", "FP32", "f32", {1, 6});
  auto priors = n.f32({0, 0, 0.5f, 0.5f, 0.05f, 0.05f, 0.55f, 0.55f, 0.5f, 0.5f, 1, 1,       // boxes
                       0.1f, 0.1f, 0.2f, 0.2f, 0.1f, 0.1f, 0.2f, 0.2f, 0.1f, 0.1f, 0.2f, 0.2f}, // variances
                      {1, 2, 12});
  const std::string common = "background_label_id=\"0\" top_k=\"10\" code_type=\"caffe.PriorBoxParameter.CENTER_SIZE\" "
                             "share_location=\"true\" confidence_threshold=\"0.1\" variance_encoded_in_target=\"false\" "
                             "clip_before_nms=\"false\" decrease_label_id=\"false\" normalized=\"true\" input_height=\"1\" "
                             "input_width=\"1\" objectness_score=\"0\" ";
  n.result(n.op("DetectionOutput", "opset8", common + "keep_top_k=\"4\" nms_threshold=\"0.5\" clip_after_nms=\"false\"",
                {loc, conf, priors}, {1, 1, 4, 7}));
  n.result(n.op("DetectionOutput", "opset8", common + "keep_top_k=\"4\" nms_threshold=\"0.9\" clip_after_nms=\"true\"",
                {loc, conf, priors}, {1, 1, 4, 7}));
  n.result(n.op("DetectionOutput", "opset1", common + "num_classes=\"2\" keep_top_k=\"1\" nms_threshold=\"0.5\" clip_after_nms=\"false\"",
                {loc, conf, priors}, {1, 1, 1, 7}));
  // Offsets: the third prior's centre moves by 1 x variance 0.1 x its width 0.5 to the right.
  std::vector<float> l(12, 0.0f);
  l[8] = 1;
  const std::vector<Tensor> in{f32_tensor({1, 12}, l), f32_tensor({1, 6}, {0.1f, 0.9f, 0.2f, 0.8f, 0.3f, 0.7f})};
  auto y = run_ir(n, in);
  expect_written_back_alike(n, in, y);
  // NMS at 0.5 drops the second (under the first); rows sorted by score; -1 ends the list.
  expect_close(y[0], f32_tensor({1, 1, 4, 7}, {0, 1, 0.9f, 0, 0, 0.5f, 0.5f,             //
                                               0, 1, 0.7f, 0.55f, 0.5f, 1.05f, 1.0f,     //
                                               -1, 0, 0, 0, 0, 0, 0,                     //
                                               0, 0, 0, 0, 0, 0, 0}),
               1e-6, "nms 0.5");
  // At 0.9 the second stays; clip_after_nms keeps the third inside the image.
  expect_close(y[1], f32_tensor({1, 1, 4, 7}, {0, 1, 0.9f, 0, 0, 0.5f, 0.5f,             //
                                               0, 1, 0.8f, 0.05f, 0.05f, 0.55f, 0.55f,   //
                                               0, 1, 0.7f, 0.55f, 0.5f, 1.0f, 1.0f,      //
                                               -1, 0, 0, 0, 0, 0, 0}),
               1e-6, "nms 0.9, clipped");
  // keep_top_k 1: the best alone, no end row (the output is full).
  expect_close(y[2], f32_tensor({1, 1, 1, 7}, {0, 1, 0.9f, 0, 0, 0.5f, 0.5f}), 1e-6, "keep_top_k 1");
}

/// RegionYolo in YOLOv3's form (logistic of all but the box size) and YOLOv2's (softmax over
/// the classes, flattened), two boxes of 4 coords + objectness + 2 classes per cell of a 2x3
/// map, against the entries worked out one by one.
BOOST_AUTO_TEST_CASE(region_yolo_v3_and_v2) {
  ir_net n;
  auto x = n.param("x", "FP32", "f32", {1, 14, 2, 3});
  n.result(n.op("RegionYolo", "opset1", "coords=\"4\" classes=\"2\" num=\"6\" mask=\"0,1\" do_softmax=\"false\" axis=\"1\" end_axis=\"3\" anchors=\"1,2\"",
                {x}, {1, 14, 2, 3}));
  n.result(n.op("RegionYolo", "opset1", "coords=\"4\" classes=\"2\" num=\"2\" do_softmax=\"true\" axis=\"1\" end_axis=\"3\"", {x},
                {1, 84}));
  const Tensor in = tests::random_tensor({1, 14, 2, 3}, 5);
  auto y = run_ir(n, {in});
  const float* v = in.data<float>();
  auto logistic = [](float e) { return 1.0f / (1.0f + std::exp(-e)); };
  std::vector<float> v3(v, v + 84), v2(v, v + 84);
  for (int box = 0; box < 2; ++box)
    for (int at = 0; at < 6; ++at) {
      auto i = [&](int entry) { return static_cast<std::size_t>((box * 7 + entry) * 6 + at); };
      for (int entry : {0, 1, 4, 5, 6}) v3[i(entry)] = logistic(v[i(entry)]);
      for (int entry : {0, 1, 4}) v2[i(entry)] = logistic(v[i(entry)]);
      const float m = std::max(v[i(5)], v[i(6)]), a = std::exp(v[i(5)] - m), b = std::exp(v[i(6)] - m);
      v2[i(5)] = a / (a + b);
      v2[i(6)] = b / (a + b);
    }
  expect_close(y[0], f32_tensor({1, 14, 2, 3}, v3), 1e-6, "YOLOv3");
  expect_close(y[1], f32_tensor({1, 84}, v2), 1e-6, "YOLOv2");
  ir_net bad;
  bad.result(bad.op("RegionYolo", "opset1", "coords=\"4\" classes=\"3\" num=\"6\" mask=\"0,1\" do_softmax=\"false\"",
                    {bad.param("x", "FP32", "f32", {1, 14, 2, 3})}, {1, 14, 2, 3}));
  tests::expect_error([&] { bad.read("yolo.xml"); }, {"'yolo.xml'", "RegionYolo", "14 channels where 2 boxes of 8 entries"});
}

BOOST_AUTO_TEST_CASE(detection_heads_bad_attributes_and_shapes) {
  auto one = [](const std::string& type, const std::string& data, std::vector<int64_t> conf_dims) {
    ir_net n;
    if (type == "PriorBox") {
      n.result(n.op(type, "opset1", data, {n.i64s({1, 2}), n.i64s({20, 40})}, {2, 8}));
    } else {
      auto loc = n.param("loc", "FP32", "f32", {1, 12});
      auto conf = n.param("conf", "FP32", "f32", conf_dims);
      n.result(n.op(type, "opset8", data + " normalized=\"true\"", {loc, conf, n.f32(std::vector<float>(24, 0.25f), {1, 2, 12})}, {1, 1, 4, 7}));
    }
    return n;
  };
  auto n = one("PriorBox", "min_size=\"4\" offset=\"0.5\" variance=\"0.1,0.2,0.3\"", {});
  tests::expect_error([&] { n.read("pb.xml"); }, {"'pb.xml'", "PriorBox", "variance must hold 0, 1 or 4 values, not 3"});
  // A forged feature map (ir_reader_fuzz's finding: 4 * H * W overflowed before any bound).
  for (const auto& [h, w] : {std::pair<int64_t, int64_t>{int64_t{1} << 62, 1}, {1 << 20, 1 << 20}, {-1, 4}}) {
    ir_net big;
    big.result(big.op("PriorBox", "opset1", "offset=\"0.5\"", {big.i64s({h, w}), big.i64s({20, 40})}, {2, 8}));
    tests::expect_error([&] { big.read("pb.xml"); }, {"'pb.xml'", "PriorBox", "feature map"});
  }
  n = one("DetectionOutput", "keep_top_k=\"4\" nms_threshold=\"0.5\"", {1, 7});
  tests::expect_error([&] { n.read("do.xml"); }, {"'do.xml'", "DetectionOutput", "not a whole number of classes for 3 priors"});
  n = one("DetectionOutput", "keep_top_k=\"4\" nms_threshold=\"0.5\" code_type=\"caffe.PriorBoxParameter.CORNER_SIZE\"", {1, 6});
  tests::expect_error([&] { n.read("do.xml"); }, {"'do.xml'", "code_type 'caffe.PriorBoxParameter.CORNER_SIZE'"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(bad_input)

ir_net relu_net() {
  ir_net n;
  auto p = n.param("x", "FP32", "f32", {4});
  auto a = n.op("Add", "opset1", "", {p, n.f32({1, 2, 3, 4}, {4})}, {4});
  n.result(n.op("Relu", "opset1", "", {a}, {4}));
  return n;
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  BOOST_TEST_REQUIRE(at != std::string::npos, "'" << from << "' not in the IR");
  return s.replace(at, from.size(), to);
}

void expect_bad(const std::string& xml, const std::string& bin, const std::vector<std::string>& pieces) {
  tests::expect_error([&] { graph::read_ir_memory(xml, bin.data(), bin.size(), "bad.xml"); }, pieces);
}

BOOST_AUTO_TEST_CASE(not_xml_not_ir_and_wrong_version) {
  auto n = relu_net();
  expect_bad("this is not xml <", "", {"'bad.xml'", "not an OpenVINO IR", "cannot be parsed"});
  expect_bad("<?xml version=\"1.0\"?><model/>", "", {"'bad.xml'", "root element is <model>"});
  expect_bad(replaced(n.xml(), "version=\"11\"", "version=\"7\""), n.bin, {"'bad.xml'", "version '7'", "10 and 11"});
  // version 10 is read
  auto v10 = relu_net();
  v10.version = 10;
  BOOST_TEST(v10.read().ops.size() == 2u);
}

BOOST_AUTO_TEST_CASE(missing_and_short_weights) {
  auto n = relu_net();
  fs::path dir = fs::temp_directory_path() / ("troupe_ir_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "m.xml") << n.xml();
  tests::expect_error([&] { Core().read_model((dir / "m.xml").string()); },
                      {"m.xml", "layer 1", "cannot be opened", "m.bin"});
  std::ofstream(dir / "m.bin", std::ios::binary) << n.bin.substr(0, 10);
  tests::expect_error([&] { Core().read_model((dir / "m.xml").string()); },
                      {"m.xml", "layer 1 'Const1'", "past the end of the weights", "(10 bytes)"});
  std::ofstream(dir / "other.bin", std::ios::binary) << n.bin;
  Model m = Core().read_model((dir / "m.xml").string(), (dir / "other.bin").string());
  BOOST_TEST(m.outputs().size() == 1u);
  fs::remove_all(dir);
  expect_bad(replaced(n.xml(), "size=\"16\"", "size=\"12\""), n.bin, {"layer 1", "size 12 does not match", "16 bytes"});
  expect_bad(replaced(n.xml(), "offset=\"0\"", "offset=\"18446744073709551615\""), n.bin, {"layer 1", "offset and size"});
  expect_bad(replaced(n.xml(), "offset=\"0\"", "offset=\"9223372036854775800\""), n.bin, {"layer 1", "past the end"});
}

BOOST_AUTO_TEST_CASE(edges_precisions_and_cycles) {
  auto n = relu_net();
  std::string x = n.xml();
  expect_bad(replaced(x, "from-layer=\"2\"", "from-layer=\"42\""), n.bin, {"layer 3 'Relu3'", "missing layer 42"});
  expect_bad(replaced(x, "from-layer=\"2\" from-port=\"2\"", "from-layer=\"2\" from-port=\"7\""), n.bin,
             {"layer 2 'Add2'", "output port 7"});
  expect_bad(replaced(x, "to-layer=\"3\" to-port=\"0\"", "to-layer=\"3\" to-port=\"5\""), n.bin, {"layer 3 'Relu3'", "input port 5"});
  expect_bad(replaced(x, "<edge from-layer=\"2\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>", ""), n.bin,
             {"layer 3 'Relu3'", "input port 0 has no incoming edge"});
  // the Relu's input port says I64 while the Add gives FP32
  std::string relu = x.substr(x.find("type=\"Relu\""));
  expect_bad(x.substr(0, x.find("type=\"Relu\"")) + replaced(relu, "precision=\"FP32\"", "precision=\"I64\""), n.bin,
             {"layer 3 'Relu3'", "precision i64", "precision f32"});
  // Add reads the Relu's output: a cycle
  expect_bad(replaced(x, "from-layer=\"0\" from-port=\"0\" to-layer=\"2\"", "from-layer=\"3\" from-port=\"1\" to-layer=\"2\""), n.bin,
             {"'bad.xml'", "on a cycle"});
  expect_bad(replaced(x, "<layer id=\"3\"", "<layer id=\"three\""), n.bin, {"'bad.xml'", "'Relu3'", "id 'three' is not an integer"});
}

BOOST_AUTO_TEST_SUITE_END()

/// save_model, read back, run on CPU: the ONNX path's outputs, bit for bit where the graph is the same.
BOOST_AUTO_TEST_SUITE(round_trip)

void round_trip(const tests::ort_case& c, double ort_rel) {
  auto data = tests::load_ort_case(c);
  Core core;
  Model onnx = core.read_model(tests::data_path("models/" + c.model + ".onnx").string());
  fs::path dir = fs::temp_directory_path() / ("troupe_ir_rt_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string xml = (dir / (c.model + ".xml")).string();
  save_model(onnx, xml);
  Model ir = core.read_model(xml);
  std::map<std::string, PartialShape> shapes;
  for (const auto& [name, t] : data.inputs) shapes[name] = PartialShape(t.get_shape());
  BOOST_TEST_REQUIRE(ir.inputs().size() == onnx.inputs().size());
  BOOST_TEST_REQUIRE(ir.outputs().size() == onnx.outputs().size());
  for (std::size_t k = 0; k < onnx.outputs().size(); ++k)
    BOOST_TEST(ir.output(k).get_any_name() == onnx.output(k).get_any_name());
  std::map<std::string, int> int8_steps, ref_steps; // by "IR" / "ONNX"
  auto run = [&](Model m, const std::string& what) {
    m.reshape(shapes);
    auto compiled = core.compile_model(m, "CPU", {enable_profiling(true)});
    auto req = compiled.create_infer_request();
    for (const auto& [name, t] : data.inputs) req.set_tensor(name, t);
    req.infer();
    std::vector<Tensor> out;
    for (std::size_t k = 0; k < m.outputs().size(); ++k) out.push_back(req.get_output_tensor(k).clone());
    for (const auto& p : req.get_profiling_info()) {
      int8_steps[what] += p.exec_type.find(" int8") != std::string::npos;
      ref_steps[what] += p.exec_type.rfind("ref", 0) == 0;
    }
    return out;
  };
  auto a = run(ir, "IR"), b = run(onnx, "ONNX");
  // Quantized models keep their int8 kernels through IR (QDQ pairs as FakeQuantize and back).
  std::cout << c.model << ": int8 primitives: " << int8_steps["IR"] << " from IR, " << int8_steps["ONNX"] << " from ONNX\n";
  BOOST_TEST(int8_steps["IR"] == int8_steps["ONNX"]);
  // No op the ONNX model runs on a native or oneDNN kernel falls to a reference kernel after IR
  // (quantize_dynamic's ops come back as themselves, ir_integer_recovery.cpp).
  std::cout << c.model << ": reference-kernel steps: " << ref_steps["IR"] << " from IR, " << ref_steps["ONNX"] << " from ONNX\n";
  BOOST_TEST(ref_steps["IR"] <= ref_steps["ONNX"]);
  for (std::size_t k = 0; k < a.size(); ++k) {
    BOOST_TEST_REQUIRE((a[k].get_shape() == b[k].get_shape()));
    auto x = floats(a[k]), y = floats(b[k]);
    std::size_t equal = 0;
    double err = 0, ref = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      equal += std::memcmp(&x[i], &y[i], sizeof(float)) == 0;
      err = std::max(err, static_cast<double>(std::abs(x[i] - y[i])));
      ref = std::max(ref, static_cast<double>(std::abs(y[i])));
    }
    std::cout << c.model << " output " << onnx.output(k).get_any_name() << ": IR vs ONNX on CPU: " << equal << " of "
              << x.size() << " bit-equal, max |diff| " << err << " (max |ref| " << ref << ")\n";
    BOOST_TEST(err <= 1e-5 * ref + 1e-6, c.model << ": IR vs ONNX max |diff| " << err);
  }
  // and against onnxruntime, as the model tests bound it
  for (std::size_t k = 0; k < data.outputs.size() && k < a.size(); ++k) {
    auto r = tests::compare_scaled(floats(a[k]), floats(data.outputs[k].second), ort_rel, 1e-5);
    BOOST_TEST(r.ok, c.model << " IR vs onnxruntime: " << r.message);
  }
  std::cout << c.model << ": " << fs::file_size(xml) << " bytes of xml, " << fs::file_size(dir / (c.model + ".bin"))
            << " bytes of weights\n";
  fs::remove_all(dir);
}

const tests::ort_case cls{"ch_ppocr_mobile_v2.0_cls_infer", "1x3x48x192"};
const tests::ort_case det{"ch_PP-OCRv4_det_presigmoid", "1x3x320x320"};
const tests::ort_case rec{"ch_PP-OCRv4_rec_infer", "1x3x48x320"};
const tests::ort_case bert{"bert_tiny", "1x32"};
const tests::ort_case lm{"lm_tiny", "1x32"};
const tests::ort_case blazeface{"blazeface_back_256", "1x256x256x3"};
const tests::ort_case melspectrogram{"oww_melspectrogram", "1x16000"};
const tests::ort_case embedding{"oww_embedding", "1x76x32x1"};
const tests::ort_case cls_qdq{"ch_ppocr_mobile_v2.0_cls_qdq", "1x3x48x192"};
const tests::ort_case rec_qdq{"ch_PP-OCRv4_rec_qdq", "1x3x48x320"};
const tests::ort_case det_qdq{"ch_PP-OCRv4_det_presigmoid_qdq", "1x3x320x320"};
const tests::ort_case bert_int8{"bert_tiny_int8", "1x32"};
const tests::ort_case lm_int8{"lm_tiny_int8", "1x32"};
const tests::ort_case rec_dynint8{"ch_PP-OCRv4_rec_dynint8", "1x3x48x320"};
const tests::ort_case det_dynint8{"ch_PP-OCRv4_det_presigmoid_dynint8", "1x3x320x320"};

BOOST_AUTO_TEST_CASE(ppocr_cls, *tests::needs_ort_case(cls)) { round_trip(cls, 1e-4); }
BOOST_AUTO_TEST_CASE(ppocr_det, *tests::needs_ort_case(det)) { round_trip(det, 1e-4); }
BOOST_AUTO_TEST_CASE(ppocr_rec, *tests::needs_ort_case(rec)) { round_trip(rec, 1e-4); }
BOOST_AUTO_TEST_CASE(bert_tiny, *tests::needs_ort_case(bert)) { round_trip(bert, 1e-4); }
BOOST_AUTO_TEST_CASE(blazeface_back_256, *tests::needs_ort_case(blazeface)) { round_trip(blazeface, 1e-4); }
BOOST_AUTO_TEST_CASE(oww_melspectrogram, *tests::needs_ort_case(melspectrogram)) { round_trip(melspectrogram, 1e-4); }
BOOST_AUTO_TEST_CASE(oww_embedding, *tests::needs_ort_case(embedding)) { round_trip(embedding, 1e-4); }
BOOST_AUTO_TEST_CASE(lm_tiny, *tests::needs_ort_case(lm)) { round_trip(lm, 1e-4); }
BOOST_AUTO_TEST_CASE(ppocr_cls_qdq, *tests::needs_ort_case(cls_qdq)) { round_trip(cls_qdq, 0.1); }
BOOST_AUTO_TEST_CASE(ppocr_rec_qdq, *tests::needs_ort_case(rec_qdq)) { round_trip(rec_qdq, 0.1); }
BOOST_AUTO_TEST_CASE(ppocr_det_qdq, *tests::needs_ort_case(det_qdq)) { round_trip(det_qdq, 0.1); }
// onnxruntime's quantize_dynamic models: the bounds against onnxruntime are the model tests'
// (transformer_model_tests.cpp bound_of: two int8 runtimes round differently).
BOOST_AUTO_TEST_CASE(bert_tiny_int8, *tests::needs_ort_case(bert_int8)) { round_trip(bert_int8, 0.035); }
BOOST_AUTO_TEST_CASE(lm_tiny_int8, *tests::needs_ort_case(lm_int8)) { round_trip(lm_int8, 0.2); }
BOOST_AUTO_TEST_CASE(ppocr_rec_dynint8, *tests::needs_ort_case(rec_dynint8)) { round_trip(rec_dynint8, 0.13); }
BOOST_AUTO_TEST_CASE(ppocr_det_dynint8, *tests::needs_ort_case(det_dynint8)) { round_trip(det_dynint8, 0.05); }

BOOST_AUTO_TEST_CASE(dynamic_quantization_written_as_arithmetic_reads_back_as_its_ops) {
  // quantize_dynamic's block: DynamicQuantizeLinear -> MatMulInteger (u8 x i8, per-column weight
  // zero points) and -> a grouped ConvInteger. IR spells them as arithmetic; read back they are
  // the ops again and compute the same bits, also on a range of zeros (scale 0: y and zero point 0).
  tests::builder b;
  auto x = b.input({2, 4, 6, 6});
  const auto dql = b.g.ops.size();
  b.op("DynamicQuantizeLinear", {x}, {}, 3);
  const auto q = b.g.ops[dql].outputs;
  Tensor w(element_type::i8, {6, 5}), wz(element_type::i8, {5}), cw(element_type::i8, {8, 2, 3, 3}), cz(element_type::i8, {8});
  for (int64_t k = 0; k < w.get_size(); ++k) w.data<int8_t>()[k] = static_cast<int8_t>((k * 37) % 255 - 127);
  for (int64_t k = 0; k < cw.get_size(); ++k) cw.data<int8_t>()[k] = static_cast<int8_t>((k * 53) % 255 - 127);
  for (int64_t k = 0; k < 5; ++k) wz.data<int8_t>()[k] = static_cast<int8_t>(k - 2);
  for (int64_t k = 0; k < 8; ++k) cz.data<int8_t>()[k] = static_cast<int8_t>(3 - k);
  b.output(b.op("MatMulInteger", {q[0], b.constant(w), q[2], b.constant(wz)}));
  b.output(b.op("ConvInteger", {q[0], b.constant(cw), q[2], b.constant(cz)}, {{"group", int64_t{2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  b.output(q[1]);
  std::string xml, bin;
  graph::write_ir(b.g, "dynamic_int8", xml, bin);
  BOOST_TEST(xml.find("ReduceMin") != std::string::npos); // arithmetic in the file
  graph::Graph back = graph::read_ir_memory(xml, bin.data(), bin.size(), "dynamic_int8.xml");
  std::map<std::string, int> types;
  for (const auto& op : back.ops) ++types[op.type];
  BOOST_TEST(types["DynamicQuantizeLinear"] == 1);
  BOOST_TEST(types["MatMulInteger"] == 1);
  BOOST_TEST(types["ConvInteger"] == 1);
  BOOST_TEST(types["ReduceMin"] == 0); // the arithmetic is gone
  Tensor zeros(element_type::f32, {2, 4, 6, 6});
  std::fill(zeros.data<float>(), zeros.data<float>() + zeros.get_size(), 0.0f);
  for (const Tensor& in : {tests::random_tensor({2, 4, 6, 6}, 71, -3.0f, 5.0f), zeros}) {
    const auto want = tests::run_reference(b.g, {in}), got = tests::run_reference(back, {in});
    BOOST_TEST_REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      BOOST_TEST((got[k].get_shape() == want[k].get_shape()));
      BOOST_TEST(std::memcmp(got[k].data(), want[k].data(), want[k].get_byte_size()) == 0, "output " << k);
    }
  }
}

BOOST_AUTO_TEST_CASE(unwritable_ops_are_named) {
  tests::builder b;
  auto x = b.input({1, 4});
  b.output(b.op("Relu", {b.op("Hardmax", {x})}));
  graph::Graph g = b.g;
  std::string xml, bin;
  tests::expect_error([&] { graph::write_ir(g, "nms", xml, bin); }, {"save_model", "'nms'", "no OpenVINO IR equivalent", "Hardmax"});
}

BOOST_AUTO_TEST_SUITE_END()

/// troupe convert (the binary beside this test), then troupe query on what it wrote.
BOOST_AUTO_TEST_CASE(cli_convert, *tests::needs_models({"ch_ppocr_mobile_v2.0_cls_infer"})) {
  const std::string troupe = (fs::read_symlink("/proc/self/exe").parent_path() / "troupe").string();
  fs::path dir = fs::temp_directory_path() / ("troupe_ir_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string onnx = tests::data_path("models/ch_ppocr_mobile_v2.0_cls_infer.onnx").string();
  auto r = tests::run_command(troupe + " convert -m " + onnx + " -o " + (dir / "cls.xml").string() + " 2>&1");
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST(r->code == 0, r->out);
  BOOST_TEST(fs::exists(dir / "cls.xml"));
  BOOST_TEST(fs::file_size(dir / "cls.bin") > 500000u);
  auto q = tests::run_command(troupe + " query -m " + (dir / "cls.xml").string() + " -d CPU 2>&1");
  BOOST_TEST_REQUIRE(q.has_value());
  BOOST_TEST(q->out.find("239 of 239 ops supported by CPU") != std::string::npos, q->out);
  auto u = tests::run_command(troupe + " convert -m " + onnx + " 2>&1");
  BOOST_TEST_REQUIRE(u.has_value());
  BOOST_TEST(u->code == 2);
  BOOST_TEST(u->out.find("-o is required") != std::string::npos, u->out);
  fs::remove_all(dir);
}
