#pragma once
/// exp on 16 floats for the native AVX-512 kernels: 2^n * p(r) with x = n ln2 + r, |r| <= ln2/2,
/// p the degree-6 Taylor polynomial (relative error about 2e-7, under float's own rounding of
/// the result), vscalefps for 2^n (underflows to zero, no integer tricks).
/// Call only where the CPU has AVX-512 (native_avx512_available()).
#include <immintrin.h>

namespace troupe::kernels::cpu {

[[gnu::target("avx512f")]] inline __m512 exp512(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(88.72f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln 2 in two parts (Cody and Waite): n * hi is exact, so r keeps its low bits.
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

} // namespace troupe::kernels::cpu
