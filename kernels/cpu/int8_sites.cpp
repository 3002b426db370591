/// find_int8_sites: which ops of a plan run as oneDNN int8 primitives. The QDQ form arrives
/// after constant folding: DequantizeLinear(x_q) -> Conv / MatMul / Gemm whose weights are f32
/// constants (the folded DequantizeLinear of int8 weights, recovered by exact_int8),
/// then, when it alone reads the result, a QuantizeLinear. The direct integer ops need constant
/// weights, scales and zero points.
#include <algorithm>

#include "kernels/cpu/int8_ops.hpp"
#include "kernels/reference/common.hpp"
#include "kernels/reference/interpreter.hpp"

namespace troupe::kernels::cpu {

namespace {

using graph::no_value;
using graph::Op;
using graph::ValueId;

/// The values of a constant, or nothing when `v` is not one.
std::optional<std::vector<double>> constant_values(const graph::Graph& g, ValueId v) {
  if (v == no_value || !g.is_constant(v)) return std::nullopt;
  return reference::to_doubles(*g.value(v).constant);
}

} // namespace

bool scalar_scale(const graph::Graph& g, ValueId v, float& out) {
  auto c = constant_values(g, v);
  if (!c || c->size() != 1 || g.value(v).type != element_type::f32 || !(c->front() > 0)) return false;
  out = static_cast<float>(c->front());
  return true;
}

bool scalar_zp(const graph::Graph& g, ValueId v, int32_t& out) {
  if (v == no_value) {
    out = 0;
    return true;
  }
  auto c = constant_values(g, v);
  if (!c || c->size() != 1) return false;
  out = static_cast<int32_t>(c->front());
  return true;
}

namespace {

/// An omitted zero point or a constant one of zeros only: oneDNN takes no weight zero points
/// on convolutions.
bool zero_zp(const graph::Graph& g, ValueId v) {
  if (v == no_value) return true;
  auto c = constant_values(g, v);
  return c && std::all_of(c->begin(), c->end(), [](double d) { return d == 0; });
}

/// Per-channel (or one) f32 scales of `n` channels.
bool channel_scales(const graph::Graph& g, ValueId v, int64_t n, std::vector<float>& out) {
  auto c = constant_values(g, v);
  if (!c || g.value(v).type != element_type::f32 || (c->size() != 1 && static_cast<int64_t>(c->size()) != n)) return false;
  out.assign(c->begin(), c->end());
  return std::all_of(out.begin(), out.end(), [](float f) { return f > 0; });
}

bool quantized_type(element_type t) { return t == element_type::u8 || t == element_type::i8; }

/// An omitted zero point (0) or a constant one holding the same value for every channel.
bool uniform_zp(const graph::Graph& g, ValueId v, int32_t& out) {
  if (v == no_value) {
    out = 0;
    return true;
  }
  auto c = constant_values(g, v);
  if (!c || c->empty() || std::any_of(c->begin(), c->end(), [&](double z) { return z != c->front(); })) return false;
  out = static_cast<int32_t>(c->front());
  return true;
}


class finder {
public:
  explicit finder(plan_builder& b) : b_(b), g_(b.g), producer_(g_.producers()) {}

  /// The site of op `k`, or nothing.
  std::optional<int8_site> site(std::size_t k) {
    const Op& op = g_.ops[k];
    if (!op.domain.empty() || op.outputs.empty()) return std::nullopt;
    int8_site s;
    bool ok = false;
    if (op.type == "Conv" || op.type == "MatMul" || op.type == "Gemm") ok = qdq(op, s);
    else if (op.type == "QLinearConv" || op.type == "QLinearMatMul") ok = qlinear(op, s);
    else if (op.type == "ConvInteger" || op.type == "MatMulInteger") ok = integer(op, s);
    if (!ok || !g_.value(s.x).shape.is_static() || !g_.value(s.y).shape.is_static() ||
        shape_size(b_.shape(s.x)) == 0 || shape_size(b_.shape(s.y)) == 0)
      return std::nullopt;
    return s;
  }

private:
  plan_builder& b_;
  const graph::Graph& g_;
  std::vector<int> producer_;

