/// The native LSTM step's kernel on AVX-512 (lstm.hpp). Per direction (a thread each): the
/// input products of every time step as one GEMM (blocks of 6 rows x 64 gate columns, each
/// load of W^T serving six rows), then per time step and sequence the recurrent product
/// (blocks of 128 gate columns, one broadcast of h per 8 FMAs over a row of R^T) and the cell.
/// ONNX's gate order (i, o, f, c) is kept: gate g of unit k is column g*H + k; the columns
/// past 4H (to whole blocks) hold zeros and are never read by the cell.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/avx512_exp.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/lane_mask.hpp"
#include "kernels/cpu/lstm.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

namespace {

struct geometry {
  int64_t T, N, I, H, D;
  bool reverse, batch_first;
  int64_t G() const { return 4 * H; } ///< gate columns
};

} // namespace

TROUPE_ISA_BEGIN("avx512f")

namespace {

inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

/// tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|): no overflow, exact sign.
inline __m512 tanh16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 e = exp512(_mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(-2.0f)));
  const __m512 t = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(static_cast<int>(0x80000000u)));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(t), sign));
}

/// pre[r, block's 64 columns) = bias + x_r . W^T for rows r0 .. r0 + R (x_r at xrow[r]); `w`
/// the block's packed rows [I, 64].
template <int R>
void input_block(const float* const* xrow, const float* w, const float* bias, int64_t I, int64_t stride, float* pre) {
  constexpr int C = lstm_input_block / 16;
  __m512 acc[R][C];
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) {
    const __m512 bv = _mm512_loadu_ps(bias + 16 * c);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) acc[r][c] = bv;
  }
  for (int64_t k = 0; k < I; ++k, w += lstm_input_block) {
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

/// Rows r0 .. r0 + R of `pre` (stride Gp), every block of gate columns.
template <int R>
void input_rows(const float* const* xrow, const float* wt, const float* bias, int64_t I, int64_t Gp, float* pre) {
  for (int64_t c0 = 0; c0 < Gp; c0 += lstm_input_block)
    input_block<R>(xrow, wt + c0 * I, bias + c0, I, Gp, pre + c0);
}

/// gates[128 columns of a block] += h . R^T over them; `r` the block's packed rows [H, 128].
void recurrent_block(const float* h, const float* r, int64_t H, float* gates) {
  constexpr int C = lstm_recurrent_block / 16;
  __m512 acc[C];
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c) acc[c] = _mm512_loadu_ps(gates + 16 * c);
  for (int64_t k = 0; k < H; ++k, r += lstm_recurrent_block) {
    const __m512 hv = _mm512_set1_ps(h[k]);
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) acc[c] = _mm512_fmadd_ps(hv, _mm512_loadu_ps(r + 16 * c), acc[c]);
  }
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c) _mm512_storeu_ps(gates + 16 * c, acc[c]);
}

void recurrent(const float* h, const float* rt, int64_t H, int64_t Gp, float* gates) {
  for (int64_t c0 = 0; c0 < Gp; c0 += lstm_recurrent_block) recurrent_block(h, rt + c0 * H, H, gates + c0);
}

/// The cell on `gates` (i, o, f, c~ pre-activations): c = f c + i c~, h = o tanh(c).
void cell(const float* gates, int64_t H, float* h, float* c) {
  for (int64_t k = 0; k < H; k += 16) {
    const __mmask16 m = first_lanes(H - k);
    const __m512 i = sigmoid16(_mm512_maskz_loadu_ps(m, gates + k));
    const __m512 o = sigmoid16(_mm512_maskz_loadu_ps(m, gates + H + k));
    const __m512 f = sigmoid16(_mm512_maskz_loadu_ps(m, gates + 2 * H + k));
    const __m512 cc = tanh16(_mm512_maskz_loadu_ps(m, gates + 3 * H + k));
    const __m512 cn = _mm512_fmadd_ps(f, _mm512_maskz_loadu_ps(m, c + k), _mm512_mul_ps(i, cc));
    _mm512_mask_storeu_ps(c + k, m, cn);
    _mm512_mask_storeu_ps(h + k, m, _mm512_mul_ps(o, tanh16(cn)));
  }
}

