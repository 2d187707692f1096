// kiln chip: BM1684X's own commands on the chip's memories (bm1684x.h).
//
// Each class decodes through the field tables of kiln/abi/bm1684x.h and
// then works on element views of its operands. Arithmetic is as the
// simulator computes it; each rule below was checked by the oracle tests
// (tests/oracle/bm1684x_diff_test.cpp) on random commands.
#include "kiln/chip/bm1684x.h"

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kiln/abi/bm1684x.h"
#include "kiln/abi/bm1684x_cost.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/quant.h"
#include "parallel.h"

namespace kiln::chip::bm1684x {
namespace {

constexpr uint64_t kLaneBytes = KILN_LMEM_BYTES_PER_LANE;
constexpr uint32_t kLaneMask = KILN_LMEM_BYTES_PER_LANE - 1u;

uint32_t precBytes(uint64_t prec) {
  switch (prec) {
  case KILN_BM_PREC_INT8: return 1;
  case KILN_BM_PREC_FP16: case KILN_BM_PREC_INT16: case KILN_BM_PREC_BF16: return 2;
  case KILN_BM_PREC_FP32: case KILN_BM_PREC_INT32: return 4;
  default: return 0; // INT4, FP8: not modelled
  }
}
bool precIsFloat(uint64_t prec) {
  return prec == KILN_BM_PREC_FP16 || prec == KILN_BM_PREC_FP32 || prec == KILN_BM_PREC_BF16;
}

struct Shape {
  uint32_t n, c, h, w;
  uint64_t count() const { return uint64_t{n} * c * h * w; }
};

// ---- Float arithmetic ---------------------------------------------------------

// The chip (as Sophgo's simulator models it) reads a subnormal f32 operand
// as a zero of its sign and flushes a subnormal result to a zero of its
// sign (x86's DAZ and FTZ, which the simulator sets). kiln computes so
// explicitly, whatever the host's modes.
float flushSubnormal(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  if ((b & 0x7F800000u) == 0) b &= 0x80000000u; // zero exponent: a zero of its sign
  std::memcpy(&x, &b, 4);
  return x;
}
float chipAdd(float a, float b) { return flushSubnormal(flushSubnormal(a) + flushSubnormal(b)); }
float chipSub(float a, float b) { return flushSubnormal(flushSubnormal(a) - flushSubnormal(b)); }
float chipMul(float a, float b) { return flushSubnormal(flushSubnormal(a) * flushSubnormal(b)); }

// ---- Element types -----------------------------------------------------------

struct Type {
  uint32_t prec = 0;
  bool isSigned = false;
  uint32_t bytes() const { return precBytes(prec); }
  bool isFloat() const { return precIsFloat(prec); }
};

float loadFloat(const uint8_t *p, Type t) {
  switch (t.prec) {
  case KILN_BM_PREC_FP32: { uint32_t b; memcpy(&b, p, 4); return kiln_f32_from_bits(b); }
  case KILN_BM_PREC_FP16: { uint16_t b; memcpy(&b, p, 2); return kiln_f16_to_f32(b); }
  default: { uint16_t b; memcpy(&b, p, 2); return kiln_bf16_to_f32(b); }
  }
}
int64_t loadInt(const uint8_t *p, Type t) {
  switch (t.prec) {
  case KILN_BM_PREC_INT8: return t.isSigned ? int64_t{static_cast<int8_t>(*p)} : int64_t{*p};
  case KILN_BM_PREC_INT16: {
    uint16_t b; memcpy(&b, p, 2);
    return t.isSigned ? int64_t{static_cast<int16_t>(b)} : int64_t{b};
  }
  default: {
    uint32_t b; memcpy(&b, p, 4);
    return t.isSigned ? int64_t{static_cast<int32_t>(b)} : int64_t{b};
  }
  }
}
void storeFloat(uint8_t *p, Type t, float v) {
  switch (t.prec) {
  case KILN_BM_PREC_FP32: { uint32_t b = kiln_f32_bits(v); memcpy(p, &b, 4); break; }
  case KILN_BM_PREC_FP16: { uint16_t b = kiln_f32_to_f16(v); memcpy(p, &b, 2); break; }
  default: { uint16_t b = kiln_f32_to_bf16(v); memcpy(p, &b, 2); break; }
  }
}
int64_t intMin(Type t) {
  uint32_t bits = 8u * t.bytes();
  return t.isSigned ? -(int64_t{1} << (bits - 1)) : 0;
}
int64_t intMax(Type t) {
  uint32_t bits = 8u * t.bytes();
  return t.isSigned ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
}
int64_t saturate(__int128 v, Type t) {
  return v < intMin(t) ? intMin(t) : v > intMax(t) ? intMax(t) : static_cast<int64_t>(v);
}
// Stores v's low bits (two's complement wrap).
void storeInt(uint8_t *p, Type t, __int128 v) {
  uint64_t u = static_cast<uint64_t>(v);
  for (uint32_t i = 0; i < t.bytes(); ++i) p[i] = static_cast<uint8_t>(u >> (8u * i));
}

// Integer AR results are exact before the shift: a product of two 32-bit
// values needs 64 bits and a sign.
using Wide = __int128;

// Rounds v / 2^shift by a rounding mode.
Wide shiftRound(Wide v, uint32_t shift, uint64_t mode) {
  if (shift == 0) return v;
  if (shift >= 126) shift = 126;
  Wide floor = v >> shift; // arithmetic: rounds down
  Wide rem = v - floor * (Wide{1} << shift);
  Wide half = Wide{1} << (shift - 1);
  bool neg = v < 0;
  switch (mode) {
  case KILN_BM_ROUND_HALF_EVEN:
    return rem > half || (rem == half && (floor & 1)) ? floor + 1 : floor;
  case KILN_BM_ROUND_HALF_AWAY:
    return rem > half || (rem == half && !neg) ? floor + 1 : floor;
  case KILN_BM_ROUND_TO_ZERO: return neg && rem ? floor + 1 : floor;
  case KILN_BM_ROUND_DOWN: return floor;
  case KILN_BM_ROUND_UP: return rem ? floor + 1 : floor;
  case KILN_BM_ROUND_HALF_UP: return rem >= half ? floor + 1 : floor;
  default: return rem > half ? floor + 1 : floor; // HALF_DOWN
  }
}
// A float to an integer by a rounding mode.
double roundFloat(double v, uint64_t mode) {
  switch (mode) {
  case KILN_BM_ROUND_HALF_EVEN: return std::nearbyint(v);
  case KILN_BM_ROUND_HALF_AWAY: return std::round(v);
  case KILN_BM_ROUND_TO_ZERO: return std::trunc(v);
  case KILN_BM_ROUND_DOWN: return std::floor(v);
  case KILN_BM_ROUND_UP: return std::ceil(v);
  case KILN_BM_ROUND_HALF_UP: return std::floor(v + 0.5);
  default: return std::ceil(v - 0.5); // HALF_DOWN
  }
}

// A float format's bits as a double, and v to the nearest bits (ties even).
double floatBitsValue(uint32_t bits, uint32_t prec) {
  switch (prec) {
  case KILN_BM_PREC_FP32: return kiln_f32_from_bits(bits);
  case KILN_BM_PREC_FP16: return kiln_f16_to_f32(static_cast<uint16_t>(bits));
  default: return kiln_bf16_to_f32(static_cast<uint16_t>(bits));
  }
}
uint32_t floatBitsNearEven(double v, uint32_t prec) {
  float f = static_cast<float>(v);
  switch (prec) {
  case KILN_BM_PREC_FP32: return kiln_f32_bits(f);
  case KILN_BM_PREC_FP16: return kiln_f32_to_f16(f);
  default: return kiln_f32_to_bf16(f);
  }
}

// v (finite) in a float format by a rounding mode: the two values of the
// format that bracket v, then the mode's choice between them. Magnitudes
// step by one in the bits (sign and magnitude); past the largest finite
// value the next step is infinity, one ulp further for the midpoint. From
// a float, a value whose exponent is past the format's is infinite
// whatever the mode (the chip rounds the mantissa, then overflows the
// exponent); from an integer, directed modes stop at the largest finite.
// Half up / half down break a tie by the magnitude (`magnitudeTies`: a
// float's normal value, a 16-bit integer) or else by the sign (a float's
// subnormal value, a 32-bit integer), as the simulator does.
uint32_t roundToFloatBits(double v, uint32_t prec, uint64_t mode, bool fromFloat,
                          bool magnitudeTies) {
  uint32_t c = floatBitsNearEven(v, prec);
  if (std::isnan(v) || floatBitsValue(c, prec) == v) return c;
  const uint32_t signBit = prec == KILN_BM_PREC_FP32 ? 0x80000000u : 0x8000u;
  const uint32_t sign = v < 0 ? signBit : 0u;
  const double mag = std::fabs(v);
  const double pastExponent = prec == KILN_BM_PREC_FP16 ? 65536.0 : 0x1p128;
  if (fromFloat && mag >= pastExponent) return sign | (prec == KILN_BM_PREC_FP32 ? 0x7F800000u
                                          : prec == KILN_BM_PREC_FP16 ? 0x7C00u : 0x7F80u);
  auto value = [&](uint32_t m) { return floatBitsValue(m, prec); }; // m: a magnitude
  uint32_t lo = c & ~signBit;
  while (lo && value(lo) > mag) --lo;
  while (value(lo + 1u) < mag) ++lo;
  const uint32_t hi = lo + 1u;
  double loV = value(lo), hiV = value(hi);
  if (std::isinf(hiV)) hiV = loV + (loV - value(lo - 1u));
  const double dl = mag - loV, dh = hiV - mag;
  const bool tie = dl == dh, away = dh < dl; // away: the nearest is hi
  const bool positive = v > 0;
  const double minNormal = prec == KILN_BM_PREC_FP16 ? 0x1p-14 : 0x1p-126;
  const bool upward = (magnitudeTies && mag >= minNormal) || positive;
  uint32_t pick;
  switch (mode) {
  case KILN_BM_ROUND_HALF_EVEN: pick = tie ? ((lo & 1u) ? hi : lo) : away ? hi : lo; break;
  case KILN_BM_ROUND_HALF_AWAY: pick = tie || away ? hi : lo; break;
  case KILN_BM_ROUND_TO_ZERO: pick = lo; break;
  case KILN_BM_ROUND_DOWN: pick = positive ? lo : hi; break;
  case KILN_BM_ROUND_UP: pick = positive ? hi : lo; break;
  case KILN_BM_ROUND_HALF_UP: pick = tie ? (upward ? hi : lo) : away ? hi : lo; break;
  default: pick = tie ? (upward ? lo : hi) : away ? hi : lo; break; // HALF_DOWN
  }
  return pick | sign;
}
void storeFloatBits(uint8_t *p, Type t, uint32_t bits) {
  for (uint32_t i = 0; i < t.bytes(); ++i) p[i] = static_cast<uint8_t>(bits >> (8u * i));
}

// ---- LMEM views ------------------------------------------------------------------

// A tensor in LMEM: channel c on lane (lane0 + c) % 64, channel group
// (lane0 + c) / 64; element strides for n, channel group, h, w.
struct LmemView {
  uint32_t lane0 = 0, offset = 0;
  uint64_t stride[4] = {0, 0, 0, 0};
  uint32_t bytes = 0;
  uint8_t *at(uint8_t *lmem, uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    uint32_t lc = lane0 + c;
    return lmem + (lc % KILN_NPU_NUM) * kLaneBytes + offset +
           (n * stride[0] + (lc / KILN_NPU_NUM) * stride[1] + h * stride[2] + w * stride[3]) * bytes;
  }
  // Whether every element of shape s lies within its lane.
  bool fits(const Shape &s) const {
    uint64_t groups = (uint64_t{lane0} + s.c - 1u) / KILN_NPU_NUM;
    uint64_t last = (s.n - 1u) * stride[0] + groups * stride[1] + (s.h - 1u) * stride[2] +
                    (s.w - 1u) * stride[3];
    return offset + (last + 1u) * bytes <= kLaneBytes;
  }
};

// The view of a TIU operand at addr with layout `layout` (explicit strides
// in `strides` for KILN_BM_LAYOUT_STRIDE); nullptr or why it cannot be.
const char *tiuView(uint64_t addr, uint64_t layout, const uint64_t strides[4], Type t,
                    const Shape &s, LmemView *v) {
  if (addr >= KILN_NPU_NUM * kLaneBytes) return "a TIU operand outside LMEM";
  v->lane0 = static_cast<uint32_t>(addr >> KILN_BM_LANE_SHIFT);
  v->offset = static_cast<uint32_t>(addr) & kLaneMask;
  v->bytes = t.bytes();
  uint64_t groups = (uint64_t{v->lane0} + s.c + KILN_NPU_NUM - 1u) / KILN_NPU_NUM;
  uint64_t plane = uint64_t{s.h} * s.w;
  switch (layout) {
  case KILN_BM_LAYOUT_ALIGN_EU: {
    uint64_t eu = KILN_EU_BYTES / t.bytes();
    uint64_t cstride = (plane + eu - 1u) / eu * eu;
    uint64_t st[4] = {groups * cstride, cstride, s.w, 1};
    memcpy(v->stride, st, sizeof st);
    break;
  }
  case KILN_BM_LAYOUT_COMPACT: {
    uint64_t st[4] = {groups * plane, plane, s.w, 1};
    memcpy(v->stride, st, sizeof st);
    break;
  }
  case KILN_BM_LAYOUT_STRIDE: memcpy(v->stride, strides, sizeof v->stride); break;
  default: return "a TIU operand layout the model does not cover (offset, line)";
  }
  if (!v->fits(s)) return "a TIU operand past the end of its lane";
  return nullptr;
}

// ---- sAR ----------------------------------------------------------------------------

// One AR operand: an LMEM view or an immediate (the address field's bits).
struct ArOperand {
  Type type;
  bool isConst = false;
  uint64_t bits = 0;
  LmemView view;
  const uint8_t *at(uint8_t *lmem, uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                    uint8_t *scratch) const {
    if (!isConst) return view.at(lmem, n, c, h, w);
    for (uint32_t i = 0; i < 4; ++i) scratch[i] = static_cast<uint8_t>(bits >> (8u * i));
    return scratch;
  }
};

bool arIsUnary(uint64_t op) {
  return op == KILN_BM_AR_NOT || op == KILN_BM_AR_COPY || op == KILN_BM_AR_ABS ||
         op == KILN_BM_AR_DATA_CONVERT;
}

// RSQRT (eu 17), f32: the bit-level first guess 0x5f3759df - (bits >> 1),
// the shift arithmetic (a negative input keeps its sign bit) and of the
// bits as they are (a subnormal is not flushed for it), then
// opd2_n_str + 1 Newton steps y * (1.5 - (x / 2 * y) * y), each operation an
// f32 one that flushes subnormals (the simulator's modes); found by running
// the simulator on random and special inputs, as the differential test does.
float rsqrtNewton(float x, uint32_t steps) {
  const uint32_t bits = kiln_f32_bits(x);
  float y = kiln_f32_from_bits(0x5f3759dfu - ((bits >> 1) | (bits & 0x80000000u)));
  const float half = chipMul(x, 0.5f);
  for (uint32_t i = 0; i < steps; ++i)
    y = chipMul(y, flushSubnormal(1.5f - chipMul(chipMul(half, y), y)));
  return y;
}

// DIV (f32 only): (1/sqrt(|b|))^2 * (a, its sign bit flipped when b's is
// set), the 1/sqrt the SFU's (opd2_n_str + 1 Newton steps), each product
// rounded in this order (so a NaN's sign and payload come out as the chip's);
// found on the simulator (within 2 ulp of a / b after 4 steps).
float divideByRsqrt(float a, float b, uint32_t steps) {
  const float r = rsqrtNewton(std::fabs(b), steps), r2 = chipMul(r, r);
  return chipMul(r2, std::signbit(b) ? -a : a);
}

const char *runAr(const uint8_t *cmd, const Memories &mem) {
  kiln_bm_sar a;
  kiln_bm_sar_decode(cmd, &a);
  Shape s{static_cast<uint32_t>(a.res0_n), static_cast<uint32_t>(a.res0_c),
          static_cast<uint32_t>(a.res0_h), static_cast<uint32_t>(a.res0_w)};
  if (s.count() == 0) return "an AR command with an empty shape";
  const uint64_t op = a.tsk_eu_typ;
  const bool unary = arIsUnary(op);
  ArOperand in0, in1;
  in0.type = {static_cast<uint32_t>(a.opd0_prec), a.opd0_sign != 0};
  in1.type = {static_cast<uint32_t>(a.opd1_prec), a.opd1_sign != 0};
  // DATA_CONVERT's result sign is opd2_sign; a difference is signed; any
  // other integer result is signed when an input is.
  Type out{static_cast<uint32_t>(a.res0_prec),
           op == KILN_BM_AR_DATA_CONVERT                        ? a.opd2_sign != 0
           : op == KILN_BM_AR_SUB || op == KILN_BM_AR_SUB_SATU ? true
                                  : (in0.type.isSigned || (!unary && in1.type.isSigned))};
  if (!out.bytes() || !in0.type.bytes() || (!unary && !in1.type.bytes()))
    return "an AR command with INT4 or FP8 operands (not modelled)";
  const bool isFloat = in0.type.isFloat();
  if (op != KILN_BM_AR_DATA_CONVERT &&
      (out.isFloat() != isFloat || (!unary && in1.type.isFloat() != isFloat)))
    return "an AR command mixing float and integer operands";

  LmemView res;
  const uint64_t resStr[4] = {a.res0_n_str, a.res0_c_str, a.res0_h_str, a.res0_w_str};
  if (const char *e = tiuView(a.res0_addr, a.res0_str, resStr, out, s, &res)) return e;
  in0.isConst = a.opd0_const != 0;
  in0.bits = a.opd0_addr;
  const uint64_t in0Str[4] = {a.opd0_n_str, a.opd0_c_str, a.opd0_h_str, a.opd0_w_str};
  if (!in0.isConst)
    if (const char *e = tiuView(a.opd0_addr, a.opd0_str, in0Str, in0.type, s, &in0.view)) return e;
  if (!unary) {
    in1.isConst = a.opd1_const != 0;
    in1.bits = a.opd1_addr;
    const uint64_t in1Str[4] = {a.opd1_n_str, a.opd1_c_str, a.opd1_h_str, a.opd1_w_str};
    if (!in1.isConst)
      if (const char *e = tiuView(a.opd1_addr, a.opd1_str, in1Str, in1.type, s, &in1.view))
        return e;
  }
  // The integer shift: opd2 (an int8 immediate, negative shifts right),
  // when the command has three operands.
  int32_t shift = 0;
  if (!isFloat && a.tsk_opd_num == 3) {
    if (!a.opd2_const) return "an AR shift operand in LMEM (not modelled)";
    shift = static_cast<int8_t>(a.opd2_addr & 0xFFu);
  }
  const uint64_t round = a.opd2_n_str;
  if (op == KILN_BM_AR_DATA_CONVERT && in0.type.isFloat() && !out.isFloat() &&
      round > KILN_BM_ROUND_UP)
    return "a float to integer conversion rounding half up or half down (the chip has neither)";
  if (op == KILN_BM_AR_DATA_CONVERT &&
      ((in0.type.prec == KILN_BM_PREC_FP16 && out.prec == KILN_BM_PREC_BF16) ||
       (in0.type.prec == KILN_BM_PREC_BF16 && out.prec == KILN_BM_PREC_FP16)))
    return "a conversion between f16 and bf16 (the chip converts through f32)";

  switch (op) {
  case KILN_BM_AR_MUL: case KILN_BM_AR_ADD: case KILN_BM_AR_SUB: case KILN_BM_AR_MAX:
  case KILN_BM_AR_MIN: case KILN_BM_AR_COPY: case KILN_BM_AR_ABS: case KILN_BM_AR_DATA_CONVERT:
    break;
  case KILN_BM_AR_AND: case KILN_BM_AR_OR: case KILN_BM_AR_XOR: case KILN_BM_AR_NOT:
  case KILN_BM_AR_ADD_SATU: case KILN_BM_AR_SUB_SATU: case KILN_BM_AR_MUL_SATU:
    if (isFloat) return "a bitwise or saturating AR op on floats";
    break;
  case KILN_BM_AR_DIV:
    if (in0.type.prec != KILN_BM_PREC_FP32 || out.prec != KILN_BM_PREC_FP32 ||
        in1.type.prec != KILN_BM_PREC_FP32)
      return "an AR division not of f32 (the simulator divides only f32)";
    break;
  default: return "an AR op the model does not cover yet";
  }
  // The simulator asserts on these (so must the chip's compiler not emit them).
  if (!isFloat && !unary && !in1.isConst && in0.type.isSigned != in1.type.isSigned &&
      (op == KILN_BM_AR_MAX || op == KILN_BM_AR_MIN))
    return "integer AR max/min of operands of different signedness";

  uint8_t s0[4], s1[4];
  for (uint32_t n = 0; n < s.n; ++n)
    for (uint32_t c = 0; c < s.c; ++c)
      for (uint32_t h = 0; h < s.h; ++h)
        for (uint32_t w = 0; w < s.w; ++w) {
          const uint8_t *p0 = in0.at(mem.lmem, n, c, h, w, s0);
          const uint8_t *p1 = unary ? nullptr : in1.at(mem.lmem, n, c, h, w, s1);
          uint8_t *po = res.at(mem.lmem, n, c, h, w);
          // DATA_CONVERT rounds by the command's mode: float to float of the
          // same format rounds to an integral value, of another format to
          // the nearest value there; integers convert exactly, saturating.
          if (op == KILN_BM_AR_DATA_CONVERT) {
            if (in0.type.isFloat() && out.isFloat()) {
              // Rounding to an integral value keeps subnormals (they round
              // to 0 or +-1), and so does widening to f32; narrowing
              // flushes them.
              const float raw = loadFloat(p0, in0.type);
              double v = in0.type.prec == out.prec || out.prec == KILN_BM_PREC_FP32
                             ? raw : flushSubnormal(raw);
              if (in0.type.prec == out.prec && std::isfinite(v)) {
                double r = roundFloat(v, round);
                storeFloatBits(po, out, roundToFloatBits(r == 0 ? std::copysign(0.0, v) : r,
                                                         out.prec, round, true, true));
              } else {
                storeFloatBits(po, out, roundToFloatBits(v, out.prec, round, true, true));
              }
            } else if (in0.type.isFloat()) { // subnormals kept: they round to 0 or +-1
              float v = loadFloat(p0, in0.type);
              int64_t q = std::isnan(v) ? 0 : static_cast<int64_t>(std::max(
                  -9.0e18, std::min(9.0e18, roundFloat(v, round))));
              storeInt(po, out, saturate(q, out));
            } else if (out.isFloat()) {
              storeFloatBits(po, out, roundToFloatBits(
                  static_cast<double>(loadInt(p0, in0.type)), out.prec, round, false,
                  in0.type.bytes() < 4));
            } else {
              storeInt(po, out, saturate(loadInt(p0, in0.type), out));
            }
            continue;
          }
          if (op == KILN_BM_AR_COPY) { // the bits, subnormals included
            memmove(po, p0, out.bytes());
            continue;
          }
          if (isFloat && op == KILN_BM_AR_ABS) { // clears the sign bit, subnormals included
            storeFloat(po, out, std::fabs(loadFloat(p0, in0.type)));
            continue;
          }
          if (isFloat) {
            float x = flushSubnormal(loadFloat(p0, in0.type));
            float y = unary ? 0.0f : flushSubnormal(loadFloat(p1, in1.type));
            float r = 0;
            switch (op) {
            case KILN_BM_AR_MUL: r = chipMul(x, y); break;
            case KILN_BM_AR_ADD: r = chipAdd(x, y); break;
            case KILN_BM_AR_SUB: r = chipSub(x, y); break;
            case KILN_BM_AR_MAX: r = x > y ? x : y; break;
            case KILN_BM_AR_MIN: r = x < y ? x : y; break;
            case KILN_BM_AR_DIV: // the 1/sqrt's guess reads a subnormal's bits
              r = divideByRsqrt(x, loadFloat(p1, in1.type), static_cast<uint32_t>(round) + 1);
              break;
            default: break;
            }
            storeFloat(po, out, r);
            continue;
          }
          Wide x = loadInt(p0, in0.type);
          Wide y = unary ? 0 : loadInt(p1, in1.type);
          Wide r = 0;
          bool sat = false;
          switch (op) {
          case KILN_BM_AR_MUL: r = x * y; break;
          case KILN_BM_AR_ADD: r = x + y; break;
          case KILN_BM_AR_SUB: r = x - y; break;
          case KILN_BM_AR_MAX: r = std::max(x, y); break;
          case KILN_BM_AR_MIN: r = std::min(x, y); break;
          case KILN_BM_AR_AND: r = x & y; break;
          case KILN_BM_AR_OR: r = x | y; break;
          case KILN_BM_AR_XOR: r = x ^ y; break;
          case KILN_BM_AR_NOT: r = ~x; break;
          case KILN_BM_AR_ABS: r = x < 0 ? -x : x; break;
          case KILN_BM_AR_ADD_SATU: r = x + y; sat = true; break;
          case KILN_BM_AR_SUB_SATU: r = x - y; sat = true; break;
          default: r = x * y; sat = true; break; // MUL_SATU
          }
          if (shift < 0) r = shiftRound(r, static_cast<uint32_t>(-shift), round);
          else if (shift > 0) r = r * (Wide{1} << shift);
          storeInt(po, out, sat ? saturate(r, out) : r);
        }
  return nullptr;
}

// ---- GDMA DMA_tensor ---------------------------------------------------------------

// One side of a GDMA tensor copy: DDR with element strides, or LMEM with
// channels across lanes from the address's lane.
struct GdmaSide {
  bool lmem = false;
  uint64_t base = 0; // DDR: byte offset into ddr; LMEM: lane0 and offset in view
  LmemView view;
  uint64_t stride[4] = {0, 0, 0, 0};
  uint32_t bytes = 0;
  uint8_t *at(const Memories &m, uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    if (lmem) return view.at(m.lmem, n, c, h, w);
    return m.ddr + base + (n * stride[0] + c * stride[1] + h * stride[2] + w * stride[3]) * bytes;
  }
};

const char *gdmaSide(uint64_t addr, const uint64_t strides[4], uint32_t bytes, const Shape &s,
                     const Memories &m, GdmaSide *side) {
  side->bytes = bytes;
  memcpy(side->stride, strides, sizeof side->stride);
  if (addr >= KILN_BM_DDR_BASE) {
    // The simulator divides by a DDR side's W stride.
    if (strides[3] == 0) return "a GDMA DDR side with a W stride of 0";
    side->base = addr - KILN_BM_DDR_BASE;
    uint64_t last = (s.n - 1u) * strides[0] + (s.c - 1u) * strides[1] + (s.h - 1u) * strides[2] +
                    (s.w - 1u) * strides[3];
    if (side->base > m.ddrBytes || (last + 1u) * bytes > m.ddrBytes - side->base)
      return "a GDMA access outside DDR";
    return nullptr;
  }
  if (addr >= KILN_BM_LMEM_BASE && addr < KILN_BM_LMEM_END) {
    side->lmem = true;
    uint64_t local = addr - KILN_BM_LMEM_BASE;
    side->view.lane0 = static_cast<uint32_t>(local >> KILN_BM_LANE_SHIFT);
    side->view.offset = static_cast<uint32_t>(local) & kLaneMask;
    side->view.bytes = bytes;
    memcpy(side->view.stride, strides, sizeof side->view.stride);
    if (!side->view.fits(s)) return "a GDMA access past the end of an LMEM lane";
    return nullptr;
  }
  return "a GDMA address outside DDR and LMEM (static memory and L2 are not modelled)";
}

const char *runDmaTensor(const uint8_t *cmd, const Memories &mem) {
  kiln_bm_dma_tensor t;
  kiln_bm_dma_tensor_decode(cmd, &t);
  if (t.cmd_special_function != 0)
    return "a DMA_tensor special function other than a plain copy (not modelled yet)";
  const uint32_t bytes = precBytes(t.src_data_format);
  if (!bytes) return "a GDMA data format the model does not cover (INT4, FP8)";
  Shape src{static_cast<uint32_t>(t.src_nsize), static_cast<uint32_t>(t.src_csize),
            static_cast<uint32_t>(t.src_hsize), static_cast<uint32_t>(t.src_wsize)};
  Shape dst = t.nchw_copy ? src
                          : Shape{static_cast<uint32_t>(t.dst_nsize),
                                  static_cast<uint32_t>(t.dst_csize),
                                  static_cast<uint32_t>(t.dst_hsize),
                                  static_cast<uint32_t>(t.dst_wsize)};
  if (src.count() == 0 || dst.count() != src.count())
    return "a DMA_tensor whose source and destination counts differ or are 0";
  const uint64_t srcStr[4] = {t.src_nstride, t.src_cstride, t.src_hstride, t.src_wstride};
  const uint64_t dstStr[4] = {t.dst_nstride, t.dst_cstride, t.dst_hstride, t.dst_wstride};
  GdmaSide from, to;
  if (!t.fill_constant_en)
    if (const char *e = gdmaSide(kiln_bm_gdma_addr(t.src_start_addr_l32, t.src_start_addr_h8),
                                 srcStr, bytes, src, mem, &from))
      return e;
  if (const char *e = gdmaSide(kiln_bm_gdma_addr(t.dst_start_addr_l32, t.dst_start_addr_h8),
                               dstStr, bytes, dst, mem, &to))
    return e;
  const uint64_t laneMask = t.localmem_mask_h32 << 32 | t.localmem_mask_l32;
  uint8_t fill[4];
  for (uint32_t i = 0; i < 4; ++i) fill[i] = static_cast<uint8_t>(t.constant_value >> (8u * i));
  // Elements pair up in n, c, h, w order on both sides.
  uint32_t d[4] = {0, 0, 0, 0};
  for (uint32_t n = 0; n < src.n; ++n)
    for (uint32_t c = 0; c < src.c; ++c)
      for (uint32_t h = 0; h < src.h; ++h)
        for (uint32_t w = 0; w < src.w; ++w) {
          const uint8_t *p = t.fill_constant_en ? fill : from.at(mem, n, c, h, w);
          bool write = !to.lmem || (laneMask >> ((to.view.lane0 + d[1]) % KILN_NPU_NUM) & 1u);
          if (write) memmove(to.at(mem, d[0], d[1], d[2], d[3]), p, bytes);
          if (++d[3] == dst.w) {
            d[3] = 0;
            if (++d[2] == dst.h) {
              d[2] = 0;
              if (++d[1] == dst.c) { d[1] = 0; ++d[0]; }
            }
          }
        }
  return nullptr;
}


// ---- Sliding windows (sCONV, sPorD) ---------------------------------------------

// The input as a kernel sees it: zeros inserted between pixels, then the
// padding around them. A kernel tap at (fy, fx) of this full input reads
// beyond it (a zero), the padding (the opd3 value), an inserted zero, or
// the input pixel (*iy, *ix).
struct Window {
  enum Kind { Outside, Pad, Inserted, Pixel };
  uint32_t h = 0, w = 0, insY = 1, insX = 1;
  int64_t padT = 0, padL = 0, fullH = 0, fullW = 0;

