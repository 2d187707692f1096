// The cmodel's fast conv and deconv kernels (tiu.cpp, "fast conv and
// deconv") against the reference loop nests on random records: odd channel
// counts, groups and depthwise, strides, dilations, asymmetric padding,
// bias and ReLU, in F32, F16, BF16 and INT8. Every byte of LMEM must agree,
// and the fast kernels must give the same bits with 1 and with 3 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cmodel_harness.h"
#include "kiln/abi/cmd_check.h"
#include "kiln/abi/quant.h"
#include "kiln/chip/tiu_kernels.h"

namespace kiln::test {
namespace {

using chip::Kernels;
using chip::runTiuRecord;

constexpr uint64_t kLane = 64 * 1024;

struct Case {
  kiln_tiu_cmd cmd;
  std::string what;
};

uint64_t laneBytes(const kiln_tiu_operand &o) {
  return uint64_t{o.n} * ((o.c + KILN_NPU_NUM - 1) / KILN_NPU_NUM) *
         kiln_lmem_plane_stride(o.h, o.w, kiln_dtype_bytes(o.dtype));
}

// A random window: kernel (kw up to max_kw), strides, dilations, and the top
// and left pads.
void randomWindow(std::mt19937 &rng, uint32_t max_kw, kiln_tiu_cmd &cmd) {
  auto pick = [&](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  cmd.kh = uint16_t(pick(1, 4));
  cmd.kw = uint16_t(pick(1, max_kw));
  cmd.stride_h = uint16_t(pick(1, 3));
  cmd.stride_w = uint16_t(pick(1, 3));
  cmd.dil_h = uint16_t(pick(1, 2));
  cmd.dil_w = uint16_t(pick(1, 2));
  cmd.pad_top = uint16_t(pick(0, cmd.kh - 1));
  cmd.pad_left = uint16_t(pick(0, cmd.kw - 1));
}

// A random conv or deconv record whose operands fit one lane of kLane.
// pointwise: 1x1, stride 1, no padding, at least 4 output channels per group.
Case randomCase(std::mt19937 &rng, kiln_tiu_op op, uint8_t dtype, bool pointwise = false) {
  auto pick = [&](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  for (;;) {
    kiln_tiu_cmd cmd = tiuCmd(1, 0, op);
    const uint32_t groups = pick(0, 3) == 0 ? pick(2, 3) : 1;
    const bool depthwise = pick(0, 4) == 0;
    const uint32_t icg = depthwise ? 1 : pick(1, 12), ocg = depthwise ? 1 : pick(1, 20);
    const uint32_t g = depthwise ? pick(1, 70) : groups;
    const uint32_t n = pick(1, 2), ih = pick(1, 11), iw = pick(1, 13);
    randomWindow(rng, 5, cmd);
    cmd.groups = uint16_t(g);
    if (pointwise) {
      if (ocg < 4)
        continue;
      cmd.kh = cmd.kw = cmd.stride_h = cmd.stride_w = 1;
      cmd.pad_top = cmd.pad_left = 0;
    }
    uint32_t oh, ow;
    if (op == KILN_TIU_CONV) {
      cmd.pad_bottom = uint16_t(pointwise ? 0 : pick(0, cmd.kh - 1));
      cmd.pad_right = uint16_t(pointwise ? 0 : pick(0, cmd.kw - 1));
      int64_t sh = int64_t{ih} + cmd.pad_top + cmd.pad_bottom - (cmd.dil_h * (cmd.kh - 1) + 1);
      int64_t sw = int64_t{iw} + cmd.pad_left + cmd.pad_right - (cmd.dil_w * (cmd.kw - 1) + 1);
      if (sh < 0 || sw < 0)
        continue;
      oh = uint32_t(sh / cmd.stride_h + 1);
      ow = uint32_t(sw / cmd.stride_w + 1);
    } else {
      oh = (ih - 1) * cmd.stride_h + cmd.dil_h * (cmd.kh - 1) + 1 - cmd.pad_top + pick(0, 1);
      ow = (iw - 1) * cmd.stride_w + cmd.dil_w * (cmd.kw - 1) + 1 - cmd.pad_left + pick(0, 1);
    }
    uint8_t bias_dtype = pick(0, 1) ? uint8_t(KILN_DTYPE_F32) : dtype;
    if (dtype == KILN_DTYPE_INT8)
      bias_dtype = KILN_DTYPE_INT32;
    cmd.in0 = lmemOperand(0, {n, icg * g, ih, iw}, dtype);
    cmd.in1 = lmemOperand(0, {1, ocg * g, icg, uint32_t(cmd.kh) * cmd.kw}, dtype);
    cmd.out = lmemOperand(0, {n, ocg * g, oh, ow}, dtype);
    const bool bias = dtype == KILN_DTYPE_INT8 || pick(0, 1);
    if (bias) {
      cmd.flags |= KILN_TIU_FLAG_HAS_BIAS;
      cmd.in2 = lmemOperand(0, {1, ocg * g, 1, dtype == KILN_DTYPE_INT8 ? 3u : 1u}, bias_dtype);
    }
    if (pick(0, 1))
      cmd.flags |= KILN_TIU_FLAG_RELU;
    if (dtype == KILN_DTYPE_INT8)
      cmd.aux[2] = kiln_pack_zero_points(int32_t(pick(0, 20)) - 10, 0, int32_t(pick(0, 20)) - 10);
    // Operands one after another in each lane.
    uint64_t at = 0;
    for (kiln_tiu_operand *o : {&cmd.in0, &cmd.in1, &cmd.in2, &cmd.out}) {
      if (!(o->flags & KILN_OPND_USED))
        continue;
      o->addr = uint32_t(at);
      at += (laneBytes(*o) + 63) / 64 * 64;
    }
    if (at > kLane || kiln_tiu_cmd_check_in_lane(&cmd, kLane) != KILN_OK)
      continue;
    Case c{cmd, std::string(op == KILN_TIU_CONV ? "conv" : "deconv") + " dtype " +
                    std::to_string(dtype) + " n" + std::to_string(n) + " g" + std::to_string(g) +
                    " icg" + std::to_string(icg) + " ocg" + std::to_string(ocg) + " in " +
                    std::to_string(ih) + "x" + std::to_string(iw) + " k " +
                    std::to_string(cmd.kh) + "x" + std::to_string(cmd.kw) + " s " +
                    std::to_string(cmd.stride_h) + "," + std::to_string(cmd.stride_w) + " d " +
                    std::to_string(cmd.dil_h) + "," + std::to_string(cmd.dil_w)};
    return c;
  }
}

// Element bits for a dtype: floats from a normal distribution with exact
// zeros and negative zeros mixed in; INT8 any byte; INT32 requant tables
// with shifts the kernels accept.
void fillOperand(std::mt19937 &rng, std::vector<uint8_t> &lmem, const kiln_tiu_operand &o,
                 bool table) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const uint32_t size = kiln_dtype_bytes(o.dtype);
  const uint64_t groups = (o.c + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
  const uint64_t plane = kiln_lmem_plane_stride(o.h, o.w, size);
  for (uint32_t n = 0; n < o.n; ++n)
    for (uint32_t c = 0; c < o.c; ++c)
      for (uint32_t h = 0; h < o.h; ++h)
        for (uint32_t w = 0; w < o.w; ++w) {
          uint8_t *p = lmem.data() + c % KILN_NPU_NUM * kLane + o.addr +
                       (n * groups + c / KILN_NPU_NUM) * plane + (uint64_t{h} * o.w + w) * size;
          float v = normal(rng);
          uint32_t r = rng();
          if (r % 11 == 0)
            v = 0.0f;
          else if (r % 13 == 0)
            v = -0.0f;
          switch (o.dtype) {
          case KILN_DTYPE_F32: std::memcpy(p, &v, 4); break;
          case KILN_DTYPE_F16: { uint16_t b = kiln_f32_to_f16(v); std::memcpy(p, &b, 2); break; }
          case KILN_DTYPE_BF16: { uint16_t b = kiln_f32_to_bf16(v); std::memcpy(p, &b, 2); break; }
          case KILN_DTYPE_INT8: *p = uint8_t(r >> 8); break;
          default: { // INT32: a requant table row (bias, multiplier, shift) or a value
            int32_t t = table ? (w == 0 ? int32_t(r % 20001) - 10000
                                 : w == 1 ? int32_t(r % 30000) + 1 : int32_t(r % 20) + 8)
                              : int32_t(r);
            std::memcpy(p, &t, 4);
          }
          }
        }
}

std::vector<uint8_t> randomLmem(std::mt19937 &rng, const kiln_tiu_cmd &cmd) {
  std::vector<uint8_t> lmem(KILN_NPU_NUM * kLane);
  fillOperand(rng, lmem, cmd.in0, false);
  fillOperand(rng, lmem, cmd.in1, false);
  if (cmd.flags & KILN_TIU_FLAG_HAS_BIAS)
    fillOperand(rng, lmem, cmd.in2, cmd.in0.dtype == KILN_DTYPE_INT8);
  return lmem;
}

void expectSameBits(kiln_tiu_op op, uint8_t dtype, int cases, uint32_t seed,
                    bool pointwise = false) {
  std::mt19937 rng(seed);
  int blocked = 0;
  for (int i = 0; i < cases; ++i) {
    Case c = randomCase(rng, op, dtype, pointwise);
    blocked += c.cmd.out.c / c.cmd.groups >= (pointwise ? 4 : 8);
    std::vector<uint8_t> ref = randomLmem(rng, c.cmd), fast = ref;
    ASSERT_EQ(runTiuRecord(c.cmd, ref.data(), kLane, Kernels::Reference), nullptr) << c.what;
    ASSERT_EQ(runTiuRecord(c.cmd, fast.data(), kLane, Kernels::Fast), nullptr) << c.what;
    ASSERT_TRUE(ref == fast) << "case " << i << ": " << c.what;
  }
  // The blocked (channels or pixels in a vector) forms ran, not only rows.
  EXPECT_GT(blocked, cases / 10);
}

TEST(FastKernels, ConvF32MatchesReference) { expectSameBits(KILN_TIU_CONV, KILN_DTYPE_F32, 150, 1); }
TEST(FastKernels, ConvF16MatchesReference) { expectSameBits(KILN_TIU_CONV, KILN_DTYPE_F16, 100, 2); }
TEST(FastKernels, ConvBF16MatchesReference) { expectSameBits(KILN_TIU_CONV, KILN_DTYPE_BF16, 100, 3); }
TEST(FastKernels, ConvInt8MatchesReference) { expectSameBits(KILN_TIU_CONV, KILN_DTYPE_INT8, 150, 4); }
TEST(FastKernels, PointwiseConvMatchesReference) {
  expectSameBits(KILN_TIU_CONV, KILN_DTYPE_F32, 60, 12, true);
  expectSameBits(KILN_TIU_CONV, KILN_DTYPE_F16, 40, 13, true);
  expectSameBits(KILN_TIU_CONV, KILN_DTYPE_INT8, 40, 14, true);
}
TEST(FastKernels, DeconvF32MatchesReference) { expectSameBits(KILN_TIU_DECONV, KILN_DTYPE_F32, 150, 5); }
TEST(FastKernels, DeconvF16MatchesReference) { expectSameBits(KILN_TIU_DECONV, KILN_DTYPE_F16, 100, 6); }
TEST(FastKernels, DeconvInt8MatchesReference) { expectSameBits(KILN_TIU_DECONV, KILN_DTYPE_INT8, 100, 7); }

// Single-pixel pointwise convs (a classifier: a matrix times a vector) read
// the input planes in place, filters transposed in 16 x 16 tiles and the rest.
TEST(FastKernels, SinglePixelConvMatchesReference) {
  std::mt19937 rng(22);
  for (uint32_t ic : {1u, 15u, 16u, 37u, 130u})
    for (uint32_t oc : {8u, 17u, 32u, 45u, 70u})
      for (uint8_t dtype : {uint8_t(KILN_DTYPE_F32), uint8_t(KILN_DTYPE_F16)}) {
        kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_CONV);
        cmd.kh = cmd.kw = cmd.stride_h = cmd.stride_w = cmd.dil_h = cmd.dil_w = cmd.groups = 1;
        cmd.in0 = lmemOperand(0, {1, ic, 1, 1}, dtype);
        cmd.in1 = lmemOperand(64, {1, oc, ic, 1}, dtype);
        cmd.out = lmemOperand(uint32_t(64 + (laneBytes(cmd.in1) + 63) / 64 * 64), {1, oc, 1, 1}, dtype);
        if (oc % 2) {
          cmd.flags |= KILN_TIU_FLAG_HAS_BIAS | KILN_TIU_FLAG_RELU;
          cmd.in2 = lmemOperand(cmd.out.addr + 64, {1, oc, 1, 1}, dtype);
        }
        ASSERT_EQ(kiln_tiu_cmd_check_in_lane(&cmd, kLane), KILN_OK);
        std::vector<uint8_t> ref = randomLmem(rng, cmd), fast = ref;
        ASSERT_EQ(runTiuRecord(cmd, ref.data(), kLane, Kernels::Reference), nullptr);
        ASSERT_EQ(runTiuRecord(cmd, fast.data(), kLane, Kernels::Fast), nullptr);
        ASSERT_TRUE(ref == fast) << "ic " << ic << " oc " << oc << " dtype " << int(dtype);
      }
}

// Float pools (window records, tiu.cpp) against the reference on random
// records of every kind, with infinities (and NaNs for max and min) among the
// inputs (padding must still count as skipped taps), COUNT_INCLUDE_PAD and
// ReLU.
TEST(FastKernels, PoolMatchesReference) {
  std::mt19937 rng(21);
  auto pick = [&](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  const float specials[] = {std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  for (int i = 0; i < 200;) {
    const uint8_t dtype = i % 3 == 2 ? uint8_t(KILN_DTYPE_F16) : uint8_t(KILN_DTYPE_F32);
    kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_POOL, uint16_t(pick(0, KILN_POOL_END - 1)));
    randomWindow(rng, 4, cmd);
    cmd.pad_bottom = uint16_t(pick(0, cmd.kh - 1));
    cmd.pad_right = uint16_t(pick(0, cmd.kw - 1));
    if (pick(0, 1))
      cmd.flags |= KILN_TIU_FLAG_RELU;
    if (pick(0, 1))
      cmd.flags |= KILN_TIU_FLAG_COUNT_INCLUDE_PAD;
    const uint32_t n = pick(1, 2), c = pick(1, 70), ih = pick(1, 12), iw = pick(1, 40);
    const int64_t sh = int64_t{ih} + cmd.pad_top + cmd.pad_bottom - (cmd.dil_h * (cmd.kh - 1) + 1);
    const int64_t sw = int64_t{iw} + cmd.pad_left + cmd.pad_right - (cmd.dil_w * (cmd.kw - 1) + 1);
    if (sh < 0 || sw < 0)
      continue;
    cmd.in0 = lmemOperand(0, {n, c, ih, iw}, dtype);
    cmd.out = lmemOperand(uint32_t((laneBytes(cmd.in0) + 63) / 64 * 64),
                          {n, c, uint32_t(sh / cmd.stride_h + 1), uint32_t(sw / cmd.stride_w + 1)},
                          dtype);
    if (kiln_tiu_cmd_check_in_lane(&cmd, kLane) != KILN_OK)
      continue;
    std::vector<uint8_t> ref(KILN_NPU_NUM * kLane);
    fillOperand(rng, ref, cmd.in0, false);
    // Some specials among the first lane's values. No NaN inputs to sums:
    // which of two NaNs an add returns is the compiler's choice (it may swap
    // the operands), in the reference loop as in the fast one.
    const uint32_t kinds = cmd.subop == KILN_POOL_MAX || cmd.subop == KILN_POOL_MIN ? 3 : 2;
    if (dtype == KILN_DTYPE_F32)
      for (uint64_t at = 0; at + 4 <= laneBytes(cmd.in0); at += 4)
        if (rng() % 17 == 0)
          std::memcpy(&ref[at], &specials[rng() % kinds], 4);
    std::vector<uint8_t> fast = ref;
    ASSERT_EQ(runTiuRecord(cmd, ref.data(), kLane, Kernels::Reference), nullptr);
    ASSERT_EQ(runTiuRecord(cmd, fast.data(), kLane, Kernels::Fast), nullptr);
    ASSERT_TRUE(ref == fast) << "case " << i << ": kind " << cmd.subop << " dtype "
                             << int(dtype) << " k " << cmd.kh << "x" << cmd.kw << " s "
                             << cmd.stride_h << "," << cmd.stride_w;
    ++i;
  }
}

// A non-finite weight reaches a padding tap: 0 * inf would be NaN, so the
// blocked form (which multiplies padding zeros) must not run.
TEST(FastKernels, InfiniteWeightKeepsPaddingSkipped) {
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_CONV);
  cmd.kh = cmd.kw = 3;
  cmd.stride_h = cmd.stride_w = cmd.dil_h = cmd.dil_w = 1;
  cmd.pad_top = cmd.pad_bottom = cmd.pad_left = cmd.pad_right = 1;
  cmd.groups = 1;
  cmd.in0 = lmemOperand(0, {1, 2, 4, 4});
  cmd.in1 = lmemOperand(1024, {1, 8, 2, 9});
  cmd.out = lmemOperand(2048, {1, 8, 4, 4});
  std::mt19937 rng(9);
  std::vector<uint8_t> ref = randomLmem(rng, cmd);
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(ref.data() + cmd.in1.addr, &inf, 4); // oc 0, ic 0, tap (0, 0)
  std::vector<uint8_t> fast = ref;
  ASSERT_EQ(runTiuRecord(cmd, ref.data(), kLane, Kernels::Reference), nullptr);
  ASSERT_EQ(runTiuRecord(cmd, fast.data(), kLane, Kernels::Fast), nullptr);
  EXPECT_TRUE(ref == fast);
  float corner;
  std::memcpy(&corner, ref.data() + cmd.out.addr, 4); // (0, 0): its tap (0, 0) is padding
  EXPECT_FALSE(std::isnan(corner));
}

// The F16 stores (F16C where the host has it) against kiln_f32_to_f16: a
// spread of all 2^32 bit patterns and the edges (overflow to Inf at 65520,
// subnormals, NaN payloads), in rows of odd lengths.
TEST(FastKernels, F16RowMatchesSoftwareConversion) {
  std::vector<uint32_t> patterns = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                    0x7fc00000u, 0x7f800001u, 0xffbfffffu, 0x477fe000u,
                                    0x477fefffu, 0x477ff000u, 0x33800000u, 0x33000000u,
                                    0x33000001u, 0x387fc000u, 0x00000001u};
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099)
    patterns.push_back(uint32_t(b));
  std::vector<float> values(patterns.size());
  std::memcpy(values.data(), patterns.data(), patterns.size() * 4);
  std::vector<uint8_t> out(values.size() * 2);
  for (size_t at = 0, len = 1; at < values.size(); at += len, len = len % 37 + 1)
    chip::f32ToF16Row(values.data() + at, uint32_t(std::min(len, values.size() - at)),
                        out.data() + 2 * at);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t got;
    std::memcpy(&got, out.data() + 2 * i, 2);
    ASSERT_EQ(got, kiln_f32_to_f16(values[i])) << std::hex << patterns[i];
  }
}

