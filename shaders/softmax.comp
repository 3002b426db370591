#version 450
// Softmax / LogSoftmax over the middle dim of [OUTER, AXIS, INNER]; one row per invocation.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint AXIS = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const bool LOG = false;

layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 1) writeonly buffer O { SFLOAT y[]; };

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
