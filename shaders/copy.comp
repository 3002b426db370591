#version 450
// Strided copy of 32-bit words over up to 6 dims: Transpose (permuted input strides),
// Concat/Split/Slice (offsets and steps), Expand (zero strides). Bits are copied as-is.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint TOTAL = 1;
layout(constant_id = 1) const uint D0 = 1;
layout(constant_id = 2) const uint D1 = 1;
layout(constant_id = 3) const uint D2 = 1;
layout(constant_id = 4) const uint D3 = 1;
layout(constant_id = 5) const uint D4 = 1;
layout(constant_id = 6) const uint D5 = 1;
layout(constant_id = 7) const int SI0 = 0;
layout(constant_id = 8) const int SI1 = 0;
layout(constant_id = 9) const int SI2 = 0;
layout(constant_id = 10) const int SI3 = 0;
layout(constant_id = 11) const int SI4 = 0;
layout(constant_id = 12) const int SI5 = 0;
layout(constant_id = 13) const uint SO0 = 0;
layout(constant_id = 14) const uint SO1 = 0;
layout(constant_id = 15) const uint SO2 = 0;
layout(constant_id = 16) const uint SO3 = 0;
layout(constant_id = 17) const uint SO4 = 0;
layout(constant_id = 18) const uint SO5 = 0;
layout(constant_id = 19) const int IN_OFF = 0;
layout(constant_id = 20) const uint OUT_OFF = 0;

layout(set = 0, binding = 0) readonly buffer I { SWORD src[]; };
layout(set = 0, binding = 1) writeonly buffer O { SWORD dst[]; };

void main() {
  uint i = linear_id();
  if (i >= TOTAL) return;
  uint r = i;
  int c5 = int(r % D5); r /= D5;
  int c4 = int(r % D4); r /= D4;
  int c3 = int(r % D3); r /= D3;
  int c2 = int(r % D2); r /= D2;
  int c1 = int(r % D1); r /= D1;
  int c0 = int(r);
  int si = IN_OFF + c0 * SI0 + c1 * SI1 + c2 * SI2 + c3 * SI3 + c4 * SI4 + c5 * SI5;
  uint so = OUT_OFF + uint(c0) * SO0 + uint(c1) * SO1 + uint(c2) * SO2 + uint(c3) * SO3 + uint(c4) * SO4 + uint(c5) * SO5;
  dst[so] = src[si];
}
