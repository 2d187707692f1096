// The cost model (DESIGN.md section 4, by hand), the two-queue scheduler, and
// sync ids as data dependencies on the cmodel.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "cmodel_harness.h"
#include "kiln/abi/cost.h"
#include "kiln/abi/regs.h"
#include "kiln/chip/tiu_kernels.h"

namespace kiln::test {
namespace {

using cmodel::Device;

kiln_tiu_cmd reluCmd(uint32_t id, uint32_t wait, uint32_t in, uint32_t out, const Shape &s) {
  kiln_tiu_cmd cmd = tiuCmd(id, wait, KILN_TIU_ACTIVE, KILN_ACT_RELU);
  cmd.in0 = lmemOperand(in, s);
  cmd.out = lmemOperand(out, s);
  return cmd;
}

// out [1, 128, 8, 8] = conv3x3(in [1, 32, 10, 10]).
kiln_tiu_cmd convCmd(uint8_t dtype) {
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_CONV);
  cmd.in0 = lmemOperand(0, {1, 32, 10, 10}, dtype);
  cmd.in1 = lmemOperand(4096, {1, 128, 32, 9}, dtype);
  cmd.out = lmemOperand(32768, {1, 128, 8, 8}, dtype);
  cmd.kh = cmd.kw = 3;
  cmd.stride_h = cmd.stride_w = cmd.dil_h = cmd.dil_w = 1;
  cmd.groups = 1;
  return cmd;
}

// ---- cost model, by hand ----------------------------------------------------

uint64_t tiuCycles(kiln_tiu_cmd cmd) { return kiln_tiu_cycles(&cmd); }

TEST(CostModel, ConvByHand) {
  // n * ceil(oc/64) * ceil(oh*ow/PIX) * ceil(ic/ICP) * kh*kw + 32
  EXPECT_EQ(tiuCycles(convCmd(KILN_DTYPE_F32)), 1u * 2 * 4 * 32 * 9 + 32);  // 2336
  EXPECT_EQ(tiuCycles(convCmd(KILN_DTYPE_F16)), 1u * 2 * 16 * 1 * 9 + 32);  // 320
  EXPECT_EQ(tiuCycles(convCmd(KILN_DTYPE_INT8)), 1u * 2 * 16 * 1 * 9 + 32); // 320
  kiln_tiu_cmd grouped = convCmd(KILN_DTYPE_F32);
  grouped.groups = 4;
  grouped.in1.h = 8;
  EXPECT_EQ(kiln_tiu_cycles(&grouped), 1u * 2 * 4 * 8 * 9 + 32); // 608
}

TEST(CostModel, EltwiseAndPoolByHand) {
  kiln_tiu_cmd elt = tiuCmd(1, 0, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  elt.out = lmemOperand(0, {1, 70, 4, 8});
  EXPECT_EQ(kiln_tiu_cycles(&elt), 1u * 2 * 2 + 32); // ceil(70/64) * ceil(32/16)
  kiln_tiu_cmd pool = tiuCmd(1, 0, KILN_TIU_POOL, KILN_POOL_MAX);
  pool.out = lmemOperand(0, {1, 64, 4, 4});
  pool.kh = pool.kw = 3;
  EXPECT_EQ(kiln_tiu_cycles(&pool), 5u + 32); // ceil(1 pass * 9 taps / 2)
}

TEST(CostModel, GdmaByHand) {
  // [1, 64, 8, 8] f32 into LMEM: runs are one 256-byte plane per lane, 64 of
  // them: 16384 bytes / 62.277 bytes per cycle = 263.08 -> 264, + 128.
  kiln_gdma_cmd load = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, {1, 64, 8, 8}, 0, 0);
  EXPECT_EQ(kiln_gdma_cycles(&load), 264u + 128);
  // [1, 2, 3, 5] f32 out of LMEM: 60-byte runs round up to 64, two of them:
  // 128 / 47.245 = 2.71 -> 3, + 128.
  kiln_gdma_cmd store = gdmaCmd(1, 0, KILN_GDMA_LMEM_TO_DDR, {1, 2, 3, 5}, 0, 0);
  EXPECT_EQ(kiln_gdma_cycles(&store), 3u + 128);
  // DDR to DDR reading every other element: 12 one-element runs of 64 bytes:
  // 768 / 30.065 = 25.54 -> 26, + 128.
  kiln_gdma_cmd gather = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_DDR, {1, 1, 4, 3}, 0, 4096);
  const uint32_t every_other[4] = {24, 24, 6, 2};
  std::copy(every_other, every_other + 4, gather.src_stride);
  EXPECT_EQ(kiln_gdma_cycles(&gather), 26u + 128);
}

