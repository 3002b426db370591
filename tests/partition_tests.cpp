/// HETERO's model layer: placing ops on devices (graph::place_ops) and splitting the placed
/// graph into per-device parts that form a DAG (graph::partition_graph, graph::extract_part).
#define BOOST_TEST_MODULE partition_tests
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/cost_placement.hpp"
#include "graph/partition.hpp"
#include "graph/placement.hpp"
#include "graph/roofline_costs.hpp"
#include "graph/shape_inference.hpp"
#include "kernels/reference/interpreter.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/random_tensor.hpp"

using namespace troupe;
using namespace troupe::graph;
using tests::expect_error;

namespace {

std::size_t idx(int i) { return static_cast<std::size_t>(i); }

/// Appends an op named `name` with one output "<name>_out"; returns that output.
ValueId add_op(Graph& g, const std::string& type, const std::string& name, std::vector<ValueId> inputs,
               const std::string& affinity = "") {
  Op op;
  op.type = type;
  op.name = name;
  op.inputs = std::move(inputs);
  if (!affinity.empty()) op.rt_info["affinity"] = affinity;
  op.outputs.push_back(g.add_value({name + "_out", element_type::f32, PartialShape({2, 3}), std::nullopt}));
  g.ops.push_back(std::move(op));
  return g.ops.back().outputs[0];
}

Tensor filled(float v) {
  Tensor t(element_type::f32, {2, 3});
  for (int64_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = v + static_cast<float>(i);
  return t;
}

/// A device table: per device, the op types it refuses and why.
support_query refusing(std::map<std::string, std::map<std::string, std::string>> refused) {
  return [refused = std::move(refused)](const std::string& device, const Graph&, const Op& op) {
    auto d = refused.find(device);
    if (d == refused.end()) return op_support{true, ""};
    auto r = d->second.find(op.type);
    return r == d->second.end() ? op_support{true, ""} : op_support{false, r->second};
  };
}

/// Relu "r" then Conv "c" on one input.
Graph relu_then_conv(const std::string& relu_affinity = "", const std::string& conv_affinity = "") {
  Graph g;
  ValueId x = g.add_input("x", element_type::f32, PartialShape({2, 3}));
  ValueId r = add_op(g, "Relu", "r", {x}, relu_affinity);
  g.outputs.push_back(add_op(g, "Conv", "c", {r}, conv_affinity));
  return g;
}

// ---------------------------------------------------------------- an independent checker

/// Per op: the most device changes on any path into it, by walking paths backwards.
std::vector<int> ranks_by_paths(const Graph& g, const std::vector<std::string>& dev) {
  auto prod = g.producers();
  std::vector<int> memo(g.ops.size(), -1);
  std::function<int(std::size_t)> rank = [&](std::size_t i) {
    if (memo[i] >= 0) return memo[i];
    int r = 0;
    for (ValueId v : g.ops[i].inputs)
      if (v != no_value && prod[idx(v)] >= 0) {
        std::size_t p = idx(prod[idx(v)]);
        r = std::max(r, rank(p) + (dev[p] != dev[i]));
      }
    return memo[i] = r;
  };
  for (std::size_t i = 0; i < g.ops.size(); ++i) rank(i);
  return memo;
}

/// Checks every promise of partition_graph for `p`, the part count included: one per
/// (device, rank) group, ranks counted on paths.
void check_partition(const Graph& g, const std::vector<std::string>& dev, const partition& p) {
  auto prod = g.producers();
  std::vector<int> part_of(g.ops.size(), -1);
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    const auto& part = p.parts[k];
    BOOST_TEST_REQUIRE(!part.ops.empty());
    for (std::size_t j = 0; j < part.ops.size(); ++j) {
      int i = part.ops[j];
      BOOST_TEST_REQUIRE((i >= 0 && idx(i) < g.ops.size()));
      BOOST_TEST_REQUIRE(part_of[idx(i)] == -1, "op " << i << " is in two parts");
      BOOST_TEST(dev[idx(i)] == part.device);
      if (j > 0) BOOST_TEST(part.ops[j - 1] < i);
      part_of[idx(i)] = static_cast<int>(k);
    }
  }
  for (std::size_t i = 0; i < g.ops.size(); ++i) BOOST_TEST_REQUIRE(part_of[i] >= 0, "op " << i << " is in no part");

  // What the inputs and outputs must be, from the op -> part map alone.
  std::vector<std::vector<ValueId>> want_in(p.parts.size()), want_out(p.parts.size());
  std::set<std::pair<ValueId, int>> read_by; // (value, reading part) across parts
  for (std::size_t k = 0; k < p.parts.size(); ++k)
    for (int i : p.parts[k].ops)
      for (ValueId v : g.ops[idx(i)].inputs) {
        if (v == no_value || g.is_constant(v)) continue;
        int from = prod[idx(v)] < 0 ? -1 : part_of[idx(prod[idx(v)])];
        if (from == static_cast<int>(k)) continue;
        // Topological: what a part reads from another part comes from an earlier one.
        BOOST_TEST(from < static_cast<int>(k), "part " << k << " reads '" << g.value(v).name << "' of part " << from);
        if (read_by.insert({v, static_cast<int>(k)}).second) want_in[k].push_back(v);
      }
  std::set<ValueId> graph_outputs(g.outputs.begin(), g.outputs.end()), crossing;
  for (auto [v, k] : read_by) crossing.insert(v);
  for (std::size_t k = 0; k < p.parts.size(); ++k)
    for (int i : p.parts[k].ops)
      for (ValueId v : g.ops[idx(i)].outputs)
        if (v != no_value && (crossing.count(v) || graph_outputs.count(v))) want_out[k].push_back(v);
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    BOOST_TEST(p.parts[k].inputs == want_in[k], "inputs of part " << k);
    BOOST_TEST(p.parts[k].outputs == want_out[k], "outputs of part " << k);
    // Each input is a graph input or an output of an earlier part.
    for (ValueId v : p.parts[k].inputs) {
      if (prod[idx(v)] < 0) continue;
      const auto& from = p.parts[idx(part_of[idx(prod[idx(v)])])].outputs;
      BOOST_TEST((std::find(from.begin(), from.end(), v) != from.end()));
    }
  }

