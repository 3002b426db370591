/// IR mappings of the sub-graph ops. If-8 is ONNX's If: the IR's inputs the bodies read become
/// the If's captured values (troupe's graph appends captures to an op's inputs and its bodies'
/// inputs, graph/onnx_reader.cpp), the bodies' Results ordered as the If's outputs.
/// TensorIterator-1 is ONNX's Scan: a back edge is a state variable, a sliced input (axis,
/// part_size 1, stride 1 or -1 over the whole axis) a scan input (the body sees the slice
/// without the axis: an Unsqueeze puts it back), an input neither sliced nor fed back a capture;
/// a concatenated output a scan output (squeezed in the body, stacked by Scan along the axis),
/// an output without axis the last iteration's value (a state's final value, or the last
/// entry of a stacked output).
#include <algorithm>
#include <limits>
#include <set>

#include "graph/ir_op_mapping.hpp"
#include "graph/shape_inference.hpp"

namespace troupe::graph::ir {

namespace {

using attrs = std::map<std::string, AttributeValue>;

const body& body_of(builder& b, const std::string& which) {
  auto it = b.l.bodies.find(which);
  if (it == b.l.bodies.end() || !it->second.graph) b.fail("has no <" + which + ">");
  return it->second;
}

const std::pair<std::vector<port_mapping>, std::vector<port_mapping>>& port_map_of(builder& b, const std::string& which) {
  static const std::pair<std::vector<port_mapping>, std::vector<port_mapping>> none;
  auto it = b.l.port_maps.find(which);
  return it == b.l.port_maps.end() ? none : it->second;
}

/// The layer's input index that port map entry `external` names: a port id of the layer's
/// inputs (the ids OpenVINO writes), else an index.
std::size_t input_index(builder& b, int64_t external) {
  for (std::size_t i = 0; i < b.l.inputs.size(); ++i)
    if (b.l.inputs[i].id == external) return i;
  if (external >= 0 && static_cast<std::size_t>(external) < b.l.inputs.size()) return static_cast<std::size_t>(external);
  b.fail("a port map names input port " + std::to_string(external) + ", which the layer does not have");
}

/// The same for outputs: a port id of the layer's outputs, else an output index.
std::size_t output_index(builder& b, int64_t external) {
  for (std::size_t i = 0; i < b.l.outputs.size(); ++i)
    if (b.l.outputs[i].id == external) return i;
  if (external >= 0 && static_cast<std::size_t>(external) < b.l.outputs.size()) return static_cast<std::size_t>(external);
  b.fail("a port map names output port " + std::to_string(external) + ", which the layer does not have");
}

/// Body graph input `layer_id` (a Parameter layer), failing naming the body.
ValueId parameter_value(builder& b, const body& bd, const std::string& which, int64_t layer_id) {
  auto it = bd.parameter.find(layer_id);
  if (it == bd.parameter.end()) b.fail(which + ": layer " + std::to_string(layer_id) + " is not one of its Parameters");
  return bd.graph->inputs.at(it->second);
}

ValueId result_value(builder& b, const body& bd, const std::string& which, int64_t layer_id) {
  auto it = bd.result.find(layer_id);
  if (it == bd.result.end()) b.fail(which + ": layer " + std::to_string(layer_id) + " is not one of its Results");
  return bd.graph->outputs.at(it->second);
}

/// A value standing for an outer input that a body does not read.
ValueId unused_input(Graph& g, const Graph& outer, ValueId outer_value) {
  const Value& v = outer.value(outer_value);
  return g.add_value(Value{v.name + ":unused", v.type, v.shape, std::nullopt});
}

/// An op put into body graph g at `at` (ops before it keep their order; -1: appended), writing
/// `out` or a fresh value typed by inference.
ValueId body_op(Graph& g, const std::string& name, const std::string& type, std::vector<ValueId> in, attrs a = {},
                ValueId out = no_value, std::ptrdiff_t at = -1) {
  Op o;
  o.type = type;
  o.name = name;
  o.inputs = std::move(in);
  o.attrs = std::move(a);
  if (out == no_value) {
    o.outputs.push_back(g.add_value(Value{name + ":0", element_type::undefined, PartialShape::unknown_rank(), std::nullopt}));
    auto info = infer_op(g, o);
    g.value(o.outputs[0]).type = info.at(0).type;
    g.value(o.outputs[0]).shape = info.at(0).shape;
  } else {
    o.outputs.push_back(out);
  }
  const ValueId r = o.outputs[0];
  if (at >= 0) g.ops.insert(g.ops.begin() + at, std::move(o));
  else g.ops.push_back(std::move(o));
  return r;
}

ValueId axes_constant(Graph& g, const std::string& name, int64_t axis) {
  Tensor t(element_type::i64, Shape{1});
  t.data<int64_t>()[0] = axis;
  return g.add_constant(name, std::move(t));
}

/// The body's back edges: Parameter layer id -> the Result layer id feeding it the next
/// iteration (both checked to be the body's).
std::map<int64_t, int64_t> back_edges_of(builder& b, const body& bd) {
  std::map<int64_t, int64_t> fed_by;
  for (const auto& [from, to] : b.l.back_edges) {
    parameter_value(b, bd, "body", to);
    result_value(b, bd, "body", from);
    fed_by[to] = from;
  }
  return fed_by;
}

/// Port map entry m's axis within `rank` (negative: from the end); fails naming `what`.
int64_t port_axis(builder& b, const port_mapping& m, int64_t rank, const std::string& what) {
  const int64_t axis = *m.axis < 0 ? *m.axis + rank : *m.axis;
  if (rank < 0 || axis < 0 || axis >= rank)
    b.fail(what + "'s axis " + std::to_string(*m.axis) + " is outside rank " + std::to_string(rank));
  return axis;
}

std::vector<ValueId> if_op(builder& b) {
  if (b.inputs() < 1) b.fail("needs the condition as input 0");
  const std::vector<std::string> names{"then_body", "else_body"};
  // The outer inputs either body reads, in input order: the If's captures.
  std::set<std::size_t> read;
  for (const auto& which : names) {
    body_of(b, which);
    for (const auto& m : port_map_of(b, which == "then_body" ? "then_port_map" : "else_port_map").first) {
      const std::size_t i = input_index(b, m.external);
      if (i == 0) b.fail("a body reads the condition, input 0: troupe's If passes it to neither");
      read.insert(i);
    }
  }
  const std::vector<std::size_t> captured(read.begin(), read.end());
  attrs a;
  for (const auto& which : names) {
    const body& bd = body_of(b, which);
    const auto& [ins, outs] = port_map_of(b, which == "then_body" ? "then_port_map" : "else_port_map");
    auto g = std::make_shared<Graph>(*bd.graph);
    std::vector<ValueId> inputs;
    for (std::size_t i : captured) {
      auto m = std::find_if(ins.begin(), ins.end(), [&](const port_mapping& p) { return input_index(b, p.external) == i; });
      inputs.push_back(m != ins.end() ? parameter_value(b, bd, which, m->internal) : unused_input(*g, b.g, b.input(i)));
    }
    if (inputs.size() < g->inputs.size() || std::set<ValueId>(inputs.begin(), inputs.end()).size() < g->inputs.size())
      b.fail(which + " has a Parameter that no input of the If feeds");
    std::vector<ValueId> outputs(b.l.outputs.size(), no_value);
    for (const auto& m : outs) outputs.at(output_index(b, m.external)) = result_value(b, bd, which, m.internal);
    for (std::size_t k = 0; k < outputs.size(); ++k)
      if (outputs[k] == no_value) b.fail(which + " gives no value for output " + std::to_string(k));
    g->inputs = std::move(inputs);
    g->outputs = std::move(outputs);
    a[which == "then_body" ? "then_branch" : "else_branch"] = std::shared_ptr<const Graph>(std::move(g));
  }
  a[declared_inputs_attr] = int64_t{1};
  std::vector<ValueId> in{b.input(0)};
  for (std::size_t i : captured) in.push_back(b.input(i));
  return b.op_n("If", std::move(in), std::move(a), b.l.outputs.size());
}

std::vector<ValueId> tensor_iterator(builder& b) {
  const body& bd = body_of(b, "body");
  const auto& [ins, outs] = port_map_of(b, "port_map");
  auto g = std::make_shared<Graph>(*bd.graph);
  const std::string where = b.l.name + "/body";
  const auto fed_by = back_edges_of(b, bd);
  std::vector<ValueId> state_in, state_out, scan_in, scan_body_in, captures, capture_body_in;
  std::vector<int64_t> scan_axes, scan_reverse;
  auto whole_axis = [&](const port_mapping& m, const char* what) {
    if (m.part_size != 1)
      b.fail(std::string(what) + " of external port " + std::to_string(m.external) + " has part_size " +
             std::to_string(m.part_size) + " (troupe maps 1)");
    const bool whole = (m.stride == 1 && m.start == 0 && m.end == -1) ||
                       (m.stride == -1 && ((m.start == 0 && m.end == -1) || (m.start == -1 && m.end == 0)));
    if (!whole)
      b.fail(std::string(what) + " of external port " + std::to_string(m.external) + " takes part of its axis (start " +
             std::to_string(m.start) + ", end " + std::to_string(m.end) + ", stride " + std::to_string(m.stride) +
             "); troupe maps the whole axis, forwards or backwards");
  };
  for (const auto& m : ins) {
    const std::size_t i = input_index(b, m.external);
    const ValueId p = parameter_value(b, bd, "body", m.internal);
    if (auto fb = fed_by.find(m.internal); fb != fed_by.end()) {
      state_in.push_back(b.input(i));
      state_out.push_back(result_value(b, bd, "body", fb->second));
      continue;
    }
    if (!m.axis) {
      captures.push_back(b.input(i));
      capture_body_in.push_back(p);
      continue;
    }
    whole_axis(m, "the sliced input");
    const auto rank = static_cast<int64_t>(b.in_rank(i));
    const int64_t axis = port_axis(b, m, rank, "the sliced input");
    // Scan hands the body the slice without the axis; the body's Parameter keeps it (size 1).
    Value slice = g->value(p);
    slice.name += "/slice";
    if (slice.shape.rank_known && slice.shape.rank() == static_cast<std::size_t>(rank)) {
      slice.shape.dims.erase(slice.shape.dims.begin() + axis);
      slice.shape.symbols.clear();
      slice.shape.ranges.clear();
    } else {
      slice.shape = PartialShape::unknown_rank();
    }
    const ValueId s = g->add_value(std::move(slice));
    body_op(*g, where + "/unsqueeze_" + std::to_string(scan_in.size()), "Unsqueeze",
            {s, axes_constant(*g, where + "/slice_axis_" + std::to_string(scan_in.size()), axis)}, {}, p, 0);
    scan_in.push_back(b.input(i));
    scan_body_in.push_back(s);
    scan_axes.push_back(axis);
    scan_reverse.push_back(m.stride < 0 ? 1 : 0);
  }
  if (scan_in.empty()) b.fail("has no sliced input: troupe maps a TensorIterator to Scan, which iterates over one");
  if (capture_body_in.size() + scan_body_in.size() + state_in.size() != g->inputs.size())
    b.fail("body has " + std::to_string(g->inputs.size()) + " Parameters; the port map feeds " +
           std::to_string(capture_body_in.size() + scan_body_in.size() + state_in.size()));
  // Outputs: each TI output is a Scan output, maybe followed by taking its last entry.
  struct out_plan { std::size_t scan_output = 0; bool last = false; };
  std::vector<out_plan> plan(b.l.outputs.size());
  std::vector<bool> planned(b.l.outputs.size(), false);
  std::vector<ValueId> scan_out;
  std::vector<int64_t> out_axes, out_reverse;
  for (const auto& m : outs) {
    const std::size_t o = output_index(b, m.external);
    const ValueId r = result_value(b, bd, "body", m.internal);
    planned.at(o) = true;
    if (!m.axis) {
      // The last iteration's value: a state's final value, else the last of its stack.
      auto st = std::find(state_out.begin(), state_out.end(), r);
      if (st != state_out.end()) {
        plan[o] = {static_cast<std::size_t>(st - state_out.begin()), false};
        continue;
      }
      plan[o] = {state_out.size() + scan_out.size(), true};
      scan_out.push_back(r);
      out_axes.push_back(0);
      out_reverse.push_back(0);
      continue;
    }
    whole_axis(m, "the concatenated output");
    const auto& rs = g->value(r).shape;
    if (!rs.rank_known) b.fail("the concatenated output of external port " + std::to_string(m.external) + " has no known rank in the body");
    const auto rank = static_cast<int64_t>(rs.rank());
    const int64_t axis = port_axis(b, m, rank, "the concatenated output");
    const std::string k = std::to_string(scan_out.size());
    const ValueId squeezed = body_op(*g, where + "/squeeze_" + k, "Squeeze", {r, axes_constant(*g, where + "/out_axis_" + k, axis)});
    plan[o] = {state_out.size() + scan_out.size(), false};
    scan_out.push_back(squeezed);
    out_axes.push_back(axis);
    out_reverse.push_back(m.stride < 0 ? 1 : 0);
  }
  for (std::size_t o = 0; o < planned.size(); ++o)
    if (!planned[o]) b.fail("the port map gives no value for output " + std::to_string(o));
  // Body: states, slices, captures in; next states, scan outputs out.
  std::vector<ValueId> body_in;
  for (const auto& m : ins)
    if (fed_by.count(m.internal)) body_in.push_back(parameter_value(b, bd, "body", m.internal));
  body_in.insert(body_in.end(), scan_body_in.begin(), scan_body_in.end());
  body_in.insert(body_in.end(), capture_body_in.begin(), capture_body_in.end());
  g->inputs = std::move(body_in);
  g->outputs = state_out;
  g->outputs.insert(g->outputs.end(), scan_out.begin(), scan_out.end());
  std::vector<ValueId> in = state_in;
  in.insert(in.end(), scan_in.begin(), scan_in.end());
  const auto declared = static_cast<int64_t>(in.size());
  in.insert(in.end(), captures.begin(), captures.end());
  attrs a{{"body", std::shared_ptr<const Graph>(std::move(g))},
          {"num_scan_inputs", static_cast<int64_t>(scan_in.size())},
          {"scan_input_axes", scan_axes},
          {"scan_input_directions", scan_reverse},
          {"scan_output_axes", out_axes},
          {"scan_output_directions", out_reverse},
          {declared_inputs_attr, declared}};
  const auto scan = b.op_n("Scan", std::move(in), std::move(a), state_out.size() + scan_out.size());
  std::vector<ValueId> r;
  for (const auto& p : plan) {
    ValueId v = scan.at(p.scan_output);
    if (p.last) v = b.op("Gather", {v, b.i64_scalar(-1)}, {{"axis", int64_t{0}}});
    r.push_back(v);
  }
  return r;
}

/// A boolean scalar constant in body graph g.
ValueId body_bool(Graph& g, const std::string& name, bool v) {
  Tensor t(element_type::boolean, Shape{});
  t.data<bool>()[0] = v;
  return g.add_constant(name, std::move(t));
}

/// Loop-5 as ONNX's Loop. The trip count (a constant -1: none) and the condition become Loop's
/// M and cond; back edges loop-carried values; the current_iteration Parameter takes Loop's
/// iteration number (cast and shaped as the body declares it); the execution_condition Result
/// is the body's condition (none: always true). An input sliced on an axis is captured whole
/// and gathered at the iteration number in the body; an output with an axis is stacked by Loop
/// and moved to its axis; one without the last iteration's value. Slices and concatenations
/// take part_size 1, stride 1 over the whole axis.
std::vector<ValueId> loop(builder& b) {
  if (b.inputs() < 2) b.fail("needs the trip count and the execution condition as inputs 0 and 1");
  const body& bd = body_of(b, "body");
  const auto& [ins, outs] = port_map_of(b, "port_map");
  auto g = std::make_shared<Graph>(*bd.graph);
  const std::string where = b.l.name + "/body";
  const auto fed_by = back_edges_of(b, bd);
  auto forward_whole = [&](const port_mapping& m, const char* what) {
    if (m.part_size != 1 || m.stride != 1 || m.start != 0 || m.end != -1)
      b.fail(std::string(what) + " of external port " + std::to_string(m.external) +
             " is not the whole axis in steps of one (part_size " + std::to_string(m.part_size) + ", stride " +
             std::to_string(m.stride) + ", start " + std::to_string(m.start) + ", end " + std::to_string(m.end) + ")");
  };
  const ValueId iter = g->add_value(Value{where + "/iteration", element_type::i64, PartialShape{}, std::nullopt});
  const ValueId cond_in = g->add_value(Value{where + "/condition_in", element_type::boolean, PartialShape{}, std::nullopt});
  std::vector<ValueId> carried_in, carried_body, carried_next, captures, capture_body;
  std::size_t fed = 0;
  for (const auto& m : ins) {
    const ValueId p = parameter_value(b, bd, "body", m.internal);
    ++fed;
    if (m.purpose == "current_iteration") {
      // Loop's i64 scalar, cast and shaped as the Parameter declares it (i64 or i32, [] or [1]):
      // the Parameter's value is now made by the first ops of the body.
      const Value pv = g->value(p);
      const bool reshape = !pv.shape.rank_known || pv.shape.rank() != 0, cast = pv.type != element_type::i64;
      ValueId v = iter;
      std::ptrdiff_t at = 0;
      if (reshape)
        v = body_op(*g, where + "/iteration_shape", "Reshape",
                    {v, g->add_constant(where + "/iteration_dims", builder::make_tensor({1}, element_type::i64, Shape{1}))}, {},
                    cast ? no_value : p, at++);
      if (cast) body_op(*g, where + "/iteration_cast", "Cast", {v}, {{"to", static_cast<int64_t>(pv.type)}}, p, at++);
      if (!reshape && !cast) body_op(*g, where + "/iteration", "Identity", {v}, {}, p, at++);
      continue;
    }
    if (m.external < 0) b.fail("a port map input with no external port and purpose '" + m.purpose + "'");
    const std::size_t i = input_index(b, m.external);
    if (i < 2) b.fail("the body reads input " + std::to_string(i) + " (the trip count or the condition) as a Parameter");
    if (auto fb = fed_by.find(m.internal); fb != fed_by.end()) {
      carried_in.push_back(b.input(i));
      carried_body.push_back(p);
      carried_next.push_back(result_value(b, bd, "body", fb->second));
      continue;
    }
    if (!m.axis) {
      captures.push_back(b.input(i));
      capture_body.push_back(p);
      continue;
    }
    // A slice per iteration: the whole input captured, gathered at the iteration number.
    forward_whole(m, "the sliced input");
    const auto rank = static_cast<int64_t>(b.in_rank(i));
    const int64_t axis = port_axis(b, m, rank, "the sliced input");
    const Value& outer = b.g.value(b.input(i));
    const ValueId whole = g->add_value(Value{outer.name + "/whole", outer.type, outer.shape, std::nullopt});
    const std::string k = std::to_string(captures.size());
    // Gather removes the axis; the Parameter keeps it (size 1).
    const ValueId picked = body_op(*g, where + "/slice_" + k, "Gather", {whole, iter}, {{"axis", axis}}, no_value, 0);
    body_op(*g, where + "/slice_unsqueeze_" + k, "Unsqueeze", {picked, axes_constant(*g, where + "/slice_axis_" + k, axis)},
            {}, p, 1);
    captures.push_back(b.input(i));
    capture_body.push_back(whole);
  }
  if (fed != g->inputs.size())
    b.fail("body has " + std::to_string(g->inputs.size()) + " Parameters; the port map feeds " + std::to_string(fed));
  // The body's condition: the execution_condition Result, as a bool scalar.
  ValueId cond_out = no_value;
  for (const auto& m : outs)
    if (m.purpose == "execution_condition") cond_out = result_value(b, bd, "body", m.internal);
  if (cond_out == no_value) cond_out = body_bool(*g, where + "/always", true);
  else if (!g->value(cond_out).shape.rank_known || g->value(cond_out).shape.rank() != 0)
    cond_out = body_op(*g, where + "/condition_scalar", "Reshape",
                       {cond_out, g->add_constant(where + "/scalar_shape", Tensor(element_type::i64, Shape{0}))});
  // Outputs: a carried value's final value, or a stacked output (moved to its axis, or its last).
  struct out_plan { std::size_t index = 0; bool last = false; int64_t axis = -1; };
  std::vector<out_plan> plan(b.l.outputs.size());
  std::vector<bool> planned(b.l.outputs.size(), false);
  std::vector<ValueId> stacked;
  for (const auto& m : outs) {
    if (m.purpose == "execution_condition") continue;
    const std::size_t o = output_index(b, m.external);
    const ValueId r = result_value(b, bd, "body", m.internal);
    planned.at(o) = true;
    if (!m.axis) {
      auto c = std::find(carried_next.begin(), carried_next.end(), r);
      if (c != carried_next.end()) {
        plan[o] = {static_cast<std::size_t>(c - carried_next.begin()), false, -1};
      } else {
        plan[o] = {carried_next.size() + stacked.size(), true, -1};
        stacked.push_back(r);
      }
      continue;
    }
    forward_whole(m, "the concatenated output");
    const auto& rs = g->value(r).shape;
    const int64_t rank = rs.rank_known ? static_cast<int64_t>(rs.rank()) : -1;
    const int64_t axis = *m.axis < 0 ? *m.axis + rank : *m.axis;
    if (rank < 0 || axis < 0 || axis >= rank || rs.dims[static_cast<std::size_t>(axis)] != 1)
      b.fail("the concatenated output of external port " + std::to_string(m.external) +
             " needs a body value of size 1 on its axis (troupe stacks one per iteration)");
    const std::string k = std::to_string(stacked.size());
    plan[o] = {carried_next.size() + stacked.size(), false, axis};
    stacked.push_back(body_op(*g, where + "/squeeze_" + k, "Squeeze", {r, axes_constant(*g, where + "/out_axis_" + k, axis)}));
  }
  for (std::size_t o = 0; o < planned.size(); ++o)
    if (!planned[o]) b.fail("the port map gives no value for output " + std::to_string(o));
  std::vector<ValueId> body_in{iter, cond_in};
  body_in.insert(body_in.end(), carried_body.begin(), carried_body.end());
  body_in.insert(body_in.end(), capture_body.begin(), capture_body.end());
  g->inputs = std::move(body_in);
  std::vector<ValueId> body_out{cond_out};
  body_out.insert(body_out.end(), carried_next.begin(), carried_next.end());
  body_out.insert(body_out.end(), stacked.begin(), stacked.end());
  g->outputs = std::move(body_out);
  // M (a constant -1: none) and cond as Loop takes them: an i64 and a bool scalar.
  ValueId trip = no_value;
  const auto known = b.known_values(0);
  if (!known || known->first.size() != 1 || known->first[0] != -1) {
    trip = b.input(0);
    if (b.in_type(0) != element_type::i64) trip = b.op("Cast", {trip}, {{"to", static_cast<int64_t>(element_type::i64)}});
    trip = b.op("Reshape", {trip, b.i64s({})});
    // A negative trip count computed at run time is OpenVINO's "no limit" too; ONNX's Loop
    // would run no iteration.
    if (!known) {
      Tensor none(element_type::i64, Shape{});
      none.data<int64_t>()[0] = std::numeric_limits<int64_t>::max();
      trip = b.op("Where", {b.op("Less", {trip, b.i64_scalar(0)}), b.constant(std::move(none)), trip});
    }
  }
  ValueId cond = b.input(1);
  if (b.in_type(1) != element_type::boolean) cond = b.op("Cast", {cond}, {{"to", static_cast<int64_t>(element_type::boolean)}});
  cond = b.op("Reshape", {cond, b.i64s({})});
  std::vector<ValueId> in{trip, cond};
  in.insert(in.end(), carried_in.begin(), carried_in.end());
  const auto declared = static_cast<int64_t>(in.size());
  in.insert(in.end(), captures.begin(), captures.end());
  attrs a{{"body", std::shared_ptr<const Graph>(std::move(g))}, {declared_inputs_attr, declared}};
  const auto made = b.op_n("Loop", std::move(in), std::move(a), carried_next.size() + stacked.size());
  std::vector<ValueId> r;
  for (const auto& p : plan) {
    ValueId v = made.at(p.index);
    if (p.last) {
      v = b.op("Gather", {v, b.i64_scalar(-1)}, {{"axis", int64_t{0}}});
    } else if (p.axis > 0) {
      // Stacked on a new axis 0: move it to the output's axis.
      const auto rank = static_cast<int64_t>(b.g.value(v).shape.rank());
      std::vector<int64_t> perm;
      for (int64_t d = 1; d <= p.axis; ++d) perm.push_back(d);
      perm.push_back(0);
      for (int64_t d = p.axis + 1; d < rank; ++d) perm.push_back(d);
      v = b.op("Transpose", {v}, {{"perm", perm}});
    }
    r.push_back(v);
  }
  return r;
}

std::vector<std::string> v(std::initializer_list<const char*> s) { return {s.begin(), s.end()}; }

} // namespace

void add_control_ops(op_table& t) {
  t["If"].push_back({v({"opset8"}), if_op});
  t["TensorIterator"].push_back({v({"opset1"}), tensor_iterator});
  t["Loop"].push_back({v({"opset5"}), loop});
}

} // namespace troupe::graph::ir
