/// MatMul (numpy semantics: batch broadcasting, 1-D operands) and Gemm, accumulated in double.
#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

void matmul_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& a = input(ctx, in, 0);
  const Tensor& b = input(ctx, in, 1);
  Tensor& y = output(ctx, out, 0);
  Shape as = a.get_shape(), bs = b.get_shape();
  if (as.empty() || bs.empty()) fail(ctx, "MatMul operands must have rank >= 1");
  bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K)
    fail(ctx, "inner dimensions differ: " + to_string(a.get_shape()) + " x " + to_string(b.get_shape()));
  // Broadcast batch dims.
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  std::size_t r = std::max(ab.size(), bb.size());
  ab.insert(ab.begin(), r - ab.size(), 1);
  bb.insert(bb.begin(), r - bb.size(), 1);
  Shape batch(r);
  for (std::size_t i = 0; i < r; ++i) {
    if (ab[i] != bb[i] && ab[i] != 1 && bb[i] != 1)
      fail(ctx, "batch dimensions do not broadcast: " + to_string(a.get_shape()) + " x " + to_string(b.get_shape()));
    batch[i] = ab[i] == 1 ? bb[i] : ab[i];
  }
  if (y.get_size() != shape_size(batch) * M * N) fail(ctx, "output shape " + to_string(y.get_shape()) + " is wrong");
  auto av = to_doubles(a), bv = to_doubles(b);
  std::vector<double> yv(static_cast<std::size_t>(y.get_size()));
  std::array<std::vector<int64_t>, 2> st{broadcast_strides(ctx, ab, batch), broadcast_strides(ctx, bb, batch)};
  Shape loop = batch.empty() ? Shape{1} : batch;
  if (batch.empty()) st = {std::vector<int64_t>{0}, std::vector<int64_t>{0}};
  broadcast_loop(loop, st, [&](int64_t bi, const std::array<int64_t, 2>& off) {
    const double* ap = av.data() + off[0] * M * K;
    const double* bp = bv.data() + off[1] * K * N;
    double* yp = yv.data() + bi * M * N;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k) {
        double s = ap[m * K + k];
        for (int64_t n = 0; n < N; ++n) yp[m * N + n] += s * bp[k * N + n];
      }
  });
  from_doubles(y, yv);
}

void gemm_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Tensor& a = input(ctx, in, 0);
  const Tensor& b = input(ctx, in, 1);
  Tensor& y = output(ctx, out, 0);
  if (a.get_shape().size() != 2 || b.get_shape().size() != 2) fail(ctx, "A and B must be 2-D");
  bool ta = ctx.op.attr_int("transA", 0) != 0, tb = ctx.op.attr_int("transB", 0) != 0;
  double alpha = ctx.op.attr_float("alpha", 1.0f), beta = ctx.op.attr_float("beta", 1.0f);
  int64_t M = ta ? a.get_shape()[1] : a.get_shape()[0], K = ta ? a.get_shape()[0] : a.get_shape()[1];
  int64_t Kb = tb ? b.get_shape()[1] : b.get_shape()[0], N = tb ? b.get_shape()[0] : b.get_shape()[1];
  if (K != Kb) fail(ctx, "inner dimensions differ: " + to_string(a.get_shape()) + " x " + to_string(b.get_shape()));
  if (y.get_shape() != Shape{M, N}) fail(ctx, "output shape " + to_string(y.get_shape()) + " is wrong");
  auto av = to_doubles(a), bv = to_doubles(b);
  std::vector<double> yv(static_cast<std::size_t>(M * N), 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += av[static_cast<std::size_t>(ta ? k * M + m : m * K + k)] * bv[static_cast<std::size_t>(tb ? n * K + k : k * N + n)];
      yv[static_cast<std::size_t>(m * N + n)] = alpha * s;
    }
  if (has_input(in, 2)) {
    const Tensor& c = in[2];
    auto cv = to_doubles(c);
    std::array<std::vector<int64_t>, 1> st{broadcast_strides(ctx, c.get_shape(), Shape{M, N})};
    broadcast_loop(Shape{M, N}, st, [&](int64_t i, const std::array<int64_t, 1>& off) {
      yv[static_cast<std::size_t>(i)] += beta * cv[static_cast<std::size_t>(off[0])];
    });
  }
  from_doubles(y, yv);
}

} // namespace

void register_matmul(kernel_map& m) {
  m["MatMul"] = matmul_kernel;
  m["Gemm"] = gemm_kernel;
}

} // namespace troupe::kernels::reference
