// The whole back end on small Top IR: pipeline -> codegen -> bmodel writer ->
// runtime verifier -> cmodel, held against the Top interpreter. Also checks
// that the verifier rejects written bmodels whose records were tampered with.
#include "kiln/Codegen/Codegen.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Support/Pipeline.h"
#include "kiln/Target/Bmodel/BmodelWriter.h"
#include "kiln/abi/bmodel.h"
#include "kiln/bmodel_generated.h"
#include "kiln/cmodel/device.h"
#include "kiln/rt/runtime.hpp"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace kiln;

namespace {

// conv(3x3, s1, p1)+relu -> maxpool 2x2 -> conv(3x3, s2, p1) + skip add of a
// 1x1 strided conv -> global avgpool -> gemm. At 1x8x224x224 the activations
// (196 KiB per lane per tensor) do not fit LMEM whole.
std::string model(int n, int hw) {
  std::string in = "tensor<" + std::to_string(n) + "x8x" + std::to_string(hw) + "x" +
                   std::to_string(hw) + "xf32>";
  auto t = [&](int c, int s) {
    return "tensor<" + std::to_string(n) + "x" + std::to_string(c) + "x" +
           std::to_string(s) + "x" + std::to_string(s) + "xf32>";
  };
  int h2 = hw / 2, h4 = hw / 4;
  return R"(
func.func @main(%x: )" + in + R"( {kiln.name = "x"}) -> (tensor<)" + std::to_string(n) +
         R"(x10xf32> {kiln.name = "y"}) {
  %n = top.none
  %w1 = top.weight {value = dense_resource<w1> : tensor<16x8x3x3xf32>} : tensor<16x8x3x3xf32>
  %b1 = top.weight {value = dense_resource<b1> : tensor<16xf32>} : tensor<16xf32>
  %c1 = top.conv %x, %w1, %b1 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, do_relu = true} : ()" + in + ", tensor<16x8x3x3xf32>, tensor<16xf32>) -> " + t(16, hw) + R"( loc("c1")
  %p = top.maxpool %c1 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : ()" + t(16, hw) + ") -> " + t(16, h2) + R"( loc("p")
  %w2 = top.weight {value = dense_resource<w2> : tensor<32x16x3x3xf32>} : tensor<32x16x3x3xf32>
  %c2 = top.conv %p, %w2, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : ()" + t(16, h2) + ", tensor<32x16x3x3xf32>, none) -> " + t(32, h4) + R"( loc("c2")
  %w3 = top.weight {value = dense_resource<w3> : tensor<32x16x1x1xf32>} : tensor<32x16x1x1xf32>
  %c3 = top.conv %p, %w3, %n {kernel_shape = array<i64: 1, 1>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : ()" + t(16, h2) + ", tensor<32x16x1x1xf32>, none) -> " + t(32, h4) + R"( loc("c3")
  %a = top.add %c2, %c3 {do_relu = true} : ()" + t(32, h4) + ", " + t(32, h4) + ") -> " + t(32, h4) + R"( loc("a")
  %g = top.global_avgpool %a : ()" + t(32, h4) + ") -> " + t(32, 1) + R"( loc("g")
  %f = top.reshape %g {shape = array<i64: )" + std::to_string(n) + R"(, 32>} : ()" + t(32, 1) + ") -> tensor<" + std::to_string(n) + R"(x32xf32> loc("f")
  %wf = top.weight {value = dense_resource<wf> : tensor<10x32xf32>} : tensor<10x32xf32>
  %bf = top.weight {value = dense_resource<bf> : tensor<10xf32>} : tensor<10xf32>
  %y = top.matmul %f, %wf, %bf {right_transpose = true} : (tensor<)" + std::to_string(n) + R"(x32xf32>, tensor<10x32xf32>, tensor<10xf32>) -> tensor<)" + std::to_string(n) + R"(x10xf32> loc("y")
  return %y : tensor<)" + std::to_string(n) + R"(x10xf32>
}
)";
}

