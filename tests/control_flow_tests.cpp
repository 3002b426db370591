/// Control flow: If, Loop and Scan with subgraphs read from ONNX (outer-scope values become
/// op inputs), shape-inferred, run on REFERENCE and CPU, sent over the wire and exported,
/// refused by the GPU and placed on the CPU by HETERO; and the errors that name the op.
#define BOOST_TEST_MODULE control_flow_tests
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <sstream>

#include "benchmarks/tiny_onnx.hpp"
#include "graph/inline_if.hpp"
#include "graph/onnx_reader.hpp"
#include "graph/shape_inference.hpp"
#include "graph/wire.hpp"
#include "tests/support/control_flow_model.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/test_tensors.hpp"

namespace utf = boost::unit_test;
using namespace troupe;
using tests::bool_scalar;
using tests::expect_error;
using tests::floats;
using tests::i64_scalar;
using tests::scalar;
using tiny_onnx::model_builder;

namespace {

constexpr int f32 = onnx::TensorProto::FLOAT, i64 = onnx::TensorProto::INT64, boolean = onnx::TensorProto::BOOL;
const char* const devices[] = {"REFERENCE", "CPU"};

std::string temp_file(const std::string& name) { return tests::temp_file("control_flow", name); }
std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.get_size()}; }

struct result {
  std::vector<Shape> shapes;
  std::vector<std::vector<float>> values;
};

result run(CompiledModel cm, const std::vector<Tensor>& inputs) {
  auto req = cm.create_infer_request();
  for (std::size_t i = 0; i < inputs.size(); ++i) req.set_input_tensor(i, inputs[i]);
  req.infer();
  result r;
  for (std::size_t i = 0; i < cm.outputs().size(); ++i) {
    Tensor t = req.get_output_tensor(i);
    r.shapes.push_back(t.get_shape());
    r.values.push_back(t.get_element_type() == element_type::f32 ? values(t) : std::vector<float>{});
  }
  return r;
}

result run(Core& core, const std::string& path, const std::string& device, const std::vector<Tensor>& inputs) {
  auto cm = core.compile_model(core.read_model(path), device);
  return run(cm, inputs);
}

/// y = cond ? x + x : x * x over x [3]: both branches read x from the outer graph.
std::string if_model() {
  model_builder then_b, else_b, b(11);
  then_b.output("then_y", {3}).node("Add", {"x", "x"}, {"then_y"}, "then_add");
  else_b.output("else_y", {3}).node("Mul", {"x", "x"}, {"else_y"}, "else_mul");
  b.input("cond", {}, boolean).input("x", {3}).output("y", {3});
  b.node("If", {"cond"}, {"y"}, "if").attr("then_branch", then_b).attr("else_branch", else_b);
  return b.write(temp_file("if.onnx"));
}

/// for i < M while cond: y += i; ys collects every y. M and cond are inputs.
std::string loop_model() {
  model_builder body, b(11);
  body.input("iter", {}, i64).input("cond_in", {}, boolean).input("y_in", {2});
  body.output("cond_out", {}, boolean).output("y_out", {2}).output("scan", {2});
  body.node("Identity", {"cond_in"}, {"cond_out"})
      .node("Cast", {"iter"}, {"fi"})
      .attr("to", int64_t{f32})
      .node("Add", {"y_in", "fi"}, {"y_out"})
      .node("Identity", {"y_out"}, {"scan"});
  b.input("M", {}, i64).input("cond", {}, boolean).input("y0", {2}).output("y", {2}).output("ys", {-1, 2});
  b.node("Loop", {"M", "cond", "y0"}, {"y", "ys"}, "loop").attr("body", body);
  return b.write(temp_file("loop.onnx"));
}

