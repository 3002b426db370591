#version 450
// ConvInteger, 2-D NCHW (1-D as H = 1; kernels/vulkan/lower_conv_integer.cpp): u8/i8 x, constant
// weights, int32 y = sum (x - x_zp) * (w - w_zp) over the window, summed in int32 as the
// reference sums; padding adds nothing. x arrives as its bytes in r32ui words, y leaves as int32
// words; the weights arrive already shifted by their zero points, as floats (-255..255: exact in
// float16 storage too).
//   OCB=4: weights [ceil(OC/4)][IC/g][KH][KW][4] (rgba texels), the 4 channels of one group;
//   OCB=1: weights [OC][IC/g][KH][KW] (depthwise and group sizes not a multiple of 4).
// Each invocation computes OCB output channels x OWB output columns of one row.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#ifndef OCB
#define OCB 4
#endif
#define OWB 4

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
layout(constant_id = 16) const uint XKIND = 4; // 4 u8, 5 i8 (lowering.hpp element_kind)
layout(constant_id = 17) const bool HAS_XZP = false;

layout(set = 0, binding = 0, r32ui) readonly uniform uimageBuffer X;
#if OCB == 4
layout(set = 0, binding = 1, FMT4) readonly uniform imageBuffer W;
#else
layout(set = 0, binding = 1, FMT1) readonly uniform imageBuffer W;
#endif
layout(set = 0, binding = 2) readonly buffer XZ { uint xzp[]; };
#ifdef FLOAT_OUT
// The Cast -> Mul(scale) [-> Add(bias)] that quantize_dynamic writes after it (lower_int8_epilogue.cpp):
// y = float(acc) * scale + bias, scale and bias each a scalar or one per output channel.
layout(constant_id = 18) const bool SCALE_PER_CHANNEL = false;
layout(constant_id = 19) const bool HAS_BIAS = false;
layout(constant_id = 20) const bool BIAS_PER_CHANNEL = false;
layout(set = 0, binding = 3) readonly buffer SC { SFLOAT scale[]; };
layout(set = 0, binding = 4) readonly buffer BI { SFLOAT bias[]; };
layout(set = 0, binding = 5, FMT1) writeonly uniform imageBuffer Y;

void store(int at, int acc, uint oc) {
  precise float y = float(acc) * float(scale[SCALE_PER_CHANNEL ? oc : 0u]);
  if (HAS_BIAS) y = y + float(bias[BIAS_PER_CHANNEL ? oc : 0u]);
  imageStore(Y, at, vec4(y));
}
#else
layout(set = 0, binding = 3, r32ui) writeonly uniform uimageBuffer Y;

void store(int at, int acc, uint oc) { imageStore(Y, at, uvec4(uint(acc))); }
#endif

const uint ICG = IC / GROUPS;
const uint OCG = OC / GROUPS;
const uint OCBLOCKS = (OC + OCB - 1) / OCB;
const uint OWBLOCKS = (OW + OWB - 1) / OWB;

/// Byte i of x as u8 or i8.
int x_at(uint i) {
  uint word = imageLoad(X, int(i >> 2)).x;
  int off = int((i & 3u) * 8u);
  return XKIND == 5u ? bitfieldExtract(int(word), off, 8) : int(bitfieldExtract(word, off, 8));
}

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
  int zp = 0;
  if (HAS_XZP) zp = XKIND == 5u ? bitfieldExtract(int(xzp[0]), 0, 8) : int(xzp[0] & 0xffu);

#if OCB == 4
  ivec4 acc[OWB];
  for (int j = 0; j < OWB; ++j) acc[j] = ivec4(0);
#else
  int acc[OWB];
  for (int j = 0; j < OWB; ++j) acc[j] = 0;
#endif

  for (uint ic = 0; ic < ICG; ++ic) {
    uint xbase = (n * IC + g * ICG + ic) * uint(IH * IW);
#if OCB == 4
    uint wbase = (ocb * ICG + ic) * uint(KH * KW);
#else
    uint wbase = (oc0 * ICG + ic) * uint(KH * KW);
#endif
    for (int kh = 0; kh < KH; ++kh) {
      int ih = oh * SH - PH + kh * DH;
      if (ih < 0 || ih >= IH) continue;
      uint row = xbase + uint(ih * IW);
      for (int kw = 0; kw < KW; ++kw) {
        int iw0 = ow0 * SW - PW + kw * DW;
        int xv[OWB];
        for (int j = 0; j < OWB; ++j) {
          int iw = iw0 + j * SW;
          // Past the edge: a clamped (valid) load, counted as nothing.
          int v = x_at(row + uint(clamp(iw, 0, IW - 1))) - zp;
          xv[j] = (iw >= 0 && iw < IW) ? v : 0;
        }
#if OCB == 4
        ivec4 wv = ivec4(imageLoad(W, int(wbase) + kh * KW + kw));
#else
        int wv = int(imageLoad(W, int(wbase) + kh * KW + kw).x);
#endif
        for (int j = 0; j < OWB; ++j) acc[j] += xv[j] * wv;
      }
    }
  }

  for (int q = 0; q < OCB; ++q) {
    uint oc = oc0 + uint(q);
    if (oc >= OC) break;
    uint obase = ((n * OC + oc) * OH + uint(oh)) * OW;
    for (int j = 0; j < OWB; ++j) {
      uint ow = uint(ow0 + j);
#if OCB == 4
      if (ow < OW) store(int(obase + ow), acc[j][q], oc);
#else
      if (ow < OW) store(int(obase + ow), acc[j], oc);
#endif
    }
  }
}