/// Deterministic values in [-1, 1).
std::vector<float> noise(size_t count, uint32_t seed) {
  std::vector<float> v(count);
  for (auto &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = (float)((seed >> 8) & 0xffff) / 32768.f - 1.f;
  }
  return v;
}

struct Compiled {
  std::vector<uint8_t> bytes;
  codegen::NetCode net;
  interp::TensorMap reference;
  interp::Tensor input;
};

class RoundTrip : public ::testing::Test {
protected:
  void SetUp() override {
    ctx.loadDialect<func::FuncDialect, top::TopDialect, tpu::TpuDialect>();
  }

  /// Parses the model with random weights, runs the interpreter on it, then
  /// compiles it to a bmodel.
  Compiled compile(int n, int hw, bool layerGroups, bool shapeIndependentWeights = false) {
    Compiled c;
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(model(n, hw), &ctx);
    EXPECT_TRUE(module);
    // Replace every dense_resource placeholder by random data.
    uint32_t seed = 1;
    SmallVector<top::WeightOp> weights;
    module->walk([&](top::WeightOp w) { weights.push_back(w); });
    for (top::WeightOp w : weights) {
      OpBuilder b(w);
      auto type = cast<RankedTensorType>(w.getType());
      auto data = noise(type.getNumElements(), seed++);
      for (auto &x : data)
        x *= 0.3f;
      auto fresh = top::createWeight(b, w.getLoc(), type.getShape(), data, "w");
      w.getOutput().replaceAllUsesWith(fresh.getOutput());
      w.erase();
    }
    c.input.shape = {n, 8, hw, hw};
    c.input.data = noise((size_t)n * 8 * hw * hw, 99);
    auto func = *module->getOps<func::FuncOp>().begin();
    EXPECT_TRUE(succeeded(interp::runTop(func, {{"x", c.input}}, c.reference)));

    PassManager pm(&ctx);
    PipelineOptions options;
    options.layerGroups = layerGroups;
    options.shapeIndependentWeights = shapeIndependentWeights;
    addCompilePipeline(pm, options);
    EXPECT_TRUE(succeeded(pm.run(*module)));
    auto net = codegen::generateNet(*module, "roundtrip");
    EXPECT_TRUE(succeeded(net));
    c.net = *net;
    c.bytes = bmodel::serialize({{c.net}});
    return c;
  }

  kiln_status load(const std::vector<uint8_t> &bytes) {
    net.reset(new rt::Net);
    return net->load(runtime, bytes.data(), bytes.size(), 0);
  }

  std::vector<float> run(const interp::Tensor &input) {
    EXPECT_EQ(net->setInput(0, input.data.data(), input.data.size() * 4), KILN_OK);
    EXPECT_EQ(net->run(60u * 1000u * 1000u), KILN_OK) << device.faultReason();
    kiln_tensor_info info;
    net->outputInfo(0, &info);
    std::vector<float> out(info.bytes / 4);
    EXPECT_EQ(net->getOutput(0, out.data(), info.bytes), KILN_OK);
    return out;
  }

  static void expectClose(const std::vector<float> &got, const std::vector<float> &want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-4f * (1.f + std::fabs(want[i]))) << "element " << i;
  }

  MLIRContext ctx;
  cmodel::Device device{256u << 20};
  kiln_hal hal = device.hal();
  rt::Runtime runtime;
  std::unique_ptr<rt::Net> net;

public:
  RoundTrip() { runtime.init(hal); }
};

bool anySliced(const codegen::NetCode &net) {
  for (const auto &g : net.groups)
    if (g.nSlices * g.hSlices > 1)
      return true;
  return false;
}

