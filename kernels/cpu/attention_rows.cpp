/// The attention step's kernel on AVX-512 (attention.hpp). Per task (a batch, a head, its query
/// rows or a share of them when the heads are fewer than the threads): K^T packed once as
/// [depth, keys rounded up to 16] so that a score block is broadcast-FMAs along contiguous keys;
/// then per block of up to six query rows (each K^T and V load serving all of them) the
/// scores, scale and mask, Softmax (the division left to the output), and the product with V's
/// rows read in place (or packed when their elements are not contiguous).
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/attention.hpp"
#include "kernels/cpu/avx512_exp.hpp"
#include "kernels/cpu/avx512_transpose.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/lane_mask.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

namespace {

struct geometry {
  int64_t batch, heads, rows, keys, depth, vdepth;
  std::array<int64_t, 4> q, k, v, y, m, keep; ///< strides of (b, h, row, element)
  bool keep_if;
  float scale, fill;
};

geometry geometry_of(const graph::Op& op) {
  const auto a = op.attr_ints(attention_geometry_attr);
  const auto f = op.attr_floats(attention_scale_attr);
  geometry g{a.at(0), a.at(1), a.at(2), a.at(3), a.at(4), a.at(5), {}, {}, {}, {}, {}, {}, false, f.at(0), f.at(1)};
  std::size_t i = 6;
  for (auto* s : {&g.q, &g.k, &g.v, &g.y, &g.m, &g.keep})
    for (auto& x : *s) x = a.at(i++);
  g.keep_if = a.at(i) != 0;
  return g;
}

/// Query rows per block and 16-wide chunks per pass: 6 x 4 accumulators, so that each load of
/// K^T or V serves six rows and each broadcast four chunks (24 FMAs per 10 loads).
constexpr int max_rows = 6;
constexpr int max_chunks = 4;

/// One task's operands, positioned at its batch and head.
struct head_view {
  const float *q, *kt, *mask; ///< kt: packed [depth, np]
  const bool* keep;
  const float* v;             ///< rows of V: element (n, e) at v[n * v_row + e]
  int64_t v_row;
  float* y;
  float* scores; ///< [max_rows, np]
  int64_t np;
};

} // namespace

TROUPE_ISA_BEGIN("avx512f")

