// F16, BF16 and INT8 in the cmodel (docs/precision.md, ABI 1.2): the
// arithmetic of kiln/abi/quant.h, the TIU kernels through runTiuRecord against
// hand-computed values, the record checks of the new dtype combinations and
// CAST's cost.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cmodel_harness.h"
#include "kiln/abi/cmd_check.h"
#include "kiln/abi/cost.h"
#include "kiln/abi/quant.h"
#include "kiln/cmodel/device.h"
#include "kiln/chip/tiu_kernels.h"

namespace {

using kiln::chip::runTiuRecord;
using kiln::test::lmemOperand;
using kiln::test::Shape;
using kiln::test::tiuCmd;

// An LMEM of 64 lanes of lane_bytes, with the chip.h layout computed here.
class Lmem {
public:
  explicit Lmem(uint64_t lane_bytes = KILN_LMEM_BYTES_PER_LANE)
      : lane_(lane_bytes), bytes_(KILN_NPU_NUM * lane_bytes) {}

  uint8_t *data() { return bytes_.data(); }
  uint64_t lane() const { return lane_; }

  uint64_t offset(const kiln_tiu_operand &o, uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    uint32_t dsize = kiln_dtype_bytes(o.dtype);
    uint64_t groups = (o.c + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
    uint64_t plane = kiln_lmem_plane_stride(o.h, o.w, dsize);
    return c % KILN_NPU_NUM * lane_ + o.addr + (n * groups + c / KILN_NPU_NUM) * plane +
           (uint64_t{h} * o.w + w) * dsize;
  }

  // T is the stored element: float, uint16_t (f16/bf16 bits), int8_t, int32_t.
  template <class T>
  void put(const kiln_tiu_operand &o, const std::vector<T> &values) {
    ASSERT_EQ(sizeof(T), kiln_dtype_bytes(o.dtype));
    ASSERT_EQ(values.size(), size_t{o.n} * o.c * o.h * o.w);
    size_t i = 0;
    forEach(o, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
      std::memcpy(bytes_.data() + offset(o, n, c, h, w), &values[i++], sizeof(T));
    });
  }
  template <class T>
  std::vector<T> get(const kiln_tiu_operand &o) {
    std::vector<T> values;
    forEach(o, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
      T v;
      std::memcpy(&v, bytes_.data() + offset(o, n, c, h, w), sizeof(T));
      values.push_back(v);
    });
    return values;
  }

private:
  template <class F>
  static void forEach(const kiln_tiu_operand &o, F f) {
    for (uint32_t n = 0; n < o.n; ++n)
      for (uint32_t c = 0; c < o.c; ++c)
        for (uint32_t h = 0; h < o.h; ++h)
          for (uint32_t w = 0; w < o.w; ++w)
            f(n, c, h, w);
  }

  uint64_t lane_;
  std::vector<uint8_t> bytes_;
};

const char *run(const kiln_tiu_cmd &cmd, Lmem &lmem) {
  return runTiuRecord(cmd, lmem.data(), lmem.lane());
}

uint16_t f16(float x) { return kiln_f32_to_f16(x); }
float bits(uint32_t b) { return kiln_f32_from_bits(b); }
uint32_t packZp(int zp0, int zp1, int zpo) { return kiln_pack_zero_points(zp0, zp1, zpo); }

kiln_tiu_operand i8Const(int8_t v) {
  kiln_tiu_operand o{};
  o.addr = uint8_t(v);
  o.n = o.c = o.h = o.w = 1;
  o.dtype = KILN_DTYPE_INT8;
  o.flags = KILN_OPND_USED | KILN_OPND_CONST;
  return o;
}

kiln_tiu_cmd castCmd(const kiln_tiu_operand &in, const kiln_tiu_operand &out) {
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_CAST);
  cmd.in0 = in;
  cmd.out = out;
  return cmd;
}

// ---- quant.h ---------------------------------------------------------------------------------

TEST(Quant, RshiftRoundHalfAwayFromZero) {
  EXPECT_EQ(kiln_rshift_round(5, 0), 5);
  EXPECT_EQ(kiln_rshift_round(5, 1), 3);   // 2.5
  EXPECT_EQ(kiln_rshift_round(-5, 1), -3); // -2.5
  EXPECT_EQ(kiln_rshift_round(6, 2), 2);   // 1.5
  EXPECT_EQ(kiln_rshift_round(-6, 2), -2); // -1.5
  EXPECT_EQ(kiln_rshift_round(5, 2), 1);   // 1.25
  EXPECT_EQ(kiln_rshift_round(-7, 2), -2); // -1.75
  EXPECT_EQ(kiln_rshift_round(INT64_MIN, 63), -1);
  EXPECT_EQ(kiln_rshift_round(INT64_MAX, 63), 1);
  EXPECT_EQ(kiln_rshift_round(INT64_MIN, 1), INT64_MIN / 2);
  EXPECT_EQ(kiln_rshift_round(123, 64), 0);
}

TEST(Quant, SatDivAndRequant) {
  EXPECT_EQ(kiln_sat_i8(200), 127);
  EXPECT_EQ(kiln_sat_i8(-129), -128);
  EXPECT_EQ(kiln_sat_i8(-5), -5);
  EXPECT_EQ(kiln_div_round(7, 2), 4);
  EXPECT_EQ(kiln_div_round(-7, 2), -4);
  EXPECT_EQ(kiln_div_round(5, 3), 2);
  EXPECT_EQ(kiln_div_round(4, 3), 1);
  EXPECT_EQ(kiln_div_round(INT64_MIN, 1), INT64_MIN);
  EXPECT_EQ(kiln_div_round(INT64_MAX, INT64_MAX), 1);
  EXPECT_EQ(kiln_div_round(3, 0), 0);
  EXPECT_EQ(kiln_mul_sat_i64(INT64_MAX / 2, 3), INT64_MAX);
  EXPECT_EQ(kiln_mul_sat_i64(INT64_MAX / 2, -3), INT64_MIN);
  EXPECT_EQ(kiln_requant_i8(350, 1 << 30, 32, -3), 85); // 87.5 -> 88
  EXPECT_EQ(kiln_requant_i8(INT64_MAX, INT32_MAX, 0, 0), 127);
  EXPECT_EQ(kiln_requant_i8(INT64_MIN, INT32_MAX, 5, 100), -128);
}

