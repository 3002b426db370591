#version 450
// 2-D convolution, NCHW, with groups (incl. depthwise), strides, dilations, pads, bias and
// a fused activation. Register blocking: each invocation computes OCB output channels x OWB
// output columns, so one input load feeds OCB FMAs and one weight load feeds OWB FMAs.
//   OCB=4: weights reordered on the host to [ceil(OC/4)][IC/g][KH][KW][4] (vec4 loads);
//          needs all 4 channels of a block in one group (groups == 1 or OC/g % 4 == 0).
//   OCB=1: weights in ONNX layout [OC][IC/g][KH][KW] (depthwise and odd group sizes).
// Input, weights and output are texel buffers (r32f, or rgba32f for blocked weights): lavapipe
// turns texel loads/stores into vector gathers/scatters, storage-buffer ones into lane loops.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#ifndef OCB
#define OCB 4
#endif
#ifndef OWB
#define OWB 4
#endif

layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint IC = 1;
layout(constant_id = 2) const int IH = 1;
layout(constant_id = 3) const int IW = 1;
layout(constant_id = 4) const uint OC = 1;
layout(constant_id = 5) const uint OH = 1;
layout(constant_id = 6) const uint OW = 1;
layout(constant_id = 7) const int KH = 1;
layout(constant_id = 8) const int KW = 1;
layout(constant_id = 9) const int SH = 1;
layout(constant_id = 10) const int SW = 1;
layout(constant_id = 11) const int DH = 1;
layout(constant_id = 12) const int DW = 1;
layout(constant_id = 13) const int PH = 0;
layout(constant_id = 14) const int PW = 0;
layout(constant_id = 15) const uint GROUPS = 1;
layout(constant_id = 16) const bool HAS_BIAS = false;

layout(set = 0, binding = 0, FMT1) readonly uniform imageBuffer X;
#if OCB >= 4
#define OCV (OCB / 4)
layout(set = 0, binding = 1, FMT4) readonly uniform imageBuffer W;
#else
layout(set = 0, binding = 1, FMT1) readonly uniform imageBuffer W;
#endif
layout(set = 0, binding = 2) readonly buffer Bias { SFLOAT bias[]; };
layout(set = 0, binding = 3, FMT1) writeonly uniform imageBuffer Y;

const uint ICG = IC / GROUPS;
const uint OCG = OC / GROUPS;
const uint OCBLOCKS = (OC + OCB - 1) / OCB;
const uint OWBLOCKS = (OW + OWB - 1) / OWB;

void main() {
  uint id = linear_id();
  if (id >= OH * OWBLOCKS) return;
  uint owb = id % OWBLOCKS;
  int oh = int(id / OWBLOCKS);
  uint ocb = slice_id() % OCBLOCKS;
  uint n = slice_id() / OCBLOCKS;
  int ow0 = int(owb * OWB);
  uint oc0 = ocb * OCB;
  uint g = oc0 / OCG;

#if OCB >= 4
  AVEC4 acc[OWB * OCV];
  for (int j = 0; j < OWB * OCV; ++j) acc[j] = AVEC4(0.0);
#else
  AFLOAT acc[OWB];
  for (int j = 0; j < OWB; ++j) acc[j] = AFLOAT(0.0);
#endif

  for (uint ic = 0; ic < ICG; ++ic) {
    uint xbase = (n * IC + g * ICG + ic) * uint(IH * IW);
#if OCB >= 4
    uint wbase = (ocb * ICG + ic) * uint(KH * KW) * OCV;
#else
    uint wbase = (oc0 * ICG + ic) * uint(KH * KW);
#endif
    for (int kh = 0; kh < KH; ++kh) {
      int ih = oh * SH - PH + kh * DH;
      if (ih < 0 || ih >= IH) continue;
      uint row = xbase + uint(ih * IW);
      for (int kw = 0; kw < KW; ++kw) {
        int iw0 = ow0 * SW - PW + kw * DW;
        AFLOAT xv[OWB];
        for (int j = 0; j < OWB; ++j) {
          int iw = iw0 + j * SW;
          AFLOAT v = AFLOAT(imageLoad(X, int(row) + iw).x);
          xv[j] = (iw >= 0 && iw < IW) ? v : AFLOAT(0.0);
        }
#if OCB >= 4
        uint wi = wbase + uint(kh * KW + kw) * OCV;
        for (int v = 0; v < OCV; ++v) {
          AVEC4 wv = AVEC4(imageLoad(W, int(wi) + v));
          for (int j = 0; j < OWB; ++j) acc[v * OWB + j] += xv[j] * wv;
        }
#else
        AFLOAT wv = AFLOAT(imageLoad(W, int(wbase) + kh * KW + kw).x);
        for (int j = 0; j < OWB; ++j) acc[j] += xv[j] * wv;
#endif
      }
    }
  }

  for (int q = 0; q < OCB; ++q) {
    uint oc = oc0 + uint(q);
    if (oc >= OC) break;
    float b = HAS_BIAS ? bias[oc] : 0.0;
    uint obase = ((n * OC + oc) * OH + uint(oh)) * OW;
    for (int j = 0; j < OWB; ++j) {
      uint ow = uint(ow0 + j);
      if (ow < OW) {
#if OCB >= 4
        imageStore(Y, int(obase + ow), vec4(activate(float(acc[(q / 4) * OWB + j][q % 4]) + b)));
#else
        imageStore(Y, int(obase + ow), vec4(activate(float(acc[j]) + b)));
#endif
      }
    }
  }
}