TEST(CostModel, SaturatesInsteadOfWrapping) {
  kiln_gdma_cmd huge = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_DDR, {1, 1, 1, 1}, 0, 0);
  huge.n = huge.c = huge.h = huge.w = 0xffffffffu;
  // The byte count saturates; the division by the bandwidth comes after.
  EXPECT_EQ(kiln_gdma_cycles(&huge),
            (UINT64_MAX - 1) / KILN_GDMA_MBPC_DDR_TO_DDR + 1 + KILN_GDMA_CMD_LATENCY);
  kiln_tiu_cmd conv = convCmd(KILN_DTYPE_F32);
  conv.out.n = conv.out.c = conv.out.h = conv.out.w = conv.in0.c = 0xffff;
  conv.kh = conv.kw = 0xffff;
  EXPECT_EQ(kiln_tiu_cycles(&conv), UINT64_MAX);
}

// ---- the scheduler ------------------------------------------------------------------

struct Event {
  kiln_engine engine;
  uint32_t index;
  bool operator==(const Event &o) const { return engine == o.engine && index == o.index; }
};

kiln_status recordEvent(void *user, kiln_engine engine, uint32_t index) {
  static_cast<std::vector<Event> *>(user)->push_back({engine, index});
  return KILN_OK;
}

constexpr kiln_engine T = KILN_ENGINE_TIU, G = KILN_ENGINE_GDMA;
const Shape kTile{1, 64, 8, 8};

// Double-buffered load / compute / store of two tiles.
TEST(Scheduler, PipelineTimelineAndOrder) {
  // Each buffer in a bank of its own: no bank conflicts.
  std::vector<kiln_gdma_cmd> gdma = {
      gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 0),
      gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 16384),
      gdmaCmd(3, 1, KILN_GDMA_LMEM_TO_DDR, kTile, 32768, 0),
      gdmaCmd(4, 2, KILN_GDMA_LMEM_TO_DDR, kTile, 49152, 0),
  };
  std::vector<kiln_tiu_cmd> tiu = {reluCmd(1, 1, 0, 32768, kTile),
                                   reluCmd(2, 2, 16384, 49152, kTile)};
  const uint64_t load = 392, relu = 36, store = 475; // by hand, as above
  ASSERT_EQ(kiln_gdma_cycles(&gdma[0]), load);
  ASSERT_EQ(kiln_tiu_cycles(&tiu[0]), relu);
  ASSERT_EQ(kiln_gdma_cycles(&gdma[2]), store);

  std::vector<Event> order;
  kiln_queue_timing timing{};
  ASSERT_EQ(kiln_schedule_queues(tiu.data(), 2, gdma.data(), 4, recordEvent, &order, &timing),
            KILN_OK);
  // G1 [0, L]  G2 [L, 2L]  T1 [L, L+R]  T2 [2L, 2L+R]  G3 [2L, 2L+S]  G4 [2L+S, 2L+2S]
  EXPECT_EQ(timing.total_cycles, 2 * load + 2 * store);
  EXPECT_EQ(timing.tiu_busy, 2 * relu);
  EXPECT_EQ(timing.gdma_busy, 2 * load + 2 * store);
  EXPECT_LT(timing.total_cycles, timing.tiu_busy + timing.gdma_busy); // the engines overlap
  // Commands that start together: the one finishing first comes first.
  std::vector<Event> want = {{G, 0}, {T, 0}, {G, 1}, {T, 1}, {G, 2}, {G, 3}};
  EXPECT_EQ(order, want);
}

