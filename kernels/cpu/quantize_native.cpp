/// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear as threaded loops over plain
/// buffers: the reference kernels go through doubles element by element. The same arithmetic
/// as theirs: x / scale in float, rounded to nearest even, plus the zero point, saturated;
/// (q - zp) * scale in float; DynamicQuantizeLinear's range, scale and zero point in float.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/lane_mask.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

namespace {

bool int8_type(element_type t) { return t == element_type::u8 || t == element_type::i8; }

/// Loop bounds of a per-tensor (one scale) or per-axis parameter over a tensor of shape `s`.
struct axis_split {
  int64_t outer = 1, len = 1, inner = 1;
  bool per_axis = false;
  axis_split(const Shape& s, int64_t axis, std::size_t params) {
    int64_t n = 1;
    for (auto d : s) n *= d;
    if (params <= 1) {
      inner = n;
      return;
    }
    if (axis < 0) axis += static_cast<int64_t>(s.size());
    const auto a = static_cast<std::size_t>(axis);
    per_axis = true;
    len = s[a];
    for (std::size_t i = 0; i < a; ++i) outer *= s[i];
    for (std::size_t i = a + 1; i < s.size(); ++i) inner *= s[i];
  }
  int64_t total() const { return outer * len * inner; }
};

/// Rows of `p.inner` elements, one scale (and zero point) per row; the rows, or the pieces of
/// one row, spread over the team. `f(row, begin, end)` runs a piece.
template <class F> void for_rows(const axis_split& p, F f) {
  const int64_t rows = p.outer * p.len;
  // Pieces of at least 16 K elements; a per-tensor row is cut into pieces too.
  const int64_t piece = std::max<int64_t>(16384, p.inner / 64), per_row = (p.inner + piece - 1) / piece;
  auto one_piece = [&](int64_t k) {
    const int64_t row = k / per_row, begin = (k % per_row) * piece;
    f(row, row * p.inner + begin, row * p.inner + std::min(p.inner, begin + piece));
  };
  TROUPE_TEAM_FOR(k, rows * per_row, rows * p.inner > 32768, one_piece(k));
}

/// Rounds to nearest even as nearbyint does under the default rounding mode, for |v| <= 2^22,
/// in a form the compiler vectorizes (nearbyintf is a libm call per element).
inline float round_even(float v) {
  constexpr float magic = 12582912.f; // 1.5 * 2^23
  return (v + magic) - magic;
}

/// One run of elements with one scale and zero point. std::min / max and selects, not
/// std::fmin / fmax (libm calls): with -fno-trapping-math (kernels/CMakeLists.txt) the loop
/// vectorizes. Out-of-range quotients saturate anyway: clamped first into round_even's range.
/// Q's range as floats, the clamp of both loops below.
template <class Q> constexpr float q_lo = std::is_same_v<Q, uint8_t> ? 0.f : -128.f;
template <class Q> constexpr float q_hi = std::is_same_v<Q, uint8_t> ? 255.f : 127.f;

template <class Q> void quantize_scalar(const float* x, float s, float z, Q* y, int64_t n) {
  constexpr float lo = q_lo<Q>, hi = q_hi<Q>;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] / s;
    const float q = std::min(std::max(round_even(std::min(std::max(v, -4194304.f), 4194304.f)) + z, lo), hi);
    y[i] = static_cast<Q>(static_cast<int32_t>(v != v ? 0.f : q)); // NaN: 0, as the reference
  }
}

/// The range [min(x, 0), max(x, 0)] of a run; a NaN leaves it as it is, as the reference's.
void range_scalar(const float* x, int64_t n, float& lo, float& hi) {
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
}

// The same two loops in AVX2, 32 elements a step: the SSE2 loops of the baseline build ran at
// ~2 ns an element, a sixth of bert_tiny_int8's time. The same operations in the same order (a
// true division, the same rounding trick, the clamps, NaN to 0): bit for bit the scalar loops'
// results (cpu_int8_tests). No "fma" in the target: nothing here may contract.
TROUPE_ISA_BEGIN("avx2")

template <class Q> __m256i quantize8(const float* x, __m256 s, __m256 z) {
  const __m256 v = _mm256_div_ps(_mm256_loadu_ps(x), s);
  const __m256 magic = _mm256_set1_ps(12582912.f), big = _mm256_set1_ps(4194304.f);
  const __m256 lo = _mm256_set1_ps(q_lo<Q>), hi = _mm256_set1_ps(q_hi<Q>);
  // max / min return their second operand when one is NaN: the NaN lanes are zeroed below.
  const __m256 c = _mm256_min_ps(_mm256_max_ps(v, _mm256_sub_ps(_mm256_setzero_ps(), big)), big);
  const __m256 r = _mm256_sub_ps(_mm256_add_ps(c, magic), magic);
  const __m256 q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(r, z), lo), hi);
  return _mm256_cvttps_epi32(_mm256_andnot_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), q));
}

