#version 450
// Resize over the last two dims of NCHW (N and C not scaled): nearest (4 rounding modes) and
// bilinear, with the ONNX coordinate transformation modes. One output element per invocation.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint NC = 1;
layout(constant_id = 1) const int IH = 1;
layout(constant_id = 2) const int IW = 1;
layout(constant_id = 3) const uint OH = 1;
layout(constant_id = 4) const uint OW = 1;
layout(constant_id = 5) const float SCALE_H = 1.0;  // output / input
layout(constant_id = 6) const float SCALE_W = 1.0;
layout(constant_id = 7) const bool LINEAR = false;
layout(constant_id = 8) const int COORD = 0;    // 0 half_pixel 1 asymmetric 2 align_corners 3 pytorch_half_pixel 4 tf_half_pixel_for_nearest
layout(constant_id = 9) const int NEAREST = 0;  // 0 round_prefer_floor 1 round_prefer_ceil 2 floor 3 ceil
// The output length the coordinates use: input * scale, unrounded, when scales are given.
layout(constant_id = 10) const float LEN_H = 1.0;
layout(constant_id = 11) const float LEN_W = 1.0;

layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 1) writeonly buffer O { SFLOAT y[]; };

float source_coord(float o, float scale, int in_len, float out_len) {
  if (COORD == 1) return o / scale;
  if (COORD == 2) return out_len == 1.0 ? 0.0 : o * float(in_len - 1) / (out_len - 1.0);
  if (COORD == 3) return out_len > 1.0 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (COORD == 4) return (o + 0.5) / scale;
  return (o + 0.5) / scale - 0.5;
}

int nearest_index(float c, int len) {
  int i;
  if (NEAREST == 2) i = int(floor(c));
  else if (NEAREST == 3) i = int(ceil(c));
  else if (NEAREST == 1) i = (c == floor(c) + 0.5) ? int(ceil(c)) : int(round(c));
  else i = (c == floor(c) + 0.5) ? int(floor(c)) : int(round(c));
  return clamp(i, 0, len - 1);
}

void main() {
  uint id = linear_id();
  if (id >= NC * OH * OW) return;
  uint ow = id % OW;
  uint r = id / OW;
  uint oh = r % OH;
  uint nc = r / OH;
  uint base = nc * uint(IH * IW);
  float ch = source_coord(float(oh), SCALE_H, IH, LEN_H);
  float cw = source_coord(float(ow), SCALE_W, IW, LEN_W);
  if (!LINEAR) {
    y[id] = x[base + uint(nearest_index(ch, IH) * IW + nearest_index(cw, IW))];
    return;
  }
  ch = clamp(ch, 0.0, float(IH - 1));
  cw = clamp(cw, 0.0, float(IW - 1));
  int h0 = int(floor(ch)), w0 = int(floor(cw));
  int h1 = min(h0 + 1, IH - 1), w1 = min(w0 + 1, IW - 1);
  float fh = ch - float(h0), fw = cw - float(w0);
  float v00 = x[base + uint(h0 * IW + w0)], v01 = x[base + uint(h0 * IW + w1)];
  float v10 = x[base + uint(h1 * IW + w0)], v11 = x[base + uint(h1 * IW + w1)];
  y[id] = SFLOAT(mix(mix(v00, v01, fw), mix(v10, v11, fw), fh));
}
