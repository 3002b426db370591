#pragma once
/// One row of the integer products' epilogue (integer_matmul.hpp) on AVX-512: the s32 sums less
/// the zero points' terms, as float times the scale, plus the bias, and then, where the model
/// has one after the bias, Gelu, 16 columns at a time. The generic pass ran about 1 element
/// per ns (SSE2: the library's baseline), and a separate Gelu read and wrote the row again:
/// bert_tiny_int8 at 64 tokens spent 0.27 ms in its 24 epilogues and 0.23 ms in its 4 Gelus
/// of 2.2 ms.
///
/// Up to the bias the values are bit for bit the generic pass's (float(acc) * scale, then a
/// separate + bias: no fused multiply-add); the Gelu is avx512_gelu.hpp's. Call only where the
/// CPU has AVX-512 (native_avx512_available()).
#include <cstdint>

#include "kernels/cpu/avx512_gelu.hpp"

namespace troupe::kernels::cpu {

struct epilogue_row {
  const int32_t* acc = nullptr; ///< the row's s32 sums, n of them
  float* y = nullptr;           ///< n results
  int64_t n = 0;
  int32_t az = 0;               ///< the activation's zero point
  const int32_t* column_sums = nullptr; ///< [n]: times az, taken off
  const int32_t* weight_zp = nullptr;   ///< [n] or null: times rs, taken off
  int32_t rs = 0;                       ///< the row's activation sum less K az
  const float* scale = nullptr;         ///< [n] when per_column, else null (s0 for all)
  float s0 = 1.f;
  const float* bias = nullptr;          ///< [n] or null
  const float* residual = nullptr;      ///< [n] added after the bias, or null (with no Gelu)
};

void integer_epilogue_row_512(const epilogue_row& r, epilogue_activation act);

} // namespace troupe::kernels::cpu
