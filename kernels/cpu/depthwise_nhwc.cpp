/// Depthwise 2-D convolution of channels-last (nhwc) bf16 maps on AVX512_BF16 (native_ops.hpp):
/// each input row of a 16-channel block becomes once a row of column pairs, then every output
/// takes two kernel taps per vdpbf16ps, 16 channels at a time, f32 accumulation; zero columns
/// around the pair row stand for the padding, so no output needs a border case.
#include <algorithm>
#include <cstdint>
#include <vector>
#include <immintrin.h>

#include "kernels/cpu/avx512_exp.hpp"
#include "kernels/cpu/avx512_bf16.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

bool native_bf16_available() { return __builtin_cpu_supports("avx512bf16"); }

bool is_native_depthwise_shape(int64_t channels, int64_t kh, int64_t kw, int64_t sh, int64_t sw) {
  // Building the pair rows costs about what 3x3 or strided-width kernels then save (det 640's
  // 3x3 stride-2 convolutions took twice oneDNN's time): 5x5 and 7x7, width stride 1 only.
  return channels % 16 == 0 && kh >= 1 && kh <= 7 && (kw == 5 || kw == 7) && (sh == 1 || sh == 2) && sw == 1;
}

// Compiled for AVX512_BF16; runs only where native_bf16_available() holds.
TROUPE_ISA_BEGIN("avx512f,avx512bw,avx512vl,avx512bf16")

namespace {

struct geometry {
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, pt, pl;
};

/// The post-op chain (triples of code, alpha, beta: native_ops.hpp) on S vectors: one switch
/// and one broadcast per op for the whole strip.
template <int S>
inline void post(__m512 (&v)[S], const float* ops, std::size_t count) {
  for (std::size_t k = 0; k + 2 < count; k += 3) {
    const __m512 a = _mm512_set1_ps(ops[k + 1]), b = _mm512_set1_ps(ops[k + 2]);
    switch (static_cast<int>(ops[k])) {
    case dw_post_relu:
      for (int o = 0; o < S; ++o)
        v[o] = _mm512_mask_mul_ps(v[o], _mm512_cmp_ps_mask(v[o], _mm512_setzero_ps(), _CMP_LT_OQ), v[o], a);
      break;
    case dw_post_linear:
      for (int o = 0; o < S; ++o) v[o] = _mm512_fmadd_ps(v[o], a, b);
      break;
    case dw_post_clip:
      for (int o = 0; o < S; ++o) v[o] = _mm512_min_ps(_mm512_max_ps(v[o], a), b);
      break;
    case dw_post_hardswish: {
      const __m512 three = _mm512_set1_ps(3.0f), six = _mm512_set1_ps(6.0f), sixth = _mm512_set1_ps(1.0f / 6.0f);
      for (int o = 0; o < S; ++o) {
        const __m512 r6 = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v[o], three), _mm512_setzero_ps()), six);
        v[o] = _mm512_mul_ps(v[o], _mm512_mul_ps(r6, sixth));
      }
      break;
    }
    case dw_post_logistic: {
      const __m512 one = _mm512_set1_ps(1.0f);
      for (int o = 0; o < S; ++o)
        v[o] = _mm512_div_ps(one, _mm512_add_ps(one, exp512(_mm512_sub_ps(_mm512_setzero_ps(), v[o]))));
      break;
    }
    default: break;
    }
  }
}

/// A row of input pairs for one 16-channel block: entry q holds, per channel, the bf16 values of
/// input columns q - pl and q - pl + 1 (zero outside the row) in one 32-bit lane, what
/// vdpbf16ps multiplies by a pair of kernel taps. Entries [0, qw).
void pair_row(const geometry& g, const uint16_t* x_row, int64_t c0, int64_t qw, uint32_t* out) {
  const auto widen = [&](int64_t col) {
    if (col < 0 || col >= g.w) return _mm512_setzero_si512();
    return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x_row + col * g.c + c0)));
  };
  __m512i cur = widen(-g.pl);
  for (int64_t q = 0; q < qw; ++q) {
    const __m512i next = widen(q - g.pl + 1);
    _mm512_storeu_si512(out + q * 16, _mm512_or_si512(cur, _mm512_slli_epi32(next, 16)));
    cur = next;
  }
}

/// S outputs of one row from the pair rows (`rows[i]`: kernel row i, or null outside the input)
/// and the packed tap pairs of this channel block.
template <int NP, int S>
inline void outputs(const uint32_t* const* rows, int64_t kh, const uint32_t* wpairs, __m512 bias, const float* ops,
                    std::size_t nops, int64_t o0, uint16_t* y, int64_t y_stride) {
  __m512 acc[S];
  for (int o = 0; o < S; ++o) acc[o] = bias;
  for (int64_t i = 0; i < kh; ++i) {
    if (!rows[i]) continue;
    for (int k = 0; k < NP; ++k) {
      const __m512bh wv = reinterpret_cast<__m512bh>(_mm512_loadu_si512(wpairs + (i * NP + k) * 16));
      const uint32_t* p = rows[i] + (o0 + 2 * k) * 16;
      for (int o = 0; o < S; ++o)
        acc[o] = _mm512_dpbf16_ps(acc[o], reinterpret_cast<__m512bh>(_mm512_loadu_si512(p + o * 16)), wv);
    }
  }
  post<S>(acc, ops, nops);
  for (int o = 0; o < S; ++o) store_bf16x16(y + (o0 + o) * y_stride, acc[o]);
}