namespace {

/// Scores of R query rows against keys [n0, n0 + 16 C): out[r][c], not yet scaled. The sums
/// stay in a local array: one reached through a reference may alias the loads (__m512 may
/// alias anything), and GCC then keeps it in memory (3x slower where not inlined).
template <int R, int C>
void score_block(const geometry& g, const head_view& h, int64_t i, int64_t n0, __m512 (&out)[R][max_chunks]) {
  __m512 acc[R][C];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  const float* q[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) q[r] = h.q + (i + r) * g.q[2];
  const float* kr = h.kt + n0;
  for (int64_t d = 0; d < g.depth; ++d, kr += h.np) {
    __m512 k[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) k[c] = _mm512_loadu_ps(kr + 16 * c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 qd = _mm512_set1_ps(q[r][d * g.q[3]]);
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(qd, k[c], acc[r][c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) out[r][c] = acc[r][c];
}

/// 16 scores of row r from key n0 (`live` of them): scaled, selected, masked.
inline __m512 masked_scores(const geometry& g, const head_view& h, int64_t row, int64_t n0, __mmask16 live, __m512 x) {
  x = _mm512_mul_ps(x, _mm512_set1_ps(g.scale));
  const int64_t n = std::min<int64_t>(16, g.keys - n0);
  if (h.keep) {
    const bool* kr = h.keep + row * g.keep[2] + n0 * g.keep[3];
    __mmask16 kept = 0;
    for (int64_t j = 0; j < n; ++j) kept = static_cast<__mmask16>(kept | ((kr[j * g.keep[3]] == g.keep_if) << j));
    x = _mm512_mask_blend_ps(kept, _mm512_set1_ps(g.fill), x);
  }
  if (h.mask) {
    const float* mr = h.mask + row * g.m[2] + n0 * g.m[3];
    if (g.m[3] == 1) {
      x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(live, mr));
    } else {
      alignas(64) float m16[16] = {};
      for (int64_t j = 0; j < n; ++j) m16[j] = mr[j * g.m[3]];
      x = _mm512_add_ps(x, _mm512_load_ps(m16));
    }
  }
  return x;
}

/// Scores of R query rows (from `i`) against every key, scaled, masked, turned into exp(x - max);
/// inv[r] = 1 / their sum. The scale, select, mask and running maximum are applied as each
/// block of scores leaves the registers, and the R rows' exponentials interleave (R independent
/// chains instead of one row's).
template <int R>
void scores_softmax(const geometry& g, const head_view& h, int64_t i, float* inv) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 mx[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) mx[r] = lowest;
  for (int64_t n0 = 0; n0 < h.np; n0 += 16 * max_chunks) {
    __m512 acc[R][max_chunks];
    const int64_t chunks = std::min<int64_t>(max_chunks, (h.np - n0) / 16);
    switch (chunks) {
    case 1: score_block<R, 1>(g, h, i, n0, acc); break;
    case 2: score_block<R, 2>(g, h, i, n0, acc); break;
    case 3: score_block<R, 3>(g, h, i, n0, acc); break;
    default: score_block<R, max_chunks>(g, h, i, n0, acc); break;
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t n = n0 + 16 * c;
        const __mmask16 live = first_lanes(g.keys - n);
        const __m512 x = masked_scores(g, h, i + r, n, live, acc[r][c]);
        _mm512_storeu_ps(h.scores + r * h.np + n, x);
        mx[r] = _mm512_mask_max_ps(mx[r], live, mx[r], x);
      }
  }
  __m512 top[R], sum[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    top[r] = _mm512_set1_ps(_mm512_reduce_max_ps(mx[r]));
    sum[r] = _mm512_setzero_ps();
  }
  for (int64_t n0 = 0; n0 < g.keys; n0 += 16) {
    const __mmask16 live = first_lanes(g.keys - n0);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      float* s = h.scores + r * h.np + n0;
      const __m512 e = _mm512_maskz_mov_ps(live, exp512(_mm512_sub_ps(_mm512_loadu_ps(s), top[r])));
      _mm512_storeu_ps(s, e);
      sum[r] = _mm512_add_ps(sum[r], e);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) inv[r] = 1.0f / _mm512_reduce_add_ps(sum[r]);
}

/// y rows i .. i+R-1, value elements [e0, e0 + 16 C): the probabilities times V's rows.
template <int R, int C>
void times_values(const geometry& g, const head_view& h, int64_t i, int64_t e0, const float* inv) {
  __m512 acc[R][C];
  __mmask16 live[C];
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c) {
    live[c] = first_lanes(g.vdepth - e0 - 16 * c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][c] = _mm512_setzero_ps();
  }
  for (int64_t n = 0; n < g.keys; ++n) {
    const float* vr = h.v + n * h.v_row + e0;
    __m512 vc[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) vc[c] = _mm512_maskz_loadu_ps(live[c], vr + 16 * c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 p = _mm512_set1_ps(h.scores[r * h.np + n]);
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(p, vc[c], acc[r][c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* yr = h.y + (i + r) * g.y[2];
    const __m512 s = _mm512_set1_ps(inv[r]);
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const __m512 out = _mm512_mul_ps(acc[r][c], s);
      if (g.y[3] == 1) {
        _mm512_mask_storeu_ps(yr + e0 + 16 * c, live[c], out);
      } else {
        alignas(64) float o16[16];
        _mm512_store_ps(o16, out);
        for (int64_t j = 0; j < std::min<int64_t>(16, g.vdepth - e0 - 16 * c); ++j) yr[(e0 + 16 * c + j) * g.y[3]] = o16[j];
      }
    }
  }
}

template <int R> void rows_block(const geometry& g, const head_view& h, int64_t i) {
  float inv[R];
  scores_softmax<R>(g, h, i, inv);
  for (int64_t e0 = 0; e0 < g.vdepth; e0 += 16 * max_chunks) {
    switch (std::min<int64_t>(max_chunks, (g.vdepth - e0 + 15) / 16)) {
    case 1: times_values<R, 1>(g, h, i, e0, inv); break;
    case 2: times_values<R, 2>(g, h, i, e0, inv); break;
    case 3: times_values<R, 3>(g, h, i, e0, inv); break;
    default: times_values<R, max_chunks>(g, h, i, e0, inv); break;
    }
  }
}

/// Rows [i0, i1) of one batch and head.
void task(const geometry& g, const float* q, const float* k, const float* v, const float* mask, const bool* keep,
          float* y, int64_t b, int64_t hd, int64_t i0, int64_t i1) {
  thread_local std::vector<float> kt, vp, scores;
  head_view h{};
  h.np = (g.keys + 15) / 16 * 16;
  const float* kb = k + b * g.k[0] + hd * g.k[1];
  kt.resize(static_cast<std::size_t>(g.depth * h.np));
  float* kp = kt.data();
  if (g.k[3] == 1) {
    // 16 keys x 16 elements at a time, transposed in registers; keys past the end read as 0.
    for (int64_t n0 = 0; n0 < h.np; n0 += 16)
      for (int64_t d0 = 0; d0 < g.depth; d0 += 16) {
        const __mmask16 cols = first_lanes(g.depth - d0);
        __m512 r[16];
#pragma GCC unroll 16
        for (int64_t j = 0; j < 16; ++j)
          r[j] = n0 + j < g.keys ? _mm512_maskz_loadu_ps(cols, kb + (n0 + j) * g.k[2] + d0) : _mm512_setzero_ps();
        transpose16(r);
        for (int64_t j = 0; j < std::min<int64_t>(16, g.depth - d0); ++j) _mm512_storeu_ps(kp + (d0 + j) * h.np + n0, r[j]);
      }
  } else {
    for (int64_t n = 0; n < g.keys; ++n)
      for (int64_t d = 0; d < g.depth; ++d) kp[d * h.np + n] = kb[n * g.k[2] + d * g.k[3]];
    for (int64_t d = 0; d < g.depth; ++d) std::fill(kp + d * h.np + g.keys, kp + (d + 1) * h.np, 0.0f);
  }
  const float* vb = v + b * g.v[0] + hd * g.v[1];
  if (g.v[3] == 1) {
    h.v = vb;
    h.v_row = g.v[2];
  } else {
    vp.resize(static_cast<std::size_t>(g.keys * g.vdepth));
    for (int64_t n = 0; n < g.keys; ++n)
      for (int64_t e = 0; e < g.vdepth; ++e) vp[static_cast<std::size_t>(n * g.vdepth + e)] = vb[n * g.v[2] + e * g.v[3]];
    h.v = vp.data();
    h.v_row = g.vdepth;
  }
  scores.resize(static_cast<std::size_t>(max_rows * h.np));
  h.q = q + b * g.q[0] + hd * g.q[1];
  h.kt = kt.data();
  h.mask = mask ? mask + b * g.m[0] + hd * g.m[1] : nullptr;
  h.keep = keep ? keep + b * g.keep[0] + hd * g.keep[1] : nullptr;
  h.y = y + b * g.y[0] + hd * g.y[1];
  h.scores = scores.data();
  int64_t i = i0;
  for (; i + max_rows <= i1; i += max_rows) rows_block<max_rows>(g, h, i);
  switch (i1 - i) {
  case 5: rows_block<5>(g, h, i); break;
  case 4: rows_block<4>(g, h, i); break;
  case 3: rows_block<3>(g, h, i); break;
  case 2: rows_block<2>(g, h, i); break;
  case 1: rows_block<1>(g, h, i); break;
  default: break;
  }
}

} // namespace

void attention_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const geometry g = geometry_of(ctx.op);
  const float* q = in[0].data<float>();
  const float* k = in[1].data<float>();
  const float* v = in[2].data<float>();
  const float* mask = in.size() > 3 && !in[3].empty() ? in[3].data<float>() : nullptr;
  const bool* keep = in.size() > 4 && !in[4].empty() ? in[4].data<bool>() : nullptr;
  float* y = out[0].data<float>();
  const int64_t heads = g.batch * g.heads;
  const bool big = g.rows * g.keys * (g.depth + g.vdepth) * heads > (int64_t{1} << 16) && team_worth(true);
  // Rows are split only where the heads alone leave threads idle: each task packs its K^T.
  const int64_t threads = big ? team_threads() : 1;
  const int64_t chunks = std::min(std::max<int64_t>(1, (threads + heads - 1) / heads), (g.rows + max_rows - 1) / max_rows);
  const int64_t per_chunk = (g.rows + chunks - 1) / chunks;
  TROUPE_TEAM_FOR(t, heads * chunks, big && heads * chunks > 1, {
    const int64_t bh = t / chunks, c = t % chunks;
    task(g, q, k, v, mask, keep, y, bh / g.heads, bh % g.heads, c * per_chunk, std::min(g.rows, (c + 1) * per_chunk));
  });
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
