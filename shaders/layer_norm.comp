#version 450
// LayerNormalization over rows of NORM elements (the dims from `axis` on): y = (x - mean) /
// sqrt(var + eps) * scale + bias, scale and bias of NORM elements; one row per invocation.
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

void main() {
  uint row = linear_id();
  if (row >= ROWS) return;
  uint base = row * NORM;
  float mean = 0.0;
  for (uint i = 0; i < NORM; ++i) mean += float(x[base + i]);
  mean /= float(NORM);
  float var = 0.0;
  for (uint i = 0; i < NORM; ++i) {
    float d = float(x[base + i]) - mean;
    var += d * d;
  }
  float inv = 1.0 / sqrt(var / float(NORM) + EPS);
  if (HAS_MEAN) mean_out[row] = SFLOAT(mean);
  if (HAS_INV) inv_out[row] = SFLOAT(inv);
  for (uint i = 0; i < NORM; ++i) {
    float v = (float(x[base + i]) - mean) * inv * float(scale[i]);
    y[base + i] = SFLOAT(HAS_BIAS ? v + float(bias[i]) : v);
  }
}
