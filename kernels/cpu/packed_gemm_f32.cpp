#include "kernels/cpu/packed_gemm_f32.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/panel_pair_store.hpp"
#include "kernels/cpu/row_tiles.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

namespace {
constexpr int64_t panel_cols = 16;
constexpr int max_rows = 6; ///< 12 accumulators, 2 weight vectors, 1 broadcast: 15 ymm
} // namespace

// The kernel alone is built for AVX2 and FMA (what runs it checks packed_gemm_f32_here).
TROUPE_ISA_BEGIN("avx2,fma")
namespace {

struct gemm_args {
  const float* a = nullptr;
  int64_t rows = 0, k = 0, n = 0;
  const float* panels = nullptr;
  const float* bias = nullptr; ///< [n] added to every row, or null
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
  if (g.bias) {
    alignas(32) float bv[panel_cols] = {};
    std::memcpy(bv, g.bias + c0, static_cast<std::size_t>(cols) * sizeof(float));
    const __m256 bias0 = _mm256_load_ps(bv), bias1 = _mm256_load_ps(bv + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      c[r][0] = _mm256_add_ps(c[r][0], bias0);
      c[r][1] = _mm256_add_ps(c[r][1], bias1);
    }
  }
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

void panel_avx2(const gemm_args& g, int64_t p, int64_t panels) {
  const float* next = p + 1 < panels ? g.panels + (p + 1) * g.k * panel_cols : nullptr;
  for_row_tiles<max_rows>(g.rows, [&](auto rows, int64_t r) { rows_of_panel<rows>(g, p, r, r == 0 ? next : nullptr); });
}

} // namespace
TROUPE_ISA_END

// With AVX-512 a panel row is one zmm; a tile is up to 12 rows of two panels (24 accumulators,
// 2 weight vectors, 1 broadcast of 32 zmm), so each weight load serves 12 FMAs.
TROUPE_ISA_BEGIN("avx512f")
namespace {
constexpr int max_rows_512 = 12;

/// Rows r0 .. r0 + R - 1 by panels p and p + 1 (`two` false: p alone, the last odd one).
template <int R> void rows_of_panels_512(const gemm_args& g, int64_t p, bool two, int64_t r0, const float* next) {
  const float* p0 = g.panels + p * g.k * panel_cols;
  const float* p1 = two ? p0 + g.k * panel_cols : p0;
  const float* a = g.a + r0 * g.k;
  __m512 c[R][2];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) c[r][0] = c[r][1] = _mm512_setzero_ps();
  const int64_t k = g.k;
  for (int64_t t = 0; t < k; ++t) {
    const __m512 b0 = _mm512_loadu_ps(p0 + panel_cols * t), b1 = _mm512_loadu_ps(p1 + panel_cols * t);
    if (next) {
      _mm_prefetch(reinterpret_cast<const char*>(next + panel_cols * t), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(next + panel_cols * (k + t)), _MM_HINT_T0);
    }
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * k + t]);
      c[r][0] = _mm512_fmadd_ps(av, b0, c[r][0]);
      c[r][1] = _mm512_fmadd_ps(av, b1, c[r][1]);
    }
  }
  store_panel_pair<R>(c, g.y, g.n, r0, p * panel_cols, two, g.bias);
}

void panel_pair_512(const gemm_args& g, int64_t pair, int64_t panels) {
  const int64_t p = 2 * pair;
  const bool two = p + 1 < panels;
  // The pair after this one (two panels, contiguous) streams into the cache during the first tile.
  const float* next = p + 2 < panels ? g.panels + (p + 2) * g.k * panel_cols : nullptr;
  for_row_tiles<max_rows_512>(g.rows, [&](auto rows, int64_t r) { rows_of_panels_512<rows>(g, p, two, r, r == 0 ? next : nullptr); });
}

} // namespace
TROUPE_ISA_END

namespace {

bool has_avx512() { return __builtin_cpu_supports("avx512f"); }

void packed_gemm_f32_kernel(const reference::context&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  gemm_args g;
  g.n = in[2].data<int64_t>()[0];
  g.rows = g.n ? static_cast<int64_t>(out[0].get_size()) / g.n : 0;
  g.k = g.rows ? static_cast<int64_t>(in[0].get_size()) / g.rows : 0;
  g.a = in[0].data<float>();
  g.panels = in[1].data<float>();
  g.bias = in.size() > 3 ? in[3].data<float>() : nullptr;
  g.y = out[0].data<float>();
  const int64_t panels = (g.n + panel_cols - 1) / panel_cols;
  const bool parallel = g.rows * g.n * g.k > (1 << 18);
  if (has_avx512()) {
    const int64_t pairs = (panels + 1) / 2;
    TROUPE_TEAM_FOR(q, pairs, parallel, panel_pair_512(g, q, panels));
    return;
  }
  TROUPE_TEAM_FOR(p, panels, parallel, panel_avx2(g, p, panels));
}

} // namespace

bool packed_gemm_f32_here() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

bool packed_gemm_f32_pays(int64_t rows, int64_t k, int64_t n) {
  if (rows < 1 || k < 1) return false;
  // Measured on an AVX-512 Zen 4, one thread: at 32 rows 89-92 GFLOP/s here against oneDNN
  // 2.6's brgemm at 55-84 (lm_tiny's 256 x 1024 and 256 x 256 layers, bert_tiny's); level at
  // 64 and 128 rows. On AVX2 (Zen 3) only the wide products were measured a gain.
  return n >= 4096 || (has_avx512() && rows <= 64 && n >= 64);
}
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