/// while (y < limit) y += 1, with no trip count: the body's condition stops it. The body's
/// y input has no type (the op gives it one) and limit comes from the outer graph.
std::string while_model() {
  model_builder body, b(11);
  body.input("iter", {}, i64).input("cond_in", {}, boolean).untyped_input("y_in");
  body.output("cond_out", {}, boolean).output("y_out", {}).output("scan", {});
  body.float_initializer("one", {}, {1.0f});
  body.node("Add", {"y_in", "one"}, {"y_out"})
      .node("Less", {"y_out", "limit"}, {"cond_out"})
      .node("Identity", {"y_out"}, {"scan"});
  b.input("cond", {}, boolean).input("limit", {}).input("y0", {}).output("y", {}).output("ys", {-1});
  b.node("Loop", {"", "cond", "y0"}, {"y", "ys"}, "while").attr("body", body);
  return b.write(temp_file("while.onnx"));
}

std::string nested_model() { return tests::loop_with_if_model(temp_file("nested.onnx")); }

/// y = x + x when x has 3 elements, else x itself (the branch's output is the captured x): an
/// exporter's `if x.shape[0] == 3`. x's length is dynamic, so the condition folds per shape.
std::string if_on_length_model() {
  model_builder then_b, else_b, b(13);
  then_b.output("then_y", {-1}).node("Add", {"x", "x"}, {"then_y"}, "then_add");
  else_b.output("x", {-1});
  b.input("x", {-1}).output("y", {-1}).int64_initializer("three", {1}, {3});
  b.node("Shape", {"x"}, {"length"}, "shape").node("Equal", {"length", "three"}, {"cond"}, "is_three");
  b.node("If", {"cond"}, {"y"}, "if").attr("then_branch", then_b).attr("else_branch", else_b);
  return b.write(temp_file("if_on_length.onnx"));
}

/// Scan (opset 11) summing x's rows into a state and emitting each partial sum.
std::string scan_model(bool reversed_columns) {
  model_builder body, b(11);
  body.input("sum_in", {2}).input("next", {2}).output("sum_out", {2}).output("scan_out", {2});
  body.node("Add", {"sum_in", "next"}, {"sum_out"}).node("Identity", {"sum_out"}, {"scan_out"});
  b.input("init", {2}).input("x", reversed_columns ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3, 2});
  b.output("sum", {2}).output("cum", reversed_columns ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3, 2});
  b.node("Scan", {"init", "x"}, {"sum", "cum"}, "scan").attr("body", body).attr("num_scan_inputs", int64_t{1});
  if (reversed_columns)
    b.attr("scan_input_axes", std::vector<int64_t>{1})
        .attr("scan_input_directions", std::vector<int64_t>{1})
        .attr("scan_output_axes", std::vector<int64_t>{1});
  return b.write(temp_file(reversed_columns ? "scan_reversed.onnx" : "scan.onnx"));
}

const graph::Op& op_named(const graph::Graph& g, const std::string& name) {
  for (const auto& op : g.ops)
    if (op.name == name) return op;
  throw Exception("no op '" + name + "'");
}

} // namespace

BOOST_AUTO_TEST_CASE(if_picks_its_branch_by_the_run_time_condition) {
  Core core;
  const auto path = if_model();
  const auto x = floats({3}, {1, 2, 3});
  for (const char* dev : devices) {
    auto cm = core.compile_model(core.read_model(path), dev);
    BOOST_TEST(run(cm, {bool_scalar(true), x}).values[0] == (std::vector<float>{2, 4, 6}), dev);
    BOOST_TEST(run(cm, {bool_scalar(false), x}).values[0] == (std::vector<float>{1, 4, 9}), dev);
  }
}