template <class Q> void quantize_avx2(const float* x, float s, float z, Q* y, int64_t n) {
  const __m256 sv = _mm256_set1_ps(s), zv = _mm256_set1_ps(z);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7); // undoes the packs' lane split
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i w0 = _mm256_packs_epi32(quantize8<Q>(x + i, sv, zv), quantize8<Q>(x + i + 8, sv, zv));
    const __m256i w1 = _mm256_packs_epi32(quantize8<Q>(x + i + 16, sv, zv), quantize8<Q>(x + i + 24, sv, zv));
    const __m256i b = std::is_same_v<Q, uint8_t> ? _mm256_packus_epi16(w0, w1) : _mm256_packs_epi16(w0, w1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_permutevar8x32_epi32(b, order));
  }
  quantize_scalar(x + i, s, z, y + i, n - i);
}

void range_avx2(const float* x, int64_t n, float& lo, float& hi) {
  __m256 l0 = _mm256_set1_ps(lo), l1 = l0, h0 = _mm256_set1_ps(hi), h1 = h0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) { // x first: a NaN lane keeps the range (the second operand)
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    l0 = _mm256_min_ps(a, l0), l1 = _mm256_min_ps(b, l1);
    h0 = _mm256_max_ps(a, h0), h1 = _mm256_max_ps(b, h1);
  }
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, _mm256_min_ps(l0, l1));
  _mm256_store_ps(h, _mm256_max_ps(h0, h1));
  for (int j = 0; j < 8; ++j) lo = std::min(lo, l[j]), hi = std::max(hi, h[j]);
  range_scalar(x + i, n - i, lo, hi);
}

TROUPE_ISA_END

// And in AVX-512, 16 elements a step with a masked tail: the same operations again (bit for
// bit the scalar loops'), a byte per lane narrowed by vpmovdb (the clamps keep it in range).
TROUPE_ISA_BEGIN("avx512f")

template <class Q> void quantize_avx512(const float* x, float s, float z, Q* y, int64_t n) {
  const __m512 sv = _mm512_set1_ps(s), zv = _mm512_set1_ps(z);
  const __m512 magic = _mm512_set1_ps(12582912.f), big = _mm512_set1_ps(4194304.f);
  const __m512 lo = _mm512_set1_ps(q_lo<Q>), hi = _mm512_set1_ps(q_hi<Q>);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = first_lanes(n - i);
    const __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), sv);
    const __m512 c = _mm512_min_ps(_mm512_max_ps(v, _mm512_sub_ps(_mm512_setzero_ps(), big)), big);
    const __m512 r = _mm512_sub_ps(_mm512_add_ps(c, magic), magic);
    const __m512 q = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(r, zv), lo), hi);
    const __mmask16 number = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q); // NaN lanes: 0
    _mm512_mask_cvtepi32_storeu_epi8(y + i, m, _mm512_cvttps_epi32(_mm512_maskz_mov_ps(number, q)));
  }
}

void range_avx512(const float* x, int64_t n, float& lo, float& hi) {
  __m512 l = _mm512_set1_ps(lo), h = _mm512_set1_ps(hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) { // x first: a NaN lane keeps the range (the second operand)
    const __m512 a = _mm512_loadu_ps(x + i);
    l = _mm512_min_ps(a, l);
    h = _mm512_max_ps(a, h);
  }
  alignas(64) float lv[16], hv[16];
  _mm512_store_ps(lv, l);
  _mm512_store_ps(hv, h);
  for (int j = 0; j < 16; ++j) lo = std::min(lo, lv[j]), hi = std::max(hi, hv[j]);
  range_scalar(x + i, n - i, lo, hi);
}

TROUPE_ISA_END

bool avx2_here() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

template <class Q> void quantize_run(const float* x, float s, float z, Q* y, int64_t n) {
  if (native_avx512_available()) quantize_avx512(x, s, z, y, n);
  else if (avx2_here()) quantize_avx2(x, s, z, y, n);
  else quantize_scalar(x, s, z, y, n);
}

void range_run(const float* x, int64_t n, float& lo, float& hi) {
  if (native_avx512_available()) range_avx512(x, n, lo, hi);
  else if (avx2_here()) range_avx2(x, n, lo, hi);
  else range_scalar(x, n, lo, hi);
}

template <class Q> void quantize(const axis_split& p, const float* x, const float* scale, const Q* zp, Q* y) {
  for_rows(p, [&](int64_t row, int64_t begin, int64_t end) {
    const int64_t c = p.per_axis ? row % p.len : 0;
    quantize_run(x + begin, scale[c], zp ? static_cast<float>(zp[c]) : 0.f, y + begin, end - begin);
  });
}

template <class Q> void dequantize(const axis_split& p, const Q* x, const float* scale, const Q* zp, float* y) {
  for_rows(p, [&](int64_t row, int64_t begin, int64_t end) {
    const int64_t c = p.per_axis ? row % p.len : 0;
    const float s = scale[c];
    const int64_t z = zp ? static_cast<int64_t>(zp[c]) : 0;
    if constexpr (sizeof(Q) == 1) { // (x - z) fits a float exactly: one conversion, vectorized
      const float zf = static_cast<float>(z);
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) y[i] = (static_cast<float>(x[i]) - zf) * s;
    } else {
      for (int64_t i = begin; i < end; ++i) y[i] = static_cast<float>(static_cast<int64_t>(x[i]) - z) * s;
    }
  });
}