// The TIU and the GDMA touching one LMEM bank at the same time: the command
// that starts second (the GDMA one when both start together) is charged half
// the cycles they overlap.
TEST(Scheduler, BankConflictsCostHalfTheOverlap) {
  const uint64_t load = 392, relu = 36;
  kiln_tiu_cmd t = reluCmd(1, 0, 0, 16384, kTile); // banks 0 and 1
  kiln_gdma_cmd inBank0 = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 4096);
  kiln_gdma_cmd inBank2 = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 32768);
  EXPECT_EQ(kiln_tiu_banks(&t), 0x3u);
  EXPECT_EQ(kiln_gdma_banks(&inBank0), 0x1u);
  EXPECT_EQ(kiln_gdma_banks(&inBank2), 0x4u);

  kiln_queue_timing timing{};
  ASSERT_EQ(kiln_schedule_queues(&t, 1, &inBank2, 1, nullptr, nullptr, &timing), KILN_OK);
  EXPECT_EQ(timing.total_cycles, load);
  EXPECT_EQ(timing.bank_conflicts, 0u);

  ASSERT_EQ(kiln_schedule_queues(&t, 1, &inBank0, 1, nullptr, nullptr, &timing), KILN_OK);
  EXPECT_EQ(timing.bank_conflicts, 1u);
  EXPECT_EQ(timing.conflict_cycles, relu / 2);
  EXPECT_EQ(timing.gdma_busy, load + relu / 2);
  EXPECT_EQ(timing.total_cycles, load + relu / 2);

  // A TIU command that starts while a conflicting load runs pays instead:
  // the first relu (banks 4 and 5) runs beside the load, the second starts
  // after it, in the load's bank.
  kiln_tiu_cmd two[2] = {reluCmd(1, 0, 65536, 81920, kTile), reluCmd(2, 0, 0, 16384, kTile)};
  ASSERT_EQ(kiln_schedule_queues(two, 2, &inBank0, 1, nullptr, nullptr, &timing), KILN_OK);
  EXPECT_EQ(timing.bank_conflicts, 1u);
  EXPECT_EQ(timing.tiu_busy, 2 * relu + relu / 2);
  EXPECT_EQ(timing.gdma_busy, load);
}

// Ranges round out to whole banks; a window of rows ends at its last row.
TEST(Scheduler, BankMasks) {
  EXPECT_EQ(kiln_lmem_bank_mask(0, 1), 0x1u);
  EXPECT_EQ(kiln_lmem_bank_mask(16383, 16385), 0x3u);
  EXPECT_EQ(kiln_lmem_bank_mask(0, KILN_LMEM_BYTES_PER_LANE), 0xffffu);
  EXPECT_EQ(kiln_lmem_bank_mask(5, 5), 0u);
  // 2 planes of 100 rows x 64 f32 (25600 bytes each), reading rows 0-9 only.
  EXPECT_EQ(kiln_lmem_end(0, 1, 128, 10, 64, 100, 4), 25600u + 10 * 64 * 4);
  EXPECT_EQ(kiln_lmem_end(0, 1, 128, 10, 64, 0, 4), 2u * 10 * 64 * 4);
}

