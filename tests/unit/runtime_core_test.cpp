// The freestanding runtime core: loading and running small bmodels on the
// cmodel, and rejecting every kind of bad file with its specific status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <random>
#include <set>

#include "bmodel_builder.h"
#include "cmodel_harness.h"
#include "kiln/abi/regs.h"
#include "kiln/rt/runtime.hpp"

namespace kiln::test {
namespace {

using cmodel::Device;
using rt::Net;
using rt::Runtime;

// z = relu(x + k) in two groups; k is a coefficient, y = x + k is kept in DDR.
const Shape kShape{1, 3, 4, 5};
constexpr uint64_t kBytes = 60 * 4;
constexpr uint64_t kCoeffSize = 4096, kNeuronSize = 12288;
constexpr uint64_t kK = 0, kX = 4096, kY = 8192, kZ = 12288; // DDR offsets
constexpr uint32_t kTimeout = 1000000;

const std::vector<float> &coefficients() {
  static const std::vector<float> k = randomFloats(kShape.count(), 42);
  return k;
}

TensorSpec tensor(const char *name, uint64_t offset) {
  TensorSpec t;
  t.name = name;
  t.shape = {1, 3, 4, 5};
  t.ddr_offset = offset;
  return t;
}

ModelSpec addReluModel() {
  NetSpec net;
  net.name = "add_relu";
  net.coeff_size = kCoeffSize;
  net.neuron_size = kNeuronSize;
  const auto &k = coefficients();
  net.coeff.resize(kBytes);
  std::memcpy(net.coeff.data(), k.data(), kBytes);
  net.inputs = {tensor("x", kX)};
  net.outputs = {tensor("z", kZ)};
  net.tensors = {tensor("k", kK), tensor("x", kX), tensor("y", kY), tensor("z", kZ)};

  GroupSpec add;
  add.gdma = {gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kShape, kX, 0),
              gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, kShape, kK, 1024),
              gdmaCmd(3, 1, KILN_GDMA_LMEM_TO_DDR, kShape, 2048, kY)};
  kiln_tiu_cmd sum = tiuCmd(1, 2, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  sum.out = lmemOperand(2048, kShape);
  sum.in0 = lmemOperand(0, kShape);
  sum.in1 = lmemOperand(1024, kShape);
  add.tiu = {sum};

  GroupSpec relu;
  relu.gdma = {gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kShape, kY, 0),
               gdmaCmd(2, 1, KILN_GDMA_LMEM_TO_DDR, kShape, 4096, kZ)};
  kiln_tiu_cmd act = tiuCmd(1, 1, KILN_TIU_ACTIVE, KILN_ACT_RELU);
  act.out = lmemOperand(4096, kShape);
  act.in0 = lmemOperand(0, kShape);
  relu.tiu = {act};

  net.groups = {add, relu};
  ModelSpec model;
  model.nets = {net};
  return model;
}

class RuntimeCoreTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_EQ(runtime.init(dev.hal()), KILN_OK); }

  // Loads (and, as the Net goes away, unloads) a file.
  kiln_status load(const std::vector<uint8_t> &file) {
    Net net;
    return net.load(runtime, file.data(), file.size());
  }
  kiln_status load(const ModelSpec &spec) { return load(buildBmodel(spec)); }
  // Loads the model after `edit` changed it.
  kiln_status loadEdited(const std::function<void(ModelSpec &)> &edit) {
    ModelSpec spec = addReluModel();
    edit(spec);
    return load(spec);
  }
  NetSpec &net(ModelSpec &spec) { return spec.nets[0]; }

  Device dev{16u << 20};
  Runtime runtime;
};

// ---- a good model --------------------------------------------------------------

TEST_F(RuntimeCoreTest, LoadsRunsAndReadsBack) {
  const auto file = buildBmodel(addReluModel());
  Net net;
  ASSERT_EQ(net.load(runtime, file.data(), file.size()), KILN_OK);

  ASSERT_EQ(net.inputCount(), 1u);
  ASSERT_EQ(net.outputCount(), 1u);
  ASSERT_EQ(net.tensorCount(), 4u);
  kiln_tensor_info info;
  ASSERT_EQ(net.inputInfo(0, &info), KILN_OK);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, uint32_t(KILN_DTYPE_F32));
  ASSERT_EQ(info.ndim, 4u);
  EXPECT_EQ(info.shape[3], 5);
  EXPECT_EQ(info.bytes, kBytes);
  EXPECT_EQ(info.ddr_offset, kX);
  EXPECT_EQ(info.scale, 1.0f);
  ASSERT_EQ(net.tensorInfo(2, &info), KILN_OK);
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(net.outputInfo(1, &info), KILN_ERR_NOT_FOUND);

  const auto x = randomFloats(kShape.count(), 7);
  ASSERT_EQ(net.setInput(0, x.data(), kBytes), KILN_OK);
  kiln_run_stats stats;
  ASSERT_EQ(net.run(kTimeout, &stats), KILN_OK) << dev.faultReason();
  EXPECT_EQ(stats.groups_run, 2u);
  EXPECT_EQ(stats.tiu_commands, 2u);
  EXPECT_EQ(stats.gdma_commands, 5u);
  EXPECT_EQ(dev.stats().submissions, 2u);

  std::vector<float> y(kShape.count()), z(kShape.count()), want_y(x.size()), want_z(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    want_y[i] = x[i] + coefficients()[i];
    want_z[i] = std::max(want_y[i], 0.0f);
  }
  ASSERT_EQ(net.getOutput(0, z.data(), kBytes), KILN_OK);
  EXPECT_EQ(z, want_z);
  ASSERT_EQ(net.readTensor(2, y.data(), kBytes), KILN_OK);
  EXPECT_EQ(y, want_y);

  // A second inference with other inputs.
  const auto x2 = randomFloats(kShape.count(), 8);
  ASSERT_EQ(net.setInput(0, x2.data(), kBytes), KILN_OK);
  ASSERT_EQ(net.run(kTimeout), KILN_OK);
  ASSERT_EQ(net.getOutput(0, z.data(), kBytes), KILN_OK);
  EXPECT_EQ(z[0], std::max(x2[0] + coefficients()[0], 0.0f));
}

