// The register-level board driver (kiln_board.h) on the cmodel's register
// file: init checks, the submission protocol, faults, timeouts and resets,
// memory bounds, the MMIO io, and kiln_bmodel_query_memory against real loads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "bmodel_builder.h"
#include "cmodel_harness.h"
#include "kiln/abi/regs.h"
#include "kiln/abi/version.h"
#include "kiln/rt/kiln_board.h"
#include "kiln/rt/runtime.hpp"

namespace kiln::test {
namespace {

using cmodel::Device;

// z = relu(x + k) in one group; k is a coefficient.
const Shape kShape{1, 3, 4, 5};
constexpr uint64_t kBytes = 60 * 4;
constexpr uint64_t kK = 0, kX = 4096, kZ = 8192; // DDR offsets
constexpr uint32_t kTimeout = 1000000;

const std::vector<float> &coefficients() {
  static const std::vector<float> k = randomFloats(kShape.count(), 3);
  return k;
}

TensorSpec tensor(const char *name, uint64_t offset) {
  TensorSpec t;
  t.name = name;
  t.shape = {1, 3, 4, 5};
  t.ddr_offset = offset;
  return t;
}

// neuron_size: at least 8192 (z ends at kZ + kBytes).
std::vector<uint8_t> addReluBmodel(uint64_t neuron_size = 8192) {
  NetSpec net;
  net.name = "add_relu";
  net.coeff_size = 4096;
  net.neuron_size = neuron_size;
  net.coeff.resize(kBytes);
  std::memcpy(net.coeff.data(), coefficients().data(), kBytes);
  net.inputs = {tensor("x", kX)};
  net.outputs = {tensor("z", kZ)};
  net.tensors = {tensor("k", kK), tensor("x", kX), tensor("z", kZ)};
  GroupSpec g;
  g.gdma = {gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kShape, kX, 0),
            gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, kShape, kK, 1024),
            gdmaCmd(3, 2, KILN_GDMA_LMEM_TO_DDR, kShape, 4096, kZ)};
  kiln_tiu_cmd sum = tiuCmd(1, 2, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  sum.out = lmemOperand(2048, kShape);
  sum.in0 = lmemOperand(0, kShape);
  sum.in1 = lmemOperand(1024, kShape);
  kiln_tiu_cmd act = tiuCmd(2, 0, KILN_TIU_ACTIVE, KILN_ACT_RELU);
  act.out = lmemOperand(4096, kShape);
  act.in0 = lmemOperand(2048, kShape);
  g.tiu = {sum, act};
  net.groups = {g};
  ModelSpec model;
  model.nets = {net};
  return buildBmodel(model);
}

std::vector<float> expected(const std::vector<float> &x) {
  std::vector<float> z(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    z[i] = std::max(x[i] + coefficients()[i], 0.0f);
  return z;
}

// An io between the driver and the cmodel: logs register writes, can
// override what registers read, and can run a fake clock.
struct Intercept {
  explicit Intercept(Device &dev) : inner(dev.boardIo()) {}

  kiln_board_io io() {
    kiln_board_io io = inner;
    io.reg_ctx = this;
    io.read_reg = [](void *c, uint32_t offset) {
      auto *self = static_cast<Intercept *>(c);
      self->reads[offset]++;
      auto it = self->override_reads.find(offset);
      return it != self->override_reads.end() ? it->second
                                              : self->inner.read_reg(self->inner.reg_ctx, offset);
    };
    io.write_reg = [](void *c, uint32_t offset, uint32_t value) {
      auto *self = static_cast<Intercept *>(c);
      self->writes.emplace_back(offset, value);
      self->inner.write_reg(self->inner.reg_ctx, offset, value);
    };
    if (fake_clock) {
      io.clock_ctx = this;
      io.now_us = [](void *c) {
        auto *self = static_cast<Intercept *>(c);
        return self->now += self->tick;
      };
    }
    return io;
  }

  kiln_board_io inner;
  std::map<uint32_t, uint32_t> override_reads;
  std::map<uint32_t, int> reads;
  std::vector<std::pair<uint32_t, uint32_t>> writes;
  // Cache maintenance calls: ('d' for device | 'c' for cpu, address, size).
  std::vector<std::tuple<char, const void *, uint64_t>> syncs;
  bool fake_clock = false;
  uint64_t now = 1000, tick = 100; // every clock reading advances 100 us
};

class BoardDriverTest : public ::testing::Test {
protected:
  kiln_status init(Intercept &icpt) {
    kiln_board_io io = icpt.io();
    return kiln_board_init(&board, &io, &hal);
  }

  Device dev{4u << 20};
  kiln_board board{};
  kiln_hal hal{};
};

TEST_F(BoardDriverTest, InitChecksChipAndAbiVersion) {
  Intercept icpt(dev);
  icpt.override_reads[KILN_REG_CHIP_ID] = 0x1684; // BM1684, not BM1684X
  EXPECT_EQ(init(icpt), KILN_ERR_CHIP_MISMATCH);
  icpt.override_reads.clear();
  icpt.override_reads[KILN_REG_ABI_VERSION] = uint32_t{KILN_ABI_VERSION_MAJOR + 1} << 16;
  EXPECT_EQ(init(icpt), KILN_ERR_ABI_MISMATCH);
  // A newer minor version only adds what the driver may ignore.
  icpt.override_reads[KILN_REG_ABI_VERSION] =
      uint32_t{KILN_ABI_VERSION_MAJOR} << 16 | (KILN_ABI_VERSION_MINOR + 1);
  EXPECT_EQ(init(icpt), KILN_OK);
  EXPECT_EQ(hal.ctx, &board);
  EXPECT_EQ(hal.mem_base, Device::kDdrBase);
  EXPECT_EQ(hal.mem_size, dev.ddr().size());
}

TEST_F(BoardDriverTest, InitRejectsAnIncompleteIo) {
  kiln_board_io good = dev.boardIo();
  auto tryIo = [&](void (*edit)(kiln_board_io &)) {
    kiln_board_io io = good;
    edit(io);
    return kiln_board_init(&board, &io, &hal);
  };
  EXPECT_EQ(tryIo([](kiln_board_io &io) { io.read_reg = nullptr; }), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(tryIo([](kiln_board_io &io) { io.write_reg = nullptr; }), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(tryIo([](kiln_board_io &io) { io.now_us = nullptr; }), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(tryIo([](kiln_board_io &io) { io.mem = nullptr; }), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(tryIo([](kiln_board_io &io) { io.mem_size = UINT64_MAX; }), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_board_init(&board, nullptr, &hal), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_board_init(&board, &good, nullptr), KILN_ERR_INVALID_ARGUMENT);
  // The HAL's entry points refuse a board that was never initialised.
  ASSERT_EQ(kiln_board_init(&board, &good, &hal), KILN_OK);
  kiln_board blank{};
  uint8_t byte = 0;
  kiln_submit_desc desc{};
  EXPECT_EQ(hal.write_mem(&blank, Device::kDdrBase, &byte, 1), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal.read_mem(&blank, Device::kDdrBase, &byte, 1), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal.submit(&blank, &desc), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal.wait(&blank, 0), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal.reset(&blank), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal.submit(hal.ctx, nullptr), KILN_ERR_INVALID_ARGUMENT);
}

TEST_F(BoardDriverTest, InitResetsABusyDevice) {
  dev.injectHang();
  dev.write_reg(KILN_REG_DOORBELL, 1);
  ASSERT_EQ(dev.read_reg(KILN_REG_STATUS), KILN_STATUS_BUSY);
  Intercept icpt(dev);
  ASSERT_EQ(init(icpt), KILN_OK);
  EXPECT_EQ(dev.read_reg(KILN_REG_STATUS), KILN_STATUS_IDLE);
  EXPECT_EQ(dev.stats().soft_resets, 1u);
}

TEST_F(BoardDriverTest, SubmitProgramsTheQueuesThenRingsTheDoorbell) {
  Intercept icpt(dev);
  ASSERT_EQ(init(icpt), KILN_OK);
  icpt.writes.clear();
  kiln_submit_desc desc{};
  desc.ddr_base = Device::kDdrBase + 0x12345000ull;
  desc.ddr_size = 0x3000;
  desc.tiu_queue_addr = Device::kDdrBase + 0x1000;
  desc.gdma_queue_addr = Device::kDdrBase + 0x2000;
  desc.tiu_count = 0;
  desc.gdma_count = 0;
  ASSERT_EQ(hal.submit(hal.ctx, &desc), KILN_OK);

  std::map<uint32_t, uint32_t> last;
  for (auto [offset, value] : icpt.writes)
    last[offset] = value;
  EXPECT_EQ(last[KILN_REG_DDR_BASE_LO], 0x12345000u);
  EXPECT_EQ(last[KILN_REG_DDR_BASE_HI], 1u);
  EXPECT_EQ(last[KILN_REG_DDR_SIZE_LO], 0x3000u);
  EXPECT_EQ(last[KILN_REG_DDR_SIZE_HI], 0u);
  EXPECT_EQ(last[KILN_REG_TIU_QUEUE_LO], 0x1000u);
  EXPECT_EQ(last[KILN_REG_TIU_QUEUE_HI], 1u);
  EXPECT_EQ(last[KILN_REG_GDMA_QUEUE_LO], 0x2000u);
  EXPECT_EQ(last[KILN_REG_GDMA_QUEUE_HI], 1u);
  EXPECT_EQ(last.count(KILN_REG_TIU_COUNT), 1u);
  EXPECT_EQ(last.count(KILN_REG_GDMA_COUNT), 1u);
  // Stale interrupt bits are cleared before the doorbell, which comes last.
  ASSERT_GE(icpt.writes.size(), 2u);
  EXPECT_EQ(icpt.writes.back(), std::make_pair(uint32_t{KILN_REG_DOORBELL}, 1u));
  EXPECT_EQ(icpt.writes[icpt.writes.size() - 2],
            std::make_pair(uint32_t{KILN_REG_IRQ_STATUS}, 3u));
  // The window lies outside the 4 MiB device: the cmodel faults it.
  EXPECT_EQ(hal.wait(hal.ctx, kTimeout), KILN_ERR_DEVICE_FAULT);
  EXPECT_EQ(dev.read_reg(KILN_REG_IRQ_STATUS), 0u) << "wait acknowledges the interrupt";
  EXPECT_EQ(hal.wait(hal.ctx, kTimeout), KILN_ERR_BAD_STATE) << "nothing outstanding";
}

TEST_F(BoardDriverTest, RunsANetThroughTheRuntime) {
  Intercept icpt(dev);
  ASSERT_EQ(init(icpt), KILN_OK);
  rt::Runtime runtime;
  ASSERT_EQ(runtime.init(hal), KILN_OK);
  const auto file = addReluBmodel();
  rt::Net net;
  ASSERT_EQ(net.load(runtime, file.data(), file.size()), KILN_OK);
  for (uint32_t seed : {1u, 2u}) {
    const auto x = randomFloats(kShape.count(), seed);
    ASSERT_EQ(net.setInput(0, x.data(), kBytes), KILN_OK);
    icpt.writes.clear();
    ASSERT_EQ(net.run(kTimeout), KILN_OK) << dev.faultReason();
    std::vector<float> z(kShape.count());
    ASSERT_EQ(net.getOutput(0, z.data(), kBytes), KILN_OK);
    EXPECT_EQ(z, expected(x));
    // One submission: the doorbell rung once, through the registers.
    EXPECT_EQ(std::count(icpt.writes.begin(), icpt.writes.end(),
                         std::make_pair(uint32_t{KILN_REG_DOORBELL}, 1u)),
              1);
  }
  EXPECT_EQ(dev.stats().submissions, 2u);
  EXPECT_EQ(dev.stats().tiu_commands, 4u);
}

TEST_F(BoardDriverTest, FaultReturnsTheErrorRegister) {
  Intercept icpt(dev);
  ASSERT_EQ(init(icpt), KILN_OK);
  kiln_submit_desc desc{Device::kDdrBase, 4096, Device::kDdrBase, Device::kDdrBase, 0, 0, KILN_ISA_KILN, 0, 0, 0};
  dev.injectFault(KILN_ERR_BAD_COMMAND);
  ASSERT_EQ(hal.submit(hal.ctx, &desc), KILN_OK);
  EXPECT_EQ(hal.wait(hal.ctx, kTimeout), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(dev.faultReason(), "injected fault");

  // ERROR values that are no device status read as a plain device fault.
  for (uint32_t bogus : {0u, 0xffffffffu, 0x0500u}) {
    dev.injectFault(KILN_ERR_DEVICE_FAULT);
    icpt.override_reads[KILN_REG_ERROR] = bogus;
    ASSERT_EQ(hal.submit(hal.ctx, &desc), KILN_OK);
    EXPECT_EQ(hal.wait(hal.ctx, kTimeout), KILN_ERR_DEVICE_FAULT) << bogus;
  }
  icpt.override_reads.clear();
  ASSERT_EQ(hal.submit(hal.ctx, &desc), KILN_OK);
  EXPECT_EQ(hal.wait(hal.ctx, kTimeout), KILN_OK) << "the fault was for one submission";
  // regs.h's queues are kiln's records: BM1684X streams are refused, not misread.
  EXPECT_EQ(hal.isa, uint32_t(KILN_ISA_KILN));
  desc.isa = KILN_ISA_BM1684X;
  EXPECT_EQ(hal.submit(hal.ctx, &desc), KILN_ERR_UNSUPPORTED);
}

TEST_F(BoardDriverTest, WaitTimesOutOnAHangUntilReset) {
  Intercept icpt(dev);
  icpt.fake_clock = true;
  ASSERT_EQ(init(icpt), KILN_OK);
  kiln_submit_desc desc{Device::kDdrBase, 4096, Device::kDdrBase, Device::kDdrBase, 0, 0, KILN_ISA_KILN, 0, 0, 0};
  dev.injectHang();
  ASSERT_EQ(hal.submit(hal.ctx, &desc), KILN_OK);
  icpt.reads.clear();
  uint64_t start = icpt.now;
  EXPECT_EQ(hal.wait(hal.ctx, 5000), KILN_ERR_TIMEOUT);
  // Polled until the clock passed 5 ms, not much longer.
  EXPECT_GE(icpt.now - start, 5000u);
  EXPECT_LE(icpt.now - start, 5000u + 2 * icpt.tick);
  EXPECT_GE(icpt.reads[KILN_REG_STATUS], 40);
  // Still hung: a second wait times out again, a new submission is refused.
  EXPECT_EQ(hal.wait(hal.ctx, 0), KILN_ERR_TIMEOUT);
  EXPECT_EQ(hal.submit(hal.ctx, &desc), KILN_ERR_BAD_STATE);
  uint64_t resets = dev.stats().soft_resets;
  ASSERT_EQ(hal.reset(hal.ctx), KILN_OK);
  EXPECT_EQ(dev.stats().soft_resets, resets + 1);
  EXPECT_EQ(dev.read_reg(KILN_REG_STATUS), KILN_STATUS_IDLE);
  ASSERT_EQ(hal.submit(hal.ctx, &desc), KILN_OK);
  EXPECT_EQ(hal.wait(hal.ctx, 5000), KILN_OK);
}

TEST_F(BoardDriverTest, ResetTimesOutWhenTheDeviceStaysBusy) {
  Intercept icpt(dev);
  icpt.fake_clock = true;
  ASSERT_EQ(init(icpt), KILN_OK);
  icpt.override_reads[KILN_REG_STATUS] = KILN_STATUS_BUSY;
  uint64_t start = icpt.now;
  EXPECT_EQ(hal.reset(hal.ctx), KILN_ERR_TIMEOUT);
  EXPECT_GE(icpt.now - start, uint64_t{KILN_BOARD_RESET_TIMEOUT_US});
  // init resets too, and reports the same.
  kiln_board other{};
  kiln_hal other_hal{};
  kiln_board_io io = icpt.io();
  EXPECT_EQ(kiln_board_init(&other, &io, &other_hal), KILN_ERR_TIMEOUT);
}

TEST_F(BoardDriverTest, MemoryAccessStaysInTheWindow) {
  Intercept icpt(dev);
  kiln_board_io io = icpt.io();
  // A window of 64 KiB at DDR offset 1 MiB, with cache maintenance hooks.
  uint8_t *window = dev.ddr().data() + (1u << 20);
  io.mem_base = Device::kDdrBase + (1u << 20);
  io.mem_size = 64u << 10;
  io.mem = window;
  io.sync_for_device = [](void *c, const void *p, uint64_t n) {
    static_cast<Intercept *>(c)->syncs.emplace_back('d', p, n);
  };
  io.sync_for_cpu = [](void *c, const void *p, uint64_t n) {
    static_cast<Intercept *>(c)->syncs.emplace_back('c', p, n);
  };
  ASSERT_EQ(kiln_board_init(&board, &io, &hal), KILN_OK);
  const uint64_t base = io.mem_base, end = base + io.mem_size;
  uint8_t buf[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, back[16] = {};
  ASSERT_EQ(hal.write_mem(hal.ctx, end - 16, buf, 16), KILN_OK);
  EXPECT_EQ(std::memcmp(window + io.mem_size - 16, buf, 16), 0);
  ASSERT_EQ(hal.read_mem(hal.ctx, end - 16, back, 16), KILN_OK);
  EXPECT_EQ(std::memcmp(back, buf, 16), 0);
  // Cleaned after the CPU wrote, invalidated before it read.
  using Sync = std::tuple<char, const void *, uint64_t>;
  const void *at = window + io.mem_size - 16;
  EXPECT_EQ(icpt.syncs, (std::vector<Sync>{Sync{'d', at, 16}, Sync{'c', at, 16}}));

  EXPECT_EQ(hal.write_mem(hal.ctx, end - 15, buf, 16), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal.write_mem(hal.ctx, base - 1, buf, 1), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal.read_mem(hal.ctx, end, back, 1), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal.read_mem(hal.ctx, base + 8, back, UINT64_MAX - 4), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal.write_mem(hal.ctx, base, nullptr, 1), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hal.write_mem(hal.ctx, end, nullptr, 0), KILN_OK); // empty range at the end
  // Nothing outside the window was touched.
  EXPECT_EQ(dev.ddr()[(1u << 20) - 1], 0);
  EXPECT_EQ(dev.ddr()[(1u << 20) + (64u << 10)], 0);
}

// kiln_board_mmio_io over plain memory standing in for the register block.
TEST(BoardMmio, AccessesTheRegisterBlockAsWords) {
  static uint32_t regs[KILN_REG_SPACE_BYTES / 4];
  static uint8_t ddr[8192];
  regs[KILN_REG_CHIP_ID / 4] = KILN_CHIP_ID_BM1684X;
  regs[KILN_REG_ABI_VERSION / 4] = uint32_t{KILN_ABI_VERSION_MAJOR} << 16;
  regs[KILN_REG_STATUS / 4] = KILN_STATUS_IDLE;
  auto clock = [](void *c) { return ++*static_cast<uint64_t *>(c); };
  uint64_t ticks = 0;
  kiln_board_io io{};
  kiln_board_mmio_io(regs, ddr, 0x80000000ull, sizeof ddr, clock, &ticks, &io);
  EXPECT_EQ(io.mem, ddr);
  EXPECT_EQ(io.mem_base, 0x80000000ull);
  EXPECT_EQ(io.mem_size, sizeof ddr);
  EXPECT_EQ(io.sync_for_device, nullptr);
  io.write_reg(io.reg_ctx, KILN_REG_GDMA_COUNT, 0xabcd);
  EXPECT_EQ(regs[KILN_REG_GDMA_COUNT / 4], 0xabcdu);
  EXPECT_EQ(io.read_reg(io.reg_ctx, KILN_REG_CHIP_ID), KILN_CHIP_ID_BM1684X);

  kiln_board board{};
  kiln_hal hal{};
  ASSERT_EQ(kiln_board_init(&board, &io, &hal), KILN_OK);
  EXPECT_EQ(regs[KILN_REG_CTRL / 4], KILN_CTRL_SOFT_RESET);
  kiln_submit_desc desc{0x80001000ull, 4096, 0x80000000ull, 0x80000400ull, 2, 3, KILN_ISA_KILN, 0, 0, 0};
  ASSERT_EQ(hal.submit(hal.ctx, &desc), KILN_OK);
  EXPECT_EQ(regs[KILN_REG_DOORBELL / 4], 1u);
  EXPECT_EQ(regs[KILN_REG_DDR_BASE_LO / 4], 0x80001000u);
  EXPECT_EQ(regs[KILN_REG_TIU_COUNT / 4], 2u);
  EXPECT_EQ(regs[KILN_REG_GDMA_QUEUE_LO / 4], 0x80000400u);
  regs[KILN_REG_STATUS / 4] = KILN_STATUS_DONE; // the "device" completes
  EXPECT_EQ(hal.wait(hal.ctx, 100), KILN_OK);
  EXPECT_GT(ticks, 0u);
}

// ---- kiln_bmodel_query_memory --------------------------------------------------

// A neuron region that does not end on 4 KiB: the next net starts aligned,
// so the figure includes the padding.
class QueryMemory : public ::testing::TestWithParam<uint64_t> {};
INSTANTIATE_TEST_SUITE_P(NeuronSizes, QueryMemory, ::testing::Values(8192u, 8192u + 100u));

TEST_P(QueryMemory, MatchesWhatLoadingTakes) {
  const uint64_t neuron = GetParam();
  const auto file = addReluBmodel(neuron);
  kiln_memory_requirements req{};
  ASSERT_EQ(kiln_bmodel_query_memory(file.data(), file.size(), 0, &req), KILN_OK);
  EXPECT_EQ(req.coeff_bytes, 4096u);
  EXPECT_EQ(req.neuron_bytes, neuron);
  EXPECT_GE(req.command_bytes, 2 * sizeof(kiln_tiu_cmd) + 3 * sizeof(kiln_gdma_cmd));
  EXPECT_EQ(req.command_bytes % 4096, 0u);
  EXPECT_EQ(req.device_bytes, req.command_bytes + 4096u + (neuron + 4095) / 4096 * 4096);
  EXPECT_EQ(req.runtime_storage_bytes, kiln_runtime_storage_size());
  EXPECT_EQ(req.net_storage_bytes, kiln_net_storage_size());

  // A board window of exactly device_bytes holds the net; 4 KiB less does not;
  // n nets need n times the figure.
  Device dev(1u << 20);
  for (uint32_t nets : {1u, 2u, 3u}) {
    for (uint64_t window : {nets * req.device_bytes, nets * req.device_bytes - 4096}) {
      kiln_board_io io = dev.boardIo();
      io.mem_size = window;
      kiln_board board;
      kiln_hal hal;
      ASSERT_EQ(kiln_board_init(&board, &io, &hal), KILN_OK);
      rt::Runtime runtime;
      ASSERT_EQ(runtime.init(hal), KILN_OK);
      std::vector<rt::Net> loaded(nets);
      kiln_status last = KILN_OK;
      for (auto &net : loaded)
        if ((last = net.load(runtime, file.data(), file.size())) != KILN_OK)
          break;
      EXPECT_EQ(last, window == nets * req.device_bytes ? KILN_OK : KILN_ERR_NO_DEVICE_MEMORY)
          << nets << " nets in " << window << " bytes";
      while (!loaded.empty()) // unload in reverse order
        loaded.pop_back();
    }
  }
}

TEST(QueryMemoryErrors, RejectsWhatLoadingRejects) {
  auto file = addReluBmodel();
  kiln_memory_requirements req{};
  EXPECT_EQ(kiln_bmodel_query_memory(file.data(), file.size(), 1, &req), KILN_ERR_NOT_FOUND);
  EXPECT_EQ(kiln_bmodel_query_memory(file.data(), file.size(), 0, nullptr),
            KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_bmodel_query_memory(nullptr, file.size(), 0, &req), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_bmodel_query_memory(file.data(), file.size() - 1, 0, &req), KILN_ERR_TRUNCATED);
  file[file.size() - 1] ^= 1;
  EXPECT_EQ(kiln_bmodel_query_memory(file.data(), file.size(), 0, &req), KILN_ERR_BAD_CHECKSUM);
}

// The core compares the FlatBuffer identifier itself (memcmp, no strncmp):
// each of its 4 bytes still matters, under a valid checksum.
TEST(QueryMemoryErrors, FlatBufferIdentifierIsChecked) {
  const auto good = addReluBmodel();
  kiln_memory_requirements req;
  ASSERT_EQ(kiln_bmodel_query_memory(good.data(), good.size(), 0, &req), KILN_OK);
  const kiln_bmodel_header h = readHeader(good);
  for (uint64_t i = 0; i < 4; ++i) {
    auto file = good;
    file[h.flatbuffer_offset + 4 + i] ^= 0x20;
    updateChecksum(file);
    EXPECT_EQ(kiln_bmodel_query_memory(file.data(), file.size(), 0, &req),
              KILN_ERR_BAD_FLATBUFFER)
        << "identifier byte " << i;
  }
}

} // namespace
} // namespace kiln::test
