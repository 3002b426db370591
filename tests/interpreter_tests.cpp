/// kernels::reference::interpreter: run-time shapes for value-dependent ops (Reshape with a
/// shape input, NonZero, Slice with run-time starts), the static fast path against a plain
/// op-by-op evaluation, and the errors for bad run-time inputs.
#define BOOST_TEST_MODULE interpreter_tests
#include <boost/test/unit_test.hpp>

#include <troupe/exception.hpp>

#include <cstring>
#include <ostream>

#include "graph/shape_inference.hpp"
#include "kernels/reference/interpreter.hpp"
#include "kernels/reference/kernels.hpp"

namespace troupe {
// Boost.Test prints values of failed checks.
inline std::ostream& operator<<(std::ostream& o, element_type t) { return o << to_string(t); }
inline std::ostream& operator<<(std::ostream& o, const PartialShape& s) { return o << s.to_string(); }
} // namespace troupe
namespace std {
inline std::ostream& operator<<(std::ostream& o, const troupe::Shape& s) { return o << troupe::to_string(s); }
} // namespace std

using namespace troupe;
using namespace troupe::graph;
using kernels::reference::interpreter;

namespace {

/// A tiny graph builder: inputs, constants and ops whose outputs get fresh values.
struct builder {
  Graph g;
  ValueId input(const std::string& name, element_type t, Shape s) { return g.add_input(name, t, PartialShape(std::move(s))); }
  ValueId constant(const std::string& name, Tensor t) { return g.add_constant(name, std::move(t)); }
  std::vector<ValueId> op(const std::string& type, std::vector<ValueId> in, std::size_t outs = 1,
                          std::map<std::string, AttributeValue> attrs = {}) {
    Op o;
    o.type = type;
    o.name = type + "_" + std::to_string(g.ops.size());
    o.inputs = std::move(in);
    o.attrs = std::move(attrs);
    for (std::size_t i = 0; i < outs; ++i) {
      Value v;
      v.name = o.name + "_out" + std::to_string(i);
      o.outputs.push_back(g.add_value(std::move(v)));
    }
    g.ops.push_back(std::move(o));
    return g.ops.back().outputs;
  }
  std::shared_ptr<const Graph> done(std::vector<ValueId> outputs) {
    g.outputs = std::move(outputs);
    infer_shapes(g);
    return std::make_shared<const Graph>(g);
  }
};

Tensor f32(Shape s, std::vector<float> v) {
  Tensor t(element_type::f32, std::move(s));
  BOOST_REQUIRE_EQUAL(static_cast<std::size_t>(t.get_size()), v.size());
  std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
  return t;
}
Tensor i64(Shape s, std::vector<int64_t> v) {
  Tensor t(element_type::i64, std::move(s));
  BOOST_REQUIRE_EQUAL(static_cast<std::size_t>(t.get_size()), v.size());
  std::memcpy(t.data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}
template <class T> std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.get_size());
}
std::vector<float> iota(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(i) * 0.5f - 3.0f);
  return v;
}

} // namespace

