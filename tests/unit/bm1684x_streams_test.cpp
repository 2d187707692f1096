// BM1684X streams end to end: a net's kiln records lowered to the chip's own
// commands (codegen::lowerToBm1684x), carried in the bmodel, checked by the
// runtime verifier, relocated and dispatched to a BM1684X HAL (kiln's
// cmodel running kiln's model of the commands) and computing what the
// records compute; hostile streams are refused before anything runs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "bmodel_builder.h"
#include "cmodel_harness.h"
#include "kiln/Codegen/Codegen.h"
#include "kiln/abi/bm1684x_stream.h"
#include "kiln/rt/runtime.hpp"

using namespace kiln;
using namespace kiln::test;
using kiln::cmodel::Device;
using kiln::rt::Net;
using kiln::rt::Runtime;

namespace {

constexpr uint32_t kTimeout = 1000000;
// x [1, 8, 6, 6] -> conv 3x3 pad 1 (80 filters, bias) + relu -> y [1, 80, 6, 6]
// -> 2x2 max pool -> p [1, 80, 3, 3]; p + b (b [1, 80, 1, 1] broadcast) -> z.
const Shape kX{1, 8, 6, 6}, kW{1, 80, 8, 9}, kB{1, 80, 1, 1}, kY{1, 80, 6, 6}, kP{1, 80, 3, 3};
constexpr uint64_t kWOff = 0, kBOff = 24576, kCoeff = 28672;
constexpr uint64_t kXOff = kCoeff, kZOff = kCoeff + 4096, kNeuron = 8192;
// LMEM (per-lane offsets)
constexpr uint32_t kLx = 0, kLw = 4096, kLb = 8192, kLy = 12288, kLp = 16384, kLz = 20480;

std::vector<float> coefficients() {
  std::vector<float> k = randomFloats(kW.count() + kB.count(), 3);
  return k;
}

ModelSpec convNet() {
  NetSpec net;
  net.name = "conv_pool_add";
  net.coeff_size = kCoeff;
  net.neuron_size = kNeuron;
  const std::vector<float> k = coefficients();
  net.coeff.resize(kCoeff);
  std::memcpy(net.coeff.data() + kWOff, k.data(), kW.count() * 4);
  std::memcpy(net.coeff.data() + kBOff, k.data() + kW.count(), kB.count() * 4);
  TensorSpec x;
  x.name = "x", x.shape = {1, 8, 6, 6}, x.ddr_offset = kXOff;
  TensorSpec z;
  z.name = "z", z.shape = {1, 80, 3, 3}, z.ddr_offset = kZOff;
  net.inputs = {x};
  net.outputs = {z};
  net.tensors = {x, z};

  GroupSpec g;
  g.gdma = {gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, kX, kXOff, kLx),
            gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, kW, kWOff, kLw),
            gdmaCmd(3, 0, KILN_GDMA_DDR_TO_LMEM, kB, kBOff, kLb),
            gdmaCmd(4, 3, KILN_GDMA_LMEM_TO_DDR, kP, kLz, kZOff)};
  kiln_tiu_cmd conv = tiuCmd(1, 3, KILN_TIU_CONV);
  conv.flags = KILN_TIU_FLAG_HAS_BIAS | KILN_TIU_FLAG_RELU;
  conv.out = lmemOperand(kLy, kY);
  conv.in0 = lmemOperand(kLx, kX);
  conv.in1 = lmemOperand(kLw, kW);
  conv.in2 = lmemOperand(kLb, kB);
  conv.kh = conv.kw = 3;
  conv.stride_h = conv.stride_w = conv.dil_h = conv.dil_w = 1;
  conv.pad_top = conv.pad_bottom = conv.pad_left = conv.pad_right = 1;
  conv.groups = 1;
  kiln_tiu_cmd pool = tiuCmd(2, 0, KILN_TIU_POOL, KILN_POOL_MAX);
  pool.out = lmemOperand(kLp, kP);
  pool.in0 = lmemOperand(kLy, kY);
  pool.kh = pool.kw = pool.stride_h = pool.stride_w = 2;
  pool.dil_h = pool.dil_w = 1;
  kiln_tiu_cmd add = tiuCmd(3, 0, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  add.out = lmemOperand(kLz, kP);
  add.in0 = lmemOperand(kLp, kP);
  add.in1 = lmemOperand(kLb, kB);
  g.tiu = {conv, pool, add};
  g.ops = {"conv", "pool", "add"};
  g.tiu_ops = {0, 1, 2};
  net.groups = {g};
  ModelSpec model;
  model.nets = {net};
  return model;
}