TEST(Scheduler, TiesBreakByFinishThenIdThenTiu) {
  kiln_gdma_cmd load = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 0); // 392 cycles
  kiln_tiu_cmd same = tiuCmd(1, 0, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  same.out = lmemOperand(0, {1, 64, 1, 5760}); // 360 passes + 32 = 392 cycles
  ASSERT_EQ(kiln_tiu_cycles(&same), kiln_gdma_cycles(&load));
  kiln_tiu_cmd longer = convCmd(KILN_DTYPE_F32);

  std::vector<Event> order;
  ASSERT_EQ(kiln_schedule_queues(&same, 1, &load, 1, recordEvent, &order, nullptr), KILN_OK);
  EXPECT_EQ(order, (std::vector<Event>{{T, 0}, {G, 0}}));
  order.clear();
  ASSERT_EQ(kiln_schedule_queues(&longer, 1, &load, 1, recordEvent, &order, nullptr), KILN_OK);
  EXPECT_EQ(order, (std::vector<Event>{{G, 0}, {T, 0}}));
}

TEST(Scheduler, MalformedIdsAndDeadlocksAreBadSync) {
  std::vector<Event> order;
  kiln_tiu_cmd t1 = reluCmd(1, 1, 0, 4096, kTile);
  kiln_gdma_cmd g1 = gdmaCmd(1, 1, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 0);
  // Each waits for the other.
  EXPECT_EQ(kiln_schedule_queues(&t1, 1, &g1, 1, recordEvent, &order, nullptr), KILN_ERR_BAD_SYNC);
  EXPECT_TRUE(order.empty());

  // A wait beyond the other queue's count.
  g1.wait_tiu_id = 0;
  t1.wait_gdma_id = 2;
  EXPECT_EQ(kiln_schedule_queues(&t1, 1, &g1, 1, nullptr, nullptr, nullptr), KILN_ERR_BAD_SYNC);
  // An id that is not the record's position.
  t1.wait_gdma_id = 0;
  t1.cmd_id = 2;
  EXPECT_EQ(kiln_schedule_queues(&t1, 1, &g1, 1, nullptr, nullptr, nullptr), KILN_ERR_BAD_SYNC);

  // A longer cycle: G1 waits T2, T2 waits G2, G2 is queued behind G1.
  std::vector<kiln_tiu_cmd> tiu = {reluCmd(1, 0, 0, 4096, kTile), reluCmd(2, 2, 0, 4096, kTile)};
  std::vector<kiln_gdma_cmd> gdma = {gdmaCmd(1, 2, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 0),
                                     gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 0)};
  order.clear();
  EXPECT_EQ(kiln_schedule_queues(tiu.data(), 2, gdma.data(), 2, recordEvent, &order, nullptr),
            KILN_ERR_BAD_SYNC);
  EXPECT_EQ(order, (std::vector<Event>{{T, 0}})); // ran until it could not go on
}

TEST(Scheduler, CallbackErrorStopsTheSchedule) {
  std::vector<kiln_gdma_cmd> gdma = {gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 0),
                                     gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 0),
                                     gdmaCmd(3, 0, KILN_GDMA_DDR_TO_LMEM, kTile, 0, 0)};
  int calls = 0;
  auto failSecond = [](void *user, kiln_engine, uint32_t) {
    return ++*static_cast<int *>(user) == 2 ? KILN_ERR_DEVICE_FAULT : KILN_OK;
  };
  EXPECT_EQ(kiln_schedule_queues(nullptr, 0, gdma.data(), 3, failSecond, &calls, nullptr),
            KILN_ERR_DEVICE_FAULT);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(kiln_schedule_queues(nullptr, 1, nullptr, 0, nullptr, nullptr, nullptr),
            KILN_ERR_INVALID_ARGUMENT);
}

// ---- sync ids on the device ------------------------------------------------------------

const Shape kSmall{1, 64, 4, 4};
constexpr uint64_t kIn = 0, kOut = 64 << 10;

std::vector<float> reluOf(std::vector<float> v) {
  for (float &x : v)
    x = std::max(x, 0.0f);
  return v;
}

