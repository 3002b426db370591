#version 450
// Gather of any element type on raw 32-bit words: y[o, j, i] = x[o, idx[j], i] over [OUTER,
// LEN, INNER] data of ES-byte elements (1: u8/i8/bool, 2: f16/u16/i16, 4, 8) and NIDX int32
// (IDX_WORDS 1) or int64 (2) indices. Each invocation writes one output word: 4 / ES elements
// of a narrow type, or one word of a wide one. A negative index counts from the end; one out of
// range reads nothing, writes 0 and reports itself in the status buffer (the first one wins:
// the op's TAG, then the index's two words), which the host turns into an error naming the op.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint TOTAL = 1; // output elements
layout(constant_id = 1) const uint IDX_WORDS = 2;
layout(constant_id = 2) const uint LEN = 1;
layout(constant_id = 3) const uint INNER = 1;
layout(constant_id = 4) const uint NIDX = 1;
layout(constant_id = 5) const uint ES = 4;
layout(constant_id = 6) const uint TAG = 1;
#ifdef F16
const uint EB = 2u; // the F16 variant runs only for float data, stored as float16
#else
const uint EB = ES;
#endif

layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) readonly buffer I { int idx[]; };
layout(set = 0, binding = 2) buffer S { uint status[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint y[]; };

/// The data element index that output element e reads; -1 (after reporting) when its index is
/// out of range.
int source(uint e) {
  uint i = e % INNER, j = (e / INNER) % NIDX, o = e / (INNER * NIDX);
  int lo, hi;
  if (IDX_WORDS == 1u) {
    lo = idx[j];
    hi = lo < 0 ? -1 : 0;
  } else {
    lo = idx[2u * j];
    hi = idx[2u * j + 1u];
  }
  bool fits = (hi == 0 && lo >= 0) || (hi == -1 && lo < 0);
  int k = lo < 0 ? lo + int(LEN) : lo;
  if (!fits || k < 0 || k >= int(LEN)) {
    if (atomicCompSwap(status[0], 0u, TAG) == 0u) {
      status[1] = uint(lo);
      status[2] = uint(hi);
    }
    return -1;
  }
  return int((o * LEN + uint(k)) * INNER + i);
}

void main() {
  uint w = linear_id();
  if (EB >= 4u) {
    const uint per = EB / 4u; // words per element
    if (w >= TOTAL * per) return;
    int s = source(w / per);
    y[w] = s < 0 ? 0u : x[uint(s) * per + w % per];
    return;
  }
  const uint per = 4u / EB; // elements per word
  const uint bits = EB * 8u;
  const uint mask = EB == 1u ? 0xffu : 0xffffu;
  if (w * per >= TOTAL) return;
  uint word = 0u;
  for (uint k = 0u; k < per; ++k) {
    uint e = w * per + k;
    if (e >= TOTAL) break;
    int s = source(e);
    if (s < 0) continue;
    uint v = (x[uint(s) / per] >> ((uint(s) % per) * bits)) & mask;
    word |= v << (k * bits);
  }
  y[w] = word;
}
