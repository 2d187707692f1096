/* kiln firmware ABI: the integer and narrow-float arithmetic of
 * docs/precision.md, shared by the compiler (which computes the constants),
 * its Tpu interpreter and the cmodel (which execute them), so all three round
 * alike.
 *
 * Freestanding C99, no libm: the conversions between f32 and f16/bf16 work on
 * bit patterns (integer-only); the float helpers (quantize, dequantize,
 * round-half-even) use plain float arithmetic only. */
#ifndef KILN_ABI_QUANT_H
#define KILN_ABI_QUANT_H

#include <stdint.h>

/* ---- integers ---------------------------------------------------------------- */

/* v / 2^s rounded half away from zero; s = 0 gives v. s is 0..63 (the
 * records allow no more); a larger s gives 0. Exact for every int64. */
static inline int64_t kiln_rshift_round(int64_t v, uint32_t s) {
  uint64_t mag, q;
  if (s == 0u)
    return v;
  if (s > 63u)
    return 0;
  /* |v| as unsigned is at most 2^63, so adding half (at most 2^62) cannot wrap. */
  mag = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
  q = (mag + ((uint64_t)1 << (s - 1u))) >> s;
  return v < 0 ? -(int64_t)q : (int64_t)q;
}

/* Clamp to [-128, 127]. */
static inline int8_t kiln_sat_i8(int64_t v) {
  return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

/* num / den rounded half away from zero; den must be > 0 (else 0). */
static inline int64_t kiln_div_round(int64_t num, int64_t den) {
  uint64_t mag, d, q, r;
  if (den <= 0)
    return 0;
  if (den == 1)
    return num;
  mag = num < 0 ? 0u - (uint64_t)num : (uint64_t)num;
  d = (uint64_t)den;
  q = mag / d;
  r = mag % d;
  if (r >= d - r) /* 2r >= d without overflow */
    ++q;
  return num < 0 ? -(int64_t)q : (int64_t)q;
}

/* a * b, saturated to int64. Requantization multiplies accumulators by an
 * int32 multiplier; real models stay far inside int64, a hostile record only
 * gets a saturated (and then clamped) value instead of overflow. */
static inline int64_t kiln_mul_sat_i64(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
  return r;
}

/* sat8(rshift_round(v * m, s) + zp): the requantization every INT8 op ends
 * with (commands.h). The shifted value is clamped before zp is added, so
 * nothing can wrap. */
static inline int8_t kiln_requant_i8(int64_t v, int32_t m, uint32_t s, int32_t zp) {
  int64_t r = kiln_rshift_round(kiln_mul_sat_i64(v, m), s);
  r = r < -1024 ? -1024 : r > 1024 ? 1024 : r;
  return kiln_sat_i8(r + zp);
}

/* ---- f16 and bf16 bit patterns ------------------------------------------------- */

/* f32 bits to IEEE binary16 bits, round to nearest even. Overflow gives
 * +-Inf, NaN stays a (quiet) NaN, results below the normal range become
 * subnormals or zero with the same rounding. */
static inline uint16_t kiln_f32_bits_to_f16_bits(uint32_t f) {
  uint32_t sign = (f >> 16) & 0x8000u;
  uint32_t exp = (f >> 23) & 0xffu;
  uint32_t mant = f & 0x7fffffu;
  uint32_t half, rem, m, shift, q, halfway;
  if (exp == 0xffu) /* Inf, or NaN with its top payload bits and the quiet bit */
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));
  if (exp >= 143u) /* 2^16 and above: beyond 65504 even before rounding */
    return (uint16_t)(sign | 0x7c00u);
  if (exp >= 113u) { /* normal f16: exponent exp - 112 in 1..30 */
    half = ((exp - 112u) << 10) | (mant >> 13);
    rem = mant & 0x1fffu;
    /* A carry out of the mantissa bumps the exponent; from 30 that is Inf. */
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
      ++half;
    return (uint16_t)(sign | half);
  }
  /* Subnormal f16 (units of 2^-24): the f32 value is m * 2^(exp - 150). */
  if (exp == 0u) /* f32 zero or subnormal: below 2^-126, rounds to zero */
    return (uint16_t)sign;
  m = mant | 0x800000u;
  shift = 126u - exp; /* >= 14 */
  if (shift > 24u)    /* m / 2^shift < 0.5: zero */
    return (uint16_t)sign;
  q = m >> shift;
  rem = m & ((1u << shift) - 1u);
  halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (q & 1u)))
    ++q; /* 0x400 is the smallest normal: the carry is right */
  return (uint16_t)(sign | q);
}