BOOST_AUTO_TEST_CASE(an_if_whose_condition_folds_runs_its_branch_inlined) {
  // Compiled per input shape, the condition is a constant: the taken branch's ops (or an
  // Identity, where the branch hands back a captured value) replace the If.
  Core core;
  const auto path = if_on_length_model();
  for (const char* dev : devices) {
    auto cm = core.compile_model(core.read_model(path), dev, {{"PERF_COUNT", "YES"}});
    for (const auto& [x, want] : {std::pair{floats({3}, {1, 2, 3}), std::vector<float>{2, 4, 6}},
                                  std::pair{floats({4}, {1, 2, 3, 4}), std::vector<float>{1, 2, 3, 4}}}) {
      auto req = cm.create_infer_request();
      req.set_input_tensor(0, x);
      req.infer();
      BOOST_TEST(values(req.get_output_tensor(0)) == want, dev << " at " << x.get_size() << " elements");
      if (std::string(dev) != "CPU") continue;
      bool if_ran = false, branch_ran = false;
      for (const auto& p : req.get_profiling_info()) {
        if_ran |= p.node_type == "If" && p.status == ProfilingInfo::Status::EXECUTED;
        branch_ran |= p.node_name == (x.get_size() == 3 ? "if/then_add" : "if/output_0");
      }
      BOOST_TEST(!if_ran, "the If ran at " << x.get_size() << " elements");
      BOOST_TEST(branch_ran, "no inlined branch op at " << x.get_size() << " elements");
    }
  }
  // The graph pass alone: a constant condition, each branch.
  for (bool c : {true, false}) {
    auto g = graph::read_onnx_file(if_model());
    auto& cond = g.value(g.inputs[0]);
    cond.constant = bool_scalar(c);
    g.inputs.erase(g.inputs.begin());
    BOOST_TEST(graph::inline_constant_ifs(g));
    BOOST_REQUIRE(g.ops.size() == 1u);
    BOOST_TEST(g.ops[0].type == (c ? "Add" : "Mul"));
    BOOST_TEST(g.ops[0].name == (c ? "if/then_add" : "if/else_mul"));
    BOOST_TEST(g.ops[0].outputs[0] == g.outputs[0]);
    BOOST_TEST(!graph::inline_constant_ifs(g)); // nothing left to inline
  }
}

BOOST_AUTO_TEST_CASE(outer_values_become_op_and_subgraph_inputs) {
  auto g = graph::read_onnx_file(if_model());
  const auto& op = op_named(g, "if");
  BOOST_TEST(op.declared_inputs() == 1u);
  BOOST_REQUIRE(op.inputs.size() == 2u);
  BOOST_TEST(g.value(op.inputs[1]).name == "x");
  for (const char* branch : {"then_branch", "else_branch"}) {
    const auto* body = op.attr_graph(branch);
    BOOST_REQUIRE(body);
    BOOST_REQUIRE(body->inputs.size() == 1u);
    BOOST_TEST(body->value(body->inputs[0]).name == "x");
  }
  // Two scopes out: the Loop and its body both get w, the If inside reads it from the body.
  auto n = graph::read_onnx_file(nested_model());
  const auto& loop = op_named(n, "loop");
  BOOST_TEST(loop.declared_inputs() == 3u);
  BOOST_REQUIRE(loop.inputs.size() == 4u);
  BOOST_TEST(loop.inputs[1] == graph::no_value);
  BOOST_TEST(n.value(loop.inputs[3]).name == "w");
  const auto& body = *loop.attr_graph("body");
  BOOST_REQUIRE(body.inputs.size() == 4u);
  BOOST_TEST(body.value(body.inputs[3]).name == "w");
  const auto& inner = op_named(body, "inner_if");
  BOOST_TEST(inner.declared_inputs() == 1u);
  BOOST_REQUIRE(inner.inputs.size() == 3u);
  BOOST_TEST(body.value(inner.inputs[1]).name == "y_in");
  BOOST_TEST(inner.inputs[2] == body.inputs[3]);
}

