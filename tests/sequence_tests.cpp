/// Sequence values inside a graph: every sequence op on REFERENCE and CPU, their shape rules,
/// the errors that name the op (positions out of range, empty or mismatched concatenations,
/// splits that do not add up, sequences where tensors go), constant folding leaving them
/// alone, HETERO keeping them on one device, and the wire and exported models carrying them.
#define BOOST_TEST_MODULE sequence_tests
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <algorithm>
#include <sstream>

#include "benchmarks/tiny_onnx.hpp"
#include "graph/onnx_reader.hpp"
#include "graph/partition.hpp"
#include "graph/sequence.hpp"
#include "graph/shape_inference.hpp"
#include "graph/wire.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_tensors.hpp"

namespace utf = boost::unit_test;
using namespace troupe;
using tests::expect_error;
using tests::floats;
using tests::i64_scalar;
using tiny_onnx::model_builder;

namespace {

constexpr int i64 = onnx::TensorProto::INT64;
const char* const devices[] = {"REFERENCE", "CPU"};

std::string temp_file(const std::string& name) { return tests::temp_file("sequence", name); }
/// 0, 1, 2, ... in shape s.
Tensor iota(const Shape& s, float from = 0) {
  Tensor t(element_type::f32, s);
  for (int64_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = from + static_cast<float>(i);
  return t;
}

struct output {
  Shape shape;
  std::vector<double> values;
};

std::vector<output> run(CompiledModel cm, const std::vector<Tensor>& inputs) {
  auto req = cm.create_infer_request();
  for (std::size_t i = 0; i < inputs.size(); ++i) req.set_input_tensor(i, inputs[i]);
  req.infer();
  std::vector<output> r;
  for (std::size_t i = 0; i < cm.outputs().size(); ++i) {
    Tensor t = req.get_output_tensor(i);
    r.push_back({t.get_shape(), tests::to_doubles(t)});
  }
  return r;
}

std::vector<output> run(const std::string& path, const std::string& device, const std::vector<Tensor>& inputs) {
  Core core;
  return run(core.compile_model(core.read_model(path), device), inputs);
}

std::vector<double> seq_values(float from, int64_t n) {
  std::vector<double> r;
  for (int64_t i = 0; i < n; ++i) r.push_back(from + static_cast<double>(i));
  return r;
}

/// Construct [x, y], insert z at 1, erase position -3 (x), then: element 0 (z), the length
/// (2) and the concatenation [z; y] along axis 0. x [2,3], y [1,3], z [3,3].
std::string edit_model() {
  model_builder b(12);
  b.input("x", {2, 3}).input("y", {1, 3}).input("z", {3, 3});
  b.int64_initializer("one", {}, {1}).int64_initializer("minus3", {}, {-3}).int64_initializer("zero", {}, {0});
  b.output("first", {-1, 3}).output("len", {}, i64).output("joined", {-1, 3});
  b.node("SequenceConstruct", {"x", "y"}, {"s1"}, "construct")
      .node("SequenceInsert", {"s1", "z", "one"}, {"s2"}, "insert")
      .node("SequenceErase", {"s2", "minus3"}, {"s3"}, "erase")
      .node("SequenceAt", {"s3", "zero"}, {"first"}, "at")
      .node("SequenceLength", {"s3"}, {"len"}, "length")
      .node("ConcatFromSequence", {"s3"}, {"joined"}, "concat")
      .attr("axis", int64_t{0});
  return b.write(temp_file("edit.onnx"));
}

/// x [2,5] split along axis 1 by the scalar `split` (2: pieces of 2, 2, 1): the last piece and
/// the count.
std::string split_model(int64_t split) {
  model_builder b(12);
  b.input("x", {2, 5}).int64_initializer("split", {}, {split}).int64_initializer("last", {}, {-1});
  b.output("tail", {2, -1}).output("count", {}, i64);
  b.node("SplitToSequence", {"x", "split"}, {"s"}, "split").attr("axis", int64_t{1});
  b.node("SequenceAt", {"s", "last"}, {"tail"}, "at").node("SequenceLength", {"s"}, {"count"}, "length");
  return b.write(temp_file("split.onnx"));
}

/// x [3,2] split into its rows without the split axis, stacked again on a new axis 1: the
/// transpose [2,3].
std::string transpose_model() {
  model_builder b(12);
  b.input("x", {3, 2}).output("t", {2, 3});
  b.node("SplitToSequence", {"x"}, {"rows"}, "split").attr("axis", int64_t{0}).attr("keepdims", int64_t{0});
  b.node("ConcatFromSequence", {"rows"}, {"t"}, "stack").attr("axis", int64_t{1}).attr("new_axis", int64_t{1});
  return b.write(temp_file("transpose.onnx"));
}

/// An empty i64 sequence, x appended (no position), then its element -1 and the length.
std::string empty_model() {
  model_builder b(12);
  b.input("x", {2}, i64).output("back", {2}, i64).output("len", {}, i64).int64_initializer("last", {}, {-1});
  b.node("SequenceEmpty", {}, {"e"}, "empty").attr("dtype", int64_t{i64});
  b.node("SequenceInsert", {"e", "x"}, {"s"}, "append")
      .node("SequenceAt", {"s", "last"}, {"back"}, "at")
      .node("SequenceLength", {"s"}, {"len"}, "length");
  return b.write(temp_file("empty.onnx"));
}

/// SequenceAt with the position as a graph input, of a sequence of x and y ([2] each).
std::string at_model() {
  model_builder b(12);
  b.input("x", {2}).input("y", {2}).input("pos", {}, i64).output("v", {2});
  b.node("SequenceConstruct", {"x", "y"}, {"s"}, "construct").node("SequenceAt", {"s", "pos"}, {"v"}, "at");
  return b.write(temp_file("at.onnx"));
}

const graph::Value& value_named(const graph::Graph& g, const std::string& name) { return g.value(g.find_value(name)); }

} // namespace

BOOST_AUTO_TEST_CASE(insert_erase_at_length_and_concat_run_on_reference_and_cpu) {
  const auto path = edit_model();
  for (const char* device : devices) {
    BOOST_TEST_CONTEXT(device) {
      auto r = run(path, device, {iota({2, 3}), iota({1, 3}, 100), iota({3, 3}, 200)});
      BOOST_TEST(r[0].shape == (Shape{3, 3}));
      BOOST_TEST(r[0].values == seq_values(200, 9));
      BOOST_TEST(r[1].values == (std::vector<double>{2}));
      BOOST_TEST(r[2].shape == (Shape{4, 3}));
      auto joined = seq_values(200, 9);
      for (double v : seq_values(100, 3)) joined.push_back(v);
      BOOST_TEST(r[2].values == joined);
    }
  }
}

BOOST_AUTO_TEST_CASE(split_to_sequence_makes_pieces_and_a_smaller_last_one) {
  for (const char* device : devices) {
    BOOST_TEST_CONTEXT(device) {
      auto r = run(split_model(2), device, {iota({2, 5})});
      BOOST_TEST(r[0].shape == (Shape{2, 1}));
      BOOST_TEST(r[0].values == (std::vector<double>{4, 9}));
      BOOST_TEST(r[1].values == (std::vector<double>{3}));
      auto t = run(transpose_model(), device, {iota({3, 2})});
      BOOST_TEST(t[0].shape == (Shape{2, 3}));
      BOOST_TEST(t[0].values == (std::vector<double>{0, 2, 4, 1, 3, 5}));
    }
  }
}

BOOST_AUTO_TEST_CASE(an_empty_sequence_of_the_dtype_grows_at_its_end) {
  Tensor x(element_type::i64, Shape{2});
  x.data<int64_t>()[0] = 7;
  x.data<int64_t>()[1] = -8;
  for (const char* device : devices) {
    BOOST_TEST_CONTEXT(device) {
      auto r = run(empty_model(), device, {x});
      BOOST_TEST(r[0].values == (std::vector<double>{7, -8}));
      BOOST_TEST(r[1].values == (std::vector<double>{1}));
    }
  }
}

BOOST_AUTO_TEST_CASE(shape_rules_mark_sequences_and_merge_element_shapes) {
  auto g = graph::read_onnx_file(edit_model());
  graph::infer_shapes(g);
  const auto& s2 = value_named(g, "s2");
  BOOST_TEST(s2.sequence);
  BOOST_TEST(to_string(s2.type) == "f32");
  BOOST_TEST(s2.shape.to_string() == PartialShape({-1, 3}).to_string()); // [2,3], [1,3], [3,3] merged
  BOOST_TEST(!value_named(g, "first").sequence);
  BOOST_TEST(value_named(g, "len").shape.to_string() == PartialShape(Shape{}).to_string());
  BOOST_TEST(value_named(g, "joined").shape.to_string() == PartialShape({-1, 3}).to_string());

  auto t = graph::read_onnx_file(transpose_model());
  graph::infer_shapes(t);
  BOOST_TEST(value_named(t, "rows").shape.to_string() == PartialShape({2}).to_string()); // keepdims 0
  BOOST_TEST(value_named(t, "t").shape.to_string() == PartialShape({2, -1}).to_string());

  auto s = graph::read_onnx_file(split_model(5)); // divides 5: every piece is [2,5]
  graph::infer_shapes(s);
  BOOST_TEST(value_named(s, "s").shape.to_string() == PartialShape({2, 5}).to_string());
  expect_error([&] { auto z = graph::read_onnx_file(split_model(0)); graph::infer_shapes(z); }, {"SplitToSequence node 'split'", "size must be positive, got 0"});
  auto u = graph::read_onnx_file(split_model(2)); // does not divide: the axis is dynamic
  graph::infer_shapes(u);
  BOOST_TEST(value_named(u, "s").shape.to_string() == PartialShape({2, -1}).to_string());
}

BOOST_AUTO_TEST_CASE(positions_out_of_range_name_op_position_and_length) {
  const auto path = at_model();
  for (const char* device : devices) {
    BOOST_TEST_CONTEXT(device) {
      auto r = run(path, device, {iota({2}), iota({2}, 10), i64_scalar(-1)});
      BOOST_TEST(r[0].values == (std::vector<double>{10, 11}));
      expect_error([&] { run(path, device, {iota({2}), iota({2}, 10), i64_scalar(2)}); },
                   {"SequenceAt node 'at'", "position 2", "length 2", "[-2, 1]"});
      expect_error([&] { run(path, device, {iota({2}), iota({2}, 10), i64_scalar(-3)}); },
                   {"SequenceAt node 'at'", "position -3", "length 2"});
    }
  }
  // Insert accepts [-n, n], erase [-n, n - 1].
  model_builder b(12);
  b.input("x", {2}).input("pos", {}, i64).output("n", {}, i64).output("m", {}, i64);
  b.node("SequenceConstruct", {"x"}, {"s"}, "construct")
      .node("SequenceInsert", {"s", "x", "pos"}, {"s2"}, "insert")
      .node("SequenceErase", {"s", "pos"}, {"s3"}, "erase")
      .node("SequenceLength", {"s2"}, {"n"}, "n")
      .node("SequenceLength", {"s3"}, {"m"}, "m");
  const auto edits = b.write(temp_file("edits.onnx"));
  for (const char* device : devices) {
    BOOST_TEST_CONTEXT(device) {
      auto r = run(edits, device, {iota({2}), i64_scalar(-1)});
      BOOST_TEST(r[0].values == (std::vector<double>{2}));
      BOOST_TEST(r[1].values == (std::vector<double>{0}));
      expect_error([&] { run(edits, device, {iota({2}), i64_scalar(1)}); },
                   {"SequenceErase node 'erase'", "position 1", "length 1", "[-1, 0]"});
      expect_error([&] { run(edits, device, {iota({2}), i64_scalar(2)}); },
                   {"SequenceInsert node 'insert'", "position 2", "length 1", "[-1, 1]"});
    }
  }
}

BOOST_AUTO_TEST_CASE(bad_concatenations_and_splits_name_the_op) {
  model_builder empty(12);
  empty.output("y", {-1});
  empty.node("SequenceEmpty", {}, {"e"}, "empty").node("ConcatFromSequence", {"e"}, {"y"}, "concat").attr("axis", int64_t{0});
  const auto empty_path = empty.write(temp_file("concat_empty.onnx"));
  model_builder mismatch(12);
  mismatch.input("x", {2, 3}).input("y", {2, 4}).output("z", {-1, -1});
  mismatch.node("SequenceConstruct", {"x", "y"}, {"s"}, "construct")
      .node("ConcatFromSequence", {"s"}, {"z"}, "concat")
      .attr("axis", int64_t{0});
  const auto mismatch_path = mismatch.write(temp_file("concat_mismatch.onnx"));
  model_builder split(12);
  split.input("x", {2, 5}).input("sizes", {2}, i64).output("n", {}, i64);
  split.node("SplitToSequence", {"x", "sizes"}, {"s"}, "split")
      .attr("axis", int64_t{1})
      .node("SequenceLength", {"s"}, {"n"}, "length");
  const auto split_path = split.write(temp_file("split_sizes.onnx"));
  Tensor sizes(element_type::i64, Shape{2});
  sizes.data<int64_t>()[0] = 2;
  sizes.data<int64_t>()[1] = 2;
  for (const char* device : devices) {
    BOOST_TEST_CONTEXT(device) {
      expect_error([&] { run(empty_path, device, {}); }, {"ConcatFromSequence node 'concat'", "empty sequence"});
      expect_error([&] { run(mismatch_path, device, {iota({2, 3}), iota({2, 4})}); },
                   {"ConcatFromSequence node 'concat'", "element 1 has shape [2,4]", "[2,3]"});
      expect_error([&] { run(split_path, device, {iota({2, 5}), sizes}); },
                   {"SplitToSequence node 'split'", "sum to 4", "has 5"});
      sizes.data<int64_t>()[1] = -1;
      expect_error([&] { run(split_path, device, {iota({2, 5}), sizes}); },
                   {"SplitToSequence node 'split'", "must not be negative, got -1"});
      sizes.data<int64_t>()[1] = 3;
      BOOST_TEST(run(split_path, device, {iota({2, 5}), sizes})[0].values == (std::vector<double>{2}));
      sizes.data<int64_t>()[1] = 2;
    }
  }
  // A constant split that does not add up is refused at compile time.
  model_builder constant(12);
  constant.input("x", {2, 5}).int64_initializer("sizes", {2}, {1, 1}).output("n", {}, i64);
  constant.node("SplitToSequence", {"x", "sizes"}, {"s"}, "split")
      .attr("axis", int64_t{1})
      .node("SequenceLength", {"s"}, {"n"}, "length");
  const auto constant_path = constant.write(temp_file("split_constant.onnx"));
  Core core;
  expect_error([&] { core.read_model(constant_path); }, {"SplitToSequence node 'split'", "sum to 2", "axis 1 has 5"});
}

BOOST_AUTO_TEST_CASE(sequences_and_tensors_do_not_mix) {
  Core core;
  model_builder relu(12);
  relu.input("x", {2}).output("y", {2});
  relu.node("SequenceConstruct", {"x"}, {"s"}, "construct").node("Relu", {"s"}, {"y"}, "relu");
  expect_error([&] { core.read_model(relu.write(temp_file("relu_seq.onnx"))); },
               {"Relu node 'relu'", "input 0 's' is a sequence where Relu takes a tensor"});
  model_builder at(12);
  at.input("x", {2}).int64_initializer("zero", {}, {0}).output("y", {2});
  at.node("SequenceAt", {"x", "zero"}, {"y"}, "at");
  expect_error([&] { core.read_model(at.write(temp_file("at_tensor.onnx"))); },
               {"SequenceAt node 'at'", "is a tensor where SequenceAt takes a sequence"});
  model_builder types(12);
  types.input("x", {2}).input("k", {2}, i64).output("n", {}, i64);
  types.node("SequenceConstruct", {"x"}, {"s"}, "construct")
      .node("SequenceInsert", {"s", "k"}, {"s2"}, "insert")
      .node("SequenceLength", {"s2"}, {"n"}, "length");
  expect_error([&] { core.read_model(types.write(temp_file("insert_type.onnx"))); },
               {"SequenceInsert node 'insert'", "is i64 but the sequence holds f32"});
  model_builder out(12);
  out.input("x", {2}).output("s", {2});
  out.node("SequenceConstruct", {"x"}, {"s"}, "construct");
  expect_error([&] { core.read_model(out.write(temp_file("seq_output.onnx"))); },
               {"graph output 's' is a sequence", "not as its inputs or outputs"});
}

BOOST_AUTO_TEST_CASE(constant_folding_leaves_sequences_to_run_time) {
  // Everything before the Add is constant; the sequence ops still run, and right.
  model_builder b(12);
  b.input("x", {2}).output("y", {2});
  b.float_initializer("a", {2}, {1, 2}).float_initializer("c", {2}, {30, 40}).int64_initializer("one", {}, {1});
  b.node("SequenceConstruct", {"a", "c"}, {"s"}, "construct")
      .node("SequenceAt", {"s", "one"}, {"picked"}, "at")
      .node("Add", {"x", "picked"}, {"y"}, "add");
  const auto path = b.write(temp_file("fold.onnx"));
  for (const char* device : devices) {
    BOOST_TEST_CONTEXT(device) {
      BOOST_TEST(run(path, device, {floats({2}, {1, 1})})[0].values == (std::vector<double>{31, 41}));
    }
  }
}

BOOST_AUTO_TEST_CASE(sequences_travel_over_the_wire_and_in_exported_models) {
  auto g = graph::read_onnx_file(edit_model());
  graph::infer_shapes(g);
  const auto bytes = graph::encode_graph(g);
  auto back = graph::decode_graph(bytes, "edit");
  BOOST_TEST(value_named(back, "s2").sequence);
  BOOST_TEST(!value_named(back, "x").sequence);
  BOOST_TEST(graph::encode_graph(back) == bytes);
  // A flags byte the format does not define is refused, naming the value: the one byte that
  // differs between a sequence and a tensor value is its flags.
  graph::Graph one;
  one.add_value(value_named(g, "s2"));
  auto blob = graph::encode_graph(one);
  one.values[0].sequence = false;
  const auto tensor_blob = graph::encode_graph(one);
  BOOST_REQUIRE(blob.size() == tensor_blob.size());
  const auto at = std::mismatch(blob.begin(), blob.end(), tensor_blob.begin()).first - blob.begin();
  BOOST_REQUIRE(static_cast<std::size_t>(at) < blob.size());
  BOOST_TEST(blob[static_cast<std::size_t>(at)] == 2);
  blob[static_cast<std::size_t>(at)] = 3;
  expect_error([&] { graph::decode_graph(blob, "odd"); }, {"odd", "value #0 's2'", "flags are 3"});

  Core core;
  auto cm = core.compile_model(core.read_model(edit_model()), "CPU");
  std::stringstream exported;
  cm.export_model(exported);
  auto imported = core.import_model(exported, "CPU");
  auto r = run(imported, {iota({2, 3}), iota({1, 3}, 100), iota({3, 3}, 200)});
  BOOST_TEST(r[1].values == (std::vector<double>{2}));
  BOOST_TEST(r[0].values == seq_values(200, 9));
}

BOOST_AUTO_TEST_CASE(a_sequence_never_crosses_devices) {
  Core core;
  auto model = core.read_model(at_model());
  for (auto& n : model.get_ops()) {
    if (n.get_friendly_name() == "construct") n.get_rt_info()["affinity"] = "CPU";
    if (n.get_friendly_name() == "at") n.get_rt_info()["affinity"] = "REFERENCE";
  }
  expect_error([&] { core.compile_model(model, "HETERO:CPU,REFERENCE"); },
               {"sequence value 's'", "SequenceConstruct node 'construct'", "on CPU",
                "SequenceAt node 'at'", "on REFERENCE", "cannot cross devices"});
  // On one device they run.
  for (auto& n : model.get_ops()) n.get_rt_info()["affinity"] = "REFERENCE";
  auto cm = core.compile_model(model, "HETERO:CPU,REFERENCE");
  BOOST_TEST(run(cm, {iota({2}), iota({2}, 10), i64_scalar(0)})[0].values == (std::vector<double>{0, 1}));
}

BOOST_AUTO_TEST_CASE(the_gpu_refuses_sequence_ops_and_hetero_puts_them_on_the_cpu,
                     *utf::precondition(tests::gpu_present())) {
  // Relu on the GPU before and after: the tensors cross, the sequence stays on the CPU.
  model_builder b(12);
  b.input("x", {2, 3}).input("y", {2, 3}).int64_initializer("one", {}, {1}).output("out", {2, 3});
  b.node("Relu", {"x"}, {"rx"}, "relu_x")
      .node("SequenceConstruct", {"rx", "y"}, {"s"}, "construct")
      .node("SequenceAt", {"s", "one"}, {"picked"}, "at")
      .node("Relu", {"picked"}, {"out"}, "relu_out");
  Core core;
  auto model = core.read_model(b.write(temp_file("hetero.onnx")));
  auto why = core.query_model_unsupported(model, "GPU");
  BOOST_REQUIRE(why.count("construct"));
  BOOST_TEST(why["construct"].find("SequenceConstruct node 'construct'") != std::string::npos, why["construct"]);
  BOOST_TEST(why["construct"].find("sequence ops run on the CPU") != std::string::npos, why["construct"]);
  auto placed = core.query_model(model, "HETERO:GPU,CPU");
  BOOST_TEST(placed["construct"] == "CPU");
  BOOST_TEST(placed["at"] == "CPU");
  BOOST_TEST(placed["relu_x"].rfind("GPU", 0) == 0u);
  auto cm = core.compile_model(model, "HETERO:GPU,CPU");
  auto r = run(cm, {iota({2, 3}), floats({2, 3}, {-1, 2, -3, 4, -5, 6})});
  BOOST_TEST(r[0].values == (std::vector<double>{0, 2, 0, 4, 0, 6}));
}

BOOST_AUTO_TEST_CASE(a_sequence_handle_refuses_to_be_copied_as_bytes) {
  auto s = graph::make_sequence(element_type::f32, {iota({2})});
  BOOST_TEST(graph::is_sequence(s));
  BOOST_TEST(!graph::is_sequence(iota({2})));
  BOOST_TEST(s.get_byte_size() == 0u);
  BOOST_TEST(s.get_shape() == (Shape{1}));
  expect_error([&] { s.clone(); }, {"element type undefined"});
  graph::Op op;
  op.type = "SequenceAt";
  op.name = "at";
  expect_error([&] { graph::sequence_of(iota({2}), op); }, {"SequenceAt node 'at'", "expected a sequence", "f32 tensor"});
}