static inline uint32_t kiln_f16_bits_to_f32_bits(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu)
    return sign | 0x7f800000u | (mant << 13);
  if (exp == 0u) {
    if (mant == 0u)
      return sign;
    /* Subnormal: normalize so the leading bit becomes the implicit one. */
    exp = 113u;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --exp;
    }
    return sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  return sign | ((exp + 112u) << 23) | (mant << 13);
}

/* f32 bits to bfloat16 bits (the top half), round to nearest even; NaN stays
 * a quiet NaN even when its payload is only in the low half. */
static inline uint16_t kiln_f32_bits_to_bf16_bits(uint32_t f) {
  if ((f & 0x7f800000u) == 0x7f800000u && (f & 0x7fffffu))
    return (uint16_t)((f >> 16) | 0x40u);
  return (uint16_t)((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}

static inline uint32_t kiln_bf16_bits_to_f32_bits(uint16_t h) { return (uint32_t)h << 16; }

/* The same on floats. */
static inline uint32_t kiln_f32_bits(float x) {
  uint32_t b;
  __builtin_memcpy(&b, &x, sizeof b);
  return b;
}
static inline float kiln_f32_from_bits(uint32_t b) {
  float x;
  __builtin_memcpy(&x, &b, sizeof x);
  return x;
}
static inline uint16_t kiln_f32_to_f16(float x) { return kiln_f32_bits_to_f16_bits(kiln_f32_bits(x)); }
static inline float kiln_f16_to_f32(uint16_t h) { return kiln_f32_from_bits(kiln_f16_bits_to_f32_bits(h)); }
static inline uint16_t kiln_f32_to_bf16(float x) { return kiln_f32_bits_to_bf16_bits(kiln_f32_bits(x)); }
static inline float kiln_bf16_to_f32(uint16_t h) { return kiln_f32_from_bits(kiln_bf16_bits_to_f32_bits(h)); }

/* ---- quantize and dequantize ------------------------------------------------------ */

/* x rounded to the nearest integer, ties to even (no libm, no dependence on
 * the FPU rounding mode). NaN and +-Inf come back unchanged; the sign of a
 * zero result is x's. */
static inline float kiln_round_half_even_f32(float x) {
  float whole, frac, r;
  int32_t i;
  if (!(x < 8388608.0f && x > -8388608.0f)) /* |x| >= 2^23 is whole already; NaN too */
    return x;
  i = (int32_t)x; /* truncates; exact below 2^23 */
  whole = (float)i;
  frac = x - whole; /* exact: both share x's exponent range */
  if (frac > 0.5f || (frac == 0.5f && (i & 1)))
    ++i;
  else if (frac < -0.5f || (frac == -0.5f && (i & 1)))
    --i;
  r = (float)i;
  return r == 0.0f && x < 0.0f ? -0.0f : r;
}

/* ONNX QuantizeLinear: sat8(round_half_even(x / scale) + zp). NaN quantizes
 * to zp (as a zero would). */
static inline int8_t kiln_quantize_f32(float x, float scale, int32_t zp) {
  float r = kiln_round_half_even_f32(x / scale);
  if (r != r)
    r = 0.0f;
  /* Anything beyond +-512 saturates whatever zp (|zp| <= 128) is. */
  r = r < -512.0f ? -512.0f : r > 512.0f ? 512.0f : r;
  return kiln_sat_i8((int64_t)r + zp);
}

/* ONNX DequantizeLinear: (q - zp) * scale in f32. */
static inline float kiln_dequantize_i8(int32_t q, float scale, int32_t zp) {
  return (float)(q - zp) * scale;
}

#endif