TEST(Quant, F16RoundTripsEveryValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float x = kiln_f16_to_f32(uint16_t(h));
    bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (nan) {
      EXPECT_TRUE(std::isnan(x)) << h;
      EXPECT_EQ(kiln_f32_to_f16(x) & 0x7e00, 0x7e00) << h; // still a (quiet) NaN
    } else {
      ASSERT_EQ(kiln_f32_to_f16(x), h) << h;
    }
  }
  EXPECT_EQ(kiln_f16_to_f32(0x0001), std::ldexp(1.0f, -24)); // smallest subnormal
  EXPECT_EQ(kiln_f16_to_f32(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(kiln_f16_to_f32(0x7bff), 65504.0f);
}

TEST(Quant, F16RoundsToNearestEven) {
  EXPECT_EQ(f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);     // tie, down to even
  EXPECT_EQ(f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02); // tie, up to even
  EXPECT_EQ(f16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(f16(65519.0f), 0x7bff);
  EXPECT_EQ(f16(65520.0f), 0x7c00); // the tie above 65504 rounds to Inf
  EXPECT_EQ(f16(-65520.0f), 0xfc00);
  EXPECT_EQ(f16(1e10f), 0x7c00);
  EXPECT_EQ(f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f16(std::ldexp(1.0f, -25)), 0x0000);     // half the smallest subnormal: even
  EXPECT_EQ(f16(3 * std::ldexp(1.0f, -25)), 0x0002); // 1.5 units: even
  EXPECT_EQ(f16(std::ldexp(1.0f, -25) * 1.0001f), 0x0001);
  EXPECT_EQ(f16(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(f16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), 0x0400); // rounds up to normal
  EXPECT_EQ(f16(-0.0f), 0x8000);
  EXPECT_EQ(f16(1e-30f), 0x0000);
  EXPECT_EQ(kiln_f32_bits_to_f16_bits(0x7f800001u) & 0x7e00, 0x7e00); // low-payload NaN
}

#ifdef __FLT16_MAX__
// The compiler's own conversion (IEEE, round to nearest even) on many floats.
TEST(Quant, F16MatchesCompilerConversion) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000000; ++i) {
    uint32_t b = rng();
    if (i % 2) // dense around f16's range
      b = (b & 0x807fffffu) | ((100u + rng() % 50u) << 23);
    float x = bits(b);
    if (std::isnan(x))
      continue;
    _Float16 h = static_cast<_Float16>(x);
    uint16_t expect;
    std::memcpy(&expect, &h, 2);
    ASSERT_EQ(kiln_f32_bits_to_f16_bits(b), expect) << std::hex << b;
  }
}
#endif

TEST(Quant, Bf16RoundsToNearestEven) {
  EXPECT_EQ(kiln_f32_bits_to_bf16_bits(0x3f808000u), 0x3f80); // tie, down to even
  EXPECT_EQ(kiln_f32_bits_to_bf16_bits(0x3f818000u), 0x3f82); // tie, up to even
  EXPECT_EQ(kiln_f32_bits_to_bf16_bits(0x3f808001u), 0x3f81);
  EXPECT_EQ(kiln_f32_bits_to_bf16_bits(0x7f7fffffu), 0x7f80); // overflow: Inf
  EXPECT_EQ(kiln_f32_bits_to_bf16_bits(0xff800000u), 0xff80);
  EXPECT_EQ(kiln_f32_bits_to_bf16_bits(0x00008000u), 0x0000); // subnormal tie
  EXPECT_EQ(kiln_f32_bits_to_bf16_bits(0x00018000u), 0x0002);
  uint16_t nan = kiln_f32_bits_to_bf16_bits(0x7f800001u); // payload only in the low half
  EXPECT_TRUE(std::isnan(kiln_bf16_to_f32(nan)));
  EXPECT_EQ(kiln_bf16_to_f32(0x3f80), 1.0f);
}

TEST(Quant, RoundHalfEvenAndQuantize) {
  EXPECT_EQ(kiln_round_half_even_f32(2.5f), 2.0f);
  EXPECT_EQ(kiln_round_half_even_f32(3.5f), 4.0f);
  EXPECT_EQ(kiln_round_half_even_f32(-2.5f), -2.0f);
  EXPECT_EQ(kiln_round_half_even_f32(-3.5f), -4.0f);
  EXPECT_EQ(kiln_round_half_even_f32(0.5f), 0.0f);
  EXPECT_TRUE(std::signbit(kiln_round_half_even_f32(-0.5f)));
  EXPECT_EQ(kiln_round_half_even_f32(2.5000002f), 3.0f);
  EXPECT_EQ(kiln_round_half_even_f32(-1.7f), -2.0f);
  EXPECT_EQ(kiln_round_half_even_f32(8388609.0f), 8388609.0f);
  EXPECT_EQ(kiln_round_half_even_f32(4194304.5f), 4194304.0f);
  EXPECT_EQ(kiln_round_half_even_f32(4194305.5f), 4194306.0f);
  EXPECT_TRUE(std::isnan(kiln_round_half_even_f32(NAN)));

  EXPECT_EQ(kiln_quantize_f32(2.5f, 1.0f, 0), 2);
  EXPECT_EQ(kiln_quantize_f32(3.5f, 1.0f, 0), 4);
  EXPECT_EQ(kiln_quantize_f32(-2.5f, 1.0f, 0), -2);
  EXPECT_EQ(kiln_quantize_f32(1.25f, 0.5f, 10), 12); // 2.5 -> 2, + 10
  EXPECT_EQ(kiln_quantize_f32(1000.0f, 0.5f, 0), 127);
  EXPECT_EQ(kiln_quantize_f32(-1000.0f, 0.5f, 0), -128);
  EXPECT_EQ(kiln_quantize_f32(0.0f, 1.0f, -128), -128);
  EXPECT_EQ(kiln_quantize_f32(126.0f, 1.0f, 5), 127);
  EXPECT_EQ(kiln_quantize_f32(INFINITY, 1.0f, 0), 127);
  EXPECT_EQ(kiln_quantize_f32(-INFINITY, 1.0f, 0), -128);
  EXPECT_EQ(kiln_quantize_f32(NAN, 1.0f, 7), 7);
  EXPECT_EQ(kiln_quantize_f32(1e30f, 1e-30f, 0), 127);
  EXPECT_EQ(kiln_dequantize_i8(-2, 0.25f, -2), 0.0f);
  EXPECT_EQ(kiln_dequantize_i8(127, 0.25f, -2), 32.25f);
  EXPECT_EQ(kiln_dequantize_i8(-128, 0.5f, 127), -127.5f);
}

// ---- CAST ------------------------------------------------------------------------------------

TEST(Cast, F32ToF16AndBf16RoundToNearestEven) {
  Lmem lmem;
  const Shape s{1, 3, 1, 4};
  const std::vector<float> x = {1.0f + std::ldexp(1.0f, -11), 1.0f + 3 * std::ldexp(1.0f, -11),
                                65519.0f, 65520.0f, -65520.0f, 1e-8f, -0.0f, NAN,
                                std::ldexp(1.0f, -25), 3 * std::ldexp(1.0f, -25), 2.0f, -3.5f};
  kiln_tiu_operand in = lmemOperand(0, s), half = lmemOperand(4096, s, KILN_DTYPE_F16);
  lmem.put(in, x);
  ASSERT_EQ(run(castCmd(in, half), lmem), nullptr);
  const std::vector<uint16_t> expect = {0x3c00, 0x3c02, 0x7bff, 0x7c00, 0xfc00, 0x0000,
                                        0x8000, 0x7e00, 0x0000, 0x0002, 0x4000, 0xc300};
  std::vector<uint16_t> got = lmem.get<uint16_t>(half);
  for (size_t i = 0; i < x.size(); ++i)
    if (i == 7)
      EXPECT_EQ(got[i] & 0x7e00, 0x7e00); // NaN stays NaN
    else
      EXPECT_EQ(got[i], expect[i]) << i;

  // Back to f32 exactly, and f16 -> bf16 through f32.
  kiln_tiu_operand back = lmemOperand(8192, s);
  ASSERT_EQ(run(castCmd(half, back), lmem), nullptr);
  std::vector<float> wide = lmem.get<float>(back);
  EXPECT_EQ(wide[0], 1.0f);
  EXPECT_EQ(wide[1], 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(wide[3], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(wide[7]));
  EXPECT_EQ(wide[9], std::ldexp(1.0f, -23));

  kiln_tiu_operand brain = lmemOperand(12288, s, KILN_DTYPE_BF16);
  ASSERT_EQ(run(castCmd(in, brain), lmem), nullptr);
  std::vector<uint16_t> b = lmem.get<uint16_t>(brain);
  EXPECT_EQ(b[0], 0x3f80); // 1 + 2^-11 is far below bf16's step
  EXPECT_EQ(b[2], 0x4780); // 65519 -> 65536
  EXPECT_EQ(b[11], 0xc060);
}

TEST(Cast, QuantizeRneTiesAndSaturation) {
  Lmem lmem;
  const Shape s{1, 2, 1, 4};
  kiln_tiu_operand in = lmemOperand(0, s), q = lmemOperand(1024, s, KILN_DTYPE_INT8);
  // scale 0.5, zp 3: 1.25 -> 2.5 -> 2, 1.75 -> 3.5 -> 4, -1.25 -> -2.5 -> -2.
  lmem.put(in, std::vector<float>{1.25f, 1.75f, -1.25f, 100.0f, -100.0f, 0.0f, 62.0f, NAN});
  kiln_tiu_cmd cmd = castCmd(in, q);
  cmd.param[0] = 0.5f;
  cmd.aux[2] = packZp(0, 0, 3);
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(q), (std::vector<int8_t>{5, 7, 1, 127, -128, 3, 127, 3}));

  // From f16: the same values, loaded exactly.
  kiln_tiu_operand half = lmemOperand(2048, s, KILN_DTYPE_F16);
  lmem.put(half, std::vector<uint16_t>{f16(1.25f), f16(1.75f), f16(-1.25f), f16(100.0f),
                                       f16(-100.0f), f16(0.0f), f16(62.0f), 0x7e00});
  cmd.in0 = half;
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(q), (std::vector<int8_t>{5, 7, 1, 127, -128, 3, 127, 3}));

  // RELU: max(q, zp_out).
  cmd.flags = KILN_TIU_FLAG_RELU;
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(q), (std::vector<int8_t>{5, 7, 3, 127, 3, 3, 127, 3}));
}

