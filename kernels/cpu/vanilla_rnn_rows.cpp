/// The native RNN step's kernel on AVX-512 (vanilla_rnn.hpp): the input products of every time
/// step as one GEMM over the team, then per direction (a thread each), per time step and
/// sequence, h = tanh(pre + h R^T) (avx512_recurrent.hpp).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/avx512_recurrent.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/lane_mask.hpp"
#include "kernels/cpu/native_recurrent.hpp"
#include "kernels/cpu/team.hpp"
#include "kernels/cpu/vanilla_rnn.hpp"

namespace troupe::kernels::cpu {

namespace {

} // namespace

TROUPE_ISA_BEGIN("avx512f")

namespace {

using namespace avx512_recurrent;

/// One direction over the whole sequence; `pre` its input products [T * N, Gp].
void direction(const recurrent_geometry& g, int64_t d, const float* pre, const float* rt, const float* h0, float* y, float* yh) {
  const int64_t T = g.T, N = g.N, H = g.H, Gp = padded_gate_columns(H);
  thread_local std::vector<float> state;
  state.resize(static_cast<std::size_t>(N * H + Gp));
  float* hs = state.data();
  float* gates = hs + N * H;
  rt += d * H * Gp;
  g.load_states(d, h0, hs);
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = g.backwards(d) ? T - 1 - s : s;
    for (int64_t n = 0; n < N; ++n) {
      float* h = hs + n * H;
      std::copy_n(pre + (t * N + n) * Gp, Gp, gates);
      recurrent_product(h, rt, H, Gp, gates);
      for (int64_t k = 0; k < H; k += 16) {
        const __mmask16 m = first_lanes(H - k);
        _mm512_mask_storeu_ps(h + k, m, tanh16(_mm512_maskz_loadu_ps(m, gates + k)));
      }
      if (y) std::copy_n(h, H, y + g.y_row(t, n, d));
    }
  }
  g.store_states(d, hs, yh);
}

} // namespace

void vanilla_rnn_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const recurrent_geometry g(ctx.op.attr_ints(vanilla_rnn_geometry_attr));
  const float *x = floats_or_null(in[0]), *wt = floats_or_null(in[1]), *rt = floats_or_null(in[2]), *bias = floats_or_null(in[3]);
  const float* h0 = floats_or_null(in, 4);
  float *y = floats_or_null(out, 0), *yh = floats_or_null(out, 1);
  const bool big = g.T * g.N * g.H * (g.I + g.H) > (int64_t{1} << 16);
  const int64_t Gp = padded_gate_columns(g.H);
  const float* pre = TROUPE_INPUT_PRODUCTS(g, x, wt, bias, Gp, big);
  // Directions on threads of their own (each keeps its R^T in its core's cache).
  TROUPE_TEAM_FOR(d, g.D, big && g.D > 1, direction(g, d, pre + d * g.T * g.N * Gp, rt, h0, y, yh));
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
