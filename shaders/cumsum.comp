#version 450
// CumSum along one axis of [OUTER, LEN, INNER]: one invocation per line (o, i) adds its LEN
// elements in order (REVERSE: from the end), the sum before (EXCLUSIVE) or after each one.
// With INT: int32 (PER 1) or int64 (PER 2, two's complement words with a carry) elements.
// AXIS_BUFFER: the axis is a run-time input (binding 1, its low word): LEN and INNER come from
// the dims D0..D5 (the RANK real ones right-aligned), and invocations past the lines return.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint LINES = 1; // OUTER * INNER (AXIS_BUFFER: an upper bound)
layout(constant_id = 1) const uint LEN = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const bool EXCLUSIVE = false;
layout(constant_id = 4) const bool REVERSE = false;
layout(constant_id = 5) const uint PER = 1;
layout(constant_id = 6) const bool AXIS_BUFFER = false;
layout(constant_id = 7) const int RANK = 1;
layout(constant_id = 8) const uint D0 = 1;
layout(constant_id = 9) const uint D1 = 1;
layout(constant_id = 10) const uint D2 = 1;
layout(constant_id = 11) const uint D3 = 1;
layout(constant_id = 12) const uint D4 = 1;
layout(constant_id = 13) const uint D5 = 1;

#ifdef INT
layout(set = 0, binding = 0) readonly buffer I { uint x[]; };
layout(set = 0, binding = 2) writeonly buffer O { uint y[]; };
#else
layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 2) writeonly buffer O { SFLOAT y[]; };
#endif
layout(set = 0, binding = 1) readonly buffer A { int axis_in[]; };

void main() {
  uint id = linear_id();
  uint len = LEN, inner = INNER, lines = LINES;
  if (AXIS_BUFFER) {
    int a = axis_in[0];
    if (a < 0) a += RANK;
    if (a < 0 || a >= RANK) return; // the reference device names a bad axis
    uint dims[6] = uint[6](D0, D1, D2, D3, D4, D5);
    uint at = uint(6 - RANK + a);
    len = dims[at];
    inner = 1u;
    for (uint d = at + 1u; d < 6u; ++d) inner *= dims[d];
    lines = len == 0u ? 0u : (D0 * D1 * D2 * D3 * D4 * D5) / len;
  }
  if (id >= lines) return;
  uint base = (id / inner) * len * inner + id % inner;
#ifdef INT
  uvec2 acc = uvec2(0u); // (low, high) words
#else
  float acc = 0.0;
#endif
  for (uint j0 = 0u; j0 < len; ++j0) {
    uint at = base + (REVERSE ? len - 1u - j0 : j0) * inner;
#ifdef INT
    uvec2 before = acc;
    uint carry;
    acc.x = uaddCarry(acc.x, x[at * PER], carry);
    if (PER == 2u) acc.y = acc.y + x[at * PER + 1u] + carry;
    uvec2 v = EXCLUSIVE ? before : acc;
    y[at * PER] = v.x;
    if (PER == 2u) y[at * PER + 1u] = v.y;
#else
    float before = acc;
    acc += float(x[at]);
    y[at] = SFLOAT(EXCLUSIVE ? before : acc);
#endif
  }
}
