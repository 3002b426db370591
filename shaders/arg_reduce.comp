#version 450
// ArgMax / ArgMin over the middle dim of [OUTER, AXIS, INNER], one row per invocation: the
// first (or with LAST the last) extreme's index, written as int64 (two 32-bit words). With
// HARDMAX: Hardmax instead, a float one-hot of the first maximum along the row.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint AXIS = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const bool MIN = false;
layout(constant_id = 4) const bool LAST = false;

layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
#ifdef HARDMAX
layout(set = 0, binding = 1) writeonly buffer O { SFLOAT y[]; };
#else
layout(set = 0, binding = 1) writeonly buffer O { uint y[]; };
#endif

void main() {
  uint id = linear_id();
  if (id >= OUTER * INNER) return;
  uint base = (id / INNER) * AXIS * INNER + id % INNER;
  float best = float(x[base]);
  uint at = 0;
  for (uint i = 1; i < AXIS; ++i) {
    float v = float(x[base + i * INNER]);
    bool better = MIN ? v < best : v > best;
    if (better || (LAST && v == best)) {
      best = v;
      at = i;
    }
  }
#ifdef HARDMAX
  for (uint i = 0; i < AXIS; ++i) y[base + i * INNER] = SFLOAT(i == at ? 1.0 : 0.0);
#else
  y[2 * id] = at;
  y[2 * id + 1] = 0u;
#endif
}