TEST_F(RuntimeCoreTest, TensorCopiesCheckSizesAndIndices) {
  const auto file = buildBmodel(addReluModel());
  Net net;
  ASSERT_EQ(net.load(runtime, file.data(), file.size()), KILN_OK);
  std::vector<uint8_t> buf(kBytes + 4);
  EXPECT_EQ(net.setInput(0, buf.data(), kBytes - 4), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(net.setInput(0, buf.data(), kBytes + 4), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(net.setInput(1, buf.data(), kBytes), KILN_ERR_NOT_FOUND);
  EXPECT_EQ(net.setInput(0, nullptr, kBytes), KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(net.getOutput(0, buf.data(), kBytes - 1), KILN_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(net.getOutput(0, buf.data(), kBytes + 4), KILN_OK);
  EXPECT_EQ(net.readTensor(4, buf.data(), kBytes), KILN_ERR_NOT_FOUND);
  EXPECT_EQ(kiln_net_run(nullptr, kTimeout, nullptr), KILN_ERR_INVALID_ARGUMENT);
}

TEST_F(RuntimeCoreTest, DeviceMemoryIsAStack) {
  const auto file = buildBmodel(addReluModel());
  Net a, b;
  ASSERT_EQ(a.load(runtime, file.data(), file.size()), KILN_OK);
  ASSERT_EQ(b.load(runtime, file.data(), file.size()), KILN_OK);
  EXPECT_EQ(a.unload(), KILN_ERR_BAD_STATE); // b sits on top of it
  EXPECT_EQ(b.unload(), KILN_OK);
  EXPECT_EQ(a.unload(), KILN_OK);
  EXPECT_EQ(a.load(runtime, file.data(), file.size()), KILN_OK);
  EXPECT_EQ(a.load(runtime, file.data(), file.size()), KILN_ERR_BAD_STATE); // already loaded
}

TEST_F(RuntimeCoreTest, RunsFromTheUploadedCopyAtAlignedAddresses) {
  const auto file = buildBmodel(addReluModel());
  Net net;
  ASSERT_EQ(net.load(runtime, file.data(), file.size()), KILN_OK);
  const auto x = randomFloats(kShape.count(), 9);
  ASSERT_EQ(net.setInput(0, x.data(), kBytes), KILN_OK);
  ASSERT_EQ(net.run(kTimeout), KILN_OK);
  // The window follows one 4 KiB section of queues; k sits at its start and
  // x where the net says, both at 4 KiB-aligned device addresses.
  const uint64_t window = 4096;
  EXPECT_EQ(getDdr(dev, window + kK, kShape.count()), coefficients());
  EXPECT_EQ(getDdr(dev, window + kX, kShape.count()), x);
}

TEST_F(RuntimeCoreTest, OutOfDeviceMemory) {
  Device small(16u << 10); // the queues' 4 KiB section plus a 16 KiB window do not fit
  Runtime rt;
  ASSERT_EQ(rt.init(small.hal()), KILN_OK);
  const auto file = buildBmodel(addReluModel());
  Net net;
  EXPECT_EQ(net.load(rt, file.data(), file.size()), KILN_ERR_NO_DEVICE_MEMORY);
}

// The runtime resets the device when a wait fails.
TEST_F(RuntimeCoreTest, TimeoutResetsTheDevice) {
  FlakyHal spy{dev.hal()};
  spy.fail_next_wait = true;
  const kiln_hal hal = spy.hal();
  Runtime rt;
  ASSERT_EQ(rt.init(hal), KILN_OK);
  const auto file = buildBmodel(addReluModel());
  Net net;
  ASSERT_EQ(net.load(rt, file.data(), file.size()), KILN_OK);
  kiln_run_stats stats;
  kiln_error_detail d{};
  EXPECT_EQ(net.run(10, &stats, &d), KILN_ERR_TIMEOUT);
  EXPECT_EQ(spy.resets, 1);
  EXPECT_EQ(stats.groups_run, 0u);
  // The detail names the group that timed out: now the second one.
  EXPECT_EQ(d.object_kind, uint32_t(KILN_OBJ_GROUP));
  EXPECT_EQ(d.index, 0u);
  spy.fail_next_wait = true;
  spy.skip_waits = 1;
  EXPECT_EQ(net.run(kTimeout, &stats, &d), KILN_ERR_TIMEOUT);
  EXPECT_EQ(stats.groups_run, 1u);
  EXPECT_EQ(d.status, KILN_ERR_TIMEOUT);
  EXPECT_EQ(d.object_kind, uint32_t(KILN_OBJ_GROUP));
  EXPECT_EQ(d.net, 0u);
  EXPECT_EQ(d.index, 1u);
  EXPECT_EQ(d.sub_index, KILN_NO_INDEX);
  EXPECT_STREQ(d.reason, "the group did not complete");
}

// A valid record the device cannot run (no f16 kernel yet): the fault reaches
// the caller, the device is reset, and its reason survives the reset.
TEST_F(RuntimeCoreTest, DeviceFaultPropagatesAndResets) {
  ModelSpec spec = addReluModel();
  // A record the verifier accepts but the device cannot run: a resize whose
  // taps fall outside the rows its window holds.
  kiln_tiu_cmd &add = net(spec).groups[0].tiu[0];
  add.op = KILN_TIU_RESIZE;
  add.subop = KILN_RESIZE_NEAREST;
  add.in1 = kiln_tiu_operand{};
  add.param[0] = add.param[1] = 1.0f;
  add.aux[0] = add.aux[1] = 2u * add.in0.h; // full heights
  add.aux[2] = add.in0.h;                   // reads rows h.. but the window holds 0..h-1
  const auto file = buildBmodel(spec);
  Net net;
  ASSERT_EQ(net.load(runtime, file.data(), file.size()), KILN_OK);
  kiln_run_stats stats;
  EXPECT_EQ(net.run(kTimeout, &stats), KILN_ERR_DEVICE_FAULT);
  EXPECT_EQ(stats.groups_run, 0u);
  EXPECT_EQ(dev.read_reg(KILN_REG_STATUS), KILN_STATUS_IDLE);
  EXPECT_NE(dev.faultReason().find("outside its window"), std::string::npos) << dev.faultReason();
}

TEST_F(RuntimeCoreTest, ArgumentChecks) {
  const auto file = buildBmodel(addReluModel());
  alignas(16) unsigned char storage[rt::kNetStorageBytes];
  kiln_net *net = nullptr;
  EXPECT_EQ(kiln_net_load(runtime.handle(), file.data(), file.size(), 1, storage, sizeof storage,
                          &net),
            KILN_ERR_NOT_FOUND);
  EXPECT_EQ(kiln_net_load(runtime.handle(), file.data(), file.size(), 0, storage,
                          kiln_net_storage_size() - 1, &net),
            KILN_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(kiln_net_load(runtime.handle(), file.data(), file.size(), 0, storage + 8,
                          sizeof storage - 8, &net),
            KILN_ERR_INVALID_ARGUMENT);
  std::vector<uint8_t> shifted(file.size() + 4);
  std::memcpy(shifted.data() + 4, file.data(), file.size());
  EXPECT_EQ(kiln_net_load(runtime.handle(), shifted.data() + 4, file.size(), 0, storage,
                          sizeof storage, &net),
            KILN_ERR_INVALID_ARGUMENT); // the file must be 8-byte aligned
  EXPECT_EQ(kiln_net_load(nullptr, file.data(), file.size(), 0, storage, sizeof storage, &net),
            KILN_ERR_INVALID_ARGUMENT);

  kiln_hal no_reset = dev.hal();
  no_reset.reset = nullptr;
  Runtime rt;
  EXPECT_EQ(rt.init(no_reset), KILN_ERR_INVALID_ARGUMENT);
}

TEST(StatusStrings, EveryCodeHasItsOwn) {
  const kiln_status codes[] = {
      KILN_OK, KILN_ERR_INVALID_ARGUMENT, KILN_ERR_BUFFER_TOO_SMALL, KILN_ERR_NOT_FOUND,
      KILN_ERR_BAD_STATE, KILN_ERR_BAD_MAGIC, KILN_ERR_BAD_VERSION, KILN_ERR_TRUNCATED,
      KILN_ERR_BAD_CHECKSUM, KILN_ERR_BAD_FLATBUFFER, KILN_ERR_CHIP_MISMATCH,
      KILN_ERR_ABI_MISMATCH, KILN_ERR_OUT_OF_RANGE, KILN_ERR_BAD_TENSOR, KILN_ERR_BAD_COMMAND,
      KILN_ERR_BAD_SYNC, KILN_ERR_UNSUPPORTED, KILN_ERR_BAD_RESIDENCY, KILN_ERR_BAD_MEMORY_PLAN, KILN_ERR_NO_DEVICE_MEMORY,
      KILN_ERR_TOO_MANY_NETS, KILN_ERR_TIMEOUT, KILN_ERR_DEVICE_FAULT, KILN_ERR_HAL};
  std::set<std::string> seen;
  for (kiln_status s : codes)
    EXPECT_TRUE(seen.insert(kiln_status_str(s)).second) << kiln_status_str(s);
  EXPECT_EQ(seen.count("unknown status"), 0u);
  // Within the enum's range (0..0x7ff), so the cast itself is defined C++.
  EXPECT_STREQ(kiln_status_str(static_cast<kiln_status>(0x07ff)), "unknown status");
}

// ---- the file ----------------------------------------------------------------------

TEST_F(RuntimeCoreTest, BadMagic) {
  auto file = buildBmodel(addReluModel());
  file[0] ^= 0x20;
  EXPECT_EQ(load(file), KILN_ERR_BAD_MAGIC);
}

TEST_F(RuntimeCoreTest, FormatVersion) {
  auto file = buildBmodel(addReluModel());
  kiln_bmodel_header h = readHeader(file);
  h.format_major++;
  writeHeader(file, h);
  EXPECT_EQ(load(file), KILN_ERR_BAD_VERSION);

  file = buildBmodel(addReluModel());
  h = readHeader(file);
  h.format_minor++;
  writeHeader(file, h);
  EXPECT_EQ(load(file), KILN_ERR_BAD_VERSION);

  // The FlatBuffer's version must agree with the header's.
  ModelSpec spec = addReluModel();
  spec.format_minor = 1;
  file = buildBmodel(spec);
  h = readHeader(file);
  h.format_minor = 0;
  writeHeader(file, h);
  EXPECT_EQ(load(file), KILN_ERR_BAD_VERSION);
}

TEST_F(RuntimeCoreTest, HeaderFields) {
  const auto good = buildBmodel(addReluModel());
  auto edited = [&](const std::function<void(kiln_bmodel_header &)> &edit) {
    auto file = good;
    kiln_bmodel_header h = readHeader(file);
    edit(h);
    writeHeader(file, h);
    return load(file);
  };
  EXPECT_EQ(edited([](auto &h) { h.header_size = 32; }), KILN_ERR_BAD_VERSION);
  EXPECT_EQ(edited([](auto &h) { h.header_size = 72; }), KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(edited([](auto &h) { h.flags = 1; }), KILN_ERR_UNSUPPORTED);
  EXPECT_EQ(edited([](auto &h) { h.reserved = 1; }), KILN_ERR_UNSUPPORTED);
  EXPECT_EQ(edited([](auto &h) { h.flatbuffer_offset = 0; }), KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(edited([](auto &h) { h.flatbuffer_size += 64; }), KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(edited([](auto &h) { h.blob_offset += 8; }), KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(edited([](auto &h) { h.blob_size += 1; }), KILN_ERR_TRUNCATED);
  EXPECT_EQ(edited([](auto &h) { h.blob_size = ~0ull; }), KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(edited([](auto &h) { h.checksum ^= 1; }), KILN_ERR_BAD_CHECKSUM);
}

// The header is not under the checksum, so every field is checked on its own.
// Only a FlatBuffer size that still ends in the padding before the blob is
// harmless (the verifier checks the FlatBuffer whatever its extent).
TEST_F(RuntimeCoreTest, EveryHeaderByteMatters) {
  const auto good = buildBmodel(addReluModel());
  const size_t fb_size_low = offsetof(kiln_bmodel_header, flatbuffer_size);
  for (size_t i = 0; i < sizeof(kiln_bmodel_header); ++i)
    for (uint8_t bit : {0x01, 0x80}) {
      if (i == fb_size_low && bit == 0x01)
        continue;
      auto file = good;
      file[i] ^= bit;
      EXPECT_NE(load(file), KILN_OK) << "byte " << i << " bit " << int(bit);
    }
}

TEST_F(RuntimeCoreTest, TruncatedAtEveryLength) {
  const auto good = buildBmodel(addReluModel());
  for (size_t len = 0; len < good.size(); ++len) {
    std::vector<uint8_t> file(good.begin(), good.begin() + len);
    file.reserve(1); // a valid pointer even for length 0
    Net net;
    ASSERT_EQ(net.load(runtime, file.data(), len), KILN_ERR_TRUNCATED) << "length " << len;
  }
  EXPECT_EQ(load(good), KILN_OK);
}

TEST_F(RuntimeCoreTest, ChecksumCoversFlatBufferAndBlob) {
  const auto good = buildBmodel(addReluModel());
  const kiln_bmodel_header h = readHeader(good);
  for (size_t i = h.header_size; i < good.size(); ++i) {
    auto file = good;
    file[i] ^= 0x04;
    ASSERT_EQ(load(file), KILN_ERR_BAD_CHECKSUM) << "byte " << i;
  }
}

// With the checksum fixed up, flipped and random bytes reach the FlatBuffer
// verifier and the record checks: any status, but never a crash.
TEST_F(RuntimeCoreTest, CorruptedFilesWithValidChecksumNeverCrash) {
  const auto good = buildBmodel(addReluModel());
  const kiln_bmodel_header h = readHeader(good);
  std::set<kiln_status> seen;
  for (size_t i = h.header_size; i < good.size(); ++i)
    for (uint8_t bit : {0x01, 0x10, 0x80}) {
      auto file = good;
      file[i] ^= bit;
      updateChecksum(file);
      seen.insert(load(file));
    }
  std::mt19937 rng(99);
  for (int round = 0; round < 2000; ++round) {
    auto file = good;
    for (int k = 0; k < 4; ++k)
      file[h.header_size + rng() % (file.size() - h.header_size)] = uint8_t(rng());
    updateChecksum(file);
    seen.insert(load(file));
  }
  EXPECT_TRUE(seen.count(KILN_ERR_BAD_FLATBUFFER));
  EXPECT_TRUE(seen.count(KILN_ERR_BAD_COMMAND));
  EXPECT_TRUE(seen.count(KILN_OK)); // e.g. a changed coefficient
}

// ---- chip and ABI ----------------------------------------------------------------------

TEST_F(RuntimeCoreTest, ChipAndAbi) {
  EXPECT_EQ(loadEdited([](ModelSpec &m) { m.chip_id = 0x1684; }), KILN_ERR_CHIP_MISMATCH);
  EXPECT_EQ(loadEdited([](ModelSpec &m) { m.lanes = 32; }), KILN_ERR_CHIP_MISMATCH);
  EXPECT_EQ(loadEdited([](ModelSpec &m) { m.lmem_bytes_per_lane = 128 << 10; }),
            KILN_ERR_CHIP_MISMATCH);
  EXPECT_EQ(loadEdited([](ModelSpec &m) { m.abi_major++; }), KILN_ERR_ABI_MISMATCH);
  EXPECT_EQ(loadEdited([](ModelSpec &m) { m.abi_minor++; }), KILN_OK);
}

// ---- tensors and regions ---------------------------------------------------------------

TEST_F(RuntimeCoreTest, Tensors) {
  auto input = [this](ModelSpec &m) -> TensorSpec & { return net(m).inputs[0]; };
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { input(m).size = kBytes - 4; }), KILN_ERR_BAD_TENSOR);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { input(m).shape[1] = -3; }), KILN_ERR_BAD_TENSOR);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { input(m).dtype = KILN_DTYPE_COUNT; }),
            KILN_ERR_BAD_TENSOR);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) {
              input(m).shape = {1, 1, 1, 1, 1, 1, 1, 1, 60};
              input(m).size = kBytes;
            }),
            KILN_ERR_BAD_TENSOR);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) {
              input(m).shape = {int64_t(1) << 62, 8};
              input(m).size = 0;
            }),
            KILN_ERR_BAD_TENSOR); // the byte count overflows
  // Inputs and outputs live in the neuron region; any tensor in the window.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { input(m).ddr_offset = 0; }), KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { net(m).outputs[0].ddr_offset = kCoeffSize - 4; }),
            KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { net(m).tensors[2].ddr_offset = kCoeffSize + kNeuronSize - 4; }),
            KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { net(m).tensors[2].ddr_offset = ~0ull - 8; }),
            KILN_ERR_OUT_OF_RANGE);
}