TEST(Cast, DequantizeToF32AndF16) {
  Lmem lmem;
  const Shape s{1, 1, 1, 4};
  kiln_tiu_operand q = lmemOperand(0, s, KILN_DTYPE_INT8), out = lmemOperand(1024, s);
  lmem.put(q, std::vector<int8_t>{-2, 2, 127, -128});
  kiln_tiu_cmd cmd = castCmd(q, out);
  cmd.param[0] = 0.25f;
  cmd.aux[2] = packZp(-2, 0, 0);
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<float>(out), (std::vector<float>{0.0f, 1.0f, 32.25f, -31.5f}));

  cmd.out = lmemOperand(2048, s, KILN_DTYPE_F16);
  cmd.param[0] = 1000.0f; // (127 + 2) * 1000 = 129000: beyond f16
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<uint16_t>(cmd.out),
            (std::vector<uint16_t>{0x0000, f16(4000.0f), 0x7c00, 0xfc00}));
}

TEST(Cast, RequantizeInt8ToInt8) {
  Lmem lmem;
  const Shape s{1, 1, 1, 6};
  kiln_tiu_operand in = lmemOperand(0, s, KILN_DTYPE_INT8), out = lmemOperand(64, s, KILN_DTYPE_INT8);
  lmem.put(in, std::vector<int8_t>{4, 6, -3, 127, -128, 1});
  kiln_tiu_cmd cmd = castCmd(in, out);
  cmd.aux[0] = 1u << 30; // m0 / 2^31 = 0.5
  cmd.aux[3] = 31;
  cmd.aux[2] = packZp(1, 0, -5);
  ASSERT_EQ(run(cmd, lmem), nullptr);
  // (q - 1) * 0.5 rounded half away from zero, - 5: 1.5 -> 2, 2.5 -> 3, -2, 63, -64.5 -> -65, 0.
  EXPECT_EQ(lmem.get<int8_t>(out), (std::vector<int8_t>{-3, -2, -7, 58, -70, -5}));

  cmd.aux[0] = 3u << 29; // m0 / 2^30 = 1.5
  cmd.aux[3] = 30;
  ASSERT_EQ(run(cmd, lmem), nullptr);
  // 4.5 -> 5, 7.5 -> 8, -6, 189 -> 127 after zp, -193.5 -> -128.
  EXPECT_EQ(lmem.get<int8_t>(out), (std::vector<int8_t>{0, 3, -11, 127, -128, -5}));
}

// ---- F16 / BF16 kernels -----------------------------------------------------------------------

TEST(F16Kernels, EltwiseAddRoundsTiesToEvenAndOverflowsToInf) {
  Lmem lmem;
  const Shape s{1, 1, 1, 5};
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  cmd.in0 = lmemOperand(0, s, KILN_DTYPE_F16);
  cmd.in1 = lmemOperand(64, s, KILN_DTYPE_F16);
  cmd.out = lmemOperand(128, s, KILN_DTYPE_F16);
  const float tiny = std::ldexp(1.0f, -11);
  lmem.put(cmd.in0, std::vector<uint16_t>{f16(1.0f), f16(1.0f + 2 * tiny), f16(65504.0f),
                                          f16(65504.0f), f16(-65504.0f)});
  lmem.put(cmd.in1, std::vector<uint16_t>{f16(tiny), f16(tiny), f16(16.0f), f16(15.0f),
                                          f16(-65504.0f)});
  ASSERT_EQ(run(cmd, lmem), nullptr);
  // The f32 sums are exact; the store rounds: tie to even, tie to even (up),
  // the tie above 65504 to Inf, 65519 down to 65504, overflow to -Inf.
  EXPECT_EQ(lmem.get<uint16_t>(cmd.out),
            (std::vector<uint16_t>{0x3c00, 0x3c02, 0x7c00, 0x7bff, 0xfc00}));

  // A constant operand holds its f16 bits in the low half of addr.
  cmd.in1.flags = KILN_OPND_USED | KILN_OPND_CONST;
  cmd.in1.addr = f16(0.5f);
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<uint16_t>(cmd.out)[0], f16(1.5f));
}

TEST(F16Kernels, Bf16EltwiseAndActive) {
  Lmem lmem;
  const Shape s{1, 1, 1, 3};
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  cmd.in0 = lmemOperand(0, s, KILN_DTYPE_BF16);
  cmd.in1 = lmemOperand(64, s, KILN_DTYPE_BF16);
  cmd.out = lmemOperand(128, s, KILN_DTYPE_BF16);
  lmem.put(cmd.in0, std::vector<uint16_t>{0x3f80, 0x3f81, 0x7f7f});     // 1, 1 + 2^-7, max
  lmem.put(cmd.in1, std::vector<uint16_t>{0x3b80, 0x3b80, 0x7f7f});     // 2^-8, 2^-8, max
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<uint16_t>(cmd.out), (std::vector<uint16_t>{0x3f80, 0x3f82, 0x7f80}));

  kiln_tiu_cmd act = tiuCmd(1, 0, KILN_TIU_ACTIVE, KILN_ACT_SCALE);
  act.in0 = act.out = lmemOperand(0, s, KILN_DTYPE_BF16);
  act.param[0] = 3.0f;
  act.param[1] = 0.0f;
  ASSERT_EQ(run(act, lmem), nullptr);
  EXPECT_EQ(lmem.get<uint16_t>(act.out)[0], 0x4040); // 3
}