  // The count: one part per (device, rank), ranks counted on paths.
  auto rank = ranks_by_paths(g, dev);
  std::set<std::pair<std::string, int>> groups;
  for (std::size_t i = 0; i < g.ops.size(); ++i) groups.insert({dev[i], rank[i]});
  BOOST_TEST(p.parts.size() == groups.size());
}

// ---------------------------------------------------------------- random graphs

struct random_case {
  Graph g;
  std::vector<std::string> device_of;
};

const std::vector<std::string> unary_ops{"Relu", "Sigmoid", "Neg", "Abs", "Tanh"};
const std::vector<std::string> binary_ops{"Add", "Mul", "Sub", "Max", "Min"};

/// A random DAG over [2, 3] f32 values, ops on 1..4 devices. With `real_ops` the ops are
/// unary and binary element-wise ONNX ops the reference kernels run; without, they are
/// opaque ops with 0..3 inputs (some omitted) and 1..2 outputs (some omitted).
random_case random_dag(std::mt19937& rng, bool real_ops) {
  auto pick = [&rng](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  auto chance = [&rng](double p) { return std::bernoulli_distribution(p)(rng); };
  random_case c;
  Graph& g = c.g;
  const std::size_t n_ops = 1 + pick(40), n_devices = 1 + pick(4);
  const std::size_t n_inputs = 1 + pick(3), n_constants = pick(3);
  std::vector<ValueId> inputs, constants, produced;
  for (std::size_t i = 0; i < n_inputs; ++i)
    inputs.push_back(g.add_input("in" + std::to_string(i), element_type::f32, PartialShape({2, 3})));
  for (std::size_t i = 0; i < n_constants; ++i)
    constants.push_back(g.add_constant("const" + std::to_string(i), filled(0.25f * static_cast<float>(i))));
  auto prod_dev = [&](ValueId v) -> const std::string* {
    for (std::size_t i = 0; i < g.ops.size(); ++i)
      for (ValueId o : g.ops[i].outputs)
        if (o == v) return &c.device_of[i];
    return nullptr;
  };
  for (std::size_t i = 0; i < n_ops; ++i) {
    std::size_t arity = 0, outs = 1;
    std::string type = "Opaque";
    if (real_ops) {
      bool binary = chance(0.5);
      type = binary ? binary_ops[pick(binary_ops.size())] : unary_ops[pick(unary_ops.size())];
      arity = binary ? 2 : 1;
    } else {
      arity = pick(4);
      outs = 1 + pick(2);
    }
    std::vector<ValueId> in;
    for (std::size_t k = 0; k < arity; ++k) {
      double r = std::uniform_real_distribution<double>(0, 1)(rng);
      if (!real_ops && r < 0.05) in.push_back(no_value);
      else if (produced.empty() || r < 0.2) in.push_back(inputs[pick(inputs.size())]);
      else if (!constants.empty() && r < 0.3) in.push_back(constants[pick(constants.size())]);
      else if (r < 0.6) in.push_back(produced[produced.size() - 1 - pick(std::min<std::size_t>(3, produced.size()))]);
      else in.push_back(produced[pick(produced.size())]);
    }
    // Devices: often the device of a producer, so same-device runs form.
    std::string device = "D" + std::to_string(pick(n_devices));
    if (!in.empty() && in[0] != no_value && chance(0.5))
      if (const std::string* d = prod_dev(in[0])) device = *d;
    Op op;
    op.type = type;
    op.name = type + "_" + std::to_string(i);
    op.inputs = std::move(in);
    for (std::size_t k = 0; k < outs; ++k) {
      if (k > 0 && chance(0.3)) {
        op.outputs.push_back(no_value);
        continue;
      }
      ValueId v = g.add_value({op.name + "_out" + std::to_string(k), element_type::f32, PartialShape({2, 3}), std::nullopt});
      op.outputs.push_back(v);
      produced.push_back(v);
    }
    g.ops.push_back(std::move(op));
    c.device_of.push_back(device);
  }
  std::set<ValueId> outs{produced.back()};
  for (ValueId v : produced)
    if (chance(0.15)) outs.insert(v);
  if (chance(0.2)) outs.insert(inputs[pick(inputs.size())]);
  if (!constants.empty() && chance(0.2)) outs.insert(constants[pick(constants.size())]);
  g.outputs.assign(outs.begin(), outs.end());
  std::shuffle(g.outputs.begin(), g.outputs.end(), rng);
  return c;
}

/// Runs each part in order on the reference interpreter, values passed on by name; returns
/// the graph outputs (a graph input or constant output taken as it is, as a caller would).
std::vector<Tensor> run_by_parts(const Graph& g, const partition& p, const std::vector<Tensor>& inputs) {
  std::map<std::string, Tensor> env;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) env[g.value(g.inputs[i]).name] = inputs[i];
  for (const auto& part : p.parts) {
    Graph sub = extract_part(g, part);
    std::vector<Tensor> in;
    for (ValueId v : sub.inputs) in.push_back(env.at(sub.value(v).name));
    kernels::reference::interpreter it(std::make_shared<const Graph>(sub));
    auto out = it.run(in);
    BOOST_TEST_REQUIRE(out.size() == sub.outputs.size());
    for (std::size_t k = 0; k < out.size(); ++k) env[sub.value(sub.outputs[k]).name] = out[k];
  }
  std::vector<Tensor> result;
  for (ValueId v : g.outputs) result.push_back(g.is_constant(v) ? *g.value(v).constant : env.at(g.value(v).name));
  return result;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.get_shape() == b.get_shape() && a.get_element_type() == b.get_element_type() &&
         std::memcmp(a.data<float>(), b.data<float>(), a.get_byte_size()) == 0;
}

} // namespace

