#include "kernels/cpu/integer_epilogue_512.hpp"

#include <immintrin.h>

#include "kernels/cpu/avx512_gelu.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/lane_mask.hpp"

namespace troupe::kernels::cpu {

// Compiled for AVX-512; runs only where native_avx512_available() holds. (GCC 12 warns about
// the intrinsics' own undefined pass-through operands.)
TROUPE_ISA_BEGIN("avx512f")

namespace {

template <bool with_wz, bool per_column, bool with_bias, epilogue_activation act>
void row_512(const epilogue_row& r) {
  const __m512i az = _mm512_set1_epi32(r.az), rs = _mm512_set1_epi32(r.rs);
  const __m512 s0 = _mm512_set1_ps(r.s0);
  for (int64_t j = 0; j < r.n; j += 16) {
    const __mmask16 m = first_lanes(r.n - j);
    __m512i v = _mm512_maskz_loadu_epi32(m, r.acc + j);
    v = _mm512_sub_epi32(v, _mm512_mullo_epi32(az, _mm512_maskz_loadu_epi32(m, r.column_sums + j)));
    if constexpr (with_wz) v = _mm512_sub_epi32(v, _mm512_mullo_epi32(rs, _mm512_maskz_loadu_epi32(m, r.weight_zp + j)));
    // Rounded by each instruction, as the generic pass: the explicit-rounding forms are never
    // contracted into a fused multiply-add (the plain ones are, under GCC's default).
    constexpr int nearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    __m512 f;
    if constexpr (per_column) f = _mm512_mul_round_ps(_mm512_cvtepi32_ps(v), _mm512_maskz_loadu_ps(m, r.scale + j), nearest);
    else f = _mm512_mul_round_ps(_mm512_cvtepi32_ps(v), s0, nearest);
    if constexpr (with_bias) f = _mm512_add_round_ps(f, _mm512_maskz_loadu_ps(m, r.bias + j), nearest);
    if (r.residual) f = _mm512_add_round_ps(f, _mm512_maskz_loadu_ps(m, r.residual + j), nearest);
    if constexpr (act == epilogue_activation::gelu_erf) f = gelu_erf512(f);
    if constexpr (act == epilogue_activation::gelu_tanh) f = gelu_tanh512(f);
    _mm512_mask_storeu_ps(r.y + j, m, f);
  }
}

template <bool with_wz, bool per_column, bool with_bias>
void with_activation(const epilogue_row& r, epilogue_activation act) {
  switch (act) {
  case epilogue_activation::none: return row_512<with_wz, per_column, with_bias, epilogue_activation::none>(r);
  case epilogue_activation::gelu_erf: return row_512<with_wz, per_column, with_bias, epilogue_activation::gelu_erf>(r);
  case epilogue_activation::gelu_tanh: return row_512<with_wz, per_column, with_bias, epilogue_activation::gelu_tanh>(r);
  }
}

template <bool with_wz, bool per_column> void with_bias_or_not(const epilogue_row& r, epilogue_activation act) {
  if (r.bias) with_activation<with_wz, per_column, true>(r, act);
  else with_activation<with_wz, per_column, false>(r, act);
}

} // namespace

void integer_epilogue_row_512(const epilogue_row& r, epilogue_activation act) {
  if (r.weight_zp) r.scale ? with_bias_or_not<true, true>(r, act) : with_bias_or_not<true, false>(r, act);
  else r.scale ? with_bias_or_not<false, true>(r, act) : with_bias_or_not<false, false>(r, act);
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