TEST(F16Kernels, ConvAccumulatesInF32) {
  // 1x1 conv over 3 channels: 2048 + 1 + 1. Accumulating in f16 would round
  // 2049 to 2048 twice; f32 keeps 2050, which f16 holds.
  Lmem lmem;
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_CONV);
  cmd.in0 = lmemOperand(0, {1, 3, 1, 1}, KILN_DTYPE_F16);
  cmd.in1 = lmemOperand(1024, {1, 1, 3, 1}, KILN_DTYPE_F16);
  cmd.out = lmemOperand(2048, {1, 1, 1, 1}, KILN_DTYPE_F16);
  cmd.kh = cmd.kw = cmd.stride_h = cmd.stride_w = cmd.dil_h = cmd.dil_w = cmd.groups = 1;
  lmem.put(cmd.in0, std::vector<uint16_t>{f16(2048.0f), f16(1.0f), f16(1.0f)});
  lmem.put(cmd.in1, std::vector<uint16_t>{f16(1.0f), f16(1.0f), f16(1.0f)});
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<uint16_t>(cmd.out)[0], f16(2050.0f));

  // An F32 bias is added unrounded: 2050 + 0.9998 stores 2050, where a bias
  // rounded to f16 first (1.0) would give the tie 2051 -> 2052.
  cmd.flags = KILN_TIU_FLAG_HAS_BIAS;
  cmd.in2 = lmemOperand(3072, {1, 1, 1, 1}, KILN_DTYPE_F32);
  lmem.put(cmd.in2, std::vector<float>{0.9998f});
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<uint16_t>(cmd.out)[0], f16(2050.0f));
  cmd.in2.dtype = KILN_DTYPE_F16;
  lmem.put(cmd.in2, std::vector<uint16_t>{f16(0.9998f)});
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<uint16_t>(cmd.out)[0], f16(2052.0f));
}

TEST(F16Kernels, PoolAvgAndDeconvInF32) {
  Lmem lmem;
  // avg of 2048 and 1 in f32 is 1024.5, which f16 rounds to 1024.
  kiln_tiu_cmd pool = tiuCmd(1, 0, KILN_TIU_POOL, KILN_POOL_AVG);
  pool.in0 = lmemOperand(0, {1, 1, 1, 2}, KILN_DTYPE_F16);
  pool.out = lmemOperand(64, {1, 1, 1, 1}, KILN_DTYPE_F16);
  pool.kh = 1, pool.kw = 2, pool.stride_h = pool.stride_w = pool.dil_h = pool.dil_w = 1;
  lmem.put(pool.in0, std::vector<uint16_t>{f16(2048.0f), f16(1.0f)});
  ASSERT_EQ(run(pool, lmem), nullptr);
  EXPECT_EQ(lmem.get<uint16_t>(pool.out)[0], f16(1024.0f));
  lmem.put(pool.in0, std::vector<uint16_t>{f16(2048.0f), f16(3.0f)}); // 1025.5 -> 1026
  ASSERT_EQ(run(pool, lmem), nullptr);
  EXPECT_EQ(lmem.get<uint16_t>(pool.out)[0], f16(1026.0f));

  // Deconv scatters three taps into one output, 2048 first: + 1 + 1 stays
  // 2050 in f32 where f16 would drop each 1.
  kiln_tiu_cmd dc = tiuCmd(1, 0, KILN_TIU_DECONV);
  dc.in0 = lmemOperand(0, {1, 1, 1, 3}, KILN_DTYPE_F16);
  dc.in1 = lmemOperand(1024, {1, 1, 1, 3}, KILN_DTYPE_F16);
  dc.out = lmemOperand(2048, {1, 1, 1, 1}, KILN_DTYPE_F16);
  dc.kh = 1, dc.kw = 3, dc.stride_h = dc.stride_w = dc.dil_h = dc.dil_w = dc.groups = 1;
  dc.pad_left = 2; // output 0 is where input 2 meets tap 0, input 1 tap 1, input 0 tap 2
  lmem.put(dc.in0, std::vector<uint16_t>{f16(2048.0f), f16(1.0f), f16(1.0f)});
  lmem.put(dc.in1, std::vector<uint16_t>{f16(1.0f), f16(1.0f), f16(1.0f)});
  ASSERT_EQ(run(dc, lmem), nullptr);
  EXPECT_EQ(lmem.get<uint16_t>(dc.out)[0], f16(2050.0f));
}

// ---- INT8 kernels -----------------------------------------------------------------------------

// in [1, 1, 2, 2] = [[10, 20], [30, 40]] with zp_in0 5, a 2x2 kernel per
// output channel and table rows (bias, multiplier, rshift), zp_out -3.
struct Int8Conv {
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_CONV);
  Int8Conv(Lmem &lmem, uint16_t pad_top, std::vector<int32_t> table) {
    cmd.in0 = lmemOperand(0, {1, 1, 2, 2}, KILN_DTYPE_INT8);
    cmd.in1 = lmemOperand(1024, {1, 2, 1, 4}, KILN_DTYPE_INT8);
    cmd.in2 = lmemOperand(2048, {1, 2, 1, 3}, KILN_DTYPE_INT32);
    cmd.out = lmemOperand(3072, {1, 2, uint32_t(1 + pad_top), 1}, KILN_DTYPE_INT8);
    cmd.kh = cmd.kw = 2;
    cmd.stride_h = cmd.stride_w = cmd.dil_h = cmd.dil_w = cmd.groups = 1;
    cmd.pad_top = pad_top;
    cmd.flags = KILN_TIU_FLAG_HAS_BIAS;
    cmd.aux[2] = packZp(5, 0, -3);
    lmem.put(cmd.in0, std::vector<int8_t>{10, 20, 30, 40});
    lmem.put(cmd.in1, std::vector<int8_t>{1, 2, 3, 4, -1, 0, 0, 1});
    lmem.put(cmd.in2, table);
  }
};

