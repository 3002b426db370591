#version 450
// The dynamic-quantization ops on raw words (kernels/vulkan/lower_quantize.cpp), one variant each:
// DEQUANT     DequantizeLinear: y = float(x - zp) * scale, x u8/i8/i32, scale and zp scalar
//             or one per index of an axis ([OUTER, C, INNER]); one invocation per element.
// QUANT       QuantizeLinear: y = saturate(round_even(x / scale) + zp), y u8/i8 (XKIND), scale
//             and zp as DEQUANT's; four bytes per invocation.
// DQL_RANGE   DynamicQuantizeLinear's first step: one workgroup loops over all of x for
//             min(0, min x) and max(0, max x), then writes the scale and the u8 zero point.
// DQL_APPLY   its second step: y = saturate(round_even(x / scale) + zp), four u8 per invocation.
// MATMUL_INT  MatMulInteger: y[b, m, n] = sum_k (a[b, m, k] - a_zp) * (w[k, n] - w_zp) in
//             int32, a and w u8 or i8, a_zp scalar or one per row, w_zp scalar or one per column.
// MATMUL_INT4 the same where K and N are multiples of 4, so that every row of A, B and Y is
//             whole 32-bit words: A and B bound as r32ui texels, Y as rgba32ui (lavapipe gathers
//             texel loads; a storage-buffer load is a loop over the SIMD lanes), and each
//             invocation computes 4 rows x 8 columns, a step of 4 k costing 4 loads of A and 8
//             of B for 128 multiply-adds (MATMUL_INT: 2 loads for each).
// Divisions are correctly rounded (as the reference's float32 division), not the driver's
// approximate one, so that rounding to integers agrees byte for byte.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// Element kinds (lowering.hpp element_kind): 1 i32, 4 u8, 5 i8.
layout(constant_id = 0) const uint TOTAL = 1;
layout(constant_id = 1) const uint XKIND = 4;
layout(constant_id = 2) const uint C = 1;      // DEQUANT: per-axis length (1: per tensor); MATMUL_INT: N
layout(constant_id = 3) const uint INNER = 1;  // DEQUANT: elements per axis index; MATMUL_INT: K
layout(constant_id = 4) const bool HAS_ZP = false;
layout(constant_id = 5) const uint WKIND = 4;  // MATMUL_INT: B's kind
layout(constant_id = 6) const uint M = 1;      // MATMUL_INT: rows per batch
layout(constant_id = 7) const bool A_ZP_ROWS = false; // MATMUL_INT: a_zp one per row
layout(constant_id = 8) const bool W_ZP_COLS = false; // MATMUL_INT: w_zp one per column
layout(constant_id = 9) const bool HAS_WZP = false;
layout(constant_id = 10) const uint W_BATCH = 0; // MATMUL_INT: elements between B's batches (0: one B for all)
layout(constant_id = 11) const bool A_BATCHED = true; // MATMUL_INT4: false: one A for every batch of B (1x1 ConvInteger)
// MATMUL_INT4 with FLOAT_OUT (the Cast -> Mul(scale) [-> Add(bias)] that quantize_dynamic writes
// after it, lower_int8_epilogue.cpp): y = float(acc) * scale + bias, scale and bias each a
// scalar (0), one per column (1) or one per row (2).
layout(constant_id = 12) const uint SCALE_MODE = 0;
layout(constant_id = 13) const bool HAS_BIAS = false;
layout(constant_id = 14) const uint BIAS_MODE = 0;

#if defined(DQL_RANGE) || defined(DQL_APPLY) || defined(QUANT)
layout(set = 0, binding = 0) readonly buffer X { SFLOAT x[]; };
#elif defined(MATMUL_INT4)
layout(set = 0, binding = 0, r32ui) readonly uniform uimageBuffer XA;
#else
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
#endif

/// Element i of a u8 (4), i8 (5) or i32 (1) buffer of words.
#define LOAD_INT(buf, kind, i) \
  ((kind) == 1u ? int(buf[i]) \
                : ((kind) == 5u ? (int(((buf[(i) >> 2] >> (((i) & 3u) * 8u)) & 0xffu) << 24) >> 24) \
                                : int((buf[(i) >> 2] >> (((i) & 3u) * 8u)) & 0xffu)))

