/// BatchNormalization (inference, and training mode's batch statistics), InstanceNormalization,
/// LayerNormalization, LRN, MeanVarianceNormalization, LpNormalization.
#include <functional>

#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

/// What BatchNormalization and InstanceNormalization share: x [N, C, spatial...] (S spatial
/// elements per channel), y, and inputs 1 and 2 (scale, B) as doubles.
struct channel_norm {
  const Tensor& x;
  Tensor& y;
  int64_t N, C, S;
  std::vector<double> scale, bias;
};

channel_norm channel_norm_operands(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Shape& xs = x.get_shape();
  if (xs.size() < 2) fail(ctx, "input must have rank >= 2");
  return {x, output(ctx, out, 0), xs[0], xs[1], dims_product(xs, 2, xs.size()), to_doubles(input(ctx, in, 1)),
          to_doubles(input(ctx, in, 2))};
}

void batch_norm_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  auto [x, y, N, C, S, scale, bias] = channel_norm_operands(ctx, in, out);
  auto mean = to_doubles(input(ctx, in, 3)), var = to_doubles(input(ctx, in, 4));
  for (auto* v : {&scale, &bias, &mean, &var})
    if (static_cast<int64_t>(v->size()) != C) fail(ctx, "scale/B/mean/var must have C elements");
  double eps = ctx.op.attr_float("epsilon", 1e-5f);
  auto xv = to_doubles(x);
  bool training = ctx.op.attr_int("training_mode", 0) != 0;
  if (training) {
    // Batch statistics (population variance); running stats updated with momentum.
    double mom = ctx.op.attr_float("momentum", 0.9f);
    std::vector<double> bm(static_cast<std::size_t>(C), 0.0), bv(static_cast<std::size_t>(C), 0.0);
    for (int64_t c = 0; c < C; ++c) {
      double s = 0, s2 = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < S; ++i) s += xv[static_cast<std::size_t>((n * C + c) * S + i)];
      double m = s / static_cast<double>(N * S);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < S; ++i) {
          double d = xv[static_cast<std::size_t>((n * C + c) * S + i)] - m;
          s2 += d * d;
        }
      bm[static_cast<std::size_t>(c)] = m;
      bv[static_cast<std::size_t>(c)] = s2 / static_cast<double>(N * S);
    }
    if (has_output(out, 1)) {
      std::vector<double> rm(bm.size());
      for (std::size_t c = 0; c < rm.size(); ++c) rm[c] = mean[c] * mom + bm[c] * (1 - mom);
      from_doubles(out[1], rm);
    }
    if (has_output(out, 2)) {
      std::vector<double> rv(bv.size());
      for (std::size_t c = 0; c < rv.size(); ++c) rv[c] = var[c] * mom + bv[c] * (1 - mom);
      from_doubles(out[2], rv);
    }
    mean = bm;
    var = bv;
  }
  std::vector<double> yv(xv.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      auto ci = static_cast<std::size_t>(c);
      double a = scale[ci] / std::sqrt(var[ci] + eps), b = bias[ci] - mean[ci] * a;
      for (int64_t i = 0; i < S; ++i) {
        auto k = static_cast<std::size_t>((n * C + c) * S + i);
        yv[k] = xv[k] * a + b;
      }
    }
  from_doubles(y, yv);
}

void instance_norm_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  auto [x, y, N, C, S, scale, bias] = channel_norm_operands(ctx, in, out);
  if (static_cast<int64_t>(scale.size()) != C || static_cast<int64_t>(bias.size()) != C) fail(ctx, "scale/B must have C elements");
  double eps = ctx.op.attr_float("epsilon", 1e-5f);
  auto xv = to_doubles(x);
  std::vector<double> yv(xv.size());
  for (int64_t nc = 0; nc < N * C; ++nc) {
    const double* xp = xv.data() + nc * S;
    double m = 0, v = 0;
    for (int64_t i = 0; i < S; ++i) m += xp[i];
    m /= static_cast<double>(S);
    for (int64_t i = 0; i < S; ++i) v += (xp[i] - m) * (xp[i] - m);
    v /= static_cast<double>(S);
    auto c = static_cast<std::size_t>(nc % C);
    double a = scale[c] / std::sqrt(v + eps);
    for (int64_t i = 0; i < S; ++i) yv[static_cast<std::size_t>(nc * S + i)] = (xp[i] - m) * a + bias[c];
  }
  from_doubles(y, yv);
}

