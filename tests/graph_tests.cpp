/// The graph layer: ONNX reading (real PP-OCR models and hand-encoded protobufs), shape rules,
/// constant folding through the reference kernels, BN folding, fusions and the DOT writer.
#define BOOST_TEST_MODULE graph_tests
#include <boost/test/unit_test.hpp>

#include <troupe/exception.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <ostream>

#include "graph/dot_writer.hpp"
#include "graph/onnx_reader.hpp"
#include "graph/op_versions.hpp"
#include "graph/op_cost.hpp"
#include "graph/passes.hpp"
#include "graph/shape_inference.hpp"
#include "graph/value_specialization.hpp"
#include "kernels/reference/interpreter.hpp"
#include "kernels/reference/kernels.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/test_data.hpp"

namespace troupe {
// Boost.Test prints values of failed checks.
inline std::ostream& operator<<(std::ostream& o, element_type t) { return o << to_string(t); }
inline std::ostream& operator<<(std::ostream& o, const PartialShape& s) { return o << s.to_string(); }
} // namespace troupe

using namespace troupe;
using namespace troupe::graph;
using tests::expect_error;
namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------- models on disk

/// The PP-OCR model file in data/models (test cases that read one declare it with needs_models).
std::string model_path(const std::string& file) { return tests::ppocr_model(file).path.string(); }
const char* cls_file = "ch_ppocr_mobile_v2.0_cls_infer";
const char* det_file = "ch_PP-OCRv4_det_infer";
const char* rec_file = "ch_PP-OCRv4_rec_infer";

evaluator reference_evaluator(const Graph& g) {
  int64_t opset = g.opset;
  return [opset](const Op& op, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
    kernels::reference::evaluate(op, in, out, opset);
  };
}

std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> r;
  for (const auto& op : g.ops) ++r[op.type];
  return r;
}

// ---------------------------------------------------------------- a tiny protobuf encoder

/// Just enough of the protobuf wire format to hand-write small ONNX models for error tests.
struct pb {
  std::string b;
  pb& varint(int field, uint64_t v) {
    key(field, 0);
    put(v);
    return *this;
  }
  pb& bytes(int field, const std::string& s) {
    key(field, 2);
    put(s.size());
    b += s;
    return *this;
  }
  pb& msg(int field, const pb& m) { return bytes(field, m.b); }
  pb& f32(int field, float f) {
    key(field, 5);
    char c[4];
    std::memcpy(c, &f, 4);
    b.append(c, 4);
    return *this;
  }
  void key(int field, int wire) { put(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire)); }
  void put(uint64_t v) {
    while (v >= 0x80) { b += static_cast<char>(v | 0x80); v >>= 7; }
    b += static_cast<char>(v);
  }
};

pb vinfo(const std::string& name, int elem, std::vector<int64_t> dims, const std::string& sym = "") {
  pb shape;
  // -1: the symbol `sym`; -2: a dim with neither value nor symbol.
  for (auto d : dims) shape.msg(1, d >= 0 ? pb().varint(1, static_cast<uint64_t>(d)) : d == -1 ? pb().bytes(2, sym) : pb());
  return pb().bytes(1, name).msg(2, pb().msg(1, pb().varint(1, static_cast<uint64_t>(elem)).msg(2, shape)));
}
pb node(const std::string& type, std::vector<std::string> ins, std::vector<std::string> outs, const std::string& name = "") {
  pb n;
  for (auto& i : ins) n.bytes(1, i);
  for (auto& o : outs) n.bytes(2, o);
  if (!name.empty()) n.bytes(3, name);
  n.bytes(4, type);
  return n;
}
pb float_tensor(const std::string& name, std::vector<int64_t> dims, std::vector<float> data) {
  pb t;
  for (auto d : dims) t.varint(1, static_cast<uint64_t>(d));
  t.varint(2, 1);
  for (float f : data) t.f32(4, f);
  return t.bytes(8, name);
}
std::string model(const pb& graph, int opset = 13) {
  return pb().varint(1, 8).msg(8, pb().bytes(1, "").varint(2, static_cast<uint64_t>(opset))).msg(7, graph).b;
}
Graph parse(const std::string& bytes, const std::string& name = "test.onnx") {
  return read_onnx_bytes(bytes.data(), bytes.size(), name);
}

// ---------------------------------------------------------------- building graphs in code

struct builder {
  Graph g;
  /// Reserved so that the Op& handed out stays valid while more ops are added.
  explicit builder(int64_t opset = 13) {
    g.opset = opset;
    g.ops.reserve(256);
  }
  ValueId input(const std::string& name, PartialShape s, element_type t = element_type::f32) {
    return g.add_input(name, t, std::move(s));
  }
  ValueId constant(const std::string& name, Tensor t) { return g.add_constant(name, std::move(t)); }
  ValueId ints(const std::vector<int64_t>& x) {
    Tensor t(element_type::i64, {static_cast<int64_t>(x.size())});
    std::copy(x.begin(), x.end(), t.data<int64_t>());
    return constant(std::string("c").append(std::to_string(g.values.size())), t);
  }
  ValueId floats(const std::vector<float>& x, Shape s = {}) {
    if (s.empty() && x.size() != 1) s = {static_cast<int64_t>(x.size())};
    Tensor t(element_type::f32, s);
    std::copy(x.begin(), x.end(), t.data<float>());
    return constant(std::string("c").append(std::to_string(g.values.size())), t);
  }
  ValueId scalar(float f) { return floats({f}, {}); }
  Op& op(const std::string& type, std::vector<ValueId> ins, std::map<std::string, AttributeValue> attrs = {}, int outs = 1) {
    Op o;
    o.type = type;
    o.name = type + "_" + std::to_string(g.ops.size());
    o.inputs = std::move(ins);
    o.attrs = std::move(attrs);
    for (int i = 0; i < outs; ++i) {
      Value v;
      v.name = o.name + "_out" + std::to_string(i);
      o.outputs.push_back(g.add_value(std::move(v)));
    }
    g.ops.push_back(std::move(o));
    return g.ops.back();
  }
  ValueId out(const Op& o, std::size_t i = 0) { return o.outputs[i]; }
  PartialShape infer(const Op& o, std::size_t i = 0) { return infer_op(g, o).at(i).shape; }
};

using dims = std::vector<int64_t>;
dims shape_of(const PartialShape& s) { return s.dims; }

} // namespace

// ================================================================ reader

BOOST_AUTO_TEST_SUITE(reader)

BOOST_AUTO_TEST_CASE(missing_file_is_named) {
  expect_error([] { read_onnx_file("/nonexistent/model.onnx"); }, {"cannot open model file", "/nonexistent/model.onnx"});
}

BOOST_AUTO_TEST_CASE(garbage_bytes) {
  std::string junk = "this is certainly not a protobuf \xff\xff\xff\xff";
  expect_error([&] { parse(junk, "junk.onnx"); }, {"'junk.onnx' is not a valid ONNX model"});
}

/// An op version the reader does not know, or troupe does not implement, is an error naming the
/// op, its node, the domain and the version: never a run under an older version's semantics.
BOOST_AUTO_TEST_CASE(op_versions_newer_than_known_are_named) {
  auto relu_at = [](int opset) {
    return model(pb().msg(1, node("Relu", {"x"}, {"y"}, "r")).msg(11, vinfo("x", 1, {1, 4})).msg(12, vinfo("y", 1, {1, 4})), opset);
  };
  BOOST_CHECK_NO_THROW(parse(relu_at(13)));
  BOOST_CHECK_NO_THROW(parse(relu_at(static_cast<int>(newest_known_opset))));
  expect_error([&] { parse(relu_at(static_cast<int>(newest_known_opset) + 1), "new.onnx"); },
               {"new.onnx", "Relu node 'r'", "ai.onnx opset " + std::to_string(newest_known_opset + 1), "newer than this reader knows"});
  // GridSample-20 renamed its modes: troupe implements GridSample-16.
  auto grid = model(pb()
                        .msg(1, node("GridSample", {"x", "g"}, {"y"}, "gs"))
                        .msg(11, vinfo("x", 1, {1, 1, 2, 2}))
                        .msg(11, vinfo("g", 1, {1, 2, 2, 2}))
                        .msg(12, vinfo("y", 1, {1, 1, 2, 2})),
                    20);
  expect_error([&] { parse(grid, "gs.onnx"); }, {"GridSample node 'gs'", "GridSample version 20", "domain ai.onnx", "version 16"});
  // DFT-20 takes its axis as an input: troupe implements DFT-17.
  BOOST_TEST(check_op_version("DFT", 17).empty());
  BOOST_TEST(check_op_version("DFT", 20).find("DFT version 20") != std::string::npos);
  // What a model's opset means per op: the schema's version, from the library or the table.
  BOOST_TEST(op_version("Relu", 13) == 13);
  BOOST_TEST(op_version("Relu", 20) == 14);
  BOOST_TEST(op_version("Pad", 18) == 18);
  BOOST_TEST(op_version("Pad", 20) == 19);
  BOOST_TEST(op_version("Resize", 12) == 11);
  BOOST_TEST(op_version("NoSuchOp", 13) == 0);
}

/// Resize-18's antialias and keep_aspect_ratio_policy change the result: refused, not ignored.
BOOST_AUTO_TEST_CASE(resize_attributes_that_change_the_result_are_refused) {
  builder b(18);
  auto x = b.input("x", PartialShape(Shape{1, 1, 4, 4}));
  auto& r = b.op("Resize", {x, no_value, b.floats({1, 1, 0.5f, 0.5f})}, {{"antialias", int64_t{1}}});
  expect_error([&] { b.infer(r); }, {"Resize", "antialias=1 is not supported"});
  r.attrs = {{"keep_aspect_ratio_policy", std::string("not_larger")}};
  expect_error([&] { b.infer(r); }, {"keep_aspect_ratio_policy 'not_larger'"});
}