// add_relu with an activation plan: x and z pinned for the run, y live in
// groups 0 and 1; k stays in the coefficient region.
ModelSpec plannedAddRelu() {
  ModelSpec m = addReluModel();
  NetSpec &n = m.nets[0];
  n.buffers = {{kX, kBytes, -1, 2}, {kY, kBytes, 0, 1}, {kZ, kBytes, -1, 2}};
  auto plan = [](TensorSpec &t, int32_t buffer, int32_t first, int32_t last) {
    t.buffer = buffer;
    t.first_group = first;
    t.last_group = last;
  };
  plan(n.inputs[0], 0, -1, 0);
  plan(n.outputs[0], 2, 1, 2);
  plan(n.tensors[1], 0, -1, 0);
  plan(n.tensors[2], 1, 0, 1);
  plan(n.tensors[3], 2, 1, 2);
  return m;
}

void recordGroup(void *user, uint32_t group) {
  static_cast<std::vector<uint32_t> *>(user)->push_back(group);
}

TEST_F(RuntimeCoreTest, PlannedNetRunsAndReportsLifetimes) {
  const auto file = buildBmodel(plannedAddRelu());
  Net net;
  ASSERT_EQ(net.load(runtime, file.data(), file.size()), KILN_OK);
  kiln_tensor_info info;
  ASSERT_EQ(net.tensorInfo(2, &info), KILN_OK);
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(info.first_group, 0);
  EXPECT_EQ(info.last_group, 1);
  std::vector<float> x = randomFloats(kShape.count(), 7);
  ASSERT_EQ(kiln_net_set_input(net.handle(), 0, x.data(), kBytes), KILN_OK);
  std::vector<uint32_t> seen;
  ASSERT_EQ(kiln_net_run_observed(net.handle(), kTimeout, recordGroup, &seen, nullptr), KILN_OK);
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1}));
  std::vector<float> z(kShape.count());
  ASSERT_EQ(kiln_net_get_output(net.handle(), 0, z.data(), kBytes), KILN_OK);
  for (size_t i = 0; i < z.size(); ++i)
    EXPECT_EQ(z[i], std::max(0.0f, x[i] + coefficients()[i]));
}