TEST_F(RoundTrip, SlicedGroupsMatchInterpreter) {
  Compiled c = compile(1, 224, true);
  EXPECT_TRUE(anySliced(c.net));
  ASSERT_EQ(load(c.bytes), KILN_OK);
  expectClose(run(c.input), c.reference["y"].data);
}

TEST_F(RoundTrip, BatchOfTwoMatchesInterpreter) {
  Compiled c = compile(2, 96, true);
  ASSERT_EQ(load(c.bytes), KILN_OK);
  expectClose(run(c.input), c.reference["y"].data);
}

TEST_F(RoundTrip, OneOpPerGroupMatchesGrouped) {
  Compiled grouped = compile(1, 64, true);
  Compiled single = compile(1, 64, false);
  EXPECT_LT(grouped.net.groups.size(), single.net.groups.size());
  ASSERT_EQ(load(single.bytes), KILN_OK);
  expectClose(run(single.input), single.reference["y"].data);
}

TEST_F(RoundTrip, RunTwiceIsBitwiseIdentical) {
  Compiled c = compile(1, 64, true);
  ASSERT_EQ(load(c.bytes), KILN_OK);
  EXPECT_EQ(run(c.input), run(c.input));
}

/// Re-seals a modified file so only the semantic checks can catch it.
void reseal(std::vector<uint8_t> &bytes) {
  kiln_bmodel_header h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  h.checksum = crc32(0L, bytes.data() + sizeof(h), bytes.size() - sizeof(h));
  std::memcpy(bytes.data(), &h, sizeof(h));
}

template <typename Record>
Record *firstRecord(std::vector<uint8_t> &bytes, bool tiu) {
  kiln_bmodel_header h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  auto *model = kiln::bmodel::GetModel(bytes.data() + h.flatbuffer_offset);
  auto *group = model->nets()->Get(0)->groups()->Get(0);
  const auto *range = tiu ? group->tiu_cmds() : group->gdma_cmds();
  return reinterpret_cast<Record *>(bytes.data() + h.blob_offset + range->offset());
}

TEST_F(RoundTrip, VerifierRejectsTamperedRecords) {
  Compiled c = compile(1, 32, true);
  ASSERT_EQ(load(c.bytes), KILN_OK);
  net.reset();

  auto lmemOverflow = c.bytes;
  firstRecord<kiln_tiu_cmd>(lmemOverflow, true)->out.addr = KILN_LMEM_BYTES_PER_LANE - 64;
  reseal(lmemOverflow);
  EXPECT_NE(load(lmemOverflow), KILN_OK);

  auto ddrOutside = c.bytes;
  firstRecord<kiln_gdma_cmd>(ddrOutside, false)->src_addr = 1ull << 40;
  reseal(ddrOutside);
  EXPECT_EQ(load(ddrOutside), KILN_ERR_OUT_OF_RANGE);

  auto badSync = c.bytes;
  firstRecord<kiln_tiu_cmd>(badSync, true)->wait_gdma_id = 1000;
  reseal(badSync);
  EXPECT_EQ(load(badSync), KILN_ERR_BAD_SYNC);

  auto unsealed = c.bytes;
  firstRecord<kiln_tiu_cmd>(unsealed, true)->kh = 2;
  EXPECT_EQ(load(unsealed), KILN_ERR_BAD_CHECKSUM);
}

