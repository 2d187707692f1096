// The cmodel's TIU and GDMA engines against naive NCHW references, and its
// faults on bad records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "cmodel_harness.h"
#include "kiln/abi/cmd_check.h"
#include "kiln/abi/regs.h"

namespace kiln::test {
namespace {

using cmodel::Device;

void expectClose(const std::vector<float> &got, const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::fabs(want[i]))) << "element " << i;
}

size_t idx(const Shape &s, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
  return ((size_t{n} * s.c + c) * s.h + h) * s.w + w;
}

// ---- conv --------------------------------------------------------------------

struct ConvCase {
  Shape in;
  uint32_t oc, groups, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr;
  bool bias, relu;
};

uint32_t windowOut(uint32_t in, uint32_t p0, uint32_t p1, uint32_t k, uint32_t s, uint32_t d) {
  return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

Shape convOut(const ConvCase &p) {
  return {p.in.n, p.oc, windowOut(p.in.h, p.pt, p.pb, p.kh, p.sh, p.dh),
          windowOut(p.in.w, p.pl, p.pr, p.kw, p.sw, p.dw)};
}

// weight is [oc][ic/groups][kh][kw].
std::vector<float> referenceConv(const ConvCase &p, const std::vector<float> &in,
                                 const std::vector<float> &weight,
                                 const std::vector<float> &bias) {
  Shape os = convOut(p);
  uint32_t icg = p.in.c / p.groups, ocg = p.oc / p.groups;
  std::vector<float> out(os.count());
  for (uint32_t n = 0; n < os.n; ++n)
    for (uint32_t o = 0; o < os.c; ++o)
      for (uint32_t y = 0; y < os.h; ++y)
        for (uint32_t x = 0; x < os.w; ++x) {
          float acc = 0;
          for (uint32_t i = 0; i < icg; ++i)
            for (uint32_t ky = 0; ky < p.kh; ++ky)
              for (uint32_t kx = 0; kx < p.kw; ++kx) {
                int iy = int(y * p.sh + ky * p.dh) - int(p.pt);
                int ix = int(x * p.sw + kx * p.dw) - int(p.pl);
                if (iy < 0 || ix < 0 || iy >= int(p.in.h) || ix >= int(p.in.w))
                  continue;
                acc += in[idx(p.in, n, o / ocg * icg + i, iy, ix)] *
                       weight[((size_t{o} * icg + i) * p.kh + ky) * p.kw + kx];
              }
          if (p.bias)
            acc += bias[o];
          out[idx(os, n, o, y, x)] = p.relu ? std::max(acc, 0.0f) : acc;
        }
  return out;
}

class ConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTest, MatchesNaiveReference) {
  const ConvCase &p = GetParam();
  Device dev(kDeviceDdrBytes);
  Shape os = convOut(p);
  Shape ws{1, p.oc, p.in.c / p.groups, p.kh * p.kw};
  Shape bs{1, p.oc, 1, 1};
  const uint32_t in_addr = 0, w_addr = 64 << 10, b_addr = 128 << 10, out_addr = 160 << 10;
  auto in = randomFloats(p.in.count(), 1);
  auto weight = randomFloats(ws.count(), 2);
  auto bias = randomFloats(bs.count(), 3);
  putLmem(dev, in_addr, p.in, in);
  putLmem(dev, w_addr, ws, weight);
  putLmem(dev, b_addr, bs, bias);

  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_CONV);
  cmd.out = lmemOperand(out_addr, os);
  cmd.in0 = lmemOperand(in_addr, p.in);
  cmd.in1 = lmemOperand(w_addr, ws);
  if (p.bias) {
    cmd.in2 = lmemOperand(b_addr, bs);
    cmd.flags |= KILN_TIU_FLAG_HAS_BIAS;
  }
  if (p.relu)
    cmd.flags |= KILN_TIU_FLAG_RELU;
  cmd.kh = uint16_t(p.kh), cmd.kw = uint16_t(p.kw);
  cmd.stride_h = uint16_t(p.sh), cmd.stride_w = uint16_t(p.sw);
  cmd.dil_h = uint16_t(p.dh), cmd.dil_w = uint16_t(p.dw);
  cmd.pad_top = uint16_t(p.pt), cmd.pad_bottom = uint16_t(p.pb);
  cmd.pad_left = uint16_t(p.pl), cmd.pad_right = uint16_t(p.pr);
  cmd.groups = uint16_t(p.groups);

  ASSERT_EQ(runQueues(dev, {cmd}, {}), KILN_OK) << dev.faultReason();
  expectClose(getLmem(dev, out_addr, os), referenceConv(p, in, weight, bias));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvTest,
    ::testing::Values(
        // grouped, strided, dilated, asymmetric pads, bias and relu
        ConvCase{{2, 6, 9, 11}, 4, 2, 3, 2, 2, 1, 2, 1, 1, 2, 0, 1, true, true},
        // depthwise across the lane wrap (c >= 64 uses a second plane)
        ConvCase{{1, 70, 5, 6}, 70, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false},
        // pointwise with more output channels than lanes
        ConvCase{{1, 3, 4, 4}, 66, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, true, false},
        // dense 3x3, stride 2 in both directions
        ConvCase{{1, 5, 8, 7}, 8, 1, 3, 3, 2, 2, 1, 1, 1, 0, 1, 0, false, true}));

