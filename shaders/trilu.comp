#version 450
// Trilu over matrices [.., N, M]: keeps x where j - i >= K (UPPER) or j - i <= K (lower),
// zero elsewhere; one element per invocation. With WORDS: any element type of WORDS 32-bit
// words (int32, int64, double), one word per invocation.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint TOTAL = 1;
layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint M = 1;
layout(constant_id = 3) const int K = 0;
layout(constant_id = 4) const bool UPPER = true;
layout(constant_id = 6) const bool K_BUFFER = false; // k from binding 1 (an int64: two words)

#ifdef WORDS
layout(constant_id = 5) const uint PER = 1; // words per element
layout(set = 0, binding = 0) readonly buffer I { uint x[]; };
layout(set = 0, binding = 2) writeonly buffer O { uint y[]; };
#else
layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 2) writeonly buffer O { SFLOAT y[]; };
#endif
layout(set = 0, binding = 1) readonly buffer KB { int kb[]; };

void main() {
  uint id = linear_id();
  if (id >= TOTAL) return;
#ifdef WORDS
  uint e = id / PER;
#else
  uint e = id;
#endif
  int j = int(e % M), i = int((e / M) % N);
  int k = K;
  if (K_BUFFER) {
    // An int64 outside int32 saturates by its sign; then clamped as the host clamps a constant.
    int lo = kb[0], hi = kb[1];
    bool fits = (hi == 0 && lo >= 0) || (hi == -1 && lo < 0);
    k = clamp(fits ? lo : (hi < 0 ? -int(N) - 1 : int(M) + 1), -int(N) - 1, int(M) + 1);
  }
  bool keep = UPPER ? j - i >= k : j - i <= k;
#ifdef WORDS
  y[id] = keep ? x[id] : 0u;
#else
  y[id] = keep ? x[id] : SFLOAT(0.0);
#endif
}