BOOST_AUTO_TEST_CASE(reshape_with_shape_input_follows_each_run) {
  builder b;
  auto x = b.input("x", element_type::f32, {2, 3, 4});
  auto s = b.input("shape", element_type::i64, {2});
  auto y = b.op("Reshape", {x, s})[0];
  auto z = b.op("Relu", {y})[0];
  auto g = b.done({z});
  BOOST_TEST(!g->value(z).shape.is_static()); // the case this is about
  BOOST_TEST(interpreter::is_dynamic(*g, g->ops[0]));

  interpreter it(g);
  Tensor xt = f32({2, 3, 4}, iota(24));
  auto r1 = it.run({xt, i64({2}, {6, -1})});
  BOOST_REQUIRE_EQUAL(r1.size(), 1u);
  BOOST_TEST(r1[0].get_shape() == (Shape{6, 4}));
  auto r2 = it.run({xt, i64({2}, {0, 12})}); // 0 copies dim 0 of x
  BOOST_TEST(r2[0].get_shape() == (Shape{2, 12}));
  std::vector<float> want = iota(24);
  for (auto& v : want) v = std::max(v, 0.0f);
  BOOST_TEST(values<float>(r1[0]) == want, boost::test_tools::per_element());
  BOOST_TEST(values<float>(r2[0]) == want, boost::test_tools::per_element());
  // The first run's result is not overwritten by the second.
  BOOST_TEST(r1[0].get_shape() == (Shape{6, 4}));

  // A shape that does not fit is refused, naming the op; the interpreter stays usable.
  BOOST_CHECK_EXCEPTION(it.run({xt, i64({2}, {5, -1})}), Exception, [](const Exception& e) {
    return std::string(e.what()).find("Reshape") != std::string::npos;
  });
  auto r3 = it.run({xt, i64({2}, {24, 1})});
  BOOST_TEST(r3[0].get_shape() == (Shape{24, 1}));
}

BOOST_AUTO_TEST_CASE(non_zero_gets_its_count_at_run_time) {
  builder b;
  auto x = b.input("x", element_type::f32, {2, 3});
  auto nz = b.op("NonZero", {x})[0];
  auto g = b.done({nz});
  BOOST_TEST(g->value(nz).shape.to_string() == "[2,?]");
  interpreter it(g);
  auto r = it.run({f32({2, 3}, {0, 1, 0, 2, 0, -0.0f})});
  BOOST_REQUIRE_EQUAL(r.size(), 1u);
  BOOST_TEST(r[0].get_element_type() == element_type::i64);
  BOOST_TEST(r[0].get_shape() == (Shape{2, 2}));
  BOOST_TEST(values<int64_t>(r[0]) == (std::vector<int64_t>{0, 1, 1, 0}), boost::test_tools::per_element());
  auto none = it.run({f32({2, 3}, {0, 0, 0, 0, 0, 0})});
  BOOST_TEST(none[0].get_shape() == (Shape{2, 0}));
}