void layer_norm_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  auto rank = static_cast<int64_t>(xs.size());
  auto axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", -1), rank));
  int64_t outer = dims_product(xs, 0, axis), inner = dims_product(xs, axis, xs.size());
  double eps = ctx.op.attr_float("epsilon", 1e-5f);
  auto xv = to_doubles(x);
  const Tensor& sc = input(ctx, in, 1);
  auto scale = to_doubles(sc);
  std::vector<double> bias;
  if (has_input(in, 2)) bias = to_doubles(in[2]);
  Shape inner_shape(xs.begin() + static_cast<std::ptrdiff_t>(axis), xs.end());
  std::array<std::vector<int64_t>, 2> st{broadcast_strides(ctx, sc.get_shape(), inner_shape),
                                         has_input(in, 2) ? broadcast_strides(ctx, in[2].get_shape(), inner_shape)
                                                          : std::vector<int64_t>(inner_shape.size(), 0)};
  std::vector<int64_t> soff(static_cast<std::size_t>(inner)), boff(static_cast<std::size_t>(inner));
  broadcast_loop(inner_shape.empty() ? Shape{1} : inner_shape,
                 inner_shape.empty() ? std::array<std::vector<int64_t>, 2>{std::vector<int64_t>{0}, std::vector<int64_t>{0}} : st,
                 [&](int64_t i, const std::array<int64_t, 2>& off) {
                   soff[static_cast<std::size_t>(i)] = off[0];
                   boff[static_cast<std::size_t>(i)] = off[1];
                 });
  std::vector<double> yv(xv.size()), mv(static_cast<std::size_t>(outer)), iv(static_cast<std::size_t>(outer));
  for (int64_t o = 0; o < outer; ++o) {
    const double* xp = xv.data() + o * inner;
    double m = 0, v = 0;
    for (int64_t i = 0; i < inner; ++i) m += xp[i];
    m /= static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) v += (xp[i] - m) * (xp[i] - m);
    v /= static_cast<double>(inner);
    double inv = 1.0 / std::sqrt(v + eps);
    mv[static_cast<std::size_t>(o)] = m;
    iv[static_cast<std::size_t>(o)] = inv;
    for (int64_t i = 0; i < inner; ++i) {
      auto ii = static_cast<std::size_t>(i);
      double r = (xp[i] - m) * inv * scale[static_cast<std::size_t>(soff[ii])];
      if (!bias.empty()) r += bias[static_cast<std::size_t>(boff[ii])];
      yv[static_cast<std::size_t>(o * inner + i)] = r;
    }
  }
  from_doubles(y, yv);
  if (has_output(out, 1)) from_doubles(out[1], mv);
  if (has_output(out, 2)) from_doubles(out[2], iv);
}

void lrn_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  if (xs.size() < 2) fail(ctx, "input must have rank >= 2");
  double alpha = ctx.op.attr_float("alpha", 1e-4f), beta = ctx.op.attr_float("beta", 0.75f), bias = ctx.op.attr_float("bias", 1.0f);
  int64_t size = ctx.op.attr_int("size", 0);
  if (size < 1) fail(ctx, "attribute size must be positive");
  int64_t N = xs[0], C = xs[1], S = dims_product(xs, 2, xs.size());
  int64_t lo = (size - 1) / 2, hi = (size - 1) - lo; // floor and ceil of (size-1)/2
  auto xv = to_doubles(x);
  std::vector<double> yv(xv.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < S; ++i) {
        double sq = 0;
        for (int64_t j = std::max<int64_t>(0, c - lo); j <= std::min(C - 1, c + hi); ++j) {
          double v = xv[static_cast<std::size_t>((n * C + j) * S + i)];
          sq += v * v;
        }
        auto k = static_cast<std::size_t>((n * C + c) * S + i);
        yv[k] = xv[k] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
      }
  from_doubles(y, yv);
}