BOOST_AUTO_TEST_CASE(loop_carries_a_value_and_stacks_a_scan_output) {
  Core core;
  const auto path = loop_model();
  const auto y0 = floats({2}, {1, 10});
  for (const char* dev : devices) {
    auto cm = core.compile_model(core.read_model(path), dev);
    auto r = run(cm, {i64_scalar(3), bool_scalar(true), y0});
    BOOST_TEST(r.values[0] == (std::vector<float>{4, 13}), dev);
    BOOST_TEST(r.shapes[1] == (Shape{3, 2}), dev);
    BOOST_TEST(r.values[1] == (std::vector<float>{1, 10, 2, 11, 4, 13}), dev);
    // No iteration: by the trip count, then by the condition.
    for (auto inputs : {std::vector<Tensor>{i64_scalar(0), bool_scalar(true), y0},
                        std::vector<Tensor>{i64_scalar(5), bool_scalar(false), y0}}) {
      auto none = run(cm, inputs);
      BOOST_TEST(none.values[0] == (std::vector<float>{1, 10}), dev);
      BOOST_TEST(none.shapes[1] == (Shape{0, 2}), dev);
    }
  }
}

BOOST_AUTO_TEST_CASE(loop_without_trip_count_stops_by_the_bodys_condition) {
  Core core;
  const auto path = while_model();
  for (const char* dev : devices) {
    auto r = run(core, path, dev, {bool_scalar(true), floats({}, {3.5f}), floats({}, {0})});
    BOOST_TEST(r.values[0] == (std::vector<float>{4}), dev);
    BOOST_TEST(r.values[1] == (std::vector<float>{1, 2, 3, 4}), dev);
  }
}

BOOST_AUTO_TEST_CASE(if_inside_loop_reads_a_value_two_scopes_out) {
  Core core;
  const auto path = nested_model();
  for (const char* dev : devices) {
    auto r = run(core, path, dev, {i64_scalar(4), floats({1}, {1}), floats({1}, {2})});
    BOOST_TEST(r.values[0] == (std::vector<float>{20}), dev); // 1+2, 3+2, 5*2, 10*2
  }
}

BOOST_AUTO_TEST_CASE(scan_sums_rows_and_runs_reversed_along_another_axis) {
  Core core;
  for (const char* dev : devices) {
    auto r = run(core, scan_model(false), dev, {floats({2}, {0, 0}), floats({3, 2}, {1, 2, 3, 4, 5, 6})});
    BOOST_TEST(r.values[0] == (std::vector<float>{9, 12}), dev);
    BOOST_TEST(r.values[1] == (std::vector<float>{1, 2, 4, 6, 9, 12}), dev);
    // Columns of [[1,2,3],[4,5,6]] last first: [3,6], [5,11], [6,15], stacked as columns.
    auto c = run(core, scan_model(true), dev, {floats({2}, {0, 0}), floats({2, 3}, {1, 2, 3, 4, 5, 6})});
    BOOST_TEST(c.values[0] == (std::vector<float>{6, 15}), dev);
    BOOST_TEST(c.shapes[1] == (Shape{2, 3}), dev);
    BOOST_TEST(c.values[1] == (std::vector<float>{3, 5, 6, 6, 11, 15}), dev);
  }
  // An empty sequence: the state as it came, a scan output with no rows.
  model_builder body, b(11);
  body.input("sum_in", {2}).input("next", {2}).output("sum_out", {2}).output("scan_out", {2});
  body.node("Add", {"sum_in", "next"}, {"sum_out"}).node("Identity", {"sum_out"}, {"scan_out"});
  b.input("init", {2}).input("x", {-1, 2}).output("sum", {2}).output("cum", {-1, 2});
  b.node("Scan", {"init", "x"}, {"sum", "cum"}, "scan").attr("body", body).attr("num_scan_inputs", int64_t{1});
  const auto empty = b.write(temp_file("scan_empty.onnx"));
  for (const char* dev : devices) {
    auto e = run(core, empty, dev, {floats({2}, {7, 8}), floats({0, 2}, {})});
    BOOST_TEST(e.values[0] == (std::vector<float>{7, 8}), dev);
    BOOST_TEST(e.shapes[1] == (Shape{0, 2}), dev);
  }
}

