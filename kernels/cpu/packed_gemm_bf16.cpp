#include "kernels/cpu/packed_gemm_bf16.hpp"

#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/avx512_bf16.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/lane_mask.hpp"
#include "kernels/cpu/panel_pair_store.hpp"
#include "kernels/cpu/row_tiles.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

namespace {
constexpr int64_t panel_cols = 16;
constexpr int64_t pair_words = 2 * panel_cols; ///< bf16 values of one pair of rows of a panel
constexpr int max_rows = 12;                   ///< 24 accumulators, 2 weight vectors, 1 broadcast
} // namespace

// Built for AVX512_BF16 alone (what runs it checks packed_gemm_bf16_here).
TROUPE_ISA_BEGIN("avx512f,avx512bw,avx512vl,avx512bf16")
namespace {

struct gemm_args {
  const uint32_t* a = nullptr; ///< A in bf16, a pair of columns per word: [rows, k2]
  int64_t rows = 0, k2 = 0, n = 0;
  const uint16_t* panels = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
};

/// Rows r0 .. r0 + R - 1 by panels p and p + 1 (`two` false: p alone, the last odd one).
template <int R> void rows_of_panels(const gemm_args& g, int64_t p, bool two, int64_t r0, const uint16_t* next) {
  const uint16_t* p0 = g.panels + p * g.k2 * pair_words;
  const uint16_t* p1 = two ? p0 + g.k2 * pair_words : p0;
  const uint32_t* a = g.a + r0 * g.k2;
  __m512 c[R][2];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) c[r][0] = c[r][1] = _mm512_setzero_ps();
  const int64_t k2 = g.k2;
  for (int64_t t = 0; t < k2; ++t) {
    const auto b0 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(p0 + pair_words * t));
    const auto b1 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(p1 + pair_words * t));
    if (next) {
      _mm_prefetch(reinterpret_cast<const char*>(next + pair_words * t), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(next + pair_words * (k2 + t)), _MM_HINT_T0);
    }
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const auto av = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(a[r * k2 + t])));
      c[r][0] = _mm512_dpbf16_ps(c[r][0], av, b0);
      c[r][1] = _mm512_dpbf16_ps(c[r][1], av, b1);
    }
  }
  store_panel_pair<R>(c, g.y, g.n, r0, p * panel_cols, two, g.bias);
}

void panel_pair(const gemm_args& g, int64_t pair, int64_t panels) {
  const int64_t p = 2 * pair;
  const bool two = p + 1 < panels;
  const uint16_t* next = p + 2 < panels ? g.panels + (p + 2) * g.k2 * pair_words : nullptr;
  for_row_tiles<max_rows>(g.rows, [&](auto rows, int64_t r) { rows_of_panels<rows>(g, p, two, r, r == 0 ? next : nullptr); });
}

/// A [rows, k] f32 to bf16 rows of 2 * k2 values (an odd K's last pair padded with 0): the
/// pairs of the packed weights' layout, in order.
void round_rows(const float* a, int64_t rows, int64_t k, int64_t k2, uint16_t* out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < 2 * k2; j += 16)
      store_bf16x16(out + r * 2 * k2 + j, _mm512_maskz_loadu_ps(first_lanes(k - j), a + r * k + j), first_lanes(2 * k2 - j));
}

void packed_gemm_bf16_kernel(const reference::context&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  gemm_args g;
  g.n = in[2].data<int64_t>()[0];
  g.rows = g.n ? static_cast<int64_t>(out[0].get_size()) / g.n : 0;
  const int64_t k = g.rows ? static_cast<int64_t>(in[0].get_size()) / g.rows : 0;
  g.k2 = (k + 1) / 2;
  thread_local std::vector<uint32_t> a2;
  a2.resize(static_cast<std::size_t>(g.rows * g.k2));
  round_rows(in[0].data<float>(), g.rows, k, g.k2, reinterpret_cast<uint16_t*>(a2.data()));
  g.a = a2.data();
  g.panels = static_cast<const uint16_t*>(in[1].data());
  g.bias = in.size() > 3 ? in[3].data<float>() : nullptr;
  g.y = out[0].data<float>();
  const int64_t panels = (g.n + panel_cols - 1) / panel_cols, pairs = (panels + 1) / 2;
  TROUPE_TEAM_FOR(q, pairs, g.rows * g.n * k > (1 << 18), panel_pair(g, q, panels));
}

} // namespace
TROUPE_ISA_END

bool packed_gemm_bf16_here() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16"); }

Tensor pack_bf16_pair_panels(const float* b, int64_t k, int64_t n) {
  const int64_t panels = (n + panel_cols - 1) / panel_cols, k2 = (k + 1) / 2;
  Tensor t(element_type::bf16, Shape{panels, k2, pair_words});
  auto* d = static_cast<uint16_t*>(t.data());
  std::fill(d, d + t.get_size(), uint16_t{0});
  for (int64_t row = 0; row < k; ++row)
    for (int64_t j = 0; j < n; ++j)
      d[((j / panel_cols) * k2 + row / 2) * pair_words + (j % panel_cols) * 2 + row % 2] = round_to_bf16(b[row * n + j]);
  return t;
}

reference::kernel_fn packed_gemm_bf16() { return packed_gemm_bf16_kernel; }

} // namespace troupe::kernels::cpu
