/// Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2-D at `axis`
/// (default 1) and normalized over the whole second dim; from 13 along one axis (default -1).
#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

void softmax_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  Tensor& y = output(ctx, out, 0);
  const Shape& xs = x.get_shape();
  auto rank = static_cast<int64_t>(xs.size());
  bool legacy = ctx.opset < 13;
  auto axis = static_cast<std::size_t>(norm_axis(ctx, ctx.op.attr_int("axis", legacy ? 1 : -1), rank));
  // Rows of `len` elements at stride `inner`.
  int64_t outer = dims_product(xs, 0, axis), len, inner;
  if (legacy) {
    len = dims_product(xs, axis, xs.size());
    inner = 1;
  } else {
    len = rank ? xs[axis] : 1;
    inner = dims_product(xs, axis + 1, xs.size());
  }
  const std::string& t = ctx.op.type;
  auto xv = to_doubles(x);
  std::vector<double> yv(xv.size(), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return static_cast<std::size_t>((o * len + k) * inner + i); };
      if (len == 0) continue;
      double mx = xv[at(0)];
      int64_t arg = 0;
      for (int64_t k = 1; k < len; ++k)
        if (xv[at(k)] > mx) { mx = xv[at(k)]; arg = k; }
      if (t == "Hardmax") {
        yv[at(arg)] = 1.0;
        continue;
      }
      double s = 0;
      for (int64_t k = 0; k < len; ++k) s += std::exp(xv[at(k)] - mx);
      for (int64_t k = 0; k < len; ++k)
        yv[at(k)] = t == "LogSoftmax" ? xv[at(k)] - mx - std::log(s) : std::exp(xv[at(k)] - mx) / s;
    }
  from_doubles(y, yv);
}

} // namespace

void register_softmax(kernel_map& m) {
  for (const char* n : {"Softmax", "LogSoftmax", "Hardmax"}) m[n] = softmax_kernel;
}

} // namespace troupe::kernels::reference