// ---- pool --------------------------------------------------------------------

struct PoolCase {
  kiln_pool_kind kind;
  bool include_pad;
  uint32_t kh, kw, sh, sw, pt, pb, pl, pr;
};

std::vector<float> referencePool(const PoolCase &p, const Shape &is, const Shape &os,
                                 const std::vector<float> &in) {
  std::vector<float> out(os.count());
  for (uint32_t n = 0; n < os.n; ++n)
    for (uint32_t c = 0; c < os.c; ++c)
      for (uint32_t y = 0; y < os.h; ++y)
        for (uint32_t x = 0; x < os.w; ++x) {
          float best = -std::numeric_limits<float>::infinity(), sum = 0;
          int count = 0;
          for (uint32_t ky = 0; ky < p.kh; ++ky)
            for (uint32_t kx = 0; kx < p.kw; ++kx) {
              int iy = int(y * p.sh + ky) - int(p.pt), ix = int(x * p.sw + kx) - int(p.pl);
              if (iy < 0 || ix < 0 || iy >= int(is.h) || ix >= int(is.w))
                continue;
              float v = in[idx(is, n, c, iy, ix)];
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          float avg = sum / float(p.include_pad ? p.kh * p.kw : count);
          out[idx(os, n, c, y, x)] = p.kind == KILN_POOL_MAX ? best : avg;
        }
  return out;
}

class PoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolTest, MatchesNaiveReference) {
  const PoolCase &p = GetParam();
  Device dev(kDeviceDdrBytes);
  Shape is{2, 66, 7, 8};
  Shape os{is.n, is.c, windowOut(is.h, p.pt, p.pb, p.kh, p.sh, 1),
           windowOut(is.w, p.pl, p.pr, p.kw, p.sw, 1)};
  // Negative inputs show that max pool pads with -inf, not zero.
  auto in = randomFloats(is.count(), 7);
  for (float &v : in)
    v -= 2.0f;
  putLmem(dev, 0, is, in);

  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_POOL, uint16_t(p.kind));
  cmd.out = lmemOperand(100 << 10, os);
  cmd.in0 = lmemOperand(0, is);
  cmd.kh = uint16_t(p.kh), cmd.kw = uint16_t(p.kw);
  cmd.stride_h = uint16_t(p.sh), cmd.stride_w = uint16_t(p.sw);
  cmd.dil_h = cmd.dil_w = 1;
  cmd.pad_top = uint16_t(p.pt), cmd.pad_bottom = uint16_t(p.pb);
  cmd.pad_left = uint16_t(p.pl), cmd.pad_right = uint16_t(p.pr);
  if (p.include_pad)
    cmd.flags |= KILN_TIU_FLAG_COUNT_INCLUDE_PAD;

  ASSERT_EQ(runQueues(dev, {cmd}, {}), KILN_OK) << dev.faultReason();
  expectClose(getLmem(dev, 100 << 10, os), referencePool(p, is, os, in));
}

