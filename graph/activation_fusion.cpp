/// fuse_activations and fuse_hardswish: activations become attributes of their producer, and
/// PP-OCR's decomposed hard-swish becomes one op.
#include <cmath>

#include "graph/pass_utils.hpp"
#include "graph/passes.hpp"

namespace troupe::graph {

namespace {

using detail::scalar_constant;

bool near(std::optional<double> v, double want) { return v && std::abs(*v - want) < 1e-4; }

std::size_t idx(ValueId v) { return static_cast<std::size_t>(v); }

/// The op producing v when it has the given type, v is read exactly once and the op may merge
/// with `root` (the same affinity); else nullptr.
Op* single_use_producer(Graph& g, const Op& root, ValueId v, const char* type, const std::vector<int>& prod,
                        const std::vector<int>& uses, const std::vector<bool>& removed) {
  if (v == no_value || uses[idx(v)] != 1) return nullptr;
  int p = prod[idx(v)];
  if (p < 0 || removed[static_cast<std::size_t>(p)]) return nullptr;
  Op& op = g.ops[static_cast<std::size_t>(p)];
  if (op.type != type || !op.domain.empty() || op.outputs.size() != 1 || !detail::same_affinity(op, root)) return nullptr;
  return &op;
}

int index_of(const Graph& g, const Op* op) { return static_cast<int>(op - g.ops.data()); }

/// Mul(x, HardSigmoid(x)) with alpha 1/6, beta 1/2: returns x and marks the HardSigmoid.
std::optional<ValueId> match_hardsigmoid_form(Graph& g, const Op& mul, const std::vector<int>& prod,
                                              const std::vector<int>& uses, std::vector<bool>& removed) {
  if (mul.input_count() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    ValueId x = mul.inputs[static_cast<std::size_t>(1 - k)];
    Op* hs = single_use_producer(g, mul, mul.inputs[static_cast<std::size_t>(k)], "HardSigmoid", prod, uses, removed);
    if (!hs || hs->inputs.empty() || hs->inputs[0] != x) continue;
    if (!near(hs->attr_float("alpha", 0.2f), 1.0 / 6) || !near(hs->attr_float("beta", 0.5f), 0.5)) continue;
    removed[static_cast<std::size_t>(index_of(g, hs))] = true;
    return x;
  }
  return std::nullopt;
}

/// m = Mul(x, Clip(Add(x, 3), 0, 6)) [then / 6 or * 1/6 by the caller]: returns x and marks
/// the Mul, Clip and Add.
std::optional<ValueId> match_clip_form(Graph& g, const Op& root, ValueId m, const std::vector<int>& prod,
                                       const std::vector<int>& uses, std::vector<bool>& removed) {
  Op* mul = single_use_producer(g, root, m, "Mul", prod, uses, removed);
  if (!mul || mul->input_count() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    ValueId x = mul->inputs[static_cast<std::size_t>(1 - k)];
    Op* clip = single_use_producer(g, root, mul->inputs[static_cast<std::size_t>(k)], "Clip", prod, uses, removed);
    if (!clip || clip->inputs.empty()) continue;
    auto b = detail::clip_bounds(g, *clip);
    if (!b || b->first != 0.0f || b->second != 6.0f) continue;
    Op* add = single_use_producer(g, root, clip->inputs[0], "Add", prod, uses, removed);
    if (!add || add->input_count() != 2) continue;
    bool ok = (add->inputs[0] == x && near(scalar_constant(g, add->inputs[1]), 3.0)) ||
              (add->inputs[1] == x && near(scalar_constant(g, add->inputs[0]), 3.0));
    if (!ok) continue;
    for (Op* o : {mul, clip, add}) removed[static_cast<std::size_t>(index_of(g, o))] = true;
    return x;
  }
  return std::nullopt;
}

/// The final op of a clip-form hard-swish: Div(m, 6) or Mul(m, 1/6) in either order.
std::optional<ValueId> match_scaled_clip_form(Graph& g, const Op& op, const std::vector<int>& prod,
                                              const std::vector<int>& uses, std::vector<bool>& removed) {
  if (op.input_count() != 2) return std::nullopt;
  if (op.type == "Div") {
    if (!near(scalar_constant(g, op.inputs[1]), 6.0)) return std::nullopt;
    return match_clip_form(g, op, op.inputs[0], prod, uses, removed);
  }
  for (int k = 0; k < 2; ++k)
    if (near(scalar_constant(g, op.inputs[static_cast<std::size_t>(k)]), 1.0 / 6))
      return match_clip_form(g, op, op.inputs[static_cast<std::size_t>(1 - k)], prod, uses, removed);
  return std::nullopt;
}

std::optional<std::vector<float>> activation_params(const Graph& g, const Op& act) {
  const std::string& t = act.type;
  if (t == "Relu" || t == "Sigmoid" || t == "Tanh" || t == "HardSwish") return std::vector<float>{};
  if (t == "HardSigmoid") return std::vector<float>{act.attr_float("alpha", 0.2f), act.attr_float("beta", 0.5f)};
  if (t == "LeakyRelu") return std::vector<float>{act.attr_float("alpha", 0.01f)};
  if (t == "Clip") {
    auto b = detail::clip_bounds(g, act);
    if (!b) return std::nullopt;
    return std::vector<float>{b->first, b->second};
  }
  return std::nullopt;
}

bool fusable_producer(const Op& op) {
  return op.domain.empty() && !op.has_attr("activation") && op.outputs.size() == 1 &&
         (op.type == "Conv" || op.type == "ConvTranspose" || op.type == "MatMul" || op.type == "Gemm" || op.type == "Add");
}

} // namespace

void fuse_hardswish(Graph& g) {
  auto prod = g.producers();
  auto uses = g.use_counts();
  std::vector<bool> removed(g.ops.size(), false);
  bool any = false;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    Op& op = g.ops[i];
    if (removed[i] || !op.domain.empty() || op.outputs.size() != 1 || (op.type != "Mul" && op.type != "Div")) continue;
    std::optional<ValueId> x;
    const auto before = removed;
    if (op.type == "Mul") x = match_hardsigmoid_form(g, op, prod, uses, removed);
    if (!x) x = match_scaled_clip_form(g, op, prod, uses, removed);
    if (!x) continue;
    for (std::size_t k = 0; k < g.ops.size(); ++k)
      if (removed[k] && !before[k]) detail::absorb(op, g.ops[k]);
    op.type = "HardSwish";
    op.inputs = {*x};
    op.attrs.clear();
    any = true;
  }
  if (any) detail::remove_ops(g, removed);
}