TEST_F(RuntimeCoreTest, UnplannedNetReportsWholeRunLifetimes) {
  const auto file = buildBmodel(addReluModel());
  Net net;
  ASSERT_EQ(net.load(runtime, file.data(), file.size()), KILN_OK);
  kiln_tensor_info info;
  ASSERT_EQ(net.tensorInfo(2, &info), KILN_OK);
  EXPECT_EQ(info.first_group, -1);
  EXPECT_EQ(info.last_group, 2);
}

TEST_F(RuntimeCoreTest, MemoryPlanNeverSharesLiveBytes) {
  auto planned = [&](const std::function<void(NetSpec &)> &edit) {
    ModelSpec m = plannedAddRelu();
    edit(m.nets[0]);
    return load(m);
  };
  EXPECT_EQ(planned([](NetSpec &) {}), KILN_OK);
  // y's buffer on x's bytes while both are live: rejected.
  EXPECT_EQ(planned([](NetSpec &n) {
              n.buffers[1].ddr_offset = kX;
              n.tensors[2].ddr_offset = kX;
            }),
            KILN_ERR_BAD_MEMORY_PLAN);
  // Overlapping bytes, not just equal offsets.
  EXPECT_EQ(planned([](NetSpec &n) { n.buffers[1].ddr_offset = kZ - 8; n.buffers[1].size += 8; }),
            KILN_ERR_BAD_MEMORY_PLAN);
  // The same bytes at different times are what a plan is for.
  EXPECT_EQ(planned([](NetSpec &n) { n.buffers.push_back({kY, kBytes, 2, 2}); }), KILN_OK);
  EXPECT_EQ(planned([](NetSpec &n) { n.buffers.push_back({kY, kBytes, 1, 2}); }),
            KILN_ERR_BAD_MEMORY_PLAN);
  // A tensor outside its buffer's bytes or lifetime, or in no buffer.
  EXPECT_EQ(planned([](NetSpec &n) { n.tensors[2].buffer = 0; }), KILN_ERR_BAD_MEMORY_PLAN);
  EXPECT_EQ(planned([](NetSpec &n) { n.tensors[2].last_group = 2; }), KILN_ERR_BAD_MEMORY_PLAN);
  EXPECT_EQ(planned([](NetSpec &n) { n.tensors[2].buffer = -1; }), KILN_ERR_BAD_MEMORY_PLAN);
  EXPECT_EQ(planned([](NetSpec &n) { n.tensors[2].buffer = 3; }), KILN_ERR_BAD_MEMORY_PLAN);
  EXPECT_EQ(planned([](NetSpec &n) { n.inputs[0].buffer = 1; }), KILN_ERR_BAD_MEMORY_PLAN);
  // Buffers inside the neuron region and the run.
  EXPECT_EQ(planned([](NetSpec &n) { n.buffers[1].last_group = 3; }), KILN_ERR_BAD_MEMORY_PLAN);
  EXPECT_EQ(planned([](NetSpec &n) { n.buffers[1].first_group = -2; }), KILN_ERR_BAD_MEMORY_PLAN);
  EXPECT_EQ(planned([](NetSpec &n) { n.buffers[1].ddr_offset = 0; }), KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(planned([](NetSpec &n) { n.buffers[1].size = ~0ull; }), KILN_ERR_OUT_OF_RANGE);
}

TEST_F(RuntimeCoreTest, Regions) {
  // The file's coefficients must fit the coefficient region.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { net(m).coeff_size = 128; }), KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { net(m).neuron_size = ~0ull; }), KILN_ERR_OUT_OF_RANGE);
}

// ---- commands -------------------------------------------------------------------------

TEST_F(RuntimeCoreTest, Commands) {
  auto gdma = [this](ModelSpec &m, int group, int i) -> kiln_gdma_cmd & {
    return net(m).groups[group].gdma[i];
  };
  auto tiu = [this](ModelSpec &m) -> kiln_tiu_cmd & { return net(m).groups[0].tiu[0]; };
  const uint64_t window = kCoeffSize + kNeuronSize;

  // DDR side outside the window: the last element one byte past it.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { gdma(m, 0, 0).src_addr = window - kBytes + 1; }),
            KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { gdma(m, 0, 0).src_addr = window - kBytes; }), KILN_OK);
  // Strides that overflow 64-bit math.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) {
              auto &g = gdma(m, 0, 0);
              g.n = g.c = g.h = g.w = 0xffffffffu;
              g.src_stride[0] = g.src_stride[1] = g.src_stride[2] = 0xffffffffu;
            }),
            KILN_ERR_OUT_OF_RANGE);
  // A store into the coefficient region.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { gdma(m, 0, 2).dst_addr = kK; }), KILN_ERR_OUT_OF_RANGE);
  // LMEM beyond 256 KiB per lane, on either engine.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { tiu(m).out.addr = KILN_LMEM_BYTES_PER_LANE - 32; }),
            KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { gdma(m, 0, 1).dst_addr = KILN_LMEM_BYTES_PER_LANE; }),
            KILN_ERR_OUT_OF_RANGE);
  // Unknown op, subop, direction, dtype, flags; inconsistent shapes.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { tiu(m).op = KILN_TIU_OP_END; }), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { tiu(m).subop = KILN_ELT_END; }), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { gdma(m, 0, 0).dir = KILN_GDMA_DIR_END; }),
            KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { gdma(m, 0, 0).dtype = 200; }), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { tiu(m).flags = 0x80; }), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { tiu(m).in1.c = 2; }), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { gdma(m, 1, 0).h = 0; }), KILN_ERR_BAD_COMMAND);
  // A lane offset must keep the block within the 64 lanes, on an LMEM side.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { gdma(m, 0, 0).lmem_lane = KILN_NPU_NUM - 1; }),
            KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { gdma(m, 0, 0).lmem_lane = 1; }), KILN_OK);
}

