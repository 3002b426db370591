#version 450
// Fused attention block: Y[b] = softmax(SCALE * Q[b] x K[b]^T, last axis) x V[b] in one dispatch
// (kernels/vulkan/lower_attention.cpp). R rows of Q per invocation: their scores stay in
// registers/private memory, so the M x N score matrix never touches memory and the three ops
// cost one dispatch instead of three (an empty dispatch costs ~50 us on lavapipe).
// Q [BATCH, M, D], V [BATCH, N, DV], Y [BATCH, M, DV] row-major; the key operand is addressed
// through strides so that a Transpose of K folds away: element (d, n) of K^T at d*SKD + n*SKN.
// All four bindings are r32f texel buffers (lavapipe gathers texel loads across lanes).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 0) const uint BATCH = 1;
layout(constant_id = 1) const uint M = 1;
layout(constant_id = 2) const uint N = 1;  // keys (the softmax axis)
layout(constant_id = 3) const uint D = 1;  // depth of Q and K
layout(constant_id = 4) const uint DV = 1; // depth of V
layout(constant_id = 5) const uint SKD = 1;
layout(constant_id = 6) const uint SKN = 1;
layout(constant_id = 7) const float SCALE = 1.0; // folded Mul/Div by a scalar, on Q or on the scores
layout(constant_id = 8) const uint R = 1;        // rows of Q per invocation

layout(set = 0, binding = 0, FMT1) readonly uniform imageBuffer Q;
layout(set = 0, binding = 1, FMT1) readonly uniform imageBuffer Kt;
layout(set = 0, binding = 2, FMT1) readonly uniform imageBuffer V;
layout(set = 0, binding = 3, FMT1) writeonly uniform imageBuffer Y;

const uint MB = (M + R - 1) / R;

void main() {
  uint id = linear_id();
  if (id >= BATCH * MB) return;
  uint b = id / MB;
  uint m0 = (id % MB) * R;
  int kb = int(b * N * D);
  int vb = int(b * N * DV);
  // R rows per invocation: each key/value element loaded once serves R rows. Rows past M
  // repeat the last row and are not stored.
  float q[R * D];
  [[unroll]] for (uint r = 0; r < R; ++r) {
    int qb = int((b * M + min(m0 + r, M - 1)) * D);
    [[unroll]] for (uint d = 0; d < D; ++d) q[r * D + d] = imageLoad(Q, qb + int(d)).x * SCALE;
  }
  float s[R * N];
  float mx[R];
  [[unroll]] for (uint r = 0; r < R; ++r) mx[r] = -3.402823466e38;
  [[unroll]] for (uint n = 0; n < N; ++n) {
    float acc[R];
    [[unroll]] for (uint r = 0; r < R; ++r) acc[r] = 0.0;
    int kn = kb + int(n * SKN);
    [[unroll]] for (uint d = 0; d < D; ++d) {
      float kv = imageLoad(Kt, kn + int(d * SKD)).x;
      [[unroll]] for (uint r = 0; r < R; ++r) acc[r] += q[r * D + d] * kv;
    }
    [[unroll]] for (uint r = 0; r < R; ++r) {
      s[r * N + n] = acc[r];
      mx[r] = max(mx[r], acc[r]);
    }
  }
  float o[R * DV];
  [[unroll]] for (uint j = 0; j < R * DV; ++j) o[j] = 0.0;
  float sum[R];
  [[unroll]] for (uint r = 0; r < R; ++r) sum[r] = 0.0;
  [[unroll]] for (uint n = 0; n < N; ++n) {
    float p[R];
    [[unroll]] for (uint r = 0; r < R; ++r) {
      p[r] = exp(s[r * N + n] - mx[r]);
      sum[r] += p[r];
    }
    int vn = vb + int(n * DV);
    [[unroll]] for (uint j = 0; j < DV; ++j) {
      float vv = imageLoad(V, vn + int(j)).x;
      [[unroll]] for (uint r = 0; r < R; ++r) o[r * DV + j] += p[r] * vv;
    }
  }
  [[unroll]] for (uint r = 0; r < R; ++r) {
    if (m0 + r >= M) break;
    float inv = 1.0 / sum[r];
    int yb = int((b * M + m0 + r) * DV);
    [[unroll]] for (uint j = 0; j < DV; ++j) imageStore(Y, yb + int(j), vec4(o[r * DV + j] * inv));
  }
}