// One net compiled at two input shapes: each stage runs as its own file does,
// the runtime picks the stage by the inputs' shapes, and a stage that would
// read other coefficients than the ones loaded is refused.
TEST_F(RoundTrip, StagesRunAsTheirOwnFilesDo) {
  // Row folds rewrite the stem's filter for some shapes only.
  EXPECT_NE(bmodel::checkStages({compile(1, 32, true).net, compile(2, 48, true).net}), "");
  Compiled a = compile(1, 32, true, true), b = compile(2, 48, true, true);
  ASSERT_EQ(bmodel::checkStages({a.net, b.net}), "");
  std::vector<uint8_t> staged = bmodel::serialize({{a.net, b.net}});
  ASSERT_EQ(load(a.bytes), KILN_OK);
  std::vector<float> aAlone = run(a.input);
  ASSERT_EQ(load(b.bytes), KILN_OK);
  std::vector<float> bAlone = run(b.input);

  ASSERT_EQ(load(staged), KILN_OK);
  kiln_net *handle = net->handle();
  EXPECT_EQ(kiln_net_stage_count(handle), 2u);
  EXPECT_EQ(kiln_net_stage(handle), 0u);
  EXPECT_EQ(run(a.input), aAlone);
  const int64_t bShape[] = {2, 8, 48, 48}, otherShape[] = {1, 8, 48, 48};
  const int64_t *shapes[] = {bShape};
  ASSERT_EQ(kiln_net_select_stage_for(handle, shapes, 1), KILN_OK);
  EXPECT_EQ(kiln_net_stage(handle), 1u);
  kiln_tensor_info info;
  ASSERT_EQ(kiln_net_input_info(handle, 0, &info), KILN_OK);
  EXPECT_EQ(info.shape[0], 2);
  EXPECT_EQ(run(b.input), bAlone);
  shapes[0] = otherShape;
  EXPECT_EQ(kiln_net_select_stage_for(handle, shapes, 1), KILN_ERR_NOT_FOUND);
  EXPECT_EQ(kiln_net_stage(handle), 1u); // unchanged
  EXPECT_EQ(kiln_net_select_stage(handle, 2), KILN_ERR_NOT_FOUND);
  ASSERT_EQ(kiln_net_select_stage(handle, 0), KILN_OK);
  EXPECT_EQ(run(a.input), aAlone);
  net.reset();

  // Stage 1 naming other coefficient bytes than stage 0's (still inside the
  // blob) is refused at load.
  auto moved = staged;
  kiln_bmodel_header h;
  std::memcpy(&h, moved.data(), sizeof(h));
  const auto *stage = kiln::bmodel::GetModel(moved.data() + h.flatbuffer_offset)
                          ->nets()->Get(0)->stages()->Get(0);
  auto *coeff = reinterpret_cast<uint8_t *>(const_cast<kiln::bmodel::BlobRange *>(stage->coeff()));
  uint64_t offset;
  std::memcpy(&offset, coeff, sizeof offset);
  offset += 16;
  std::memcpy(coeff, &offset, sizeof offset);
  reseal(moved);
  kiln_error_detail detail{};
  net.reset(new rt::Net);
  EXPECT_EQ(net->load(runtime, moved.data(), moved.size(), 0, &detail), KILN_ERR_BAD_TENSOR);
  EXPECT_EQ(detail.stage, 1u);
  EXPECT_STREQ(detail.reason, "stage has other coefficients than stage 0");

  // Stages must share their coefficients: a net with other weights is not a
  // stage of this one.
  Compiled other = compile(1, 32, true, true);
  other.net.coeff[0] ^= 1;
  EXPECT_NE(bmodel::checkStages({a.net, other.net}), "");
  EXPECT_NE(bmodel::checkStages({a.net, a.net}), ""); // the same shapes twice
}

// Reading a file gives back what serializing it took: the same bytes again.
TEST_F(RoundTrip, ReadingAFileGivesItsNetsBack) {
  Compiled a = compile(1, 32, true), b = compile(2, 48, true);
  for (const std::vector<uint8_t> &file :
       {a.bytes, bmodel::serialize({{a.net, b.net}, {b.net}})}) {
    auto nets = bmodel::readNets(file);
    ASSERT_TRUE(bool(nets)) << llvm::toString(nets.takeError());
    EXPECT_TRUE(bmodel::serialize(*nets) == file);
  }
  std::vector<uint8_t> truncated(a.bytes.begin(), a.bytes.begin() + 100);
  auto bad = bmodel::readNets(truncated);
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()), "truncated bmodel");
}

} // namespace
