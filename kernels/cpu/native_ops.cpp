#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/team.hpp"

#include <algorithm>
#include <vector>

namespace troupe::kernels::cpu {

namespace {
bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
}
} // namespace

bool is_unit_overlap_conv_transpose(const graph::Graph& g, const graph::Op& op) {
  if (op.type != "ConvTranspose" || op.input_count() < 2 || !g.is_constant(op.inputs[1])) return false;
  const auto& x = g.value(op.inputs[0]);
  const auto& w = g.value(op.inputs[1]);
  if (x.type != element_type::f32 || w.type != element_type::f32 || !x.shape.is_static() || x.shape.rank() != 4 ||
      w.shape.rank() != 4)
    return false;
  if (op.input_count() == 3 && !g.is_constant(op.inputs[2])) return false;
  const auto k = w.shape.dims[2];
  if (w.shape.dims[3] != k || k < 1) return false;
  // oneDNN's deconvolution is fast once the output channels fill a vector block (det's 24 -> 24
  // upsampling: 0.63 ms there, 1.7 ms here); below that it collapses.
  if (w.shape.dims[1] >= 16) return false;
  const auto auto_pad = op.attr_string("auto_pad", "NOTSET");
  return op.attr_int("group", 1) == 1 && op.attr_ints("strides", {1, 1}) == std::vector<int64_t>{k, k} &&
         all_equal(op.attr_ints("dilations", {1, 1}), 1) && all_equal(op.attr_ints("pads", {0, 0, 0, 0}), 0) &&
         all_equal(op.attr_ints("output_padding", {0, 0}), 0) && !op.has_attr("output_shape") &&
         (auto_pad == "NOTSET" || auto_pad == "VALID");
}

void unit_overlap_conv_transpose(const reference::context&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto& xs = in[0].get_shape();
  const auto& ws = in[1].get_shape();
  const int64_t n_batch = xs[0], c_in = xs[1], h = xs[2], w = xs[3], m_out = ws[1], k = ws[2];
  const float* x = in[0].data<float>();
  const float* wt = in[1].data<float>();
  const float* bias = in.size() > 2 && !in[2].empty() ? in[2].data<float>() : nullptr;
  float* y = out[0].data<float>();
  const int64_t oh = h * k, ow = w * k;
  // Y[n, m, i*k+ky, j*k+kx] = b[m] + sum_c X[n, c, i, j] * W[c, m, ky, kx]: one output row
  // segment per (n, m, ky, kx, i), accumulated over c along contiguous input rows.
  // Each thread of the team (or the calling thread alone) keeps its own accumulator row.
  auto share = [&] {
    std::vector<float> acc(static_cast<std::size_t>(w));
#pragma omp for collapse(3) schedule(static)
    for (int64_t n = 0; n < n_batch; ++n)
      for (int64_t m = 0; m < m_out; ++m)
        for (int64_t i = 0; i < h; ++i)
          for (int64_t ky = 0; ky < k; ++ky)
            for (int64_t kx = 0; kx < k; ++kx) {
              std::fill(acc.begin(), acc.end(), bias ? bias[m] : 0.0f);
              for (int64_t c = 0; c < c_in; ++c) {
                const float wv = wt[((c * m_out + m) * k + ky) * k + kx];
                const float* xr = x + ((n * c_in + c) * h + i) * w;
                float* a = acc.data();
                for (int64_t j = 0; j < w; ++j) a[j] += xr[j] * wv;
              }
              float* yr = y + ((n * m_out + m) * oh + i * k + ky) * ow + kx;
              for (int64_t j = 0; j < w; ++j) yr[j * k] = acc[static_cast<std::size_t>(j)];
            }
  };
  if (team_worth(true)) {
#pragma omp parallel
    share();
  } else {
    share();
  }
}

} // namespace troupe::kernels::cpu
