/// fold_conv_affine: Mul / Div / Add / Sub of a Conv's output by a constant that is the same
/// for every position of an output channel (a scalar, or [OC, 1, 1]-shaped) fold into the
/// Conv's weights and bias: conv(x, W, b) * s = conv(x, W * s, b * s), conv(x, W, b) + t =
/// conv(x, W, b + t). PP-OCRv4's "learnable affine blocks" (a scale and a shift after a conv)
/// cost two element-wise passes over the whole tensor otherwise. Not into a ConvTranspose: the
/// bias it would gain makes oneDNN 2.6's deconvolution 60x slower (det's head: 37 ms, not 0.6).
#include <algorithm>

#include "graph/pass_utils.hpp"
#include "graph/passes.hpp"

namespace troupe::graph {

namespace {

/// Folds ops[index] (an element-wise op) into the Conv that produces its other operand and
/// returns that Conv's index; -1 when the pattern does not apply.
int fold_one(Graph& g, std::size_t index, const std::vector<int>& producers, const std::vector<int>& uses) {
  const Op& e = g.ops[index];
  if (e.input_count() != 2 || e.outputs.size() != 1 || e.has_attr("activation")) return -1;
  // Which operand is the conv: x * c, c * x, x / c, x + c, c + x, x - c (not c / x, c - x).
  bool commutes = e.type == "Mul" || e.type == "Add";
  for (std::size_t xi : {std::size_t{0}, std::size_t{1}}) {
    if (xi == 1 && !commutes) break;
    ValueId x = e.inputs[xi], c = e.inputs[1 - xi];
    int p = producers[static_cast<std::size_t>(x)];
    if (p < 0 || uses[static_cast<std::size_t>(x)] != 1) continue;
    Op& conv = g.ops[static_cast<std::size_t>(p)];
    if (conv.type != "Conv" || !conv.domain.empty() || conv.has_attr("activation") || conv.outputs.size() != 1 ||
        conv.input_count() < 2 || !g.is_constant(conv.inputs[1]) || !detail::same_affinity(conv, e))
      continue;
    const Tensor& w = *g.value(conv.inputs[1]).constant;
    const Shape& ws = w.get_shape();
    const int64_t channels = detail::output_channels(conv, ws);
    if (w.get_element_type() != element_type::f32 || channels == 0) continue;
    const Tensor* bias = nullptr;
    if (conv.input_count() >= 3) {
      if (!g.is_constant(conv.inputs[2])) continue;
      bias = &*g.value(conv.inputs[2]).constant;
      if (bias->get_element_type() != element_type::f32 || bias->get_size() != channels) continue;
    }
    auto k = detail::per_channel(g, c, ws.size(), channels);
    if (k.empty()) continue;
    if (e.type == "Div" && std::find(k.begin(), k.end(), 0.0f) != k.end()) continue; // keep x / 0 as it is

    Tensor nb(element_type::f32, {channels});
    for (int64_t o = 0; o < channels; ++o) nb.data<float>()[o] = bias ? bias->data<float>()[o] : 0.0f;
    ValueId wid = conv.inputs[1];
    if (e.type == "Mul" || e.type == "Div") {
      std::vector<float> f(k);
      if (e.type == "Div")
        for (float& x : f) x = 1.0f / x;
      for (int64_t o = 0; o < channels; ++o) nb.data<float>()[o] *= f[static_cast<std::size_t>(o)];
      Tensor nw = detail::scale_output_channels(conv, w, f);
      wid = g.add_constant(conv.name + "/" + e.name + "_folded_weight", std::move(nw));
    } else {
      float sign = e.type == "Add" ? 1.0f : -1.0f;
      for (int64_t o = 0; o < channels; ++o) nb.data<float>()[o] += sign * k[static_cast<std::size_t>(o)];
    }
    ValueId bid = g.add_constant(conv.name + "/" + e.name + "_folded_bias", std::move(nb));
    detail::absorb(conv, e);
    ValueId out = e.outputs[0];
    conv.inputs.resize(3);
    conv.inputs[1] = wid;
    conv.inputs[2] = bid;
    conv.outputs[0] = out;
    return p;
  }
  return -1;
}

} // namespace

void fold_conv_affine(Graph& g) {
  auto producers = g.producers();
  auto uses = g.use_counts();
  std::vector<bool> removed(g.ops.size(), false);
  bool any = false;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const Op& e = g.ops[i];
    if ((e.type != "Mul" && e.type != "Div" && e.type != "Add" && e.type != "Sub") || !e.domain.empty()) continue;
    int p = fold_one(g, i, producers, uses);
    if (p >= 0) {
      removed[i] = true;
      any = true;
      producers.resize(g.values.size(), -1);
      uses.resize(g.values.size(), 0);
      // The conv now produces the op's output, so a following Mul/Add folds too.
      producers[static_cast<std::size_t>(g.ops[i].outputs[0])] = p;
    }
  }
  if (any) detail::remove_ops(g, removed);
}

} // namespace troupe::graph
