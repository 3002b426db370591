#version 450
// Pad over up to 6 dims (right-aligned): y at output coordinate o reads x at o - P (P the begin
// pads, negative ones crop). Outside x: MODE 0 writes the constant, 1 reflects, 2 repeats the
// edge, 3 wraps around. One element per invocation; with WORDS any element type of PER 32-bit
// words (int32, int64), one word per invocation, the constant given as VALUE_LO/VALUE_HI, or
// read from binding 1 when it is a run-time input (VALUE_IN_BUFFER).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 0) const uint TOTAL = 1; // invocations: output elements (times PER)
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint PER = 1;
layout(constant_id = 3) const float VALUE = 0.0;
layout(constant_id = 4) const uint VALUE_LO = 0;
layout(constant_id = 5) const uint VALUE_HI = 0;
layout(constant_id = 6) const uint Y0 = 1;
layout(constant_id = 7) const uint Y1 = 1;
layout(constant_id = 8) const uint Y2 = 1;
layout(constant_id = 9) const uint Y3 = 1;
layout(constant_id = 10) const uint Y4 = 1;
layout(constant_id = 11) const uint Y5 = 1;
layout(constant_id = 12) const int X0 = 1;
layout(constant_id = 13) const int X1 = 1;
layout(constant_id = 14) const int X2 = 1;
layout(constant_id = 15) const int X3 = 1;
layout(constant_id = 16) const int X4 = 1;
layout(constant_id = 17) const int X5 = 1;
layout(constant_id = 18) const int P0 = 0;
layout(constant_id = 19) const int P1 = 0;
layout(constant_id = 20) const int P2 = 0;
layout(constant_id = 21) const int P3 = 0;
layout(constant_id = 22) const int P4 = 0;
layout(constant_id = 23) const int P5 = 0;
layout(constant_id = 24) const bool VALUE_IN_BUFFER = false;

#ifdef WORDS
layout(set = 0, binding = 0) readonly buffer I { uint x[]; };
layout(set = 0, binding = 1) readonly buffer V { uint v[]; };
layout(set = 0, binding = 2) writeonly buffer O { uint y[]; };
#else
layout(set = 0, binding = 0) readonly buffer I { SFLOAT x[]; };
layout(set = 0, binding = 1) readonly buffer V { SFLOAT v[]; };
layout(set = 0, binding = 2) writeonly buffer O { SFLOAT y[]; };
#endif

/// a mod m in [0, m) for any sign of a (GLSL leaves % of negatives undefined).
int pmod(int a, int m) {
  int r = (a < 0 ? -a : a) % m;
  return a < 0 && r != 0 ? m - r : r;
}

/// The input coordinate for c = o - pad along a dim of n; -1 = outside (constant mode).
int source(int c, int n) {
  if (c >= 0 && c < n) return c;
  if (MODE == 0u) return -1;
  if (MODE == 2u) return c < 0 ? 0 : n - 1;
  if (MODE == 3u) return pmod(c, n);
  if (n == 1) return 0;
  int period = 2 * (n - 1);
  int r = pmod(c, period);
  return r >= n ? period - r : r;
}

void main() {
  uint id = linear_id();
  if (id >= TOTAL) return;
  uint e = id / PER, w = id % PER;
  uint r = e;
  int c5 = int(r % Y5); r /= Y5;
  int c4 = int(r % Y4); r /= Y4;
  int c3 = int(r % Y3); r /= Y3;
  int c2 = int(r % Y2); r /= Y2;
  int c1 = int(r % Y1); r /= Y1;
  int c0 = int(r);
  c0 = source(c0 - P0, X0);
  c1 = source(c1 - P1, X1);
  c2 = source(c2 - P2, X2);
  c3 = source(c3 - P3, X3);
  c4 = source(c4 - P4, X4);
  c5 = source(c5 - P5, X5);
  bool inside = c0 >= 0 && c1 >= 0 && c2 >= 0 && c3 >= 0 && c4 >= 0 && c5 >= 0;
#ifdef WORDS
  if (!inside) {
    y[id] = VALUE_IN_BUFFER ? v[w] : (w == 0u ? VALUE_LO : VALUE_HI);
    return;
  }
#else
  if (!inside) {
    y[id] = VALUE_IN_BUFFER ? v[0] : SFLOAT(VALUE);
    return;
  }
#endif
  uint src = ((((uint(c0) * uint(X1) + uint(c1)) * uint(X2) + uint(c2)) * uint(X3) + uint(c3)) * uint(X4) + uint(c4)) *
                 uint(X5) + uint(c5);
  y[id] = x[src * PER + w];
}
