/// Reduce* (axes as attribute or input, keepdims, noop_with_empty_axes) and ArgMax/ArgMin
/// (keepdims, select_last_index). Accumulates in double.
#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

enum class red { sum, mean, max, min, prod, l1, l2, logsum, logsumexp, sumsquare };

red parse(const context& ctx) {
  const std::string& t = ctx.op.type;
  if (t == "ReduceSum") return red::sum;
  if (t == "ReduceMean") return red::mean;
  if (t == "ReduceMax") return red::max;
  if (t == "ReduceMin") return red::min;
  if (t == "ReduceProd") return red::prod;
  if (t == "ReduceL1") return red::l1;
  if (t == "ReduceL2") return red::l2;
  if (t == "ReduceLogSum") return red::logsum;
  if (t == "ReduceLogSumExp") return red::logsumexp;
  if (t == "ReduceSumSquare") return red::sumsquare;
  fail(ctx, "not a reduction");
}

void reduce_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  auto rank = static_cast<int64_t>(xs.size());
  std::vector<int64_t> axes = ctx.op.attr_ints("axes");
  if (has_input(in, 1)) axes = to_ints(in[1]);
  red r = parse(ctx);
  if (axes.empty() && ctx.op.attr_int("noop_with_empty_axes", 0) != 0) {
    copy_bytes(ctx, x, y);
    return;
  }
  std::vector<bool> reduced(xs.size(), axes.empty());
  for (auto a : axes) reduced[static_cast<std::size_t>(norm_axis(ctx, a, rank))] = true;
  Shape kept = xs;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (reduced[i]) kept[i] = 1;
  if (shape_size(kept) != y.get_size()) fail(ctx, "output shape " + to_string(y.get_shape()) + " is wrong");
  std::vector<int64_t> st = strides_of(kept);
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (reduced[i]) st[i] = 0;
  double init = r == red::max ? -std::numeric_limits<double>::infinity()
              : r == red::min ? std::numeric_limits<double>::infinity()
              : r == red::prod ? 1.0 : 0.0;
  std::vector<double> acc(static_cast<std::size_t>(y.get_size()), init);
  std::vector<double> mx;
  auto xv = to_doubles(x);
  if (r == red::logsumexp) {
    // Subtract each group's max for stability.
    mx.assign(acc.size(), -std::numeric_limits<double>::infinity());
    broadcast_loop(xs, std::array<std::vector<int64_t>, 1>{st}, [&](int64_t i, const std::array<int64_t, 1>& o) {
      mx[static_cast<std::size_t>(o[0])] = std::max(mx[static_cast<std::size_t>(o[0])], xv[static_cast<std::size_t>(i)]);
    });
    for (auto& m : mx) if (std::isinf(m)) m = 0;
  }
  broadcast_loop(xs, std::array<std::vector<int64_t>, 1>{st}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    double v = xv[static_cast<std::size_t>(i)];
    double& a = acc[static_cast<std::size_t>(o[0])];
    switch (r) {
    case red::sum: case red::mean: case red::logsum: a += v; break;
    case red::max: a = std::isnan(v) || v > a ? v : a; break;
    case red::min: a = std::isnan(v) || v < a ? v : a; break;
    case red::prod: a *= v; break;
    case red::l1: a += std::fabs(v); break;
    case red::l2: case red::sumsquare: a += v * v; break;
    case red::logsumexp: a += std::exp(v - mx[static_cast<std::size_t>(o[0])]); break;
    }
  });
  double count = static_cast<double>(xs.empty() ? 1 : x.get_size() / std::max<int64_t>(1, y.get_size()));
  for (std::size_t i = 0; i < acc.size(); ++i) {
    if (r == red::mean) acc[i] /= count;
    else if (r == red::l2) acc[i] = std::sqrt(acc[i]);
    else if (r == red::logsum) acc[i] = std::log(acc[i]);
    else if (r == red::logsumexp) acc[i] = std::log(acc[i]) + mx[i];
  }
  from_doubles(y, acc);
}

void arg_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  auto axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", 0), static_cast<int64_t>(xs.size())));
  bool last = ctx.op.attr_int("select_last_index", 0) != 0;
  bool is_max = ctx.op.type == "ArgMax";
  if (y.get_element_type() != element_type::i64) fail(ctx, "output must be i64");
  int64_t outer = dims_product(xs, 0, axis), len = xs[axis], inner = dims_product(xs, axis + 1, xs.size());
  if (y.get_size() != outer * inner) fail(ctx, "output shape " + to_string(y.get_shape()) + " is wrong");
  if (len == 0) fail(ctx, "cannot take ArgMax/ArgMin over an empty axis");
  auto xv = to_doubles(x);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double bv = xv[static_cast<std::size_t>(o * len * inner + i)];
      for (int64_t k = 1; k < len; ++k) {
        double v = xv[static_cast<std::size_t>((o * len + k) * inner + i)];
        bool better = is_max ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv));
        if (better) { bv = v; best = k; }
      }
      y.data<int64_t>()[o * inner + i] = best;
    }
}

} // namespace

void register_reduce(kernel_map& m) {
  for (const char* n : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    m[n] = reduce_kernel;
  m["ArgMax"] = arg_kernel;
  m["ArgMin"] = arg_kernel;
}

} // namespace troupe::kernels::reference
