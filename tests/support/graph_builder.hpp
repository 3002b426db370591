#pragma once
/// Small graphs built op by op for device tests (output shapes from graph::infer_op), and the
/// reference kernels run over one of them: the oracle the CPU is compared with; a device's run
/// of it, checked for the reference's output shapes and types.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "graph/ir.hpp"
#include "graph/shape_inference.hpp"
#include "kernels/device.hpp"
#include "kernels/reference/kernels.hpp"
#include "tests/support/random_tensor.hpp"

namespace troupe::tests {

using graph::ValueId;

/// Builds a graph op by op; output shapes come from graph::infer_op.
struct builder {
  graph::Graph g;
  unsigned seed = 1;
  ValueId input(const Shape& s, element_type t = element_type::f32) {
    return g.add_input("in" + std::to_string(g.values.size()), t, PartialShape(s));
  }
  ValueId constant(Tensor t) {
    std::string name = "c"; // appended, not "c" + ...: GCC 12's -Wrestrict misfires on that inlined
    name.append(std::to_string(g.values.size()));
    return g.add_constant(name, std::move(t));
  }
  ValueId weights(const Shape& s) { return constant(random_tensor(s, 1000 + seed++)); }
  ValueId i64s(std::vector<int64_t> v) {
    Tensor t(element_type::i64, Shape{static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return constant(t);
  }
  ValueId scalar(float f) {
    Tensor t(element_type::f32, Shape{});
    *t.data<float>() = f;
    return constant(t);
  }
  ValueId op(const std::string& type, std::vector<ValueId> in, std::map<std::string, graph::AttributeValue> attrs = {},
             int outputs = 1) {
    graph::Op o;
    o.type = type;
    o.name = type + "_" + std::to_string(g.ops.size());
    o.inputs = std::move(in);
    o.attrs = std::move(attrs);
    o.outputs.assign(static_cast<std::size_t>(outputs), graph::no_value); // how many it declares
    auto info = graph::infer_op(g, o);
    o.outputs.clear();
    for (int i = 0; i < outputs; ++i)
      o.outputs.push_back(g.add_value({o.name + ":" + std::to_string(i), info.at(static_cast<std::size_t>(i)).type,
                                       info.at(static_cast<std::size_t>(i)).shape, {}}));
    g.ops.push_back(o);
    return g.ops.back().outputs[0];
  }
  void output(ValueId v) { g.outputs.push_back(v); }
  /// A BatchNormalization variance: random, positive.
  ValueId variance(int64_t n, unsigned seed) {
    Tensor var = random_tensor({n}, seed);
    for (int64_t i = 0; i < n; ++i) var.data<float>()[i] = std::abs(var.data<float>()[i]) + 0.1f;
    return constant(var);
  }
};

inline std::vector<Tensor> run_reference(const graph::Graph& g, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> vals(g.values.size());
  for (std::size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].constant) vals[i] = *g.values[i].constant;
  for (std::size_t k = 0; k < g.inputs.size(); ++k) vals[static_cast<std::size_t>(g.inputs[k])] = inputs[k];
  for (const auto& op : g.ops) {
    std::vector<Tensor> in, out;
    for (auto v : op.inputs) in.push_back(v == graph::no_value ? Tensor() : vals[static_cast<std::size_t>(v)]);
    for (auto v : op.outputs) out.emplace_back(g.value(v).type, g.value(v).shape.to_shape());
    kernels::reference::evaluate(op, in, out, g.opset);
    for (std::size_t i = 0; i < op.outputs.size(); ++i) vals[static_cast<std::size_t>(op.outputs[i])] = out[i];
  }
  std::vector<Tensor> r;
  for (auto v : g.outputs) r.push_back(vals[static_cast<std::size_t>(v)]);
  return r;
}

/// Runs `exe` on `inputs`; the outputs must match `expect`'s in number, shapes and types.
inline std::vector<Tensor> run_like(kernels::executable& exe, const std::vector<Tensor>& inputs,
                                    const std::vector<Tensor>& expect) {
  std::vector<Tensor> got;
  exe.run(inputs, got);
  BOOST_TEST_REQUIRE(got.size() == expect.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    BOOST_TEST_REQUIRE((got[i].get_shape() == expect[i].get_shape()));
    BOOST_TEST_REQUIRE((got[i].get_element_type() == expect[i].get_element_type()));
  }
  return got;
}

} // namespace troupe::tests