// ================================================================ placement

BOOST_AUTO_TEST_SUITE(placement_rules)

BOOST_AUTO_TEST_CASE(first_supporting_device_in_priority_order) {
  Graph g = relu_then_conv();
  auto query = refusing({{"GPU.0", {{"Conv", "no Conv kernel"}}}});
  auto p = place_ops(g, {"GPU.0", "CPU"}, query);
  BOOST_TEST_REQUIRE(p.size() == 2u);
  BOOST_TEST(p[0].device == "GPU.0");
  BOOST_TEST(p[0].why == "supported by GPU.0");
  BOOST_TEST(p[1].device == "CPU");
  BOOST_TEST(p[1].why == "GPU.0: no Conv kernel; fallback to CPU");
  auto q = place_ops(g, {"CPU", "GPU.0"}, query);
  BOOST_TEST(q[0].device == "CPU");
  BOOST_TEST(q[1].device == "CPU");
  BOOST_TEST(q[1].why == "supported by CPU");
}

BOOST_AUTO_TEST_CASE(every_refusal_is_listed_before_the_fallback) {
  Graph g = relu_then_conv();
  auto query = refusing({{"GPU.0", {{"Conv", "no Conv kernel"}}}, {"GPU.1", {{"Conv", ""}}}});
  auto p = place_ops(g, {"GPU.0", "GPU.1", "CPU"}, query);
  BOOST_TEST(p[1].device == "CPU");
  BOOST_TEST(p[1].why == "GPU.0: no Conv kernel; GPU.1: not supported; fallback to CPU");
}

BOOST_AUTO_TEST_CASE(affinity_is_honoured) {
  // The Relu is pinned to the lower-priority CPU; the unannotated Conv is placed by priority.
  Graph g = relu_then_conv("CPU");
  auto p = place_ops(g, {"GPU.0", "CPU"}, refusing({}));
  BOOST_TEST(p[0].device == "CPU");
  BOOST_TEST(p[0].why == "affinity CPU");
  BOOST_TEST(p[1].device == "GPU.0");
  BOOST_TEST(p[1].why == "supported by GPU.0");
  // An empty affinity is none.
  Graph h = relu_then_conv("", "");
  h.ops[0].rt_info["affinity"] = "";
  BOOST_TEST(place_ops(h, {"GPU.0", "CPU"}, refusing({}))[0].device == "GPU.0");
}

BOOST_AUTO_TEST_CASE(affinity_to_an_unlisted_device) {
  Graph g = relu_then_conv("GPU.1");
  expect_error([&] { place_ops(g, {"GPU.0", "CPU"}, refusing({})); },
               {"Relu node 'r'", "affinity 'GPU.1'", "not one of the devices (GPU.0, CPU)"});
}

BOOST_AUTO_TEST_CASE(affinity_to_a_device_that_cannot_run_the_op) {
  Graph g = relu_then_conv("", "GPU.0");
  expect_error([&] { place_ops(g, {"GPU.0", "CPU"}, refusing({{"GPU.0", {{"Conv", "no Conv kernel"}}}})); },
               {"Conv node 'c'", "affinity 'GPU.0'", "cannot run it", "no Conv kernel"});
}

BOOST_AUTO_TEST_CASE(no_device_supports_the_op) {
  Graph g = relu_then_conv();
  auto query = refusing({{"GPU.0", {{"Conv", "no Conv kernel"}}}, {"CPU", {{"Conv", "grouped Conv missing"}}}});
  expect_error([&] { place_ops(g, {"GPU.0", "CPU"}, query); },
               {"Conv node 'c'", "none of the devices", "GPU.0: no Conv kernel", "CPU: grouped Conv missing"});
  expect_error([&] { place_ops(g, {}, query); }, {"no devices"});
}

BOOST_AUTO_TEST_SUITE_END()

// ================================================================ partitioning

BOOST_AUTO_TEST_SUITE(partitioning)

