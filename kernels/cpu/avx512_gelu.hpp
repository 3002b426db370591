#pragma once
/// Gelu on 16 floats, for native AVX-512 kernels that take the Gelu after a product's bias
/// into their pass (the integer products' epilogue): the erf form through Abramowitz and Stegun's 7.1.26 (absolute error under
/// 1.5e-7), taken as erfc for negative arguments so that small results keep their relative
/// accuracy; the tanh form as x * sigmoid(2u). Call only where the CPU has AVX-512.
#include <immintrin.h>

#include "kernels/cpu/avx512_exp.hpp"

namespace troupe::kernels::cpu {

/// What a native epilogue applies after the bias.
enum class epilogue_activation { none, gelu_erf, gelu_tanh };

/// 0.5 x (1 + erf(x / sqrt 2)), with 1 + erf(z) = 2 - erfc(|z|) for z >= 0, erfc(|z|) for z < 0.
[[gnu::target("avx512f")]] inline __m512 gelu_erf512(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.f);
  const __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f));
  const __m512 a = _mm512_abs_ps(z);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), a, one));
  __m512 p = _mm512_set1_ps(1.061405429f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
  const __m512 erfc = _mm512_mul_ps(_mm512_mul_ps(p, t), exp512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(a, a))));
  const __mmask16 negative = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_LT_OS);
  const __m512 one_plus_erf = _mm512_mask_blend_ps(negative, _mm512_sub_ps(_mm512_set1_ps(2.f), erfc), erfc);
  return _mm512_mul_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.5f)), one_plus_erf);
}

/// 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2 / pi) (x + 0.044715 x^3).
[[gnu::target("avx512f")]] inline __m512 gelu_tanh512(__m512 x) {
  const __m512 x2 = _mm512_mul_ps(x, x);
  const __m512 u = _mm512_mul_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.7978845608028654f)),
                                 _mm512_fmadd_ps(x2, _mm512_set1_ps(0.044715f), _mm512_set1_ps(1.f)));
  const __m512 e = exp512(_mm512_mul_ps(u, _mm512_set1_ps(-2.f)));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.f), e));
}

} // namespace troupe::kernels::cpu