TEST(Int8Kernels, ConvPerChannelRequantWithZeroPoints) {
  Lmem lmem;
  // oc 0: (5*1 + 15*2 + 25*3 + 35*4) + 100 = 350; * 2^30 / 2^32 = 87.5 -> 88; - 3 = 85.
  // oc 1: (-5 + 35) - 7 = 23; * 0.75 / 4 = 4.3125 -> 4; - 3 = 1.
  Int8Conv conv(lmem, 0, {100, 1 << 30, 32, -7, 3 << 29, 33});
  ASSERT_EQ(run(conv.cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(conv.cmd.out), (std::vector<int8_t>{85, 1}));

  // A padded row contributes nothing (not -zp_in0): row 0 sees only input
  // row 0 at taps 2, 3: oc 0: 5*3 + 15*4 + 100 = 175 -> 43.75 -> 44 - 3 = 41;
  // oc 1: 15 - 7 = 8 -> 1.5 -> 2 - 3 = -1.
  Int8Conv padded(lmem, 1, {100, 1 << 30, 32, -7, 3 << 29, 33});
  ASSERT_EQ(run(padded.cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(padded.cmd.out), (std::vector<int8_t>{41, 85, -1, 1}));

  // Saturation, and RELU as max(out, zp_out): oc 1: 30 - 100 = -70 ->
  // -13.125 -> -13 - 3 = -16 -> -3.
  Int8Conv relu(lmem, 0, {100000, 1 << 30, 30, -100, 3 << 29, 33});
  relu.cmd.flags |= KILN_TIU_FLAG_RELU;
  ASSERT_EQ(run(relu.cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(relu.cmd.out), (std::vector<int8_t>{127, -3}));

  // A table shift beyond 63 faults before anything is written.
  lmem.put(relu.cmd.out, std::vector<int8_t>{9, 9});
  Int8Conv bad(lmem, 0, {0, 1, 0, 0, 1, 64});
  EXPECT_NE(run(bad.cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(bad.cmd.out), (std::vector<int8_t>{9, 9}));
}

TEST(Int8Kernels, DeconvScattersInInt64) {
  Lmem lmem;
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_DECONV);
  cmd.in0 = lmemOperand(0, {1, 1, 1, 2}, KILN_DTYPE_INT8);
  cmd.in1 = lmemOperand(64, {1, 1, 1, 2}, KILN_DTYPE_INT8);
  cmd.in2 = lmemOperand(128, {1, 1, 1, 3}, KILN_DTYPE_INT32);
  cmd.out = lmemOperand(256, {1, 1, 1, 4}, KILN_DTYPE_INT8);
  cmd.kh = 1, cmd.kw = 2, cmd.stride_h = cmd.stride_w = cmd.dil_h = cmd.dil_w = cmd.groups = 1;
  cmd.flags = KILN_TIU_FLAG_HAS_BIAS;
  cmd.aux[2] = packZp(1, 0, 2);
  lmem.put(cmd.in0, std::vector<int8_t>{3, -1}); // centred: 2, -2
  lmem.put(cmd.in1, std::vector<int8_t>{2, 5});
  lmem.put(cmd.in2, std::vector<int32_t>{1, 1 << 30, 30}); // bias 1, scale 1
  ASSERT_EQ(run(cmd, lmem), nullptr);
  // [2*2, 2*5 - 2*2, -2*5, nothing] + 1 + 2; the last output gets only the bias.
  EXPECT_EQ(lmem.get<int8_t>(cmd.out), (std::vector<int8_t>{7, 9, -7, 3}));
}

kiln_tiu_cmd int8Eltwise(uint16_t subop, int32_t m0, int32_t m1, uint32_t shift) {
  const Shape s{1, 1, 1, 4};
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ELTWISE, subop);
  cmd.in0 = lmemOperand(0, s, KILN_DTYPE_INT8);
  cmd.in1 = lmemOperand(64, s, KILN_DTYPE_INT8);
  cmd.out = lmemOperand(128, s, KILN_DTYPE_INT8);
  cmd.aux[0] = uint32_t(m0);
  cmd.aux[1] = uint32_t(m1);
  cmd.aux[2] = packZp(2, -3, 1);
  cmd.aux[3] = shift;
  return cmd;
}

TEST(Int8Kernels, EltwiseAddSubMaxMinMul) {
  Lmem lmem;
  // a - 2 = [8, -22, 98, -130], b + 3 = [8, 10, 103, 130]; m0 = 3, m1 = 5, >> 2, + 1.
  kiln_tiu_cmd add = int8Eltwise(KILN_ELT_ADD, 3, 5, 2);
  lmem.put(add.in0, std::vector<int8_t>{10, -20, 100, -128});
  lmem.put(add.in1, std::vector<int8_t>{5, 7, 100, 127});
  auto result = [&](const kiln_tiu_cmd &cmd) {
    EXPECT_EQ(run(cmd, lmem), nullptr);
    return lmem.get<int8_t>(cmd.out);
  };
  // 24 + 40 = 64 -> 16; -66 + 50 = -16 -> -4; 809 -> 202.25; 260 -> 65.
  EXPECT_EQ(result(add), (std::vector<int8_t>{17, -3, 127, 66}));
  // -16 -> -4; -116 -> -29; -221 -> -55.25; -1040 -> -260.
  EXPECT_EQ(result(int8Eltwise(KILN_ELT_SUB, 3, 5, 2)), (std::vector<int8_t>{-3, -28, -54, -128}));
  // max(24, 40) = 40 -> 10; 50 -> 12.5 -> 13; 515 -> 128.75; 650 -> 162.5.
  EXPECT_EQ(result(int8Eltwise(KILN_ELT_MAX, 3, 5, 2)), (std::vector<int8_t>{11, 14, 127, 127}));
  // min: 24 -> 6; -66 -> -16.5 -> -17; 294 -> 73.5 -> 74; -390 -> -97.5 -> -98.
  EXPECT_EQ(result(int8Eltwise(KILN_ELT_MIN, 3, 5, 2)), (std::vector<int8_t>{7, -16, 75, -97}));
  // mul, m0 = 3, >> 4: 192 -> 12; -660 -> -41.25; 30282 and -50700 saturate.
  EXPECT_EQ(result(int8Eltwise(KILN_ELT_MUL, 3, 0, 4)), (std::vector<int8_t>{13, -40, 127, -128}));

  // A constant INT8 operand (its bits in addr's low byte) broadcasts.
  kiln_tiu_cmd with_const = int8Eltwise(KILN_ELT_ADD, 1, 1, 0);
  with_const.in1 = i8Const(-3); // b - zp_in1 = 0
  EXPECT_EQ(result(with_const), (std::vector<int8_t>{9, -21, 99, -128}));
  with_const.flags = KILN_TIU_FLAG_RELU; // max(out, 1)
  EXPECT_EQ(result(with_const), (std::vector<int8_t>{9, 1, 99, 1}));
}

TEST(Int8Kernels, PoolAvgCountsValidElements) {
  Lmem lmem;
  // in [[1, 2], [3, 4]], zp_in0 -1 (centred [[2, 3], [4, 5]]), 2x2 kernel,
  // every pad 1: out 3x3. m0 = 2, rshift 1 (scale 1), zp_out 10.
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_POOL, KILN_POOL_AVG);
  cmd.in0 = lmemOperand(0, {1, 1, 2, 2}, KILN_DTYPE_INT8);
  cmd.out = lmemOperand(64, {1, 1, 3, 3}, KILN_DTYPE_INT8);
  cmd.kh = cmd.kw = 2;
  cmd.stride_h = cmd.stride_w = cmd.dil_h = cmd.dil_w = 1;
  cmd.pad_top = cmd.pad_bottom = cmd.pad_left = cmd.pad_right = 1;
  cmd.aux[0] = 2;
  cmd.aux[2] = packZp(-1, 0, 10);
  cmd.aux[3] = 1;
  lmem.put(cmd.in0, std::vector<int8_t>{1, 2, 3, 4});
  ASSERT_EQ(run(cmd, lmem), nullptr);
  // Sums / valid counts: 2/1, 5/2, 3/1, 6/2, 14/4, 8/2, 4/1, 9/2, 5/1;
  // halves round away from zero: 2.5 -> 3, 3.5 -> 4, 4.5 -> 5.
  EXPECT_EQ(lmem.get<int8_t>(cmd.out), (std::vector<int8_t>{12, 13, 13, 13, 14, 14, 14, 15, 15}));

  // Always / 4: div_round(2 * sum, 4) = 1, 3, 2, 3, 7, 4, 2, 5, 3, then >> 1.
  cmd.flags = KILN_TIU_FLAG_COUNT_INCLUDE_PAD;
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(cmd.out), (std::vector<int8_t>{11, 12, 11, 12, 14, 12, 11, 13, 12}));

  // Sum: requant(sum) = sum (m0 2, >> 1) + 10.
  cmd.subop = KILN_POOL_SUM;
  cmd.flags = 0;
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(cmd.out), (std::vector<int8_t>{12, 15, 13, 16, 24, 18, 14, 19, 15}));

  // Max on q directly: pads never win, even over -128.
  cmd.subop = KILN_POOL_MAX;
  cmd.aux[0] = cmd.aux[3] = 0;
  lmem.put(cmd.in0, std::vector<int8_t>{-128, -128, -128, -100});
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(cmd.out),
            (std::vector<int8_t>{-128, -128, -128, -128, -100, -100, -128, -100, -100}));
}