// The spec's groups lowered to BM1684X streams, as `isa: bm1684x` does;
// icAlign: per GDMA command of group 0, the IC block of a filter it loads.
void lower(ModelSpec &spec, std::vector<uint32_t> icAlign = {}) {
  codegen::NetCode code;
  for (const GroupSpec &g : spec.nets[0].groups) {
    codegen::GroupCode gc;
    gc.tiu = g.tiu;
    gc.gdma = g.gdma;
    gc.ops = g.ops;
    gc.tiuOps = g.tiu_ops;
    gc.gdmaIcAlign = code.groups.empty() ? icAlign : std::vector<uint32_t>{};
    code.groups.push_back(gc);
  }
  ASSERT_EQ(codegen::lowerToBm1684x(code), "");
  for (size_t i = 0; i < code.groups.size(); ++i) {
    GroupSpec &g = spec.nets[0].groups[i];
    g.bm_tiu = code.groups[i].bmTiu;
    g.bm_gdma = code.groups[i].bmGdma;
    g.bm_tiu_count = code.groups[i].bmTiuCount;
    g.bm_gdma_count = code.groups[i].bmGdmaCount;
  }
}

ModelSpec loweredNet() {
  ModelSpec spec = convNet();
  lower(spec);
  return spec;
}

// The output of one run of the spec on a cmodel running `isa`.
// Output 0 of one run of the spec on a cmodel running `isa`, its inputs
// given in order as the bytes of T.
template <typename T>
std::vector<T> runOn(kiln_isa isa, const ModelSpec &spec, const std::vector<std::vector<T>> &inputs) {
  Device dev(16u << 20, isa);
  Runtime runtime;
  EXPECT_EQ(runtime.init(dev.hal()), KILN_OK);
  const auto file = buildBmodel(spec);
  Net net;
  kiln_error_detail d{};
  EXPECT_EQ(net.load(runtime, file.data(), file.size(), 0, &d), KILN_OK) << d.reason;
  for (uint32_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(net.setInput(i, inputs[i].data(), inputs[i].size() * sizeof(T)), KILN_OK);
  EXPECT_EQ(net.run(kTimeout), KILN_OK) << dev.faultReason();
  kiln_tensor_info out;
  EXPECT_EQ(net.outputInfo(0, &out), KILN_OK);
  std::vector<T> z(out.bytes / sizeof(T));
  EXPECT_EQ(net.getOutput(0, z.data(), out.bytes), KILN_OK);
  return z;
}

std::vector<float> runOn(kiln_isa isa, const ModelSpec &spec) {
  return runOn<float>(isa, spec, {randomFloats(kX.count(), 9)});
}

TEST(Bm1684xStreams, LoweredStreamsComputeWhatTheRecordsCompute) {
  const ModelSpec spec = loweredNet();
  const auto &g = spec.nets[0].groups[0];
  // 80 filters: two sCONVs (per 64 output channels), the relu, the pool and
  // the add, then SYSID; four copies, then the GDMA end.
  EXPECT_EQ(g.bm_tiu_count, 6u);
  EXPECT_EQ(g.bm_gdma_count, 5u);
  EXPECT_EQ(g.bm_tiu.size() % KILN_BM_STREAM_ALIGN, 0u);
  EXPECT_EQ(g.bm_gdma.size() % KILN_BM_STREAM_ALIGN, 0u);

  const std::vector<float> records = runOn(KILN_ISA_KILN, spec);
  const std::vector<float> streams = runOn(KILN_ISA_BM1684X, spec);
  // The chip sums a conv in its own order (two accumulators): equal up to
  // f32 rounding, so within a few ulp of the magnitudes involved.
  double maxDiff = 0;
  for (size_t i = 0; i < records.size(); ++i)
    maxDiff = std::max(maxDiff, std::fabs(double(records[i]) - streams[i]));
  EXPECT_LT(maxDiff, 1e-5);
  // Not a vacuous comparison: the net computes something.
  double norm = 0;
  for (float v : streams)
    norm += std::fabs(v);
  EXPECT_GT(norm, 1.0);
}

TEST(Bm1684xStreams, AKilnHalRunsTheRecordsOfTheSameFile) {
  ModelSpec plain = convNet();
  EXPECT_EQ(runOn(KILN_ISA_KILN, plain), runOn(KILN_ISA_KILN, loweredNet()));
}

TEST(Bm1684xStreams, ABm1684xHalRefusesAFileWithoutStreams) {
  Device dev(16u << 20, KILN_ISA_BM1684X);
  Runtime runtime;
  ASSERT_EQ(runtime.init(dev.hal()), KILN_OK);
  const auto file = buildBmodel(convNet());
  Net net;
  kiln_error_detail d{};
  EXPECT_EQ(net.load(runtime, file.data(), file.size(), 0, &d), KILN_ERR_UNSUPPORTED);
  EXPECT_EQ(d.object_kind, uint32_t(KILN_OBJ_GROUP));
  EXPECT_NE(std::string(d.reason).find("isa: bm1684x"), std::string::npos) << d.reason;
}

// ---- INT8 ------------------------------------------------------------------------------

// q [1, 8, 6, 6] int8 -> INT8 conv 3x3 pad 1 (80 filters, requant table) +
// relu -> y int8 [1, 80, 6, 6] -> + q2 (int8 add, its own requant) -> z.
ModelSpec int8Net() {
  const Shape q{1, 8, 6, 6}, w{1, 80, 8, 9}, t{1, 80, 1, 3}, y{1, 80, 6, 6};
  NetSpec net;
  net.name = "int8_conv_add";
  net.coeff_size = 16384;
  net.neuron_size = 16384;
  net.coeff.resize(16384);
  std::mt19937 rng(5);
  auto byte = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (size_t i = 0; i < w.count(); ++i)
    net.coeff[i] = uint8_t(int8_t(byte(-127, 127)));
  std::vector<int32_t> table(t.count());
  for (uint32_t o = 0; o < 80; ++o) {
    table[o * 3 + 0] = byte(-20000, 20000);     // bias
    table[o * 3 + 1] = byte(1 << 14, 1 << 15);  // multiplier
    table[o * 3 + 2] = byte(21, 24);            // rshift
  }
  std::memcpy(net.coeff.data() + 8192, table.data(), table.size() * 4);
  auto tensorOf = [](const char *name, std::vector<int64_t> shape, uint64_t at) {
    TensorSpec s;
    s.name = name, s.shape = shape, s.ddr_offset = at, s.dtype = KILN_DTYPE_INT8;
    return s;
  };
  const uint64_t kQ = 16384, kQ2 = 16384 + 4096, kZ = 16384 + 8192;
  net.inputs = {tensorOf("q", {1, 8, 6, 6}, kQ), tensorOf("q2", {1, 80, 6, 6}, kQ2)};
  net.outputs = {tensorOf("z", {1, 80, 6, 6}, kZ)};
  net.tensors = {net.inputs[0], net.inputs[1], net.outputs[0]};
  auto i8 = [](kiln_gdma_cmd g) { g.dtype = KILN_DTYPE_INT8; return g; };
  // LMEM: each result followed by room for its int32 intermediates.
  const uint32_t lq = 0, lw = 1024, lt = 4096, ly = 8192, lq2 = 24576, lz = 28672;
  GroupSpec g;
  kiln_gdma_cmd table_load = gdmaCmd(3, 0, KILN_GDMA_DDR_TO_LMEM, t, 8192, lt);
  table_load.dtype = KILN_DTYPE_INT32;
  g.gdma = {i8(gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, q, kQ, lq)),
            i8(gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, w, 0, lw)), table_load,
            i8(gdmaCmd(4, 0, KILN_GDMA_DDR_TO_LMEM, y, kQ2, lq2)),
            i8(gdmaCmd(5, 2, KILN_GDMA_LMEM_TO_DDR, y, lz, kZ))};
  kiln_tiu_cmd conv = tiuCmd(1, 3, KILN_TIU_CONV);
  conv.flags = KILN_TIU_FLAG_HAS_BIAS | KILN_TIU_FLAG_RELU;
  conv.out = lmemOperand(ly, y, KILN_DTYPE_INT8);
  conv.in0 = lmemOperand(lq, q, KILN_DTYPE_INT8);
  conv.in1 = lmemOperand(lw, w, KILN_DTYPE_INT8);
  conv.in2 = lmemOperand(lt, t, KILN_DTYPE_INT32);
  conv.kh = conv.kw = 3;
  conv.stride_h = conv.stride_w = conv.dil_h = conv.dil_w = 1;
  conv.pad_top = conv.pad_bottom = conv.pad_left = conv.pad_right = 1;
  conv.groups = 1;
  conv.aux[2] = kiln_pack_zero_points(0, 0, -3);
  kiln_tiu_cmd add = tiuCmd(2, 4, KILN_TIU_ELTWISE, KILN_ELT_ADD);
  add.flags = KILN_TIU_FLAG_RELU;
  add.out = lmemOperand(lz, y, KILN_DTYPE_INT8);
  add.in0 = lmemOperand(ly, y, KILN_DTYPE_INT8);
  add.in1 = lmemOperand(lq2, y, KILN_DTYPE_INT8);
  add.aux[0] = 9000, add.aux[1] = 7000, add.aux[3] = 13;
  add.aux[2] = kiln_pack_zero_points(-3, 2, 1);
  g.tiu = {conv, add};
  g.ops = {"conv", "add"};
  g.tiu_ops = {0, 1};
  net.groups = {g};
  ModelSpec model;
  model.nets = {net};
  lower(model, {1, KILN_CONV_ICP_INT8, 1, 1, 1});
  return model;
}

