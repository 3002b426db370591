#version 450
// 2-D transposed convolution, NCHW, with groups, strides, dilations, pads, bias and a fused
// activation. One output element per invocation; weights in ONNX layout [IC][OC/g][KH][KW].
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

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

layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 1) readonly buffer W { SFLOAT w[]; };
layout(set = 0, binding = 2) readonly buffer Bias { SFLOAT bias[]; };
layout(set = 0, binding = 3) writeonly buffer O { SFLOAT y[]; };

const uint ICG = IC / GROUPS;
const uint OCG = OC / GROUPS;

void main() {
  uint id = linear_id();
  if (id >= N * OC * OH * OW) return;
  int ow = int(id % OW);
  uint r = id / OW;
  int oh = int(r % OH);
  r /= OH;
  uint oc = r % OC;
  uint n = r / OC;
  uint g = oc / OCG;
  uint ocg = oc % OCG;
  float acc = HAS_BIAS ? bias[oc] : 0.0;
  for (uint icg = 0; icg < ICG; ++icg) {
    uint ic = g * ICG + icg;
    uint xbase = (n * IC + ic) * uint(IH * IW);
    uint wbase = (ic * OCG + ocg) * uint(KH * KW);
    for (int kh = 0; kh < KH; ++kh) {
      int th = oh + PH - kh * DH;
      if (th < 0 || th % SH != 0) continue;
      int ih = th / SH;
      if (ih >= IH) continue;
      for (int kw = 0; kw < KW; ++kw) {
        int tw = ow + PW - kw * DW;
        if (tw < 0 || tw % SW != 0) continue;
        int iw = tw / SW;
        if (iw >= IW) continue;
        acc += x[xbase + uint(ih * IW + iw)] * w[wbase + uint(kh * KW + kw)];
      }
    }
  }
  y[id] = SFLOAT(activate(acc));
}