INSTANTIATE_TEST_SUITE_P(Kinds, PoolTest,
                         ::testing::Values(PoolCase{KILN_POOL_MAX, false, 3, 3, 2, 2, 1, 1, 1, 1},
                                           PoolCase{KILN_POOL_AVG, false, 3, 3, 2, 2, 1, 1, 1, 1},
                                           PoolCase{KILN_POOL_AVG, true, 3, 3, 2, 2, 1, 1, 1, 1},
                                           PoolCase{KILN_POOL_MAX, false, 2, 3, 1, 2, 0, 1, 2, 0},
                                           PoolCase{KILN_POOL_AVG, false, 2, 3, 1, 2, 0, 1, 2, 0}));

TEST(PoolTest, AvgCountsOnlyValidTaps) {
  // A corner window of a 3x3 pad-1 pool over ones: 4 valid taps of 9.
  Device dev(kDeviceDdrBytes);
  Shape is{1, 1, 4, 4}, os{1, 1, 2, 2};
  putLmem(dev, 0, is, std::vector<float>(is.count(), 1.0f));
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_POOL, KILN_POOL_AVG);
  cmd.out = lmemOperand(4096, os);
  cmd.in0 = lmemOperand(0, is);
  cmd.kh = cmd.kw = 3, cmd.stride_h = cmd.stride_w = 2, cmd.dil_h = cmd.dil_w = 1;
  cmd.pad_top = cmd.pad_bottom = cmd.pad_left = cmd.pad_right = 1;
  ASSERT_EQ(runQueues(dev, {cmd}, {}), KILN_OK);
  EXPECT_EQ(getLmem(dev, 4096, os)[0], 1.0f);
  cmd.flags = KILN_TIU_FLAG_COUNT_INCLUDE_PAD;
  ASSERT_EQ(runQueues(dev, {cmd}, {}), KILN_OK);
  EXPECT_FLOAT_EQ(getLmem(dev, 4096, os)[0], 4.0f / 9.0f);
}

// ---- eltwise and active --------------------------------------------------------

float eltwiseRef(kiln_eltwise_kind k, float a, float b) {
  switch (k) {
  case KILN_ELT_ADD: return a + b;
  case KILN_ELT_SUB: return a - b;
  case KILN_ELT_MUL: return a * b;
  case KILN_ELT_MAX: return std::max(a, b);
  default: return std::min(a, b);
  }
}

std::vector<float> referenceBroadcast(kiln_eltwise_kind k, const Shape &os, const Shape &as,
                                      const std::vector<float> &a, const Shape &bs,
                                      const std::vector<float> &b, bool relu) {
  auto at = [](const Shape &s, const std::vector<float> &v, uint32_t n, uint32_t c, uint32_t h,
               uint32_t w) {
    return v[idx(s, s.n == 1 ? 0 : n, s.c == 1 ? 0 : c, s.h == 1 ? 0 : h, s.w == 1 ? 0 : w)];
  };
  std::vector<float> out(os.count());
  for (uint32_t n = 0; n < os.n; ++n)
    for (uint32_t c = 0; c < os.c; ++c)
      for (uint32_t h = 0; h < os.h; ++h)
        for (uint32_t w = 0; w < os.w; ++w) {
          float v = eltwiseRef(k, at(as, a, n, c, h, w), at(bs, b, n, c, h, w));
          out[idx(os, n, c, h, w)] = relu ? std::max(v, 0.0f) : v;
        }
  return out;
}

struct EltwiseCase {
  kiln_eltwise_kind kind;
  Shape a, b;
  bool relu;
};

class EltwiseTest : public ::testing::TestWithParam<EltwiseCase> {};

