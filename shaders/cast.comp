#version 450
// Cast between element types, on the raw words of both buffers: each invocation writes one
// 32-bit output word (4 bytes of u8/i8/bool, 2 halves, 1 word, or the 2 words of an i64).
// Float tensors are float32 words, or float16 halves in the F16 variant.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// Kinds (kernels/vulkan/lower_cast.cpp): 0 f32, 1 i32, 2 u32, 3 i64, 4 u8, 5 i8, 6 bool, 7 f16.
layout(constant_id = 0) const uint TOTAL = 1; // elements
layout(constant_id = 1) const uint SRC = 0;
layout(constant_id = 2) const uint DST = 0;

#ifdef I32_F32_V4
// i32 -> float with the element count a multiple of 4 (MatMulInteger's result on its way to the
// scale): 4 elements per invocation through rgba32ui / float texels, which lavapipe loads and
// stores as vector gathers (the word path below: 5x slower on [128, 49152]).
layout(set = 0, binding = 0, rgba32ui) readonly uniform uimageBuffer IV;
layout(set = 0, binding = 1, FMT4) writeonly uniform imageBuffer OV;

void main() {
  uint i = linear_id();
  if (i >= TOTAL / 4u) return;
  imageStore(OV, int(i), vec4(ivec4(imageLoad(IV, int(i))))); // correctly rounded (Vulkan)
}
#else
layout(set = 0, binding = 0) readonly buffer I { uint src[]; };
layout(set = 0, binding = 1) writeonly buffer O { uint dst[]; };

#ifdef F16
const bool F32_IS_HALF = true;
#else
const bool F32_IS_HALF = false;
#endif
const bool SRC_HALF = SRC == 7u || (SRC == 0u && F32_IS_HALF);
const bool DST_HALF = DST == 7u || (DST == 0u && F32_IS_HALF);

// An element as a float and as a 64-bit integer (lo, hi words), whichever the source holds.
struct elem {
  bool is_float;
  float f;
  uint lo;
  uint hi;
};

uint byte_at(uint i) { return (src[i >> 2] >> ((i & 3u) * 8u)) & 0xffu; }

elem load(uint i) {
  elem e;
  e.is_float = false;
  e.f = 0.0;
  e.lo = 0u;
  e.hi = 0u;
  if (SRC == 0u || SRC == 7u) {
    e.is_float = true;
    e.f = SRC_HALF ? unpackHalf2x16(src[i >> 1])[i & 1u] : uintBitsToFloat(src[i]);
  } else if (SRC == 1u) {
    e.lo = src[i];
    e.hi = int(e.lo) < 0 ? 0xffffffffu : 0u;
  } else if (SRC == 2u) {
    e.lo = src[i];
  } else if (SRC == 3u) {
    e.lo = src[2u * i];
    e.hi = src[2u * i + 1u];
  } else if (SRC == 5u) {
    e.lo = uint(int(byte_at(i) << 24) >> 24);
    e.hi = int(e.lo) < 0 ? 0xffffffffu : 0u;
  } else {
    e.lo = byte_at(i);
  }
  return e;
}

// An unsigned 64-bit integer rounded once to the nearest float: its top 32 bits, with a sticky
// bit for anything below, converted (integer-to-float conversion rounds to nearest even), then
// scaled exactly.
float u64_to_float(uint lo, uint hi) {
  if (hi == 0u) return float(lo);
  uint shift = uint(findMSB(hi)) + 1u;
  uint m = shift == 32u ? hi : (lo >> shift) | (hi << (32u - shift));
  uint rest = shift == 32u ? lo : lo << (32u - shift);
  if (rest != 0u) m |= 1u;
  return ldexp(float(m), int(shift));
}

float as_float(elem e) {
  if (e.is_float) return e.f;
  if (int(e.hi) >= 0) return u64_to_float(e.lo, e.hi);
  uint lo = ~e.lo + 1u, hi = ~e.hi + (lo == 0u ? 1u : 0u); // the magnitude
  return -u64_to_float(lo, hi);
}

// Float to integer truncates toward zero (ONNX leaves out-of-range values undefined); integer
// to narrower integer keeps the low bits.
uint low_word(elem e) {
  if (!e.is_float) return e.lo;
  float t = trunc(e.f);
  if (abs(t) < 2147483648.0) return uint(int(t));
  return uint(t - floor(t / 4294967296.0) * 4294967296.0);
}

uint high_word(elem e) {
  if (!e.is_float) return e.hi;
  float t = trunc(e.f);
  if (abs(t) < 2147483648.0) return t < 0.0 ? 0xffffffffu : 0u;
  return uint(int(floor(t / 4294967296.0)));
}

bool is_nonzero(elem e) { return e.is_float ? e.f != 0.0 : (e.lo | e.hi) != 0u; }

void main() {
  uint w = linear_id();
  if (DST == 4u || DST == 5u || DST == 6u) {
    uint word = 0u;
    for (uint k = 0u; k < 4u; ++k) {
      uint i = 4u * w + k;
      if (i >= TOTAL) break;
      elem e = load(i);
      uint b = DST == 6u ? (is_nonzero(e) ? 1u : 0u) : (low_word(e) & 0xffu);
      word |= b << (8u * k);
    }
    if (4u * w < TOTAL) dst[w] = word;
  } else if (DST_HALF) {
    uint i = 2u * w;
    if (i >= TOTAL) return;
    float a = as_float(load(i));
    float b = i + 1u < TOTAL ? as_float(load(i + 1u)) : 0.0;
    dst[w] = packHalf2x16(vec2(a, b));
  } else {
    if (w >= TOTAL) return;
    elem e = load(w);
    if (DST == 0u) dst[w] = floatBitsToUint(as_float(e));
    else if (DST == 3u) {
      dst[2u * w] = low_word(e);
      dst[2u * w + 1u] = high_word(e);
    } else dst[w] = low_word(e);
  }
}
#endif
