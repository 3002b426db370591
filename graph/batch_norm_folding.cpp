/// fold_batch_norm: BN(conv(x, W, b)) = conv(x, W * s, (b - mean) * s + beta), s = scale / sqrt(var + eps).
/// fold_shift_into_batch_norm: BN(x + c) = BN with mean - c, c constant per channel.
#include <cmath>

#include "graph/pass_utils.hpp"
#include "graph/passes.hpp"

namespace troupe::graph {

namespace {

/// A constant f32 tensor of n elements, or nullptr.
const Tensor* f32_constant(const Graph& g, ValueId v, int64_t n) {
  if (!g.is_constant(v)) return nullptr;
  const Tensor& t = *g.value(v).constant;
  if (t.get_element_type() != element_type::f32 || (n >= 0 && t.get_size() != n)) return nullptr;
  return &t;
}

/// Folds ops[bn_index] into its producer: the index of the op that became redundant (the BN),
/// or -1 when the pattern does not apply.
int fold_one(Graph& g, std::size_t bn_index, std::vector<int>& producers, const std::vector<int>& uses) {
  const Op& bn = g.ops[bn_index];
  if (bn.input_count() != 5 || bn.outputs.empty() || bn.outputs[0] == no_value) return -1;
  for (std::size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.outputs[i] != no_value && uses[static_cast<std::size_t>(bn.outputs[i])] > 0) return -1;
  if (bn.attr_int("spatial", 1) == 0 || bn.attr_int("training_mode", 0) != 0) return -1;
  ValueId x = bn.inputs[0];
  int p = producers[static_cast<std::size_t>(x)];
  if (p < 0 || uses[static_cast<std::size_t>(x)] != 1) return -1;
  Op& conv = g.ops[static_cast<std::size_t>(p)];
  if ((conv.type != "Conv" && conv.type != "ConvTranspose") || !conv.domain.empty() || conv.has_attr("activation")) return -1;
  if (!detail::same_affinity(conv, bn)) return -1;
  if (conv.outputs.size() != 1 || conv.outputs[0] != x || conv.input_count() < 2) return -1;

  const Tensor* w = f32_constant(g, conv.inputs[1], -1);
  if (!w || w->get_shape().size() < 3) return -1;
  const int64_t channels = detail::output_channels(conv, w->get_shape());
  if (channels == 0) return -1;
  const Tensor* scale = f32_constant(g, bn.inputs[1], channels);
  const Tensor* beta = f32_constant(g, bn.inputs[2], channels);
  const Tensor* mean = f32_constant(g, bn.inputs[3], channels);
  const Tensor* var = f32_constant(g, bn.inputs[4], channels);
  if (!scale || !beta || !mean || !var) return -1;
  const Tensor* bias = nullptr;
  if (conv.input_count() >= 3 && !(bias = f32_constant(g, conv.inputs[2], channels))) return -1;

  double eps = bn.attr_float("epsilon", 1e-5f);
  std::vector<float> s(static_cast<std::size_t>(channels));
  for (int64_t c = 0; c < channels; ++c)
    s[static_cast<std::size_t>(c)] = static_cast<float>(scale->data<float>()[c] / std::sqrt(static_cast<double>(var->data<float>()[c]) + eps));

  Tensor nw = detail::scale_output_channels(conv, *w, s);
  Tensor nb(element_type::f32, {channels});
  for (int64_t c = 0; c < channels; ++c) {
    float b0 = bias ? bias->data<float>()[c] : 0.0f;
    nb.data<float>()[c] = (b0 - mean->data<float>()[c]) * s[static_cast<std::size_t>(c)] + beta->data<float>()[c];
  }
  ValueId out = bn.outputs[0];
  std::string base = conv.name + "/bn_folded_";
  ValueId wid = g.add_constant(base + "weight", std::move(nw));
  ValueId bid = g.add_constant(base + "bias", std::move(nb));
  conv.inputs.resize(3);
  conv.inputs[1] = wid;
  conv.inputs[2] = bid;
  conv.outputs[0] = out;
  detail::absorb(conv, bn);
  producers.resize(g.values.size(), -1);
  producers[static_cast<std::size_t>(out)] = p; // the conv now produces the BN's output
  return static_cast<int>(bn_index);
}

/// Folds a per-channel constant Add/Sub feeding only ops[bn_index] into its mean: the index of
/// that Add/Sub, or -1 when the pattern does not apply.
int fold_shift_one(Graph& g, std::size_t bn_index, std::vector<int>& producers, const std::vector<int>& uses) {
  Op& bn = g.ops[bn_index];
  if (bn.input_count() != 5 || bn.attr_int("training_mode", 0) != 0 || bn.attr_int("spatial", 1) == 0) return -1;
  for (std::size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.outputs[i] != no_value) return -1;
  ValueId x = bn.inputs[0];
  int p = producers[static_cast<std::size_t>(x)];
  if (p < 0 || uses[static_cast<std::size_t>(x)] != 1 || !g.value(x).shape.rank_known) return -1;
  const Op& add = g.ops[static_cast<std::size_t>(p)];
  if ((add.type != "Add" && add.type != "Sub") || !add.domain.empty() || add.has_attr("activation") ||
      add.input_count() != 2 || add.outputs.size() != 1 || !detail::same_affinity(add, bn))
    return -1;
  const std::size_t rank = g.value(x).shape.dims.size();
  if (rank < 2 || g.value(x).shape.dims[1] <= 0) return -1;
  const int64_t channels = g.value(x).shape.dims[1];
  const Tensor* mean = f32_constant(g, bn.inputs[3], channels);
  if (!mean) return -1;
  // Which operand is the constant: x + c, c + x, x - c (c - x would negate x: not a shift).
  for (std::size_t k = 0; k < 2; ++k) {
    if (add.type == "Sub" && k == 0) continue;
    ValueId other = add.inputs[1 - k];
    if (g.is_constant(other) || g.value(other).shape != g.value(x).shape) continue;
    auto c = detail::per_channel(g, add.inputs[k], rank, channels);
    if (c.empty()) continue;
    // BN(x + c) = scale * (x - (mean - c)) / sqrt(var + eps) + B
    Tensor m(element_type::f32, {channels});
    for (int64_t ch = 0; ch < channels; ++ch) {
      const float shift = add.type == "Add" ? c[static_cast<std::size_t>(ch)] : -c[static_cast<std::size_t>(ch)];
      m.data<float>()[ch] = mean->data<float>()[ch] - shift;
    }
    bn.inputs[3] = g.add_constant(bn.name + "/shift_folded_mean", std::move(m));
    bn.inputs[0] = other;
    detail::absorb(bn, add);
    producers.resize(g.values.size(), -1);
    return p;
  }
  return -1;
}

/// Runs `fold` on every BatchNormalization; it returns the index of the op it made redundant
/// (-1: nothing folded), and those ops go at the end.
template <class Fold> void fold_at_batch_norms(Graph& g, Fold fold) {
  auto producers = g.producers();
  auto uses = g.use_counts();
  std::vector<bool> removed(g.ops.size(), false);
  bool any = false;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].type != "BatchNormalization" || !g.ops[i].domain.empty()) continue;
    if (int gone = fold(g, i, producers, uses); gone >= 0) {
      removed[static_cast<std::size_t>(gone)] = true;
      any = true;
      uses.resize(g.values.size(), 0);
    }
  }
  if (any) detail::remove_ops(g, removed);
}

} // namespace

void fold_shift_into_batch_norm(Graph& g) { fold_at_batch_norms(g, fold_shift_one); }

void fold_batch_norm(Graph& g) { fold_at_batch_norms(g, fold_one); }

} // namespace troupe::graph