TEST_F(RuntimeCoreTest, RowWindows) {
  auto in0 = [this](ModelSpec &m) -> kiln_tiu_operand & { return net(m).groups[0].tiu[0].in0; };
  // [1, 3, 4, 5] f32: a whole tensor takes a 128-byte aligned plane; rows 4..7
  // of an 8-row buffer end 80 bytes after their start.
  const uint32_t lane_end = KILN_LMEM_BYTES_PER_LANE;
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { in0(m).addr = lane_end - 128; }), KILN_OK);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { in0(m).addr = lane_end - 80; }), KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) {
              in0(m).addr = lane_end - 80;
              in0(m).plane_h = 8;
            }),
            KILN_OK);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) {
              in0(m).addr = lane_end - 79;
              in0(m).plane_h = 8;
            }),
            KILN_ERR_OUT_OF_RANGE);
  // A window cannot hold more rows than its planes.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { in0(m).plane_h = 3; }), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { net(m).groups[0].gdma[0].lmem_plane_h = 2; }),
            KILN_ERR_BAD_COMMAND);
}

TEST_F(RuntimeCoreTest, ConvAndPoolParameters) {
  // A 3x3 conv over the [1, 3, 4, 5] LMEM input into [1, 3, 2, 3].
  auto withConv = [this](const std::function<void(kiln_tiu_cmd &)> &edit) {
    ModelSpec spec = addReluModel();
    kiln_tiu_cmd &cmd = net(spec).groups[0].tiu[0];
    cmd.op = KILN_TIU_CONV;
    cmd.subop = 0;
    cmd.out = lmemOperand(2048, {1, 3, 2, 3});
    cmd.in1 = lmemOperand(1024, {1, 3, 3, 9});
    cmd.kh = cmd.kw = 3;
    cmd.stride_h = cmd.stride_w = cmd.dil_h = cmd.dil_w = 1;
    cmd.groups = 1;
    // The store after it copies the conv's output shape.
    kiln_gdma_cmd &store = net(spec).groups[0].gdma[2];
    store.h = 2, store.w = 3;
    edit(cmd);
    return load(spec);
  };
  EXPECT_EQ(withConv([](kiln_tiu_cmd &) {}), KILN_OK);
  EXPECT_EQ(withConv([](kiln_tiu_cmd &c) { c.kh = 0; }), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(withConv([](kiln_tiu_cmd &c) { c.stride_w = 0; }), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(withConv([](kiln_tiu_cmd &c) { c.groups = 2; }), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(withConv([](kiln_tiu_cmd &c) { c.pad_top = 1; }), KILN_ERR_BAD_COMMAND); // oh is 3
  EXPECT_EQ(withConv([](kiln_tiu_cmd &c) { c.flags = KILN_TIU_FLAG_HAS_BIAS; }),
            KILN_ERR_BAD_COMMAND); // no bias operand
  EXPECT_EQ(withConv([](kiln_tiu_cmd &c) {
              c.op = KILN_TIU_POOL;
              c.in1 = kiln_tiu_operand{};
            }),
            KILN_OK);
  EXPECT_EQ(withConv([](kiln_tiu_cmd &c) {
              c.op = KILN_TIU_POOL;
              c.in1 = kiln_tiu_operand{};
              c.pad_top = c.pad_bottom = 3; // pads as large as the kernel
              c.out.h = 8;
            }),
            KILN_ERR_BAD_COMMAND);
}

TEST_F(RuntimeCoreTest, SyncIds) {
  // A wait beyond the other queue's count.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { net(m).groups[0].tiu[0].wait_gdma_id = 4; }),
            KILN_ERR_BAD_SYNC);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { net(m).groups[1].gdma[1].wait_tiu_id = 2; }),
            KILN_ERR_BAD_SYNC);
  // The add waits for the store that waits for the add.
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { net(m).groups[0].tiu[0].wait_gdma_id = 3; }),
            KILN_ERR_BAD_SYNC);
  EXPECT_EQ(loadEdited([&](ModelSpec &m) { net(m).groups[0].gdma[1].cmd_id = 7; }),
            KILN_ERR_BAD_SYNC);
}

