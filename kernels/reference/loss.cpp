/// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12/13), as the ONNX reference
/// computes them: input [N, C, d1..dk] (scores or log-probabilities), target [N, d1..dk] of
/// class indices, optional weight [C]. A target equal to `ignore_index` adds nothing and
/// weighs 0; "mean" divides by the sum of the weights taken (the count without weights).
#include <cmath>

#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

/// The loss over `logp` ([N, C, D] flattened, log-probabilities) into output 0.
void nll(const context& ctx, const std::vector<double>& logp, const Shape& in_shape, const std::vector<Tensor>& in,
         std::vector<Tensor>& out) {
  const Tensor& target = input(ctx, in, 1);
  const int64_t n = in_shape[0], c = in_shape[1], d = dims_product(in_shape, 2, in_shape.size());
  if (shape_size(target.get_shape()) != n * d)
    fail(ctx, "target has " + std::to_string(shape_size(target.get_shape())) + " elements, the input's N x d1..dk is " +
                  std::to_string(n * d));
  const auto t = to_ints(target);
  const bool weighted = has_input(in, 2);
  const auto w = weighted ? to_doubles(in[2]) : std::vector<double>{};
  if (weighted && static_cast<int64_t>(w.size()) != c)
    fail(ctx, "weight has " + std::to_string(w.size()) + " elements, not C = " + std::to_string(c));
  const bool ignoring = ctx.op.has_attr("ignore_index");
  const int64_t ignore = ctx.op.attr_int("ignore_index", 0);
  const std::string reduction = ctx.op.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    fail(ctx, "reduction '" + reduction + "' is not none, sum or mean");
  std::vector<double> loss(static_cast<std::size_t>(n * d), 0.0);
  double weight_sum = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < d; ++k) {
      const auto at = static_cast<std::size_t>(i * d + k);
      const int64_t cls = t[at];
      if (ignoring && cls == ignore) continue; // loss 0, weight 0
      if (cls < 0 || cls >= c)
        fail(ctx, "target value " + std::to_string(cls) + " is outside [0, " + std::to_string(c) + ")");
      const double wt = weighted ? w[static_cast<std::size_t>(cls)] : 1.0;
      loss[at] = -logp[static_cast<std::size_t>((i * c + cls) * d + k)] * wt;
      weight_sum += wt;
    }
  Tensor& y = output(ctx, out, 0);
  if (reduction == "none") return from_doubles(y, loss);
  double sum = 0;
  for (double v : loss) sum += v;
  // Without weights or ignore_index, numpy's mean over every element (ignored ones count as
  // weight 0 otherwise, as the ONNX reference does).
  const double denom = weighted || ignoring ? weight_sum : static_cast<double>(loss.size());
  from_doubles(y, {reduction == "sum" ? sum : sum / denom});
}

void nll_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  if (x.get_shape().size() < 2) fail(ctx, "the input must have rank 2 or more (N, C, ...)");
  nll(ctx, to_doubles(x), x.get_shape(), in, out);
}

void softmax_cross_entropy_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& x = input(ctx, in, 0);
  const Shape& s = x.get_shape();
  if (s.size() < 2) fail(ctx, "the scores must have rank 2 or more (N, C, ...)");
  const int64_t n = s[0], c = s[1], d = dims_product(s, 2, s.size());
  auto v = to_doubles(x);
  // log_softmax over the class axis (1).
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < d; ++k) {
      auto at = [&](int64_t j) { return static_cast<std::size_t>((i * c + j) * d + k); };
      if (c == 0) continue;
      double mx = v[at(0)];
      for (int64_t j = 1; j < c; ++j) mx = std::max(mx, v[at(j)]);
      double sum = 0;
      for (int64_t j = 0; j < c; ++j) sum += std::exp(v[at(j)] - mx);
      const double log_sum = std::log(sum);
      for (int64_t j = 0; j < c; ++j) v[at(j)] = v[at(j)] - mx - log_sum;
    }
  if (has_output(out, 1)) from_doubles(out[1], v);
  nll(ctx, v, s, in, out);
}

} // namespace

void register_loss(kernel_map& m) {
  m["NegativeLogLikelihoodLoss"] = nll_kernel;
  m["SoftmaxCrossEntropyLoss"] = softmax_cross_entropy_kernel;
}

} // namespace troupe::kernels::reference