std::vector<int8_t> runInt8(kiln_isa isa, const ModelSpec &spec) {
  std::mt19937 rng(11);
  std::vector<std::vector<int8_t>> inputs{std::vector<int8_t>(8 * 36), std::vector<int8_t>(80 * 36)};
  for (auto &in : inputs)
    for (int8_t &v : in) v = int8_t(std::uniform_int_distribution<int>(-128, 127)(rng));
  return runOn<int8_t>(isa, spec, inputs);
}

TEST(Bm1684xStreams, Int8ConvAndAddComputeWhatTheRecordsComputeBitForBit) {
  const ModelSpec spec = int8Net();
  const std::vector<int8_t> records = runInt8(KILN_ISA_KILN, spec);
  const std::vector<int8_t> streams = runInt8(KILN_ISA_BM1684X, spec);
  size_t same = 0, saturated = 0, varied = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    same += records[i] == streams[i];
    saturated += records[i] == 127;
    varied += records[i] != records[0];
  }
  EXPECT_EQ(same, records.size());
  EXPECT_LT(saturated, records.size() / 4); // the test's scales keep most values in range
  EXPECT_GT(varied, records.size() / 2);
}

// x [1, 80, 3, 3] * s [1, 1, 3, 3]: one channel against 80, which the chip
// first broadcasts to every lane (sBC) beside the result.
TEST(Bm1684xStreams, AChannelBroadcastComputesWhatTheRecordComputes) {
  const Shape x{1, 80, 3, 3}, one{1, 1, 3, 3};
  NetSpec net;
  net.name = "channel_broadcast";
  net.coeff_size = 4096;
  net.neuron_size = 8192;
  const std::vector<float> k = randomFloats(one.count(), 4);
  net.coeff.resize(4096);
  std::memcpy(net.coeff.data(), k.data(), k.size() * 4);
  TensorSpec in, out;
  in.name = "x", in.shape = {1, 80, 3, 3}, in.ddr_offset = 4096;
  out.name = "z", out.shape = {1, 80, 3, 3}, out.ddr_offset = 8192;
  net.inputs = {in};
  net.outputs = {out};
  net.tensors = {in, out};
  GroupSpec g;
  g.gdma = {gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, x, 4096, 0),
            gdmaCmd(2, 0, KILN_GDMA_DDR_TO_LMEM, one, 0, 1024),
            gdmaCmd(3, 1, KILN_GDMA_LMEM_TO_DDR, x, 2048, 8192)};
  kiln_tiu_cmd mul = tiuCmd(1, 2, KILN_TIU_ELTWISE, KILN_ELT_MUL);
  mul.out = lmemOperand(2048, x); // the broadcast channel goes after its 128 bytes
  mul.in0 = lmemOperand(0, x);
  mul.in1 = lmemOperand(1024, one);
  g.tiu = {mul};
  g.ops = {"mul"};
  g.tiu_ops = {0};
  net.groups = {g};
  ModelSpec spec;
  spec.nets = {net};
  lower(spec);
  const std::vector<std::vector<float>> inputs{randomFloats(x.count(), 12)};
  const std::vector<float> records = runOn<float>(KILN_ISA_KILN, spec, inputs),
                           streams = runOn<float>(KILN_ISA_BM1684X, spec, inputs);
  EXPECT_EQ(records, streams);
  EXPECT_NE(records[0], records[9]); // channel 0 and 1 differ in x, share s
}

