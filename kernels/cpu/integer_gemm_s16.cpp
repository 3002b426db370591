#include "kernels/cpu/integer_gemm_s16.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/row_tiles.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

// The kernel alone is built for AVX2 (what runs it checks integer_gemm_s16_here); without
// "fma": GCC would contract the intrinsics' a * b + c into one rounding, and the chain's float
// ops (Mul, then Add) round twice.
TROUPE_ISA_BEGIN("avx2")
namespace {

constexpr int64_t panel_cols = 16;
constexpr int max_rows = 6; ///< 12 accumulators, 2 weight vectors, 2 temporaries: 16 ymm

/// Rows r0 .. r0 + R of A (s16, pairs read as one 32-bit value) times one panel: acc[r][h] holds
/// columns 8h .. 8h + 7 of row r.
template <int R>
inline void tile(const int16_t* a, int64_t lda, const int8_t* panel, int64_t pairs, __m256i (&acc)[max_rows][2]) {
  __m256i c[R][2]; // local, so that the accumulators stay in registers (acc lives in memory)
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) c[r][0] = c[r][1] = _mm256_setzero_si256();
  for (int64_t t = 0; t < pairs; ++t) {
    const __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(panel + 32 * t)));
    const __m256i b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(panel + 32 * t + 16)));
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + r * lda + 2 * t, sizeof pair);
      const __m256i av = _mm256_set1_epi32(pair);
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(av, b0));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(av, b1));
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r][0] = c[r][0], acc[r][1] = c[r][1];
}

struct gemm_args {
  const int16_t* a = nullptr; ///< widened A [rows, lda]
  int64_t lda = 0, rows = 0, n = 0, pairs = 0;
  const int8_t* panels = nullptr;
  const int32_t* column_sums = nullptr;
  const int32_t* wz = nullptr;       ///< null: no weight zero points
  const int32_t* row_sums = nullptr; ///< sum_k (a - az) per row
  int32_t az = 0;
  const float* scale = nullptr; ///< one value or one per column; null: 1
  bool scale_per_column = false;
  const float* bias = nullptr;
  float* yf = nullptr;   ///< f32 result, or
  int32_t* yi = nullptr; ///< s32 result
};

/// A panel's per-column terms, made once for all its rows.
struct panel_columns {
  int64_t c0 = 0, cols = 0;
  alignas(32) int32_t az_sums[panel_cols]; ///< az x the column sums
  alignas(32) int32_t wz[panel_cols];
  alignas(32) float scale[panel_cols];
  alignas(32) float bias[panel_cols];

  panel_columns(const gemm_args& g, int64_t p) : c0(p * panel_cols), cols(std::min(panel_cols, g.n - c0)) {
    for (int64_t c = 0; c < panel_cols; ++c) {
      const bool in = c < cols;
      az_sums[c] = in ? g.az * g.column_sums[c0 + c] : 0;
      wz[c] = in && g.wz ? g.wz[c0 + c] : 0;
      scale[c] = !g.scale ? 1.f : g.scale_per_column ? (in ? g.scale[c0 + c] : 0.f) : g.scale[0];
      bias[c] = in && g.bias ? g.bias[c0 + c] : 0.f;
    }
  }
};

/// Writes rows r0 .. r0 + R of the panel: the exact integer, then (float) * scale + bias.
template <int R> void finish(const gemm_args& g, const panel_columns& pc, int64_t r0, __m256i (&acc)[max_rows][2]) {
  const int64_t c0 = pc.c0, cols = pc.cols;
  for (int r = 0; r < R; ++r) {
    const int64_t row = r0 + r;
    const __m256i rs = _mm256_set1_epi32(g.row_sums[row]);
    alignas(32) int32_t vi[panel_cols];
    alignas(32) float vf[panel_cols];
    for (int h = 0; h < 2; ++h) {
      __m256i v = _mm256_sub_epi32(acc[r][h], _mm256_load_si256(reinterpret_cast<const __m256i*>(pc.az_sums + 8 * h)));
      if (g.wz)
        v = _mm256_sub_epi32(v, _mm256_mullo_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(pc.wz + 8 * h)), rs));
      if (g.yf) {
        __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_load_ps(pc.scale + 8 * h));
        if (g.bias) f = _mm256_add_ps(f, _mm256_load_ps(pc.bias + 8 * h));
        if (cols == panel_cols) _mm256_storeu_ps(g.yf + row * g.n + c0 + 8 * h, f);
        else _mm256_store_ps(vf + 8 * h, f);
      } else {
        if (cols == panel_cols) _mm256_storeu_si256(reinterpret_cast<__m256i*>(g.yi + row * g.n + c0 + 8 * h), v);
        else _mm256_store_si256(reinterpret_cast<__m256i*>(vi + 8 * h), v);
      }
    }
    if (cols < panel_cols) {
      if (g.yf) std::memcpy(g.yf + row * g.n + c0, vf, static_cast<std::size_t>(cols) * sizeof(float));
      else std::memcpy(g.yi + row * g.n + c0, vi, static_cast<std::size_t>(cols) * sizeof(int32_t));
    }
  }
}