TEST_P(EltwiseTest, BroadcastsLikeNumpy) {
  const EltwiseCase &p = GetParam();
  Device dev(kDeviceDdrBytes);
  Shape os{2, 70, 3, 4};
  auto a = randomFloats(p.a.count(), 11), b = randomFloats(p.b.count(), 12);
  putLmem(dev, 0, p.a, a);
  putLmem(dev, 8192, p.b, b);
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ELTWISE, uint16_t(p.kind));
  cmd.out = lmemOperand(16384, os);
  cmd.in0 = lmemOperand(0, p.a);
  cmd.in1 = lmemOperand(8192, p.b);
  cmd.flags = p.relu ? KILN_TIU_FLAG_RELU : 0;
  ASSERT_EQ(runQueues(dev, {cmd}, {}), KILN_OK) << dev.faultReason();
  expectClose(getLmem(dev, 16384, os), referenceBroadcast(p.kind, os, p.a, a, p.b, b, p.relu));
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, EltwiseTest,
    ::testing::Values(EltwiseCase{KILN_ELT_ADD, {2, 70, 3, 4}, {2, 70, 3, 4}, true},
                      EltwiseCase{KILN_ELT_SUB, {2, 70, 3, 4}, {1, 70, 1, 4}, false},
                      EltwiseCase{KILN_ELT_MUL, {2, 70, 3, 4}, {2, 1, 3, 1}, false},
                      EltwiseCase{KILN_ELT_MAX, {1, 70, 3, 1}, {2, 1, 1, 4}, false},
                      EltwiseCase{KILN_ELT_MIN, {2, 70, 3, 4}, {1, 1, 1, 1}, true}));

TEST(EltwiseTest, ConstantOperand) {
  Device dev(kDeviceDdrBytes);
  Shape s{1, 3, 2, 2};
  auto a = randomFloats(s.count(), 5);
  putLmem(dev, 0, s, a);
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ELTWISE, KILN_ELT_MUL);
  cmd.out = lmemOperand(4096, s);
  cmd.in0 = lmemOperand(0, s);
  cmd.in1 = constOperand(-3.0f);
  ASSERT_EQ(runQueues(dev, {cmd}, {}), KILN_OK) << dev.faultReason();
  auto out = getLmem(dev, 4096, s);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(out[i], a[i] * -3.0f);
}

TEST(ActiveTest, ReluInPlace) {
  Device dev(kDeviceDdrBytes);
  Shape s{1, 65, 2, 3};
  auto a = randomFloats(s.count(), 9);
  putLmem(dev, 256, s, a);
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ACTIVE, KILN_ACT_RELU);
  cmd.out = cmd.in0 = lmemOperand(256, s);
  ASSERT_EQ(runQueues(dev, {cmd}, {}), KILN_OK) << dev.faultReason();
  auto out = getLmem(dev, 256, s);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(out[i], std::max(a[i], 0.0f));
}

// ---- GDMA ----------------------------------------------------------------------

// A [2, 70, 3, 5] block inside a [2, 80, 4, 8] DDR tensor goes to LMEM, comes
// back transposed (h and w swapped by the destination strides), is copied
// DDR to DDR with the transpose undone, and LMEM to LMEM.
TEST(GdmaTest, StridedRoundTrip) {
  Device dev(kDeviceDdrBytes);
  const Shape outer{2, 80, 4, 8}, s{2, 70, 3, 5};
  auto src = randomFloats(outer.count(), 21);
  const uint64_t src_off = 0, t_off = 512 << 10, back_off = 768 << 10;
  putDdr(dev, kWindowOffset + src_off, src);

  kiln_gdma_cmd load = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, s, src_off, 1024);
  denseStrides(outer, load.src_stride);
  kiln_gdma_cmd store = gdmaCmd(2, 0, KILN_GDMA_LMEM_TO_DDR, s, 1024, t_off);
  const uint32_t transposed[4] = {s.c * s.h * s.w, s.h * s.w, 1, s.h};
  std::memcpy(store.dst_stride, transposed, sizeof transposed);
  kiln_gdma_cmd untranspose = gdmaCmd(3, 0, KILN_GDMA_DDR_TO_DDR, s, t_off, back_off);
  std::memcpy(untranspose.src_stride, transposed, sizeof transposed);
  kiln_gdma_cmd lmem_copy = gdmaCmd(4, 0, KILN_GDMA_LMEM_TO_LMEM, s, 1024, 200 << 10);

  ASSERT_EQ(runQueues(dev, {}, {load, store, untranspose, lmem_copy}), KILN_OK)
      << dev.faultReason();

  std::vector<float> block(s.count()), block_t(s.count());
  for (uint32_t n = 0; n < s.n; ++n)
    for (uint32_t c = 0; c < s.c; ++c)
      for (uint32_t h = 0; h < s.h; ++h)
        for (uint32_t w = 0; w < s.w; ++w) {
          float v = src[idx(outer, n, c, h, w)];
          block[idx(s, n, c, h, w)] = v;
          block_t[((size_t{n} * s.c + c) * s.w + w) * s.h + h] = v;
        }
  EXPECT_EQ(getLmem(dev, 1024, s), block);
  EXPECT_EQ(getDdr(dev, kWindowOffset + t_off, s.count()), block_t);
  EXPECT_EQ(getDdr(dev, kWindowOffset + back_off, s.count()), block);
  EXPECT_EQ(getLmem(dev, 200 << 10, s), block);

  const uint64_t bytes = s.count() * 4;
  EXPECT_EQ(dev.stats().ddr_read_bytes, 2 * bytes);
  EXPECT_EQ(dev.stats().ddr_write_bytes, 2 * bytes);
  EXPECT_EQ(dev.stats().gdma_commands, 4u);
}

