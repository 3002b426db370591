/// fold_conv_input_scale: x * s or x / s (s constant per input channel) read only by a Conv
/// becomes part of the Conv's weights. A zero-padded border stays zero either way, so the
/// fold is exact; a mean subtracted before a padded Conv is not foldable and stays an op.
#include <algorithm>

#include "graph/pass_utils.hpp"
#include "graph/passes.hpp"

namespace troupe::graph {

namespace {

/// Folds the Mul/Div feeding ops[index] (a Conv) into it; returns the folded op's index or -1.
int fold_into(Graph& g, std::size_t index, const std::vector<int>& producers, const std::vector<int>& uses) {
  Op& conv = g.ops[index];
  if (conv.type != "Conv" || !conv.domain.empty() || conv.input_count() < 2 || !g.is_constant(conv.inputs[1]))
    return -1;
  const ValueId scaled = conv.inputs[0];
  const int p = producers[static_cast<std::size_t>(scaled)];
  if (p < 0 || uses[static_cast<std::size_t>(scaled)] != 1) return -1;
  const Op& e = g.ops[static_cast<std::size_t>(p)];
  if ((e.type != "Mul" && e.type != "Div") || !e.domain.empty() || e.input_count() != 2 || e.has_attr("activation") ||
      !detail::same_affinity(conv, e))
    return -1;
  const Tensor& w = *g.value(conv.inputs[1]).constant;
  const Shape& ws = w.get_shape();
  if (w.get_element_type() != element_type::f32 || ws.size() < 3 || ws[0] == 0) return -1;
  const int64_t group = conv.attr_int("group", 1);
  if (group < 1 || ws[0] % group != 0) return -1;
  const int64_t oc = ws[0], icg = ws[1], in_channels = icg * group;
  for (std::size_t xi : {std::size_t{0}, std::size_t{1}}) {
    if (xi == 1 && e.type == "Div") break; // s / x is not a scale of x
    const ValueId x = e.inputs[xi], c = e.inputs[1 - xi];
    // The product must have x's shape: s only scales, never widens x.
    const auto& xs = g.value(x).shape;
    if (!xs.rank_known || xs.rank() != ws.size() || xs.dims[1] != in_channels) continue;
    auto k = detail::per_channel(g, c, ws.size(), in_channels);
    if (k.empty()) continue;
    if (e.type == "Div" && std::find(k.begin(), k.end(), 0.0f) != k.end()) continue;
    Tensor nw(element_type::f32, ws);
    const int64_t per_ic = w.get_size() / (oc * icg), ocg = oc / group;
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t j = 0; j < icg; ++j) {
        const auto ic = static_cast<std::size_t>((o / ocg) * icg + j);
        const float f = e.type == "Mul" ? k[ic] : 1.0f / k[ic];
        const int64_t at = (o * icg + j) * per_ic;
        for (int64_t i = 0; i < per_ic; ++i) nw.data<float>()[at + i] = w.data<float>()[at + i] * f;
      }
    const ValueId wid = g.add_constant(conv.name + "/" + e.name + "_folded_weight", std::move(nw));
    detail::absorb(conv, e);
    conv.inputs[0] = x;
    conv.inputs[1] = wid;
    return p;
  }
  return -1;
}

} // namespace

void fold_conv_input_scale(Graph& g) {
  const auto producers = g.producers();
  const auto uses = g.use_counts();
  std::vector<bool> removed(g.ops.size(), false);
  bool any = false;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    int p = fold_into(g, i, producers, uses);
    if (p < 0) continue;
    removed[static_cast<std::size_t>(p)] = true;
    any = true;
  }
  if (any) detail::remove_ops(g, removed);
}

} // namespace troupe::graph
