#include "graph/value_specialization.hpp"

#include <algorithm>
#include <set>

#include "graph/shape_rules.hpp"

namespace troupe::graph {

shape_deciding find_shape_deciding_inputs(const Graph& g) {
  // The non-constant values that rules of ops with unknown output shapes asked for.
  std::vector<ValueId> wanted;
  for (const auto& op : g.ops) {
    bool open = false;
    for (auto v : op.outputs)
      if (v != no_value && !g.value(v).shape.is_static()) open = true;
    if (!open) continue;
    try {
      detail::infer_op_recording(g, op, &wanted);
    } catch (const std::exception&) {
      // Shape inference already passed on this graph; a rule that fails here leaves nothing
      // more to learn about which values it needs.
    }
  }
  // Back from each wanted value to the graph inputs it is computed from.
  shape_deciding r;
  const auto producers = g.producers();
  std::set<ValueId> seen;
  std::set<std::size_t> found;
  while (!wanted.empty()) {
    const ValueId v = wanted.back();
    wanted.pop_back();
    if (v == no_value || !seen.insert(v).second || g.is_constant(v)) continue;
    const auto in = std::find(g.inputs.begin(), g.inputs.end(), v);
    if (in != g.inputs.end()) {
      const auto& val = g.value(v);
      if (!val.shape.is_static() || shape_size(val.shape.to_shape()) > max_deciding_elements) {
        if (r.obstacle.empty())
          r.obstacle = "the shapes depend on the values of input '" + val.name + "', which has more than " +
                       std::to_string(max_deciding_elements) + " elements (a data-dependent shape)";
        continue;
      }
      found.insert(static_cast<std::size_t>(in - g.inputs.begin()));
      continue;
    }
    const int p = producers[static_cast<std::size_t>(v)];
    if (p < 0) continue;
    for (auto x : g.ops[static_cast<std::size_t>(p)].inputs) wanted.push_back(x);
  }
  r.inputs.assign(found.begin(), found.end());
  return r;
}

Graph with_input_values(const Graph& src, const std::vector<std::pair<std::size_t, Tensor>>& values) {
  Graph g = src;
  for (const auto& [index, tensor] : values) {
    const ValueId input = g.inputs.at(index);
    const ValueId c = g.add_constant(g.value(input).name + ".value", tensor);
    for (auto& op : g.ops)
      std::replace(op.inputs.begin(), op.inputs.end(), input, c);
  }
  return g;
}

} // namespace troupe::graph