// A lane-offset load (ABI 1.6) puts a [1, 3, 2, 5] block into channels 6-8 of
// a [1, 9, 2, 5] LMEM tensor; a lane-offset fill zeroes channels 3-5; the
// whole tensor then reads back with the block and the zeros where they
// belong. A block past lane 63 faults.
TEST(GdmaTest, LaneOffsetLoadAndFill) {
  Device dev(kDeviceDdrBytes);
  const Shape block{1, 3, 2, 5}, whole{1, 9, 2, 5};
  auto src = randomFloats(block.count(), 22);
  putDdr(dev, kWindowOffset, src);
  kiln_gdma_cmd clear = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, whole, 0, 1024);
  clear.flags = KILN_GDMA_FLAG_FILL;
  clear.src_addr = 0x3f800000u; // 1.0f everywhere first
  kiln_gdma_cmd load = gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, block, 0, 1024);
  load.lmem_lane = 6;
  kiln_gdma_cmd zero = gdmaCmd(3, 0, KILN_GDMA_DDR_TO_LMEM, block, 0, 1024);
  zero.flags = KILN_GDMA_FLAG_FILL;
  zero.src_addr = 0;
  zero.lmem_lane = 3;
  ASSERT_EQ(runQueues(dev, {}, {clear, load, zero}), KILN_OK) << dev.faultReason();

  std::vector<float> expect(whole.count(), 1.0f);
  for (uint32_t c = 0; c < 3; ++c)
    for (uint32_t i = 0; i < block.h * block.w; ++i) {
      expect[(3 + c) * block.h * block.w + i] = 0.0f;
      expect[(6 + c) * block.h * block.w + i] = src[c * block.h * block.w + i];
    }
  EXPECT_EQ(getLmem(dev, 1024, whole), expect);

  kiln_gdma_cmd past = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, block, 0, 1024);
  past.lmem_lane = KILN_NPU_NUM - 2;
  EXPECT_NE(runQueues(dev, {}, {past}), KILN_OK);
  kiln_gdma_cmd ddrOnly = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_DDR, block, 0, 4096);
  ddrOnly.lmem_lane = 1;
  EXPECT_EQ(kiln_gdma_cmd_check(&ddrOnly, 1 << 20), KILN_ERR_BAD_COMMAND);
}

// ---- row windows ------------------------------------------------------------------

