#version 450
// Element-wise ops on any element type (kernels/vulkan/lower_eltwise_typed.cpp): comparisons,
// logic, Where, Mod, BitShift, IsInf/IsNaN, Clip with tensor bounds and integer arithmetic,
// with numpy broadcasting over 6 dims as in eltwise.comp. Buffers are raw 32-bit words, as in
// cast.comp: each invocation writes one output word (4 bytes, 2 halves or 16-bit integers, one
// 32-bit element) or one 64-bit element. The INT64 variant computes integers in 64 bits (it
// needs shaderInt64); the plain one in 32 bits, for kinds of 32 bits or fewer.
#extension GL_GOOGLE_include_directive : require
#ifdef INT64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define ITYPE int64_t
#define UTYPE uint64_t
#else
#define ITYPE int
#define UTYPE uint
#endif
#include "common.glsl"

// Op codes (lower_eltwise_typed.cpp): unary 0 copy, 1 Neg, 2 Abs, 3 Sign, 4 Relu, 5 Not,
// 6 IsNaN, 7 IsInf; binary 10 Add, 11 Sub, 12 Mul, 13 Div, 14 Pow, 15 Mod, 16 Mod fmod=1,
// 17 Min, 18 Max, 19 Equal, 20 Less, 21 LessOrEqual, 22 Greater, 23 GreaterOrEqual, 24 And,
// 25 Or, 26 Xor, 27 BitShift left, 28 BitShift right; ternary 30 Where, 31 Clip.
layout(constant_id = 0) const uint OP = 0;
layout(constant_id = 1) const uint TOTAL = 1;
layout(constant_id = 2) const uint D0 = 1;
layout(constant_id = 3) const uint D1 = 1;
layout(constant_id = 4) const uint D2 = 1;
layout(constant_id = 5) const uint D3 = 1;
layout(constant_id = 6) const uint D4 = 1;
layout(constant_id = 7) const uint D5 = 1;
layout(constant_id = 8) const uint SA0 = 0;
layout(constant_id = 9) const uint SA1 = 0;
layout(constant_id = 10) const uint SA2 = 0;
layout(constant_id = 11) const uint SA3 = 0;
layout(constant_id = 12) const uint SA4 = 0;
layout(constant_id = 13) const uint SA5 = 0;
layout(constant_id = 14) const uint SB0 = 0;
layout(constant_id = 15) const uint SB1 = 0;
layout(constant_id = 16) const uint SB2 = 0;
layout(constant_id = 17) const uint SB3 = 0;
layout(constant_id = 18) const uint SB4 = 0;
layout(constant_id = 19) const uint SB5 = 0;
layout(constant_id = 20) const uint SC0 = 0;
layout(constant_id = 21) const uint SC1 = 0;
layout(constant_id = 22) const uint SC2 = 0;
layout(constant_id = 23) const uint SC3 = 0;
layout(constant_id = 24) const uint SC4 = 0;
layout(constant_id = 25) const uint SC5 = 0;
layout(constant_id = 26) const bool FLAT_A = true;
layout(constant_id = 27) const bool FLAT_B = true;
layout(constant_id = 28) const bool FLAT_C = true;
// Kinds: 0 f32 (float16 in the F16 variant), 1 i32, 2 u32, 3 i64, 4 u8, 5 i8, 6 bool, 7 f16,
// 8 u16, 9 i16, 10 u64.
layout(constant_id = 29) const uint KO = 0;
layout(constant_id = 30) const uint KA = 0;
layout(constant_id = 31) const uint KB = 0;
layout(constant_id = 32) const uint KC = 0;
// A splat operand is a scalar constant held here instead of a buffer: a float as its f32 bits,
// an integer as its 64-bit value (low word, high word).
layout(constant_id = 33) const bool SPLAT_A = false;
layout(constant_id = 34) const bool SPLAT_B = false;
layout(constant_id = 35) const bool SPLAT_C = false;
layout(constant_id = 36) const uint VA0 = 0;
layout(constant_id = 37) const uint VA1 = 0;
layout(constant_id = 38) const uint VB0 = 0;
layout(constant_id = 39) const uint VB1 = 0;
layout(constant_id = 40) const uint VC0 = 0;
layout(constant_id = 41) const uint VC1 = 0;
layout(constant_id = 42) const uint P0 = 0; // IsInf: bit 0 detect_positive, bit 1 detect_negative