// TIU waits for the load it reads: without the wait it reads LMEM first.
TEST(DeviceSync, TiuWaitsForGdma) {
  const auto input = randomFloats(kSmall.count(), 3);
  const std::vector<kiln_gdma_cmd> gdma = {
      gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kSmall, kIn, 0),
      gdmaCmd(2, 1, KILN_GDMA_LMEM_TO_DDR, kSmall, 8192, kOut)};
  const uint64_t load = 194, relu = 33, store = 215; // by hand, as in CostModel
  ASSERT_EQ(kiln_gdma_cycles(&gdma[0]), load);
  ASSERT_EQ(kiln_gdma_cycles(&gdma[1]), store);

  Device dev(kDeviceDdrBytes);
  putDdr(dev, kWindowOffset + kIn, input);
  ASSERT_EQ(runQueues(dev, {reluCmd(1, 1, 0, 8192, kSmall)}, gdma), KILN_OK) << dev.faultReason();
  EXPECT_EQ(getDdr(dev, kWindowOffset + kOut, kSmall.count()), reluOf(input));
  EXPECT_EQ(dev.stats().cycles, load + relu + store); // fully serial chain
  EXPECT_EQ(dev.read_reg(KILN_REG_CYCLES_LO), load + relu + store);

  Device racy(kDeviceDdrBytes);
  putDdr(racy, kWindowOffset + kIn, input);
  ASSERT_EQ(runQueues(racy, {reluCmd(1, 0, 0, 8192, kSmall)}, gdma), KILN_OK);
  EXPECT_NE(getDdr(racy, kWindowOffset + kOut, kSmall.count()), reluOf(input));
}

// The store waits for the TIU command that produces its data, even while an
// earlier, long TIU command keeps the TIU busy.
TEST(DeviceSync, GdmaWaitsForTiuAndEnginesOverlap) {
  const auto input = randomFloats(kSmall.count(), 4);
  kiln_tiu_cmd busy = convCmd(KILN_DTYPE_F32); // 2336 cycles on zeros, elsewhere in LMEM
  busy.in0.addr = 16384, busy.in1.addr = 24576, busy.out.addr = 65536;
  const std::vector<kiln_tiu_cmd> tiu = {busy, reluCmd(2, 1, 0, 8192, kSmall)};
  auto gdma = std::vector<kiln_gdma_cmd>{gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kSmall, kIn, 0),
                                         gdmaCmd(2, 2, KILN_GDMA_LMEM_TO_DDR, kSmall, 8192, kOut)};
  const uint64_t conv = 2336, load = 194, relu = 33, store = 215;

  Device dev(kDeviceDdrBytes);
  putDdr(dev, kWindowOffset + kIn, input);
  ASSERT_EQ(runQueues(dev, tiu, gdma), KILN_OK) << dev.faultReason();
  EXPECT_EQ(getDdr(dev, kWindowOffset + kOut, kSmall.count()), reluOf(input));
  // The load hides under the conv; the relu and the store follow it.
  EXPECT_EQ(dev.stats().cycles, conv + relu + store);
  EXPECT_EQ(dev.stats().tiu_busy_cycles, conv + relu);
  EXPECT_EQ(dev.stats().gdma_busy_cycles, load + store);
  EXPECT_EQ(dev.stats().tiu_commands, 2u);
  EXPECT_EQ(dev.stats().gdma_commands, 2u);
  EXPECT_EQ(dev.stats().submissions, 1u);

  gdma[1].wait_tiu_id = 0; // the store no longer waits: it runs before the relu
  Device racy(kDeviceDdrBytes);
  putDdr(racy, kWindowOffset + kIn, input);
  ASSERT_EQ(runQueues(racy, tiu, gdma), KILN_OK);
  EXPECT_NE(getDdr(racy, kWindowOffset + kOut, kSmall.count()), reluOf(input));
  EXPECT_EQ(racy.stats().cycles, conv + relu); // the store finished long before
}