BOOST_AUTO_TEST_CASE(slice_with_run_time_starts_and_default_axes) {
  // node/test_slice_default_axes: starts/ends are inputs, no axes: only the listed axes change.
  builder b;
  auto x = b.input("x", element_type::f32, {4, 3, 2});
  auto st = b.input("starts", element_type::i64, {2});
  auto en = b.input("ends", element_type::i64, {2});
  auto y = b.op("Slice", {x, st, en})[0];
  auto g = b.done({y});
  BOOST_TEST(g->value(y).shape.to_string() == "[?,?,2]");
  interpreter it(g);
  auto r = it.run({f32({4, 3, 2}, iota(24)), i64({2}, {1, 2}), i64({2}, {3, 3})});
  BOOST_TEST(r[0].get_shape() == (Shape{2, 1, 2}));
  auto all = iota(24);
  std::vector<float> want = {all[(1 * 3 + 2) * 2], all[(1 * 3 + 2) * 2 + 1], all[(2 * 3 + 2) * 2], all[(2 * 3 + 2) * 2 + 1]};
  BOOST_TEST(values<float>(r[0]) == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(static_graph_matches_op_by_op_evaluation) {
  builder b;
  auto x = b.input("x", element_type::f32, {2, 6});
  auto w = b.constant("w", f32({6, 3}, iota(18)));
  auto m = b.op("MatMul", {x, w})[0];
  auto t = b.op("Tanh", {m})[0];
  auto r = b.op("Reshape", {t, b.constant("s", i64({1}, {-1}))})[0];
  auto tk = b.op("TopK", {r, b.constant("k", i64({1}, {4}))}, 2);
  auto g = b.done({tk[0], tk[1], t});
  for (const auto& op : g->ops) BOOST_TEST(!interpreter::is_dynamic(*g, op));

  Tensor xt = f32({2, 6}, iota(12));
  interpreter it(g);
  std::vector<double> us;
  auto got = it.run({xt}, &us);
  BOOST_TEST(us.size() == g->ops.size());

  // The same graph evaluated by hand, one evaluate() per op with outputs from the graph.
  std::vector<Tensor> vals(g->values.size());
  for (std::size_t i = 0; i < g->values.size(); ++i)
    if (g->values[i].constant) vals[i] = *g->values[i].constant;
  vals[static_cast<std::size_t>(g->inputs[0])] = xt;
  for (const auto& op : g->ops) {
    std::vector<Tensor> in, out;
    for (auto id : op.inputs) in.push_back(vals[static_cast<std::size_t>(id)]);
    for (auto id : op.outputs) out.emplace_back(g->value(id).type, g->value(id).shape.to_shape());
    kernels::reference::evaluate(op, in, out, g->opset);
    for (std::size_t j = 0; j < out.size(); ++j) vals[static_cast<std::size_t>(op.outputs[j])] = out[j];
  }
  BOOST_REQUIRE_EQUAL(got.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const Tensor& want = vals[static_cast<std::size_t>(g->outputs[i])];
    BOOST_TEST(got[i].get_shape() == want.get_shape());
    BOOST_TEST(got[i].get_element_type() == want.get_element_type());
    BOOST_REQUIRE_EQUAL(got[i].get_byte_size(), want.get_byte_size());
    BOOST_TEST(std::memcmp(got[i].data(), want.data(), want.get_byte_size()) == 0);
  }
}

BOOST_AUTO_TEST_CASE(run_op_leaves_the_scratch_graph_as_it_was) {
  builder b;
  auto x = b.input("x", element_type::f32, {6});
  auto k = b.input("k", element_type::i64, {1});
  auto tk = b.op("TopK", {x, k}, 2);
  auto g = b.done({tk[0], tk[1]});
  Graph scratch = *g;
  auto outs = interpreter::run_op(*g, scratch, g->ops[0], {f32({6}, {3, 1, 4, 1, 5, 9}), i64({1}, {2})});
  BOOST_REQUIRE_EQUAL(outs.size(), 2u);
  BOOST_TEST(values<float>(outs[0]) == (std::vector<float>{9, 5}), boost::test_tools::per_element());
  BOOST_TEST(values<int64_t>(outs[1]) == (std::vector<int64_t>{5, 4}), boost::test_tools::per_element());
  BOOST_TEST(!scratch.value(k).constant.has_value());
  BOOST_TEST(scratch.value(x).shape == g->value(x).shape);
  // A K beyond the axis is refused by the same rule as at compile time.
  BOOST_CHECK_THROW(interpreter::run_op(*g, scratch, g->ops[0], {f32({6}, iota(6)), i64({1}, {7})}), Exception);
  BOOST_TEST(!scratch.value(k).constant.has_value());
}

BOOST_AUTO_TEST_CASE(bad_run_time_inputs_are_refused) {
  builder b;
  auto x = b.input("x", element_type::f32, {2, 3});
  auto s = b.input("shape", element_type::i64, {2});
  auto y = b.op("Reshape", {x, s})[0];
  interpreter it(b.done({y}));
  auto msg_has = [](const char* what) {
    return [what](const Exception& e) { return std::string(e.what()).find(what) != std::string::npos; };
  };
  BOOST_CHECK_EXCEPTION(it.run({f32({2, 3}, iota(6))}), Exception, msg_has("expected 2 inputs"));
  BOOST_CHECK_EXCEPTION(it.run({f32({3, 2}, iota(6)), i64({2}, {6, 1})}), Exception, msg_has("'x'"));
  BOOST_CHECK_EXCEPTION(it.run({i64({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {6, 1})}), Exception, msg_has("'x'"));
  BOOST_CHECK_EXCEPTION(it.run({f32({2, 3}, iota(6)), i64({2}, {-1, -1})}), Exception, msg_has("Reshape"));
}