// ---- hostile streams ---------------------------------------------------------------

struct Refusal {
  kiln_status status;
  uint32_t kind, sub_index;
  std::string message;
};

Refusal loadEdited(const std::function<void(GroupSpec &)> &edit) {
  ModelSpec spec = loweredNet();
  edit(spec.nets[0].groups[0]);
  Device dev(16u << 20, KILN_ISA_BM1684X);
  Runtime runtime;
  EXPECT_EQ(runtime.init(dev.hal()), KILN_OK);
  const auto file = buildBmodel(spec);
  Net net;
  kiln_error_detail d{};
  kiln_status st = net.load(runtime, file.data(), file.size(), 0, &d);
  return {st, d.object_kind, d.sub_index, d.reason};
}

// Rewrites GDMA command i of the stream through its fields.
void editCopy(GroupSpec &g, uint32_t i, const std::function<void(kiln_bm_dma_tensor &)> &f) {
  uint8_t *cmd = g.bm_gdma.data() + size_t{i} * KILN_BM_DMA_TENSOR_BYTES;
  kiln_bm_dma_tensor t;
  kiln_bm_dma_tensor_decode(cmd, &t);
  f(t);
  ASSERT_EQ(kiln_bm_dma_tensor_encode(&t, cmd), nullptr);
}

