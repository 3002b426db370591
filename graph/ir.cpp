#include "graph/ir.hpp"

#include <troupe/exception.hpp>

#include <unordered_map>

namespace troupe::graph {

namespace {
template <class T> const T* get(const Op& op, const std::string& k) {
  auto it = op.attrs.find(k);
  if (it == op.attrs.end()) return nullptr;
  if (auto* p = std::get_if<T>(&it->second)) return p;
  throw Exception(describe(op) + ": attribute '" + k + "' has an unexpected type");
}
} // namespace

int64_t Op::attr_int(const std::string& k, int64_t def) const {
  auto* p = get<int64_t>(*this, k);
  return p ? *p : def;
}
float Op::attr_float(const std::string& k, float def) const {
  auto it = attrs.find(k);
  if (it != attrs.end())
    if (auto* i = std::get_if<int64_t>(&it->second)) return static_cast<float>(*i);
  auto* p = get<float>(*this, k);
  return p ? *p : def;
}
std::string Op::attr_string(const std::string& k, const std::string& def) const {
  auto* p = get<std::string>(*this, k);
  return p ? *p : def;
}
std::vector<int64_t> Op::attr_ints(const std::string& k, std::vector<int64_t> def) const {
  auto* p = get<std::vector<int64_t>>(*this, k);
  return p ? *p : def;
}
std::vector<float> Op::attr_floats(const std::string& k, std::vector<float> def) const {
  auto* p = get<std::vector<float>>(*this, k);
  return p ? *p : def;
}
const Graph* Op::attr_graph(const std::string& k) const {
  auto* p = get<std::shared_ptr<const Graph>>(*this, k);
  return p ? p->get() : nullptr;
}
bool Op::has_subgraphs() const {
  for (const auto& [k, a] : attrs)
    if (std::holds_alternative<std::shared_ptr<const Graph>>(a)) return true;
  return false;
}
std::size_t Op::declared_inputs() const {
  int64_t n = attr_int(declared_inputs_attr, static_cast<int64_t>(inputs.size()));
  if (n < 0 || static_cast<std::size_t>(n) > inputs.size())
    throw Exception(describe(*this) + ": attribute '" + declared_inputs_attr + "' is " + std::to_string(n) + " for " +
                    std::to_string(inputs.size()) + " inputs");
  return static_cast<std::size_t>(n);
}
std::size_t Op::input_count() const {
  std::size_t n = inputs.size();
  while (n > 0 && inputs[n - 1] == no_value) --n;
  return n;
}

ValueId Graph::add_value(Value v) {
  values.push_back(std::move(v));
  return static_cast<ValueId>(values.size() - 1);
}

ValueId Graph::add_input(std::string name, element_type type, PartialShape shape) {
  ValueId id = add_value({std::move(name), type, std::move(shape), std::nullopt});
  inputs.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string name, Tensor t) { return add_value(constant_value(std::move(name), std::move(t))); }

Value constant_value(std::string name, Tensor t) {
  Value v;
  v.name = std::move(name);
  v.type = t.get_element_type();
  v.shape = PartialShape(t.get_shape());
  v.constant = std::move(t);
  return v;
}

ValueId Graph::find_value(const std::string& name) const {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i].name == name) return static_cast<ValueId>(i);
  return no_value;
}

std::vector<int> Graph::producers() const {
  std::vector<int> p(values.size(), -1);
  for (std::size_t i = 0; i < ops.size(); ++i)
    for (auto o : ops[i].outputs)
      if (o != no_value) p[static_cast<std::size_t>(o)] = static_cast<int>(i);
  return p;
}

std::vector<int> Graph::use_counts() const {
  std::vector<int> u(values.size(), 0);
  for (const auto& op : ops)
    for (auto i : op.inputs)
      if (i != no_value) ++u[static_cast<std::size_t>(i)];
  for (auto o : outputs) ++u[static_cast<std::size_t>(o)];
  return u;
}

std::vector<int> Graph::sole_readers() const {
  std::vector<int> r(values.size(), -1);
  for (std::size_t i = 0; i < ops.size(); ++i)
    for (auto v : ops[i].inputs)
      if (v != no_value) r[static_cast<std::size_t>(v)] = static_cast<int>(i);
  const auto uses = use_counts();
  for (std::size_t v = 0; v < r.size(); ++v)
    if (uses[v] != 1) r[v] = -1;
  return r;
}

void Graph::prune() {
  // Backwards liveness over the topological order.
  std::vector<bool> live(values.size(), false);
  for (auto o : outputs) live[static_cast<std::size_t>(o)] = true;
  std::vector<bool> keep(ops.size(), false);
  for (std::size_t i = ops.size(); i-- > 0;) {
    for (auto o : ops[i].outputs)
      if (o != no_value && live[static_cast<std::size_t>(o)]) keep[i] = true;
    if (keep[i])
      for (auto in : ops[i].inputs)
        if (in != no_value) live[static_cast<std::size_t>(in)] = true;
  }
  for (auto in : inputs) live[static_cast<std::size_t>(in)] = true;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (keep[i])
      for (auto o : ops[i].outputs)
        if (o != no_value) live[static_cast<std::size_t>(o)] = true;

  std::vector<ValueId> remap(values.size(), no_value);
  std::vector<Value> nv;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (live[i]) {
      remap[i] = static_cast<ValueId>(nv.size());
      nv.push_back(std::move(values[i]));
    }
  auto map = [&](ValueId& v) { if (v != no_value) v = remap[static_cast<std::size_t>(v)]; };
  std::vector<Op> nops;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (keep[i]) {
      Op op = std::move(ops[i]);
      for (auto& v : op.inputs) map(v);
      for (auto& v : op.outputs) map(v);
      nops.push_back(std::move(op));
    }
  for (auto& v : inputs) map(v);
  for (auto& v : outputs) map(v);
  values = std::move(nv);
  ops = std::move(nops);
}

std::string describe(const Op& op) {
  return op.type + " node '" + op.name + "'";
}

} // namespace troupe::graph