BOOST_AUTO_TEST_CASE(truncated_bytes) {
  // A hand-made model cut in the middle.
  std::string full = model(pb().msg(1, node("Relu", {"x"}, {"y"})).msg(11, vinfo("x", 1, {1, 4})).msg(12, vinfo("y", 1, {1, 4})));
  expect_error([&] { parse(full.substr(0, full.size() - 7), "cut.onnx"); }, {"'cut.onnx' is not a valid ONNX model"});
}

BOOST_AUTO_TEST_CASE(truncated_real_model, *tests::needs_models({cls_file})) {
  // The first 100 bytes of a real one.
  std::ifstream f(model_path(cls_file), std::ios::binary);
  std::string head(100, '\0');
  f.read(head.data(), 100);
  BOOST_TEST_REQUIRE(f.gcount() == 100);
  expect_error([&] { parse(head, "head.onnx"); }, {"'head.onnx' is not a valid ONNX model"});
}

BOOST_AUTO_TEST_CASE(unknown_value_reference) {
  std::string m = model(pb().msg(1, node("Relu", {"nope"}, {"y"}, "relu1")).msg(11, vinfo("x", 1, {1})).msg(12, vinfo("y", 1, {1})));
  expect_error([&] { parse(m, "bad.onnx"); }, {"bad.onnx", "Relu", "relu1", "unknown value 'nope'"});
}

BOOST_AUTO_TEST_CASE(empty_graph_and_unsupported_type) {
  expect_error([&] { parse(model(pb()), "e.onnx"); }, {"e.onnx", "empty"});
  // complex64: no element type holds it.
  std::string complex_in = model(pb().msg(1, node("Relu", {"x"}, {"y"})).msg(11, vinfo("x", 14, {1})).msg(12, vinfo("y", 1, {1})));
  expect_error([&] { parse(complex_in); }, {"graph input 'x'", "unsupported ONNX data type 14"});
}

BOOST_AUTO_TEST_CASE(tensor_size_mismatch_and_external_data) {
  pb g = pb().msg(1, node("Add", {"x", "w"}, {"y"})).msg(5, float_tensor("w", {2, 3}, {1, 2, 3})).msg(11, vinfo("x", 1, {2, 3})).msg(12, vinfo("y", 1, {2, 3}));
  expect_error([&] { parse(model(g)); }, {"initializer 'w'", "needs 6 elements", "[2,3]"});
  pb ext = float_tensor("w", {1}, {});
  ext.msg(13, pb().bytes(1, "location").bytes(2, "w.bin")).varint(14, 1);
  pb g2 = pb().msg(1, node("Add", {"x", "w"}, {"y"})).msg(5, ext).msg(11, vinfo("x", 1, {1})).msg(12, vinfo("y", 1, {1}));
  expect_error([&] { parse(model(g2)); }, {"initializer 'w'", "external"});
  pb neg;
  neg.varint(1, static_cast<uint64_t>(int64_t{-4})).varint(2, 1).bytes(8, "w");
  pb g3 = pb().msg(1, node("Add", {"x", "w"}, {"y"})).msg(5, neg).msg(11, vinfo("x", 1, {1})).msg(12, vinfo("y", 1, {1}));
  expect_error([&] { parse(model(g3)); }, {"initializer 'w'", "negative dimension"});
}

BOOST_AUTO_TEST_CASE(subgraph_attribute_is_read_and_a_list_of_them_rejected) {
  pb attr = pb().bytes(1, "then_branch").msg(6, pb().bytes(2, "sub")).varint(20, 5);
  pb n = node("If", {"c"}, {"y"}, "if1");
  n.msg(5, attr);
  Graph g = parse(model(pb().msg(1, n).msg(11, vinfo("c", 9, {})).msg(12, vinfo("y", 1, {1}))));
  BOOST_REQUIRE(g.ops.size() == 1u);
  BOOST_TEST(g.ops[0].attr_graph("then_branch") != nullptr);
  BOOST_TEST(g.ops[0].declared_inputs() == 1u);
  pb list = pb().bytes(1, "branches").msg(11, pb().bytes(2, "sub")).varint(20, 10);
  pb l = node("If", {"c"}, {"y"}, "if1");
  l.msg(5, list);
  std::string m = model(pb().msg(1, l).msg(11, vinfo("c", 9, {})).msg(12, vinfo("y", 1, {1})));
  expect_error([&] { parse(m); }, {"If node 'if1'", "attribute 'branches'", "lists of subgraphs are not supported"});
}

BOOST_AUTO_TEST_CASE(attributes_constants_names_and_dims) {
  pb n = node("Foo", {"x", "w"}, {"y"});
  n.msg(5, pb().bytes(1, "i").varint(3, 7).varint(20, 2));
  n.msg(5, pb().bytes(1, "f").f32(2, 1.5f).varint(20, 1));
  n.msg(5, pb().bytes(1, "s").bytes(4, "hello").varint(20, 3));
  n.msg(5, pb().bytes(1, "is").varint(8, 1).varint(8, 2).varint(20, 7));
  n.msg(5, pb().bytes(1, "fs").f32(7, 0.25f).f32(7, 0.5f).varint(20, 6));
  n.msg(5, pb().bytes(1, "ss").bytes(9, "a").bytes(9, "b").varint(20, 8));
  n.msg(5, pb().bytes(1, "t").msg(5, float_tensor("", {2}, {3, 4})).varint(20, 4));
  pb k = node("Constant", {}, {"k"});
  k.msg(5, pb().bytes(1, "value_ints").varint(8, 5).varint(8, 6).varint(20, 7));
  pb g = pb().msg(1, k).msg(1, n).msg(1, node("Add", {"y", "k"}, {"z"})).msg(1, node("Add", {"z", "k"}, {"z2"}, "Add_2"))
                 .msg(5, float_tensor("w", {1}, {2}))
                 .msg(11, vinfo("x", 1, {-1, 3, -2}, "batch")).msg(11, vinfo("w", 1, {1}))
                 .msg(12, vinfo("z2", 1, {1}));
  Graph gr = parse(model(g, 11));
  BOOST_TEST(gr.opset == 11);
  BOOST_TEST_REQUIRE(gr.ops.size() == 3u); // the Constant became a value
  BOOST_TEST_REQUIRE(gr.inputs.size() == 1u); // w is an initializer, not an input
  const auto& x = gr.value(gr.inputs[0]);
  BOOST_TEST(x.shape.dims == (dims{-1, 3, -1}));
  BOOST_TEST(x.shape.to_string() == "[batch,3,?]");
  const Op& foo = gr.ops[0];
  BOOST_TEST(foo.name == "Foo_0");
  BOOST_TEST(foo.attr_int("i", 0) == 7);
  BOOST_TEST(foo.attr_float("f", 0) == 1.5f);
  BOOST_TEST(foo.attr_string("s", "") == "hello");
  BOOST_TEST(foo.attr_ints("is") == (dims{1, 2}));
  BOOST_TEST(foo.attr_floats("fs") == (std::vector<float>{0.25f, 0.5f}));
  BOOST_TEST(std::get<std::vector<std::string>>(foo.attrs.at("ss")) == (std::vector<std::string>{"a", "b"}));
  const Tensor& t = std::get<Tensor>(foo.attrs.at("t"));
  BOOST_TEST(t.get_shape() == (Shape{2}));
  BOOST_TEST(t.data<float>()[1] == 4.0f);
  BOOST_TEST(gr.is_constant(foo.inputs[1]));
  const Value& kv = gr.value(gr.ops[1].inputs[1]);
  BOOST_TEST_REQUIRE(kv.constant.has_value());
  BOOST_TEST(kv.constant->get_element_type() == element_type::i64);
  BOOST_TEST(kv.constant->data<int64_t>()[1] == 6);
  // Unnamed nodes get "<type>_<index>", made unique against the explicitly named "Add_2".
  BOOST_TEST(gr.ops[1].name == "Add_1");
  BOOST_TEST(gr.ops[2].name == "Add_2");
}

