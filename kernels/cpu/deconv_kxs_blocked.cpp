/// The no-overlap ConvTranspose (kernel == stride) reading its input in oneDNN's nChw16c layout,
/// AVX-512. det's head feeds it a blocked BatchNormalization output: reading that in place
/// saves a reorder to plain (0.8 ms of det 640's ~16 ms on this machine).
#include "kernels/cpu/avx512_transpose.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/team.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace troupe::kernels::cpu {

bool native_avx512_available() { return __builtin_cpu_supports("avx512f"); }

// Everything below is compiled for AVX-512 and runs only where the check above holds.
TROUPE_ISA_BEGIN("avx512f")

namespace {

/// One 16-pixel x 16-channel tile of the blocked input as f32 (zeros past the row's end).
template <bool Bf16>
void load_tile(const void* src, int64_t px, __m512 r[16]) {
  for (int64_t p = 0; p < 16; ++p) {
    if (p >= px) {
      r[p] = _mm512_setzero_ps();
    } else if constexpr (Bf16) {
      // bf16 is the high half of an f32: widen and shift.
      const __m256i h = _mm256_loadu_si256(static_cast<const __m256i*>(src) + p);
      r[p] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else {
      r[p] = _mm512_loadu_ps(static_cast<const float*>(src) + p * 16);
    }
  }
}

template <bool Bf16, bool Prologue>
void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto& xs = in[0].get_shape();
  const auto& ws = in[1].get_shape();
  const int64_t n_batch = xs[0], c_in = xs[1], h = xs[2], w = xs[3], m_out = ws[1], k = ws[2];
  const int64_t blocks = (c_in + 15) / 16, cols = m_out * k * k;
  // The input buffer holds [n][block][h][w][16] (channels past c_in are padding, never read).
  const auto* x = static_cast<const unsigned char*>(in[0].data());
  const int64_t elem = Bf16 ? 2 : 4;
  const float* wt = in[1].data<float>();
  const float* bias = in.size() > 2 && !in[2].empty() ? in[2].data<float>() : nullptr;
  // The prologue's per-channel scale and shift, padded to whole blocks.
  const float* pro_scale = Prologue ? in[3].data<float>() : nullptr;
  const float* pro_shift = Prologue ? in[4].data<float>() : nullptr;
  float* y = out[0].data<float>();
  const int64_t oh = h * k, ow = w * k;
  constexpr int64_t chunk = 8; // output columns (m, ky, kx) per pass: 8 accumulators + 16 tile registers
  auto input_row = [&](int64_t n, int64_t i) {
    for (int64_t j0 = 0; j0 < w; j0 += 16) {
      const int64_t px = std::min<int64_t>(16, w - j0);
      for (int64_t c0 = 0; c0 < cols; c0 += chunk) {
        const int64_t nc = std::min(chunk, cols - c0);
        __m512 acc[chunk];
        for (int64_t q = 0; q < nc; ++q) acc[q] = _mm512_set1_ps(bias ? bias[(c0 + q) / (k * k)] : 0.0f);
        for (int64_t b = 0; b < blocks; ++b) {
          __m512 r[16];
          load_tile<Bf16>(x + (((n * blocks + b) * h + i) * w + j0) * 16 * elem, px, r);
          if constexpr (Prologue) {
            // Each tile row is one pixel's 16 channels: the per-channel affine and Relu are
            // one vector each, before the transpose.
            const __m512 sc = _mm512_loadu_ps(pro_scale + b * 16), sh = _mm512_loadu_ps(pro_shift + b * 16);
            for (int64_t p = 0; p < px; ++p) r[p] = _mm512_max_ps(_mm512_fmadd_ps(r[p], sc, sh), _mm512_setzero_ps());
          }
          transpose16(r);
          const int64_t valid = std::min<int64_t>(16, c_in - b * 16);
          for (int64_t c = 0; c < valid; ++c) {
            // W[c, m, ky, kx] at ((c * M + m) * k + ky) * k + kx = c * cols + column
            const float* wc = wt + (b * 16 + c) * cols + c0;
            for (int64_t q = 0; q < nc; ++q) acc[q] = _mm512_fmadd_ps(r[c], _mm512_set1_ps(wc[q]), acc[q]);
          }
        }
        alignas(64) float v[16];
        for (int64_t q = 0; q < nc; ++q) {
          const int64_t col = c0 + q, m = col / (k * k), ky = (col / k) % k, kx = col % k;
          _mm512_store_ps(v, acc[q]);
          float* yr = y + ((n * m_out + m) * oh + i * k + ky) * ow + j0 * k + kx;
          for (int64_t p = 0; p < px; ++p) yr[p * k] = v[p];
        }
      }
    }
  };
  if (h > 0) TROUPE_TEAM_FOR(t, n_batch * h, true, input_row(t / h, t % h));
}

} // namespace

void unit_overlap_conv_transpose_nchw16c(const reference::context& ctx, const std::vector<Tensor>& in,
                                         std::vector<Tensor>& out) {
  const bool bf16 = ctx.op.attr_int(blocked_bf16_attr, 0) != 0;
  const bool prologue = in.size() > 4;
  if (bf16)
    prologue ? run<true, true>(in, out) : run<true, false>(in, out);
  else
    prologue ? run<false, true>(in, out) : run<false, false>(in, out);
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
