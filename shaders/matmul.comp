#version 450
// Batched MatMul / Gemm: Y[b] = act(ALPHA * A[b] x B[b] + BETA * bias). Layouts and
// transposes are strides (specialization constants), up to 4 batch dims with per-input
// batch strides (0 = broadcast). Register blocking: each invocation computes a 4x4 block of Y
// (4x8 with B4).
// A, B and Y are r32f texel buffers (lavapipe gathers texel loads; a storage-buffer load is a
// loop over the SIMD lanes), the bias a storage buffer (read once per output).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 0) const uint M = 1;
layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint K = 1;
layout(constant_id = 3) const uint B0 = 1;
layout(constant_id = 4) const uint B1 = 1;
layout(constant_id = 5) const uint B2 = 1;
layout(constant_id = 6) const uint B3 = 1;
layout(constant_id = 7) const uint SAB0 = 0;
layout(constant_id = 8) const uint SAB1 = 0;
layout(constant_id = 9) const uint SAB2 = 0;
layout(constant_id = 10) const uint SAB3 = 0;
layout(constant_id = 11) const uint SBB0 = 0;
layout(constant_id = 12) const uint SBB1 = 0;
layout(constant_id = 13) const uint SBB2 = 0;
layout(constant_id = 14) const uint SBB3 = 0;
layout(constant_id = 15) const uint SAM = 0;   // A element (m, k) at m*SAM + k*SAK
layout(constant_id = 16) const uint SAK = 1;
layout(constant_id = 17) const uint SBK = 0;   // B element (k, n) at k*SBK + n*SBN
layout(constant_id = 18) const uint SBN = 1;
layout(constant_id = 19) const float ALPHA = 1.0;
layout(constant_id = 20) const float BETA = 1.0;
layout(constant_id = 21) const bool HAS_BIAS = false;
layout(constant_id = 22) const uint SCM = 0;   // bias element (m, n) at m*SCM + n*SCN
layout(constant_id = 23) const uint SCN = 0;

layout(set = 0, binding = 0, FMT1) readonly uniform imageBuffer A;
#ifdef B4
// B4: B row-major with N % 4 == 0 (and so whole-texel rows and batch strides), bound as
// rgba32f: one texel load gives 4 columns, and each invocation computes 4 rows x 8 columns,
// so a k step costs 2 texel loads of B and 4 of A for 32 FMAs (the r32f path: 8 for 16).
layout(set = 0, binding = 1, FMT4) readonly uniform imageBuffer Bm;
const uint NT = N / 4;
const uint NB = (NT + 1) / 2;
#else
layout(set = 0, binding = 1, FMT1) readonly uniform imageBuffer Bm;
const uint NB = (N + 3) / 4;
#endif
layout(set = 0, binding = 2) readonly buffer Bias { SFLOAT bias[]; };
#ifdef B4
layout(set = 0, binding = 3, FMT4) writeonly uniform imageBuffer Y; // rows of Y are whole texels too
#else
layout(set = 0, binding = 3, FMT1) writeonly uniform imageBuffer Y;
#endif

#ifndef MR
#define MR 4 // rows of Y per invocation (B4 only; the r32f path keeps 4)
#endif
const uint MB = (M + MR - 1) / MR;

void main() {
  uint id = linear_id();
  if (id >= B0 * B1 * B2 * B3 * MB * NB) return;
  uint nb = id % NB;
  uint r = id / NB;
  uint mb = r % MB;
  uint bt = r / MB;
  uint b3 = bt % B3; bt /= B3;
  uint b2 = bt % B2; bt /= B2;
  uint b1 = bt % B1;
  uint b0 = bt / B1;
  uint abase = b0 * SAB0 + b1 * SAB1 + b2 * SAB2 + b3 * SAB3;
  uint bbase = b0 * SBB0 + b1 * SBB1 + b2 * SBB2 + b3 * SBB3;
  uint ybatch = (r / MB) * M * N;
#ifdef B4
  const uint NW = 8;
#else
  const uint NW = 4;
#endif
  uint m0 = mb * MR, n0 = nb * NW;
  // Rows/columns past the edge read a clamped (valid) index and are not stored.
  int ar[MR];
  [[unroll]] for (uint i = 0; i < MR; ++i) ar[i] = int(abase + min(m0 + i, M - 1) * SAM);
  AVEC4 acc[2 * MR];
  [[unroll]] for (uint i = 0; i < 2 * MR; ++i) acc[i] = AVEC4(0.0);
#ifdef B4
  int bt0 = int(bbase / 4 + min(nb * 2, NT - 1)), bt1 = int(bbase / 4 + min(nb * 2 + 1, NT - 1));
  for (uint k = 0; k < K; ++k) {
    int bk = int(k * (SBK / 4)), ak = int(k * SAK);
    AVEC4 b0 = AVEC4(imageLoad(Bm, bt0 + bk)), b1 = AVEC4(imageLoad(Bm, bt1 + bk));
    [[unroll]] for (uint i = 0; i < MR; ++i) {
      AFLOAT a = AFLOAT(imageLoad(A, ar[i] + ak).x);
      acc[i] += a * b0;
      acc[MR + i] += a * b1;
    }
  }
#else
  int bc[4];
  [[unroll]] for (uint i = 0; i < 4; ++i) bc[i] = int(bbase + min(n0 + i, N - 1) * SBN);
  for (uint k = 0; k < K; ++k) {
    int bk = int(k * SBK), ak = int(k * SAK);
    AVEC4 bv = AVEC4(imageLoad(Bm, bc[0] + bk).x, imageLoad(Bm, bc[1] + bk).x, imageLoad(Bm, bc[2] + bk).x,
                     imageLoad(Bm, bc[3] + bk).x);
    [[unroll]] for (uint i = 0; i < 4; ++i) acc[i] += AFLOAT(imageLoad(A, ar[i] + ak).x) * bv;
  }
#endif
#ifdef B4
  for (uint i = 0; i < MR; ++i) {
    uint m = m0 + i;
    if (m >= M) break;
    [[unroll]] for (uint t = 0; t < 2; ++t) {
      uint nt = nb * 2 + t;
      if (nt >= NT) break;
      vec4 v = ALPHA * vec4(acc[t * MR + i]);
      [[unroll]] for (uint j = 0; j < 4; ++j) {
        if (HAS_BIAS) v[j] += BETA * bias[m * SCM + (nt * 4 + j) * SCN];
        v[j] = activate(v[j]);
      }
      imageStore(Y, int((ybatch + m * N) / 4 + nt), v);
    }
  }
#else
  for (uint i = 0; i < 4; ++i) {
    uint m = m0 + i;
    if (m >= M) break;
    for (uint j = 0; j < NW; ++j) {
      uint n = n0 + j;
      if (n >= N) break;
      float v = ALPHA * float(acc[(j / 4) * 4 + i][j % 4]);
      if (HAS_BIAS) v += BETA * bias[m * SCM + n * SCN];
      imageStore(Y, int(ybatch + m * N + n), vec4(activate(v)));
    }
  }
#endif
}