  Kind at(int64_t fy, int64_t fx, uint32_t *iy, uint32_t *ix) const {
    if (fy < 0 || fx < 0 || fy >= fullH || fx >= fullW) return Outside;
    const int64_t py = fy - padT, px = fx - padL;
    if (py < 0 || px < 0 || py > (int64_t{h} - 1) * insY || px > (int64_t{w} - 1) * insX)
      return Pad;
    if (py % insY || px % insX) return Inserted;
    *iy = static_cast<uint32_t>(py / insY);
    *ix = static_cast<uint32_t>(px / insX);
    return Pixel;
  }
};
// sCONV and sPorD name these fields alike.
template <typename Cmd> Window windowOf(const Cmd &k, uint32_t h, uint32_t w) {
  Window win;
  win.h = h, win.w = w;
  win.insY = static_cast<uint32_t>(k.opd0_y_ins0) + 1, win.insX = static_cast<uint32_t>(k.opd0_x_ins0) + 1;
  win.padT = static_cast<int64_t>(k.opd0_up_pad), win.padL = static_cast<int64_t>(k.opd0_lf_pad);
  win.fullH = (int64_t{h} - 1) * win.insY + 1 + win.padT + static_cast<int64_t>(k.opd0_dn_pad);
  win.fullW = (int64_t{w} - 1) * win.insX + 1 + win.padL + static_cast<int64_t>(k.opd0_rt_pad);
  return win;
}

// ---- sCONV ---------------------------------------------------------------------------

// Input channels the MAC array takes together: conv filters are stored in
// blocks of this many ("alignIC"); 1 for f32 (plain [ic][kh][kw] rows).
uint32_t icCube(uint32_t prec) {
  switch (prec) {
  case KILN_BM_PREC_INT8: return KILN_CONV_ICP_INT8;
  case KILN_BM_PREC_FP16: case KILN_BM_PREC_BF16: return KILN_CONV_ICP_F16;
  default: return KILN_CONV_ICP_F32;
  }
}

// One block of a 16-bit float MAC (f16/bf16 conv and matmul): the
// products of `m` operand pairs (exact in f32) aligned to the largest one's
// exponent E, cut toward zero below 2^(E-24), summed exactly, and the sum
// rounded to f32 (ties even), subnormals flushed. a(j), b(j) give pair j,
// already flushed.
template <typename A, typename B>
float macBlock(uint32_t m, A a, B b) {
  uint32_t bits[64];
  uint32_t maxExp = 0; // biased; 0: every product is zero
  for (uint32_t j = 0; j < m; ++j) {
    bits[j] = kiln_f32_bits(flushSubnormal(a(j) * b(j)));
    maxExp = std::max(maxExp, bits[j] >> 23 & 0xFFu);
  }
  // Branch-free: product j, d = E - its exponent below the largest, is
  // (significand << 1) >> d in units of 2^(E-24), 0 once d passes 25 (the
  // shift capped at 63); a zero product has no significand.
  int64_t sum = 0;
  for (uint32_t j = 0; j < m; ++j) {
    const uint32_t exp = bits[j] >> 23 & 0xFFu;
    const uint64_t sig = exp ? ((bits[j] & 0x7FFFFFu) | 0x800000u) : 0u;
    const int64_t q = static_cast<int64_t>((sig << 1) >> std::min(maxExp - exp, 63u));
    const int64_t neg = -static_cast<int64_t>(bits[j] >> 31);
    sum += (q ^ neg) - neg;
  }
  if (sum == 0) return 0.0f;
  // sum * 2^(E-24) in double (exact: |sum| < 2^53, the power of two a
  // normal double), then rounded once to f32.
  const uint64_t scale = uint64_t(int64_t{maxExp} - 127 - 24 + 1023) << 52;
  double unit;
  std::memcpy(&unit, &scale, sizeof unit);
  return flushSubnormal(static_cast<float>(static_cast<double>(sum) * unit));
}

// The filter per output channel and every output pixel's input window,
// gathered once in the order the chip takes them (input channel, kernel row,
// column), then each output channel's sums over all pixels on the cmodel's
// threads: sum(o, filter row, window) gives a pixel's value, store(n, o, oy,
// ox, value) writes it.
// With tapMajor the rows are (kernel row, column, input channel) instead,
// so that a block of input channels at one tap is contiguous.
template <typename T, typename Weight, typename Input, typename Sum, typename Store>
void convSums(const Shape &is, const Shape &os, uint32_t kh, uint32_t kw, bool tapMajor,
              Weight weight, Input input, Sum sum, Store store) {
  const uint32_t taps = kh * kw, window = is.c * taps;
  auto at = [&](uint32_t i, uint32_t t) { return tapMajor ? t * is.c + i : i * taps + t; };
  const uint64_t pixels = uint64_t{os.n} * os.h * os.w;
  std::vector<T> filter(size_t{os.c} * window), cols(pixels * window);
  for (uint32_t o = 0; o < os.c; ++o)
    for (uint32_t i = 0; i < is.c; ++i)
      for (uint32_t t = 0; t < taps; ++t)
        filter[size_t{o} * window + at(i, t)] = weight(o, i, t / kw, t % kw);
  auto pixel = [&](uint64_t p, uint32_t *n, uint32_t *oy, uint32_t *ox) {
    *n = static_cast<uint32_t>(p / (uint64_t{os.h} * os.w));
    *oy = static_cast<uint32_t>(p / os.w % os.h), *ox = static_cast<uint32_t>(p % os.w);
  };
  for (uint64_t p = 0; p < pixels; ++p) {
    uint32_t n, oy, ox;
    pixel(p, &n, &oy, &ox);
    for (uint32_t i = 0; i < is.c; ++i)
      for (uint32_t t = 0; t < taps; ++t)
        cols[p * window + at(i, t)] = input(n, i, oy, ox, t / kw, t % kw);
  }
  parallelFor(os.c, [&](size_t job) {
    const uint32_t o = static_cast<uint32_t>(job);
    for (uint64_t p = 0; p < pixels; ++p) {
      uint32_t n, oy, ox;
      pixel(p, &n, &oy, &ox);
      store(n, o, oy, ox, sum(o, &filter[size_t{o} * window], &cols[p * window], window));
    }
  });
}

const char *runConv(const uint8_t *cmd, const Memories &mem) {
  kiln_bm_sconv k;
  kiln_bm_sconv_decode(cmd, &k);
  if (k.tsk_eu_typ != 0) return "an sCONV with requant (wrq) is not modelled yet";
  const Type in{static_cast<uint32_t>(k.opd0_prec), k.opd0_sign != 0};
  const Type wt{static_cast<uint32_t>(k.opd0_prec), k.opd1_sign != 0};
  const Type out{static_cast<uint32_t>(k.res0_prec), true};
  if (in.isFloat() != out.isFloat() || (!in.isFloat() && in.prec != KILN_BM_PREC_INT8))
    return "an sCONV mixing float and integer, or of 16/32-bit integers";
  if (in.isFloat() && out.prec != KILN_BM_PREC_FP32 && out.prec != in.prec)
    return "an sCONV whose result is neither f32 nor its input's format";
  if (k.opd1_const || k.res_add || k.pad_mode || !k.opd3_const)
    return "an sCONV form the model does not cover yet (constant weight, accumulate, "
           "padding from LMEM or by reflection)";
  const Shape is{static_cast<uint32_t>(k.res0_n), static_cast<uint32_t>(k.opd0_c),
                 static_cast<uint32_t>(k.opd0_h), static_cast<uint32_t>(k.opd0_w)};
  const Shape os{static_cast<uint32_t>(k.res0_n), static_cast<uint32_t>(k.res0_c),
                 static_cast<uint32_t>(k.res0_h), static_cast<uint32_t>(k.res0_w)};
  const uint32_t kh = static_cast<uint32_t>(k.opd1_h), kw = static_cast<uint32_t>(k.opd1_w);
  if (is.count() == 0 || os.count() == 0 || kh == 0 || kw == 0)
    return "an sCONV with an empty shape";
  const uint32_t sh = static_cast<uint32_t>(k.res_op_y_str), sw = static_cast<uint32_t>(k.res_op_x_str);
  if (sh == 0 || sw == 0) return "an sCONV with a stride of 0";
  LmemView x, y;
  const uint64_t inStr[4] = {k.opd0_n_str, k.opd0_c_str, k.opd0_h_str, k.opd0_w_str};
  if (const char *e = tiuView(k.opd0_addr, k.opd0_str, inStr, in, is, &x)) return e;
  const uint64_t none[4] = {0, 0, 0, 0};
  if (const char *e = tiuView(k.res0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, out, os, &y)) return e;
  // The filter: output channel o on lane (lane0 + o) % 64, its input
  // channels in blocks of `cube`, each block's taps row-major, the block's
  // channels innermost.
  const uint32_t cube = icCube(wt.prec);
  const uint64_t icAligned = (uint64_t{is.c} + cube - 1) / cube * cube;
  const uint64_t perOc = icAligned * kh * kw;
  if (k.opd1_addr >= KILN_NPU_NUM * kLaneBytes) return "an sCONV filter outside LMEM";
  const uint32_t wLane0 = static_cast<uint32_t>(k.opd1_addr >> KILN_BM_LANE_SHIFT);
  const uint32_t wOff = static_cast<uint32_t>(k.opd1_addr) & kLaneMask;
  const uint64_t wGroups = (uint64_t{wLane0} + os.c + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
  if (wOff + wGroups * perOc * wt.bytes() > kLaneBytes) return "an sCONV filter past its lane";
  // kernel_rotate: the filter turned by 180 degrees (a transposed conv's).
  const bool rotate = k.kernel_rotate != 0;
  auto weight = [&](uint32_t o, uint32_t i, uint32_t ky, uint32_t kx) {
    if (rotate) ky = kh - 1 - ky, kx = kw - 1 - kx;
    uint32_t lc = wLane0 + o;
    uint64_t e = (lc / KILN_NPU_NUM) * perOc + (i / cube) * cube * kh * kw + (ky * kw + kx) * cube +
                 i % cube;
    return loadFloat(mem.lmem + (lc % KILN_NPU_NUM) * kLaneBytes + wOff + e * wt.bytes(), wt);
  };
  // The bias: f32, one per output channel, compact on its channel's lane.
  uint32_t bLane0 = 0, bOff = 0;
  if (!k.opd2_const) {
    if (k.opd2_addr >= KILN_NPU_NUM * kLaneBytes) return "an sCONV bias outside LMEM";
    bLane0 = static_cast<uint32_t>(k.opd2_addr >> KILN_BM_LANE_SHIFT);
    bOff = static_cast<uint32_t>(k.opd2_addr) & kLaneMask;
    if (bOff + ((uint64_t{bLane0} + os.c + KILN_NPU_NUM - 1) / KILN_NPU_NUM) * 4u > kLaneBytes)
      return "an sCONV bias past its lane";
  }
  const Type f32{KILN_BM_PREC_FP32, true};
  auto bias = [&](uint32_t o) {
    if (k.opd2_const) return kiln_f32_from_bits(static_cast<uint32_t>(k.opd2_addr));
    uint32_t lc = bLane0 + o;
    return loadFloat(mem.lmem + (lc % KILN_NPU_NUM) * kLaneBytes + bOff + (lc / KILN_NPU_NUM) * 4u, f32);
  };
  uint8_t padBits[4];
  for (uint32_t i = 0; i < 4; ++i) padBits[i] = static_cast<uint8_t>(k.opd3_addr >> (8u * i));
  const float pad = loadFloat(padBits, in);
  // The kernel dilated by its inserted zeros.
  const uint32_t dilY = static_cast<uint32_t>(k.opd1_y_ins0) + 1, dilX = static_cast<uint32_t>(k.opd1_x_ins0) + 1;
  const Window win = windowOf(k, is.h, is.w);
  auto input = [&](uint32_t n, uint32_t i, int64_t fy, int64_t fx) -> float {
    uint32_t iy, ix;
    switch (win.at(fy, fx, &iy, &ix)) {
    case Window::Pixel: return loadFloat(x.at(mem.lmem, n, i, iy, ix), in);
    case Window::Pad: return pad;
    default: return 0.0f;
    }
  };
  if (!in.isFloat()) {
    // 8-bit: exact sums of x * (w - kernel zero point), as int32 (TPU-MLIR's
    // int8 conv is this, then AR and requant commands).
    if (out.prec != KILN_BM_PREC_INT32)
      return "an 8-bit sCONV with an 8- or 16-bit result (not modelled: the simulator "
             "saturates them in ways not yet pinned down)";
    if (!k.opd2_const) return "an 8-bit sCONV with per-channel kernel zero points (not modelled)";
    const int64_t kzp = k.opd2_sign ? int64_t{static_cast<int8_t>(k.opd2_addr & 0xFFu)}
                                    : int64_t(k.opd2_addr & 0xFFu);
    uint8_t padRaw[4];
    for (uint32_t i = 0; i < 4; ++i) padRaw[i] = static_cast<uint8_t>(k.opd3_addr >> (8u * i));
    const int64_t padValue = loadInt(padRaw, in);
    auto inputInt = [&](uint32_t n, uint32_t i, int64_t fy, int64_t fx) -> int64_t {
      uint32_t iy, ix;
      switch (win.at(fy, fx, &iy, &ix)) {
      case Window::Pixel: return loadInt(x.at(mem.lmem, n, i, iy, ix), in);
      case Window::Pad: return padValue;
      default: return 0;
      }
    };
    auto weightInt = [&](uint32_t o, uint32_t i, uint32_t ky, uint32_t kx) {
      if (rotate) ky = kh - 1 - ky, kx = kw - 1 - kx;
      uint32_t lc = wLane0 + o;
      uint64_t e = (lc / KILN_NPU_NUM) * perOc + (i / cube) * cube * kh * kw +
                   (ky * kw + kx) * cube + i % cube;
      return loadInt(mem.lmem + (lc % KILN_NPU_NUM) * kLaneBytes + wOff + e, wt);
    };
    convSums<int32_t>(
        is, os, kh, kw, false,
        [&](uint32_t o, uint32_t i, uint32_t ky, uint32_t kx) {
          return static_cast<int32_t>(weightInt(o, i, ky, kx) - kzp);
        },
        [&](uint32_t n, uint32_t i, uint32_t oy, uint32_t ox, uint32_t ky, uint32_t kx) {
          return static_cast<int32_t>(inputInt(n, i, int64_t{oy} * sh + int64_t{ky} * dilY,
                                               int64_t{ox} * sw + int64_t{kx} * dilX));
        },
        [](uint32_t, const int32_t *f, const int32_t *col, uint32_t window) {
          int64_t acc = 0;
          for (uint32_t e = 0; e < window; ++e) acc += int64_t{col[e]} * f[e];
          return acc;
        },
        [&](uint32_t n, uint32_t o, uint32_t oy, uint32_t ox, int64_t acc) {
          storeInt(y.at(mem.lmem, n, o, oy, ox), out, acc); // the low 32 bits
        });
    return nullptr;
  }
  std::vector<float> biases(os.c);
  for (uint32_t o = 0; o < os.c; ++o) biases[o] = flushSubnormal(bias(o));
  const uint32_t taps = kh * kw;
  // Operands are read flushed once here rather than per product (chipMul's
  // own flushing of them is then a no-op).
  const bool sixteen = in.prec != KILN_BM_PREC_FP32;
  convSums<float>(
      is, os, kh, kw, /*tapMajor=*/sixteen,
      [&](uint32_t o, uint32_t i, uint32_t ky, uint32_t kx) { return flushSubnormal(weight(o, i, ky, kx)); },
      [&](uint32_t n, uint32_t i, uint32_t oy, uint32_t ox, uint32_t ky, uint32_t kx) {
        return flushSubnormal(input(n, i, int64_t{oy} * sh + int64_t{ky} * dilY,
                                    int64_t{ox} * sw + int64_t{kx} * dilX));
      },
      [&](uint32_t o, const float *f, const float *col, uint32_t window) {
        if (in.prec == KILN_BM_PREC_FP32) {
          // f32: two accumulators take the bias and the products in turn;
          // their sum is the result.
          float acc[2] = {biases[o], 0.0f};
          uint32_t e = 0;
          for (; e + 1 < window; e += 2) {
            acc[1] = flushSubnormal(acc[1] + flushSubnormal(col[e] * f[e]));
            acc[0] = flushSubnormal(acc[0] + flushSubnormal(col[e + 1] * f[e + 1]));
          }
          if (e < window) acc[1] = flushSubnormal(acc[1] + flushSubnormal(col[e] * f[e]));
          return chipAdd(acc[0], acc[1]);
        }
        // f16/bf16: per block of `cube` input channels and kernel tap, the
        // products (exact in f32) are aligned to the largest one's exponent
        // E, cut toward zero below 2^(E-24), summed exactly and the sum
        // rounded to f32 (ties even); the f32 accumulator starts at the bias
        // and adds the blocks' sums in turn.
        float acc = biases[o];
        for (uint32_t i0 = 0; i0 < is.c; i0 += cube)
          for (uint32_t t = 0; t < taps; ++t) {
            const uint32_t m = std::min(cube, is.c - i0);
            const float *c0 = col + t * is.c + i0, *f0 = f + t * is.c + i0; // tap-major
            acc = chipAdd(acc, macBlock(m, [&](uint32_t j) { return c0[j]; },
                                        [&](uint32_t j) { return f0[j]; }));
          }
        return acc;
      },
      [&](uint32_t n, uint32_t o, uint32_t oy, uint32_t ox, float v) {
        storeFloat(y.at(mem.lmem, n, o, oy, ox), out, v);
      });
  return nullptr;
}

// ---- sPorD ---------------------------------------------------------------------------

// Depthwise convolution, average and max pooling: per channel, a window of
// the input (zeros inserted, padding with the opd3 value) against the
// channel's own kernel (opd1: a compact [kh, kw] per channel on its lane, or
// an immediate, which is how average pooling takes its 1 / count) plus the
// channel's bias (opd2, of the input's format).
const char *runPord(const uint8_t *cmd, const Memories &mem) {
  kiln_bm_spord p;
  kiln_bm_spord_decode(cmd, &p);
  const uint64_t eu = p.tsk_eu_typ;
  const bool isMax = eu == 4, isAvg = eu == 1;
  // (eu 2, "depthwise with relu" in TPU-MLIR's tables, computes a plain
  // depthwise conv on the simulator; kiln neither emits nor models it.)
  if (eu != 0 && eu != 1 && eu != 4)
    return "an sPorD kind the model does not cover (depthwise-relu, ROI forms)";
  const Type in{static_cast<uint32_t>(p.opd0_prec), p.opd0_sign != 0};
  const Type out{static_cast<uint32_t>(p.res0_prec), in.isSigned};
  const bool int8Max = isMax && in.prec == KILN_BM_PREC_INT8 && out.prec == in.prec;
  // An 8-bit depthwise conv's exact sums, as int32 (then AR and requant
  // commands finish it, as for sCONV).
  const Type i32{KILN_BM_PREC_INT32, true};
  const bool int8Depthwise = eu == 0 && in.prec == KILN_BM_PREC_INT8 &&
                             p.res0_prec == KILN_BM_PREC_INT32;
  if (!int8Depthwise && ((!in.isFloat() && !int8Max) || out.prec != in.prec))
    return "an integer or mixed-format sPorD other than 8-bit max pooling and depthwise "
           "convs to int32 is not modelled yet";
  if (p.kernel_rotate || p.pad_mode || !p.opd3_const)
    return "an sPorD form the model does not cover yet (rotate, padding from LMEM or by "
           "reflection)";
  if (isAvg && !p.opd1_const) return "an average pool whose scale is not an immediate";
  const Shape is{static_cast<uint32_t>(p.res0_n), static_cast<uint32_t>(p.res0_c),
                 static_cast<uint32_t>(p.opd0_h), static_cast<uint32_t>(p.opd0_w)};
  const Shape os{static_cast<uint32_t>(p.res0_n), static_cast<uint32_t>(p.res0_c),
                 static_cast<uint32_t>(p.res0_h), static_cast<uint32_t>(p.res0_w)};
  const uint32_t kh = static_cast<uint32_t>(p.opd1_h), kw = static_cast<uint32_t>(p.opd1_w);
  const uint32_t sh = static_cast<uint32_t>(p.res_op_y_str), sw = static_cast<uint32_t>(p.res_op_x_str);
  if (is.count() == 0 || os.count() == 0 || kh == 0 || kw == 0 || sh == 0 || sw == 0)
    return "an sPorD with an empty shape or a stride of 0";
  const uint64_t none[4] = {0, 0, 0, 0};
  LmemView x, y;
  if (const char *e = tiuView(p.opd0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, in, is, &x)) return e;
  if (const char *e = tiuView(p.res0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, int8Depthwise ? i32 : out,
                              os, &y))
    return e;
  LmemView w, b;
  const bool useKernel = !isMax, useBias = eu == 0;
  if (useKernel && !p.opd1_const)
    if (const char *e = tiuView(p.opd1_addr, KILN_BM_LAYOUT_COMPACT, none, in,
                                Shape{1, os.c, kh, kw}, &w))
      return e;
  // The bias is of the input's format.
  if (useBias && !p.opd2_const)
    if (const char *e = tiuView(p.opd2_addr, KILN_BM_LAYOUT_COMPACT, none, in, Shape{1, os.c, 1, 1}, &b))
      return e;
  // 16-bit floats multiply and add in their own format: each product and
  // each sum is rounded to it (computed in f32, then rounded, ties even).
  auto narrow = [&](float v) {
    if (in.prec == KILN_BM_PREC_FP32) return v;
    uint8_t raw[4];
    storeFloat(raw, in, v);
    return loadFloat(raw, in);
  };
  auto immediate = [&](uint64_t bits, Type t) {
    uint8_t raw[4];
    for (uint32_t i = 0; i < 4; ++i) raw[i] = static_cast<uint8_t>(bits >> (8u * i));
    return loadFloat(raw, t);
  };
  if (int8Max || int8Depthwise) {
    // 8-bit: the window's values (pads the opd3 value, inserted zeros 0);
    // max pooling keeps the largest, a depthwise conv sums them times its
    // kernel (opd1, 8-bit) onto its bias (opd2, int32) into an int32.
    const Type wt{KILN_BM_PREC_INT8, p.opd1_sign != 0};
    LmemView w8, b32;
    if (int8Depthwise && !p.opd1_const)
      if (const char *e = tiuView(p.opd1_addr, KILN_BM_LAYOUT_COMPACT, none, wt, Shape{1, os.c, kh, kw}, &w8))
        return e;
    if (int8Depthwise && !p.opd2_const)
      if (const char *e = tiuView(p.opd2_addr, KILN_BM_LAYOUT_COMPACT, none, i32, Shape{1, os.c, 1, 1}, &b32))
        return e;
    auto intImmediate = [](uint64_t bits, Type t) {
      uint8_t raw[4];
      for (uint32_t i = 0; i < 4; ++i) raw[i] = static_cast<uint8_t>(bits >> (8u * i));
      return loadInt(raw, t);
    };
    const int64_t padValue = intImmediate(p.opd3_addr, in);
    const uint32_t dy = static_cast<uint32_t>(p.opd1_y_ins0) + 1, dx = static_cast<uint32_t>(p.opd1_x_ins0) + 1;
    const Window iwin = windowOf(p, is.h, is.w);
    for (uint32_t n = 0; n < os.n; ++n)
      for (uint32_t c = 0; c < os.c; ++c)
        for (uint32_t oy = 0; oy < os.h; ++oy)
          for (uint32_t ox = 0; ox < os.w; ++ox) {
            int64_t acc = !int8Depthwise ? 0
                          : p.opd2_const ? intImmediate(p.opd2_addr, i32)
                                         : loadInt(b32.at(mem.lmem, 0, c, 0, 0), i32);
            bool first = true;
            for (uint32_t ky = 0; ky < kh; ++ky)
              for (uint32_t kx = 0; kx < kw; ++kx) {
                uint32_t iy, ix;
                const Window::Kind kind = iwin.at(int64_t{oy} * sh + int64_t{ky} * dy,
                                                  int64_t{ox} * sw + int64_t{kx} * dx, &iy, &ix);
                const int64_t v = kind == Window::Pixel ? loadInt(x.at(mem.lmem, n, c, iy, ix), in)
                                  : kind == Window::Pad ? padValue : 0;
                if (int8Depthwise)
                  acc += v * (p.opd1_const ? intImmediate(p.opd1_addr, wt)
                                           : loadInt(w8.at(mem.lmem, 0, c, ky, kx), wt));
                else if (first || v > acc)
                  acc = v;
                first = false;
              }
            storeInt(y.at(mem.lmem, n, c, oy, ox), int8Depthwise ? i32 : out, acc); // low bits
          }
    return nullptr;
  }
  const float pad = immediate(p.opd3_addr, in);
  const uint32_t dilY = static_cast<uint32_t>(p.opd1_y_ins0) + 1, dilX = static_cast<uint32_t>(p.opd1_x_ins0) + 1;
  const Window win = windowOf(p, is.h, is.w);
  // Each image's channel on the cmodel's threads (its outputs are its own).
  parallelFor(uint64_t{os.n} * os.c, [&](size_t job) {
    const uint32_t n = static_cast<uint32_t>(job / os.c), c = static_cast<uint32_t>(job % os.c);
      for (uint32_t oy = 0; oy < os.h; ++oy)
        for (uint32_t ox = 0; ox < os.w; ++ox) {
          // Two accumulators take the bias and the window's products in
          // turn, as in an f32 sCONV: a depthwise conv's start at the bias
          // and +0, an average pool's at the first value each takes (so a
          // lone -0 stays -0); max keeps one running maximum.
          float acc = 0.0f, sums[2] = {0.0f, 0.0f};
          bool used[2] = {false, useBias};
          uint32_t turn = 0;
          auto take = [&](float v) {
            sums[turn] = used[turn] ? narrow(chipAdd(sums[turn], v)) : v;
            used[turn] = true;
            turn ^= 1u;
          };
          if (useBias)
            take(p.opd2_const ? immediate(p.opd2_addr, in) : loadFloat(b.at(mem.lmem, 0, c, 0, 0), in));
          bool first = true;
          for (uint32_t ky = 0; ky < kh; ++ky)
            for (uint32_t kx = 0; kx < kw; ++kx) {
              const int64_t fy = int64_t{oy} * sh + int64_t{ky} * dilY;
              const int64_t fx = int64_t{ox} * sw + int64_t{kx} * dilX;
              uint32_t iy, ix;
              const Window::Kind kind = win.at(fy, fx, &iy, &ix);
              float v = kind == Window::Pixel ? loadFloat(x.at(mem.lmem, n, c, iy, ix), in)
                        : kind == Window::Pad ? pad : 0.0f;
              if (isMax) {
                // Compared with subnormals read as zeros (an f32 one is
                // stored so, a bf16 one as it is); a later equal value wins
                // (+0 over -0).
                if (in.prec == KILN_BM_PREC_FP32) v = flushSubnormal(v);
                if (first || flushSubnormal(v) >= flushSubnormal(acc)) acc = v;
                first = false;
                continue;
              }
              const float k = p.opd1_const ? immediate(p.opd1_addr, in)
                                           : loadFloat(w.at(mem.lmem, 0, c, ky, kx), in);
              take(narrow(chipMul(v, k)));
            }
          if (!isMax) acc = used[1] ? narrow(chipAdd(sums[0], sums[1])) : sums[0];
          storeFloat(y.at(mem.lmem, n, c, oy, ox), out, isMax ? acc : flushSubnormal(acc));
        }
  });
  return nullptr;
}

// ---- sRQ&sDQ ---------------------------------------------------------------------------

// RQ_1, the integer requant of 16- or 32-bit x to 8 or 16 bits:
// y = saturate(round(x * multiplier, shift) + zero point), x * multiplier exact, a negative shift to the right rounded by
// the command's mode. The parameters are immediates (opd1: multiplier; opd2:
// shift in bits 0..7, zero point in bits 16..31, signed with opd2_sign) or
// per channel, int32 (multiplier, shift, zero point) on the channel's lane,
// a [1, c, 1, 3] tensor in the EU-aligned layout.
const char *runRqdq(const uint8_t *cmd, const Memories &mem) {
  kiln_bm_srqdq r;
  kiln_bm_srqdq_decode(cmd, &r);
  if (r.tsk_eu_typ != 1) return "an sRQ/sDQ kind other than the integer requant (not modelled yet)";
  // A 32-bit input is signed whatever opd0_sign says (as the simulator reads it).
  const Type in{static_cast<uint32_t>(r.opd0_prec),
                r.opd0_sign != 0 || r.opd0_prec == KILN_BM_PREC_INT32};
  const Type out{static_cast<uint32_t>(r.res0_prec), r.opd2_sign != 0};
  if (in.isFloat() || out.isFloat() || !in.bytes() || !out.bytes())
    return "an integer requant with float, INT4 or FP8 operands";
  if (out.bytes() == 4 || in.bytes() == 1)
    return "an integer requant from 8 bits or to 32 bits (not modelled: the simulator gives "
           "zeros for the one and clamps the other to 16 bits)";
  const Shape s{static_cast<uint32_t>(r.res0_n), static_cast<uint32_t>(r.res0_c),
                static_cast<uint32_t>(r.res0_h), static_cast<uint32_t>(r.res0_w)};
  if (s.count() == 0) return "an sRQ with an empty shape";
  const uint64_t none[4] = {0, 0, 0, 0};
  LmemView x, y, q;
  if (const char *e = tiuView(r.opd0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, in, s, &x)) return e;
  if (const char *e = tiuView(r.res0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, out, s, &y)) return e;
  const Type i32{KILN_BM_PREC_INT32, true};
  if (!r.opd1_const && (r.res0_addr >> KILN_BM_LANE_SHIFT) + s.c > KILN_NPU_NUM)
    return "an integer requant with per-channel parameters past lane 63 (not modelled: where "
           "the simulator reads a second channel group's parameters is not pinned down)";
  if (!r.opd1_const)
    if (const char *e = tiuView(r.opd1_addr, KILN_BM_LAYOUT_COMPACT, none, i32,
                                Shape{1, s.c, 1, 3}, &q))
      return e;
  for (uint32_t c = 0; c < s.c; ++c) {
    int64_t mult, zp;
    int32_t shift;
    if (r.opd1_const) {
      mult = static_cast<int32_t>(r.opd1_addr);
      shift = static_cast<int8_t>(r.opd2_addr & 0xFFu);
      const uint32_t z = static_cast<uint32_t>(r.opd2_addr >> 16) & 0xFFFFu;
      zp = r.opd2_sign ? int64_t{static_cast<int16_t>(z)} : int64_t{z};
    } else { // the shift's low 8 bits and the zero point's low 16, as the immediates'
      mult = loadInt(q.at(mem.lmem, 0, c, 0, 0), i32);
      shift = static_cast<int8_t>(loadInt(q.at(mem.lmem, 0, c, 0, 1), i32) & 0xFF);
      const uint32_t z = static_cast<uint32_t>(loadInt(q.at(mem.lmem, 0, c, 0, 2), i32)) & 0xFFFFu;
      zp = r.opd2_sign ? int64_t{static_cast<int16_t>(z)} : int64_t{z};
    }
    for (uint32_t n = 0; n < s.n; ++n)
      for (uint32_t h = 0; h < s.h; ++h)
        for (uint32_t w = 0; w < s.w; ++w) {
          // The product fits 64 bits; a left shift wraps in them.
          Wide v = Wide{loadInt(x.at(mem.lmem, n, c, h, w), in)} * mult;
          if (shift < 0)
            v = shiftRound(v, static_cast<uint32_t>(-shift), r.opd2_n_str);
          else
            v = static_cast<int64_t>(static_cast<uint64_t>(static_cast<int64_t>(v))
                                     << std::min(shift, 63));
          storeInt(y.at(mem.lmem, n, c, h, w), out, saturate(v + zp, out));
        }
  }
  return nullptr;
}

} // namespace

// ---- sMM2 -----------------------------------------------------------------------------

// Matmul in the matrix2 layout (a matrix [rows, cols] as an alignEU tensor
// [1, rows, 1, cols]: rows across lanes): NN (eu 4) res0 [M, N] = opd0
// [M, K] x opd1 [K, N] with M = res0_c, N = res0_w, K = opd1_c. f16/bf16
// operands sum as the conv does (macBlock over blocks of the format's IC
// parallelism along K, an f32 accumulator from 0), the result stored in
// res0_prec. The simulator reads f32 operands of sMM2 as 16-bit elements,
// so f32 matmuls are sMM's; integer forms, NT/TT, constants and res_add are
// not modelled yet.
const char *runMm2(const uint8_t *cmd, const Memories &mem) {
  kiln_bm_smm2 k;
  kiln_bm_smm2_decode(cmd, &k);
  if (k.tsk_eu_typ != 4) return "an sMM2 other than NN (not modelled yet)";
  const Type in{static_cast<uint32_t>(k.opd0_prec), true};
  const Type out{static_cast<uint32_t>(k.res0_prec), true};
  if (in.prec != KILN_BM_PREC_FP16 && in.prec != KILN_BM_PREC_BF16)
    return "an sMM2 of other than f16/bf16 operands (not modelled yet)";
  if (!out.isFloat() || !out.bytes()) return "an sMM2 with a non-float result";
  if (k.opd0_const || k.opd1_const || k.opd2_const || k.res_add)
    return "an sMM2 with constants or res_add (not modelled yet)";
  const uint32_t M = static_cast<uint32_t>(k.res0_c), N = static_cast<uint32_t>(k.res0_w),
                 K = static_cast<uint32_t>(k.opd1_c);
  if (!M || !N || !K || k.opd1_w != k.res0_w) return "an sMM2 of inconsistent shapes";
  const uint64_t none[4] = {0, 0, 0, 0};
  LmemView a, b, r;
  if (const char *e = tiuView(k.opd0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, in, Shape{1, M, 1, K}, &a)) return e;
  if (const char *e = tiuView(k.opd1_addr, KILN_BM_LAYOUT_ALIGN_EU, none, in, Shape{1, K, 1, N}, &b)) return e;
  if (const char *e = tiuView(k.res0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, out, Shape{1, M, 1, N}, &r)) return e;
  const uint32_t cube = icCube(in.prec);
  std::vector<float> left(size_t{M} * K), right(size_t{K} * N), res(size_t{M} * N);
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < K; ++j) left[size_t{i} * K + j] = flushSubnormal(loadFloat(a.at(mem.lmem, 0, i, 0, j), in));
  for (uint32_t j = 0; j < K; ++j)
    for (uint32_t n = 0; n < N; ++n) right[size_t{j} * N + n] = flushSubnormal(loadFloat(b.at(mem.lmem, 0, j, 0, n), in));
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (uint32_t j0 = 0; j0 < K; j0 += cube)
        acc = chipAdd(acc, macBlock(std::min(cube, K - j0),
                                    [&](uint32_t j) { return left[size_t{i} * K + j0 + j]; },
                                    [&](uint32_t j) { return right[size_t{j0 + j} * N + n]; }));
      res[size_t{i} * N + n] = acc;
    }
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t n = 0; n < N; ++n) storeFloat(r.at(mem.lmem, 0, i, 0, n), out, res[size_t{i} * N + n]);
  return nullptr;
}

