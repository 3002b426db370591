/// Three-channel f32 planes (an image input, NCHW) to channels-last bf16 (native_ops.hpp): the
/// layout and type the first bf16 convolution reads. oneDNN 2.6's reorder took 0.094 ms for
/// det's 3x320x320 input on one thread (1.8 MB moved: 19 GB/s).
#include <cstdint>

#include "kernels/cpu/avx512_bf16.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

TROUPE_ISA_BEGIN("avx512f,avx512bw,avx512vl,avx512bf16")

void rgb_to_nhwc_bf16(const reference::context&, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto& s = in[0].get_shape();
  const int64_t n_batch = s[0], pixels = s[2] * s[3];
  const float* x = in[0].data<float>();
  auto* y = static_cast<uint16_t*>(out[0].data());
  // Output word i of a 16-pixel group is channel i % 3 of pixel i / 3: in the table
  // [r0..r15, g0..g15 | b0..b15, -] that is (i % 3) * 16 + i / 3.
  alignas(64) uint16_t lo[32], hi[32];
  for (int i = 0; i < 32; ++i) lo[i] = static_cast<uint16_t>((i % 3) * 16 + i / 3);
  for (int i = 0; i < 16; ++i) hi[i] = static_cast<uint16_t>(((i + 32) % 3) * 16 + (i + 32) / 3);
  for (int i = 16; i < 32; ++i) hi[i] = 0;
  const __m512i idx_lo = _mm512_load_si512(lo), idx_hi = _mm512_load_si512(hi);
  const int64_t groups = pixels / 16;
  auto group = [&](int64_t b, int64_t q) {
    const float* px = x + b * 3 * pixels + q * 16;
    const __m256i r = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_loadu_ps(px)));
    const __m256i g = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_loadu_ps(px + pixels)));
    const __m256i bl = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_loadu_ps(px + 2 * pixels)));
    const __m512i rg = _mm512_inserti64x4(_mm512_castsi256_si512(r), g, 1);
    const __m512i bb = _mm512_castsi256_si512(bl);
    uint16_t* py = y + (b * pixels + q * 16) * 3;
    _mm512_storeu_si512(py, _mm512_permutex2var_epi16(rg, idx_lo, bb));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(py + 32),
                        _mm512_castsi512_si256(_mm512_permutex2var_epi16(rg, idx_hi, bb)));
  };
  if (groups > 0) TROUPE_TEAM_FOR(t, n_batch * groups, true, group(t / groups, t % groups));
  for (int64_t b = 0; b < n_batch; ++b)
    for (int64_t p = groups * 16; p < pixels; ++p)
      for (int64_t c = 0; c < 3; ++c) y[(b * pixels + p) * 3 + c] = round_to_bf16(x[(b * 3 + c) * pixels + p]);
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