template <int R> void rows_of_panel(const gemm_args& g, const panel_columns& pc, int64_t p, int64_t r0) {
  __m256i acc[max_rows][2];
  tile<R>(g.a + r0 * g.lda, g.lda, g.panels + p * g.pairs * 32, g.pairs, acc);
  finish<R>(g, pc, r0, acc);
}

void panel(const gemm_args& g, int64_t p) {
  const panel_columns pc(g, p);
  for_row_tiles<max_rows>(g.rows, [&](auto rows, int64_t r) { rows_of_panel<rows>(g, pc, p, r); });
}

void integer_gemm_s16_kernel(const reference::context&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  gemm_args g;
  g.n = static_cast<int64_t>(in[3].get_size());
  const Tensor& a = in[0];
  g.rows = g.n ? static_cast<int64_t>(out[0].get_size()) / g.n : 0;
  const int64_t k = g.rows ? static_cast<int64_t>(a.get_size()) / g.rows : 0;
  g.pairs = (k + 1) / 2;
  g.lda = 2 * g.pairs;
  g.az = in[1].empty() ? 0 : static_cast<int32_t>(in[1].data<uint8_t>()[0]);
  g.panels = in[2].data<int8_t>();
  g.column_sums = in[3].data<int32_t>();
  g.wz = in[4].empty() ? nullptr : in[4].data<int32_t>();
  g.scale = in[5].empty() ? nullptr : in[5].data<float>();
  g.scale_per_column = !in[5].empty() && in[5].get_size() > 1;
  g.bias = in[6].empty() ? nullptr : in[6].data<float>();
  if (out[0].get_element_type() == element_type::f32) g.yf = out[0].data<float>();
  else g.yi = out[0].data<int32_t>();
  int16_t* wide = out[1].data<int16_t>();
  int32_t* row_sums = out[2].data<int32_t>();
  const uint8_t* ap = a.data<uint8_t>();
  for (int64_t m = 0; m < g.rows; ++m) { // widen A; its row sums for the weights' zero points
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      wide[m * g.lda + i] = ap[m * k + i];
      sum += ap[m * k + i];
    }
    if (k < g.lda) wide[m * g.lda + k] = 0;
    row_sums[m] = sum - static_cast<int32_t>(k) * g.az;
  }
  g.a = wide;
  g.row_sums = row_sums;
  const int64_t panels = (g.n + panel_cols - 1) / panel_cols;
  TROUPE_TEAM_FOR(p, panels, g.rows * g.n * k > (1 << 18), panel(g, p));
}

} // namespace
TROUPE_ISA_END

bool integer_gemm_s16_here() { return __builtin_cpu_supports("avx2"); }

Tensor pack_s16_panels(const int8_t* b, int64_t k, int64_t n) {
  const int64_t panels = (n + panel_cols - 1) / panel_cols, pairs = (k + 1) / 2;
  Tensor t(element_type::i8, Shape{panels, pairs, 32});
  int8_t* d = t.data<int8_t>();
  std::fill(d, d + t.get_size(), int8_t{0});
  for (int64_t row = 0; row < k; ++row)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t p = j / panel_cols, c = j % panel_cols;
      // Within a pair's 32 bytes: the half (c / 8), then the column, then the row's parity.
      d[(p * pairs + row / 2) * 32 + (c / 8) * 16 + (c % 8) * 2 + row % 2] = b[row * n + j];
    }
  return t;
}

reference::kernel_fn integer_gemm_s16() { return integer_gemm_s16_kernel; }

} // namespace troupe::kernels::cpu
