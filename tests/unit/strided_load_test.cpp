// Loads and stores through a tpu.strided_view's strides (LayerGroup/
// StridedLoad.h): every LMEM element a command list writes must hold the
// DDR element the reading gives it, each command within the ABI's lane
// rules, and layouts the GDMA cannot express must be refused.
#include "kiln/LayerGroup/StridedLoad.h"

#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"

#include <gtest/gtest.h>

#include <map>

using namespace kiln;
using namespace kiln::lg;

namespace {

/// The DDR element of the reading's element f.
int64_t addressOf(const StridedReading &r, int64_t f) {
  int64_t at = r.offset;
  for (size_t k = r.sizes.size(); k-- > 0;) {
    at += (f % r.sizes[k]) * r.strides[k];
    f /= r.sizes[k];
  }
  return at;
}

/// Runs the commands symbolically: for each element of the value (flat
/// index), the DDR element it moves from or to. Fails on an element moved
/// twice or a lane outside the ABI's rules.
std::map<int64_t, int64_t> simulate(const std::vector<kiln_gdma_cmd> &cmds,
                                    const std::array<int64_t, 4> &shape, uint32_t dsize,
                                    bool toLmem) {
  uint64_t plane = kiln_lmem_plane_stride(shape[2], shape[3], dsize);
  int64_t groups = (shape[1] + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
  std::map<int64_t, int64_t> moved;
  for (const kiln_gdma_cmd &c : cmds) {
    EXPECT_EQ(c.dir, toLmem ? KILN_GDMA_DDR_TO_LMEM : KILN_GDMA_LMEM_TO_DDR);
    if (c.lmem_lane != 0) {
      EXPECT_LE(c.lmem_lane + c.c, KILN_NPU_NUM);
    }
    EXPECT_EQ(kiln_lmem_plane_stride(c.lmem_plane_h, c.w, dsize), plane);
    uint64_t lmem = toLmem ? c.dst_addr : c.src_addr;
    uint64_t ddr = toLmem ? c.src_addr : c.dst_addr;
    const uint32_t *stride = toLmem ? c.src_stride : c.dst_stride;
    int64_t first = lmem / plane, inPlane = (lmem % plane) / dsize;
    int64_t perN = (c.lmem_lane + c.c + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
    for (uint32_t n = 0; n < c.n; ++n)
      for (uint32_t ch = 0; ch < c.c; ++ch)
        for (uint32_t h = 0; h < c.h; ++h)
          for (uint32_t w = 0; w < c.w; ++w) {
            int64_t lane = c.lmem_lane + ch;
            int64_t planeIndex = first + n * perN + lane / KILN_NPU_NUM;
            int64_t channel = planeIndex % groups * KILN_NPU_NUM + lane % KILN_NPU_NUM;
            int64_t batch = planeIndex / groups;
            int64_t f = (batch * shape[1] + channel) * shape[2] * shape[3] + inPlane +
                        h * c.w + w;
            int64_t at = ddr / dsize + n * stride[0] + ch * stride[1] + h * stride[2] +
                         w * stride[3];
            EXPECT_TRUE(moved.emplace(f, at).second) << "element " << f << " moved twice";
          }
  }
  return moved;
}

void expectMoves(const StridedReading &r, const std::array<int64_t, 4> &shape, bool toLmem,
                 size_t commands) {
  Slice whole{{0, shape[0]}, {0, shape[1]}, {0, shape[2]}, {0, shape[3]}};
  auto cmds = stridedTransfer(r, shape, KILN_DTYPE_F16, 2, 0, 0, whole, whole, toLmem);
  ASSERT_TRUE(cmds);
  EXPECT_EQ(cmds->size(), commands);
  auto moved = simulate(*cmds, shape, 2, toLmem);
  ASSERT_EQ((int64_t)moved.size(), shape[0] * shape[1] * shape[2] * shape[3]);
  for (auto [f, at] : moved)
    ASSERT_EQ(at, addressOf(r, f)) << "element " << f;
}

StridedReading reading(int64_t offset, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  StridedReading r;
  r.offset = offset;
  r.sizes.assign(sizes.begin(), sizes.end());
  r.strides.assign(strides.begin(), strides.end());
  return r;
}

TEST(StridedReading, FitsPermutations) {
  // [2, 3, 4] read as its transpose [4, 3, 2] (perm 2, 1, 0).
  std::vector<int64_t> addresses;
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 2; ++c)
        addresses.push_back(7 + c * 12 + b * 4 + a);
  auto r = StridedReading::fit(addresses);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->offset, 7);
  EXPECT_EQ(std::vector<int64_t>(r->sizes.begin(), r->sizes.end()),
            (std::vector<int64_t>{4, 3, 2}));
  EXPECT_EQ(std::vector<int64_t>(r->strides.begin(), r->strides.end()),
            (std::vector<int64_t>{1, 4, 12}));
  // Contiguous runs merge into one.
  auto dense = StridedReading::fit({3, 4, 5, 6, 7, 8});
  ASSERT_TRUE(dense);
  EXPECT_EQ(dense->sizes.size(), 1u);
  EXPECT_EQ(dense->strides[0], 1);
}

TEST(StridedReading, RefusesWhatNoStridesDescribe) {
  EXPECT_FALSE(StridedReading::fit({0, 2, 1, 5}));
  EXPECT_FALSE(StridedReading::fit({3, 2, 1, 0})); // reversed: negative stride
  EXPECT_FALSE(StridedReading::fit({}));
}

TEST(StridedTransfer, RowsAsOneCommand) {
  // q of SVTR's qkv [40, 360]: [8 heads, 40 rows, 15] with row stride 360.
  expectMoves(reading(0, {8, 40, 15}, {15, 360, 1}), {1, 8, 40, 15}, true, 1);
}

TEST(StridedTransfer, ChannelBlocksStayInLaneGroups) {
  // v as a conv input [1, 8*40, 1, 15]: each head's 40 channels 15 elements
  // apart, 600 between heads, in pieces that never cross a lane group.
  expectMoves(reading(240, {8, 40, 15}, {15, 360, 1}), {1, 320, 1, 15}, true, 12);
}

TEST(StridedTransfer, SingleElementColumns) {
  // k^T [120, 40]: channel stride 1, W stride 360 (one command, element runs).
  StridedReading kt = reading(120, {120, 40}, {1, 360});
  expectMoves(kt, {1, 120, 1, 40}, true, 1);
  // Element runs cost a burst each; contiguous rows far less.
  auto strided = stridedTransferCycles(kt, {1, 120, 1, 40}, KILN_DTYPE_F16, 2);
  auto dense = stridedTransferCycles(StridedReading::dense(4800), {1, 120, 1, 40},
                                     KILN_DTYPE_F16, 2);
  ASSERT_TRUE(strided && dense);
  EXPECT_EQ(*strided, 4800u * 64u * 1000u / KILN_GDMA_MBPC_DDR_TO_LMEM + 1 + KILN_GDMA_CMD_LATENCY);
  EXPECT_LT(*dense * 10, *strided);
}

TEST(StridedTransfer, WholePlanesTakeAnyTwoRuns) {
  // A filter [40, 8*15] of heads 600 apart: W = 1, the plane's 120 elements
  // are rows of 15 (one command).
  expectMoves(reading(0, {40, 8, 15}, {15, 600, 1}), {1, 40, 120, 1}, true, 1);
  // Rows of 60 in blocks of 15, 600 apart: whole planes are 8 rows of 15;
  // a part of the rows cannot be, its W is not one run.
  StridedReading r = reading(0, {2, 4, 15}, {2400, 600, 1});
  expectMoves(r, {1, 1, 2, 60}, true, 1);
  Slice whole{{0, 1}, {0, 1}, {0, 2}, {0, 60}}, part = whole;
  part.h = {0, 1};
  EXPECT_FALSE(stridedTransfer(r, {1, 1, 2, 60}, KILN_DTYPE_F16, 2, 0, 0, whole, part));
}

TEST(StridedTransfer, StoresWriteThroughTheStrides) {
  // A [1, 120, 1, 40] map stored as its transpose [40, 120].
  expectMoves(reading(0, {120, 40}, {1, 120}), {1, 120, 1, 40}, false, 1);
  // Batches of a channel-split value go one at a time.
  expectMoves(reading(0, {2, 2, 48, 5}, {5, 500, 10, 1}), {2, 96, 1, 5}, false, 6);
}

} // namespace
