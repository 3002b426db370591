/// Post-op fusion: the ops after a convolution, matmul or binary primitive that oneDNN can
/// apply while the result is still in registers (LearnableAffineBlock scalar Mul/Add pairs,
/// per-channel bias Adds, BatchNormalization after ConvTranspose, activations, residual Adds).
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <troupe/exception.hpp>

#include "kernels/cpu/plan_builder.hpp"
#include "kernels/reference/interpreter.hpp"

namespace troupe::kernels::cpu {

namespace {

using dnnl::algorithm;

/// A constant f32 operand as per-channel values over `ys` (empty: not of that form).
/// Scalars give one value.
std::vector<float> channel_values(const graph::Graph& g, graph::ValueId c, const Shape& ys) {
  if (!g.is_constant(c)) return {};
  const Tensor& t = *g.value(c).constant;
  if (t.get_element_type() != element_type::f32) return {};
  Shape cs = t.get_shape();
  if (cs.size() > ys.size()) return {};
  while (cs.size() < ys.size()) cs.insert(cs.begin(), 1);
  if (shape_size(cs) == 1) return {t.data<float>()[0]};
  if (ys.size() < 2 || cs[1] != ys[1]) return {};
  for (std::size_t i = 0; i < cs.size(); ++i)
    if (i != 1 && cs[i] != 1) return {};
  return std::vector<float>(t.data<float>(), t.data<float>() + t.get_size());
}

bool activation_type(const std::string& t) {
  return t == "Relu" || t == "Sigmoid" || t == "Tanh" || t == "HardSwish" || t == "LeakyRelu" || t == "HardSigmoid" ||
         t == "Gelu";
}

/// A per-channel affine map y = a*x + b, folded across consecutive constant ops.
struct affine {
  std::vector<float> a{1.f}, b{0.f};
  bool identity() const { return a.size() == 1 && b.size() == 1 && a[0] == 1.f && b[0] == 0.f; }
  void widen(std::size_t n) {
    if (a.size() == 1) a.assign(n, a[0]);
    if (b.size() == 1) b.assign(n, b[0]);
  }
};

} // namespace

channel_affine batch_norm_affine(const float* gamma, const float* beta, const float* mean, const float* var, float eps,
                                 std::size_t channels) {
  channel_affine r{std::vector<float>(channels), std::vector<float>(channels)};
  for (std::size_t k = 0; k < channels; ++k) {
    r.scale[k] = gamma[k] / std::sqrt(var[k] + eps);
    r.shift[k] = beta[k] - mean[k] * r.scale[k];
  }
  return r;
}

int plan_builder::const_buffer(const Tensor& t) {
  int b = add_buffer(0);
  p.buffers[b].constant = t;
  p.buffers[b].type = t.get_element_type();
  p.buffers[b].shape = t.get_shape();
  return b;
}

namespace {

/// Whether `po` holds an eltwise_linear already. oneDNN 2.6's jit kernels compute a second
/// one wrong (HardSigmoid's linear + clip, then a linear: 32 % off; linear, hardswish, linear
/// before): a scalar affine there becomes a binary post-op.
bool has_linear(const dnnl::post_ops& po) {
  for (int i = 0; i < po.len(); ++i) {
    if (po.kind(i) != dnnl::primitive::kind::eltwise) continue;
    float scale, alpha, beta;
    algorithm alg;
    po.get_params_eltwise(i, scale, alg, alpha, beta);
    if (alg == algorithm::eltwise_linear) return true;
  }
  return false;
}

} // namespace

post_chain plan_builder::chain_post_ops(graph::ValueId y, dnnl::post_ops po, bool binary_ok) const {
  post_chain c;
  c.po = po;
  c.out = y;
  if (val(y).type != element_type::f32 || !val(y).shape.is_static()) return c;
  Shape ys = shape(y);
  affine acc;
  // Pending binary post-op operands are made only when the chain is flushed.
  auto* self = const_cast<plan_builder*>(this);
  std::vector<binding> args;
  dnnl::post_ops out_po = po;
  auto flush = [&]() {
    if (acc.identity()) return;
    if (acc.a.size() == 1 && acc.b.size() == 1 && !has_linear(out_po)) {
      out_po.append_eltwise(1.f, algorithm::eltwise_linear, acc.a[0], acc.b[0]);
    } else {
      Shape cs(ys.size(), 1);
      cs[1] = ys[1];
      acc.widen(static_cast<std::size_t>(ys[1]));
      memory::desc md = plain_md(cs, memory::data_type::f32);
      for (int k = 0; k < 2; ++k) {
        Tensor t(element_type::f32, cs);
        const auto& v = k == 0 ? acc.a : acc.b;
        std::copy(v.begin(), v.end(), t.data<float>());
        int idx = out_po.len();
        out_po.append_binary(k == 0 ? algorithm::binary_mul : algorithm::binary_add, md);
        args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1, self->const_buffer(t), md});
      }
    }
    acc = affine{};
  };
  graph::ValueId cur = y;
  std::vector<std::size_t> fused;
  for (;;) {
    auto v = static_cast<std::size_t>(cur);
    if (is_output_[v] || readers_[v].size() != 1) break;
    std::size_t k = readers_[v][0];
    const graph::Op& op = g.ops[k];
    if (!op.domain.empty() || op.outputs.empty() || reference::interpreter::is_dynamic(g, op)) break;
    graph::ValueId out = op.outputs[0];
    if (val(out).type != element_type::f32 || shape(out) != ys) break;
    if (op.has_attr("activation")) {
      dnnl::post_ops probe;
      if (!activation_post_ops(op, probe)) break;
    }
    bool ok = false;
    const std::string& t = op.type;
    if ((t == "Mul" || t == "Add" || t == "Sub" || t == "Div") && op.input_count() == 2) {
      bool first = op.inputs[0] == cur;
      graph::ValueId other = first ? op.inputs[1] : op.inputs[0];
      if (other == cur) break;
      auto cv = channel_values(g, other, ys);
      if (!binary_ok && cv.size() > 1) break;
      if (!cv.empty()) {
        // Constant operand: fold into the affine map.
        std::size_t n = cv.size();
        if (n > 1) acc.widen(n);
        auto at = [&](const std::vector<float>& x, std::size_t i) { return x.size() == 1 ? x[0] : x[i]; };
        std::size_t m = std::max({n, acc.a.size(), acc.b.size()});
        std::vector<float> na(m), nb(m);
        ok = true;
        for (std::size_t i = 0; i < m; ++i) {
          float a = at(acc.a, i), b0 = at(acc.b, i), c0 = at(cv, i);
          if (t == "Mul") { na[i] = a * c0; nb[i] = b0 * c0; }
          else if (t == "Add") { na[i] = a; nb[i] = b0 + c0; }
          else if (t == "Sub" && first) { na[i] = a; nb[i] = b0 - c0; }
          else if (t == "Sub") { na[i] = -a; nb[i] = c0 - b0; }
          else if (t == "Div" && first && c0 != 0.f) { na[i] = a / c0; nb[i] = b0 / c0; }
          else ok = false;
        }
        if (ok) {
          acc.a = std::move(na);
          acc.b = std::move(nb);
        }
      } else if (binary_ok && t == "Add" && !g.is_constant(other) && home_[static_cast<std::size_t>(other)] >= 0 &&
                 shape(other) == ys) {
        // Residual Add of a value computed earlier: a binary post-op reading it where it lives.
        memory::desc md = current_md(other);
        if (md != memory::desc() && md.data_type() == memory::data_type::f32 && md.dims() == memory::dims(ys.begin(), ys.end())) {
          flush();
          int idx = out_po.len();
          out_po.append_binary(algorithm::binary_add, md);
          args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1, home_[static_cast<std::size_t>(other)], md});
          ok = true;
        }
      }
    } else if (binary_ok && t == "BatchNormalization" && op.input_count() == 5 && op.attr_int("training_mode", 0) == 0 &&
               op.inputs[0] == cur && ys.size() >= 2) {
      bool extra = false;
      for (std::size_t i = 1; i < op.outputs.size(); ++i) extra = extra || op.outputs[i] != graph::no_value;
      std::vector<std::vector<float>> prm;
      for (std::size_t i = 1; i < 5 && !extra; ++i) {
        auto cv = channel_values(g, op.inputs[i], Shape{1, ys[1]});
        if (cv.size() != static_cast<std::size_t>(ys[1])) break;
        prm.push_back(std::move(cv));
      }
      if (!extra && prm.size() == 4) {
        const auto bn = batch_norm_affine(prm[0].data(), prm[1].data(), prm[2].data(), prm[3].data(),
                                          op.attr_float("epsilon", 1e-5f), static_cast<std::size_t>(ys[1]));
        acc.widen(static_cast<std::size_t>(ys[1]));
        for (std::size_t i = 0; i < acc.a.size(); ++i) {
          acc.a[i] *= bn.scale[i];
          acc.b[i] = acc.b[i] * bn.scale[i] + bn.shift[i];
        }
        ok = true;
      }
    } else if (activation_type(t) && op.inputs[0] == cur) {
      flush();
      graph::Op as = op;
      as.attrs["activation"] = t;
      if (t == "LeakyRelu") as.attrs["activation_params"] = std::vector<float>{op.attr_float("alpha", 0.01f)};
      if (t == "HardSigmoid")
        as.attrs["activation_params"] = std::vector<float>{op.attr_float("alpha", 0.2f), op.attr_float("beta", 0.5f)};
      ok = activation_post_ops(as, out_po);
      if (ok) {
        fused.push_back(k);
        cur = out;
        break; // see below: an activation ends the chain
      }
    }
    if (!ok) break;
    if (op.has_attr("activation")) {
      flush();
      if (!activation_post_ops(op, out_po)) break;
    }
    fused.push_back(k);
    cur = out;
    // oneDNN 2.6's jit kernels gave wrong results with eltwise post-ops after an activation
    // (linear, hardswish, linear): an activation ends the chain.
    if (op.has_attr("activation")) break;
  }
  if (fused.empty()) return c;
  flush();
  if (std::getenv("TROUPE_CPU_VERBOSE")) {
    for (int i = 0; i < out_po.len(); ++i) {
      if (out_po.kind(i) == dnnl::primitive::kind::eltwise) {
        float sc, al, be;
        algorithm alg;
        out_po.get_params_eltwise(i, sc, alg, al, be);
        std::fprintf(stderr, "  post-op %d: eltwise %d %g %g\n", i, static_cast<int>(alg), al, be);
      } else {
        std::fprintf(stderr, "  post-op %d: binary/sum\n", i);
      }
    }
  }
  c.po = out_po;
  c.args = std::move(args);
  c.out = cur;
  c.fused_ops = std::move(fused);
  return c;
}

void plan_builder::commit(const post_chain& c) {
  for (auto k : c.fused_ops) fused_.at(k) = true;
}

} // namespace troupe::kernels::cpu
