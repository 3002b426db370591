#version 450
// ArgMax / ArgMin over the middle dim of [OUTER, AXIS, INNER], one row per invocation (or with
// WG, for long rows, per 64-wide workgroup: each invocation takes every 64th element, the
// workgroup combines; llvmpipe caps an invocation's loop iterations): the first (or with LAST
// the last) extreme's index, written as int64 (two 32-bit words). With HARDMAX: Hardmax
// instead, a float one-hot of the first maximum along the row.
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

/// Whether (v, i) replaces (best, at) as the row's extreme.
bool better(float v, uint i, float best, uint at) {
  if (v == best) return LAST ? i > at : i < at;
  return MIN ? v < best : v > best;
}

#ifdef WG
shared float part_v[64];
shared uint part_i[64];
#endif

void main() {
#ifdef WG
  uint id = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint t = gl_LocalInvocationID.x;
  const uint STEP = 64u;
#else
  uint id = linear_id();
  uint t = 0u;
  const uint STEP = 1u;
#endif
  if (id >= OUTER * INNER) return; // (WG: the whole workgroup)
  uint base = (id / INNER) * AXIS * INNER + id % INNER;
  // An invocation with no element keeps a sentinel that every element beats.
  float best = t < AXIS ? float(x[base + t * INNER]) : (MIN ? 3.402823466e38 : -3.402823466e38);
  uint at = t < AXIS ? t : 0xffffffffu;
  for (uint i = t + STEP; i < AXIS; i += STEP) {
    float v = float(x[base + i * INNER]);
    if (better(v, i, best, at)) {
      best = v;
      at = i;
    }
  }
#ifdef WG
  part_v[t] = best;
  part_i[t] = at;
  barrier();
  for (uint h = 32u; h > 0u; h >>= 1u) {
    if (t < h && part_i[t + h] != 0xffffffffu &&
        (part_i[t] == 0xffffffffu || better(part_v[t + h], part_i[t + h], part_v[t], part_i[t]))) {
      part_v[t] = part_v[t + h];
      part_i[t] = part_i[t + h];
    }
    barrier();
  }
  at = part_i[0];
#endif
#ifdef HARDMAX
  for (uint i = t; i < AXIS; i += STEP) y[base + i * INNER] = SFLOAT(i == at ? 1.0 : 0.0);
#else
  if (t != 0u) return;
  y[2 * id] = at;
  y[2 * id + 1] = 0u;
#endif
}