// ---- sCMP -----------------------------------------------------------------------------

// Compare opd0 with opd1 (of opd0's format) and select opd2 or opd3 (of
// opd2's format): sel_gt (eu 23), sel_eq (24), sel_lt (26) write the
// selection to res0; gt/lt_and_sel (22, 25) write the larger/smaller
// operand to res0 and the selection to res1. All alignEU. As the simulator
// computes it (bm1684x_diff_test): integers compare exactly; floats compare
// with subnormals flushed, except for equality, which compares the values
// as they are (so a subnormal equals only itself, and -0 equals +0); for
// the > and < kinds a tie gives opd1 and opd3; "less" and min take x only when y is not <= x (a NaN y
// loses); the larger/smaller float kept in res0 is stored with a subnormal
// f32/bf16 flushed to a zero of its sign, f16 as it is. Compared and
// selected formats of different widths are not modelled: the simulator
// does not then select element for element as described here.
const char *runCmp(const uint8_t *cmd, const Memories &mem) {
  kiln_bm_scmp k;
  kiln_bm_scmp_decode(cmd, &k);
  const uint64_t eu = k.tsk_eu_typ;
  if (eu < 22 || eu > 26) return "an sCMP kind the model does not cover";
  const bool two = eu == 22 || eu == 25;
  const Type a{static_cast<uint32_t>(k.opd0_prec), k.opd0_sign != 0};
  const Type sel{static_cast<uint32_t>(k.opd2_prec), true};
  if (!a.bytes() || !sel.bytes()) return "an sCMP of INT4 or FP8";
  if (a.bytes() != sel.bytes())
    return "an sCMP whose compared and selected formats differ in width (not modelled)";
  if (k.opd0_str != KILN_BM_LAYOUT_ALIGN_EU || k.opd1_str != KILN_BM_LAYOUT_ALIGN_EU)
    return "an sCMP with operands not in the alignEU layout (not modelled yet)";
  const Shape s{static_cast<uint32_t>(k.res0_n), static_cast<uint32_t>(k.res0_c),
                static_cast<uint32_t>(k.res0_h), static_cast<uint32_t>(k.res0_w)};
  if (s.count() == 0) return "an sCMP with an empty shape";
  const uint64_t none[4] = {0, 0, 0, 0};
  ArOperand x, y, p, q;
  x.type = y.type = a;
  p.type = q.type = sel;
  ArOperand *ops[4] = {&x, &y, &p, &q};
  const uint64_t consts[4] = {k.opd0_const, k.opd1_const, k.opd2_const, k.opd3_const};
  const uint64_t addrs[4] = {k.opd0_addr, k.opd1_addr, k.opd2_addr, k.opd3_addr};
  for (int i = 0; i < 4; ++i) {
    ops[i]->isConst = consts[i] != 0;
    ops[i]->bits = addrs[i];
    if (!ops[i]->isConst)
      if (const char *e = tiuView(addrs[i], KILN_BM_LAYOUT_ALIGN_EU, none, ops[i]->type, s, &ops[i]->view))
        return e;
  }
  LmemView r0, r1;
  const Type r0t = two ? a : sel;
  if (const char *e = tiuView(k.res0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, r0t, s, &r0)) return e;
  if (two)
    if (const char *e = tiuView(k.res1_addr, KILN_BM_LAYOUT_ALIGN_EU, none, sel, s, &r1)) return e;
  uint8_t b0[4], b1[4], b2[4], b3[4];
  for (uint32_t n = 0; n < s.n; ++n)
    for (uint32_t c = 0; c < s.c; ++c)
      for (uint32_t h = 0; h < s.h; ++h)
        for (uint32_t w = 0; w < s.w; ++w) {
          const uint8_t *px = x.at(mem.lmem, n, c, h, w, b0), *py = y.at(mem.lmem, n, c, h, w, b1);
          const uint8_t *pp = p.at(mem.lmem, n, c, h, w, b2), *pq = q.at(mem.lmem, n, c, h, w, b3);
          int cmpv; // -1, 0, 1: x against y
          if (a.isFloat() && eu == 24) { // equality: the values as they are
            cmpv = loadFloat(px, a) == loadFloat(py, a) ? 0 : 1;
          } else if (a.isFloat()) {
            const float fx = flushSubnormal(loadFloat(px, a)), fy = flushSubnormal(loadFloat(py, a));
            cmpv = fx > fy ? 1 : fx < fy ? -1 : 0;
          } else {
            const int64_t ix = loadInt(px, a), iy = loadInt(py, a);
            cmpv = ix > iy ? 1 : ix < iy ? -1 : 0;
          }
          bool take = eu == 22 || eu == 23 ? cmpv > 0 : eu == 24 ? cmpv == 0 : cmpv < 0;
          if (eu == 26 && a.isFloat()) { // less: unless y is no larger (NaN y: taken)
            const float fx = flushSubnormal(loadFloat(px, a)), fy = flushSubnormal(loadFloat(py, a));
            take = !(fy <= fx);
          }
          if (two) {
            // max: x only when it is larger; min: y only when it is no
            // larger (a tie gives y; an unordered pair x for min, y for max).
            bool first = eu == 22 ? cmpv > 0 : cmpv < 0;
            if (a.isFloat() && eu == 25) {
              const float fx = flushSubnormal(loadFloat(px, a)), fy = flushSubnormal(loadFloat(py, a));
              first = !(fy <= fx);
            }
            take = first; // the selection follows the operand kept
            // The larger/smaller operand's bits, a float subnormal in its
            // own format stored as a zero of its sign.
            uint8_t *pr = r0.at(mem.lmem, n, c, h, w);
            memmove(pr, first ? px : py, a.bytes());
            if (a.isFloat()) {
              const uint32_t expMask = a.prec == KILN_BM_PREC_FP32   ? 0x7F800000u
                                       : a.prec == KILN_BM_PREC_FP16 ? 0xFFFFu // kept
                                                                     : 0x7F80u;
              uint32_t bits = 0;
              memcpy(&bits, pr, a.bytes());
              if ((bits & expMask) == 0) bits &= a.bytes() == 4 ? 0x80000000u : 0x8000u;
              memcpy(pr, &bits, a.bytes());
            }
            memcpy(r1.at(mem.lmem, n, c, h, w), take ? pp : pq, sel.bytes());
          } else {
            memcpy(r0.at(mem.lmem, n, c, h, w), take ? pp : pq, sel.bytes());
          }
        }
  return nullptr;
}

