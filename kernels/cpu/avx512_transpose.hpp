#pragma once
/// A 16 x 16 float transpose in registers, for the native AVX-512 kernels (the no-overlap
/// ConvTranspose's pixel tiles, the attention step's K^T). Call only where the CPU has AVX-512
/// (native_avx512_available()).
#include <immintrin.h>

#include "kernels/cpu/isa_region.hpp"

namespace troupe::kernels::cpu {

TROUPE_ISA_BEGIN("avx512f")

inline __m512 unpacklo_pd(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
inline __m512 unpackhi_pd(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}

/// r[0..15] (16 rows of 16) becomes its transpose: r[c] = element c of every row.
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = unpacklo_pd(t[i], t[i + 2]);
    r[i + 1] = unpackhi_pd(t[i], t[i + 2]);
    r[i + 2] = unpacklo_pd(t[i + 1], t[i + 3]);
    r[i + 3] = unpackhi_pd(t[i + 1], t[i + 3]);
  }
  // Each 128-bit lane now holds a 4x4 block transposed; the shuffles below move the lanes of
  // one column together.
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
    r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
    r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xdd);
  }
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
