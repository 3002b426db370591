/// The RMS normalization step's kernel on AVX-512 (rms_norm.hpp).
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/lane_mask.hpp"
#include "kernels/cpu/rms_norm.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

TROUPE_ISA_BEGIN("avx512f")

void rms_norm_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const float eps = ctx.op.attr_float(rms_norm_epsilon_attr, 0.0f);
  const auto& xs = in[0].get_shape();
  const int64_t cols = xs.empty() ? 1 : xs.back(), rows = cols ? in[0].get_size() / cols : 0;
  const float* x = in[0].data<float>();
  const float* gamma = in.size() > 1 && !in[1].empty() ? in[1].data<float>() : nullptr;
  float* y = out[0].data<float>();
  auto one_row = [&](int64_t r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    __m512 sum = _mm512_setzero_ps();
    for (int64_t j = 0; j < cols; j += 16) {
      const __m512 v = _mm512_maskz_loadu_ps(first_lanes(cols - j), xr + j);
      sum = _mm512_fmadd_ps(v, v, sum);
    }
    // The reference's order: mean, + eps, sqrt, then a division per element.
    const __m512 s = _mm512_set1_ps(std::sqrt(_mm512_reduce_add_ps(sum) / static_cast<float>(cols) + eps));
    for (int64_t j = 0; j < cols; j += 16) {
      const __mmask16 m = first_lanes(cols - j);
      __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(m, xr + j), s);
      if (gamma) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, gamma + j));
      _mm512_mask_storeu_ps(yr + j, m, v);
    }
  };
  TROUPE_TEAM_FOR(r, rows, rows > 1 && rows * cols > 32768, one_row(r));
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