TEST(Int8Kernels, ActiveReadsTheTable) {
  Lmem lmem;
  const Shape s{1, 70, 1, 2}; // channels on two lane groups; the table is on lane 0
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ACTIVE, KILN_ACT_SIGMOID);
  cmd.in0 = lmemOperand(0, s, KILN_DTYPE_INT8);
  cmd.in1 = lmemOperand(1024, {1, 1, 1, 256}, KILN_DTYPE_INT8);
  cmd.out = lmemOperand(2048, s, KILN_DTYPE_INT8);
  std::vector<int8_t> table(256), in(s.count());
  for (int i = 0; i < 256; ++i)
    table[size_t(i)] = int8_t(i ^ 0x5a);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = int8_t(int(i * 37) - 128);
  lmem.put(cmd.in1, table);
  lmem.put(cmd.in0, in);
  ASSERT_EQ(run(cmd, lmem), nullptr);
  std::vector<int8_t> got = lmem.get<int8_t>(cmd.out);
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(got[i], table[uint8_t(in[i])]) << i;

  cmd.subop = KILN_ACT_RELU; // every kind alike; RELU then max(out, zp_out)
  cmd.flags = KILN_TIU_FLAG_RELU;
  cmd.aux[2] = packZp(0, 0, 20);
  ASSERT_EQ(run(cmd, lmem), nullptr);
  got = lmem.get<int8_t>(cmd.out);
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(got[i], std::max<int8_t>(table[uint8_t(in[i])], 20)) << i;
}

TEST(Int8Kernels, ResizeNearestCopiesLinearRoundsAway) {
  Lmem lmem;
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_RESIZE,
                            uint16_t(KILN_RESIZE_LINEAR | KILN_COORD_ALIGN_CORNERS << 4));
  cmd.in0 = lmemOperand(0, {1, 1, 1, 2}, KILN_DTYPE_INT8);
  cmd.out = lmemOperand(64, {1, 1, 1, 5}, KILN_DTYPE_INT8);
  cmd.param[0] = 1.0f;
  cmd.param[1] = 2.5f;
  lmem.put(cmd.in0, std::vector<int8_t>{-10, 1});
  ASSERT_EQ(run(cmd, lmem), nullptr);
  // Align corners over 4 steps: -10, -7.25, -4.5, -1.75, 1.
  EXPECT_EQ(lmem.get<int8_t>(cmd.out), (std::vector<int8_t>{-10, -7, -5, -2, 1}));

  cmd.subop = KILN_RESIZE_NEAREST | KILN_COORD_ASYMMETRIC << 4 | KILN_NEAREST_FLOOR << 8;
  ASSERT_EQ(run(cmd, lmem), nullptr);
  EXPECT_EQ(lmem.get<int8_t>(cmd.out), (std::vector<int8_t>{-10, -10, -10, 1, 1}));
}

// ---- record checks ----------------------------------------------------------------------------

kiln_status check(const kiln_tiu_cmd &cmd) { return kiln_tiu_cmd_check(&cmd); }

template <class F>
kiln_tiu_cmd edited(kiln_tiu_cmd cmd, F f) {
  f(cmd);
  return cmd;
}

