#version 450
// Gather: y[o, j, i] = x[o, idx[j], i] over [OUTER, LEN, INNER] data and NIDX indices.
// ELEMENTS (GatherElements): y and the indices share a shape of up to 6 dims (D0..D5); y at
// those coordinates reads x at the same ones but `idx` along AXIS (data strides XS0..XS5).
// Indices are int32 or int64 (IDX_WORDS 32-bit words each, little-endian); a negative one
// counts from the end; one out of range reads 0 (the reference device names it instead).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint TOTAL = 1;
layout(constant_id = 1) const uint IDX_WORDS = 2;
layout(constant_id = 2) const uint LEN = 1; // the gathered axis' length in the data
#ifdef ELEMENTS
layout(constant_id = 3) const uint AXIS = 0; // 0..5, of the dims right-aligned in 6
layout(constant_id = 4) const uint D0 = 1;
layout(constant_id = 5) const uint D1 = 1;
layout(constant_id = 6) const uint D2 = 1;
layout(constant_id = 7) const uint D3 = 1;
layout(constant_id = 8) const uint D4 = 1;
layout(constant_id = 9) const uint D5 = 1;
layout(constant_id = 10) const uint XS0 = 0;
layout(constant_id = 11) const uint XS1 = 0;
layout(constant_id = 12) const uint XS2 = 0;
layout(constant_id = 13) const uint XS3 = 0;
layout(constant_id = 14) const uint XS4 = 0;
layout(constant_id = 15) const uint XS5 = 0;
#else
layout(constant_id = 3) const uint INNER = 1;
layout(constant_id = 4) const uint NIDX = 1;
#endif

layout(set = 0, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(set = 0, binding = 1) readonly buffer I { int idx[]; };
layout(set = 0, binding = 2) writeonly buffer Y { SFLOAT y[]; };

/// Index k as an int: -1 when it does not fit (an int64 beyond int32 is out of range anyway).
int index_at(uint k) {
  if (IDX_WORDS == 1u) return idx[k];
  int lo = idx[2u * k], hi = idx[2u * k + 1u];
  return (hi == 0 && lo >= 0) || (hi == -1 && lo < 0) ? lo : -int(LEN) - 1;
}

void main() {
  uint id = linear_id();
  if (id >= TOTAL) return;
#ifdef ELEMENTS
  int k = index_at(id);
#else
  uint i = id % INNER, j = (id / INNER) % NIDX, o = id / (INNER * NIDX);
  int k = index_at(j);
#endif
  if (k < 0) k += int(LEN);
  if (k < 0 || k >= int(LEN)) {
    y[id] = SFLOAT(0.0);
    return;
  }
#ifdef ELEMENTS
  uint c[6];
  uint r = id;
  c[5] = r % D5; r /= D5;
  c[4] = r % D4; r /= D4;
  c[3] = r % D3; r /= D3;
  c[2] = r % D2; r /= D2;
  c[1] = r % D1;
  c[0] = r / D1;
  c[AXIS] = uint(k);
  y[id] = x[c[0] * XS0 + c[1] * XS1 + c[2] * XS2 + c[3] * XS3 + c[4] * XS4 + c[5] * XS5];
#else
  y[id] = x[(o * LEN + uint(k)) * INNER + i];
#endif
}
