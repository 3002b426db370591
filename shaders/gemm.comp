#version 450
// Y[b][m][n] = act(sum_k A[b][m][k] * B[b][k][n] + bias), for 1x1 convolutions (A = weights
// [OC][IC], B = input [N][IC][HW]) and MatMul with a 2-D right operand (A rows = all batch rows).
// A and B are rgba32f texel buffers (lavapipe turns texel loads into vector gathers, while a
// storage-buffer load is a loop over the SIMD lanes): K and B's row length are multiples of 4.
// Each invocation computes MB rows x 4 columns; the row block comes from gl_WorkGroupID.z, so
// the A loads are the same for the whole workgroup and adjacent invocations read adjacent B texels.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require

#ifndef MB
#define MB 8
#endif

layout(constant_id = 0) const uint M = 1;
layout(constant_id = 1) const uint N = 1;    // columns stored (<= 4 * NT)
layout(constant_id = 2) const uint K = 4;    // multiple of 4
layout(constant_id = 3) const uint NT = 1;   // texels per row of B
layout(constant_id = 4) const uint BATCH = 1;
layout(constant_id = 5) const uint SAB = 0;  // batch strides in texels (A, B) and floats (Y)
layout(constant_id = 6) const uint SBB = 0;
layout(constant_id = 7) const uint SYB = 0;
layout(constant_id = 8) const uint BIAS = 0; // 0 none, 1 per row m, 2 per column n
// Scatter (ConvTranspose with kernel == stride, no pads): row m = (oc, kh, kw) with TAPS =
// KH * KW taps, column n = (ih, iw) of an input row IW wide; Y element at
// oc * OHW + (ih * KH + kh) * OW + iw * KW + kw. TAPS = 0: Y row-major [M][N].
layout(constant_id = 9) const uint TAPS = 0;
layout(constant_id = 10) const uint SKW = 1;
layout(constant_id = 11) const uint SIW = 1;
layout(constant_id = 12) const uint SOW = 1;
layout(constant_id = 13) const uint SOHW = 1;

layout(set = 0, binding = 0, FMT4) readonly uniform imageBuffer A;
layout(set = 0, binding = 1, FMT4) readonly uniform imageBuffer B;
layout(set = 0, binding = 2) readonly buffer Bias { SFLOAT bias[]; };
layout(set = 0, binding = 3, FMT1) writeonly uniform imageBuffer Y;

const uint KT = K / 4;

/// Index of Y[b][m][n] in the output buffer.
uint y_index(uint b, uint m, uint n) {
  if (TAPS == 0) return b * SYB + m * N + n;
  uint oc = m / TAPS, t = m % TAPS;
  uint kh = t / SKW, kw = t % SKW;
  uint ih = n / SIW, iw = n % SIW;
  return b * SYB + oc * SOHW + (ih * (TAPS / SKW) + kh) * SOW + iw * SKW + kw;
}
const uint MBLOCKS = (M + MB - 1) / MB;

void main() {
  uint nt = linear_id();
  if (nt >= NT) return;
  uint mb = slice_id() % MBLOCKS;
  uint b = slice_id() / MBLOCKS;
  uint m0 = mb * MB;
  int arow[MB];
  [[unroll]] for (int i = 0; i < MB; ++i) arow[i] = int(b * SAB + min(m0 + uint(i), M - 1) * KT);
  int bcol = int(b * SBB + nt);

  AVEC4 acc[MB];
  [[unroll]] for (int i = 0; i < MB; ++i) acc[i] = AVEC4(0.0);
  for (uint kt = 0; kt < KT; ++kt) {
    int br = bcol + int(kt * 4 * NT);
    AVEC4 b0 = AVEC4(imageLoad(B, br));
    AVEC4 b1 = AVEC4(imageLoad(B, br + int(NT)));
    AVEC4 b2 = AVEC4(imageLoad(B, br + int(2 * NT)));
    AVEC4 b3 = AVEC4(imageLoad(B, br + int(3 * NT)));
    [[unroll]] for (int i = 0; i < MB; ++i) {
      AVEC4 a = AVEC4(imageLoad(A, arow[i] + int(kt)));
      acc[i] += a.x * b0 + a.y * b1 + a.z * b2 + a.w * b3;
    }
  }

  uint n0 = nt * 4;
  for (int i = 0; i < MB; ++i) {
    uint m = m0 + uint(i);
    if (m >= M) break;
    for (int j = 0; j < 4; ++j) {
      if (n0 + uint(j) >= N) break;
      float v = float(acc[i][j]);
      if (BIAS == 1) v += bias[m];
      if (BIAS == 2) v += bias[n0 + uint(j)];
      imageStore(Y, int(y_index(b, m, n0 + uint(j))), vec4(activate(v)));
    }
  }
}