BOOST_AUTO_TEST_CASE(diamond_across_devices_gives_three_parts) {
  // GPU a -> CPU b -> GPU c, and a -> c directly: {a, c} on the GPU would be a cycle with {b}.
  Graph g;
  ValueId x = g.add_input("x", element_type::f32, PartialShape({2, 3}));
  ValueId a = add_op(g, "Relu", "a", {x});
  ValueId b = add_op(g, "Neg", "b", {a});
  ValueId c = add_op(g, "Add", "c", {a, b});
  g.outputs = {c};
  std::vector<std::string> dev{"GPU", "CPU", "GPU"};
  auto p = partition_graph(g, dev);
  BOOST_TEST_REQUIRE(p.parts.size() == 3u);
  BOOST_TEST(p.parts[0].device == "GPU");
  BOOST_TEST(p.parts[0].ops == std::vector<int>{0});
  BOOST_TEST(p.parts[0].inputs == std::vector<ValueId>{x});
  BOOST_TEST(p.parts[0].outputs == std::vector<ValueId>{a});
  BOOST_TEST(p.parts[1].device == "CPU");
  BOOST_TEST(p.parts[1].ops == std::vector<int>{1});
  BOOST_TEST(p.parts[1].outputs == std::vector<ValueId>{b});
  BOOST_TEST(p.parts[2].device == "GPU");
  BOOST_TEST(p.parts[2].ops == std::vector<int>{2});
  BOOST_TEST(p.parts[2].inputs == (std::vector<ValueId>{a, b}));
  BOOST_TEST(p.parts[2].outputs == std::vector<ValueId>{c});
  check_partition(g, dev, p);
}

BOOST_AUTO_TEST_CASE(a_later_same_device_op_is_not_merged_back) {
  // x(GPU) -> y(GPU), y also reads z(CPU): {x} {z} {y}, as partition.hpp documents.
  Graph g;
  ValueId in = g.add_input("in", element_type::f32, PartialShape({2, 3}));
  ValueId x = add_op(g, "Relu", "x", {in});
  ValueId z = add_op(g, "Neg", "z", {in});
  g.outputs = {add_op(g, "Add", "y", {x, z})};
  auto p = partition_graph(g, {"GPU", "CPU", "GPU"});
  BOOST_TEST_REQUIRE(p.parts.size() == 3u);
  BOOST_TEST(p.parts[0].ops == std::vector<int>{0});
  BOOST_TEST(p.parts[1].ops == std::vector<int>{1});
  BOOST_TEST(p.parts[2].ops == std::vector<int>{2});
}

BOOST_AUTO_TEST_CASE(one_device_is_one_part) {
  Graph g;
  ValueId x = g.add_input("x", element_type::f32, PartialShape({2, 3}));
  ValueId k = g.add_constant("k", filled(1));
  ValueId a = add_op(g, "Add", "a", {x, k});
  ValueId b = add_op(g, "Relu", "b", {a});
  g.outputs = {b, x, k, a}; // a graph input and a constant output belong to no part
  auto p = partition_graph(g, {"CPU", "CPU"});
  BOOST_TEST_REQUIRE(p.parts.size() == 1u);
  BOOST_TEST(p.parts[0].inputs == std::vector<ValueId>{x});
  BOOST_TEST(p.parts[0].outputs == (std::vector<ValueId>{a, b}));
}

BOOST_AUTO_TEST_CASE(empty_graph_and_wrong_device_count) {
  Graph g;
  ValueId x = g.add_input("x", element_type::f32, PartialShape({2, 3}));
  g.outputs = {x};
  BOOST_TEST(partition_graph(g, {}).parts.empty());
  add_op(g, "Relu", "r", {x});
  expect_error([&] { partition_graph(g, {"CPU", "GPU"}); }, {"2 devices given for 1 ops"});
}

BOOST_AUTO_TEST_CASE(extract_part_is_a_standalone_graph) {
  Graph g;
  g.source = "model.onnx";
  g.opset = 17;
  ValueId x = g.add_input("x", element_type::f32, PartialShape({2, 3}));
  ValueId k = g.add_constant("k", filled(2));
  ValueId a = add_op(g, "Relu", "a", {x});
  ValueId b = add_op(g, "Mul", "b", {a, k});
  ValueId c = add_op(g, "Add", "c", {b, x});
  g.outputs = {c, b};
  auto p = partition_graph(g, {"GPU", "CPU", "CPU"});
  BOOST_TEST_REQUIRE(p.parts.size() == 2u);
  Graph sub = extract_part(g, p.parts[1]);
  BOOST_TEST(sub.source == "model.onnx");
  BOOST_TEST(sub.opset == 17);
  BOOST_TEST_REQUIRE(sub.inputs.size() == 2u);
  BOOST_TEST(sub.value(sub.inputs[0]).name == "a_out");
  BOOST_TEST(sub.value(sub.inputs[1]).name == "x");
  BOOST_TEST((sub.value(sub.inputs[1]).shape == PartialShape({2, 3})));
  BOOST_TEST(!sub.value(sub.inputs[0]).constant.has_value());
  BOOST_TEST_REQUIRE(sub.ops.size() == 2u);
  BOOST_TEST(sub.ops[0].name == "b");
  BOOST_TEST(sub.value(sub.ops[0].inputs[1]).name == "k");
  BOOST_TEST(sub.is_constant(sub.ops[0].inputs[1]));
  BOOST_TEST_REQUIRE(sub.outputs.size() == 2u); // in production order: b then c
  BOOST_TEST(sub.value(sub.outputs[0]).name == "b_out");
  BOOST_TEST(sub.value(sub.outputs[1]).name == "c_out");
  // A part that does not list what its ops read is refused.
  subgraph_part broken = p.parts[1];
  broken.inputs = {x};
  expect_error([&] { extract_part(g, broken); }, {"Mul node 'b'", "'a_out'"});
  broken = p.parts[1];
  broken.outputs.push_back(a);
  expect_error([&] { extract_part(g, broken); }, {"'a_out'", "not produced"});
}