// ---- sTRANS&sBC ------------------------------------------------------------------------

// Lane copy (eu 2): a tensor copied to other lanes; lane broadcast (eu 3):
// an [n, 1, h, w] tensor replicated to c channels. Both alignEU, one format
// for both operands; bytes move unchanged.
const char *runTransBc(const uint8_t *cmd, const Memories &mem) {
  kiln_bm_strans_bc t;
  kiln_bm_strans_bc_decode(cmd, &t);
  if (t.tsk_eu_typ != 2 && t.tsk_eu_typ != 3)
    return "an sTRANS/sBC kind the model does not cover yet (transposes, static memory)";
  const Type type{static_cast<uint32_t>(t.res0_prec), true};
  if (!type.bytes()) return "an sBC of INT4 or FP8";
  const Shape os{static_cast<uint32_t>(t.res0_n), static_cast<uint32_t>(t.res0_c),
                 static_cast<uint32_t>(t.res0_h), static_cast<uint32_t>(t.res0_w)};
  if (os.count() == 0) return "an sBC with an empty shape";
  const bool broadcast = t.tsk_eu_typ == 3;
  const Shape is{os.n, broadcast ? 1u : os.c, os.h, os.w};
  const uint64_t none[4] = {0, 0, 0, 0};
  LmemView x, y;
  if (const char *e = tiuView(t.opd0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, type, is, &x)) return e;
  if (const char *e = tiuView(t.res0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, type, os, &y)) return e;
  // Read everything first: a copy onto overlapping bytes still moves the old values.
  std::vector<uint8_t> src(os.count() * type.bytes());
  size_t at = 0;
  for (uint32_t n = 0; n < os.n; ++n)
    for (uint32_t c = 0; c < os.c; ++c)
      for (uint32_t h = 0; h < os.h; ++h)
        for (uint32_t w = 0; w < os.w; ++w, at += type.bytes())
          memcpy(&src[at], x.at(mem.lmem, n, broadcast ? 0 : c, h, w), type.bytes());
  at = 0;
  for (uint32_t n = 0; n < os.n; ++n)
    for (uint32_t c = 0; c < os.c; ++c)
      for (uint32_t h = 0; h < os.h; ++h)
        for (uint32_t w = 0; w < os.w; ++w, at += type.bytes())
          memcpy(y.at(mem.lmem, n, c, h, w), &src[at], type.bytes());
  return nullptr;
}