layout(set = 0, binding = 0) readonly buffer A { uint wa[]; };
layout(set = 0, binding = 1) readonly buffer B { uint wb[]; };
layout(set = 0, binding = 2) readonly buffer C { uint wc[]; };
layout(set = 0, binding = 3) writeonly buffer O { uint wo[]; };

#ifdef F16
const bool F32_HALF = true;
#else
const bool F32_HALF = false;
#endif

uint kind_bits(uint k) {
  if (k == 3u || k == 10u) return 64u;
  if (k == 4u || k == 5u || k == 6u) return 8u;
  if (k == 7u || k == 8u || k == 9u || (k == 0u && F32_HALF)) return 16u;
  return 32u;
}
bool kind_float(uint k) { return k == 0u || k == 7u; }
bool kind_unsigned(uint k) { return k == 2u || k == 4u || k == 6u || k == 8u || k == 10u; }

// An element: a float kind's value in f, an integer's (sign- or zero-extended) in i.
struct val {
  float f;
  ITYPE i;
};
val fval(float f) { val v; v.f = f; v.i = ITYPE(0); return v; }
val ival(ITYPE i) { val v; v.f = 0.0; v.i = i; return v; }

// lo: the element's bits (zero-extended), hi: the high word of a 64-bit one.
val decode(uint k, uint lo, uint hi) {
  if (k == 0u && !F32_HALF) return fval(uintBitsToFloat(lo));
  if (kind_float(k)) return fval(unpackHalf2x16(lo).x);
#ifdef INT64
  if (k == 3u || k == 10u) return ival(int64_t(pack64(uvec2(lo, hi))));
#endif
  if (k == 5u) return ival(ITYPE(int(lo << 24) >> 24));
  if (k == 9u) return ival(ITYPE(int(lo << 16) >> 16));
  if (k == 1u) return ival(ITYPE(int(lo)));
  return ival(ITYPE(lo));
}

val splat(uint k, uint v0, uint v1) {
  if (kind_float(k)) return fval(uintBitsToFloat(v0));
#ifdef INT64
  return ival(int64_t(pack64(uvec2(v0, v1))));
#else
  return ival(int(v0));
#endif
}

// The element's bits (x) and high word (y) of kind k: packHalf2x16 and friends.
uvec2 encode(uint k, val v) {
  if (k == 0u && !F32_HALF) return uvec2(floatBitsToUint(v.f), 0u);
  if (kind_float(k)) return uvec2(packHalf2x16(vec2(v.f, 0.0)) & 0xffffu, 0u);
  if (k == 6u) return uvec2(v.i != ITYPE(0) ? 1u : 0u, 0u);
#ifdef INT64
  return unpack32(uint64_t(v.i));
#else
  return uvec2(uint(v.i), 0u);
#endif
}

/// Output coordinates of flat index i (dims right-aligned in 6).
uint[6] coords(uint i) {
  uint k[6];
  k[5] = i % D5; i /= D5;
  k[4] = i % D4; i /= D4;
  k[3] = i % D3; i /= D3;
  k[2] = i % D2; i /= D2;
  k[1] = i % D1;
  k[0] = i / D1;
  return k;
}

// Element e of kind K from the word array W into lo (and hi).
#define FETCH(W, K, e, lo, hi)                                                 \
  {                                                                            \
    uint b_ = kind_bits(K);                                                    \
    if (b_ == 64u) {                                                           \
      lo = W[2u * e];                                                          \
      hi = W[2u * e + 1u];                                                     \
    } else if (b_ == 32u) {                                                    \
      lo = W[e];                                                               \
    } else if (b_ == 16u) {                                                    \
      lo = (W[e >> 1] >> ((e & 1u) * 16u)) & 0xffffu;                          \
    } else {                                                                   \
      lo = (W[e >> 2] >> ((e & 3u) * 8u)) & 0xffu;                             \
    }                                                                          \
  }