// F32 eltwise and active records run plane by plane on LMEM in place when
// the output is an input or lies apart from the inputs; an unaligned copy of
// the same record (rows through buffers) must give the same values, with the
// output in place, apart, and overlapping an input by part of a plane.
TEST(FastKernels, PlanewiseEltwiseAndActiveMatchRows) {
  std::mt19937 rng(21);
  const Shape shape{2, 70, 5, 7};
  const uint64_t bytes = laneBytes(lmemOperand(0, shape));
  for (int variant = 0; variant < 6; ++variant) {
    const bool active = variant % 2;
    kiln_tiu_cmd cmd = tiuCmd(1, 0, active ? KILN_TIU_ACTIVE : KILN_TIU_ELTWISE,
                              active ? uint16_t(KILN_ACT_CLIP) : uint16_t(KILN_ELT_ADD));
    cmd.param[0] = -0.5f;
    cmd.param[1] = 0.5f;
    cmd.flags |= KILN_TIU_FLAG_RELU;
    const uint32_t b_at = uint32_t(bytes + 64), out_at[3] = {0, uint32_t(2 * bytes + 128), 64};
    cmd.in0 = lmemOperand(0, shape);
    if (!active)
      cmd.in1 = lmemOperand(b_at, shape);
    cmd.out = lmemOperand(out_at[variant / 2], shape);
    std::vector<uint8_t> aligned = randomLmem(rng, cmd);
    if (!active)
      fillOperand(rng, aligned, cmd.in1, false);
    // The same bytes 4 bytes later, with every address made odd by 2.
    kiln_tiu_cmd shifted = cmd;
    std::vector<uint8_t> rows(aligned.size());
    for (uint32_t lane = 0; lane < KILN_NPU_NUM; ++lane)
      std::memcpy(rows.data() + lane * kLane + 2, aligned.data() + lane * kLane, kLane - 2);
    for (kiln_tiu_operand *o : {&shifted.in0, &shifted.in1, &shifted.out})
      if (o->flags & KILN_OPND_USED)
        o->addr += 2;
    ASSERT_EQ(runTiuRecord(cmd, aligned.data(), kLane), nullptr);
    ASSERT_EQ(runTiuRecord(shifted, rows.data(), kLane), nullptr);
    for (uint32_t lane = 0; lane < KILN_NPU_NUM; ++lane)
      ASSERT_EQ(std::memcmp(rows.data() + lane * kLane + 2, aligned.data() + lane * kLane,
                            kLane - 2),
                0)
          << "variant " << variant << " lane " << lane;
  }
}

TEST(FastKernels, ThreadCountDoesNotChangeBits) {
  std::mt19937 rng(11);
  for (int i = 0; i < 40; ++i) {
    Case c = randomCase(rng, i % 2 ? KILN_TIU_DECONV : KILN_TIU_CONV,
                        i % 4 < 2 ? KILN_DTYPE_F32 : KILN_DTYPE_F16);
    std::vector<uint8_t> one = randomLmem(rng, c.cmd), three = one;
    chip::setCmodelThreads(1);
    ASSERT_EQ(runTiuRecord(c.cmd, one.data(), kLane), nullptr);
    chip::setCmodelThreads(3);
    ASSERT_EQ(runTiuRecord(c.cmd, three.data(), kLane), nullptr);
    ASSERT_TRUE(one == three) << c.what;
  }
  chip::setCmodelThreads(chip::cmodelThreads());
}

} // namespace
} // namespace kiln::test