TEST(DeviceSync, DeadlockFaultsWithBadSync) {
  Device dev(kDeviceDdrBytes);
  EXPECT_EQ(runQueues(dev, {reluCmd(1, 1, 0, 8192, kSmall)},
                      {gdmaCmd(1, 1, KILN_GDMA_DDR_TO_LMEM, kSmall, kIn, 0)}),
            KILN_ERR_BAD_SYNC);
  EXPECT_EQ(dev.read_reg(KILN_REG_STATUS), KILN_STATUS_FAULT);
  EXPECT_EQ(dev.read_reg(KILN_REG_ERROR), uint32_t(KILN_ERR_BAD_SYNC));
  // A wait id beyond the other queue's count.
  EXPECT_EQ(runQueues(dev, {reluCmd(1, 3, 0, 8192, kSmall)},
                      {gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kSmall, kIn, 0)}),
            KILN_ERR_BAD_SYNC);
  EXPECT_EQ(dev.stats().tiu_commands + dev.stats().gdma_commands, 0u);
}

// ---- the engines run concurrently ---------------------------------------------------

// What a submission leaves behind that must not depend on the thread count.
struct Outcome {
  kiln_status status;
  std::string why;
  std::vector<uint64_t> counts; // stats and the done-id registers
  std::vector<std::tuple<int, uint32_t, uint64_t, uint64_t>> trace;
  std::vector<float> out;
  bool operator==(const Outcome &o) const {
    return std::tie(status, why, counts, trace, out) ==
           std::tie(o.status, o.why, o.counts, o.trace, o.out);
  }
};

Outcome runAt(unsigned threads, const std::vector<kiln_tiu_cmd> &tiu,
              const std::vector<kiln_gdma_cmd> &gdma, const std::vector<float> &input,
              size_t out_count, bool strict = true) {
  chip::setCmodelThreads(threads);
  Device dev(kDeviceDdrBytes);
  dev.setStrictSync(strict);
  putDdr(dev, kWindowOffset + kIn, input);
  std::vector<cmodel::TraceEvent> trace;
  dev.traceInto(&trace);
  Outcome o{runQueues(dev, tiu, gdma), dev.faultReason(), {}, {}, {}};
  const cmodel::Stats &s = dev.stats();
  o.counts = {s.cycles, s.tiu_busy_cycles, s.gdma_busy_cycles, s.tiu_commands, s.gdma_commands,
              s.ddr_read_bytes, s.ddr_write_bytes, dev.read_reg(KILN_REG_TIU_DONE_ID),
              dev.read_reg(KILN_REG_GDMA_DONE_ID)};
  for (const cmodel::TraceEvent &e : trace)
    o.trace.emplace_back(int(e.engine), e.index, e.start, e.cycles);
  o.out = getDdr(dev, kWindowOffset + kOut, out_count);
  return o;
}

// Eight tiles: load k, relu k (waits for load k), store k (waits for relu
// k), the loads running ahead of the stores; every tile in buffers of its own.
TEST(DeviceSync, ConcurrentEnginesGiveTheSameBitsStatsAndTrace) {
  constexpr uint32_t kTiles = 8;
  const uint64_t tile_bytes = kSmall.count() * 4;
  std::vector<kiln_tiu_cmd> tiu;
  std::vector<kiln_gdma_cmd> gdma;
  auto load = [&](uint32_t k) {
    gdma.push_back(gdmaCmd(uint32_t(gdma.size() + 1), 0, KILN_GDMA_DDR_TO_LMEM, kSmall,
                           kIn + k * tile_bytes, k * 1024));
    tiu.push_back(reluCmd(k + 1, uint32_t(gdma.size()), k * 1024, 32768 + k * 1024, kSmall));
  };
  auto store = [&](uint32_t k) {
    gdma.push_back(gdmaCmd(uint32_t(gdma.size() + 1), k + 1, KILN_GDMA_LMEM_TO_DDR, kSmall,
                           32768 + k * 1024, kOut + k * tile_bytes));
  };
  load(0);
  for (uint32_t k = 0; k < kTiles; ++k) {
    if (k + 1 < kTiles)
      load(k + 1);
    store(k);
  }
  const auto input = randomFloats(kTiles * kSmall.count(), 5);
  const unsigned saved = chip::cmodelThreads();
  const Outcome one = runAt(1, tiu, gdma, input, input.size());
  ASSERT_EQ(one.status, KILN_OK) << one.why;
  EXPECT_EQ(one.out, reluOf(input));
  for (unsigned threads : {2u, 3u})
    for (int rep = 0; rep < 20; ++rep)
      EXPECT_TRUE(runAt(threads, tiu, gdma, input, input.size()) == one) << threads;
  chip::setCmodelThreads(saved);
}

