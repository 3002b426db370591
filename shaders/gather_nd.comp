#version 450
// GatherND: output element (t, s) of [BATCH * PER_BATCH tuples, SLICE] copies data at
// (t / PER_BATCH) * DATA_BATCH + sum_k idx[t * M + k] * S_k + s, the M indexed dims of lengths
// L_k and strides S_k. An index out of range gives 0 (the reference device names it instead).
// With WORDS: any element type of PER 32-bit words (int32, int64), one word per invocation.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint TOTAL = 1; // output elements (times PER)
layout(constant_id = 1) const uint IDX_WORDS = 2;
layout(constant_id = 2) const uint PER = 1;
layout(constant_id = 3) const uint M = 1;
layout(constant_id = 4) const uint SLICE = 1;
layout(constant_id = 5) const uint PER_BATCH = 1;
layout(constant_id = 6) const uint DATA_BATCH = 1;
layout(constant_id = 7) const int L0 = 1;
layout(constant_id = 8) const int L1 = 1;
layout(constant_id = 9) const int L2 = 1;
layout(constant_id = 10) const int L3 = 1;
layout(constant_id = 11) const int L4 = 1;
layout(constant_id = 12) const int L5 = 1;
layout(constant_id = 13) const uint S0 = 0;
layout(constant_id = 14) const uint S1 = 0;
layout(constant_id = 15) const uint S2 = 0;
layout(constant_id = 16) const uint S3 = 0;
layout(constant_id = 17) const uint S4 = 0;
layout(constant_id = 18) const uint S5 = 0;

#ifdef WORDS
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
#else
layout(set = 0, binding = 0) readonly buffer X { SFLOAT x[]; };
#endif
layout(set = 0, binding = 1) readonly buffer I { int idx[]; };
#ifdef WORDS
layout(set = 0, binding = 2) writeonly buffer Y { uint y[]; };
#else
layout(set = 0, binding = 2) writeonly buffer Y { SFLOAT y[]; };
#endif

#include "index.glsl"

void main() {
  uint id = linear_id();
  if (id >= TOTAL) return;
  uint e = id / PER, w = id % PER;
  uint s = e % SLICE, t = e / SLICE;
  int lens[6] = int[6](L0, L1, L2, L3, L4, L5);
  uint strides[6] = uint[6](S0, S1, S2, S3, S4, S5);
  uint off = (t / PER_BATCH) * DATA_BATCH + s;
  for (uint k = 0u; k < M; ++k) {
    int i = index_at(t * M + k, lens[k]);
    if (i < 0) {
#ifdef WORDS
      y[id] = 0u;
#else
      y[id] = SFLOAT(0.0);
#endif
      return;
    }
    off += uint(i) * strides[k];
  }
  y[id] = x[off * PER + w];
}