BOOST_AUTO_TEST_CASE(scan8_scans_each_batch_entry_and_refuses_padded_sequences) {
  model_builder body, b(8);
  body.input("sum_in", {2}).input("next", {2}).output("sum_out", {2}).output("scan_out", {2});
  body.node("Add", {"sum_in", "next"}, {"sum_out"}).node("Identity", {"sum_out"}, {"scan_out"});
  b.input("lens", {2}, onnx::TensorProto::INT32).input("init", {2, 2}).input("x", {2, 3, 2});
  b.output("sum", {2, 2}).output("cum", {2, 3, 2});
  b.node("Scan", {"lens", "init", "x"}, {"sum", "cum"}, "scan8").attr("body", body).attr("num_scan_inputs", int64_t{1});
  const auto path = b.write(temp_file("scan8.onnx"));
  auto lens = [](int32_t a, int32_t c) {
    Tensor t(element_type::i32, Shape{2});
    t.data<int32_t>()[0] = a;
    t.data<int32_t>()[1] = c;
    return t;
  };
  const auto init = floats({2, 2}, {0, 0, 100, 100});
  const auto x = floats({2, 3, 2}, {1, 2, 3, 4, 5, 6, 1, 1, 1, 1, 1, 1});
  Core core;
  for (const char* dev : devices) {
    auto cm = core.compile_model(core.read_model(path), dev);
    auto r = run(cm, {lens(3, 3), init, x});
    BOOST_TEST(r.values[0] == (std::vector<float>{9, 12, 103, 103}), dev);
    BOOST_TEST(r.values[1] == (std::vector<float>{1, 2, 4, 6, 9, 12, 101, 101, 102, 102, 103, 103}), dev);
    expect_error([&] { run(cm, {lens(3, 2), init, x}); }, {"Scan node 'scan8'", "padded batches are not supported"});
  }
}

BOOST_AUTO_TEST_CASE(shapes_merge_over_branches_and_iterations) {
  // If: [2,3] or [2,4] is [2,?]; [2,3] or [6] is of unknown rank.
  auto branches = [](std::vector<int64_t> else_dims) {
    model_builder then_b, else_b, b(11);
    std::vector<float> six(6, 1.0f), eight(8, 2.0f);
    then_b.float_initializer("a", {2, 3}, six).output("t", {2, 3}).node("Identity", {"a"}, {"t"});
    else_b.float_initializer("b", else_dims, else_dims.size() == 2 ? eight : six).output("e", else_dims);
    else_b.node("Identity", {"b"}, {"e"});
    b.input("cond", {}, boolean).output("y", {-1, -1});
    b.node("If", {"cond"}, {"y"}, "if").attr("then_branch", then_b).attr("else_branch", else_b);
    return b.write(temp_file("if_shapes.onnx"));
  };
  auto g = graph::read_onnx_file(branches({2, 4}));
  graph::infer_shapes(g);
  BOOST_TEST(g.value(g.outputs[0]).shape.to_string() == "[2,?]");
  Core core;
  for (const char* dev : devices) {
    BOOST_TEST(run(core, branches({2, 4}), dev, {bool_scalar(false)}).shapes[0] == (Shape{2, 4}), dev);
    BOOST_TEST(run(core, branches({2, 4}), dev, {bool_scalar(true)}).shapes[0] == (Shape{2, 3}), dev);
  }
  auto u = graph::read_onnx_file(branches({6}));
  graph::infer_shapes(u);
  BOOST_TEST(!u.value(u.outputs[0]).shape.rank_known);

  // Loop: a carried value that grows each iteration has a dynamic dim.
  model_builder body, b(11);
  body.input("iter", {}, i64).input("cond_in", {}, boolean).input("y_in", {1});
  body.output("cond_out", {}, boolean).output("y_out", {-1});
  body.float_initializer("one", {1}, {1.0f});
  body.node("Identity", {"cond_in"}, {"cond_out"}).node("Concat", {"y_in", "one"}, {"y_out"}).attr("axis", int64_t{0});
  b.input("M", {}, i64).input("y0", {1}).output("y", {-1});
  b.node("Loop", {"M", "", "y0"}, {"y"}, "grow").attr("body", body);
  const auto grow = b.write(temp_file("grow.onnx"));
  auto lg = graph::read_onnx_file(grow);
  graph::infer_shapes(lg);
  BOOST_TEST(lg.value(lg.outputs[0]).shape.to_string() == "[?]");
  for (const char* dev : devices)
    BOOST_TEST(run(core, grow, dev, {i64_scalar(3), floats({1}, {0})}).values[0] == (std::vector<float>{0, 1, 1, 1}), dev);
}