val load_a(uint i, uint k[6]) {
  if (SPLAT_A) return splat(KA, VA0, VA1);
  uint e = FLAT_A ? i : k[0] * SA0 + k[1] * SA1 + k[2] * SA2 + k[3] * SA3 + k[4] * SA4 + k[5] * SA5;
  uint lo = 0u, hi = 0u;
  FETCH(wa, KA, e, lo, hi)
  return decode(KA, lo, hi);
}
val load_b(uint i, uint k[6]) {
  if (SPLAT_B) return splat(KB, VB0, VB1);
  uint e = FLAT_B ? i : k[0] * SB0 + k[1] * SB1 + k[2] * SB2 + k[3] * SB3 + k[4] * SB4 + k[5] * SB5;
  uint lo = 0u, hi = 0u;
  FETCH(wb, KB, e, lo, hi)
  return decode(KB, lo, hi);
}
val load_c(uint i, uint k[6]) {
  if (SPLAT_C) return splat(KC, VC0, VC1);
  uint e = FLAT_C ? i : k[0] * SC0 + k[1] * SC1 + k[2] * SC2 + k[3] * SC3 + k[4] * SC4 + k[5] * SC5;
  uint lo = 0u, hi = 0u;
  FETCH(wc, KC, e, lo, hi)
  return decode(KC, lo, hi);
}

// NaN and infinity from the bits: a driver may fold isnan() away under fast-math assumptions.
bool is_nan(float f) { return (floatBitsToUint(f) & 0x7fffffffu) > 0x7f800000u; }
bool is_inf(float f) { return (floatBitsToUint(f) & 0x7fffffffu) == 0x7f800000u; }

bool ilt(ITYPE a, ITYPE b, bool u) { return u ? UTYPE(a) < UTYPE(b) : a < b; }

float to_float(val v, uint k) {
  if (kind_float(k)) return v.f;
  return kind_unsigned(k) ? float(UTYPE(v.i)) : float(v.i);
}

ITYPE imax(uint k) {
  if (k == 4u || k == 6u) return ITYPE(255);
  if (k == 5u) return ITYPE(127);
  if (k == 8u) return ITYPE(65535);
  if (k == 9u) return ITYPE(32767);
  if (k == 2u) return ITYPE(0xffffffffu);
#ifdef INT64
  if (k == 3u) return int64_t(0x7fffffffffffffffl);
  if (k == 10u) return int64_t(0xfffffffffffffffful);
#endif
  return ITYPE(2147483647);
}
ITYPE imin(uint k) {
  if (kind_unsigned(k)) return ITYPE(0);
  if (k == 5u) return ITYPE(-128);
  if (k == 9u) return ITYPE(-32768);
#ifdef INT64
  if (k == 3u) return int64_t(0x8000000000000000ul);
#endif
  return ITYPE(int(0x80000000u));
}

// Float to integer kind k as the reference converts: NaN gives 0, out of range saturates.
ITYPE float_to_int(float f, uint k) {
  if (is_nan(f)) return ITYPE(0);
  float t = trunc(f);
  bool u = kind_unsigned(k);
  if (t <= (u ? 0.0 : float(imin(k)))) return imin(k);
  if (t >= (u ? float(UTYPE(imax(k))) : float(imax(k)))) return imax(k);
  return u ? ITYPE(UTYPE(t)) : ITYPE(t);
}

// x^y as double pow gives it: small integer exponents by repeated squaring (exact products).
float fpow(float x, float y) {
  if (y == trunc(y) && abs(y) <= 64.0) {
    uint n = uint(abs(y));
    float r = 1.0, b = x;
    while (n > 0u) {
      if ((n & 1u) != 0u) r *= b;
      b *= b;
      n >>= 1u;
    }
    return y < 0.0 ? 1.0 / r : r;
  }
  if (x < 0.0) return uintBitsToFloat(0x7fc00000u); // a negative base to a fraction: NaN
  return pow(x, y);
}

