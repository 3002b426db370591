#version 450
// TopK along one axis of [OUTER, LEN, INNER]: one invocation per input element counts the
// elements of its line that come before it (larger, or smaller with SMALLEST; ties by the lower
// index, as a stable sort); a rank below K writes the value and its index (an int64: two
// words) at that rank. Ranks are a permutation, so no two invocations write one place.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint TOTAL = 1; // OUTER * LEN * INNER
layout(constant_id = 1) const uint LEN = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint K = 1;
layout(constant_id = 4) const bool SMALLEST = false;

layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 1) writeonly buffer V { SFLOAT vals[]; };
layout(set = 0, binding = 2) writeonly buffer N { uint inds[]; };

/// Whether a (at index ia) sorts before b (at ib); NaN sorts after every number.
bool before(float a, uint ia, float b, uint ib) {
  bool na = isnan(a), nb = isnan(b);
  if (na || nb) return !na && nb || na && nb && ia < ib;
  if (a == b) return ia < ib;
  return SMALLEST ? a < b : a > b;
}

void main() {
  uint id = linear_id();
  if (id >= TOTAL) return;
  uint i = id % INNER, a = (id / INNER) % LEN, o = id / (INNER * LEN);
  uint base = o * LEN * INNER + i;
  float v = float(x[id]);
  uint rank = 0u;
  for (uint j = 0u; j < LEN && rank < K; ++j)
    if (before(float(x[base + j * INNER]), j, v, a)) ++rank;
  if (rank >= K) return;
  uint at = (o * K + rank) * INNER + i;
  vals[at] = SFLOAT(v);
  inds[2u * at] = a;
  inds[2u * at + 1u] = 0u;
}