// ---- sSFU ---------------------------------------------------------------------------

// TAYLOR (eu 13) and TAYLOR_4X (eu 12, the same values), f32: the
// polynomial sum_k a_k x^k of opd1_n coefficients by Horner's rule from the
// highest, a separate f32 multiply and add per step (no fused multiply-add),
// subnormals flushed; opd1_n >= 2 coefficients (the simulator asserts on
// fewer), found on the simulator with hand-made and random commands.
float taylorHorner(float x, const float *coef, uint32_t terms) {
  float y = flushSubnormal(coef[terms - 1]);
  for (uint32_t k = terms - 1; k-- > 0;) y = chipAdd(chipMul(y, x), coef[k]);
  return y;
}

const char *runSfu(const uint8_t *cmd, const Memories &mem) {
  kiln_bm_ssfu f;
  kiln_bm_ssfu_decode(cmd, &f);
  const bool taylor = f.tsk_eu_typ == KILN_BM_SFU_TAYLOR || f.tsk_eu_typ == KILN_BM_SFU_TAYLOR_4X;
  if (f.tsk_eu_typ != KILN_BM_SFU_RSQRT && !taylor)
    return "an sSFU normalize (not modelled yet)";
  if (f.opd0_prec != KILN_BM_PREC_FP32 || f.res0_prec != KILN_BM_PREC_FP32)
    return "an sSFU of 16-bit floats (not modelled yet)";
  const Type t{KILN_BM_PREC_FP32, true};
  const Shape s{static_cast<uint32_t>(f.res0_n), static_cast<uint32_t>(f.res0_c),
                static_cast<uint32_t>(f.res0_h), static_cast<uint32_t>(f.res0_w)};
  if (s.count() == 0) return "an sSFU with an empty shape";
  const uint64_t none[4] = {0, 0, 0, 0};
  LmemView x, y, a;
  if (const char *e = tiuView(f.opd0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, t, s, &x)) return e;
  if (const char *e = tiuView(f.res0_addr, KILN_BM_LAYOUT_ALIGN_EU, none, t, s, &y)) return e;
  const uint32_t terms = static_cast<uint32_t>(f.opd1_n);
  if (taylor) {
    if (terms < 2) return "an sSFU Taylor series of fewer than 2 terms";
    // Channel c reads lane (opd1's lane + c) % 64, at the same offset for
    // every group of 64 channels (one copy per lane serves them all).
    if (const char *e = tiuView(f.opd1_addr, KILN_BM_LAYOUT_COMPACT, none, t,
                                Shape{1, std::min<uint32_t>(s.c, KILN_NPU_NUM), 1, terms}, &a))
      return e;
    a.stride[1] = 0;
  }
  const uint32_t steps = static_cast<uint32_t>(f.opd2_n_str) + 1;
  // Read everything first: the result may overlap the input.
  std::vector<float> in;
  in.reserve(s.count());
  for (uint32_t n = 0; n < s.n; ++n)
    for (uint32_t c = 0; c < s.c; ++c)
      for (uint32_t h = 0; h < s.h; ++h)
        for (uint32_t w = 0; w < s.w; ++w) in.push_back(loadFloat(x.at(mem.lmem, n, c, h, w), t));
  std::vector<float> coef(taylor ? uint64_t{s.c} * terms : 0);
  for (uint32_t c = 0; c < (taylor ? s.c : 0); ++c)
    for (uint32_t k = 0; k < terms; ++k) coef[c * terms + k] = loadFloat(a.at(mem.lmem, 0, c, 0, k), t);
  size_t i = 0;
  for (uint32_t n = 0; n < s.n; ++n)
    for (uint32_t c = 0; c < s.c; ++c)
      for (uint32_t h = 0; h < s.h; ++h)
        for (uint32_t w = 0; w < s.w; ++w, ++i)
          storeFloat(y.at(mem.lmem, n, c, h, w), t,
                     taylor ? taylorHorner(in[i], &coef[c * terms], terms) : rsqrtNewton(in[i], steps));
  return nullptr;
}

