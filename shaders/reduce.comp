#version 450
// ReduceMean/Sum/Max/Min/Prod/L2/SumSquare/L1/LogSum/LogSumExp over any set of up to 6 dims
// (bit RMASK: bit d = dim d reduced, dim 0 outermost). One output element per invocation, or
// with WG per workgroup.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint TOTAL = 1;   // output elements
layout(constant_id = 1) const uint D0 = 1;
layout(constant_id = 2) const uint D1 = 1;
layout(constant_id = 3) const uint D2 = 1;
layout(constant_id = 4) const uint D3 = 1;
layout(constant_id = 5) const uint D4 = 1;
layout(constant_id = 6) const uint D5 = 1;
layout(constant_id = 7) const uint RMASK = 0;
layout(constant_id = 8) const uint RCOUNT = 1;  // product of the reduced dims
layout(constant_id = 9) const int MODE = 0;     // 0 mean 1 sum 2 max 3 min 4 prod 5 l2 6 sumsquare 7 l1 8 logsum 9 logsumexp

layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 1) writeonly buffer O { SFLOAT y[]; };

const uint S5 = 1, S4 = D5, S3 = D4 * S4, S2 = D3 * S3, S1 = D2 * S2, S0 = D1 * S1;

bool red(uint d) { return (RMASK & (1u << d)) != 0u; }

/// The input offset of the k-th reduced element of the output element at `base`.
uint offset(uint base, uint k) {
  uint q = k;
  uint off = base;
  if (red(5)) { off += (q % D5) * S5; q /= D5; }
  if (red(4)) { off += (q % D4) * S4; q /= D4; }
  if (red(3)) { off += (q % D3) * S3; q /= D3; }
  if (red(2)) { off += (q % D2) * S2; q /= D2; }
  if (red(1)) { off += (q % D1) * S1; q /= D1; }
  if (red(0)) { off += q * S0; }
  return off;
}

#ifdef WG
// WG (long reductions): one output element per 64-wide workgroup; each invocation takes every
// 64th reduced element and the workgroup combines the parts (llvmpipe caps an invocation's loop
// iterations at 65535).
shared float part[64];

/// The workgroup's combination of v (0 sum, 1 max, 2 min, 3 product); every invocation gets it.
float combine(float v, int how) {
  uint t = gl_LocalInvocationID.x;
  part[t] = v;
  barrier();
  for (uint h = 32u; h > 0u; h >>= 1u) {
    if (t < h) {
      float a = part[t], b = part[t + h];
      part[t] = how == 1 ? max(a, b) : how == 2 ? min(a, b) : how == 3 ? a * b : a + b;
    }
    barrier();
  }
  float r = part[0];
  barrier();
  return r;
}
#endif

void main() {
#ifdef WG
  uint id = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint t = gl_LocalInvocationID.x;
  const uint STEP = 64u;
#else
  uint id = linear_id();
  uint t = 0u;
  const uint STEP = 1u;
#endif
  if (id >= TOTAL) return; // (WG: the whole workgroup)
  // Kept coordinates, innermost first; reduced dims have extent 1 in the output.
  uint r = id;
  uint base = 0;
  if (!red(5)) { base += (r % D5) * S5; r /= D5; }
  if (!red(4)) { base += (r % D4) * S4; r /= D4; }
  if (!red(3)) { base += (r % D3) * S3; r /= D3; }
  if (!red(2)) { base += (r % D2) * S2; r /= D2; }
  if (!red(1)) { base += (r % D1) * S1; r /= D1; }
  if (!red(0)) { base += r * S0; }
  float acc = MODE == 2 ? -3.402823466e38 : (MODE == 3 ? 3.402823466e38 : (MODE == 4 ? 1.0 : 0.0));
  // LogSumExp: the largest element first, so that exp never overflows.
  float top = -3.402823466e38;
  if (MODE == 9) {
    for (uint k = t; k < RCOUNT; k += STEP) top = max(top, float(x[offset(base, k)]));
#ifdef WG
    top = combine(top, 1);
#endif
  }
  for (uint k = t; k < RCOUNT; k += STEP) {
    float v = float(x[offset(base, k)]);
    if (MODE == 2) acc = max(acc, v);
    else if (MODE == 3) acc = min(acc, v);
    else if (MODE == 4) acc *= v;
    else if (MODE == 5 || MODE == 6) acc += v * v;
    else if (MODE == 7) acc += abs(v);
    else if (MODE == 9) acc += exp(v - top);
    else acc += v;
  }
#ifdef WG
  acc = combine(acc, MODE == 2 ? 1 : MODE == 3 ? 2 : MODE == 4 ? 3 : 0);
  if (t != 0u) return;
#endif
  if (MODE == 0) acc /= float(RCOUNT);
  if (MODE == 5) acc = sqrt(acc);
  if (MODE == 8) acc = log(acc);
  if (MODE == 9) acc = RCOUNT == 0u ? log(0.0) : log(acc) + top;
  y[id] = SFLOAT(acc);
}
