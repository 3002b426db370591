#pragma once
/// One op over f32 values in a graph built in code, for the benchmarks that time single ops
/// (troupe_op_bench) or measure a peak (troupe_roofline).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/ir.hpp"

namespace troupe::bench {

/// Appends `type` over `in` with output "y" of shape `out` (f32), which becomes a graph output.
inline void add_op(graph::Graph& g, const std::string& type, std::vector<graph::ValueId> in, const Shape& out,
                   std::map<std::string, graph::AttributeValue> attrs) {
  graph::Op o;
  o.type = type;
  o.name = type + "_0";
  o.inputs = std::move(in);
  o.attrs = std::move(attrs);
  o.outputs.push_back(g.add_value({"y", element_type::f32, PartialShape(out), std::nullopt}));
  g.outputs.push_back(o.outputs[0]);
  g.ops.push_back(std::move(o));
}

} // namespace troupe::bench
