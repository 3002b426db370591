#include "kernels/cpu/packed_gemm_f32.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/row_tiles.hpp"

namespace troupe::kernels::cpu {

namespace {
constexpr int64_t panel_cols = 16;
constexpr int max_rows = 6; ///< 12 accumulators, 2 weight vectors, 1 broadcast: 15 ymm
} // namespace

// The kernel alone is built for AVX2 and FMA (what runs it checks packed_gemm_f32_here).
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace {

struct gemm_args {
  const float* a = nullptr;
  int64_t rows = 0, k = 0, n = 0;
  const float* panels = nullptr;
  float* y = nullptr;
};

/// `next`: the panel after this one, fetched into the cache a row (64 bytes) per k while the
/// first rows of this one are computed (non-null only there): a panel streams from memory once.
template <int R> void rows_of_panel(const gemm_args& g, int64_t p, int64_t r0, const float* next) {
  const float* panel = g.panels + p * g.k * panel_cols;
  const float* a = g.a + r0 * g.k;
  __m256 c[R][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) c[r][0] = c[r][1] = _mm256_setzero_ps();
  const int64_t k = g.k;
  for (int64_t t = 0; t < k; ++t) {
    const __m256 b0 = _mm256_loadu_ps(panel + panel_cols * t), b1 = _mm256_loadu_ps(panel + panel_cols * t + 8);
    if (next) _mm_prefetch(reinterpret_cast<const char*>(next + panel_cols * t), _MM_HINT_T0);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * k + t);
      c[r][0] = _mm256_fmadd_ps(av, b0, c[r][0]);
      c[r][1] = _mm256_fmadd_ps(av, b1, c[r][1]);
    }
  }
  const int64_t c0 = p * panel_cols, cols = std::min(panel_cols, g.n - c0);
  // Unrolled, as every loop over c: an indexed c lives in memory, stored on every k.
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    float* y = g.y + (r0 + r) * g.n + c0;
    if (cols == panel_cols) {
      _mm256_storeu_ps(y, c[r][0]);
      _mm256_storeu_ps(y + 8, c[r][1]);
    } else {
      alignas(32) float v[panel_cols];
      _mm256_store_ps(v, c[r][0]);
      _mm256_store_ps(v + 8, c[r][1]);
      std::memcpy(y, v, static_cast<std::size_t>(cols) * sizeof(float));
    }
  }
}

void panel(const gemm_args& g, int64_t p, int64_t panels) {
  const float* next = p + 1 < panels ? g.panels + (p + 1) * g.k * panel_cols : nullptr;
  for_row_tiles<max_rows>(g.rows, [&](auto rows, int64_t r) { rows_of_panel<rows>(g, p, r, r == 0 ? next : nullptr); });
}

void packed_gemm_f32_kernel(const reference::context&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  gemm_args g;
  g.n = in[2].data<int64_t>()[0];
  g.rows = g.n ? static_cast<int64_t>(out[0].get_size()) / g.n : 0;
  g.k = g.rows ? static_cast<int64_t>(in[0].get_size()) / g.rows : 0;
  g.a = in[0].data<float>();
  g.panels = in[1].data<float>();
  g.y = out[0].data<float>();
  const int64_t panels = (g.n + panel_cols - 1) / panel_cols;
#pragma omp parallel for schedule(static) if (g.rows * g.n * g.k > (1 << 18))
  for (int64_t p = 0; p < panels; ++p) panel(g, p, panels);
}

} // namespace
#pragma GCC pop_options

bool packed_gemm_f32_here() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !__builtin_cpu_supports("avx512f");
}

bool packed_gemm_f32_pays(int64_t rows, int64_t k, int64_t n) { return rows >= 1 && k >= 1 && n >= 4096; }

Tensor pack_f32_panels(const float* b, int64_t k, int64_t n) {
  const int64_t panels = (n + panel_cols - 1) / panel_cols;
  Tensor t(element_type::f32, Shape{panels, k, panel_cols});
  float* d = t.data<float>();
  std::fill(d, d + t.get_size(), 0.f);
  for (int64_t row = 0; row < k; ++row)
    for (int64_t j = 0; j < n; ++j) d[((j / panel_cols) * k + row) * panel_cols + j % panel_cols] = b[row * n + j];
  return t;
}

reference::kernel_fn packed_gemm_f32() { return packed_gemm_f32_kernel; }

} // namespace troupe::kernels::cpu