BOOST_AUTO_TEST_CASE(a_subgraph_reading_an_unknown_name_names_op_attribute_and_name) {
  model_builder then_b, else_b, b(11);
  then_b.output("t", {3}).node("Add", {"x", "nowhere"}, {"t"}, "then_add");
  else_b.output("e", {3}).node("Identity", {"x"}, {"e"});
  b.input("cond", {}, boolean).input("x", {3}).output("y", {3});
  b.node("If", {"cond"}, {"y"}, "if").attr("then_branch", then_b).attr("else_branch", else_b);
  const auto path = b.write(temp_file("unknown_name.onnx"));
  Core core;
  expect_error([&] { core.read_model(path); }, {"If node 'if'", "attribute 'then_branch'", "Add node 'then_add'", "'nowhere'"});
}

BOOST_AUTO_TEST_CASE(bad_loops_are_refused_naming_the_op) {
  Core core;
  auto loop = [&](const std::string& name, const std::vector<std::string>& inputs, model_builder& body) {
    model_builder b(11);
    b.input("M", {}, i64).input("y0", {2}).output("y", {2});
    b.node("Loop", inputs, {"y"}, "loop").attr("body", body);
    return b.write(temp_file(name));
  };
  auto body_of = [](model_builder& body, const std::string& y_type_op) {
    body.input("iter", {}, i64).input("cond_in", {}, boolean).input("y_in", {2});
    body.output("cond_out", {}, boolean);
    body.node("Identity", {"cond_in"}, {"cond_out"});
    if (y_type_op.empty()) return;
    body.output("y_out", {2});
    body.node(y_type_op, {"y_in"}, {"y_out"}, "y_out_op");
    if (y_type_op == "Cast") body.attr("to", int64_t{i64});
  };
  // Neither a trip count nor a condition: it would never end.
  model_builder forever;
  body_of(forever, "Identity");
  expect_error([&] { core.read_model(loop("forever.onnx", {"", "", "y0"}, forever)); },
               {"Loop node 'loop'", "neither a trip count M nor a condition"});
  // One carried value but a body without its output.
  model_builder short_body;
  body_of(short_body, "");
  expect_error([&] { core.read_model(loop("short.onnx", {"M", "", "y0"}, short_body)); },
               {"Loop node 'loop'", "subgraph 'body' has 1 outputs", "needs 2"});
  // The carried value changes its type.
  model_builder cast_body;
  body_of(cast_body, "Cast");
  expect_error([&] { core.read_model(loop("cast.onnx", {"M", "", "y0"}, cast_body)); },
               {"Loop node 'loop'", "output 'y_out' is i64", "carries is f32"});
}

BOOST_AUTO_TEST_CASE(if_branches_of_different_types_are_refused) {
  model_builder then_b, else_b, b(11);
  then_b.output("t", {3}).node("Identity", {"x"}, {"t"});
  else_b.output("e", {3}, i64).node("Cast", {"x"}, {"e"}).attr("to", int64_t{i64});
  b.input("cond", {}, boolean).input("x", {3}).output("y", {3});
  b.node("If", {"cond"}, {"y"}, "if").attr("then_branch", then_b).attr("else_branch", else_b);
  const auto path = b.write(temp_file("if_types.onnx"));
  Core core;
  expect_error([&] { core.read_model(path); }, {"If node 'if'", "subgraph 'else_branch' output 'e' is i64"});
}