/// Reduces over `axes` (a mask), calling f(offsets of the elements of each group).
void for_each_group(const Shape& s, const std::vector<bool>& reduced, const std::function<void(const std::vector<int64_t>&)>& f) {
  auto st = strides_of(s);
  Shape keep_shape, red_shape;
  std::vector<int64_t> keep_st, red_st;
  for (std::size_t i = 0; i < s.size(); ++i) {
    (reduced[i] ? red_shape : keep_shape).push_back(s[i]);
    (reduced[i] ? red_st : keep_st).push_back(st[i]);
  }
  if (keep_shape.empty()) { keep_shape.push_back(1); keep_st.push_back(0); }
  if (red_shape.empty()) { red_shape.push_back(1); red_st.push_back(0); }
  std::vector<int64_t> offs;
  broadcast_loop(keep_shape, std::array<std::vector<int64_t>, 1>{keep_st}, [&](int64_t, const std::array<int64_t, 1>& base) {
    offs.clear();
    broadcast_loop(red_shape, std::array<std::vector<int64_t>, 1>{red_st},
                   [&](int64_t, const std::array<int64_t, 1>& o) { offs.push_back(base[0] + o[0]); });
    f(offs);
  });
}

void mvn_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  std::vector<bool> red(xs.size(), false);
  for (auto a : ctx.op.attr_ints("axes", {0, 2, 3})) red[static_cast<std::size_t>(norm_axis(ctx, a, static_cast<int64_t>(xs.size())))] = true;
  auto xv = to_doubles(x);
  std::vector<double> yv(xv.size());
  for_each_group(xs, red, [&](const std::vector<int64_t>& offs) {
    double m = 0, v = 0;
    for (auto o : offs) m += xv[static_cast<std::size_t>(o)];
    m /= static_cast<double>(offs.size());
    for (auto o : offs) v += (xv[static_cast<std::size_t>(o)] - m) * (xv[static_cast<std::size_t>(o)] - m);
    v /= static_cast<double>(offs.size());
    for (auto o : offs) yv[static_cast<std::size_t>(o)] = (xv[static_cast<std::size_t>(o)] - m) / (std::sqrt(v) + 1e-9);
  });
  from_doubles(y, yv);
}

void lp_norm_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  std::vector<bool> red(xs.size(), false);
  red[static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", -1), static_cast<int64_t>(xs.size())))] = true;
  int64_t p = ctx.op.attr_int("p", 2);
  if (p != 1 && p != 2) fail(ctx, "p must be 1 or 2");
  auto xv = to_doubles(x);
  std::vector<double> yv(xv.size());
  for_each_group(xs, red, [&](const std::vector<int64_t>& offs) {
    double n = 0;
    for (auto o : offs) n += p == 1 ? std::fabs(xv[static_cast<std::size_t>(o)]) : xv[static_cast<std::size_t>(o)] * xv[static_cast<std::size_t>(o)];
    if (p == 2) n = std::sqrt(n);
    for (auto o : offs) yv[static_cast<std::size_t>(o)] = n == 0 ? 0.0 : xv[static_cast<std::size_t>(o)] / n;
  });
  from_doubles(y, yv);
}

} // namespace

void register_normalization(kernel_map& m) {
  m["BatchNormalization"] = batch_norm_kernel;
  m["InstanceNormalization"] = instance_norm_kernel;
  m["LayerNormalization"] = layer_norm_kernel;
  m["LRN"] = lrn_kernel;
  m["MeanVarianceNormalization"] = mvn_kernel;
  m["LpNormalization"] = lp_norm_kernel;
}

} // namespace troupe::kernels::reference
