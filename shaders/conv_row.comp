#version 450
// 2-D convolution (NCHW, groups, pads, dilations, strides) with IW a multiple of 4 and
// OWB * SW a multiple of 4: the input is an rgba32f texel buffer, so each invocation loads the
// input row segment under its OWB output columns ((OWB-1)*SW + (KW-1)*DW + 1 floats) once per
// (ic, kh) as whole texels and reuses it for every kw and every strided output column: one
// vector gather feeds up to 4 * OCB FMAs (lavapipe turns texel loads into gathers).
// Weight layouts as in conv.comp (OCB=8/4: [ceil(OC/OCB)][IC/g][KH][KW][OCB] rgba32f texels;
// OCB=1: ONNX layout as r32f texels). The lowering checks that the segment fits MAXT texels.
// Bias r32f texels; Y bound twice (r32f, and rgba32f for Y4).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require

#ifndef OCB
#define OCB 8
#endif
#ifndef OWB
#define OWB 8
#endif
#define MAXT 6

layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint IC = 1;
layout(constant_id = 2) const int IH = 1;
layout(constant_id = 3) const int IW = 4;
layout(constant_id = 4) const uint OC = 1;
layout(constant_id = 5) const uint OH = 1;
layout(constant_id = 6) const uint OW = 1;
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
#if OCB >= 4
#define OCV (OCB / 4)
layout(set = 0, binding = 1, FMT4) readonly uniform imageBuffer W;
#else
layout(set = 0, binding = 1, FMT1) readonly uniform imageBuffer W;
#endif
layout(set = 0, binding = 2, FMT1) readonly uniform imageBuffer Bias;
layout(set = 0, binding = 3, FMT1) writeonly uniform imageBuffer Y;
layout(set = 0, binding = 4, FMT4) writeonly uniform imageBuffer Yv; // Y again, as 4-float texels

const uint ICG = IC / GROUPS;
const uint OCG = OC / GROUPS;
const uint OCBLOCKS = (OC + OCB - 1) / OCB;
const uint OWBLOCKS = (OW + OWB - 1) / OWB;
const int IWT = IW / 4;                          // texels per input row
const int LEAD = (PW + 3) / 4;                   // texels left of column ow0
const int OFF = LEAD * 4 - PW;                   // floats to skip in the loaded segment
const int NTX = (OFF + (OWB - 1) * SW + (KW - 1) * DW + 1 + 3) / 4;

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
  int t0 = ow0 * SW / 4 - LEAD; // first texel of the segment, relative to the row

#if OCB >= 4
  AVEC4 acc[OWB * OCV];
  [[unroll]] for (int j = 0; j < OWB * OCV; ++j) acc[j] = AVEC4(0.0);
#else
  AFLOAT acc[OWB];
  [[unroll]] for (int j = 0; j < OWB; ++j) acc[j] = AFLOAT(0.0);
#endif

  for (uint ic = 0; ic < ICG; ++ic) {
    int plane = int((n * IC + g * ICG + ic) * uint(IH)) * IWT;
#if OCB >= 4
    uint wbase = (ocb * ICG + ic) * uint(KH * KW) * OCV;
#else
    uint wbase = (oc0 * ICG + ic) * uint(KH * KW);
#endif
    for (int kh = 0; kh < KH; ++kh) {
      int ih = oh * SH - PH + kh * DH;
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
      [[unroll]] for (int kw = 0; kw < KW; ++kw) {
#if OCB >= 4
        uint wi = wbase + uint(kh * KW + kw) * OCV;
        [[unroll]] for (int c = 0; c < OCV; ++c) {
          AVEC4 wv = AVEC4(imageLoad(W, int(wi) + c));
          [[unroll]] for (int j = 0; j < OWB; ++j) acc[c * OWB + j] += xs[OFF + j * SW + kw * DW] * wv;
        }
#else
        AFLOAT wv = AFLOAT(imageLoad(W, int(wbase) + kh * KW + kw).x);
        [[unroll]] for (int j = 0; j < OWB; ++j) acc[j] += xs[OFF + j * SW + kw * DW] * wv;
#endif
      }
    }
  }

  // Stores: with Y4 one texel scatter per 4 columns (stores cost as much as loads here).
  // (unrolled: a run-time q would index the accumulators dynamically and spill them)
  [[unroll]] for (int q = 0; q < OCB; ++q) {
    uint oc = oc0 + uint(q);
    if (oc >= OC) break;
    float b = HAS_BIAS ? imageLoad(Bias, int(oc)).x : 0.0;
    uint obase = ((n * OC + oc) * OH + uint(oh)) * OW;
#if OCB >= 4
#define ACC(j) float(acc[(q / 4) * OWB + (j)][q % 4])
#else
#define ACC(j) float(acc[j])
#endif
    if (Y4) {
      [[unroll]] for (int j = 0; j < OWB; j += 4) {
        uint ow = uint(ow0 + j);
        if (ow < OW)
          imageStore(Yv, int((obase + ow) / 4),
                     vec4(activate(ACC(j) + b), activate(ACC(j + 1) + b), activate(ACC(j + 2) + b), activate(ACC(j + 3) + b)));
      }
    } else {
      [[unroll]] for (int j = 0; j < OWB; ++j) {
        uint ow = uint(ow0 + j);
        if (ow < OW) imageStore(Y, int(obase + ow), vec4(activate(ACC(j) + b)));
      }
    }
  }
}