void setAddr(uint64_t addr, uint64_t *l32, uint64_t *h8) {
  *l32 = addr & 0xFFFFFFFFu;
  *h8 = addr >> 32;
}

TEST(Bm1684xStreams, TheVerifierRefusesHostileStreams) {
  struct Case {
    const char *name;
    std::function<void(GroupSpec &)> edit;
    uint32_t kind, index;
    const char *reason;
  };
  const uint64_t window = KILN_BM_DDR_BASE + kCoeff + kNeuron;
  const Case cases[] = {
      {"store into the coefficients",
       [](GroupSpec &g) {
         editCopy(g, 3, [](kiln_bm_dma_tensor &t) {
           setAddr(KILN_BM_DDR_BASE + kWOff, &t.dst_start_addr_l32, &t.dst_start_addr_h8);
         });
       },
       KILN_OBJ_GDMA_CMD, 3, "writable net DDR"},
      {"store past the window",
       [&](GroupSpec &g) {
         editCopy(g, 3, [&](kiln_bm_dma_tensor &t) {
           setAddr(window - 64, &t.dst_start_addr_l32, &t.dst_start_addr_h8);
         });
       },
       KILN_OBJ_GDMA_CMD, 3, "writable net DDR"},
      {"load from below DDR (L2)",
       [](GroupSpec &g) {
         editCopy(g, 0, [](kiln_bm_dma_tensor &t) {
           setAddr(KILN_BM_L2_BASE, &t.src_start_addr_l32, &t.src_start_addr_h8);
         });
       },
       KILN_OBJ_GDMA_CMD, 0, "reads outside"},
      {"load past the lane",
       [](GroupSpec &g) {
         editCopy(g, 1, [](kiln_bm_dma_tensor &t) {
           setAddr(KILN_BM_LMEM_BASE + KILN_LMEM_BYTES_PER_LANE - 64, &t.dst_start_addr_l32,
                   &t.dst_start_addr_h8);
         });
       },
       KILN_OBJ_GDMA_CMD, 1, "writes outside"},
      {"a huge stride",
       [](GroupSpec &g) { editCopy(g, 0, [](kiln_bm_dma_tensor &t) { t.src_cstride = 0xFFFFFFFFu; }); },
       KILN_OBJ_GDMA_CMD, 0, "reads outside"},
      {"ids out of order",
       [](GroupSpec &g) { editCopy(g, 1, [](kiln_bm_dma_tensor &t) { t.cmd_id = 7; }); },
       KILN_OBJ_GDMA_CMD, 1, "stream position"},
      {"a wait past the other stream",
       [](GroupSpec &g) { editCopy(g, 0, [](kiln_bm_dma_tensor &t) { t.cmd_id_dep = 60; }); },
       KILN_OBJ_GDMA_CMD, 0, "past the other stream"},
      {"waits in a cycle",
       [](GroupSpec &g) { editCopy(g, 0, [](kiln_bm_dma_tensor &t) { t.cmd_id_dep = 2; }); },
       KILN_OBJ_TIU_CMD, 0, "deadlock"},
      {"no end command",
       [](GroupSpec &g) { g.bm_tiu_count -= 1; },
       KILN_OBJ_TIU_CMD, 4, "end command not last"},
      {"bytes after the end",
       [](GroupSpec &g) { g.bm_gdma.back() = 1; },
       KILN_OBJ_GDMA_CMD, 5, "zero padding"},
      {"a stream not padded",
       [](GroupSpec &g) { g.bm_tiu.resize(g.bm_tiu.size() - 16); },
       KILN_OBJ_TIU_CMD, 0, "not padded"},
      {"a form kiln does not run (the long TIU layout)",
       [](GroupSpec &g) { g.bm_tiu[0] &= 0xFE; }, // cmd_short = 0
       KILN_OBJ_TIU_CMD, 0, "form kiln does not run"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    Refusal r = loadEdited(c.edit);
    EXPECT_EQ(r.status, KILN_ERR_BAD_COMMAND) << r.message;
    EXPECT_EQ(r.kind, c.kind) << r.message;
    EXPECT_EQ(r.sub_index, c.index) << r.message;
    EXPECT_NE(r.message.find(c.reason), std::string::npos) << r.message;
  }
}

TEST(Bm1684xStreams, RelocationMovesDdrAddressesOnly) {
  ModelSpec spec = loweredNet();
  GroupSpec &g = spec.nets[0].groups[0];
  uint8_t cmd[KILN_BM_DMA_TENSOR_BYTES];
  // Copy 0 loads x from DDR into LMEM: its source moves, its destination not.
  std::memcpy(cmd, g.bm_gdma.data(), sizeof cmd);
  kiln_bm_dma_tensor before, after;
  kiln_bm_dma_tensor_decode(cmd, &before);
  ASSERT_TRUE(kiln_bm_dma_tensor_relocate(cmd, 0x123000));
  kiln_bm_dma_tensor_decode(cmd, &after);
  EXPECT_EQ(kiln_bm_gdma_addr(after.src_start_addr_l32, after.src_start_addr_h8),
            KILN_BM_DDR_BASE + kXOff + 0x123000);
  EXPECT_EQ(kiln_bm_gdma_addr(after.dst_start_addr_l32, after.dst_start_addr_h8),
            kiln_bm_gdma_addr(before.dst_start_addr_l32, before.dst_start_addr_h8));
  // Past the GDMA's 40 address bits.
  std::memcpy(cmd, g.bm_gdma.data(), sizeof cmd);
  EXPECT_FALSE(kiln_bm_dma_tensor_relocate(cmd, uint64_t{1} << 40));
}

} // namespace
