#version 450
// LayerNormalization over rows of NORM elements (the dims from `axis` on): y = (x - mean) /
// sqrt(var + eps) * scale + bias, scale and bias of NORM elements; one row per invocation, or
// with WG (long rows) one row per 64-wide workgroup whose invocations each loop over every
// 64th element (no invocation loops over the whole row: llvmpipe caps loop iterations).
// With HAS_MEAN / HAS_INV each row's mean and 1 / sqrt(var + eps) go to outputs M and R too.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint ROWS = 1;
layout(constant_id = 1) const uint NORM = 1;
layout(constant_id = 2) const float EPS = 1e-5;
layout(constant_id = 3) const bool HAS_BIAS = false;
layout(constant_id = 4) const bool HAS_MEAN = false;
layout(constant_id = 5) const bool HAS_INV = false;

layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 1) readonly buffer S { SFLOAT scale[]; };
layout(set = 0, binding = 2) readonly buffer B { SFLOAT bias[]; };
layout(set = 0, binding = 3) writeonly buffer O { SFLOAT y[]; };
layout(set = 0, binding = 4) writeonly buffer M { SFLOAT mean_out[]; };
layout(set = 0, binding = 5) writeonly buffer R { SFLOAT inv_out[]; };

#ifdef WG
shared float part[64];
const uint STEP = 64u;

/// The workgroup's sum of v; every invocation gets it.
float total(float v) {
  uint t = gl_LocalInvocationID.x;
  part[t] = v;
  barrier();
  for (uint h = 32u; h > 0u; h >>= 1u) {
    if (t < h) part[t] += part[t + h];
    barrier();
  }
  float r = part[0];
  barrier();
  return r;
}
#else
const uint STEP = 1u;
float total(float v) { return v; }
#endif

void main() {
#ifdef WG
  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint t = gl_LocalInvocationID.x;
#else
  uint row = linear_id();
  uint t = 0u;
#endif
  if (row >= ROWS) return; // (WG: the whole workgroup)
  uint base = row * NORM;
  float mean = 0.0;
  for (uint i = t; i < NORM; i += STEP) mean += float(x[base + i]);
  mean = total(mean) / float(NORM);
  float var = 0.0;
  for (uint i = t; i < NORM; i += STEP) {
    float d = float(x[base + i]) - mean;
    var += d * d;
  }
  float inv = 1.0 / sqrt(total(var) / float(NORM) + EPS);
  if (t == 0u) {
    if (HAS_MEAN) mean_out[row] = SFLOAT(mean);
    if (HAS_INV) inv_out[row] = SFLOAT(inv);
  }
  for (uint i = t; i < NORM; i += STEP) {
    float v = (float(x[base + i]) - mean) * inv * float(scale[i]);
    y[base + i] = SFLOAT(HAS_BIAS ? v + float(bias[i]) : v);
  }
}