/// a - c * b, exactly when c is within a few ulps of a / b: c * b as an unevaluated sum p + e
/// (Dekker's product; a fused fma would do, but llvmpipe may evaluate fma unfused, which made
/// a quotient within an ulp of a tie look exact), then a - p is exact (Sterbenz: p is close to a).
float residual(float a, float b, float c) {
  precise float p = c * b;
  precise float cs = 4097.0 * c;
  precise float ch = cs - (cs - c);
  precise float cl = c - ch;
  precise float bs = 4097.0 * b;
  precise float bh = bs - (bs - b);
  precise float bl = b - bh;
  precise float e = ((ch * bh - p) + ch * bl + cl * bh) + cl * bl;
  precise float r = (a - p) - e;
  return r;
}

/// a / b rounded to nearest even, as IEEE division (the driver's may be off by an ulp).
float div_rn(float a, float b) {
  precise float q = a / b;
  if (isinf(q) || isnan(q) || q == 0.0 || isinf(b) || abs(q) > 1e30 || abs(q) < 1e-30) return q;
  precise float best = q;
  precise float err = abs(residual(a, b, q));
  for (int s = -1; s <= 1; s += 2) {
    uint bits = floatBitsToUint(q);
    precise float c = uintBitsToFloat(uint(int(bits) + s));
    precise float e = abs(residual(a, b, c));
    if (e < err || (e == err && (floatBitsToUint(c) & 1u) == 0u)) {
      best = c;
      err = e;
    }
  }
  return best;
}

#if defined(DEQUANT)
layout(set = 0, binding = 1) readonly buffer S { SFLOAT scale[]; };
layout(set = 0, binding = 2) readonly buffer Z { uint zp[]; };
layout(set = 0, binding = 3) writeonly buffer Y { SFLOAT y[]; };

void main() {
  uint i = linear_id();
  if (i >= TOTAL) return;
  uint c = C == 1u ? 0u : (i / INNER) % C;
  int z = HAS_ZP ? LOAD_INT(zp, XKIND, c) : 0;
  y[i] = SFLOAT(float(LOAD_INT(x, XKIND, i) - z) * float(scale[c]));
}