const char *runTiu(const uint8_t *cmd, size_t bytes, const Memories &mem) {
  if (bytes < 16) return "a TIU command shorter than 16 bytes";
  kiln_bm_class cls = kiln_bm_tiu_class(cmd);
  if (cls == KILN_BM_CLASS_NONE) return "a TIU command of no class kiln knows";
  if (bytes < kiln_bm_class_bytes(cls)) return "a TIU command shorter than its class";
  switch (cls) {
  case KILN_BM_CLASS_SAR: return runAr(cmd, mem);
  case KILN_BM_CLASS_SCONV: return runConv(cmd, mem);
  case KILN_BM_CLASS_SPORD: return runPord(cmd, mem);
  case KILN_BM_CLASS_SRQDQ: return runRqdq(cmd, mem);
  case KILN_BM_CLASS_STRANS_BC: return runTransBc(cmd, mem);
  case KILN_BM_CLASS_SSFU: return runSfu(cmd, mem);
  case KILN_BM_CLASS_SCMP: return runCmp(cmd, mem);
  case KILN_BM_CLASS_SMM2: return runMm2(cmd, mem);
  case KILN_BM_CLASS_SYSID: return nullptr;
  default: return "a TIU class the model does not cover yet";
  }
}

const char *runGdma(const uint8_t *cmd, size_t bytes, const Memories &mem) {
  if (bytes < 16) return "a GDMA command shorter than 16 bytes";
  kiln_bm_class cls = kiln_bm_gdma_class(cmd);
  if (cls == KILN_BM_CLASS_NONE) return "a GDMA command of no class kiln knows";
  if (bytes < kiln_bm_class_bytes(cls)) return "a GDMA command shorter than its class";
  switch (cls) {
  case KILN_BM_CLASS_DMA_TENSOR: return runDmaTensor(cmd, mem);
  case KILN_BM_CLASS_DMA_SYS: return nullptr;
  default: return "a GDMA class the model does not cover yet";
  }
}