/// Reading time is a figure for benchmarks, not a check here.
BOOST_AUTO_TEST_CASE(real_models_read, *tests::needs_models({cls_file, det_file, rec_file})) {
  for (const char* file : {cls_file, det_file, rec_file}) {
    Graph g = read_onnx_file(model_path(file));
    BOOST_TEST_MESSAGE(file << ": " << g.ops.size() << " ops");
    BOOST_TEST(g.inputs.size() == 1u);
    BOOST_TEST(g.outputs.size() == 1u);
    BOOST_TEST(op_counts(g).count("Constant") == 0u);
    BOOST_TEST(g.value(g.inputs[0]).shape.rank() == 4u);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ shape rules

BOOST_AUTO_TEST_SUITE(shapes)

BOOST_AUTO_TEST_CASE(broadcasting) {
  builder b;
  auto a = b.input("a", {2, 3, 4});
  auto c = b.input("c", {3, 1});
  auto d = b.input("d", {-1, 3});
  auto e = b.input("e", {4, 1});
  auto s = b.input("s", {});
  BOOST_TEST(shape_of(b.infer(b.op("Add", {a, c}))) == (dims{2, 3, 4}));
  BOOST_TEST(shape_of(b.infer(b.op("Mul", {d, e}))) == (dims{4, 3}));
  BOOST_TEST(shape_of(b.infer(b.op("Sub", {s, a}))) == (dims{2, 3, 4}));
  BOOST_TEST(shape_of(b.infer(b.op("Sum", {a, c, s}))) == (dims{2, 3, 4}));
  auto& eq = b.op("Equal", {a, c});
  BOOST_TEST(infer_op(b.g, eq)[0].type == element_type::boolean);
  auto x = b.input("x", {2, 3});
  auto y = b.input("y", {4});
  auto& bad = b.op("Add", {x, y});
  expect_error([&] { infer_op(b.g, bad); }, {"Add node", "[2,3]", "[4]"});
  auto& wrong = b.op("Add", {x});
  expect_error([&] { infer_op(b.g, wrong); }, {"Add node", "1 inputs"});
}

BOOST_AUTO_TEST_CASE(conv_sizes) {
  builder b;
  auto x = b.input("x", {1, 3, 32, 32});
  auto w = b.constant("w", Tensor(element_type::f32, {8, 3, 3, 3}));
  BOOST_TEST(shape_of(b.infer(b.op("Conv", {x, w}, {{"strides", dims{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}))) == (dims{1, 8, 16, 16}));
  BOOST_TEST(shape_of(b.infer(b.op("Conv", {x, w}, {{"strides", dims{2, 2}}, {"pads", dims{1, 1, 1, 1}}}))) == (dims{1, 8, 16, 16}));
  BOOST_TEST(shape_of(b.infer(b.op("Conv", {x, w}, {{"dilations", dims{2, 2}}}))) == (dims{1, 8, 28, 28}));
  BOOST_TEST(shape_of(b.infer(b.op("Conv", {x, w}, {{"strides", dims{2, 2}}, {"auto_pad", std::string("VALID")}}))) == (dims{1, 8, 15, 15}));
  auto x1 = b.input("x1", {2, 4, 10});
  auto w1 = b.constant("w1", Tensor(element_type::f32, {6, 2, 3}));
  BOOST_TEST(shape_of(b.infer(b.op("Conv", {x1, w1}, {{"group", int64_t{2}}}))) == (dims{2, 6, 8}));
  auto& bad = b.op("Conv", {x1, w1});
  expect_error([&] { infer_op(b.g, bad); }, {"Conv node", "4 channels"});
  auto xt = b.input("xt", {1, 4, 10, 10});
  auto wt = b.constant("wt", Tensor(element_type::f32, {4, 2, 2, 2}));
  BOOST_TEST(shape_of(b.infer(b.op("ConvTranspose", {xt, wt}, {{"strides", dims{2, 2}}}))) == (dims{1, 2, 20, 20}));
  BOOST_TEST(shape_of(b.infer(b.op("ConvTranspose", {xt, wt}, {{"strides", dims{2, 2}}, {"output_padding", dims{1, 1}}, {"group", int64_t{2}}}))) == (dims{1, 4, 21, 21}));
}

BOOST_AUTO_TEST_CASE(pool_sizes) {
  builder b;
  auto x = b.input("x", {1, 2, 32, 31});
  BOOST_TEST(shape_of(b.infer(b.op("MaxPool", {x}, {{"kernel_shape", dims{3, 3}}, {"strides", dims{2, 2}}}))) == (dims{1, 2, 15, 15}));
  BOOST_TEST(shape_of(b.infer(b.op("MaxPool", {x}, {{"kernel_shape", dims{3, 3}}, {"strides", dims{2, 2}}, {"ceil_mode", int64_t{1}}}))) == (dims{1, 2, 16, 15}));
  BOOST_TEST(shape_of(b.infer(b.op("AveragePool", {x}, {{"kernel_shape", dims{3, 3}}, {"strides", dims{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}))) == (dims{1, 2, 16, 16}));
  BOOST_TEST(shape_of(b.infer(b.op("GlobalAveragePool", {x}))) == (dims{1, 2, 1, 1}));
  // The last ceil-mode window must start inside the (left-padded) input: 3 windows, not 4.
  auto y = b.input("y", {1, 1, 5});
  BOOST_TEST(shape_of(b.infer(b.op("MaxPool", {y}, {{"kernel_shape", dims{2}}, {"strides", dims{2}}, {"pads", dims{1, 1}}, {"ceil_mode", int64_t{1}}}))) == (dims{1, 1, 3}));
  BOOST_TEST(shape_of(b.infer(b.op("MaxPool", {y}, {{"kernel_shape", dims{2}}, {"strides", dims{2}}, {"pads", dims{1, 1}}}))) == (dims{1, 1, 3}));
  BOOST_TEST(shape_of(b.infer(b.op("MaxPool", {y}, {{"kernel_shape", dims{2}}, {"strides", dims{2}}, {"pads", dims{0, 1}}, {"ceil_mode", int64_t{1}}}))) == (dims{1, 1, 3}));
  auto z = b.input("z", {1, 1, 6});
  BOOST_TEST(shape_of(b.infer(b.op("MaxPool", {z}, {{"kernel_shape", dims{3}}, {"strides", dims{2}}, {"ceil_mode", int64_t{1}}}))) == (dims{1, 1, 3}));
  BOOST_TEST(shape_of(b.infer(b.op("MaxPool", {y}, {{"kernel_shape", dims{2}}, {"strides", dims{2}}, {"ceil_mode", int64_t{1}}}))) == (dims{1, 1, 3}));
}

BOOST_AUTO_TEST_CASE(signal_unpool_roi_and_tfidf_sizes) {
  builder b(17);
  auto x = b.input("x", {2, 12, 3, 1});
  BOOST_TEST(shape_of(b.infer(b.op("DFT", {x}))) == (dims{2, 12, 3, 2}));
  BOOST_TEST(shape_of(b.infer(b.op("DFT", {x, b.ints({16})}, {{"onesided", int64_t{1}}}))) == (dims{2, 9, 3, 2}));
  BOOST_TEST(shape_of(b.infer(b.op("DFT", {x}, {{"axis", int64_t{-2}}, {"onesided", int64_t{1}}}))) == (dims{2, 12, 2, 2}));
  // A dft_length known only at run time leaves its axis open.
  auto length = b.input("length", PartialShape(Shape{}), element_type::i64);
  BOOST_TEST(shape_of(b.infer(b.op("DFT", {x, length}))) == (dims{2, -1, 3, 2}));
  expect_error([&] { b.infer(b.op("DFT", {x}, {{"axis", int64_t{3}}})); }, {"DFT node", "axis 3 is the last one"});
  auto signal = b.input("signal", {1, 128, 1});
  BOOST_TEST(shape_of(b.infer(b.op("STFT", {signal, b.ints({8}), b.floats(std::vector<float>(16, 1.0f))}))) == (dims{1, 15, 9, 2}));
  BOOST_TEST(shape_of(b.infer(b.op("STFT", {signal, b.ints({8}), no_value, b.ints({16})}, {{"onesided", int64_t{0}}}))) == (dims{1, 15, 16, 2}));
  expect_error([&] { b.infer(b.op("STFT", {signal, b.ints({-8}), no_value, b.ints({16})})); }, {"STFT node", "frame_step -8 is out of range"});
  expect_error([&] { b.infer(b.op("STFT", {signal, b.ints({8})})); }, {"STFT node", "needs a window or a frame_length"});
  BOOST_TEST(shape_of(b.infer(b.op("MelWeightMatrix", {b.ints({8}), b.ints({16}), b.ints({8192}), b.scalar(0), b.scalar(4096)}))) ==
             (dims{9, 8}));
  auto pooled = b.input("pooled", {1, 3, 2, 2});
  auto indices = b.input("indices", {1, 3, 2, 2}, element_type::i64);
  const std::map<std::string, AttributeValue> window{{"kernel_shape", dims{3, 3}}, {"strides", dims{2, 2}}, {"pads", dims{1, 1, 0, 0}}};
  BOOST_TEST(shape_of(b.infer(b.op("MaxUnpool", {pooled, indices}, window))) == (dims{1, 3, 4, 4}));
  BOOST_TEST(shape_of(b.infer(b.op("MaxUnpool", {pooled, indices, b.ints({1, 3, 5, 5})}, window))) == (dims{1, 3, 5, 5}));
  auto image = b.input("image", {2, 8, 20, 20});
  auto rois = b.input("rois", {5, 4});
  auto batch = b.input("batch", {5}, element_type::i64);
  BOOST_TEST(shape_of(b.infer(b.op("RoiAlign", {image, rois, batch}, {{"output_height", int64_t{7}}, {"output_width", int64_t{6}}}))) ==
             (dims{5, 8, 7, 6}));
  expect_error([&] { b.infer(b.op("RoiAlign", {image, rois, batch}, {{"mode", std::string("sum")}})); }, {"RoiAlign node", "mode 'sum'"});
  const std::map<std::string, AttributeValue> tfidf{{"mode", std::string("TF")}, {"ngram_indexes", dims{0, 4, 2}}};
  BOOST_TEST(shape_of(b.infer(b.op("TfIdfVectorizer", {b.input("tokens", {3, 10}, element_type::i32)}, tfidf))) == (dims{3, 5}));
  BOOST_TEST(shape_of(b.infer(b.op("TfIdfVectorizer", {b.input("line", {10}, element_type::i64)}, tfidf))) == (dims{5}));
  // String n-grams need their pool of strings, or the model is refused at read time.
  expect_error([&] { b.infer(b.op("TfIdfVectorizer", {b.input("words", {10}, element_type::string)}, tfidf)); },
               {"TfIdfVectorizer node", "string input X needs attribute 'pool_strings'"});
  auto with_pool = tfidf;
  with_pool["pool_strings"] = std::vector<std::string>{"a", "b", "c"};
  BOOST_TEST(shape_of(b.infer(b.op("TfIdfVectorizer", {b.input("words2", {10}, element_type::string)}, with_pool))) == (dims{5}));
}

BOOST_AUTO_TEST_CASE(matmul_and_gemm) {
  builder b;
  auto a = b.input("a", {2, 1, 3, 4});
  auto c = b.input("c", {5, 4, 6});
  auto v = b.input("v", {4});
  BOOST_TEST(shape_of(b.infer(b.op("MatMul", {a, c}))) == (dims{2, 5, 3, 6}));
  BOOST_TEST(shape_of(b.infer(b.op("MatMul", {v, c}))) == (dims{5, 6}));
  BOOST_TEST(shape_of(b.infer(b.op("MatMul", {a, v}))) == (dims{2, 1, 3}));
  auto& bad = b.op("MatMul", {c, a});
  expect_error([&] { infer_op(b.g, bad); }, {"MatMul node", "inner dimensions"});
  auto m = b.input("m", {4, 3});
  auto n = b.input("n", {5, 4});
  BOOST_TEST(shape_of(b.infer(b.op("Gemm", {m, n}, {{"transA", int64_t{1}}, {"transB", int64_t{1}}}))) == (dims{3, 5}));
}

BOOST_AUTO_TEST_CASE(reshape_zero_and_minus_one) {
  builder b;
  auto x = b.input("x", {2, 3, 4});
  BOOST_TEST(shape_of(b.infer(b.op("Reshape", {x, b.ints({0, -1})}))) == (dims{2, 12}));
  BOOST_TEST(shape_of(b.infer(b.op("Reshape", {x, b.ints({-1, 4})}))) == (dims{6, 4}));
  BOOST_TEST(shape_of(b.infer(b.op("Reshape", {x, b.ints({4, 0, 2})}))) == (dims{4, 3, 2}));
  auto& bad = b.op("Reshape", {x, b.ints({5, -1})});
  expect_error([&] { infer_op(b.g, bad); }, {"Reshape node", "[2,3,4]", "[5,?]"});
  auto z = b.input("z", {0, 3});
  BOOST_TEST(shape_of(b.infer(b.op("Reshape", {z, b.ints({3, 0})}, {{"allowzero", int64_t{1}}}))) == (dims{3, 0}));
  auto dyn = b.input("dyn", {3});
  BOOST_TEST(shape_of(b.infer(b.op("Reshape", {x, dyn}))) == (dims{-1, -1, -1}));
  BOOST_TEST(shape_of(b.infer(b.op("Flatten", {x}, {{"axis", int64_t{2}}}))) == (dims{6, 4}));
}

BOOST_AUTO_TEST_CASE(slice_negative_and_clamped) {
  builder b;
  auto x = b.input("x", {10, 20});
  const int64_t big = std::numeric_limits<int64_t>::max();
  BOOST_TEST(shape_of(b.infer(b.op("Slice", {x, b.ints({-3, 0}), b.ints({big, -1}), b.ints({0, 1}), b.ints({1, 2})}))) == (dims{3, 10}));
  BOOST_TEST(shape_of(b.infer(b.op("Slice", {x, b.ints({-1}), b.ints({-big}), b.ints({1}), b.ints({-1})}))) == (dims{10, 20}));
  BOOST_TEST(shape_of(b.infer(b.op("Slice", {x, b.ints({5}), b.ints({2})}))) == (dims{0, 20}));
  auto& zero_step = b.op("Slice", {x, b.ints({0}), b.ints({1}), b.ints({0}), b.ints({0})});
  expect_error([&] { infer_op(b.g, zero_step); }, {"Slice node", "step"});
  builder old(9);
  auto y = old.input("y", {1, 4});
  BOOST_TEST(shape_of(old.infer(old.op("Slice", {y}, {{"axes", dims{1}}, {"starts", dims{1}}, {"ends", dims{3}}}))) == (dims{1, 2}));
}

BOOST_AUTO_TEST_CASE(data_movement) {
  builder b;
  auto x = b.input("x", {2, 1, 6});
  auto y = b.input("y", {2, 3, 6});
  BOOST_TEST(shape_of(b.infer(b.op("Concat", {x, y}, {{"axis", int64_t{1}}}))) == (dims{2, 4, 6}));
  auto& sp = b.op("Split", {y, b.ints({2, 4})}, {{"axis", int64_t{-1}}}, 2);
  auto so = infer_op(b.g, sp);
  BOOST_TEST(shape_of(so[0].shape) == (dims{2, 3, 2}));
  BOOST_TEST(shape_of(so[1].shape) == (dims{2, 3, 4}));
  BOOST_TEST(shape_of(b.infer(b.op("Squeeze", {x, b.ints({1})}))) == (dims{2, 6}));
  BOOST_TEST(shape_of(b.infer(b.op("Unsqueeze", {x, b.ints({0, -1})}))) == (dims{1, 2, 1, 6, 1}));
  BOOST_TEST(shape_of(b.infer(b.op("Transpose", {y}, {{"perm", dims{2, 0, 1}}}))) == (dims{6, 2, 3}));
  BOOST_TEST(shape_of(b.infer(b.op("Gather", {y, b.input("i", {4, 5}, element_type::i64)}, {{"axis", int64_t{1}}}))) == (dims{2, 4, 5, 6}));
  BOOST_TEST(shape_of(b.infer(b.op("ReduceMean", {y}, {{"axes", dims{-1}}, {"keepdims", int64_t{0}}}))) == (dims{2, 3}));
  BOOST_TEST(shape_of(b.infer(b.op("ReduceSum", {y, b.ints({1})}))) == (dims{2, 1, 6}));
  BOOST_TEST(shape_of(b.infer(b.op("Shape", {y}, {{"start", int64_t{1}}}))) == (dims{2}));
  BOOST_TEST(shape_of(b.infer(b.op("Expand", {x, b.ints({3, 2, 4, 1})}))) == (dims{3, 2, 4, 6}));
  BOOST_TEST(shape_of(b.infer(b.op("Tile", {x, b.ints({1, 5, 2})}))) == (dims{2, 5, 12}));
  BOOST_TEST(shape_of(b.infer(b.op("Pad", {x, b.ints({0, 1, 2, 0, 1, 3})}))) == (dims{2, 3, 11}));
  BOOST_TEST(shape_of(b.infer(b.op("ConstantOfShape", {b.ints({4, 2})}))) == (dims{4, 2}));
  BOOST_TEST(shape_of(b.infer(b.op("Range", {b.scalar(1), b.scalar(10), b.scalar(2)}))) == (dims{5}));
  auto& topk = b.op("TopK", {y, b.ints({2})}, {}, 2);
  BOOST_TEST(shape_of(infer_op(b.g, topk)[1].shape) == (dims{2, 3, 2}));
  BOOST_TEST(infer_op(b.g, topk)[1].type == element_type::i64);
  auto img = b.input("img", {1, 3, 8, 8});
  BOOST_TEST(shape_of(b.infer(b.op("Resize", {img, no_value, b.floats({1, 1, 2, 0.5f})}))) == (dims{1, 3, 16, 4}));
  BOOST_TEST(shape_of(b.infer(b.op("Resize", {img, no_value, no_value, b.ints({1, 3, 5, 7})}))) == (dims{1, 3, 5, 7}));
  BOOST_TEST(shape_of(b.infer(b.op("DepthToSpace", {b.input("d", {1, 8, 2, 3})}, {{"blocksize", int64_t{2}}}))) == (dims{1, 2, 4, 6}));
  BOOST_TEST(shape_of(b.infer(b.op("SpaceToDepth", {b.input("s", {1, 2, 4, 6})}, {{"blocksize", int64_t{2}}}))) == (dims{1, 8, 2, 3}));
  auto& d2s = b.op("DepthToSpace", {b.input("d6", {1, 6, 2, 3})}, {{"blocksize", int64_t{2}}});
  expect_error([&] { infer_op(b.g, d2s); }, {"channels 6 are not divisible by blocksize^2"});
  auto& s2d = b.op("SpaceToDepth", {b.input("s5", {1, 2, 4, 5})}, {{"blocksize", int64_t{2}}});
  expect_error([&] { infer_op(b.g, s2d); }, {"spatial size 5 is not divisible by blocksize"});
  BOOST_TEST(infer_op(b.g, b.op("Cast", {y}, {{"to", int64_t{7}}}))[0].type == element_type::i64);
}

BOOST_AUTO_TEST_CASE(unknown_op_is_an_error) {
  builder b;
  auto x = b.input("x", {1});
  auto& op = b.op("NoSuchOp", {x});
  expect_error([&] { infer_op(b.g, op); }, {"NoSuchOp node", "unsupported"});
}

BOOST_AUTO_TEST_CASE(folding_with_the_reference_kernels) {
  builder b;
  auto x = b.input("x", {2, 3, 4});
  auto& shape = b.op("Shape", {x});
  auto& gather = b.op("Gather", {shape.outputs[0], b.ints({0})});
  auto& cat = b.op("Concat", {gather.outputs[0], b.ints({-1})}, {{"axis", int64_t{0}}});
  auto& r = b.op("Reshape", {x, cat.outputs[0]});
  b.g.outputs.push_back(r.outputs[0]);
  Graph g0 = b.g;
  infer_shapes(g0);
  BOOST_TEST(shape_of(g0.value(g0.outputs[0]).shape) == (dims{-1, -1})); // no evaluator: rank only
  auto eval = reference_evaluator(b.g);
  infer_shapes(b.g, &eval);
  BOOST_TEST(b.g.ops.size() == 1u);
  BOOST_TEST(shape_of(b.g.value(b.g.outputs[0]).shape) == (dims{2, 12}));
}


/// The inputs whose values shapes wait on: found through the ops computing them, and none
/// when the shape waits on a large input's values (data-dependent).
BOOST_AUTO_TEST_CASE(shape_deciding_inputs_are_found_through_their_computation) {
  builder b;
  auto x = b.input("x", PartialShape(Shape{2, 6}));
  auto target = b.input("target", PartialShape(Shape{2}), element_type::i64);
  auto scale = b.input("scale", PartialShape(Shape{2, 6}));
  auto& twice = b.op("Mul", {target, b.ints({1, 1})});
  auto& reshape = b.op("Reshape", {x, b.out(twice)});
  b.op("Mul", {b.out(reshape), b.out(reshape)});
  b.op("Add", {x, scale});
  b.g.outputs = {b.g.ops[2].outputs[0], b.g.ops[3].outputs[0]};
  infer_shapes(b.g);
  BOOST_TEST(!b.g.value(b.out(reshape)).shape.is_static());
  auto d = find_shape_deciding_inputs(b.g);
  BOOST_TEST(d.obstacle.empty());
  BOOST_TEST(d.inputs == std::vector<std::size_t>{1}); // "target", not "x" nor "scale"

  // With the value as a constant, every shape is known.
  Tensor v(element_type::i64, {2});
  v.data<int64_t>()[0] = 3;
  v.data<int64_t>()[1] = 4;
  Graph s = with_input_values(b.g, {{1, v}});
  forget_derived_shapes(s);
  const auto eval = reference_evaluator(s);
  infer_shapes(s, &eval);
  BOOST_TEST(s.inputs.size() == 3u); // still given by the caller, now unread
  BOOST_TEST(shape_of(s.value(s.outputs[0]).shape) == (dims{3, 4}));

  // A target computed from a large input's values is a data-dependent shape.
  builder big;
  auto y = big.input("y", PartialShape(Shape{2, 6}));
  auto many = big.input("many", PartialShape(Shape{max_deciding_elements + 1}), element_type::i64);
  auto& slice = big.op("Slice", {many, big.ints({0}), big.ints({2})});
  big.op("Reshape", {y, big.out(slice)});
  big.g.outputs = {big.g.ops[1].outputs[0]};
  infer_shapes(big.g);
  auto none = find_shape_deciding_inputs(big.g);
  BOOST_TEST(none.inputs.empty());
  BOOST_TEST(none.obstacle.find("'many'") != std::string::npos, none.obstacle);

  // Static shapes: nothing waits.
  builder plain;
  auto z = plain.input("z", PartialShape(Shape{2, 6}));
  plain.op("Reshape", {z, plain.ints({3, 4})});
  plain.g.outputs = {plain.g.ops[0].outputs[0]};
  infer_shapes(plain.g);
  BOOST_TEST(find_shape_deciding_inputs(plain.g).inputs.empty());
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ real models

BOOST_AUTO_TEST_SUITE(real_models)

struct real_case {
  const char* file;
  const char* input;
  dims output;
};

BOOST_AUTO_TEST_CASE(null_evaluator_shapes_up_to_first_reshape, *tests::needs_models({cls_file, det_file, rec_file})) {
  for (real_case c : {real_case{cls_file, "1,3,48,192", {-1, 2}}, real_case{det_file, "1,3,320,320", {1, 1, 320, 320}},
                      real_case{rec_file, "1,3,48,320", {1, 40, 6625}}}) {
    auto path = model_path(c.file);
    Graph g = read_onnx_file(path);
    g.value(g.inputs[0]).shape = PartialShape::parse(c.input);
    infer_shapes(g);
    for (const auto& op : g.ops) {
      if (op.type == "Reshape") break;
      for (auto o : op.outputs) BOOST_TEST(g.value(o).shape.is_static(), describe(op) << " " << g.value(o).shape.to_string());
    }
    BOOST_TEST(shape_of(g.value(g.outputs[0]).shape) == c.output);
  }
}

BOOST_AUTO_TEST_CASE(reference_evaluator_makes_every_shape_static, *tests::needs_models({cls_file, det_file, rec_file})) {
  for (real_case c : {real_case{cls_file, "1,3,48,192", {1, 2}}, real_case{det_file, "1,3,320,320", {1, 1, 320, 320}},
                      real_case{rec_file, "1,3,48,320", {1, 40, 6625}}}) {
    auto path = model_path(c.file);
    Graph g = read_onnx_file(path);
    g.value(g.inputs[0]).shape = PartialShape::parse(c.input);
    auto eval = reference_evaluator(g);
    infer_shapes(g, &eval);
    BOOST_TEST_MESSAGE(c.file << ": " << g.ops.size() << " ops after folding");
    for (const auto& op : g.ops) {
      BOOST_TEST(op.type != "Shape");
      for (auto o : op.outputs)
        if (o != no_value) BOOST_TEST(g.value(o).shape.is_static(), describe(op) << " " << g.value(o).shape.to_string());
    }
    BOOST_TEST(shape_of(g.value(g.outputs[0]).shape) == c.output);
    BOOST_TEST(g.value(g.outputs[0]).type == element_type::f32);
  }
}

BOOST_AUTO_TEST_CASE(passes_on_real_models, *tests::needs_models({cls_file, det_file, rec_file})) {
  // affine: Mul/Add by per-channel constants right after a Conv (rec's learnable affine blocks)
  struct expect { const char* file; const char* input; int hardswish; int affine; };
  for (expect c : {expect{cls_file, "1,3,48,192", 18, 0}, expect{det_file, "1,3,320,320", 24, 56},
                   expect{rec_file, "1,3,48,320", 28, 56}}) {
    auto path = model_path(c.file);
    Graph g = read_onnx_file(path);
    g.value(g.inputs[0]).shape = PartialShape::parse(c.input);
    auto eval = reference_evaluator(g);
    infer_shapes(g, &eval);
    Graph p = g; // for the pipeline below
    auto before = op_counts(g);
    std::size_t ops_before = g.ops.size();
    std::string out_name = g.value(g.outputs[0]).name;
    PartialShape out_shape = g.value(g.outputs[0]).shape;

    fuse_hardswish(g);
    auto mid = op_counts(g);
    BOOST_TEST(mid["HardSwish"] == c.hardswish);
    BOOST_TEST(g.ops.size() == ops_before - 3u * static_cast<std::size_t>(c.hardswish));
    BOOST_TEST(mid["Clip"] == before["Clip"] - c.hardswish);

    fold_batch_norm(g);
    std::size_t before_affine = g.ops.size();
    fold_conv_affine(g);
    BOOST_TEST(before_affine - g.ops.size() == static_cast<std::size_t>(c.affine));
    fuse_activations(g);
    auto after = op_counts(g);
    BOOST_TEST_MESSAGE(c.file << ": " << ops_before << " ops -> " << g.ops.size());
    BOOST_TEST(g.ops.size() < ops_before - 3u * static_cast<std::size_t>(c.hardswish));
    BOOST_TEST(g.value(g.outputs[0]).name == out_name);
    infer_shapes(g); // the rewritten graph still type-checks, with the same output
    BOOST_TEST(g.value(g.outputs[0]).shape == out_shape);
    int fused = 0;
    for (const auto& op : g.ops) fused += op.has_attr("activation");
    BOOST_TEST(fused > 0);

    // The pipeline every compile runs keeps every hard-swish whole (fold_conv_input_scale once
    // took their "/ 6" into the next Conv first), fused into its producer.
    rewrite(p);
    int hardswish = 0;
    for (const auto& op : p.ops) hardswish += op.type == "HardSwish" || op.attr_string("activation", "") == "HardSwish";
    BOOST_TEST(hardswish == c.hardswish, c.file << ": " << hardswish << " hard-swishes after rewrite()");
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ passes

BOOST_AUTO_TEST_SUITE(passes)

BOOST_AUTO_TEST_CASE(batch_norm_folds_into_conv) {
  builder b;
  auto x = b.input("x", {1, 1, 1, 2});
  auto w = b.floats({2, 3}, {2, 1, 1, 1});
  auto bias = b.floats({1, -1});
  auto& conv = b.op("Conv", {x, w, bias});
  const std::vector<float> scale{0.5f, 2}, beta{0.1f, 0.2f}, mean{1, 2}, var{3, 0.25f};
  auto& bn = b.op("BatchNormalization", {conv.outputs[0], b.floats(scale), b.floats(beta), b.floats(mean), b.floats(var)},
                  {{"epsilon", 1e-5f}});
  std::string conv_name = conv.name;
  ValueId bn_out = bn.outputs[0];
  b.g.outputs.push_back(bn_out);
  std::string out_name = b.g.value(bn_out).name;
  infer_shapes(b.g);
  fold_batch_norm(b.g);
  BOOST_TEST_REQUIRE(b.g.ops.size() == 1u);
  const Op& c = b.g.ops[0];
  BOOST_TEST(c.name == conv_name);
  BOOST_TEST(b.g.value(c.outputs[0]).name == out_name);
  BOOST_TEST(b.g.outputs[0] == c.outputs[0]);
  const Tensor& w2 = *b.g.value(c.inputs[1]).constant;
  const Tensor& b2 = *b.g.value(c.inputs[2]).constant;
  // By hand, for x = 1.5 and x = -2: conv then BN equals the folded conv.
  const float wv[2] = {2, 3}, bv[2] = {1, -1};
  for (int ch = 0; ch < 2; ++ch)
    for (float xv : {1.5f, -2.0f}) {
      double s = scale[ch] / std::sqrt(var[ch] + 1e-5);
      double expected = (wv[ch] * xv + bv[ch] - mean[ch]) * s + beta[ch];
      double folded = w2.data<float>()[ch] * xv + b2.data<float>()[ch];
      BOOST_TEST(folded == expected, boost::test_tools::tolerance(1e-5));
    }
}

BOOST_AUTO_TEST_CASE(batch_norm_folds_into_grouped_conv_transpose) {
  builder b;
  auto x = b.input("x", {1, 2, 2, 2});
  auto w = b.floats({1, 2}, {2, 1, 1, 1}); // [Cin=2, Cout/group=1, 1, 1], group 2: out channel c reads W[c]
  auto& ct = b.op("ConvTranspose", {x, w}, {{"group", int64_t{2}}});
  auto& bn = b.op("BatchNormalization", {ct.outputs[0], b.floats({1, 3}), b.floats({0, 1}), b.floats({0, 0}), b.floats({1, 1})},
                  {{"epsilon", 0.0f}});
  b.g.outputs.push_back(bn.outputs[0]);
  fold_batch_norm(b.g);
  BOOST_TEST_REQUIRE(b.g.ops.size() == 1u);
  const Tensor& w2 = *b.g.value(b.g.ops[0].inputs[1]).constant;
  const Tensor& b2 = *b.g.value(b.g.ops[0].inputs[2]).constant;
  BOOST_TEST(w2.data<float>()[0] == 1.0f);
  BOOST_TEST(w2.data<float>()[1] == 6.0f);
  BOOST_TEST(b2.data<float>()[1] == 1.0f);
}

BOOST_AUTO_TEST_CASE(batch_norm_with_shared_conv_output_is_kept) {
  builder b;
  auto x = b.input("x", {1, 1, 1, 1});
  auto& conv = b.op("Conv", {x, b.floats({2}, {1, 1, 1, 1})});
  auto& bn = b.op("BatchNormalization", {conv.outputs[0], b.floats({1}), b.floats({0}), b.floats({0}), b.floats({1})});
  b.g.outputs = {bn.outputs[0], conv.outputs[0]};
  fold_batch_norm(b.g);
  BOOST_TEST(b.g.ops.size() == 2u);
}

/// Runs `g` (shape-inferred here) on the reference kernels.
std::vector<Tensor> run_reference(Graph g, const std::vector<Tensor>& in) {
  auto eval = reference_evaluator(g);
  infer_shapes(g, &eval);
  kernels::reference::interpreter it(std::make_shared<const Graph>(std::move(g)));
  return it.run(in);
}

BOOST_AUTO_TEST_CASE(conv_affine_folds_into_weights_and_bias) {
  // conv -> * [1,2,1,1] -> + scalar -> - [2,1,1] -> / scalar -> Relu: one Conv with Relu fused
  builder b;
  auto x = b.input("x", {1, 3, 4, 5});
  auto w = b.floats({0.5f, -1, 2, 0.25f, 1, -0.75f}, {2, 3, 1, 1});
  auto& conv = b.op("Conv", {x, w});
  std::string conv_name = conv.name;
  auto& mul = b.op("Mul", {b.floats({2, -3}, {1, 2, 1, 1}), conv.outputs[0]});
  auto& add = b.op("Add", {mul.outputs[0], b.scalar(0.5f)});
  auto& sub = b.op("Sub", {add.outputs[0], b.floats({1, -1}, {2, 1, 1})});
  auto& div = b.op("Div", {sub.outputs[0], b.scalar(4)});
  auto& relu = b.op("Relu", {div.outputs[0]});
  b.g.outputs.push_back(relu.outputs[0]);
  Graph original = b.g;
  fold_conv_affine(b.g);
  BOOST_TEST(b.g.ops.size() == 2u);
  fuse_activations(b.g);
  BOOST_TEST_REQUIRE(b.g.ops.size() == 1u);
  BOOST_TEST(b.g.ops[0].name == conv_name);
  BOOST_TEST(b.g.ops[0].attr_string("activation", "") == "Relu");
  Tensor in(element_type::f32, {1, 3, 4, 5});
  for (int64_t i = 0; i < in.get_size(); ++i) in.data<float>()[i] = std::sin(0.7f * float(i));
  auto want = run_reference(original, {in}), got = run_reference(b.g, {in});
  BOOST_TEST_REQUIRE(got[0].get_size() == want[0].get_size());
  int nonzero = 0;
  for (int64_t i = 0; i < want[0].get_size(); ++i) {
    BOOST_TEST(got[0].data<float>()[i] == want[0].data<float>()[i], boost::test_tools::tolerance(1e-5f));
    nonzero += want[0].data<float>()[i] != 0.0f;
  }
  BOOST_TEST(nonzero > 0);
}

BOOST_AUTO_TEST_CASE(shift_folds_into_batch_norm_mean) {
  // x + c, c + x and x - c (c per channel) before an inference BN: one BN with mean - c (+ c),
  // equal to the original on the reference; c - x, a c varying inside a channel and an Add
  // read twice are kept.
  auto bn_after = [](const std::string& type, bool const_first, bool per_channel, bool shared) {
    builder b;
    auto x = b.input("x", {1, 3, 2, 2});
    ValueId c = per_channel ? b.floats({0.5f, -2, 3}, {1, 3, 1, 1}) : b.floats({1, 2}, {1, 1, 1, 2});
    auto& add = b.op(type, const_first ? std::vector<ValueId>{c, x} : std::vector<ValueId>{x, c});
    ValueId sum = add.outputs[0];
    auto& bn = b.op("BatchNormalization", {sum, b.floats({0.5f, 2, 1}), b.floats({0.1f, 0.2f, -0.3f}),
                                           b.floats({1, 2, -1}), b.floats({3, 0.25f, 1})});
    b.g.outputs.push_back(bn.outputs[0]);
    if (shared) b.g.outputs.push_back(sum);
    infer_shapes(b.g);
    Graph original = b.g;
    fold_shift_into_batch_norm(b.g);
    Tensor in(element_type::f32, {1, 3, 2, 2});
    for (int64_t i = 0; i < in.get_size(); ++i) in.data<float>()[i] = std::sin(0.9f * float(i)) * 3;
    auto want = run_reference(original, {in}), got = run_reference(b.g, {in});
    for (int64_t i = 0; i < want[0].get_size(); ++i)
      BOOST_TEST(got[0].data<float>()[i] == want[0].data<float>()[i], boost::test_tools::tolerance(1e-5f));
    return b.g.ops.size();
  };
  BOOST_TEST(bn_after("Add", false, true, false) == 1u);
  BOOST_TEST(bn_after("Add", true, true, false) == 1u);
  BOOST_TEST(bn_after("Sub", false, true, false) == 1u);
  BOOST_TEST(bn_after("Sub", true, true, false) == 2u);  // c - x
  BOOST_TEST(bn_after("Add", false, false, false) == 2u); // varies along the width
  BOOST_TEST(bn_after("Add", false, true, true) == 2u);  // the sum is also an output
}

BOOST_AUTO_TEST_CASE(conv_affine_that_does_not_fold_is_kept) {
  auto conv_then = [](const std::string& type, bool const_first, ValueId (*c)(builder&), bool conv_is_output) {
    builder b;
    auto x = b.input("x", {1, 2, 3, 4});
    auto& conv = b.op("Conv", {x, b.floats({1, 2}, {2, 1, 1, 1})}, {{"group", int64_t{2}}});
    ValueId k = c(b);
    auto& e = b.op(type, const_first ? std::vector<ValueId>{k, conv.outputs[0]} : std::vector<ValueId>{conv.outputs[0], k});
    b.g.outputs.push_back(e.outputs[0]);
    if (conv_is_output) b.g.outputs.push_back(b.g.ops[0].outputs[0]);
    fold_conv_affine(b.g);
    return b.g.ops.size();
  };
  auto per_channel = [](builder& b) { return b.floats({2, 3}, {2, 1, 1}); };
  auto along_width = [](builder& b) { return b.floats({1, 2, 3, 4}, {1, 1, 1, 4}); };
  auto with_zero = [](builder& b) { return b.floats({2, 0}, {2, 1, 1}); };
  BOOST_TEST(conv_then("Mul", false, per_channel, false) == 1u); // the control: this one folds
  BOOST_TEST(conv_then("Mul", false, along_width, false) == 2u); // varies inside a channel
  BOOST_TEST(conv_then("Div", true, per_channel, false) == 2u);  // c / conv
  BOOST_TEST(conv_then("Sub", true, per_channel, false) == 2u);  // c - conv
  BOOST_TEST(conv_then("Div", false, with_zero, false) == 2u);   // x / 0 stays as it is
  BOOST_TEST(conv_then("Add", false, per_channel, true) == 2u);  // the conv output has another reader
}

BOOST_AUTO_TEST_CASE(an_input_scale_folds_into_the_conv_weights_exactly_with_padding) {
  // (x / [3 per channel]) into a padded grouped conv (2 groups of 2 input channels), and
  // s * x into a dense one: each Conv alone, equal to the unfolded graph on the border too.
  for (bool grouped : {true, false}) {
    builder b;
    auto x = b.input("x", {1, 4, 5, 6});
    std::vector<float> wv(grouped ? 4 * 2 * 3 * 3 : 4 * 4 * 3 * 3);
    for (std::size_t i = 0; i < wv.size(); ++i) wv[i] = std::cos(0.3f * float(i));
    auto w = b.floats(wv, grouped ? Shape{4, 2, 3, 3} : Shape{4, 4, 3, 3});
    auto scale = b.floats({2, -4, 0.5f, 8}, {4, 1, 1});
    auto& e = grouped ? b.op("Div", {x, scale}) : b.op("Mul", {scale, x});
    std::map<std::string, AttributeValue> attrs{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    if (grouped) attrs["group"] = int64_t{2};
    auto& conv = b.op("Conv", {e.outputs[0], w, b.floats({0.1f, 0.2f, 0.3f, 0.4f}, {4})}, attrs);
    b.g.outputs.push_back(conv.outputs[0]);
    Graph original = b.g;
    fold_conv_input_scale(b.g);
    BOOST_TEST_REQUIRE(b.g.ops.size() == 1u);
    BOOST_TEST(b.g.ops[0].type == "Conv");
    BOOST_TEST(b.g.ops[0].rt_info.at("fused_from").find(original.ops[0].name) != std::string::npos);
    Tensor in(element_type::f32, {1, 4, 5, 6});
    for (int64_t i = 0; i < in.get_size(); ++i) in.data<float>()[i] = std::sin(0.7f * float(i));
    auto want = run_reference(original, {in}), got = run_reference(b.g, {in});
    BOOST_TEST_REQUIRE(got[0].get_size() == want[0].get_size());
    for (int64_t i = 0; i < want[0].get_size(); ++i)
      BOOST_TEST(got[0].data<float>()[i] == want[0].data<float>()[i], boost::test_tools::tolerance(1e-5f));
  }
}

BOOST_AUTO_TEST_CASE(an_input_scale_that_does_not_fold_is_kept) {
  auto scale_then_conv = [](const std::string& type, bool const_first, const Shape& xs, bool product_is_output) {
    builder b;
    auto x = b.input("x", xs);
    auto k = b.floats({2, 3}, {2, 1, 1});
    auto& e = b.op(type, const_first ? std::vector<ValueId>{k, x} : std::vector<ValueId>{x, k});
    auto& conv = b.op("Conv", {e.outputs[0], b.floats({1, 2, 3, 4}, {2, 2, 1, 1})});
    b.g.outputs.push_back(conv.outputs[0]);
    if (product_is_output) b.g.outputs.push_back(b.g.ops[0].outputs[0]);
    fold_conv_input_scale(b.g);
    return b.g.ops.size();
  };
  BOOST_TEST(scale_then_conv("Div", false, {1, 2, 3, 4}, false) == 1u); // the control: this one folds
  BOOST_TEST(scale_then_conv("Div", true, {1, 2, 3, 4}, false) == 2u);  // k / x
  BOOST_TEST(scale_then_conv("Mul", false, {1, 1, 3, 4}, false) == 2u); // the scale widens x's channels
  BOOST_TEST(scale_then_conv("Sub", false, {1, 2, 3, 4}, false) == 2u); // a shift is no scale
  BOOST_TEST(scale_then_conv("Mul", false, {1, 2, 3, 4}, true) == 2u);  // the product has another reader
}

BOOST_AUTO_TEST_CASE(passes_never_merge_ops_of_different_affinities) {
  // conv -> BatchNormalization -> * c -> Relu, each pass applicable; an affinity on one op
  // keeps it apart, and what is merged records where it went.
  auto chain = [](const std::string& conv_aff, const std::string& bn_aff, const std::string& mul_aff,
                  const std::string& relu_aff) {
    builder b;
    auto x = b.input("x", {1, 2, 3, 3});
    auto& conv = b.op("Conv", {x, b.floats({1, 2}, {2, 1, 1, 1})}, {{"group", int64_t{2}}});
    auto& bn = b.op("BatchNormalization", {conv.outputs[0], b.floats({1, 3}), b.floats({0, 1}), b.floats({0, 0}),
                                           b.floats({1, 1})});
    auto& mul = b.op("Mul", {bn.outputs[0], b.floats({2, 3}, {2, 1, 1})});
    auto& relu = b.op("Relu", {mul.outputs[0]});
    b.g.outputs.push_back(relu.outputs[0]);
    std::vector<std::string> affs{conv_aff, bn_aff, mul_aff, relu_aff};
    for (std::size_t i = 0; i < 4; ++i)
      if (!affs[i].empty()) b.g.ops[i].rt_info["affinity"] = affs[i];
    fold_batch_norm(b.g);
    fold_conv_affine(b.g);
    fuse_activations(b.g);
    return b.g;
  };
  auto all = chain("", "", "", "");
  BOOST_TEST_REQUIRE(all.ops.size() == 1u); // the control: everything merges
  BOOST_TEST(all.ops[0].rt_info["fused_from"] == "BatchNormalization_1,Mul_2,Relu_3");
  BOOST_TEST(chain("GPU", "GPU", "GPU", "GPU").ops.size() == 1u);
  // BN stays apart, so the Mul does not follow the conv and the Relu follows a Mul (no fusion).
  BOOST_TEST(chain("GPU", "CPU", "GPU", "GPU").ops.size() == 4u);
  BOOST_TEST(chain("GPU", "GPU", "CPU", "GPU").ops.size() == 3u); // conv+BN | Mul | Relu
  BOOST_TEST(chain("GPU", "GPU", "GPU", "CPU").ops.size() == 2u); // conv+BN+Mul | Relu
  BOOST_TEST(chain("", "", "", "CPU").ops.size() == 2u); // one side without an affinity: kept apart too
}

BOOST_AUTO_TEST_CASE(passes_run_twice_change_nothing_more) {
  // An Add with a fused activation was once dropped by a second fold_conv_affine (its
  // "does not apply" answer read as "folded into op 0").
  builder b;
  auto x = b.input("x", {1, 4});
  auto y = b.input("y", {1, 4});
  auto& add = b.op("Add", {x, y});
  auto& relu = b.op("Relu", {add.outputs[0]});
  auto& mul = b.op("Mul", {relu.outputs[0], y});
  b.g.outputs.push_back(mul.outputs[0]);
  for (int round = 0; round < 2; ++round) {
    fold_batch_norm(b.g);
    fold_conv_affine(b.g);
    fuse_activations(b.g);
    BOOST_TEST_REQUIRE(b.g.ops.size() == 2u, "round " << round);
    BOOST_TEST(b.g.ops[0].attr_string("activation", "") == "Relu");
  }
}

BOOST_AUTO_TEST_CASE(activations_become_attributes) {
  builder b(11);
  auto x = b.input("x", {1, 2, 4, 4});
  auto w = b.floats(std::vector<float>(4, 1.0f), {2, 2, 1, 1});
  auto& c1 = b.op("Conv", {x, w});
  auto& clip = b.op("Clip", {c1.outputs[0], b.scalar(0), b.scalar(6)});
  auto& c2 = b.op("Conv", {clip.outputs[0], w});
  auto& hs = b.op("HardSigmoid", {c2.outputs[0]}, {{"alpha", 0.25f}, {"beta", 0.4f}});
  auto& c3 = b.op("Conv", {hs.outputs[0], w});
  auto& relu = b.op("Relu", {c3.outputs[0]});
  auto& tail = b.op("Sigmoid", {c3.outputs[0]}); // a second reader of c3: no fusion there
  b.g.outputs = {relu.outputs[0], tail.outputs[0]};
  std::string relu_out = b.g.value(relu.outputs[0]).name;
  infer_shapes(b.g);
  fuse_activations(b.g);
  auto counts = op_counts(b.g);
  BOOST_TEST(counts["Clip"] == 0);
  BOOST_TEST(counts["HardSigmoid"] == 0);
  BOOST_TEST(counts["Relu"] == 1);
  const Op& f1 = b.g.ops[0];
  BOOST_TEST(f1.attr_string("activation", "") == "Clip");
  BOOST_TEST(f1.attr_floats("activation_params") == (std::vector<float>{0, 6}));
  const Op& f2 = b.g.ops[1];
  BOOST_TEST(f2.attr_string("activation", "") == "HardSigmoid");
  BOOST_TEST(f2.attr_floats("activation_params") == (std::vector<float>{0.25f, 0.4f}));
  BOOST_TEST(!b.g.ops[2].has_attr("activation"));
  BOOST_TEST(b.g.value(b.g.outputs[0]).name == relu_out);
}

BOOST_AUTO_TEST_CASE(hardswish_patterns) {
  builder b(9);
  auto x = b.input("x", {1, 4});
  auto& add = b.op("Add", {x, b.scalar(3)});
  auto& clip = b.op("Clip", {add.outputs[0]}, {{"min", 0.0f}, {"max", 6.0f}});
  auto& mul = b.op("Mul", {x, clip.outputs[0]});
  auto& div = b.op("Div", {mul.outputs[0], b.scalar(6)});
  auto& hsig = b.op("HardSigmoid", {div.outputs[0]}, {{"alpha", 1.0f / 6}, {"beta", 0.5f}});
  auto& mul2 = b.op("Mul", {hsig.outputs[0], div.outputs[0]});
  std::string name = mul2.name;
  b.g.outputs = {mul2.outputs[0]};
  fuse_hardswish(b.g);
  BOOST_TEST_REQUIRE(b.g.ops.size() == 2u);
  BOOST_TEST(b.g.ops[0].type == "HardSwish");
  BOOST_TEST(b.g.ops[0].inputs[0] == b.g.inputs[0]);
  BOOST_TEST(b.g.ops[1].type == "HardSwish");
  BOOST_TEST(b.g.ops[1].name == name);
  BOOST_TEST(b.g.ops[1].inputs[0] == b.g.ops[0].outputs[0]);
  BOOST_TEST(b.g.outputs[0] == b.g.ops[1].outputs[0]);
}

BOOST_AUTO_TEST_CASE(hardswish_with_shared_intermediate_is_kept) {
  builder b(9);
  auto x = b.input("x", {1, 4});
  auto& add = b.op("Add", {x, b.scalar(3)});
  auto& clip = b.op("Clip", {add.outputs[0]}, {{"min", 0.0f}, {"max", 6.0f}});
  auto& mul = b.op("Mul", {x, clip.outputs[0]});
  auto& div = b.op("Div", {mul.outputs[0], b.scalar(6)});
  b.g.outputs = {div.outputs[0], clip.outputs[0]};
  fuse_hardswish(b.g);
  BOOST_TEST(b.g.ops.size() == 4u);
}

namespace {

/// The op types of `g` in order.
std::vector<std::string> op_types(const Graph& g) {
  std::vector<std::string> r;
  for (const auto& op : g.ops) r.push_back(op.type);
  return r;
}

/// x * 0.5 * (1 + Erf(x / sqrt 2)) as PyTorch's nn.GELU exports it (Div, Erf, Add, Mul(x, .),
/// Mul(., 0.5)), or as Hugging Face's BERT writes it (Mul(x, 0.5) first, * 1/sqrt 2).
ValueId erf_gelu(builder& b, ValueId x, bool hugging_face, float half = 0.5f) {
  if (hugging_face) {
    auto& scaled = b.op("Mul", {x, b.scalar(0.70710678f)});
    auto& erf = b.op("Erf", {scaled.outputs[0]});
    auto& one_plus = b.op("Add", {b.scalar(1), erf.outputs[0]});
    auto& halved = b.op("Mul", {x, b.scalar(half)});
    return b.op("Mul", {halved.outputs[0], one_plus.outputs[0]}).outputs[0];
  }
  auto& div = b.op("Div", {x, b.scalar(1.4142135f)});
  auto& erf = b.op("Erf", {div.outputs[0]});
  auto& one_plus = b.op("Add", {erf.outputs[0], b.scalar(1)});
  auto& times_x = b.op("Mul", {x, one_plus.outputs[0]});
  return b.op("Mul", {times_x.outputs[0], b.scalar(half)}).outputs[0];
}

/// 0.5 x (1 + Tanh(sqrt(2 / pi) (x + 0.044715 x^3))), x^3 as Pow(x, 3) or x * x * x.
ValueId tanh_gelu(builder& b, ValueId x, bool pow) {
  ValueId cube;
  if (pow) cube = b.op("Pow", {x, b.scalar(3)}).outputs[0];
  else cube = b.op("Mul", {b.op("Mul", {x, x}).outputs[0], x}).outputs[0];
  auto& term = b.op("Mul", {b.scalar(0.044715f), cube});
  auto& inner = b.op("Add", {x, term.outputs[0]});
  auto& arg = b.op("Mul", {inner.outputs[0], b.scalar(0.7978845608f)});
  auto& th = b.op("Tanh", {arg.outputs[0]});
  auto& one_plus = b.op("Add", {th.outputs[0], b.scalar(1)});
  auto& half_x = b.op("Mul", {b.scalar(0.5f), x});
  return b.op("Mul", {half_x.outputs[0], one_plus.outputs[0]}).outputs[0];
}

} // namespace

BOOST_AUTO_TEST_CASE(gelu_spelled_out_becomes_one_op_in_each_exported_form) {
  for (int form = 0; form < 4; ++form) {
    BOOST_TEST_CONTEXT("form " << form) {
      builder b(13);
      auto x = b.input("x", {2, 8});
      auto& pre = b.op("Relu", {x}); // x is an op's output read twice, as a MatMul's would be
      const ValueId y = form < 2 ? erf_gelu(b, pre.outputs[0], form == 1) : tanh_gelu(b, pre.outputs[0], form == 2);
      const std::string last = b.g.ops.back().name, out = b.g.value(y).name;
      b.g.outputs = {y};
      fuse_gelu(b.g);
      BOOST_TEST(op_types(b.g) == (std::vector<std::string>{"Relu", "Gelu"}), [&] {
        std::string t;
        for (const auto& o : op_types(b.g)) t += o + " ";
        return t;
      }());
      if (b.g.ops.size() != 2) continue;
      const Op& gelu = b.g.ops[1];
      BOOST_TEST(gelu.attr_string("approximate", "") == (form < 2 ? "none" : "tanh"));
      BOOST_TEST(gelu.inputs == std::vector<ValueId>{b.g.ops[0].outputs[0]});
      BOOST_TEST(gelu.name == last); // the last op's name and the output's stay
      BOOST_TEST(b.g.value(b.g.outputs[0]).name == out);
      BOOST_TEST(gelu.rt_info.count("fused_from") == 1u);
    }
  }
}

BOOST_AUTO_TEST_CASE(gelu_lookalikes_and_shared_intermediates_are_kept) {
  { // 0.6 instead of 0.5: not GELU
    builder b(13);
    auto x = b.input("x", {4});
    b.g.outputs = {erf_gelu(b, x, false, 0.6f)};
    fuse_gelu(b.g);
    BOOST_TEST(b.g.ops.size() == 5u);
  }
  { // the Erf's output is read elsewhere too
    builder b(13);
    auto x = b.input("x", {4});
    const ValueId y = erf_gelu(b, x, false);
    b.g.outputs = {y, b.g.ops[1].outputs[0]};
    fuse_gelu(b.g);
    BOOST_TEST(b.g.ops.size() == 5u);
  }
  { // pinned to another device than the root
    builder b(13);
    auto x = b.input("x", {4});
    b.g.outputs = {erf_gelu(b, x, true)};
    b.g.ops[1].rt_info["affinity"] = "GPU";
    fuse_gelu(b.g);
    BOOST_TEST(b.g.ops.size() == 5u);
  }
}

BOOST_AUTO_TEST_CASE(layer_norm_lookalikes_are_kept) {
  // Reduced over a leading axis, or the centred value read by a third op: not fused.
  for (int variant = 0; variant < 2; ++variant) {
    builder b(13);
    auto x = b.input("x", {2, 8});
    const std::vector<int64_t> axes{variant == 0 ? 0 : -1};
    auto& mean = b.op("ReduceMean", {x}, {{"axes", axes}, {"keepdims", int64_t{1}}});
    auto& d = b.op("Sub", {x, mean.outputs[0]});
    auto& sq = b.op("Pow", {d.outputs[0], b.scalar(2)});
    auto& var = b.op("ReduceMean", {sq.outputs[0]}, {{"axes", axes}, {"keepdims", int64_t{1}}});
    auto& eps = b.op("Add", {var.outputs[0], b.scalar(1e-5f)});
    auto& sd = b.op("Sqrt", {eps.outputs[0]});
    auto& y = b.op("Div", {d.outputs[0], sd.outputs[0]});
    b.g.outputs = {y.outputs[0]};
    if (variant == 1) b.g.outputs.push_back(d.outputs[0]);
    infer_shapes(b.g);
    fuse_layer_norm(b.g);
    BOOST_TEST(b.g.ops.size() == 7u, "variant " << variant);
  }
}

BOOST_AUTO_TEST_CASE(identities_are_removed_and_output_names_kept) {
  builder b;
  auto x = b.input("x", {2});
  auto& relu = b.op("Relu", {x});
  auto& id1 = b.op("Identity", {relu.outputs[0]});
  auto& drop = b.op("Dropout", {id1.outputs[0]});
  auto& neg = b.op("Neg", {drop.outputs[0]});
  auto& id2 = b.op("Identity", {neg.outputs[0]});
  std::string out_name = b.g.value(id2.outputs[0]).name;
  b.g.outputs = {id2.outputs[0]};
  eliminate_identities(b.g);
  BOOST_TEST_REQUIRE(b.g.ops.size() == 2u);
  BOOST_TEST(b.g.ops[1].type == "Neg");
  BOOST_TEST(b.g.ops[1].inputs[0] == b.g.ops[0].outputs[0]);
  BOOST_TEST(b.g.value(b.g.ops[1].outputs[0]).name == out_name);
  BOOST_TEST(b.g.value(b.g.outputs[0]).name == out_name);
}

BOOST_AUTO_TEST_CASE(dot_output) {
  builder b;
  auto x = b.input("x", {1, 3});
  auto& r = b.op("Relu", {x});
  b.g.outputs = {r.outputs[0]};
  infer_shapes(b.g);
  std::string dot = to_dot(b.g);
  BOOST_TEST(dot.find("digraph") != std::string::npos);
  BOOST_TEST(dot.find("Relu\\nRelu_0\\nf32 [1,3]") != std::string::npos, dot);
  BOOST_TEST(dot.find("in0 -> op0") != std::string::npos);
  BOOST_TEST(dot.find("op0 -> out0") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ op cost (the roofline's FLOPs)

BOOST_AUTO_TEST_CASE(op_cost_counts_multiply_adds_twice_and_every_byte_once) {
  builder b;
  auto x = b.input("x", PartialShape(dims{1, 4, 8, 8}));
  auto& conv = b.op("Conv", {x, b.constant("w", Tensor(element_type::f32, {6, 4, 3, 3}))},
                    {{"pads", dims{1, 1, 1, 1}}});
  auto& deconv = b.op("ConvTranspose", {x, b.constant("wt", Tensor(element_type::f32, {4, 2, 2, 2}))},
                      {{"strides", dims{2, 2}}});
  auto a = b.input("a", PartialShape(dims{3, 5}));
  auto& mm = b.op("MatMul", {a, b.constant("m", Tensor(element_type::f32, {5, 7}))});
  auto& relu = b.op("Relu", {a});
  for (const Op* o : {&conv, &deconv, &mm, &relu}) b.g.outputs.push_back(o->outputs[0]);
  infer_shapes(b.g);
  // Conv: 6x8x8 outputs, each 4x3x3 multiply-adds; bytes: x, w and y in f32.
  BOOST_TEST(cost_of(b.g, b.g.ops[0]).flops == 2.0 * 6 * 64 * 36);
  BOOST_TEST(cost_of(b.g, b.g.ops[0]).bytes == 4.0 * (256 + 216 + 384));
  // ConvTranspose: every input element meets 2x2x2 weights (output [1,2,16,16]).
  BOOST_TEST(cost_of(b.g, b.g.ops[1]).flops == 2.0 * 256 * 8);
  BOOST_TEST(cost_of(b.g, b.g.ops[1]).bytes == 4.0 * (256 + 32 + 512));
  // MatMul [3,5] x [5,7]: 21 outputs of 5 multiply-adds.
  BOOST_TEST(cost_of(b.g, b.g.ops[2]).flops == 2.0 * 21 * 5);
  // Anything else: one operation per output element.
  BOOST_TEST(cost_of(b.g, b.g.ops[3]).flops == 15.0);
  BOOST_TEST(cost_of(b.g, b.g.ops[3]).bytes == 4.0 * 30);
  // Shapes not known: nothing counted.
  builder d;
  auto& dyn = d.op("Relu", {d.input("y", PartialShape::unknown_rank())});
  BOOST_TEST(cost_of(d.g, dyn).flops == 0.0);
  BOOST_TEST(cost_of(d.g, dyn).bytes == 0.0);
}