// ---- error details: which object was refused, and why ------------------------------

// The board's hook (the core's is weak): every failure of a load or run,
// whether or not the caller asked for the detail.
std::vector<kiln_error_detail> &hooked() {
  static std::vector<kiln_error_detail> details;
  return details;
}

// What a refused load reports through kiln_net_load_ex.
struct Refusal {
  kiln_status status;
  uint32_t kind, net, index, sub_index;
  std::string reason;
};

std::ostream &operator<<(std::ostream &os, const Refusal &r) {
  return os << kiln_status_str(r.status) << " / " << kiln_object_kind_str(r.kind) << " net "
            << r.net << " [" << r.index << ", " << r.sub_index << "]: " << r.reason;
}

class ErrorDetailTest : public RuntimeCoreTest {
protected:
  Refusal refusal(const std::vector<uint8_t> &file, uint32_t net_index = 0) {
    kiln_error_detail d{};
    d.reason = nullptr;
    Net n;
    hooked().clear();
    kiln_status st = n.load(runtime, file.data(), file.size(), net_index, &d);
    EXPECT_NE(st, KILN_OK);
    EXPECT_EQ(d.status, st);
    EXPECT_NE(d.object_kind, uint32_t(KILN_OBJ_NONE)) << (d.reason ? d.reason : "");
    EXPECT_NE(d.reason, nullptr);
    // The hook saw the same detail, once.
    EXPECT_EQ(hooked().size(), 1u);
    if (!hooked().empty()) {
      const kiln_error_detail &h = hooked()[0];
      EXPECT_TRUE(h.status == d.status && h.object_kind == d.object_kind && h.net == d.net &&
                  h.index == d.index && h.sub_index == d.sub_index && h.reason == d.reason);
    }
    return Refusal{st, d.object_kind, d.net, d.index, d.sub_index, d.reason ? d.reason : ""};
  }
  Refusal refusalEdited(const std::function<void(ModelSpec &)> &edit) {
    ModelSpec spec = addReluModel();
    edit(spec);
    return refusal(buildBmodel(spec));
  }
  Refusal refusalHeader(const std::function<void(kiln_bmodel_header &)> &edit) {
    auto file = buildBmodel(addReluModel());
    kiln_bmodel_header h = readHeader(file);
    edit(h);
    writeHeader(file, h);
    return refusal(file);
  }
};

// Status, object kind, index, sub-index and a word of the reason.
#define EXPECT_REFUSAL(refusal_expr, st_, kind_, index_, sub_, word_)                          \
  do {                                                                                    \
    const Refusal r_ = (refusal_expr);                                                    \
    EXPECT_EQ(r_.status, KILN_ERR_##st_) << r_;                                           \
    EXPECT_EQ(r_.kind, uint32_t(KILN_OBJ_##kind_)) << r_;                                 \
    EXPECT_EQ(r_.index, uint32_t(index_)) << r_;                                          \
    EXPECT_EQ(r_.sub_index, uint32_t(sub_)) << r_;                                        \
    EXPECT_NE(r_.reason.find(word_), std::string::npos) << r_;                            \
  } while (0)

constexpr uint32_t kNo = KILN_NO_INDEX;

TEST_F(ErrorDetailTest, Header) {
  auto file = buildBmodel(addReluModel());
  EXPECT_REFUSAL(refusal(std::vector<uint8_t>(file.begin(), file.begin() + 40)), TRUNCATED,
                 HEADER, kNo, kNo, "shorter than the header");
  file[0] ^= 0x20;
  EXPECT_REFUSAL(refusal(file), BAD_MAGIC, HEADER, kNo, kNo, "magic");
  EXPECT_REFUSAL(refusalHeader([](auto &h) { h.format_major++; }), BAD_VERSION, HEADER, kNo, kNo,
                 "version");
  EXPECT_REFUSAL(refusalHeader([](auto &h) { h.header_size = 32; }), BAD_VERSION, HEADER, kNo,
                 kNo, "header size");
  EXPECT_REFUSAL(refusalHeader([](auto &h) { h.flags = 1; }), UNSUPPORTED, HEADER, kNo, kNo,
                 "flags");
  EXPECT_REFUSAL(refusalHeader([](auto &h) { h.blob_size = ~0ull; }), OUT_OF_RANGE, HEADER, kNo,
                 kNo, "overflows");
  EXPECT_REFUSAL(refusalHeader([](auto &h) { h.flatbuffer_offset = 0; }), OUT_OF_RANGE, HEADER,
                 kNo, kNo, "overlap");
  EXPECT_REFUSAL(refusalHeader([](auto &h) { h.blob_offset += 8; }), OUT_OF_RANGE, HEADER, kNo,
                 kNo, "misaligned");
  EXPECT_REFUSAL(refusalHeader([](auto &h) { h.blob_size += 1; }), TRUNCATED, HEADER, kNo, kNo,
                 "past the end");
  EXPECT_REFUSAL(refusalHeader([](auto &h) { h.checksum ^= 1; }), BAD_CHECKSUM, HEADER, kNo, kNo,
                 "checksum");
}

TEST_F(ErrorDetailTest, FlatBufferAndChip) {
  auto file = buildBmodel(addReluModel());
  const kiln_bmodel_header h = readHeader(file);
  file[h.flatbuffer_offset + 4] ^= 1; // the file identifier
  updateChecksum(file);
  EXPECT_REFUSAL(refusal(file), BAD_FLATBUFFER, FLATBUFFER, kNo, kNo, "identifier");
  file = buildBmodel(addReluModel());
  file[h.flatbuffer_offset] = 0xff; // the root offset, far outside the buffer
  updateChecksum(file);
  EXPECT_REFUSAL(refusal(file), BAD_FLATBUFFER, FLATBUFFER, kNo, kNo, "verification");
  EXPECT_REFUSAL(refusalEdited([](ModelSpec &m) { m.lanes = 32; }), CHIP_MISMATCH, CHIP, kNo, kNo,
                 "BM1684X");
  EXPECT_REFUSAL(refusalEdited([](ModelSpec &m) { m.abi_major++; }), ABI_MISMATCH, CHIP, kNo, kNo,
                 "ABI");
}

TEST_F(ErrorDetailTest, NetRegionsAndTensors) {
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { net(m).coeff_size = 128; }), OUT_OF_RANGE, NET,
                 kNo, kNo, "coefficients");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { net(m).neuron_size = ~0ull; }), OUT_OF_RANGE,
                 NET, kNo, kNo, "overflows");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { net(m).inputs[0].size = kBytes - 4; }),
                 BAD_TENSOR, INPUT, 0, kNo, "size");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { net(m).inputs[0].dtype = KILN_DTYPE_COUNT; }),
                 BAD_TENSOR, INPUT, 0, kNo, "dtype");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { net(m).outputs[0].ddr_offset = 0; }),
                 OUT_OF_RANGE, OUTPUT, 0, kNo, "neuron region");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) {
                   net(m).tensors[2].ddr_offset = kCoeffSize + kNeuronSize - 4;
                 }),
                 OUT_OF_RANGE, TENSOR, 2, kNo, "DDR window");
}

