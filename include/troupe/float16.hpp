#pragma once
/// IEEE half (f16) and bfloat16 (bf16) <-> float32, as bit patterns: the one conversion the
/// reference kernels, the Vulkan device's boundary copies, the troupe command and the tests
/// share, public so that applications filling f16/bf16 tensors round as troupe does. Header-only
/// and integer-only, so that the result depends on neither the FPU's rounding mode nor
/// flush-to-zero. Narrowing rounds to nearest, ties to even (as IEEE, numpy, ONNX >= 1.13 and
/// bf16 hardware do); widening is exact; NaNs keep their sign and payload where it fits, so
/// every 16-bit pattern survives the round trip through float.
#include <bit>
#include <cstdint>

namespace troupe {

/// Rounds to nearest even; beyond the largest half (65504) by half an ulp or more: infinity.
constexpr uint16_t float_to_half_bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) { // NaN: the payload's top 10 bits, kept non-zero so that it stays a NaN
    const uint32_t m = (a >> 13) & 0x3ffu;
    return static_cast<uint16_t>(sign | 0x7c00u | (m ? m : 0x200u));
  }
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u); // >= 65520 (and inf)
  if (a >= 0x38800000u) {                                             // a normal half
    uint32_t h = (((a >> 23) - 112u) << 10) | ((a & 0x7fffffu) >> 13);
    const uint32_t rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h; // a carry into the exponent is right
    return static_cast<uint16_t>(sign | h);
  }
  // A half subnormal (units of 2^-24) or zero; 2^-25 and below round to zero.
  const uint32_t e = a >> 23;
  if (e < 102u) return sign;
  const uint32_t mant = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e; // 14..24
  uint32_t h = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (h & 1u))) ++h; // 0x400 is the smallest normal: right
  return static_cast<uint16_t>(sign | h);
}

/// Exact.
constexpr float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 31u) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  if (e != 0u) return std::bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0u) return std::bit_cast<float>(sign);
  // Subnormal: m * 2^-24 with its top bit at p is 2^(p-24) * 1.f, a normal float.
  const auto p = static_cast<uint32_t>(std::bit_width(m)) - 1u;
  return std::bit_cast<float>(sign | ((p + 103u) << 23) | ((m << (23u - p)) & 0x7fffffu));
}

/// Rounds to nearest even (bf16 is float32's upper half: same exponent range).
constexpr uint16_t float_to_bf16_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) { // NaN: the upper payload, made non-zero when it is not
    const auto r = static_cast<uint16_t>(x >> 16);
    return (r & 0x7fu) ? r : static_cast<uint16_t>(r | 0x40u);
  }
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

/// Exact.
constexpr float bf16_bits_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

} // namespace troupe
