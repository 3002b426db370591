#pragma once
/// The store of the AVX-512 packed GEMM tiles (f32 and bf16 weights): R rows by two panels of
/// 16 columns, masked at the right edge, with an optional bias per column.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/lane_mask.hpp"

namespace troupe::kernels::cpu {

/// Writes c[r][0..1] to y[(r0 + r) * n + c0 ..] for the columns that exist (`two` false: the
/// second panel is past the end), adding bias[c0 ..] first when bias is not null.
template <int R>
[[gnu::target("avx512f"), gnu::always_inline]] inline void store_panel_pair(__m512 (&c)[R][2], float* y, int64_t n, int64_t r0,
                                                                            int64_t c0, bool two, const float* bias) {
  constexpr int64_t w = 16;
  const int64_t cols = std::min(2 * w, n - c0);
  const __mmask16 m0 = first_lanes(cols), m1 = first_lanes(cols - w);
  if (bias) {
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, bias + c0), b1 = _mm512_maskz_loadu_ps(m1, bias + c0 + w);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      c[r][0] = _mm512_add_ps(c[r][0], b0);
      c[r][1] = _mm512_add_ps(c[r][1], b1);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    float* row = y + (r0 + r) * n + c0;
    _mm512_mask_storeu_ps(row, m0, c[r][0]);
    if (two) _mm512_mask_storeu_ps(row + w, m1, c[r][1]);
  }
}

} // namespace troupe::kernels::cpu
