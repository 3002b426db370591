#include "graph/inline_if.hpp"

namespace troupe::graph {

namespace {

/// The ops that replace `op` (an If taking `branch`), or false when the branch does not fit
/// the op (the interpreter's kernel reports such a model at run time).
bool inline_branch(Graph& g, const Op& op, const Graph& branch, std::vector<Op>& ops) {
  const std::size_t declared = op.declared_inputs();
  if (branch.inputs.size() != op.inputs.size() - declared || branch.outputs.size() != op.outputs.size()) return false;
  std::vector<ValueId> map(branch.values.size(), no_value);
  for (std::size_t k = 0; k < branch.inputs.size(); ++k)
    map[static_cast<std::size_t>(branch.inputs[k])] = op.inputs[declared + k];
  const std::vector<int> producer = branch.producers();
  std::vector<bool> direct(op.outputs.size(), false); // written by a branch op straight into the If's output
  for (std::size_t j = 0; j < branch.outputs.size(); ++j) {
    const auto v = static_cast<std::size_t>(branch.outputs[j]);
    if (producer[v] >= 0 && map[v] == no_value) {
      map[v] = op.outputs[j];
      direct[j] = true;
    }
  }
  const std::string prefix = op.name + "/";
  for (std::size_t v = 0; v < branch.values.size(); ++v) {
    if (map[v] != no_value) continue;
    const Value& bv = branch.values[v];
    if (!bv.constant && producer[v] < 0) continue; // an input nobody reads, or nothing
    Value nv = bv;
    nv.name = prefix + bv.name;
    map[v] = g.add_value(std::move(nv));
  }
  auto mapped = [&](ValueId v, ValueId& out) {
    if (v == no_value) return true;
    out = map[static_cast<std::size_t>(v)];
    return out != no_value;
  };
  for (const Op& bop : branch.ops) {
    Op n = bop;
    n.name = prefix + bop.name;
    for (const auto& [k, info] : op.rt_info) n.rt_info.emplace(k, info);
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      if (!mapped(bop.inputs[i], n.inputs[i])) return false;
    for (std::size_t i = 0; i < n.outputs.size(); ++i)
      if (!mapped(bop.outputs[i], n.outputs[i])) return false;
    ops.push_back(std::move(n));
  }
  for (std::size_t j = 0; j < op.outputs.size(); ++j) {
    if (direct[j] || op.outputs[j] == no_value) continue;
    Op id;
    id.type = "Identity";
    id.name = prefix + "output_" + std::to_string(j);
    id.rt_info = op.rt_info;
    ValueId from = no_value;
    if (!mapped(branch.outputs[j], from)) return false;
    id.inputs = {from};
    id.outputs = {op.outputs[j]};
    ops.push_back(std::move(id));
  }
  return true;
}

} // namespace

bool inline_constant_ifs(Graph& g) {
  bool any = false;
  for (std::size_t i = 0; i < g.ops.size();) {
    const Op& at = g.ops[i];
    const Tensor* cond = at.type == "If" && !at.inputs.empty() && g.is_constant(at.inputs[0]) ? &*g.value(at.inputs[0]).constant : nullptr;
    const Graph* branch = cond && cond->get_element_type() == element_type::boolean && cond->get_size() == 1
                              ? at.attr_graph(*cond->data<bool>() ? "then_branch" : "else_branch")
                              : nullptr;
    if (!branch) {
      ++i;
      continue;
    }
    const Op op = at; // a copy: g.ops and g.values grow below
    const std::size_t values_before = g.values.size();
    std::vector<Op> ops;
    if (!inline_branch(g, op, *branch, ops)) {
      g.values.resize(values_before); // nothing refers to the values added for it
      ++i;
      continue;
    }
    g.ops.erase(g.ops.begin() + static_cast<std::ptrdiff_t>(i));
    g.ops.insert(g.ops.begin() + static_cast<std::ptrdiff_t>(i), ops.begin(), ops.end());
    i += ops.size();
    any = true;
  }
  if (any) g.prune();
  return any;
}

} // namespace troupe::graph