// a^n in the integers (n >= 0 by squaring; a negative n truncates 1/a^|n|).
ITYPE ipow(ITYPE a, ITYPE n, bool n_unsigned) {
  if (!n_unsigned && n < ITYPE(0)) {
    if (a == ITYPE(1)) return ITYPE(1);
    if (a == ITYPE(-1) && !kind_unsigned(KA)) return (n & ITYPE(1)) != ITYPE(0) ? ITYPE(-1) : ITYPE(1);
    if (a == ITYPE(0)) return imax(KO); // 1/0: inf, saturated
    return ITYPE(0);
  }
  ITYPE r = ITYPE(1);
  UTYPE m = UTYPE(n);
  while (m != UTYPE(0)) {
    if ((m & UTYPE(1)) != UTYPE(0)) r *= a;
    a *= a;
    m >>= 1u;
  }
  return r;
}

val power(val x, val y) {
  float yf = to_float(y, KB);
  float est = fpow(to_float(x, KA), yf);
  if (kind_float(KA)) return fval(est);
  // Exact integer powers while the result fits kind KO; otherwise convert as the reference does.
  bool u = kind_unsigned(KO);
  float lo = u ? 0.0 : float(imin(KO)), hi = u ? float(UTYPE(imax(KO))) : float(imax(KO));
  bool exact = (!kind_float(KB) || (yf == trunc(yf) && abs(yf) <= 64.0)) && est > lo - 1.0 && est < hi;
  if (!exact) return ival(float_to_int(est, KO));
  return ival(ipow(x.i, kind_float(KB) ? ITYPE(yf) : y.i, kind_unsigned(KB)));
}

// C fmod: x - n*y with n = trunc(x/y), one rounding through fma, n corrected when x/y rounded
// across an integer; the result has the sign of x (-0 included).
float fmod_c(float x, float y) {
  float r = fma(-trunc(x / y), y, x);
  if (r != 0.0 && (r < 0.0) != (x < 0.0)) r += x < 0.0 ? -abs(y) : abs(y);
  if (abs(r) >= abs(y)) r -= x < 0.0 ? -abs(y) : abs(y);
  if (r == 0.0) return x < 0.0 ? uintBitsToFloat(0x80000000u) : 0.0; // C keeps the sign of x on a 0
  return r;
}

val apply_float(val x, val y, val z) {
  float a = x.f, b = y.f;
  if (OP == 1u) return fval(-a);
  if (OP == 2u) return fval(abs(a));
  if (OP == 3u) return fval(a > 0.0 ? 1.0 : (a < 0.0 ? -1.0 : 0.0));
  if (OP == 4u) return fval(a > 0.0 ? a : 0.0);
  if (OP == 6u) return ival(ITYPE(is_nan(a) ? 1 : 0));
  if (OP == 7u) {
    bool hit = is_inf(a) && ((a > 0.0 && (P0 & 1u) != 0u) || (a < 0.0 && (P0 & 2u) != 0u));
    return ival(ITYPE(hit ? 1 : 0));
  }
  if (OP == 10u) return fval(a + b);
  if (OP == 11u) return fval(a - b);
  if (OP == 12u) return fval(a * b);
  if (OP == 13u) return fval(a / b);
  if (OP == 15u || OP == 16u) {
    float r = fmod_c(a, b);
    if (OP == 15u && r != 0.0 && ((r < 0.0) != (b < 0.0))) r += b;
    return fval(r);
  }
  if (OP == 17u || OP == 18u) {
    if (is_nan(a) || is_nan(b)) return fval(uintBitsToFloat(0x7fc00000u));
    return fval(OP == 17u ? min(a, b) : max(a, b));
  }
  if (OP == 19u) return ival(ITYPE(a == b ? 1 : 0));
  if (OP == 20u) return ival(ITYPE(a < b ? 1 : 0));
  if (OP == 21u) return ival(ITYPE(a <= b ? 1 : 0));
  if (OP == 22u) return ival(ITYPE(a > b ? 1 : 0));
  if (OP == 23u) return ival(ITYPE(a >= b ? 1 : 0));
  if (OP == 31u) return fval(a < b ? b : (a > z.f ? z.f : a));
  return x;
}