template <int KW>
void run(const geometry& g, const uint16_t* x, uint16_t* y, const uint32_t* wpack, const float* bias, const float* ops,
         std::size_t nops) {
  constexpr int NP = (KW + 1) / 2, S = 16; // enough accumulators to hide vdpbf16ps' latency
  const int64_t qw = g.ow - 1 + 2 * (NP - 1) + 1; // pair entries an output row reads
  const int64_t blocks = g.c / 16, chunk = 16, chunks = (g.oh + chunk - 1) / chunk;
  // Each thread of the team (or the calling thread alone) keeps its own ring.
  auto share = [&] {
    // Pair rows of the current block, one slot per kernel row (input row ih in slot ih % kh).
    // 64-byte aligned: every pair entry is one cache line, never split across two.
    std::vector<uint32_t> ring_mem(static_cast<std::size_t>(g.kh * qw * 16 + 16));
    uint32_t* ring = ring_mem.data() + (16 - (reinterpret_cast<uintptr_t>(ring_mem.data()) / 4) % 16) % 16;
    std::vector<int64_t> held(static_cast<std::size_t>(g.kh));
    std::vector<const uint32_t*> rows(static_cast<std::size_t>(g.kh));
#pragma omp for collapse(3) schedule(static)
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t cb = 0; cb < blocks; ++cb)
        for (int64_t ch = 0; ch < chunks; ++ch) {
          const int64_t c0 = cb * 16;
          const uint32_t* wb = wpack + cb * g.kh * NP * 16;
          const __m512 bv = _mm512_loadu_ps(bias + c0);
          std::fill(held.begin(), held.end(), int64_t{-1});
          for (int64_t oh = ch * chunk; oh < std::min(g.oh, (ch + 1) * chunk); ++oh) {
            for (int64_t i = 0; i < g.kh; ++i) {
              const int64_t ih = oh * g.sh - g.pt + i;
              if (ih < 0 || ih >= g.h) {
                rows[static_cast<std::size_t>(i)] = nullptr;
                continue;
              }
              const auto slot = static_cast<std::size_t>(ih % g.kh);
              uint32_t* r = ring + slot * static_cast<std::size_t>(qw * 16);
              if (held[slot] != ih) {
                pair_row(g, x + (b * g.h + ih) * g.w * g.c, c0, qw, r);
                held[slot] = ih;
              }
              rows[static_cast<std::size_t>(i)] = r;
            }
            uint16_t* yr = y + (b * g.oh + oh) * g.ow * g.c + c0;
            int64_t o = 0;
            for (; o + S <= g.ow; o += S) outputs<NP, S>(rows.data(), g.kh, wb, bv, ops, nops, o, yr, g.c);
            for (; o < g.ow; ++o) outputs<NP, 1>(rows.data(), g.kh, wb, bv, ops, nops, o, yr, g.c);
          }
        }
  };
  if (team_worth(true)) {
#pragma omp parallel
    share();
  } else {
    share();
  }
}

} // namespace

void pack_depthwise_pairs(const float* w, int64_t channels, int64_t kh, int64_t kw, uint32_t* out) {
  const int64_t np = (kw + 1) / 2;
  const auto bf16 = [](float v) { return static_cast<uint32_t>(round_to_bf16(v)); };
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t k = 0; k < np; ++k) {
        const float lo = w[(c * kh + i) * kw + 2 * k];
        const float hi = 2 * k + 1 < kw ? w[(c * kh + i) * kw + 2 * k + 1] : 0.0f;
        out[(((c / 16) * kh + i) * np + k) * 16 + c % 16] = bf16(lo) | (bf16(hi) << 16);
      }
}

void depthwise_nhwc_bf16(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto geo = ctx.op.attr_ints(depthwise_geometry_attr);
  const auto ops = ctx.op.attr_floats(depthwise_post_ops_attr);
  const auto& xs = in[0].get_shape();
  const auto& ys = out[0].get_shape();
  const geometry g{xs[0], xs[1], xs[2], xs[3], ys[2], ys[3], geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]};
  const auto* x = static_cast<const uint16_t*>(in[0].data());
  auto* y = static_cast<uint16_t*>(out[0].data());
  const auto* wp = static_cast<const uint32_t*>(in[1].data());
  const float* bias = in[2].data<float>();
  if (g.kw == 5) run<5>(g, x, y, wp, bias, ops.data(), ops.size());
  else run<7>(g, x, y, wp, bias, ops.data(), ops.size());
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
