/// The native GRU step's kernel on AVX-512 (gru.hpp). The input products of every time step as
/// one GEMM over the team, then per direction (a thread each), per time step and sequence, the
/// z and r gates' recurrent product, the candidate's and the new state (avx512_recurrent.hpp). ONNX's gate
/// order (z, r, h) is kept; columns past the real ones (to whole blocks) hold zeros.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/avx512_recurrent.hpp"
#include "kernels/cpu/gru.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/lane_mask.hpp"
#include "kernels/cpu/native_recurrent.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

namespace {

struct geometry : recurrent_geometry {
  explicit geometry(const std::vector<int64_t>& a) : recurrent_geometry(a), linear_before_reset(a.at(7) != 0) {}
  bool linear_before_reset;
};

struct weights {
  const float *wt, *rzr, *rh, *bias, *rb;
};

} // namespace

TROUPE_ISA_BEGIN("avx512f")

namespace {

using namespace avx512_recurrent;

/// One direction over the whole sequence; `pre` its input products [T * N, G'].
void direction(const geometry& g, int64_t d, const float* pre, weights w, const float* h0, float* y, float* yh) {
  const int64_t T = g.T, N = g.N, H = g.H;
  const int64_t gzr = padded_gate_columns(2 * H), gh = padded_gate_columns(H), gp = gzr + gh;
  thread_local std::vector<float> state;
  state.resize(static_cast<std::size_t>(N * H + gzr + 2 * gh + H));
  float* hs = state.data();
  float* zr = hs + N * H;  ///< z and r pre-activations, then (after the product) z and r
  float* cand = zr + gzr;  ///< the candidate's product
  float* rh = cand + gh;   ///< r * h (without linear_before_reset)
  w.rzr += d * H * gzr;
  w.rh += d * H * gh;
  w.rb += d * gh;
  g.load_states(d, h0, hs);
  std::fill(rh, rh + gh, 0.0f);
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = g.backwards(d) ? T - 1 - s : s;
    for (int64_t n = 0; n < N; ++n) {
      const float* p = pre + (t * N + n) * gp;
      float* h = hs + n * H;
      std::copy_n(p, gzr, zr);
      recurrent_product(h, w.rzr, H, gzr, zr);
      for (int64_t k = 0; k < H; k += 16) { // z, r
        const __mmask16 m = first_lanes(H - k);
        _mm512_mask_storeu_ps(zr + k, m, sigmoid16(_mm512_maskz_loadu_ps(m, zr + k)));
        const __m512 r = sigmoid16(_mm512_maskz_loadu_ps(m, zr + H + k));
        _mm512_mask_storeu_ps(zr + H + k, m, r);
        if (!g.linear_before_reset) _mm512_mask_storeu_ps(rh + k, m, _mm512_mul_ps(r, _mm512_maskz_loadu_ps(m, h + k)));
      }
      if (g.linear_before_reset) { // r * (h R^T + Rb), added to the input product below
        std::copy_n(w.rb, gh, cand);
        recurrent_product(h, w.rh, H, gh, cand);
      } else { // (r * h) R^T, on top of the input product (which holds Rb)
        std::copy_n(p + gzr, gh, cand);
        recurrent_product(rh, w.rh, H, gh, cand);
      }
      for (int64_t k = 0; k < H; k += 16) {
        const __mmask16 m = first_lanes(H - k);
        __m512 c = _mm512_maskz_loadu_ps(m, cand + k);
        if (g.linear_before_reset)
          c = _mm512_add_ps(_mm512_maskz_loadu_ps(m, p + gzr + k), _mm512_mul_ps(_mm512_maskz_loadu_ps(m, zr + H + k), c));
        const __m512 z = _mm512_maskz_loadu_ps(m, zr + k);
        const __m512 hn = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(one, z), tanh16(c)), _mm512_mul_ps(z, _mm512_maskz_loadu_ps(m, h + k)));
        _mm512_mask_storeu_ps(h + k, m, hn);
      }
      if (y) std::copy_n(h, H, y + g.y_row(t, n, d));
    }
  }
  g.store_states(d, hs, yh);
}

} // namespace

void gru_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const geometry g(ctx.op.attr_ints(gru_geometry_attr));
  const weights w{floats_or_null(in[1]), floats_or_null(in[2]), floats_or_null(in[3]), floats_or_null(in[4]), floats_or_null(in[5])};
  const float *x = floats_or_null(in[0]), *h0 = floats_or_null(in, 6);
  float *y = floats_or_null(out, 0), *yh = floats_or_null(out, 1);
  const bool big = g.T * g.N * 3 * g.H * (g.I + g.H) > (int64_t{1} << 16);
  const int64_t gp = padded_gate_columns(2 * g.H) + padded_gate_columns(g.H);
  const float* pre = TROUPE_INPUT_PRODUCTS(g, x, w.wt, w.bias, gp, big);
  // Directions on threads of their own (each keeps its R^T in its core's cache).
  TROUPE_TEAM_FOR(d, g.D, big && g.D > 1, direction(g, d, pre + d * g.T * g.N * gp, w, h0, y, yh));
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