// Operands and LMEM sides of copies may be windows of rows of a taller buffer:
// their planes hold plane_h rows and addr points at the window's first row.
TEST(WindowTest, TiuAndGdmaAddressRowWindows) {
  Device dev(kDeviceDdrBytes);
  const Shape full{2, 70, 6, 5}, rows{2, 70, 3, 5};
  const uint32_t row_bytes = full.w * 4, other = 128 << 10;
  const auto data = randomFloats(full.count(), 31);
  putLmem(dev, 0, full, data);

  kiln_tiu_cmd relu = tiuCmd(1, 0, KILN_TIU_ACTIVE, KILN_ACT_RELU);
  relu.in0 = lmemOperand(2 * row_bytes, rows); // rows 2..4
  relu.in0.plane_h = uint16_t(full.h);
  relu.out = lmemOperand(64 << 10, rows);
  kiln_gdma_cmd store = gdmaCmd(1, 0, KILN_GDMA_LMEM_TO_DDR, rows, 1 * row_bytes, 0); // rows 1..3
  store.lmem_plane_h = full.h;
  kiln_gdma_cmd load = gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, rows, 0, other + 3 * row_bytes);
  load.lmem_plane_h = full.h; // into rows 3..5 of another buffer
  ASSERT_EQ(runQueues(dev, {relu}, {store, load}), KILN_OK) << dev.faultReason();

  auto rowsOf = [&](uint32_t first, bool apply_relu) {
    std::vector<float> out;
    for (uint32_t n = 0; n < full.n; ++n)
      for (uint32_t c = 0; c < full.c; ++c)
        for (uint32_t h = first; h < first + rows.h; ++h)
          for (uint32_t w = 0; w < full.w; ++w) {
            float v = data[idx(full, n, c, h, w)];
            out.push_back(apply_relu ? std::max(v, 0.0f) : v);
          }
    return out;
  };
  EXPECT_EQ(getLmem(dev, 64 << 10, rows), rowsOf(2, true));
  EXPECT_EQ(getDdr(dev, kWindowOffset, rows.count()), rowsOf(1, false));
  const auto other_full = getLmem(dev, other, full);
  for (uint32_t n = 0; n < full.n; ++n)
    for (uint32_t c = 0; c < full.c; ++c)
      for (uint32_t h = 0; h < full.h; ++h)
        for (uint32_t w = 0; w < full.w; ++w) {
          float want = h < 3 ? 0.0f : data[idx(full, n, c, h - 2, w)];
          ASSERT_EQ(other_full[idx(full, n, c, h, w)], want) << n << "," << c << "," << h;
        }
}

// ---- faults ----------------------------------------------------------------------

TEST(FaultTest, DdrAccessOutsideWindowFaultsAndRecovers) {
  Device dev(kDeviceDdrBytes);
  const Shape s{1, 2, 2, 2};
  const uint64_t window = 64 << 10;
  putLmem(dev, 0, s, std::vector<float>(s.count(), 7.0f));
  // The last element would be read from one byte past the window.
  kiln_gdma_cmd bad = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, s, window - s.count() * 4 + 1, 0);
  EXPECT_EQ(runQueues(dev, {}, {bad}, window), KILN_ERR_DEVICE_FAULT);
  EXPECT_EQ(dev.read_reg(KILN_REG_STATUS), KILN_STATUS_FAULT);
  EXPECT_EQ(dev.read_reg(KILN_REG_ERROR), uint32_t(KILN_ERR_DEVICE_FAULT));
  EXPECT_NE(dev.faultReason().find("gdma[0]"), std::string::npos) << dev.faultReason();
  EXPECT_EQ(getLmem(dev, 0, s), std::vector<float>(s.count(), 7.0f)); // nothing written

  kiln_hal hal = dev.hal();
  EXPECT_EQ(hal.reset(hal.ctx), KILN_OK);
  EXPECT_EQ(dev.read_reg(KILN_REG_STATUS), KILN_STATUS_IDLE);
  EXPECT_FALSE(dev.faultReason().empty()); // kept for whoever reports the failure
  kiln_gdma_cmd good = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, s, window - s.count() * 4, 0);
  EXPECT_EQ(runQueues(dev, {}, {good}, window), KILN_OK);
  EXPECT_EQ(dev.read_reg(KILN_REG_GDMA_DONE_ID), 1u);
  EXPECT_TRUE(dev.faultReason().empty());
}