BOOST_AUTO_TEST_CASE(random_dags_split_into_ordered_parts) {
  // 3000 seeded random DAGs: every promise of partition_graph (check_partition), and enough
  // multi-part cases that the checks are not vacuous.
  std::mt19937 rng(20240917);
  int three_or_more = 0, cross_reads = 0, input_outputs = 0, constant_outputs = 0;
  for (int n = 0; n < 3000; ++n) {
    random_case c = random_dag(rng, false);
    BOOST_TEST_CONTEXT("case " << n) {
      auto p = partition_graph(c.g, c.device_of);
      check_partition(c.g, c.device_of, p);
      three_or_more += p.parts.size() >= 3;
      auto prod = c.g.producers();
      for (const auto& part : p.parts)
        for (ValueId v : part.inputs) cross_reads += prod[idx(v)] >= 0;
      for (ValueId v : c.g.outputs) {
        input_outputs += std::find(c.g.inputs.begin(), c.g.inputs.end(), v) != c.g.inputs.end();
        constant_outputs += c.g.is_constant(v);
      }
    }
  }
  BOOST_TEST_MESSAGE(three_or_more << " of 3000 cases have >= 3 parts");
  BOOST_TEST(three_or_more > 500);
  BOOST_TEST(cross_reads > 1000);
  BOOST_TEST(input_outputs > 100);
  BOOST_TEST(constant_outputs > 100);
}

