/// eliminate_identities: Identity and inference-mode Dropout pass their input through, so
/// their readers can read the input directly.
#include <unordered_set>

#include "graph/pass_utils.hpp"
#include "graph/passes.hpp"

namespace troupe::graph {

void eliminate_identities(Graph& g) {
  auto prod = g.producers();
  auto uses = g.use_counts();
  std::unordered_set<ValueId> graph_outputs(g.outputs.begin(), g.outputs.end());
  std::unordered_set<ValueId> graph_inputs(g.inputs.begin(), g.inputs.end());
  std::vector<ValueId> alias(g.values.size(), no_value);
  auto resolve = [&](ValueId v) {
    for (std::size_t guard = 0; v != no_value && alias[static_cast<std::size_t>(v)] != no_value && guard < alias.size(); ++guard)
      v = alias[static_cast<std::size_t>(v)];
    return v;
  };
  std::vector<bool> removed(g.ops.size(), false);
  bool any = false;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    Op& op = g.ops[i];
    for (auto& v : op.inputs) v = resolve(v);
    if (!op.domain.empty() || op.inputs.empty() || op.inputs[0] == no_value || op.outputs.empty()) continue;
    if (op.type != "Identity" && op.type != "Dropout") continue;
    bool mask_used = false;
    for (std::size_t k = 1; k < op.outputs.size(); ++k)
      mask_used = mask_used || (op.outputs[k] != no_value && uses[static_cast<std::size_t>(op.outputs[k])] > 0);
    if (mask_used || (op.type == "Dropout" && op.input_count() > 2)) continue; // training_mode given: keep
    ValueId x = op.inputs[0], y = op.outputs[0];
    if (y == no_value) continue;
    if (!graph_outputs.count(y)) {
      alias[static_cast<std::size_t>(y)] = x;
    } else {
      // y must keep its name: let x's producer write y instead, when x is only an intermediate.
      int p = prod[static_cast<std::size_t>(x)];
      if (p < 0 || graph_outputs.count(x) || graph_inputs.count(x)) continue;
      for (auto& o : g.ops[static_cast<std::size_t>(p)].outputs)
        if (o == x) o = y;
      prod[static_cast<std::size_t>(y)] = p;
      alias[static_cast<std::size_t>(x)] = y;
    }
    removed[i] = true;
    any = true;
  }
  if (!any) return;
  for (auto& op : g.ops)
    for (auto& v : op.inputs) v = resolve(v);
  detail::remove_ops(g, removed);
}

} // namespace troupe::graph