  const Op* producer(ValueId v) const {
    const int k = v == no_value ? -1 : producer_[static_cast<std::size_t>(v)];
    return k < 0 ? nullptr : &g_.ops[static_cast<std::size_t>(k)];
  }

  /// The quantized input of a convolution or product: the op's own or through DequantizeLinear.
  bool quantized_input(ValueId x, ValueId scale, ValueId zp, int8_site& s) const {
    if (x == no_value || g_.is_constant(x) || !quantized_type(g_.value(x).type)) return false;
    s.x = x;
    return (scale == no_value || scalar_scale(g_, scale, s.x_scale)) && scalar_zp(g_, zp, s.x_zp);
  }

  /// Weights: a constant int8 tensor, rank 2 for a product.
  bool int8_weights(ValueId w, bool conv, int8_site& s) const {
    if (!g_.is_constant(w) || g_.value(w).type != element_type::i8) return false;
    s.w = *g_.value(w).constant;
    return conv ? s.w.get_shape().size() >= 3 : s.w.get_shape().size() == 2;
  }

  /// A DequantizeLinear along axis 1 (scales per channel, one zero point for all, as OpenVINO's
  /// per-channel FakeQuantize of activations reads): its input as a site's, with scale 1; the
  /// scales go into `per_channel`.
  bool channel_quantized_input(const Op& dq, int8_site& s, std::vector<float>& per_channel) const {
    const ValueId x = input_or_none(dq, 0);
    if (x == no_value || g_.is_constant(x) || !quantized_type(g_.value(x).type) || !g_.value(x).shape.is_static()) return false;
    const Shape xs = b_.shape(x);
    int64_t axis = dq.attr_int("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(xs.size());
    if (xs.size() < 3 || axis != 1 || !channel_scales(g_, input_or_none(dq, 1), xs[1], per_channel) || per_channel.size() < 2)
      return false;
    if (!uniform_zp(g_, input_or_none(dq, 2), s.x_zp)) return false;
    s.x = x;
    s.x_scale = 1.f;
    return true;
  }

  /// A QuantizeLinear with scales per output channel (axis 1 of a convolution's result) and one
  /// zero point: folded into the output scales when the fused activation commutes with them.
  bool channel_requantize(const Op& op, const Op& q, int64_t channels, int8_site& s) const {
    const std::string act = op.attr_string("activation", "");
    if (!s.is_conv || (!act.empty() && act != "Relu" && act != "LeakyRelu")) return false;
    int64_t axis = q.attr_int("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(b_.shape(input_or_none(q, 0)).size());
    std::vector<float> scales;
    if (axis != 1 || !channel_scales(g_, input_or_none(q, 1), channels, scales) || scales.size() < 2) return false;
    if (!uniform_zp(g_, input_or_none(q, 2), s.y_zp)) return false;
    s.y_channel_scale = std::move(scales);
    s.y_scale = 1.f;
    return true;
  }

  bool qdq(const Op& op, int8_site& s) {
    const Op* dq = producer(input_or_none(op, 0));
    if (!dq || dq->type != "DequantizeLinear" || !dq->domain.empty() || input_or_none(*dq, 1) == no_value) return false;
    // Scales per input channel fold into the weights' when each group reads one channel
    // (depthwise convolutions): every output channel then sees one input scale.
    std::vector<float> x_channel_scale;
    if (!quantized_input(input_or_none(*dq, 0), input_or_none(*dq, 1), input_or_none(*dq, 2), s) &&
        (op.type != "Conv" || !channel_quantized_input(*dq, s, x_channel_scale) ||
         op.attr_int("group", 1) != static_cast<int64_t>(x_channel_scale.size())))
      return false;
    const ValueId W = input_or_none(op, 1);
    if (!g_.is_constant(W)) return false;
    const Tensor& w = *g_.value(W).constant;
    std::optional<std::vector<double>> bias;
    int64_t channels = 0;
    float alpha = 1.f, beta = 1.f;
    if (op.type == "Conv") {
      s.is_conv = true;
      if (w.get_shape().size() < 3 || !exact_int8(w, 0, s.w, s.w_scale)) return false;
      channels = w.get_shape()[0];
      if (!x_channel_scale.empty()) {
        const int64_t per_group = channels / static_cast<int64_t>(x_channel_scale.size());
        for (int64_t o = 0; o < channels; ++o) s.w_scale[static_cast<std::size_t>(o)] *= x_channel_scale[static_cast<std::size_t>(o / per_group)];
      }
      if (input_or_none(op, 2) != no_value && !(bias = constant_values(g_, input_or_none(op, 2)))) return false;
    } else if (op.type == "MatMul") {
      if (w.get_shape().size() != 2 || !exact_int8(w, 1, s.w, s.w_scale)) return false;
      channels = w.get_shape()[1];
    } else { // Gemm: A not transposed; B's output channels along its dim 0 when transposed
      if (op.attr_int("transA", 0) != 0 || w.get_shape().size() != 2 || b_.shape(s.x).size() != 2) return false;
      const bool trans_b = op.attr_int("transB", 0) != 0;
      Tensor q;
      if (!exact_int8(w, trans_b ? 0 : 1, q, s.w_scale)) return false;
      s.w = trans_b ? transposed(q) : q;
      channels = s.w.get_shape()[1];
      alpha = op.attr_float("alpha", 1.f);
      beta = op.attr_float("beta", 1.f);
      if (!(alpha > 0)) return false;
      for (auto& f : s.w_scale) f *= alpha;
      if (input_or_none(op, 2) != no_value) {
        // Only a bias along the output columns: [N] or [1, N] (C broadcasts in other ways too).
        const Shape cs = g_.is_constant(input_or_none(op, 2)) ? g_.value(input_or_none(op, 2)).constant->get_shape() : Shape{};
        if (cs.empty() || cs.back() != channels || shape_size(cs) != channels) return false;
        bias = constant_values(g_, input_or_none(op, 2));
      }
    }
    if (bias) {
      if (static_cast<int64_t>(bias->size()) != channels || g_.value(input_or_none(op, 2)).type != element_type::f32) return false;
      s.bias.resize(bias->size());
      for (std::size_t c = 0; c < bias->size(); ++c)
        s.bias[c] = static_cast<float>(beta * (*bias)[c] / (static_cast<double>(s.x_scale) * s.w_scale[s.w_scale.size() > 1 ? c : 0]));
    }
    s.y = op.outputs[0];
    if (g_.value(s.y).type != element_type::f32) return false;
    // A QuantizeLinear that alone reads the result: the primitive writes its output.
    const auto& rd = b_.readers(s.y);
    if (rd.size() == 1 && !b_.is_graph_output(s.y)) {
      const Op& q = g_.ops[rd[0]];
      int32_t zp = 0;
      float scale = 1.f;
      const bool quantize = q.type == "QuantizeLinear" && q.domain.empty() && input_or_none(q, 0) == s.y &&
                            quantized_type(g_.value(q.outputs[0]).type);
      if (quantize && (scalar_scale(g_, input_or_none(q, 1), scale) && scalar_zp(g_, input_or_none(q, 2), zp))) {
        s.requantize = true;
        s.y_scale = scale;
        s.y_zp = zp;
        s.y = q.outputs[0];
        s.absorbed.push_back(rd[0]);
      } else if (quantize && channel_requantize(op, q, channels, s)) {
        s.requantize = true;
        s.y = q.outputs[0];
        s.absorbed.push_back(rd[0]);
      }
    }
    return true;
  }

  static Tensor transposed(const Tensor& q) {
    const Shape& s = q.get_shape();
    Tensor t(element_type::i8, Shape{s[1], s[0]});
    for (int64_t i = 0; i < s[0]; ++i)
      for (int64_t j = 0; j < s[1]; ++j) t.data<int8_t>()[j * s[0] + i] = q.data<int8_t>()[i * s[1] + j];
    return t;
  }

  bool qlinear(const Op& op, int8_site& s) const {
    const bool conv = op.type == "QLinearConv";
    s.is_conv = conv;
    // QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B; QLinearMatMul the same but B.
    if (!quantized_input(input_or_none(op, 0), input_or_none(op, 1), input_or_none(op, 2), s) || !int8_weights(input_or_none(op, 3), conv, s) || !zero_zp(g_, input_or_none(op, 5)))
      return false;
    const int64_t channels = s.w.get_shape()[conv ? 0 : 1];
    if (!channel_scales(g_, input_or_none(op, 4), channels, s.w_scale) || !scalar_scale(g_, input_or_none(op, 6), s.y_scale) ||
        !scalar_zp(g_, input_or_none(op, 7), s.y_zp))
      return false;
    s.requantize = true;
    s.y = op.outputs[0];
    if (conv && input_or_none(op, 8) != no_value) {
      auto bias = constant_values(g_, input_or_none(op, 8)); // int32, already in accumulator units
      if (!bias || static_cast<int64_t>(bias->size()) != channels) return false;
      s.bias.assign(bias->begin(), bias->end());
    }
    return true;
  }

  bool integer(const Op& op, int8_site& s) const {
    const bool conv = op.type == "ConvInteger";
    s.is_conv = conv;
    s.y = op.outputs[0];
    // ConvInteger: x, w, x_zp, w_zp; MatMulInteger: a, b, a_zp, b_zp. No scales: s32 out.
    return quantized_input(input_or_none(op, 0), no_value, input_or_none(op, 2), s) && int8_weights(input_or_none(op, 1), conv, s) &&
           zero_zp(g_, input_or_none(op, 3)) && g_.value(s.y).type == element_type::i32;
  }
};

} // namespace

/// oneDNN's int8 kernels without VNNI multiply u8 by s8 pairs into saturating s16 sums: exact
/// only for 7-bit weights. The float path keeps such CPUs right.
bool int8_exact_here() {
  switch (dnnl::get_effective_cpu_isa()) {
  case dnnl::cpu_isa::avx2_vnni:
  case dnnl::cpu_isa::avx512_core_vnni:
  case dnnl::cpu_isa::avx512_core_bf16:
  case dnnl::cpu_isa::avx512_core_amx: return true;
  default: return false;
  }
}

std::map<std::size_t, int8_site> find_int8_sites(plan_builder& b) {
  std::map<std::size_t, int8_site> sites;
  if (!int8_exact_here()) return sites;
  finder f(b);
  for (std::size_t k = 0; k < b.g.ops.size(); ++k) {
    if (reference::interpreter::is_dynamic(b.g, b.g.ops[k])) continue;
    auto s = f.site(k);
    if (!s) continue;
    try {
      make_int8_pd(b, b.g.ops[k], *s);
    } catch (const dnnl::error&) {
      continue; // no int8 kernel for it: the float path (or the reference) runs it
    }
    post_chain absorbed;
    absorbed.fused_ops = s->absorbed;
    b.commit(absorbed);
    sites.emplace(k, std::move(*s));
  }
  // A DequantizeLinear that only sites read (as their quantized input) is never needed.
  for (std::size_t k = 0; k < b.g.ops.size(); ++k) {
    const Op& op = b.g.ops[k];
    if (op.type != "DequantizeLinear" || !op.domain.empty() || b.is_graph_output(op.outputs[0])) continue;
    const auto& rd = b.readers(op.outputs[0]);
    const bool only_sites = !rd.empty() && std::all_of(rd.begin(), rd.end(), [&](std::size_t r) {
      auto it = sites.find(r);
      return it != sites.end() && input_or_none(b.g.ops[r], 0) == op.outputs[0] && it->second.x == op.inputs[0];
    });
    if (!only_sites) continue;
    post_chain dq;
    dq.fused_ops = {k};
    b.commit(dq);
  }
  return sites;
}

} // namespace troupe::kernels::cpu