TEST(DtypeChecks, RejectsBadCombinations) {
  Lmem lmem;
  const kiln_tiu_cmd add = int8Eltwise(KILN_ELT_ADD, 3, 5, 2);
  ASSERT_EQ(check(add), KILN_OK);
  for (uint16_t subop : {KILN_ELT_DIV, KILN_ELT_POW, KILN_ELT_PRELU})
    EXPECT_EQ(check(edited(add, [&](auto &c) { c.subop = subop; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(add, [](auto &c) { c.aux[3] = 64; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(add, [](auto &c) { c.aux[2] |= 1u << 24; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(add, [](auto &c) { c.in1.dtype = KILN_DTYPE_UINT8; })),
            KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(add, [](auto &c) { c.out.dtype = KILN_DTYPE_F32; })),
            KILN_ERR_BAD_COMMAND);
  // MUL uses no m1.
  EXPECT_EQ(check(edited(add, [](auto &c) { c.subop = KILN_ELT_MUL; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(add, [](auto &c) { c.subop = KILN_ELT_MUL, c.aux[1] = 0; })), KILN_OK);
  // An INT8 constant keeps the bits above its byte 0.
  EXPECT_EQ(check(edited(add, [](auto &c) { c.in1 = i8Const(-3); })), KILN_OK);
  EXPECT_EQ(check(edited(add, [](auto &c) { c.in1 = i8Const(-3), c.in1.addr |= 0x100; })),
            KILN_ERR_BAD_COMMAND);
  // The device reports a malformed record instead of running it.
  EXPECT_STREQ(run(edited(add, [](auto &c) { c.subop = KILN_ELT_DIV; }), lmem),
               "malformed TIU record");

  // Mixed F16/F32 eltwise; F16 with quantization fields; other dtypes.
  kiln_tiu_cmd half = tiuCmd(1, 0, KILN_TIU_ELTWISE, KILN_ELT_DIV);
  half.in0 = half.in1 = half.out = lmemOperand(0, {1, 1, 1, 4}, KILN_DTYPE_F16);
  ASSERT_EQ(check(half), KILN_OK);
  EXPECT_EQ(check(edited(half, [](auto &c) { c.in1.dtype = KILN_DTYPE_F32; })),
            KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(half, [](auto &c) { c.in0.dtype = KILN_DTYPE_BF16; })),
            KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(half, [](auto &c) { c.aux[0] = 1; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(half, [](auto &c) { c.in1.flags |= KILN_OPND_CONST, c.in1.addr = 0x13c00; })),
            KILN_ERR_BAD_COMMAND); // f16 bits above the low half
  EXPECT_EQ(check(edited(half, [](auto &c) {
              c.in0.dtype = c.in1.dtype = c.out.dtype = KILN_DTYPE_INT16;
            })),
            KILN_ERR_BAD_COMMAND);

  // INT8 conv: the table is required, INT32 and [1, oc, 1, 3].
  Int8Conv conv(lmem, 0, {0, 1, 0, 0, 1, 0});
  ASSERT_EQ(check(conv.cmd), KILN_OK);
  EXPECT_EQ(check(edited(conv.cmd, [](auto &c) { c.flags = 0, c.in2 = {}; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(conv.cmd, [](auto &c) { c.in2.dtype = KILN_DTYPE_F32; })),
            KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(conv.cmd, [](auto &c) { c.in2.w = 1; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(conv.cmd, [](auto &c) { c.aux[0] = 1; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(conv.cmd, [](auto &c) { c.aux[2] |= 0x700; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(conv.cmd, [](auto &c) { c.in1.dtype = KILN_DTYPE_F16; })),
            KILN_ERR_BAD_COMMAND);

  // F16 conv: bias F16 or F32, nothing else.
  kiln_tiu_cmd fconv = conv.cmd;
  fconv.in0.dtype = fconv.in1.dtype = fconv.out.dtype = KILN_DTYPE_F16;
  fconv.in2 = lmemOperand(2048, {1, 2, 1, 1}, KILN_DTYPE_F32);
  fconv.aux[2] = 0;
  EXPECT_EQ(check(fconv), KILN_OK);
  EXPECT_EQ(check(edited(fconv, [](auto &c) { c.in2.dtype = KILN_DTYPE_F16; })), KILN_OK);
  EXPECT_EQ(check(edited(fconv, [](auto &c) { c.in2.dtype = KILN_DTYPE_BF16; })),
            KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(fconv, [](auto &c) { c.in2.dtype = KILN_DTYPE_INT32; })),
            KILN_ERR_BAD_COMMAND);

  // INT8 active needs its table; float active takes none.
  kiln_tiu_cmd act = tiuCmd(1, 0, KILN_TIU_ACTIVE, KILN_ACT_TANH);
  act.in0 = act.out = lmemOperand(0, {1, 1, 1, 4}, KILN_DTYPE_INT8);
  act.in1 = lmemOperand(64, {1, 1, 1, 256}, KILN_DTYPE_INT8);
  ASSERT_EQ(check(act), KILN_OK);
  EXPECT_EQ(check(edited(act, [](auto &c) { c.in1 = {}; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(act, [](auto &c) { c.in1.w = 255; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(act, [](auto &c) { c.in0.dtype = c.out.dtype = KILN_DTYPE_F32; })),
            KILN_ERR_BAD_COMMAND);

  // INT8 resize: aux is its slice, no RELU.
  kiln_tiu_cmd resize = tiuCmd(1, 0, KILN_TIU_RESIZE, KILN_RESIZE_NEAREST);
  resize.in0 = resize.out = lmemOperand(0, {1, 1, 2, 2}, KILN_DTYPE_INT8);
  resize.param[0] = resize.param[1] = 1.0f;
  ASSERT_EQ(check(resize), KILN_OK);
  EXPECT_EQ(check(edited(resize, [](auto &c) { c.flags = KILN_TIU_FLAG_RELU; })),
            KILN_ERR_BAD_COMMAND);

  // Pool: max/min use no multiplier; sum/avg no zp_in1.
  kiln_tiu_cmd pool = tiuCmd(1, 0, KILN_TIU_POOL, KILN_POOL_MAX);
  pool.in0 = pool.out = lmemOperand(0, {1, 1, 2, 2}, KILN_DTYPE_INT8);
  pool.kh = pool.kw = pool.stride_h = pool.stride_w = pool.dil_h = pool.dil_w = 1;
  pool.aux[2] = packZp(4, 0, 4);
  ASSERT_EQ(check(pool), KILN_OK);
  EXPECT_EQ(check(edited(pool, [](auto &c) { c.aux[0] = 1; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(pool, [](auto &c) { c.subop = KILN_POOL_AVG, c.aux[0] = 1; })), KILN_OK);
  EXPECT_EQ(check(edited(pool, [](auto &c) { c.subop = KILN_POOL_AVG, c.aux[2] |= 0x100; })),
            KILN_ERR_BAD_COMMAND);
}

TEST(DtypeChecks, CastCombinations) {
  const Shape s{1, 1, 1, 4};
  for (uint8_t from : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_INT8})
    for (uint8_t to : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_INT8}) {
      kiln_tiu_cmd cmd = castCmd(lmemOperand(0, s, from), lmemOperand(64, s, to));
      cmd.param[0] = 0.5f;
      EXPECT_EQ(check(cmd), KILN_OK) << int(from) << " " << int(to);
    }
  kiln_tiu_cmd quant = castCmd(lmemOperand(0, s), lmemOperand(64, s, KILN_DTYPE_INT8));
  quant.aux[2] = packZp(0, 0, -7);
  for (float bad : {0.0f, -1.0f, INFINITY, NAN})
    EXPECT_EQ(check(edited(quant, [&](auto &c) { c.param[0] = bad; })), KILN_ERR_BAD_COMMAND);
  quant.param[0] = 0.1f;
  ASSERT_EQ(check(quant), KILN_OK);
  EXPECT_EQ(check(edited(quant, [](auto &c) { c.aux[2] = packZp(1, 0, 0); })),
            KILN_ERR_BAD_COMMAND); // the float input has no zero point
  EXPECT_EQ(check(edited(quant, [](auto &c) { c.aux[0] = 5; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(quant, [](auto &c) { c.out.w = 5; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(quant, [](auto &c) { c.subop = 1; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(quant, [](auto &c) { c.in0.dtype = KILN_DTYPE_INT32; })),
            KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(quant, [](auto &c) { c.in1 = lmemOperand(0, {1, 1, 1, 4}); })),
            KILN_ERR_BAD_COMMAND);
  // A float-to-float cast has no quantization fields at all.
  kiln_tiu_cmd narrow = castCmd(lmemOperand(0, s), lmemOperand(64, s, KILN_DTYPE_F16));
  EXPECT_EQ(check(edited(narrow, [](auto &c) { c.aux[2] = packZp(0, 0, 1); })),
            KILN_ERR_BAD_COMMAND);
}

// Range checks measure each operand at its own dtype's size.
TEST(DtypeChecks, LmemRangeUsesOperandDtype) {
  const Shape wide{1, 1, 4, 50000}; // 200000 bytes as INT8, 400000 as F16
  kiln_tiu_cmd cmd = castCmd(lmemOperand(0, wide, KILN_DTYPE_INT8),
                             lmemOperand(0, wide, KILN_DTYPE_INT8));
  EXPECT_EQ(check(cmd), KILN_OK);
  cmd.out.dtype = KILN_DTYPE_F16;
  cmd.param[0] = 1.0f;
  EXPECT_EQ(check(cmd), KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(kiln_tiu_cmd_check_in_lane(&cmd, 400000), KILN_OK);
}

// ---- runTiuRecord on a roomier LMEM ----------------------------------------------------------

TEST(RunTiuRecord, LaneBiggerThanTheChips) {
  // [1, 65, 2, 35000] f32: a plane is 280000 bytes, more than a chip lane;
  // channel 64 is lane 0's second plane. The lane size is no power of two.
  const uint64_t lane = 600000;
  Lmem lmem(lane);
  const Shape s{1, 65, 2, 35000};
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  cmd.in0 = cmd.out = lmemOperand(0, s);
  cmd.in1 = kiln::test::constOperand(0.5f);
  std::vector<float> x(s.count());
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 1000);
  lmem.put(cmd.in0, x);
  EXPECT_STREQ(runTiuRecord(cmd, lmem.data(), KILN_LMEM_BYTES_PER_LANE),
               "TIU operand outside LMEM");
  ASSERT_EQ(runTiuRecord(cmd, lmem.data(), lane), nullptr);
  std::vector<float> got = lmem.get<float>(cmd.out);
  for (size_t i = 0; i < x.size(); i += 997)
    ASSERT_EQ(got[i], x[i] + 0.5f) << i;
  EXPECT_EQ(got.back(), x.back() + 0.5f);
  // Beyond even this lane: refused, nothing written.
  cmd.in0 = cmd.out = lmemOperand(0, {1, 129, 2, 35000});
  EXPECT_STREQ(runTiuRecord(cmd, lmem.data(), lane), "TIU operand outside LMEM");
}

// ---- the device: GDMA fills of narrow dtypes, F16 kernels, CAST's cost -------------------------

TEST(DeviceDtypes, FillNarrowThenCastAndAdd) {
  kiln::cmodel::Device dev(kiln::test::kDeviceDdrBytes);
  const Shape s{1, 66, 1, 3};
  kiln_gdma_cmd fill = kiln::test::gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, s, 0, 0);
  fill.flags = KILN_GDMA_FLAG_FILL;
  fill.dtype = KILN_DTYPE_F16;
  fill.src_addr = 0xdead3c00u; // the low half: f16 1.0
  kiln_gdma_cmd fill8 = kiln::test::gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, s, 0, 4096);
  fill8.flags = KILN_GDMA_FLAG_FILL;
  fill8.dtype = KILN_DTYPE_INT8;
  fill8.src_addr = 0xdeadbefbu; // the low byte: -5

  kiln_tiu_cmd add = tiuCmd(1, 2, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  add.in0 = add.in1 = add.out = lmemOperand(0, s, KILN_DTYPE_F16); // 1 + 1
  kiln_tiu_cmd deq = tiuCmd(2, 2, KILN_TIU_CAST);
  deq.in0 = lmemOperand(4096, s, KILN_DTYPE_INT8);
  deq.out = lmemOperand(8192, s, KILN_DTYPE_F16);
  deq.param[0] = 0.5f;
  deq.aux[2] = packZp(-1, 0, 0); // (-5 + 1) * 0.5 = -2
  ASSERT_EQ(kiln::test::runQueues(dev, {add, deq}, {fill, fill8}), KILN_OK) << dev.faultReason();

  Lmem view; // reads the device's LMEM through the same layout
  std::memcpy(view.data(), dev.lmem(0), uint64_t{KILN_NPU_NUM} * KILN_LMEM_BYTES_PER_LANE);
  for (uint16_t v : view.get<uint16_t>(add.out))
    ASSERT_EQ(v, f16(2.0f));
  for (uint16_t v : view.get<uint16_t>(deq.out))
    ASSERT_EQ(v, f16(-2.0f));
}

// Every dtype the checks accept now runs; what still faults on the device is
// a valid record it cannot run, such as a resize slice that claims input rows
// its window does not hold.
TEST(DeviceDtypes, ValidRecordTheDeviceCannotRunStillFaults) {
  kiln::cmodel::Device dev(kiln::test::kDeviceDdrBytes);
  const Shape s{1, 2, 4, 4};
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_RESIZE, KILN_RESIZE_NEAREST);
  cmd.in0 = lmemOperand(0, s, KILN_DTYPE_F16);
  cmd.out = lmemOperand(4096, s, KILN_DTYPE_F16);
  cmd.param[0] = cmd.param[1] = 1.0f;
  cmd.aux[0] = cmd.aux[1] = 2 * s.h; // full heights
  cmd.aux[2] = s.h;                  // output rows 4..7 read input rows 4..7,
  cmd.aux[3] = 0;                    // but the window holds rows 0..3
  ASSERT_EQ(check(cmd), KILN_OK);
  EXPECT_EQ(kiln::test::runQueues(dev, {cmd}, {}), KILN_ERR_DEVICE_FAULT);
  EXPECT_NE(dev.faultReason().find("outside its window"), std::string::npos) << dev.faultReason();
}

TEST(DtypeCost, CastRunsAtTheWiderDtype) {
  // out [1, 64, 1, 64]: one plane; EU elements 16 (4 bytes), 32 (2), 64 (1).
  const Shape s{1, 64, 1, 64};
  kiln_tiu_cmd cmd = castCmd(lmemOperand(0, s), lmemOperand(0, s, KILN_DTYPE_INT8));
  EXPECT_EQ(kiln_tiu_cycles(&cmd), 4u + KILN_TIU_CMD_OVERHEAD);
  std::swap(cmd.in0.dtype, cmd.out.dtype); // INT8 -> F32
  EXPECT_EQ(kiln_tiu_cycles(&cmd), 4u + KILN_TIU_CMD_OVERHEAD);
  cmd.out.dtype = KILN_DTYPE_INT8;
  EXPECT_EQ(kiln_tiu_cycles(&cmd), 1u + KILN_TIU_CMD_OVERHEAD);
  cmd.out.dtype = KILN_DTYPE_BF16;
  EXPECT_EQ(kiln_tiu_cycles(&cmd), 2u + KILN_TIU_CMD_OVERHEAD);
}

// Valid records of every new kind with a few random bytes changed either run
// or are refused; never crash. The LMEM holds random bytes (table shifts too).
TEST(DtypeChecks, MutatedRecordsNeverCrash) {
  Lmem lmem;
  std::vector<kiln_tiu_cmd> seeds;
  seeds.push_back(Int8Conv(lmem, 1, {1, 1 << 30, 31, 2, 1 << 30, 30}).cmd);
  Int8Conv deconv(lmem, 0, {1, 1 << 30, 31, 2, 1 << 30, 30});
  deconv.cmd.op = KILN_TIU_DECONV;
  seeds.push_back(deconv.cmd);
  for (uint16_t subop : {KILN_ELT_ADD, KILN_ELT_MUL, KILN_ELT_MAX})
    seeds.push_back(int8Eltwise(subop, 3, subop == KILN_ELT_MUL ? 0 : 5, 2));
  kiln_tiu_cmd act = tiuCmd(1, 0, KILN_TIU_ACTIVE, KILN_ACT_EXP);
  act.in0 = act.out = lmemOperand(0, {1, 3, 2, 2}, KILN_DTYPE_INT8);
  act.in1 = lmemOperand(1024, {1, 1, 1, 256}, KILN_DTYPE_INT8);
  seeds.push_back(act);
  kiln_tiu_cmd cast = castCmd(lmemOperand(0, {1, 3, 2, 2}, KILN_DTYPE_F16),
                              lmemOperand(512, {1, 3, 2, 2}, KILN_DTYPE_INT8));
  cast.param[0] = 0.5f;
  seeds.push_back(cast);
  kiln_tiu_cmd pool = tiuCmd(1, 0, KILN_TIU_POOL, KILN_POOL_AVG);
  pool.in0 = lmemOperand(0, {1, 2, 3, 3}, KILN_DTYPE_INT8);
  pool.out = lmemOperand(512, {1, 2, 2, 2}, KILN_DTYPE_INT8);
  pool.kh = pool.kw = 2, pool.stride_h = pool.stride_w = pool.dil_h = pool.dil_w = 1;
  pool.aux[0] = 7, pool.aux[3] = 3;
  seeds.push_back(pool);
  for (const kiln_tiu_cmd &seed : seeds)
    ASSERT_EQ(check(seed), KILN_OK) << seed.op;

  std::mt19937 rng(99);
  for (size_t i = 0; i < 64u * KILN_LMEM_BYTES_PER_LANE; i += 4096)
    lmem.data()[i + rng() % 4096] = uint8_t(rng()); // sparse noise is enough for the reads
  int ran = 0;
  for (int round = 0; round < 20000; ++round) {
    kiln_tiu_cmd cmd = seeds[rng() % seeds.size()];
    auto *raw = reinterpret_cast<uint8_t *>(&cmd);
    for (uint32_t k = 1 + rng() % 3; k > 0; --k)
      raw[rng() % sizeof cmd] = uint8_t(rng() % 2 ? rng() : rng() % 8); // small values stay plausible
    ran += run(cmd, lmem) == nullptr;
  }
  RecordProperty("ran", ran);
  EXPECT_GT(ran, 1000);
}

} // namespace