template <class Q> const Q* zero_points(const std::vector<Tensor>& in) {
  return in.size() > 2 && !in[2].empty() ? in[2].data<Q>() : nullptr;
}

void quantize_linear(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const axis_split p(in[0].get_shape(), ctx.op.attr_int("axis", 1), in[1].get_size());
  if (out[0].get_element_type() == element_type::u8)
    quantize(p, in[0].data<float>(), in[1].data<float>(), zero_points<uint8_t>(in), out[0].data<uint8_t>());
  else
    quantize(p, in[0].data<float>(), in[1].data<float>(), zero_points<int8_t>(in), out[0].data<int8_t>());
}

void dequantize_linear(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const axis_split p(in[0].get_shape(), ctx.op.attr_int("axis", 1), in[1].get_size());
  switch (in[0].get_element_type()) {
  case element_type::u8: dequantize(p, in[0].data<uint8_t>(), in[1].data<float>(), zero_points<uint8_t>(in), out[0].data<float>()); break;
  case element_type::i8: dequantize(p, in[0].data<int8_t>(), in[1].data<float>(), zero_points<int8_t>(in), out[0].data<float>()); break;
  default: dequantize(p, in[0].data<int32_t>(), in[1].data<float>(), zero_points<int32_t>(in), out[0].data<float>()); break;
  }
}

/// DynamicQuantizeLinear (f32 -> u8, scale, zero point): the range [min(x, 0), max(x, 0)] in
/// one threaded pass, then QuantizeLinear's loop with the scale and zero point it gives.
void dynamic_quantize_linear(const reference::context&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const float* x = in[0].data<float>();
  const int64_t n = static_cast<int64_t>(in[0].get_size());
  float lo = 0.f, hi = 0.f;
  constexpr int64_t piece = 16384;
  const int64_t pieces = (n + piece - 1) / piece;
  if (team_worth(n > 65536)) {
#pragma omp parallel for reduction(min : lo) reduction(max : hi)
    for (int64_t k = 0; k < pieces; ++k) range_run(x + k * piece, std::min(piece, n - k * piece), lo, hi);
  } else {
    for (int64_t k = 0; k < pieces; ++k) range_run(x + k * piece, std::min(piece, n - k * piece), lo, hi);
  }
  const float scale = (hi - lo) / 255.0f;
  const float zp = scale == 0 ? 0.f : std::min(std::max(std::nearbyint(0.0f - lo / scale), 0.f), 255.f);
  auto* y = out[0].data<uint8_t>();
  if (scale == 0) {
    std::fill(y, y + n, static_cast<uint8_t>(zp));
  } else {
    const axis_split p(in[0].get_shape(), 0, 1);
    for_rows(p, [&](int64_t, int64_t begin, int64_t end) { quantize_run(x + begin, scale, zp, y + begin, end - begin); });
  }
  if (out.size() > 1 && !out[1].empty()) out[1].data<float>()[0] = scale;
  if (out.size() > 2 && !out[2].empty()) out[2].data<uint8_t>()[0] = static_cast<uint8_t>(zp);
}

} // namespace

reference::kernel_fn native_quantize_kernel(const graph::Graph& g, const graph::Op& op) {
  if (op.type == "DynamicQuantizeLinear" && op.domain.empty() && op.input_count() == 1 &&
      g.value(op.inputs[0]).type == element_type::f32 && g.value(op.inputs[0]).shape.is_static())
    return dynamic_quantize_linear;
  const bool q = op.type == "QuantizeLinear", dq = op.type == "DequantizeLinear";
  if ((!q && !dq) || !op.domain.empty() || op.input_count() < 2 || op.has_attr("block_size")) return nullptr;
  const auto& x = g.value(op.inputs[0]);
  const auto& scale = g.value(op.inputs[1]);
  const auto& y = g.value(op.outputs[0]);
  const graph::ValueId zp = op.input_count() > 2 ? op.inputs[2] : graph::no_value;
  if (!x.shape.is_static() || !scale.shape.is_static() || scale.type != element_type::f32 || scale.shape.rank() > 1)
    return nullptr;
  const int64_t params = shape_size(scale.shape.to_shape());
  if (zp != graph::no_value && (!g.value(zp).shape.is_static() || shape_size(g.value(zp).shape.to_shape()) != params))
    return nullptr;
  if (params > 1) { // one per index along `axis`
    const auto r = static_cast<int64_t>(x.shape.rank());
    int64_t axis = op.attr_int("axis", 1);
    if (axis < -r || axis >= r) return nullptr;
    if (x.shape.dims[static_cast<std::size_t>(axis < 0 ? axis + r : axis)] != params) return nullptr;
  }
  if (q) return x.type == element_type::f32 && int8_type(y.type) ? quantize_linear : nullptr;
  const bool int_in = int8_type(x.type) || x.type == element_type::i32;
  return int_in && y.type == element_type::f32 ? dequantize_linear : nullptr;
}

} // namespace troupe::kernels::cpu