void fuse_activations(Graph& g) {
  eliminate_identities(g);
  fuse_hardswish(g);
  auto prod = g.producers();
  auto uses = g.use_counts();
  std::vector<bool> removed(g.ops.size(), false);
  bool any = false;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const Op& act = g.ops[i];
    if (!act.domain.empty() || act.inputs.empty() || act.outputs.size() != 1 || act.outputs[0] == no_value) continue;
    auto params = activation_params(g, act);
    if (!params) continue;
    ValueId x = act.inputs[0];
    if (x == no_value || uses[idx(x)] != 1) continue;
    int p = prod[idx(x)];
    if (p < 0 || removed[static_cast<std::size_t>(p)]) continue;
    Op& producer = g.ops[static_cast<std::size_t>(p)];
    if (!fusable_producer(producer) || producer.outputs[0] != x || !detail::same_affinity(producer, act)) continue;
    if (!detail::is_float_or_unknown(g.value(x).type)) continue;
    detail::absorb(producer, act);
    producer.attrs["activation"] = act.type;
    producer.attrs["activation_params"] = std::move(*params);
    producer.outputs[0] = act.outputs[0];
    prod[idx(act.outputs[0])] = p;
    removed[i] = true;
    any = true;
  }
  if (any) detail::remove_ops(g, removed);
}

} // namespace troupe::graph