BOOST_AUTO_TEST_CASE(parts_compute_what_the_whole_graph_computes) {
  // 300 random element-wise DAGs: running the parts one after the other, values passed on by
  // name, gives bit for bit what the whole graph gives on the reference kernels.
  std::mt19937 rng(7);
  int multi_part = 0;
  for (int n = 0; n < 300; ++n) {
    random_case c = random_dag(rng, true);
    BOOST_TEST_CONTEXT("case " << n) {
      infer_shapes(c.g);
      std::vector<Tensor> inputs;
      for (std::size_t i = 0; i < c.g.inputs.size(); ++i)
        inputs.push_back(tests::random_tensor({2, 3}, static_cast<unsigned>(100 * n + i), -2, 2));
      kernels::reference::interpreter whole(std::make_shared<const Graph>(c.g));
      auto want = whole.run(inputs);
      auto p = partition_graph(c.g, c.device_of);
      multi_part += p.parts.size() > 1;
      auto got = run_by_parts(c.g, p, inputs);
      BOOST_TEST_REQUIRE(got.size() == want.size());
      for (std::size_t k = 0; k < got.size(); ++k)
        BOOST_TEST(same_bits(got[k], want[k]), "output " << k << " ('" << c.g.value(c.g.outputs[k]).name << "')");
    }
  }
  BOOST_TEST(multi_part > 150);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- placement by cost (graph::place_by_cost, HETERO_PLACEMENT=COST) ------------------------

BOOST_AUTO_TEST_SUITE(placement_by_cost)

namespace {

constexpr double never = std::numeric_limits<double>::infinity();

/// Costs for `devices` devices: op times from `times` (one row per op), every transfer
/// `latency` + `per_byte` x bytes, the host to and from device 0 (the CPU) free.
placement_costs costs_of(std::vector<std::vector<double>> times, double latency, double per_byte) {
  placement_costs c;
  const std::size_t n = times.empty() ? 1 : times[0].size();
  for (std::size_t d = 0; d < n; ++d) c.devices.push_back("D" + std::to_string(d));
  c.op_us = std::move(times);
  c.transfer.assign(n, std::vector<transfer_cost>(n, transfer_cost{latency, per_byte}));
  c.from_host.assign(n, transfer_cost{latency, per_byte});
  c.to_host.assign(n, transfer_cost{latency, per_byte});
  c.from_host[0] = c.to_host[0] = transfer_cost{};
  return c;
}

/// Each op to the first device that can run it (the start the runtime gives).
std::vector<int> by_priority(const placement_costs& c) {
  std::vector<int> r;
  for (const auto& row : c.op_us)
    r.push_back(static_cast<int>(std::find_if(row.begin(), row.end(), [](double t) { return std::isfinite(t); }) - row.begin()));
  return r;
}

/// The fastest placement by trying every one.
double brute_force_best(const Graph& g, const placement_costs& c) {
  const std::size_t n = g.ops.size(), k = c.devices.size();
  std::vector<int> d(n, 0);
  double best = never;
  while (true) {
    best = std::min(best, predicted_us(g, c, d));
    std::size_t i = 0;
    while (i < n && ++d[i] == static_cast<int>(k)) d[i++] = 0;
    if (i == n) break;
  }
  return best;
}

/// in -> a -> b -> c -> out, 24-byte values.
Graph chain3() {
  Graph g;
  auto v = g.add_input("in", element_type::f32, PartialShape({2, 3}));
  for (const char* name : {"a", "b", "c"}) v = add_op(g, "Relu", name, {v});
  g.outputs = {v};
  return g;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_lone_unsupported_op_moves_the_work_only_when_it_pays) {
  // D1 runs a and c 10x faster than D0 but cannot run b. Crossings cost 50 us each:
  // a, c on D1 is 4 crossings (in, a->b, b->c, out) = 200 us for 180 us saved: all on D0.
  Graph g = chain3();
  auto slow_link = costs_of({{100, 10}, {5, never}, {100, 10}}, 50, 0);
  BOOST_TEST(by_priority(slow_link) == (std::vector<int>{0, 0, 0}));
  BOOST_TEST(place_by_cost(g, slow_link, {1, 0, 1}) == (std::vector<int>{0, 0, 0}));
  // At 10 us a crossing the ping-pong pays: 20 + 5 + 40 = 65 us against 205.
  auto fast_link = costs_of({{100, 10}, {5, never}, {100, 10}}, 10, 0);
  const auto placed = place_by_cost(g, fast_link, by_priority(fast_link));
  BOOST_TEST(placed == (std::vector<int>{1, 0, 1}));
  BOOST_TEST(predicted_us(g, fast_link, placed) == 65.0);
  BOOST_TEST(crossings_of(g, fast_link, placed).size() == 4u);
}

BOOST_AUTO_TEST_CASE(a_value_read_twice_on_another_device_moves_once) {
  // in -> p (D0 only); p's output read by q and r, each 30 us faster on D1; one crossing of
  // 50 us pays for both (60 us saved), though it would not for one (30).
  Graph g;
  auto in = g.add_input("in", element_type::f32, PartialShape({2, 3}));
  auto p = add_op(g, "Relu", "p", {in});
  auto q = add_op(g, "Relu", "q", {p});
  auto r = add_op(g, "Relu", "r", {p});
  auto s = add_op(g, "Add", "s", {q, r});
  g.outputs = {s};
  auto c = costs_of({{1, never}, {40, 10}, {40, 10}, {1, 1}}, 0, 0);
  c.transfer[0][1] = {50, 0};
  c.transfer[1][0] = {0, 0};
  c.to_host[1] = {0, 0};
  const auto placed = place_by_cost(g, c, by_priority(c));
  BOOST_TEST(placed == (std::vector<int>{0, 1, 1, 1}));
  BOOST_TEST(predicted_us(g, c, placed) == 1 + 10 + 10 + 1 + 50.0);
  BOOST_TEST(brute_force_best(g, c) == predicted_us(g, c, placed));
}

BOOST_AUTO_TEST_CASE(inputs_and_outputs_cross_from_and_to_the_host) {
  // One op, 2 us faster on D1, whose input and output cross 24 bytes at 0.1 us a byte each way.
  Graph g;
  auto in = g.add_input("in", element_type::f32, PartialShape({2, 3}));
  g.outputs = {add_op(g, "Relu", "a", {in})};
  auto c = costs_of({{10, 8}}, 0, 0.1);
  BOOST_TEST(predicted_us(g, c, {1}) == 8 + 2 * 2.4, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(place_by_cost(g, c, {0}) == (std::vector<int>{0})); // 10 < 12.8
  c.op_us[0][1] = 5;
  BOOST_TEST(place_by_cost(g, c, {0}) == (std::vector<int>{1})); // 9.8 < 10
}

BOOST_AUTO_TEST_CASE(throughput_splits_work_between_independent_devices_only) {
  // A chain of 4 ops, 10 us each on either device, free crossings: one request is 40 us
  // wherever it runs, but two independent devices taking two ops each leave a request every
  // 20 us. Devices that share the cores (one resource) gain nothing from a split.
  Graph g;
  auto v = g.add_input("in", element_type::f32, PartialShape({2, 3}));
  for (const char* name : {"a", "b", "c", "d"}) v = add_op(g, "Relu", name, {v});
  g.outputs = {v};
  auto c = costs_of({{10, 10}, {10, 10}, {10, 10}, {10, 10}}, 0, 0);
  const std::vector<int> all_first{0, 0, 0, 0};
  BOOST_TEST(bottleneck_us(g, c, all_first, {0, 1}) == 40.0);
  const auto split = place_for_throughput(g, c, all_first, {0, 1});
  BOOST_TEST(bottleneck_us(g, c, split, {0, 1}) == 20.0);
  BOOST_TEST(predicted_us(g, c, split) == 40.0);
  BOOST_TEST(place_for_throughput(g, c, all_first, {0, 0}) == all_first);
  // A crossing costs its receiver: at 15 us, two ops each way is 20 / 35, three on the first
  // device and one on the other 30 / 25; at 35 us no split beats 40.
  c.transfer[0][1] = c.transfer[1][0] = {15, 0};
  BOOST_TEST(place_for_throughput(g, c, all_first, {0, 1}) == (std::vector<int>{0, 0, 0, 1}));
  c.transfer[0][1] = c.transfer[1][0] = {35, 0};
  BOOST_TEST(place_for_throughput(g, c, all_first, {0, 1}) == all_first);
}

BOOST_AUTO_TEST_CASE(cost_tables_that_do_not_fit_the_graph_are_named) {
  Graph g = chain3();
  auto c = costs_of({{1, 1}, {1, 1}}, 0, 0);
  expect_error([&] { place_by_cost(g, c, {0, 0, 0}); }, {"2 rows of op times for 3 ops"});
  c = costs_of({{1, 1}, {1}, {1, 1}}, 0, 0);
  expect_error([&] { place_by_cost(g, c, {0, 0, 0}); }, {"'b'", "1 times for 2 devices"});
}

BOOST_AUTO_TEST_CASE(random_dags_against_brute_force) {
  // Seeded random DAGs of up to 10 ops (several outputs, omitted inputs, values read by many),
  // random times with ops each device cannot run, random transfer costs: with two devices the
  // cut is the optimum; with three, a local optimum never slower than the priority start.
  std::mt19937 rng(33);
  std::uniform_real_distribution<double> u(0, 1);
  int two = 0, three = 0, moved = 0;
  for (int n = 0; n < 4000 && (two < 600 || three < 200); ++n) {
    random_case rc = random_dag(rng, false);
    const std::size_t ops = rc.g.ops.size(), k = 2 + (n % 3 == 0 ? 1 : 0);
    if (ops > (k == 2 ? 10u : 7u)) continue;
    std::vector<std::vector<double>> times(ops, std::vector<double>(k));
    for (auto& row : times) {
      for (auto& t : row) t = u(rng) < 0.15 ? never : 1 + 99 * u(rng);
      row[std::uniform_int_distribution<std::size_t>(0, k - 1)(rng)] = 1 + 99 * u(rng); // one device can
    }
    auto c = costs_of(times, 30 * u(rng), u(rng));
    for (std::size_t a = 0; a < k; ++a)
      for (std::size_t b = 0; b < k; ++b) c.transfer[a][b] = {40 * u(rng), u(rng)};
    BOOST_TEST_CONTEXT("case " << n << ", " << ops << " ops, " << k << " devices") {
      const auto start = by_priority(c);
      const auto placed = place_by_cost(rc.g, c, start);
      const double got = predicted_us(rc.g, c, placed), best = brute_force_best(rc.g, c);
      BOOST_TEST(std::isfinite(got));
      BOOST_TEST(got <= predicted_us(rc.g, c, start) + 1e-9);
      if (k == 2) BOOST_TEST(got == best, boost::test_tools::tolerance(1e-9));
      BOOST_TEST(got >= best - 1e-9);
      // Under requests in flight: never a larger bottleneck than the start's.
      const std::vector<int> independent = k == 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 1};
      const auto piped = place_for_throughput(rc.g, c, start, independent);
      BOOST_TEST(bottleneck_us(rc.g, c, piped, independent) <= bottleneck_us(rc.g, c, start, independent) + 1e-9);
      BOOST_TEST(std::isfinite(bottleneck_us(rc.g, c, piped, independent)));
      (k == 2 ? two : three) += 1;
      moved += placed != start;
    }
  }
  BOOST_TEST(two >= 600);
  BOOST_TEST(three >= 200);
  BOOST_TEST(moved > 300); // the cut changes the start often: the comparison is not vacuous
}

BOOST_AUTO_TEST_CASE(the_throughput_heuristic_against_brute_force) {
  // place_for_throughput is a heuristic: on random DAGs over two devices with hardware of
  // their own, how far is its bottleneck from the best one (every placement tried)? The
  // thresholds are what it reached when written (seed 34), with room for float ties.
  std::mt19937 rng(34);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<int> independent{0, 1};
  int cases = 0, optimal = 0;
  double ratio_sum = 0, worst = 1;
  for (int n = 0; n < 4000 && cases < 400; ++n) {
    random_case rc = random_dag(rng, false);
    const std::size_t ops = rc.g.ops.size();
    if (ops > 10u) continue;
    std::vector<std::vector<double>> times(ops, std::vector<double>(2));
    for (auto& row : times) {
      for (auto& t : row) t = u(rng) < 0.15 ? never : 1 + 99 * u(rng);
      row[std::uniform_int_distribution<std::size_t>(0, 1)(rng)] = 1 + 99 * u(rng);
    }
    auto c = costs_of(times, 10 * u(rng), 0.1 * u(rng));
    const auto piped = place_for_throughput(rc.g, c, by_priority(c), independent);
    const double got = bottleneck_us(rc.g, c, piped, independent);
    std::vector<int> d(ops, 0);
    double best = never;
    while (true) {
      best = std::min(best, bottleneck_us(rc.g, c, d, independent));
      std::size_t i = 0;
      while (i < ops && ++d[i] == 2) d[i++] = 0;
      if (i == ops) break;
    }
    ++cases;
    optimal += got <= best + 1e-9;
    ratio_sum += got / best;
    worst = std::max(worst, got / best);
  }
  BOOST_TEST_MESSAGE("throughput heuristic: " << optimal << " of " << cases << " optimal, mean ratio "
                                              << ratio_sum / cases << ", worst " << worst);
  BOOST_TEST(cases == 400);
  BOOST_TEST(optimal >= cases * 60 / 100); // 265 of 400
  BOOST_TEST(ratio_sum / cases <= 1.05); // 1.035; the worst case 1.37
}

// ---- the roofline cost model (HETERO_PLACEMENT=COST_NOMINAL) ---------------------------------

namespace {

/// x[64,256] . w[256,256] -> Relu: 8.4 MFLOP over 384 KiB, then 16 K operations over 128 KiB.
Graph matmul_relu() {
  Graph g;
  auto x = g.add_input("x", element_type::f32, PartialShape({64, 256}));
  auto w = g.add_input("w", element_type::f32, PartialShape({256, 256}));
  Op mm;
  mm.type = "MatMul";
  mm.name = "mm";
  mm.inputs = {x, w};
  mm.outputs = {g.add_value({"mm_out", element_type::f32, PartialShape({64, 256}), std::nullopt})};
  g.ops.push_back(mm);
  Op relu;
  relu.type = "Relu";
  relu.name = "relu";
  relu.inputs = {mm.outputs[0]};
  relu.outputs = {g.add_value({"y", element_type::f32, PartialShape({64, 256}), std::nullopt})};
  g.ops.push_back(relu);
  g.outputs = {relu.outputs[0]};
  return g;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_roofline_times_an_op_by_its_flops_or_its_bytes_whichever_binds) {
  const Graph g = matmul_relu();
  // "gpu": 1000 GFLOP/s, 100 GB/s, 10 us an op; "cpu": 50 GFLOP/s, 20 GB/s, 1 us an op.
  const std::vector<device_rates> rates{{1000, 100, 10, {20, 1e-4}}, {50, 20, 1, {2, 5e-5}}};
  const std::vector<std::vector<bool>> both(2, std::vector<bool>{true, true});
  const auto c = roofline_costs(g, {"gpu", "cpu"}, rates, both);
  const double tol = 1e-9;
  // MatMul: 2 x 64 x 256 x 256 = 8388608 operations, (16384 + 65536 + 16384) x 4 bytes.
  BOOST_TEST(c.op_us[0][0] == 10 + 8388608 / 1e6, boost::test_tools::tolerance(tol)); // compute-bound
  BOOST_TEST(c.op_us[0][1] == 1 + 8388608 / 5e4, boost::test_tools::tolerance(tol));
  // Relu: 16384 operations, 2 x 16384 x 4 bytes: memory-bound on both.
  BOOST_TEST(c.op_us[1][0] == 10 + 131072 / 1e5, boost::test_tools::tolerance(tol));
  BOOST_TEST(c.op_us[1][1] == 1 + 131072 / 2e4, boost::test_tools::tolerance(tol));
  // Into the gpu: its latency; bytes leave one side and enter the other, each at its rate.
  BOOST_TEST(c.transfer[1][0].latency_us == 20);
  BOOST_TEST(c.transfer[1][0].us_per_byte == 1.5e-4, boost::test_tools::tolerance(tol));
  BOOST_TEST(c.from_host[0].us_per_byte == 1e-4);
  BOOST_TEST(c.to_host[1].latency_us == 2); // the device's own latency
  // The MatMul pays on the gpu; its output crosses to the cpu for the Relu, which hands the
  // result home for less than the gpu would: 18.4 + 72.8 (inputs) + 11.8 + 7.6 + 5.3 = 115.8 us,
  // against 128.9 all on the gpu, 202.0 all on the cpu, 256.9 the other way round.
  BOOST_TEST(place_by_cost(g, c, {1, 1}) == (std::vector<int>{0, 1}));
  BOOST_TEST(predicted_us(g, c, {0, 1}) == 115.8, boost::test_tools::tolerance(1e-3));
  // Behind a slow link nothing moves.
  auto far = rates;
  far[0].io = {1000, 1e-3};
  BOOST_TEST(place_by_cost(g, roofline_costs(g, {"gpu", "cpu"}, far, both), {1, 1}) == (std::vector<int>{1, 1}));
  // Where an op cannot run: never.
  const auto no_mm = roofline_costs(g, {"gpu", "cpu"}, rates, {{false, true}, {true, true}});
  BOOST_TEST(std::isinf(no_mm.op_us[0][0]));
  BOOST_TEST(no_mm.op_us[0][1] == c.op_us[0][1]);
}

BOOST_AUTO_TEST_CASE(bad_roofline_tables_are_named) {
  const Graph g = matmul_relu();
  const std::vector<std::vector<bool>> both(2, std::vector<bool>{true, true});
  expect_error([&] { roofline_costs(g, {"gpu", "cpu"}, {{1000, 100, 10, {}}, {0, 20, 1, {}}}, both); },
               {"device cpu", "positive"});
  expect_error([&] { roofline_costs(g, {"gpu", "cpu"}, {{1000, 100, 10, {}}}, both); }, {"1 rates", "2 devices"});
  expect_error([&] { roofline_costs(g, {"gpu", "cpu"}, {{1, 1, 0, {}}, {1, 1, 0, {}}}, {{true, true}}); }, {"1 rows", "2 ops"});
  expect_error([&] { roofline_costs(g, {"gpu", "cpu"}, {{1, 1, 0, {}}, {1, 1, 0, {}}}, {{true, true}, {true}}); },
               {"op 'relu'", "1 entries"});
}

BOOST_AUTO_TEST_SUITE_END()