// A GDMA record faults while the TIU runs a long conv: the commands before
// it in start order complete, none after it, at any thread count.
TEST(DeviceSync, FaultStopsBothEnginesAtTheSameCommand) {
  kiln_tiu_cmd busy = convCmd(KILN_DTYPE_F32);
  busy.in0.addr = 16384, busy.in1.addr = 24576, busy.out.addr = 65536;
  const std::vector<kiln_tiu_cmd> tiu = {busy, reluCmd(2, 1, 0, 8192, kSmall)};
  const std::vector<kiln_gdma_cmd> gdma = {
      gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kSmall, kIn, 0),
      gdmaCmd(2, 0, KILN_GDMA_LMEM_TO_DDR, kSmall, 0, kDeviceDdrBytes), // outside
      gdmaCmd(3, 2, KILN_GDMA_LMEM_TO_DDR, kSmall, 8192, kOut)};
  const auto input = randomFloats(kSmall.count(), 6);
  const unsigned saved = chip::cmodelThreads();
  const Outcome one = runAt(1, tiu, gdma, input, kSmall.count());
  EXPECT_EQ(one.status, KILN_ERR_DEVICE_FAULT);
  EXPECT_EQ(one.why.rfind("gdma[1]: ", 0), 0u) << one.why;
  // Started: the load, the conv and the bad store; completed: the first two.
  EXPECT_EQ(one.trace.size(), 3u);
  EXPECT_EQ(one.counts[3], 1u); // TIU commands
  EXPECT_EQ(one.counts[4], 1u); // GDMA commands
  for (unsigned threads : {2u, 3u})
    for (int rep = 0; rep < 20; ++rep)
      EXPECT_TRUE(runAt(threads, tiu, gdma, input, kSmall.count()) == one) << threads;
  chip::setCmodelThreads(saved);
}

// Commands the sync ids let overlap that share LMEM: strict sync faults
// before anything runs; without it they run in start order, as on one thread.
TEST(DeviceSync, LmemRacesFaultWhenStrictElseRunInStartOrder) {
  const std::vector<kiln_gdma_cmd> gdma = {
      gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kSmall, kIn, 0),
      gdmaCmd(2, 1, KILN_GDMA_LMEM_TO_DDR, kSmall, 8192, kOut)};
  const std::vector<kiln_tiu_cmd> racy = {reluCmd(1, 0, 0, 8192, kSmall)}; // reads the load's
  const auto input = randomFloats(kSmall.count(), 7);
  const unsigned saved = chip::cmodelThreads();
  const Outcome strict = runAt(2, racy, gdma, input, kSmall.count());
  EXPECT_EQ(strict.status, KILN_ERR_DEVICE_FAULT);
  EXPECT_EQ(strict.why.rfind("tiu[0] and gdma[0]: ", 0), 0u) << strict.why;
  EXPECT_TRUE(strict.trace.empty());
  const Outcome one = runAt(1, racy, gdma, input, kSmall.count(), false);
  ASSERT_EQ(one.status, KILN_OK);
  EXPECT_TRUE(runAt(3, racy, gdma, input, kSmall.count(), false) == one);
  // Reading different bytes of the same banks is no race.
  const std::vector<kiln_tiu_cmd> apart = {reluCmd(1, 0, 1024, 8192, kSmall)};
  EXPECT_EQ(runAt(2, apart, gdma, input, kSmall.count()).status, KILN_OK);
  chip::setCmodelThreads(saved);
}

} // namespace
} // namespace kiln::test