/// One direction over the whole sequence.
void direction(const geometry& g, int64_t d, const float* x, const float* wt, const float* rt, const float* bias,
               const float* h0, const float* c0, float* y, float* yh, float* yc) {
  const int64_t T = g.T, N = g.N, I = g.I, H = g.H, Gp = lstm_padded_columns(g.G()), D = g.D;
  thread_local std::vector<float> pre, state;
  pre.resize(static_cast<std::size_t>(T * N * Gp));
  state.resize(static_cast<std::size_t>(2 * N * H + Gp));
  float* hs = state.data();
  float* cs = hs + N * H;
  float* gates = cs + N * H;
  // Row t*N + n of `pre`: time step t of sequence n.
  auto x_at = [&](int64_t t, int64_t n) { return x + (g.batch_first ? n * T + t : t * N + n) * I; };
  auto state_at = [&](int64_t n) { return (g.batch_first ? n * D + d : d * N + n) * H; };
  wt += d * I * Gp;
  rt += d * H * Gp;
  bias += d * Gp;
  const int64_t rows = T * N;
  int64_t r0 = 0;
  const float* xrow[6];
  auto fill = [&](int64_t from, int count) {
    for (int r = 0; r < count; ++r) xrow[r] = x_at((from + r) / N, (from + r) % N);
  };
  for (; r0 + 6 <= rows; r0 += 6) {
    fill(r0, 6);
    input_rows<6>(xrow, wt, bias, I, Gp, pre.data() + r0 * Gp);
  }
  fill(r0, static_cast<int>(rows - r0));
  switch (rows - r0) {
  case 5: input_rows<5>(xrow, wt, bias, I, Gp, pre.data() + r0 * Gp); break;
  case 4: input_rows<4>(xrow, wt, bias, I, Gp, pre.data() + r0 * Gp); break;
  case 3: input_rows<3>(xrow, wt, bias, I, Gp, pre.data() + r0 * Gp); break;
  case 2: input_rows<2>(xrow, wt, bias, I, Gp, pre.data() + r0 * Gp); break;
  case 1: input_rows<1>(xrow, wt, bias, I, Gp, pre.data() + r0 * Gp); break;
  default: break;
  }
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < H; ++k) {
      hs[n * H + k] = h0 ? h0[state_at(n) + k] : 0.0f;
      cs[n * H + k] = c0 ? c0[state_at(n) + k] : 0.0f;
    }
  }
  const bool backwards = g.reverse || d == 1;
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = backwards ? T - 1 - s : s;
    for (int64_t n = 0; n < N; ++n) {
      std::copy_n(pre.data() + (t * N + n) * Gp, Gp, gates);
      recurrent(hs + n * H, rt, H, Gp, gates);
      cell(gates, H, hs + n * H, cs + n * H);
      if (y) std::copy_n(hs + n * H, H, y + (g.batch_first ? (n * T + t) * D + d : (t * D + d) * N + n) * H);
    }
  }
  for (int64_t n = 0; n < N; ++n) {
    if (yh) std::copy_n(hs + n * H, H, yh + state_at(n));
    if (yc) std::copy_n(cs + n * H, H, yc + state_at(n));
  }
}

} // namespace

void lstm_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto a = ctx.op.attr_ints(lstm_geometry_attr);
  const geometry g{a.at(0), a.at(1), a.at(2), a.at(3), a.at(4), a.at(5) != 0, a.at(6) != 0};
  auto ptr = [](const Tensor& t) { return t.empty() ? nullptr : t.data<float>(); };
  auto out_ptr = [&](std::size_t i) { return i < out.size() && !out[i].empty() ? out[i].data<float>() : nullptr; };
  const float *x = ptr(in[0]), *wt = ptr(in[1]), *rt = ptr(in[2]), *bias = ptr(in[3]);
  const float *h0 = in.size() > 4 ? ptr(in[4]) : nullptr, *c0 = in.size() > 5 ? ptr(in[5]) : nullptr;
  float *y = out_ptr(0), *yh = out_ptr(1), *yc = out_ptr(2);
  // Directions on threads of their own (each keeps its R^T in its core's cache).
  const bool big = g.T * g.N * g.G() * (g.I + g.H) > (int64_t{1} << 16);
  TROUPE_TEAM_FOR(d, g.D, big && g.D > 1, direction(g, d, x, wt, rt, bias, h0, c0, y, yh, yc));
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