TEST_F(ErrorDetailTest, MemoryPlan) {
  auto planned = [&](const std::function<void(NetSpec &)> &edit) {
    ModelSpec m = plannedAddRelu();
    edit(m.nets[0]);
    return refusal(buildBmodel(m));
  };
  EXPECT_REFUSAL(planned([](NetSpec &n) { n.buffers[1].ddr_offset = 0; }), OUT_OF_RANGE, BUFFER, 1,
                 kNo, "neuron region");
  EXPECT_REFUSAL(planned([](NetSpec &n) { n.buffers[2].last_group = 3; }), BAD_MEMORY_PLAN, BUFFER,
                 2, kNo, "live range");
  // Buffer 1 on buffer 0's bytes while both are live.
  EXPECT_REFUSAL(planned([](NetSpec &n) {
                   n.buffers[1].ddr_offset = kX;
                   n.tensors[2].ddr_offset = kX;
                 }),
                 BAD_MEMORY_PLAN, BUFFER, 0, 1, "shares bytes");
  EXPECT_REFUSAL(planned([](NetSpec &n) { n.tensors[2].last_group = 2; }), BAD_MEMORY_PLAN, TENSOR,
                 2, kNo, "its buffer");
  EXPECT_REFUSAL(planned([](NetSpec &n) { n.outputs[0].buffer = 0; }), BAD_MEMORY_PLAN, OUTPUT, 0,
                 kNo, "its buffer");
}

TEST_F(ErrorDetailTest, TiuCommands) {
  auto tiu = [this](ModelSpec &m, int group) -> kiln_tiu_cmd & {
    return net(m).groups[group].tiu[0];
  };
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) {
                   tiu(m, 1).out.addr = KILN_LMEM_BYTES_PER_LANE - 32;
                 }),
                 OUT_OF_RANGE, TIU_CMD, 1, 0, "writes LMEM outside the lane");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) {
                   tiu(m, 0).in1.addr = KILN_LMEM_BYTES_PER_LANE - 80;
                 }),
                 OUT_OF_RANGE, TIU_CMD, 0, 0, "reads LMEM outside the lane");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { tiu(m, 0).op = KILN_TIU_OP_END; }),
                 BAD_COMMAND, TIU_CMD, 0, 0, "unknown TIU op");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { tiu(m, 1).flags = 0x80; }), BAD_COMMAND,
                 TIU_CMD, 1, 0, "flags");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { tiu(m, 0).in0.plane_h = 3; }), BAD_COMMAND,
                 TIU_CMD, 0, 0, "operand");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { tiu(m, 1).in1 = tiu(m, 1).in0; }),
                 BAD_COMMAND, TIU_CMD, 1, 0, "does not use");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { tiu(m, 0).in1.dtype = KILN_DTYPE_F16; }),
                 BAD_COMMAND, TIU_CMD, 0, 0, "dtypes");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { tiu(m, 0).aux[3] = 1; }), BAD_COMMAND,
                 TIU_CMD, 0, 0, "quantization");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { tiu(m, 0).in1.c = 2; }), BAD_COMMAND, TIU_CMD,
                 0, 0, "inconsistent");
}

TEST_F(ErrorDetailTest, GdmaCommands) {
  auto gdma = [this](ModelSpec &m, int group, int i) -> kiln_gdma_cmd & {
    return net(m).groups[group].gdma[i];
  };
  const uint64_t window = kCoeffSize + kNeuronSize;
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { gdma(m, 0, 0).src_addr = window - kBytes + 1; }),
                 OUT_OF_RANGE, GDMA_CMD, 0, 0, "source outside the net's DDR window");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { gdma(m, 1, 1).src_addr = 1u << 20; }),
                 OUT_OF_RANGE, GDMA_CMD, 1, 1, "source outside LMEM");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) {
                   gdma(m, 0, 1).dst_addr = KILN_LMEM_BYTES_PER_LANE;
                 }),
                 OUT_OF_RANGE, GDMA_CMD, 0, 1, "destination outside LMEM");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { gdma(m, 1, 1).dst_addr = window; }),
                 OUT_OF_RANGE, GDMA_CMD, 1, 1, "destination outside the net's DDR window");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { gdma(m, 0, 2).dst_addr = kK; }), OUT_OF_RANGE,
                 GDMA_CMD, 0, 2, "coefficient region");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { gdma(m, 0, 0).dir = KILN_GDMA_DIR_END; }),
                 BAD_COMMAND, GDMA_CMD, 0, 0, "direction");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { gdma(m, 0, 1).dtype = 200; }), BAD_COMMAND,
                 GDMA_CMD, 0, 1, "dtype");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { gdma(m, 1, 0).flags = 0x40; }), BAD_COMMAND,
                 GDMA_CMD, 1, 0, "flags");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { gdma(m, 0, 1).lmem_lane = KILN_NPU_NUM - 1; }),
                 BAD_COMMAND, GDMA_CMD, 0, 1, "lane offset");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { gdma(m, 1, 0).h = 0; }), BAD_COMMAND, GDMA_CMD,
                 1, 0, "dims");
}

// The example: group 2's GDMA command 5 writes outside LMEM.
TEST_F(ErrorDetailTest, NamesTheGroupAndTheCommandWithinIt) {
  ModelSpec spec = addReluModel();
  GroupSpec third = net(spec).groups[1];
  for (uint32_t id = 3; id <= 6; ++id) // four more loads of x after the store
    third.gdma.push_back(gdmaCmd(id, 1, KILN_GDMA_DDR_TO_LMEM, kShape, kX, 8192 + 1024 * id));
  net(spec).groups.push_back(third);
  Net n;
  const auto good = buildBmodel(spec);
  ASSERT_EQ(n.load(runtime, good.data(), good.size()), KILN_OK);
  ASSERT_EQ(n.unload(), KILN_OK);
  net(spec).groups[2].gdma[5].dst_addr = KILN_LMEM_BYTES_PER_LANE - 64;
  const Refusal r = refusal(buildBmodel(spec));
  EXPECT_REFUSAL(r, OUT_OF_RANGE, GDMA_CMD, 2, 5, "destination outside LMEM");
  EXPECT_EQ(r.net, 0u);
}

