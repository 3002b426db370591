#version 450
// Softmax / LogSoftmax over the middle dim of [OUTER, AXIS, INNER]; one row per invocation, or
// with WG (long rows) one row per 64-wide workgroup: each invocation loops over every 64th
// element and the workgroup combines the parts in shared memory, so that no invocation loops
// over the whole row (a device may cap an invocation's loop iterations: llvmpipe's 65535).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint AXIS = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const bool LOG = false;

layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 1) writeonly buffer O { SFLOAT y[]; };

#ifdef WG
shared float part[64];

/// The workgroup's max (or sum) of v; every invocation gets it.
float combine(float v, bool is_max) {
  uint t = gl_LocalInvocationID.x;
  part[t] = v;
  barrier();
  for (uint h = 32u; h > 0u; h >>= 1u) {
    if (t < h) part[t] = is_max ? max(part[t], part[t + h]) : part[t] + part[t + h];
    barrier();
  }
  float r = part[0];
  barrier();
  return r;
}

void main() {
  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= OUTER * INNER) return; // the whole workgroup
  uint t = gl_LocalInvocationID.x;
  uint base = (row / INNER) * AXIS * INNER + row % INNER;
  float m = -3.402823466e38;
  for (uint i = t; i < AXIS; i += 64u) m = max(m, float(x[base + i * INNER]));
  m = combine(m, true);
  float s = 0.0;
  for (uint i = t; i < AXIS; i += 64u) s += exp(float(x[base + i * INNER]) - m);
  s = combine(s, false);
  if (LOG) {
    float ls = log(s);
    for (uint i = t; i < AXIS; i += 64u) y[base + i * INNER] = SFLOAT(float(x[base + i * INNER]) - m - ls);
  } else {
    float inv = 1.0 / s;
    for (uint i = t; i < AXIS; i += 64u) y[base + i * INNER] = SFLOAT(exp(float(x[base + i * INNER]) - m) * inv);
  }
}
#else
void main() {
  uint id = linear_id();
  if (id >= OUTER * INNER) return;
  uint base = (id / INNER) * AXIS * INNER + id % INNER;
  float m = -3.402823466e38;
  for (uint i = 0; i < AXIS; ++i) m = max(m, float(x[base + i * INNER]));
  float s = 0.0;
  for (uint i = 0; i < AXIS; ++i) s += exp(float(x[base + i * INNER]) - m);
  if (LOG) {
    float ls = log(s);
    for (uint i = 0; i < AXIS; ++i) y[base + i * INNER] = SFLOAT(float(x[base + i * INNER]) - m - ls);
  } else {
    float inv = 1.0 / s;
    for (uint i = 0; i < AXIS; ++i) y[base + i * INNER] = SFLOAT(exp(float(x[base + i * INNER]) - m) * inv);
  }
}
#endif
