#version 450
// Fused attention block: Y[b] = softmax(SCALE * Q[b] x K[b]^T, last axis) x V[b] in one dispatch
// (kernels/vulkan/lower_attention.cpp). One invocation per row of Q: the row's scores stay in
// registers/private memory, so the M x N score matrix never touches memory and the three ops
// cost one dispatch instead of three (an empty dispatch costs ~50 us on lavapipe).
// Q [BATCH, M, D], V [BATCH, N, DV], Y [BATCH, M, DV] row-major; the key operand is addressed
// through strides so that a Transpose of K folds away: element (d, n) of K^T at d*SKD + n*SKN.
// All four bindings are r32f texel buffers (lavapipe gathers texel loads across lanes).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint BATCH = 1;
layout(constant_id = 1) const uint M = 1;
layout(constant_id = 2) const uint N = 1;  // keys (the softmax axis)
layout(constant_id = 3) const uint D = 1;  // depth of Q and K
layout(constant_id = 4) const uint DV = 1; // depth of V
layout(constant_id = 5) const uint SKD = 1;
layout(constant_id = 6) const uint SKN = 1;
layout(constant_id = 7) const float SCALE = 1.0; // folded Mul/Div by a scalar, on Q or on the scores

layout(set = 0, binding = 0, FMT1) readonly uniform imageBuffer Q;
layout(set = 0, binding = 1, FMT1) readonly uniform imageBuffer Kt;
layout(set = 0, binding = 2, FMT1) readonly uniform imageBuffer V;
layout(set = 0, binding = 3, FMT1) writeonly uniform imageBuffer Y;

void main() {
  uint id = linear_id();
  if (id >= BATCH * M) return;
  uint b = id / M;
  int qb = int(id * D);
  int kb = int(b * N * D);
  int vb = int(b * N * DV);
  float q[D];
  for (uint d = 0; d < D; ++d) q[d] = imageLoad(Q, qb + int(d)).x * SCALE;
  float s[N];
  float mx = -3.402823466e38;
  for (uint n = 0; n < N; ++n) {
    float acc = 0.0;
    int kn = kb + int(n * SKN);
    for (uint d = 0; d < D; ++d) acc += q[d] * imageLoad(Kt, kn + int(d * SKD)).x;
    s[n] = acc;
    mx = max(mx, acc);
  }
  float o[DV];
  for (uint j = 0; j < DV; ++j) o[j] = 0.0;
  float sum = 0.0;
  for (uint n = 0; n < N; ++n) {
    float p = exp(s[n] - mx);
    sum += p;
    int vn = vb + int(n * DV);
    for (uint j = 0; j < DV; ++j) o[j] += p * imageLoad(V, vn + int(j)).x;
  }
  float inv = 1.0 / sum;
  int yb = int(id * DV);
  for (uint j = 0; j < DV; ++j) imageStore(Y, yb + int(j), vec4(o[j] * inv));
}
