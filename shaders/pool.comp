#version 450
// 2-D MaxPool / AveragePool / GlobalAveragePool / GlobalMaxPool over NCHW (3-D over NCDHW with
// the depth constants ID..PD_END; 1-D as H = 1); one output element per invocation. The output size (ceil_mode, auto_pad) comes from shape inference.
// INDICES (MaxPool's second output): also the int64 flat index of the maximum in x (the first
// one of the window on ties, as the reference; COL_MAJOR: storage_order 1, w * IH + h in the image).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint NC = 1;
layout(constant_id = 1) const int IH = 1;
layout(constant_id = 2) const int IW = 1;
layout(constant_id = 3) const uint OH = 1;
layout(constant_id = 4) const uint OW = 1;
layout(constant_id = 5) const int KH = 1;
layout(constant_id = 6) const int KW = 1;
layout(constant_id = 7) const int SH = 1;
layout(constant_id = 8) const int SW = 1;
layout(constant_id = 9) const int PH = 0;
layout(constant_id = 10) const int PW = 0;
layout(constant_id = 11) const int DH = 1;
layout(constant_id = 12) const int DW = 1;
layout(constant_id = 13) const bool IS_MAX = true;
layout(constant_id = 14) const bool COUNT_PAD = false;
layout(constant_id = 15) const int PH_END = 0;   // bottom/right pads bound the counted window
layout(constant_id = 16) const int PW_END = 0;

layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 1) writeonly buffer O { SFLOAT y[]; };
layout(constant_id = 18) const int ID = 1;
layout(constant_id = 19) const uint OD = 1;
layout(constant_id = 20) const int KD = 1;
layout(constant_id = 21) const int SD = 1;
layout(constant_id = 22) const int PD = 0;
layout(constant_id = 23) const int DD = 1;
layout(constant_id = 24) const int PD_END = 0;
#ifdef INDICES
layout(constant_id = 17) const bool COL_MAJOR = false;
layout(set = 0, binding = 2) writeonly buffer N { uint inds[]; };
#endif

void main() {
  uint id = linear_id();
  if (id >= NC * OD * OH * OW) return;
  int ow = int(id % OW);
  uint r = id / OW;
  int oh = int(r % OH);
  r /= OH;
  int od = int(r % OD);
  uint nc = r / OD;
  uint base = nc * uint(ID * IH * IW);
  float acc = IS_MAX ? -3.402823466e38 : 0.0;
  int count = 0;
#ifdef INDICES
  int arg = -1;
#endif
  for (int kd = 0; kd < KD; ++kd) {
    int idd = od * SD - PD + kd * DD;
    if (idd < 0 || idd >= ID) continue;
    for (int kh = 0; kh < KH; ++kh) {
      int ih = oh * SH - PH + kh * DH;
      if (ih < 0 || ih >= IH) continue;
      for (int kw = 0; kw < KW; ++kw) {
        int iw = ow * SW - PW + kw * DW;
        if (iw < 0 || iw >= IW) continue;
        float v = x[base + uint((idd * IH + ih) * IW + iw)];
#ifdef INDICES
        if (v > acc || arg < 0) {
          acc = v;
          arg = COL_MAJOR ? (iw * IH + ih) * ID + idd : (idd * IH + ih) * IW + iw;
        }
#else
        acc = IS_MAX ? max(acc, v) : acc + v;
#endif
        count++;
      }
    }
  }
  if (!IS_MAX) {
    if (COUNT_PAD) {
      int d0 = od * SD - PD, h0 = oh * SH - PH, w0 = ow * SW - PW;
      int d1 = min(d0 + (KD - 1) * DD + 1, ID + PD_END);
      int h1 = min(h0 + (KH - 1) * DH + 1, IH + PH_END), w1 = min(w0 + (KW - 1) * DW + 1, IW + PW_END);
      count = ((d1 - d0 + DD - 1) / DD) * ((h1 - h0 + DH - 1) / DH) * ((w1 - w0 + DW - 1) / DW);
    }
    acc = count > 0 ? acc / float(count) : 0.0;
  }
  y[id] = SFLOAT(acc);
#ifdef INDICES
  inds[2u * id] = base + uint(arg); // the images before this one, then the index in it
  inds[2u * id + 1u] = 0u;
#endif
}