TEST_F(ErrorDetailTest, SyncIds) {
  auto groups = [this](ModelSpec &m) -> std::vector<GroupSpec> & { return net(m).groups; };
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { groups(m)[0].tiu[0].wait_gdma_id = 4; }),
                 BAD_SYNC, TIU_CMD, 0, 0, "past the queue");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { groups(m)[1].gdma[1].wait_tiu_id = 2; }),
                 BAD_SYNC, GDMA_CMD, 1, 1, "past the queue");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { groups(m)[0].gdma[1].cmd_id = 7; }), BAD_SYNC,
                 GDMA_CMD, 0, 1, "queue position");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { groups(m)[1].tiu[0].cmd_id = 2; }), BAD_SYNC,
                 TIU_CMD, 1, 0, "queue position");
  // The add waits for the store that waits for the add: the add never starts.
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) { groups(m)[0].tiu[0].wait_gdma_id = 3; }),
                 BAD_SYNC, TIU_CMD, 0, 0, "deadlock");
}

TEST_F(ErrorDetailTest, GroupTables) {
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) {
                   net(m).groups[1].timesteps = {TimestepSpec{-1, 0, 0, 0, 1},
                                                 TimestepSpec{0, 0, 2, 1, 2}};
                 }),
                 BAD_COMMAND, TIMESTEP, 1, 1, "command range");
  EXPECT_REFUSAL(refusalEdited([&](ModelSpec &m) {
                   LmemSpec a;
                   a.tensor = "x";
                   a.addr = KILN_LMEM_BYTES_PER_LANE - 64;
                   a.size = 128;
                   net(m).groups[0].lmem = std::vector<LmemSpec>{LmemSpec{}, a};
                 }),
                 OUT_OF_RANGE, LMEM_ALLOC, 0, 1, "outside the lane");
}

TEST_F(ErrorDetailTest, NamesTheNetOfTheFile) {
  ModelSpec spec = addReluModel();
  spec.nets.push_back(spec.nets[0]);
  spec.nets[1].groups[1].gdma[0].h = 0;
  // The whole file is verified, whichever net is loaded.
  const Refusal r = refusal(buildBmodel(spec), 0);
  EXPECT_REFUSAL(r, BAD_COMMAND, GDMA_CMD, 1, 0, "dims");
  EXPECT_EQ(r.net, 1u);
}

TEST_F(ErrorDetailTest, ArgumentsAndDeviceMemory) {
  const auto file = buildBmodel(addReluModel());
  EXPECT_REFUSAL(refusal(file, 1), NOT_FOUND, ARGUMENT, kNo, kNo, "no net");
  alignas(16) unsigned char storage[rt::kNetStorageBytes];
  kiln_net *handle = nullptr;
  kiln_error_detail d{};
  EXPECT_EQ(kiln_net_load_ex(nullptr, file.data(), file.size(), 0, storage, sizeof storage,
                             &handle, &d),
            KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(d.object_kind, uint32_t(KILN_OBJ_ARGUMENT));
  EXPECT_STREQ(d.reason, "runtime not initialised");
  EXPECT_EQ(kiln_net_load_ex(runtime.handle(), file.data(), file.size(), 0, storage, 8, &handle,
                             &d),
            KILN_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(d.status, KILN_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(d.object_kind, uint32_t(KILN_OBJ_ARGUMENT));

  Device small(16u << 10);
  Runtime rt;
  ASSERT_EQ(rt.init(small.hal()), KILN_OK);
  Net n;
  EXPECT_EQ(n.load(rt, file.data(), file.size(), 0, &d), KILN_ERR_NO_DEVICE_MEMORY);
  EXPECT_EQ(d.object_kind, uint32_t(KILN_OBJ_DEVICE_MEMORY));
  EXPECT_EQ(d.net, 0u);

  // The memory query reports the same details without a runtime.
  ModelSpec bad = addReluModel();
  net(bad).groups[0].gdma[2].dst_addr = kK;
  const auto bad_file = buildBmodel(bad);
  kiln_memory_requirements req;
  EXPECT_EQ(kiln_bmodel_query_memory_ex(bad_file.data(), bad_file.size(), 0, &req, &d),
            KILN_ERR_OUT_OF_RANGE);
  EXPECT_EQ(d.object_kind, uint32_t(KILN_OBJ_GDMA_CMD));
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.sub_index, 2u);
  EXPECT_EQ(kiln_bmodel_query_memory_ex(file.data(), file.size(), 0, nullptr, &d),
            KILN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(d.object_kind, uint32_t(KILN_OBJ_ARGUMENT));
  EXPECT_EQ(kiln_net_run_ex(nullptr, kTimeout, nullptr, nullptr, nullptr, &d),
            KILN_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(d.reason, "net not loaded");
}

// A success leaves the caller's detail alone; plain calls still reach the hook.
TEST_F(ErrorDetailTest, SuccessLeavesTheDetailAndPlainCallsReachTheHook) {
  const auto file = buildBmodel(addReluModel());
  kiln_error_detail d{};
  d.status = KILN_ERR_HAL;
  d.reason = "untouched";
  Net n;
  ASSERT_EQ(n.load(runtime, file.data(), file.size(), 0, &d), KILN_OK);
  EXPECT_STREQ(d.reason, "untouched");
  ASSERT_EQ(n.unload(), KILN_OK);

  auto bad = file;
  bad[0] ^= 1;
  hooked().clear();
  EXPECT_EQ(load(bad), KILN_ERR_BAD_MAGIC);
  ASSERT_EQ(hooked().size(), 1u);
  EXPECT_EQ(hooked()[0].status, KILN_ERR_BAD_MAGIC);
  EXPECT_EQ(hooked()[0].object_kind, uint32_t(KILN_OBJ_HEADER));
}

TEST(ErrorDetail, EveryObjectKindHasAName) {
  std::set<std::string> names;
  for (uint32_t k = KILN_OBJ_NONE; k <= KILN_OBJ_HAL; ++k)
    names.insert(kiln_object_kind_str(k));
  EXPECT_EQ(names.size(), size_t(KILN_OBJ_HAL) + 1);
  EXPECT_STREQ(kiln_object_kind_str(KILN_OBJ_HAL + 1), "none");
}

} // namespace
} // namespace kiln::test

// The board's definition replaces the core's weak one.
extern "C" void kiln_pal_error_hook(const kiln_error_detail *detail) {
  kiln::test::hooked().push_back(*detail);
}