// ---- Timing ------------------------------------------------------------------------

const char *timeStreams(const uint8_t *tiu, size_t tiuBytes, const uint8_t *gdma,
                        size_t gdmaBytes, StreamTiming *out) {
  *out = StreamTiming{};
  kiln_bm_walk walk;
  kiln_bm_walk_init(&walk, tiu, tiuBytes, gdma, gdmaBytes);
  // Per engine, (id, completion cycle) of the commands taken so far: ids
  // rise along a stream, so a wait for id d is met by the first at or past d.
  std::vector<std::pair<uint32_t, uint64_t>> done[2];
  uint64_t engineFree[2] = {0, 0};
  const uint8_t *cmd;
  uint32_t bytes;
  kiln_bm_class cls;
  for (;;) {
    const int e = kiln_bm_walk_next(&walk, &cmd, &bytes, &cls);
    if (e == KILN_BM_WALK_END) break;
    if (e == KILN_BM_WALK_BAD) return "a command of no form kiln runs";
    if (e == KILN_BM_WALK_STUCK) return "a wait that is never met";
    const uint32_t dep = kiln_bm_cmd_dep(cmd, static_cast<uint32_t>(e));
    uint64_t start = engineFree[e];
    if (dep) {
      const auto &other = done[1 - e];
      auto met = std::lower_bound(other.begin(), other.end(), std::make_pair(dep, uint64_t{0}));
      if (met == other.end()) return "a wait that is never met";
      start = std::max(start, met->second);
    }
    const uint64_t cycles = e == KILN_BM_ENGINE_TIU ? kiln_bm_tiu_cycles(cmd, cls)
                                                   : kiln_bm_gdma_cycles(cmd, cls);
    engineFree[e] = start + cycles;
    done[e].push_back({kiln_bm_cmd_id(cmd, static_cast<uint32_t>(e)), engineFree[e]});
    (e == KILN_BM_ENGINE_TIU ? out->tiuBusy : out->gdmaBusy) += cycles;
    if (cls == KILN_BM_CLASS_DMA_TENSOR) {
      kiln_gdma_cmd g;
      kiln_bm_dma_tensor_as_record(cmd, &g);
      const uint64_t moved = kiln_gdma_elems(&g) * kiln_dtype_bytes(g.dtype);
      const bool fill = g.flags & KILN_GDMA_FLAG_FILL;
      if (!fill && g.src_addr >= KILN_BM_DDR_BASE) out->ddrReadBytes += moved;
      if (g.dst_addr >= KILN_BM_DDR_BASE) out->ddrWriteBytes += moved;
      if ((!fill && g.src_addr >= KILN_BM_DDR_BASE) || g.dst_addr >= KILN_BM_DDR_BASE)
        out->ddrBusBytes += kiln_gdma_bus_bytes(&g);
    }
  }
  out->cycles = std::max(engineFree[0], engineFree[1]);
  return nullptr;
}

} // namespace kiln::chip::bm1684x
