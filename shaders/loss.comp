#version 450
// NegativeLogLikelihoodLoss and (SOFTMAX) SoftmaxCrossEntropyLoss over x [N, C, D] (D the
// product of d1..dk) and targets [N, D] of int32 or int64 classes (IDX_WORDS 32-bit words
// each, little-endian), optional weight [C]. Position p = n * D + k loses -logp[n, t, k] * w[t]
// and weighs w[t] (1 without weights); logp is x itself, or (SOFTMAX) x's log-softmax over C
// computed here. A target equal to the ignore index, or outside [0, C) (the reference fails
// the request; a shader cannot), loses 0 and weighs 0, in a mean too.
// REDUCTION 0 (none): one position per invocation into y [N, D]. 1 (sum), 2 (mean): one
// workgroup of 64 into the scalar y[0]; invocation t sums positions t, t + 64, ... then a fixed
// tree adds the 64 partial sums, so every run adds in the same order.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint D = 1;
layout(constant_id = 3) const uint IDX_WORDS = 2;
layout(constant_id = 4) const bool HAS_IGNORE = false;
layout(constant_id = 5) const int IGNORE_LO = 0; // the ignore index's low and high words
layout(constant_id = 6) const int IGNORE_HI = 0;
layout(constant_id = 7) const bool WEIGHTED = false;
layout(constant_id = 8) const uint REDUCTION = 0;
layout(constant_id = 9) const bool SOFTMAX = false;

layout(set = 0, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(set = 0, binding = 1) readonly buffer T { int target[]; };
layout(set = 0, binding = 2) readonly buffer W { SFLOAT weight[]; }; // x again without weights
layout(set = 0, binding = 3) writeonly buffer Y { SFLOAT y[]; };

/// (loss, weight) of position p.
vec2 term(uint p) {
  int lo, hi;
  if (IDX_WORDS == 1u) {
    lo = target[p];
    hi = lo < 0 ? -1 : 0; // sign-extended, as the ignore index is compared in 64 bits
  } else {
    lo = target[2u * p];
    hi = target[2u * p + 1u];
  }
  if (HAS_IGNORE && lo == IGNORE_LO && hi == IGNORE_HI) return vec2(0.0);
  if (hi != 0 || lo < 0 || lo >= int(C)) return vec2(0.0);
  const uint base = (p / D) * C * D + p % D;
  float lp = float(x[base + uint(lo) * D]);
  if (SOFTMAX) {
    float m = -3.402823466e38;
    for (uint c = 0; c < C; ++c) m = max(m, float(x[base + c * D]));
    float s = 0.0;
    for (uint c = 0; c < C; ++c) s += exp(float(x[base + c * D]) - m);
    lp = lp - m - log(s);
  }
  const float w = WEIGHTED ? float(weight[uint(lo)]) : 1.0;
  return vec2(-lp * w, w);
}

shared float part_loss[64];
shared float part_weight[64];

void main() {
  if (REDUCTION == 0u) {
    const uint id = linear_id();
    if (id < N * D) y[id] = SFLOAT(term(id).x);
    return;
  }
  const uint t = gl_LocalInvocationID.x;
  vec2 acc = vec2(0.0);
  for (uint p = t; p < N * D; p += 64u) acc += term(p);
  part_loss[t] = acc.x;
  part_weight[t] = acc.y;
  barrier();
  for (uint h = 32u; h > 0u; h >>= 1u) {
    if (t < h) {
      part_loss[t] += part_loss[t + h];
      part_weight[t] += part_weight[t + h];
    }
    barrier();
  }
  if (t != 0u) return;
  const float s = part_loss[0];
  if (REDUCTION == 1u) {
    y[0] = SFLOAT(s);
    return;
  }
  // Mean divides by the weights taken: without weights or an ignore index, the reference's
  // N * D when every target is in range (counted exactly: at most 2^20 of them).
  const float w = part_weight[0];
  // x / 0 spelled out (the reference's double division): NaN for 0 / 0 (every target
  // ignored), an infinity of the sum's sign otherwise.
  float r;
  if (w != 0.0) r = s / w;
  else if (s == 0.0) r = uintBitsToFloat(0x7fc00000u);
  else r = uintBitsToFloat(s > 0.0 ? 0x7f800000u : 0xff800000u);
  y[0] = SFLOAT(r);
}
