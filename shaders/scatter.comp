#version 450
// Scatter into y (already a copy of the data): REDUCTION 0 stores, 1 adds, 2 multiplies.
// Each invocation owns a set of y's elements and applies the updates aimed at them in the
// reference's order (so duplicate indices end deterministic: the last one wins, or all
// reduce in order), skipping an index out of range (the reference device names it instead).
// ScatterND: invocation s (< SLICE) walks the NT index tuples; tuple j (M indices, lengths
// L_k, strides S_k) sends update element j * SLICE + s to y[offset + s].
// ELEMENTS (ScatterElements): the indices/updates shape D0..D5 (right-aligned); invocation = a
// line along AXIS of it, whose update at axis position a goes to y at the same coordinates
// but idx along AXIS (an axis of length LEN in y, strides S0..S5).
// With WORDS: int32 (PER 1) or int64 (PER 2) elements; else float.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint TOTAL = 1; // invocations
layout(constant_id = 1) const uint IDX_WORDS = 2;
layout(constant_id = 2) const uint PER = 1;
layout(constant_id = 3) const uint REDUCTION = 0;
layout(constant_id = 4) const uint M = 1;     // ND: indices per tuple; ELEMENTS: AXIS (0..5)
layout(constant_id = 5) const uint SLICE = 1; // ND: elements per tuple; ELEMENTS: LEN
layout(constant_id = 6) const uint NT = 1;    // ND: tuples
layout(constant_id = 7) const int L0 = 1;     // ND: lengths; ELEMENTS: D0..D5
layout(constant_id = 8) const int L1 = 1;
layout(constant_id = 9) const int L2 = 1;
layout(constant_id = 10) const int L3 = 1;
layout(constant_id = 11) const int L4 = 1;
layout(constant_id = 12) const int L5 = 1;
layout(constant_id = 13) const uint S0 = 0;
layout(constant_id = 14) const uint S1 = 0;
layout(constant_id = 15) const uint S2 = 0;
layout(constant_id = 16) const uint S3 = 0;
layout(constant_id = 17) const uint S4 = 0;
layout(constant_id = 18) const uint S5 = 0;

layout(set = 0, binding = 0) readonly buffer I { int idx[]; };
#ifdef WORDS
layout(set = 0, binding = 1) readonly buffer U { uint u[]; };
layout(set = 0, binding = 2) buffer Y { uint y[]; };
#else
layout(set = 0, binding = 1) readonly buffer U { SFLOAT u[]; };
layout(set = 0, binding = 2) buffer Y { SFLOAT y[]; };
#endif

#include "index.glsl"

/// y element t op= update element k.
void apply(uint t, uint k) {
#ifdef WORDS
  if (PER == 1u) {
    uint a = y[t], b = u[k];
    y[t] = REDUCTION == 0u ? b : REDUCTION == 1u ? a + b : a * b;
    return;
  }
  uvec2 a = uvec2(y[2u * t], y[2u * t + 1u]), b = uvec2(u[2u * k], u[2u * k + 1u]), r = b;
  if (REDUCTION == 1u) {
    uint carry;
    r.x = uaddCarry(a.x, b.x, carry);
    r.y = a.y + b.y + carry;
  } else if (REDUCTION == 2u) { // the low 64 bits of the product
    uint hi;
    umulExtended(a.x, b.x, hi, r.x);
    r.y = hi + a.x * b.y + a.y * b.x;
  }
  y[2u * t] = r.x;
  y[2u * t + 1u] = r.y;
#else
  float a = float(y[t]), b = float(u[k]);
  y[t] = SFLOAT(REDUCTION == 0u ? b : REDUCTION == 1u ? a + b : a * b);
#endif
}

void main() {
  uint id = linear_id();
  if (id >= TOTAL) return;
  int lens[6] = int[6](L0, L1, L2, L3, L4, L5);
  uint strides[6] = uint[6](S0, S1, S2, S3, S4, S5);
#ifdef ELEMENTS
  uint AXIS = M;
  // id -> coordinates of the indices shape with the axis taken out
  uint c[6];
  uint r = id;
  for (int d = 5; d >= 0; --d) {
    uint n = uint(d) == AXIS ? 1u : uint(lens[d]);
    c[d] = r % n;
    r /= n;
  }
  uint dims[6] = uint[6](uint(L0), uint(L1), uint(L2), uint(L3), uint(L4), uint(L5));
  uint upd = 0u, tgt = 0u, inner = 1u;
  for (int d = 5; d >= 0; --d) {
    upd += c[d] * inner;
    inner *= dims[d];
    if (uint(d) != AXIS) tgt += c[d] * strides[d];
  }
  uint axis_step = 1u;
  for (int d = 5; d > int(AXIS); --d) axis_step *= dims[d];
  for (uint a = 0u; a < dims[AXIS]; ++a) {
    uint k = upd + a * axis_step;
    int i = index_at(k, int(SLICE));
    if (i >= 0) apply(tgt + uint(i) * strides[AXIS], k);
  }
#else
  for (uint j = 0u; j < NT; ++j) {
    uint off = 0u;
    bool ok = true;
    for (uint k = 0u; k < M; ++k) {
      int i = index_at(j * M + k, lens[k]);
      ok = ok && i >= 0;
      off += uint(max(i, 0)) * strides[k];
    }
    if (ok) apply(off + id, j * SLICE + id);
  }
#endif
}
