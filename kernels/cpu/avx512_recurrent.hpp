#pragma once
/// The pieces the native recurrent steps (lstm.hpp, gru.hpp) share, on AVX-512: sigmoid and
/// tanh on 16 lanes, every time step's input product X W^T + bias as one GEMM (blocks of 6
/// rows x 64 gate columns, each load of W^T serving six rows), and a step's recurrent product
/// h R^T (blocks of 128 gate columns, one broadcast of h per 8 FMAs). The weights come packed by
/// pack_gate_columns (recurrent_packing.hpp): per block its rows one after another, zeros past
/// the real columns, so no product needs a mask. Call only where native_avx512_available().
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/avx512_exp.hpp"
#include "kernels/cpu/recurrent_packing.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu::avx512_recurrent {

[[gnu::target("avx512f")]] inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

/// tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|): no overflow, exact sign.
[[gnu::target("avx512f")]] inline __m512 tanh16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 e = exp512(_mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(-2.0f)));
  const __m512 t = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(static_cast<int>(0x80000000u)));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(t), sign));
}

/// pre[r, the block's 64 columns) = bias + x_r . W^T for R rows (x_r at xrow[r]); `w` the
/// block's packed rows [I, 64]; pre's rows `stride` apart.
template <int R>
[[gnu::target("avx512f")]] void input_block(const float* const* xrow, const float* w, const float* bias, int64_t I,
                                            int64_t stride, float* pre) {
  constexpr int C = input_block_columns / 16;
  __m512 acc[R][C];
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) {
    const __m512 bv = _mm512_loadu_ps(bias + 16 * c);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) acc[r][c] = bv;
  }
  for (int64_t k = 0; k < I; ++k, w += input_block_columns) {
    __m512 wv[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) wv[c] = _mm512_loadu_ps(w + 16 * c);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_set1_ps(xrow[r][k]);
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(pre + r * stride + 16 * c, acc[r][c]);
}

template <int R>
[[gnu::target("avx512f")]] void input_rows(const float* const* xrow, const float* wt, const float* bias, int64_t I,
                                           int64_t Gp, float* pre) {
  for (int64_t c0 = 0; c0 < Gp; c0 += input_block_columns) input_block<R>(xrow, wt + c0 * I, bias + c0, I, Gp, pre + c0);
}

/// pre [rows, Gp] = bias + x_r . W^T for every row r, x_r at row_of(r) (I elements); wt packed
/// [Gp / 64, I, 64], bias [Gp].
template <class RowOf>
[[gnu::target("avx512f")]] void input_products(RowOf row_of, int64_t rows, const float* wt, const float* bias, int64_t I,
                                               int64_t Gp, float* pre) {
  const float* xrow[6];
  int64_t r0 = 0;
  for (; r0 + 6 <= rows; r0 += 6) {
    for (int r = 0; r < 6; ++r) xrow[r] = row_of(r0 + r);
    input_rows<6>(xrow, wt, bias, I, Gp, pre + r0 * Gp);
  }
  for (int64_t r = r0; r < rows; ++r) xrow[r - r0] = row_of(r);
  switch (rows - r0) {
  case 5: input_rows<5>(xrow, wt, bias, I, Gp, pre + r0 * Gp); break;
  case 4: input_rows<4>(xrow, wt, bias, I, Gp, pre + r0 * Gp); break;
  case 3: input_rows<3>(xrow, wt, bias, I, Gp, pre + r0 * Gp); break;
  case 2: input_rows<2>(xrow, wt, bias, I, Gp, pre + r0 * Gp); break;
  case 1: input_rows<1>(xrow, wt, bias, I, Gp, pre + r0 * Gp); break;
  default: break;
  }
}

/// gates[0, Gp) += h . R^T; rt packed [Gp / 128, H, 128].
[[gnu::target("avx512f")]] inline void recurrent_product(const float* h, const float* rt, int64_t H, int64_t Gp, float* gates) {
  constexpr int C = recurrent_block_columns / 16;
  for (int64_t c0 = 0; c0 < Gp; c0 += recurrent_block_columns) {
    const float* r = rt + c0 * H;
    __m512 acc[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) acc[c] = _mm512_loadu_ps(gates + c0 + 16 * c);
    for (int64_t k = 0; k < H; ++k, r += recurrent_block_columns) {
      const __m512 hv = _mm512_set1_ps(h[k]);
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) acc[c] = _mm512_fmadd_ps(hv, _mm512_loadu_ps(r + 16 * c), acc[c]);
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(gates + c0 + 16 * c, acc[c]);
  }
}

/// Row r (= t * N + n: step t of sequence n) of x [T, N, I] (or [N, T, I] batch_first).
inline const float* sequence_row(const float* x, int64_t r, int64_t T, int64_t N, int64_t I, bool batch_first) {
  return x + (batch_first ? (r % N) * T + r / N : r) * I;
}

} // namespace troupe::kernels::cpu::avx512_recurrent

/// Every direction's input products, over the team: (direction, share of the rows) tasks, so
/// that a one-direction op uses every thread for them (its recurrence is one thread's). `g` has
/// T, N, I, D, batch_first; wt [D, Gp / 64, I, 64], bias [D, Gp]. Evaluates to the products
/// [D, T * N, Gp], in a buffer of the calling thread's. A macro, as TROUPE_TEAM_FOR: the loop
/// must compile inside the caller's ISA region.
#define TROUPE_INPUT_PRODUCTS(g, x, wt, bias, Gp, big)                                                                \
  [&] {                                                                                                              \
    thread_local std::vector<float> troupe_pre;                                                                      \
    const int64_t rows = (g).T * (g).N;                                                                              \
    troupe_pre.resize(static_cast<std::size_t>((g).D * rows * (Gp)));                                                \
    const int64_t shares = (big) ? std::max<int64_t>(1, ::troupe::kernels::cpu::team_threads() / (g).D) : 1;          \
    const int64_t per = (rows + 6 * shares - 1) / (6 * shares) * 6; /* whole 6-row blocks */                         \
    float* const troupe_out = troupe_pre.data();                                                                     \
    TROUPE_TEAM_FOR(task, (g).D * shares, (big) && (g).D * shares > 1, {                                             \
      const int64_t d = task / shares, r0 = task % shares * per, r1 = std::min(rows, r0 + per);                      \
      if (r0 < r1)                                                                                                   \
        ::troupe::kernels::cpu::avx512_recurrent::input_products(                                                    \
            [&](int64_t r) {                                                                                         \
              return ::troupe::kernels::cpu::avx512_recurrent::sequence_row(x, r0 + r, (g).T, (g).N, (g).I,          \
                                                                            (g).batch_first);                        \
            },                                                                                                       \
            r1 - r0, (wt) + d * (g).I * (Gp), (bias) + d * (Gp), (g).I, (Gp), troupe_out + (d * rows + r0) * (Gp));  \
    });                                                                                                              \
    return static_cast<const float*>(troupe_out);                                                                    \
  }()
