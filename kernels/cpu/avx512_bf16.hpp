#pragma once
/// bf16 <-> f32 for the native AVX-512 kernels: 16 values at a time (masked), and one value in
/// plain C++ for tails and weight packing. bf16 is the high half of an f32; f32 -> bf16 rounds
/// to nearest even, as vcvtneps2bf16 does. The vector forms need AVX512_BF16
/// (native_bf16_available()).
#include <cstdint>
#include <cstring>
#include <immintrin.h>

namespace troupe::kernels::cpu {

inline uint16_t round_to_bf16(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

[[gnu::target("avx512f,avx512bw,avx512vl")]] inline __m512 load_bf16x16(const uint16_t* p, __mmask16 m = 0xffff) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

[[gnu::target("avx512f,avx512bw,avx512vl,avx512bf16")]] inline void store_bf16x16(uint16_t* p, __m512 v,
                                                                                   __mmask16 m = 0xffff) {
  _mm256_mask_storeu_epi16(p, m, reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)));
}

} // namespace troupe::kernels::cpu
