/// The native LSTM step's kernel on AVX-512 (lstm.hpp). The input products of every time step
/// as one GEMM over the team, then per direction (a thread each), per time step and sequence,
/// the recurrent product and the cell (avx512_recurrent.hpp). ONNX's gate order (i, o, f, c) is
/// kept: gate g of unit k is column g*H + k; the columns past 4H (to whole blocks) hold zeros
/// and are never read by the cell.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/avx512_recurrent.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/lane_mask.hpp"
#include "kernels/cpu/lstm.hpp"
#include "kernels/cpu/native_recurrent.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

namespace {

struct geometry : recurrent_geometry {
  using recurrent_geometry::recurrent_geometry;
  int64_t G() const { return 4 * H; } ///< gate columns
};

} // namespace

TROUPE_ISA_BEGIN("avx512f")

namespace {

using namespace avx512_recurrent;

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

/// One direction over the whole sequence; `pre` its input products [T * N, Gp].
void direction(const geometry& g, int64_t d, const float* pre, const float* rt, const float* h0, const float* c0, float* y,
               float* yh, float* yc) {
  const int64_t T = g.T, N = g.N, H = g.H, Gp = padded_gate_columns(g.G());
  thread_local std::vector<float> state;
  state.resize(static_cast<std::size_t>(2 * N * H + Gp));
  float* hs = state.data();
  float* cs = hs + N * H;
  float* gates = cs + N * H;
  // Row t*N + n of `pre`: time step t of sequence n.
  rt += d * H * Gp;
  g.load_states(d, h0, hs);
  g.load_states(d, c0, cs);
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = g.backwards(d) ? T - 1 - s : s;
    for (int64_t n = 0; n < N; ++n) {
      std::copy_n(pre + (t * N + n) * Gp, Gp, gates);
      recurrent_product(hs + n * H, rt, H, Gp, gates);
      cell(gates, H, hs + n * H, cs + n * H);
      if (y) std::copy_n(hs + n * H, H, y + g.y_row(t, n, d));
    }
  }
  g.store_states(d, hs, yh);
  g.store_states(d, cs, yc);
}

} // namespace

void lstm_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const geometry g(ctx.op.attr_ints(lstm_geometry_attr));
  const float *x = floats_or_null(in[0]), *wt = floats_or_null(in[1]), *rt = floats_or_null(in[2]), *bias = floats_or_null(in[3]);
  const float *h0 = floats_or_null(in, 4), *c0 = floats_or_null(in, 5);
  float *y = floats_or_null(out, 0), *yh = floats_or_null(out, 1), *yc = floats_or_null(out, 2);
  const bool big = g.T * g.N * g.G() * (g.I + g.H) > (int64_t{1} << 16);
  const int64_t Gp = padded_gate_columns(g.G());
  const float* pre = TROUPE_INPUT_PRODUCTS(g, x, wt, bias, Gp, big);
  // Directions on threads of their own (each keeps its R^T in its core's cache).
  TROUPE_TEAM_FOR(d, g.D, big && g.D > 1, direction(g, d, pre + d * g.T * g.N * Gp, rt, h0, c0, y, yh, yc));
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