TEST(FaultTest, StopsAtTheFaultingCommand) {
  Device dev(kDeviceDdrBytes);
  const Shape s{1, 1, 1, 4};
  kiln_gdma_cmd first = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, s, 0, 0);
  kiln_gdma_cmd bad = gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, s, 1ull << 40, 0);
  kiln_gdma_cmd never = gdmaCmd(3, 0, KILN_GDMA_DDR_TO_LMEM, s, 0, 64);
  EXPECT_EQ(runQueues(dev, {}, {first, bad, never}), KILN_ERR_DEVICE_FAULT);
  EXPECT_EQ(dev.read_reg(KILN_REG_GDMA_DONE_ID), 1u);
  EXPECT_EQ(dev.stats().gdma_commands, 1u);
}

TEST(FaultTest, LmemOperandBeyondLane) {
  Device dev(kDeviceDdrBytes);
  const Shape s{1, 1, 4, 4};
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ACTIVE, KILN_ACT_RELU);
  cmd.in0 = lmemOperand(0, s);
  cmd.out = lmemOperand(KILN_LMEM_BYTES_PER_LANE - 32, s); // 64 bytes needed
  EXPECT_EQ(runQueues(dev, {cmd}, {}), KILN_ERR_DEVICE_FAULT);
  EXPECT_NE(dev.faultReason().find("outside LMEM"), std::string::npos) << dev.faultReason();
}

TEST(FaultTest, WindowOrQueueOutsideDeviceMemory) {
  Device dev(kDeviceDdrBytes);
  EXPECT_EQ(runQueues(dev, {}, {}, kDeviceDdrBytes), KILN_ERR_DEVICE_FAULT);

  kiln_hal hal = dev.hal();
  kiln_submit_desc desc{};
  desc.ddr_base = hal.mem_base;
  desc.ddr_size = 4096;
  desc.tiu_queue_addr = hal.mem_base + kDeviceDdrBytes - 64; // half a record inside
  desc.tiu_count = 1;
  ASSERT_EQ(hal.submit(hal.ctx, &desc), KILN_OK);
  EXPECT_EQ(hal.wait(hal.ctx, 0), KILN_ERR_DEVICE_FAULT);
  desc.tiu_queue_addr = 0; // below DDR
  ASSERT_EQ(hal.submit(hal.ctx, &desc), KILN_OK);
  EXPECT_EQ(hal.wait(hal.ctx, 0), KILN_ERR_DEVICE_FAULT);
}

// No TIU kernel computes in INT16: the record is malformed.
TEST(FaultTest, UnsupportedDtype) {
  Device dev(kDeviceDdrBytes);
  const Shape s{1, 1, 4, 4};
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  cmd.out = cmd.in0 = cmd.in1 = lmemOperand(0, s, KILN_DTYPE_INT16);
  EXPECT_EQ(runQueues(dev, {cmd}, {}), KILN_ERR_DEVICE_FAULT);
  EXPECT_NE(dev.faultReason().find("malformed TIU record"), std::string::npos);
}

// Records of random bytes (with valid ids) either run or fault; never crash.
TEST(FaultTest, RandomRecordsNeverCrash) {
  Device dev(kDeviceDdrBytes);
  std::mt19937 rng(1234);
  int faulted = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<kiln_tiu_cmd> tiu(1 + rng() % 3);
    std::vector<kiln_gdma_cmd> gdma(1 + rng() % 3);
    auto scramble = [&](auto &rec, uint32_t id) {
      auto *bytes = reinterpret_cast<uint8_t *>(&rec);
      for (size_t i = 0; i < sizeof rec; ++i)
        bytes[i] = uint8_t(rng() % 4 == 0 ? rng() : rng() % 3); // mostly small values
      rec.cmd_id = id;
    };
    for (size_t i = 0; i < tiu.size(); ++i) {
      scramble(tiu[i], uint32_t(i + 1));
      tiu[i].wait_gdma_id = 0;
    }
    for (size_t i = 0; i < gdma.size(); ++i) {
      scramble(gdma[i], uint32_t(i + 1));
      gdma[i].wait_tiu_id = 0;
    }
    kiln_status st = runQueues(dev, tiu, gdma, 1 << 20);
    ASSERT_TRUE(st == KILN_OK || st == KILN_ERR_DEVICE_FAULT) << st;
    faulted += st != KILN_OK;
  }
  EXPECT_GT(faulted, 0);
}

} // namespace
} // namespace kiln::test