#elif defined(QUANT)
layout(set = 0, binding = 1) readonly buffer S { SFLOAT scale[]; };
layout(set = 0, binding = 2) readonly buffer Z { uint zp[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint y[]; };

void main() {
  uint w = linear_id();
  if (4u * w >= TOTAL) return;
  const float lo = XKIND == 5u ? -128.0 : 0.0, hi = XKIND == 5u ? 127.0 : 255.0;
  uint word = 0u;
  for (uint k = 0u; k < 4u; ++k) {
    uint i = 4u * w + k;
    if (i >= TOTAL) break;
    uint c = C == 1u ? 0u : (i / INNER) % C;
    float z = HAS_ZP ? float(LOAD_INT(zp, XKIND, c)) : 0.0;
    float q = clamp(roundEven(div_rn(float(x[i]), float(scale[c]))) + z, lo, hi);
    word |= (uint(int(q)) & 0xffu) << (8u * k);
  }
  y[w] = word;
}

#elif defined(DQL_RANGE)
layout(set = 0, binding = 1) writeonly buffer S { SFLOAT scale_out[]; };
layout(set = 0, binding = 2) writeonly buffer Z { uint zp_out[]; };
shared float lo_part[64];
shared float hi_part[64];

void main() {
  uint t = gl_LocalInvocationID.x;
  float lo = 0.0, hi = 0.0;
  for (uint i = t; i < TOTAL; i += 64u) {
    float v = float(x[i]);
    lo = min(lo, v);
    hi = max(hi, v);
  }
  lo_part[t] = lo;
  hi_part[t] = hi;
  barrier();
  if (t != 0u) return;
  for (uint k = 1u; k < 64u; ++k) {
    lo = min(lo, lo_part[k]);
    hi = max(hi, hi_part[k]);
  }
  precise float s = div_rn(hi - lo, 255.0);
  float z = s == 0.0 ? 0.0 : clamp(roundEven(0.0 - div_rn(lo, s)), 0.0, 255.0);
  scale_out[0] = SFLOAT(s);
  zp_out[0] = uint(z);
}

#elif defined(DQL_APPLY)
layout(set = 0, binding = 1) readonly buffer S { SFLOAT scale_in[]; };
layout(set = 0, binding = 2) readonly buffer Z { uint zp_in[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint y[]; };

void main() {
  uint w = linear_id();
  if (4u * w >= TOTAL) return;
  float s = float(scale_in[0]);
  float z = float(zp_in[0] & 0xffu);
  uint word = 0u;
  for (uint k = 0u; k < 4u; ++k) {
    uint i = 4u * w + k;
    if (i >= TOTAL) break;
    float q = s == 0.0 ? z : clamp(roundEven(div_rn(float(x[i]), s)) + z, 0.0, 255.0);
    word |= uint(q) << (8u * k);
  }
  y[w] = word;
}

#elif defined(MATMUL_INT)
layout(set = 0, binding = 1) readonly buffer W { uint w[]; };
layout(set = 0, binding = 2) readonly buffer AZ { uint azp[]; };
layout(set = 0, binding = 3) readonly buffer WZ { uint wzp[]; };
layout(set = 0, binding = 4) writeonly buffer Y { int y[]; };

void main() {
  uint id = linear_id();
  if (id >= TOTAL) return;
  const uint N = C, K = INNER;
  uint n = id % N, row = id / N; // row over all batches of A
  uint m = row % M, b = row / M;
  int az = HAS_ZP ? LOAD_INT(azp, XKIND, A_ZP_ROWS ? m : 0u) : 0;
  int wz = HAS_WZP ? LOAD_INT(wzp, WKIND, W_ZP_COLS ? n : 0u) : 0;
  uint a0 = row * K, w0 = b * W_BATCH + n;
  int acc = 0;
  for (uint k = 0u; k < K; ++k) {
    uint ai = a0 + k, wi = w0 + k * N;
    acc += (LOAD_INT(x, XKIND, ai) - az) * (LOAD_INT(w, WKIND, wi) - wz);
  }
  y[id] = acc;
}

#elif defined(MATMUL_INT4)
layout(set = 0, binding = 1, r32ui) readonly uniform uimageBuffer WB;
layout(set = 0, binding = 2) readonly buffer AZ { uint azp[]; };
layout(set = 0, binding = 3) readonly buffer WZ { uint wzp[]; };
#ifdef FLOAT_OUT
layout(set = 0, binding = 4) readonly buffer SC { SFLOAT scale[]; };
layout(set = 0, binding = 5) readonly buffer BI { SFLOAT bias[]; };
layout(set = 0, binding = 6, FMT4) writeonly uniform imageBuffer Y;

/// Element (m, 4 w .. 4 w + 3) of a scale or bias in `mode`.
vec4 per(uint mode, bool is_scale, uint m, uint w) {
  if (mode == 2u) return vec4(float(is_scale ? scale[m] : bias[m]));
  if (mode == 1u) {
    uint c = 4u * w;
    return is_scale ? vec4(float(scale[c]), float(scale[c + 1u]), float(scale[c + 2u]), float(scale[c + 3u]))
                    : vec4(float(bias[c]), float(bias[c + 1u]), float(bias[c + 2u]), float(bias[c + 3u]));
  }
  return vec4(float(is_scale ? scale[0] : bias[0]));
}

/// What the op stores for row m's sums of word w: its int32 sums, or the float epilogue's result
/// (float(acc) * scale, then + bias, each rounded as the separate ops round).
void store(int at, ivec4 acc, uint m, uint w) {
  precise vec4 y = vec4(acc) * per(SCALE_MODE, true, m, w);
  if (HAS_BIAS) y = y + per(BIAS_MODE, false, m, w);
  imageStore(Y, at, y);
}
#else
layout(set = 0, binding = 4, rgba32ui) writeonly uniform uimageBuffer Y;

void store(int at, ivec4 acc, uint m, uint w) { imageStore(Y, at, uvec4(acc)); }
#endif

const uint NW = C / 4u;             // words in a row of B (texels in a row of Y)
const uint NBLK = (NW + 1u) / 2u;   // 8 columns (2 words) per invocation
const uint MBLK = (M + 3u) / 4u;    // 4 rows per invocation
const uint KW = INNER / 4u;         // words in a row of A

/// The 4 bytes of a word as u8 (kind 4) or i8 (kind 5) values.
ivec4 bytes_of(uint word, uint kind) {
  if (kind == 5u) {
    int s = int(word);
    return ivec4(bitfieldExtract(s, 0, 8), bitfieldExtract(s, 8, 8), bitfieldExtract(s, 16, 8), bitfieldExtract(s, 24, 8));
  }
  return ivec4(bitfieldExtract(word, 0, 8), bitfieldExtract(word, 8, 8), bitfieldExtract(word, 16, 8),
               bitfieldExtract(word, 24, 8));
}

void main() {
  uint id = linear_id();
  if (id >= TOTAL) return; // TOTAL: batches x MBLK x NBLK invocations
  uint nb = id % NBLK, r = id / NBLK;
  uint mb = r % MBLK, b = r / MBLK;
  // Rows and words past the edge read a clamped (valid) index and are not stored.
  uint w0 = min(nb * 2u, NW - 1u), w1 = min(nb * 2u + 1u, NW - 1u);
  int arow[4];
  ivec4 az = ivec4(0);
  for (uint i = 0u; i < 4u; ++i) {
    uint m = min(mb * 4u + i, M - 1u);
    arow[i] = int(((A_BATCHED ? b * M : 0u) + m) * KW);
    if (HAS_ZP) az[i] = LOAD_INT(azp, XKIND, A_ZP_ROWS ? m : 0u);
  }
  ivec4 wz0 = ivec4(0), wz1 = ivec4(0);
  if (HAS_WZP) {
    for (uint j = 0u; j < 4u; ++j) {
      wz0[j] = LOAD_INT(wzp, WKIND, W_ZP_COLS ? w0 * 4u + j : 0u);
      wz1[j] = LOAD_INT(wzp, WKIND, W_ZP_COLS ? w1 * 4u + j : 0u);
    }
  }
  uint wbase = b * (W_BATCH / 4u);
  ivec4 acc0[4], acc1[4]; // row i: the columns of word w0, of word w1
  for (uint i = 0u; i < 4u; ++i) {
    acc0[i] = ivec4(0);
    acc1[i] = ivec4(0);
  }
  for (uint kw = 0u; kw < KW; ++kw) {
    ivec4 a[4]; // a[i][t] = A[row i, 4 kw + t] - a_zp
    for (uint i = 0u; i < 4u; ++i) a[i] = bytes_of(imageLoad(XA, arow[i] + int(kw)).x, XKIND) - az[i];
    for (uint t = 0u; t < 4u; ++t) {
      int krow = int(wbase + (kw * 4u + t) * NW);
      ivec4 b0 = bytes_of(imageLoad(WB, krow + int(w0)).x, WKIND) - wz0;
      ivec4 b1 = bytes_of(imageLoad(WB, krow + int(w1)).x, WKIND) - wz1;
      for (uint i = 0u; i < 4u; ++i) {
        acc0[i] += a[i][t] * b0;
        acc1[i] += a[i][t] * b1;
      }
    }
  }
  for (uint i = 0u; i < 4u; ++i) {
    uint m = mb * 4u + i;
    if (m >= M) break;
    int yrow = int((b * M + m) * NW);
    store(yrow + int(nb * 2u), acc0[i], m, nb * 2u);
    if (nb * 2u + 1u < NW) store(yrow + int(nb * 2u + 1u), acc1[i], m, nb * 2u + 1u);
  }
}
#endif
