/// Per-channel scaling of a 4-D map laid out channels-last (nhwc), f32 or bf16, with the
/// residual x * s + x in the same pass (native_ops.hpp): det's squeeze-and-excitation outputs.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/avx512_bf16.hpp"
#include "kernels/cpu/isa_region.hpp"
#include "kernels/cpu/lane_mask.hpp"
#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

TROUPE_ISA_BEGIN("avx512f,avx512bw,avx512vl,avx512bf16")

namespace {

template <bool Bf16>
inline __m512 load16(const void* base, int64_t at, __mmask16 m) {
  if constexpr (Bf16) return load_bf16x16(static_cast<const uint16_t*>(base) + at, m);
  else return _mm512_maskz_loadu_ps(m, static_cast<const float*>(base) + at);
}

template <bool Bf16>
inline void store16(void* base, int64_t at, __m512 v, __mmask16 m) {
  if constexpr (Bf16) store_bf16x16(static_cast<uint16_t*>(base) + at, v, m);
  else _mm512_mask_storeu_ps(static_cast<float*>(base) + at, m, v);
}

/// `scale` holds, per image, the factor of each channel padded to whole blocks of 16 (zero past C).
template <bool Bf16>
void run(const void* x, void* y, const std::vector<float>& scale, int64_t n_batch, int64_t c, int64_t pixels) {
  const int64_t blocks = (c + 15) / 16;
  constexpr int64_t chunk = 256; // pixels per task
  const int64_t chunks = (pixels + chunk - 1) / chunk;
  auto task = [&](int64_t n, int64_t q) {
    const float* sn = scale.data() + n * blocks * 16;
    const int64_t p0 = q * chunk, p1 = std::min(pixels, p0 + chunk);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t base = (n * pixels + p) * c;
      for (int64_t cb = 0; cb < blocks; ++cb) {
        const __mmask16 m = first_lanes(c - cb * 16);
        store16<Bf16>(y, base + cb * 16,
                      _mm512_mul_ps(load16<Bf16>(x, base + cb * 16, m), _mm512_loadu_ps(sn + cb * 16)), m);
      }
    }
  };
  if (chunks > 0) TROUPE_TEAM_FOR(t, n_batch * chunks, true, task(t / chunks, t % chunks));
}

} // namespace

void channel_scale(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto& xs = in[0].get_shape();
  const int64_t n_batch = xs[0], c = xs[1], pixels = xs[2] * xs[3], blocks = (c + 15) / 16;
  const bool residual = ctx.op.attr_int(channel_scale_residual_attr, 0) != 0;
  // The factors per image (s has one image, or one per image), plus one for x * s + x.
  const float* s = in[1].data<float>();
  const bool per_image = in[1].get_size() == n_batch * c && n_batch > 1;
  std::vector<float> scale(static_cast<std::size_t>(n_batch * blocks * 16), 0.0f);
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t k = 0; k < c; ++k)
      scale[static_cast<std::size_t>(n * blocks * 16 + k)] = s[(per_image ? n * c : 0) + k] + (residual ? 1.0f : 0.0f);
  if (ctx.op.attr_int(blocked_bf16_attr, 0) != 0)
    run<true>(in[0].data(), out[0].data(), scale, n_batch, c, pixels);
  else
    run<false>(in[0].data(), out[0].data(), scale, n_batch, c, pixels);
}

TROUPE_ISA_END

} // namespace troupe::kernels::cpu
