/// Softmax over contiguous rows on AVX-512 (native_ops.hpp).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/cpu/avx512_exp.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

namespace {

/// [rows, len] of a Softmax whose normalized elements are contiguous; {0, 0} when they are not.
std::pair<int64_t, int64_t> row_extent(const Shape& xs, int64_t axis, int64_t opset) {
  const auto r = static_cast<int64_t>(xs.size());
  if (r == 0) return {0, 0};
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return {0, 0};
  // From opset 13 the axis alone is normalized (contiguous only when it is the last); before,
  // the input is coerced to [outer, inner] at the axis.
  if (opset >= 13 && axis != r - 1) return {0, 0};
  int64_t rows = 1, len = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? rows : len) *= xs[static_cast<std::size_t>(i)];
  return {rows, len};
}

} // namespace

bool is_row_softmax(const graph::Graph& g, const graph::Op& op) {
  if (op.type != "Softmax" || !op.domain.empty() || op.has_attr("activation") || !native_avx512_available()) return false;
  const auto& x = g.value(op.inputs[0]);
  if (x.type != element_type::f32 || !x.shape.is_static()) return false;
  const auto [rows, len] = row_extent(x.shape.to_shape(), op.attr_int("axis", g.opset < 13 ? 1 : -1), g.opset);
  return rows > 0 && len > 0;
}

// Compiled for AVX-512; runs only where native_avx512_available() holds.
TROUPE_ISA_BEGIN("avx512f")

void softmax_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  // Plain variables, not a structured binding: the row lambda below captures them (clang before
  // 16 refuses to capture a binding).
  const auto extent = row_extent(in[0].get_shape(), ctx.op.attr_int("axis", ctx.opset < 13 ? 1 : -1), ctx.opset);
  const int64_t rows = extent.first, len = extent.second;
  const float* x = in[0].data<float>();
  float* y = out[0].data<float>();
  const int64_t full = len / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (len - full)) - 1);
  auto one_row = [&](int64_t row) {
    const float* xr = x + row * len;
    float* yr = y + row * len;
    const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512 m = lowest;
    for (int64_t i = 0; i < full; i += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(xr + i));
    if (tail) m = _mm512_max_ps(m, _mm512_mask_loadu_ps(lowest, tail, xr + full));
    const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(m));
    __m512 sum = _mm512_setzero_ps();
    for (int64_t i = 0; i < full; i += 16) {
      const __m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(xr + i), mx));
      _mm512_storeu_ps(yr + i, e);
      sum = _mm512_add_ps(sum, e);
    }
    if (tail) {
      const __m512 e = _mm512_maskz_mov_ps(tail, exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, xr + full), mx)));
      _mm512_mask_storeu_ps(yr + full, tail, e);
      sum = _mm512_add_ps(sum, e);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
    for (int64_t i = 0; i < full; i += 16) _mm512_storeu_ps(yr + i, _mm512_mul_ps(_mm512_loadu_ps(yr + i), inv));
    if (tail) _mm512_mask_storeu_ps(yr + full, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, yr + full), inv));
  };
  TROUPE_TEAM_FOR(row, rows, rows > 1 && rows * len > 32768, one_row(row));
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