BOOST_AUTO_TEST_CASE(subgraphs_travel_over_the_wire_and_in_exported_models) {
  auto g = graph::read_onnx_file(nested_model());
  graph::infer_shapes(g);
  const auto bytes = graph::encode_graph(g);
  auto back = graph::decode_graph(bytes, "nested");
  BOOST_TEST(graph::encode_graph(back) == bytes);
  const auto& body = *op_named(back, "loop").attr_graph("body");
  BOOST_TEST(op_named(body, "inner_if").attr_graph("else_branch")->ops.at(0).type == "Mul");
  // Every truncation of the blob, inside the subgraphs too, is an error, never a crash.
  int refused = 0;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    try {
      graph::decode_graph(std::string_view(bytes).substr(0, n), "cut");
    } catch (const Exception&) {
      ++refused;
    }
  }
  BOOST_TEST(refused == static_cast<int>(bytes.size()));

  // A blob nesting subgraphs deeper than the decoder allows is refused, not recursed into.
  auto deep = std::make_shared<graph::Graph>();
  for (int i = 0; i < 40; ++i) {
    auto outer = std::make_shared<graph::Graph>();
    graph::Op op;
    op.type = "If";
    op.name = "if" + std::to_string(i);
    op.attrs["then_branch"] = std::shared_ptr<const graph::Graph>(deep);
    outer->ops.push_back(op);
    deep = outer;
  }
  expect_error([&] { graph::decode_graph(graph::encode_graph(*deep), "deep"); }, {"deep", "nest deeper than 32"});

  Core core;
  auto cm = core.compile_model(core.read_model(nested_model()), "CPU");
  std::stringstream blob;
  cm.export_model(blob);
  auto imported = core.import_model(blob, "CPU");
  BOOST_TEST(run(imported, {i64_scalar(4), floats({1}, {1}), floats({1}, {2})}).values[0] == (std::vector<float>{20}));
}

BOOST_AUTO_TEST_CASE(the_gpu_refuses_control_flow_and_hetero_puts_it_on_the_cpu,
                     *utf::precondition(tests::gpu_present())) {
  Core core;
  auto model = core.read_model(nested_model());
  auto why = core.query_model_unsupported(model, "GPU");
  BOOST_REQUIRE(why.count("loop"));
  BOOST_TEST(why["loop"].find("Loop node 'loop'") != std::string::npos, why["loop"]);
  BOOST_TEST(why["loop"].find("control flow") != std::string::npos, why["loop"]);
  auto placed = core.query_model(model, "HETERO:GPU,CPU");
  BOOST_TEST(placed["loop"] == "CPU");
  auto cm = core.compile_model(model, "HETERO:GPU,CPU");
  BOOST_TEST(run(cm, {i64_scalar(4), floats({1}, {1}), floats({1}, {2})}).values[0] == (std::vector<float>{20}));

  // An If between GPU ops: the GPU runs the Relus, the CPU the If.
  model_builder then_b, else_b, b(11);
  then_b.output("t", {3}).node("Add", {"r", "r"}, {"t"});
  else_b.output("e", {3}).node("Mul", {"r", "r"}, {"e"});
  b.input("cond", {}, boolean).input("x", {3}).output("y", {3});
  b.node("Relu", {"x"}, {"r"}, "relu_in")
      .node("If", {"cond"}, {"i"}, "if")
      .attr("then_branch", then_b)
      .attr("else_branch", else_b)
      .node("Relu", {"i"}, {"y"}, "relu_out");
  auto sandwich = core.read_model(b.write(temp_file("sandwich.onnx")));
  auto where = core.query_model(sandwich, "HETERO:GPU,CPU");
  BOOST_TEST(where["if"] == "CPU");
  BOOST_TEST(where["relu_in"].rfind("GPU", 0) == 0u);
  auto split = core.compile_model(sandwich, "HETERO:GPU,CPU");
  BOOST_TEST(run(split, {bool_scalar(false), floats({3}, {-1, 2, 3})}).values[0] == (std::vector<float>{0, 4, 9}));
}
