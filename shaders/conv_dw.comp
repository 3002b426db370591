#version 450
// Depthwise 2-D convolution (NCHW, group = IC = OC) with IW a multiple of 4 and OWB * SW a
// multiple of 4. One invocation computes an OHB x OWB output tile of one channel: its KH*KW
// weights are loaded once (as rgba32f texels of [C][ceil(KH*KW/4)*4]), and each input row
// under the tile (OHB-1)*SH + (KH-1)*DH + 1 rows, each a segment of whole rgba32f texels) is
// loaded once and feeds every (output row, kh) pair that reads it. Invocations run over
// channels x tiles, so small maps still fill the 64-wide workgroups (one workgroup per channel
// left most lanes idle at 20x20). All loops have specialization-constant or #define trip counts
// and are unrolled: the pairing conditions fold away after specialization.
// Bias r32f texels; Y bound twice (r32f, and rgba32f for Y4).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require

#ifndef OHB
#define OHB 4
#endif
#ifndef OWB
#define OWB 4
#endif
#define MAXT 6  // texels per loaded row segment (the lowering checks)
#define MAXR 12 // loaded input rows per tile (the lowering checks)
#define MAXWT 7 // weight texels per channel: KH*KW <= 28 (the lowering checks)

layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint IC = 1;
layout(constant_id = 2) const int IH = 1;
layout(constant_id = 3) const int IW = 4;
layout(constant_id = 4) const uint OC = 1;
layout(constant_id = 5) const int OH = 1;
layout(constant_id = 6) const int OW = 1;
layout(constant_id = 7) const int KH = 1;
layout(constant_id = 8) const int KW = 1;
layout(constant_id = 9) const int SH = 1;
layout(constant_id = 10) const int SW = 1; // OWB * SW % 4 == 0
layout(constant_id = 11) const int DH = 1;
layout(constant_id = 12) const int DW = 1;
layout(constant_id = 13) const int PH = 0;
layout(constant_id = 14) const int PW = 0;
layout(constant_id = 15) const uint GROUPS = 1;
layout(constant_id = 16) const bool HAS_BIAS = false;
layout(constant_id = 17) const bool Y4 = false; // OW % 4 == 0: store whole rgba32f texels of Y

layout(set = 0, binding = 0, FMT4) readonly uniform imageBuffer X;
layout(set = 0, binding = 1, FMT4) readonly uniform imageBuffer W;
layout(set = 0, binding = 2, FMT1) readonly uniform imageBuffer Bias;
layout(set = 0, binding = 3, FMT1) writeonly uniform imageBuffer Y;
layout(set = 0, binding = 4, FMT4) writeonly uniform imageBuffer Yv; // Y again, as 4-float texels

const uint OHT = uint(OH + OHB - 1) / OHB;
const uint OWT = uint(OW + OWB - 1) / OWB;
const int KK = KH * KW;
const int WT = (KK + 3) / 4;                     // weight texels per channel
const int IWT = IW / 4;                          // texels per input row
const int LEAD = (PW + 3) / 4;                   // texels left of column ow0
const int OFF = LEAD * 4 - PW;                   // floats to skip in the loaded segment
const int NTX = (OFF + (OWB - 1) * SW + (KW - 1) * DW + 1 + 3) / 4;
const int NR = (OHB - 1) * SH + (KH - 1) * DH + 1; // input rows under one tile

void main() {
  uint id = linear_id();
  if (id >= OC * OHT * OWT) return;
  uint owt = id % OWT;
  uint rest = id / OWT;
  int oh0 = int(rest % OHT) * OHB;
  uint c = rest / OHT;
  uint n = slice_id();
  int ow0 = int(owt) * OWB;
  int t0 = ow0 * SW / 4 - LEAD; // first texel of each row segment, relative to the row

  AFLOAT w[MAXWT * 4];
  [[unroll]] for (int q = 0; q < MAXWT; ++q) {
    if (q >= WT) break;
    AVEC4 v = AVEC4(imageLoad(W, int(c) * WT + q));
    w[4 * q] = v.x;
    w[4 * q + 1] = v.y;
    w[4 * q + 2] = v.z;
    w[4 * q + 3] = v.w;
  }

  AFLOAT acc[OHB * OWB];
  [[unroll]] for (int j = 0; j < OHB * OWB; ++j) acc[j] = AFLOAT(0.0);

  int plane = int((n * IC + c) * uint(IH)) * IWT;
  [[unroll]] for (int r = 0; r < MAXR; ++r) {
    if (r >= NR) break;
    int ih = oh0 * SH - PH + r;
    bool row_ok = ih >= 0 && ih < IH;
    int row = plane + ih * IWT;
    AFLOAT xs[MAXT * 4];
    [[unroll]] for (int q = 0; q < MAXT; ++q) {
      if (q >= NTX) break;
      int t = t0 + q;
      AVEC4 v = AVEC4(imageLoad(X, row + t));
      bool ok = row_ok && t >= 0 && t < IWT;
      v = ok ? v : AVEC4(0.0);
      xs[4 * q] = v.x;
      xs[4 * q + 1] = v.y;
      xs[4 * q + 2] = v.z;
      xs[4 * q + 3] = v.w;
    }
    // Every (output row oy, kernel row kh) with oy*SH + kh*DH == r reads this row.
    [[unroll]] for (int oy = 0; oy < OHB; ++oy) {
      int d = r - oy * SH;
      if (d < 0 || d % DH != 0 || d / DH >= KH) continue;
      int kh = d / DH;
      [[unroll]] for (int kw = 0; kw < KW; ++kw) {
        AFLOAT wv = w[kh * KW + kw];
        [[unroll]] for (int j = 0; j < OWB; ++j) acc[oy * OWB + j] += xs[OFF + j * SW + kw * DW] * wv;
      }
    }
  }

  // (unrolled: a run-time row or column index would index the accumulators dynamically)
  float b = HAS_BIAS ? imageLoad(Bias, int(c)).x : 0.0;
  [[unroll]] for (int oy = 0; oy < OHB; ++oy) {
    int oh = oh0 + oy;
    if (oh >= OH) break;
    int obase = int((n * OC + c) * uint(OH) + uint(oh)) * OW;
    if (Y4) {
      [[unroll]] for (int j = 0; j < OWB; j += 4) {
        int ow = ow0 + j;
        if (ow < OW)
          imageStore(Yv, (obase + ow) / 4,
                     vec4(activate(float(acc[oy * OWB + j]) + b), activate(float(acc[oy * OWB + j + 1]) + b),
                          activate(float(acc[oy * OWB + j + 2]) + b), activate(float(acc[oy * OWB + j + 3]) + b)));
      }
    } else {
      [[unroll]] for (int j = 0; j < OWB; ++j) {
        int ow = ow0 + j;
        if (ow < OW) imageStore(Y, obase + ow, vec4(activate(float(acc[oy * OWB + j]) + b)));
      }
    }
  }
}