val apply_int(val x, val y, val z) {
  ITYPE a = x.i, b = y.i;
  bool u = kind_unsigned(KA);
  if (OP == 1u) return ival(-a);
  if (OP == 2u) return ival(!u && a < ITYPE(0) ? -a : a);
  if (OP == 3u) return ival(a == ITYPE(0) ? ITYPE(0) : (!u && a < ITYPE(0) ? ITYPE(-1) : ITYPE(1)));
  if (OP == 4u) return ival(!u && a < ITYPE(0) ? ITYPE(0) : a);
  if (OP == 5u) return ival(ITYPE(a == ITYPE(0) ? 1 : 0));
  if (OP == 10u) return ival(a + b);
  if (OP == 11u) return ival(a - b);
  if (OP == 12u) return ival(a * b);
  if (OP == 13u || OP == 15u || OP == 16u) {
    if (b == ITYPE(0)) return ival(ITYPE(0)); // undefined (the reference throws)
    if (u) {
      UTYPE q = UTYPE(a) / UTYPE(b);
      return ival(OP == 13u ? ITYPE(q) : ITYPE(UTYPE(a) - q * UTYPE(b)));
    }
    if (b == ITYPE(-1)) return ival(OP == 13u ? -a : ITYPE(0));
    ITYPE q = a / b; // truncates toward zero
    if (OP == 13u) return ival(q);
    ITYPE r = a - q * b;
    if (OP == 15u && r != ITYPE(0) && ((r < ITYPE(0)) != (b < ITYPE(0)))) r += b;
    return ival(r);
  }
  if (OP == 17u) return ival(ilt(b, a, u) ? b : a);
  if (OP == 18u) return ival(ilt(a, b, u) ? b : a);
  if (OP == 19u) return ival(ITYPE(a == b ? 1 : 0));
  if (OP == 20u) return ival(ITYPE(ilt(a, b, u) ? 1 : 0));
  if (OP == 21u) return ival(ITYPE(ilt(b, a, u) ? 0 : 1));
  if (OP == 22u) return ival(ITYPE(ilt(b, a, u) ? 1 : 0));
  if (OP == 23u) return ival(ITYPE(ilt(a, b, u) ? 0 : 1));
  if (OP == 24u) return ival(ITYPE(a != ITYPE(0) && b != ITYPE(0) ? 1 : 0));
  if (OP == 25u) return ival(ITYPE(a != ITYPE(0) || b != ITYPE(0) ? 1 : 0));
  if (OP == 26u) return ival(ITYPE((a != ITYPE(0)) != (b != ITYPE(0)) ? 1 : 0));
  if (OP == 27u || OP == 28u) {
    // In the unsigned type of KA's width: a shift by the width or more gives 0.
    uint bits = kind_bits(KA);
    if (UTYPE(b) >= UTYPE(bits)) return ival(ITYPE(0));
    UTYPE m = ~UTYPE(0);
    if (bits == 32u) m = UTYPE(0xffffffffu);
    if (bits < 32u) m = UTYPE((1u << bits) - 1u);
    UTYPE v = UTYPE(a) & m;
    return ival(ITYPE(OP == 27u ? v << uint(b) : v >> uint(b)));
  }
  if (OP == 31u) return ival(ilt(a, b, u) ? b : (ilt(z.i, a, u) ? z.i : a));
  return x;
}

val compute(uint i) {
  uint k[6] = coords(i);
  val x = load_a(i, k);
  val y = OP >= 10u ? load_b(i, k) : x;
  val z = OP >= 30u ? load_c(i, k) : x;
  if (OP == 30u) return x.i != ITYPE(0) ? y : z; // Where: the condition is bool
  if (OP == 14u) return power(x, y);
  return kind_float(KA) ? apply_float(x, y, z) : apply_int(x, y, z);
}

void main() {
  uint w = linear_id();
  uint ob = kind_bits(KO);
  uint per = ob >= 32u ? 1u : 32u / ob;
  uint first = w * per;
  if (first >= TOTAL) return;
  if (ob == 64u) {
    uvec2 e = encode(KO, compute(first));
    wo[2u * first] = e.x;
    wo[2u * first + 1u] = e.y;
    return;
  }
  uint mask = ob == 32u ? 0xffffffffu : (1u << ob) - 1u;
  uint word = 0u;
  for (uint j = 0u; j < per && first + j < TOTAL; ++j) word |= (encode(KO, compute(first + j)).x & mask) << (j * ob);
  wo[w] = word;
}
