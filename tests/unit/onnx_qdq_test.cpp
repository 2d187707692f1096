// QDQ models (QuantizeLinear / DequantizeLinear): import into
// top.quantize_linear / top.dequantize_linear with INT8 weights, the Top
// interpreter's values against the ONNX formulas, top-fold-quantize-constants
// and top-fold-constants keeping those values, and the errors for what kiln
// does not take (computed scales, mismatched per-axis scales).
// KILN_TEST_DUMP=1 prints each imported module and every error.
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Frontend/Onnx/OnnxImporter.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "import_test.h"
#include "onnx_model_builder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;
using namespace mlir;
using kiln::test::attrInt;
using kiln::test::attrInts;
using kiln::test::OnnxModelBuilder;

namespace {

constexpr int32_t kUInt8 = 2, kInt8 = 3, kInt32 = 6;

std::string bytesOf(const std::vector<int8_t> &v) {
  return std::string(v.begin(), v.end());
}

/// ONNX QuantizeLinear / DequantizeLinear of one value (the spec's formulas,
/// written out independently of kiln's).
float quantize(float x, float scale, int zp, int lo, int hi) {
  float q = std::nearbyint(x / scale) + zp;
  return std::fmin(hi, std::fmax(lo, q));
}
float dequantize(float q, float scale, int zp) { return (q - zp) * scale; }

class OnnxQdqTest : public kiln::test::ImportTest {};

func::FuncOp mainFunc(ModuleOp module) {
  return module.lookupSymbol<func::FuncOp>("main");
}

template <typename OpTy> std::vector<OpTy> opsOf(ModuleOp module) {
  std::vector<OpTy> ops;
  mainFunc(module).walk([&](OpTy op) { ops.push_back(op); });
  return ops;
}

std::string typeStr(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

/// x [1, 2, 2, 2] -> QDQ (uint8, zp 128) -> conv with filter
/// DequantizeLinear(int8 initializer, per-axis) -> Relu -> QDQ (int8, zp -3)
/// -> conv with filter DequantizeLinear(QuantizeLinear(float initializer,
/// per-axis)) -> y.
void buildQdqNet(OnnxModelBuilder &b) {
  b.addInput("x", {1, 2, 2, 2});
  b.addInitializer("x_scale", {}, {0.05f});
  b.addInitializerRaw("x_zp", {}, kUInt8, std::string(1, char(128)));
  b.addNode("QuantizeLinear", "q_x", {"x", "x_scale", "x_zp"}, {"xq"});
  b.addNode("DequantizeLinear", "dq_x", {"xq", "x_scale", "x_zp"}, {"xd"});

  b.addInitializerRaw("w1_q", {2, 2, 1, 1}, kInt8, bytesOf({2, -4, -1, 127}));
  b.addInitializer("w1_scale", {2}, {0.5f, 0.25f});
  b.addInitializerRaw("w1_zp", {2}, kInt8, bytesOf({0, 0}));
  b.addNode("DequantizeLinear", "dq_w1", {"w1_q", "w1_scale", "w1_zp"},
            {"w1"}, {attrInt("axis", 0)});
  b.addNode("Conv", "conv1", {"xd", "w1"}, {"c1"},
            {attrInts("kernel_shape", {1, 1})});
  b.addNode("Relu", "relu1", {"c1"}, {"r1"});
  b.addInitializer("r_scale", {1}, {0.125f});
  b.addInitializerRaw("r_zp", {1}, kInt8, bytesOf({-3}));
  b.addNode("QuantizeLinear", "q_r", {"r1", "r_scale", "r_zp"}, {"rq"});
  b.addNode("DequantizeLinear", "dq_r", {"rq", "r_scale", "r_zp"}, {"rd"});

  b.addInitializer("w2", {2, 2, 1, 1}, {0.3f, -0.7f, 1.1f, 0.05f});
  b.addInitializer("w2_scale", {2}, {0.1f, 0.02f});
  b.addInitializerRaw("w2_zp", {2}, kInt8, bytesOf({0, 0}));
  b.addNode("QuantizeLinear", "q_w2", {"w2", "w2_scale", "w2_zp"}, {"w2q"},
            {attrInt("axis", 0)});
  b.addNode("DequantizeLinear", "dq_w2", {"w2q", "w2_scale", "w2_zp"},
            {"w2d"}, {attrInt("axis", 0)});
  b.addNode("Conv", "conv2", {"rd", "w2d"}, {"y"},
            {attrInts("kernel_shape", {1, 1})});
  b.addOutput("y", {1, 2, 2, 2});
}

/// What buildQdqNet's model computes, by the ONNX formulas.
std::vector<float> qdqNetReference(const std::vector<float> &x) {
  auto conv1x1 = [](const std::vector<float> &in, const float w[4]) {
    std::vector<float> out(8);
    for (int oc = 0; oc < 2; ++oc)
      for (int p = 0; p < 4; ++p)
        out[oc * 4 + p] = w[oc * 2] * in[p] + w[oc * 2 + 1] * in[4 + p];
    return out;
  };
  std::vector<float> xd(8);
  for (int i = 0; i < 8; ++i)
    xd[i] = dequantize(quantize(x[i], 0.05f, 128, 0, 255), 0.05f, 128);
  const float w1[4] = {2 * 0.5f, -4 * 0.5f, -1 * 0.25f, 127 * 0.25f};
  std::vector<float> r = conv1x1(xd, w1);
  for (float &v : r)
    v = dequantize(quantize(std::fmax(v, 0.f), 0.125f, -3, -128, 127), 0.125f,
                   -3);
  const float w2f[4] = {0.3f, -0.7f, 1.1f, 0.05f};
  const float s2[2] = {0.1f, 0.02f};
  float w2[4];
  for (int i = 0; i < 4; ++i)
    w2[i] = dequantize(quantize(w2f[i], s2[i / 2], 0, -128, 127), s2[i / 2], 0);
  return conv1x1(r, w2);
}

TEST_F(OnnxQdqTest, ImportsActivationAndWeightQdq) {
  OnnxModelBuilder b;
  buildQdqNet(b);
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();

  auto quants = opsOf<kiln::top::QuantizeLinearOp>(*module);
  auto dequants = opsOf<kiln::top::DequantizeLinearOp>(*module);
  ASSERT_EQ(quants.size(), 3u);
  ASSERT_EQ(dequants.size(), 4u);

  // Activation quantize: uint8 result, per-tensor parameters.
  kiln::top::QuantizeLinearOp qx = quants[0];
  EXPECT_EQ(typeStr(qx.getType()), "tensor<1x2x2x2xui8>");
  EXPECT_EQ(qx.getScale(), ArrayRef<double>{(double)0.05f});
  EXPECT_EQ(qx.getZeroPoint(), ArrayRef<int64_t>{128});
  EXPECT_TRUE(isa<BlockArgument>(qx.getInput()));
  EXPECT_EQ(typeStr(quants[1].getType()), "tensor<1x2x2x2xi8>");
  EXPECT_EQ(quants[1].getZeroPoint(), ArrayRef<int64_t>{-3});

  // The int8 initializer is an i8 weight under a per-axis dequantize.
  kiln::top::DequantizeLinearOp dqW1 = dequants[1];
  auto w1 = dqW1.getInput().getDefiningOp<kiln::top::WeightOp>();
  ASSERT_TRUE(w1);
  EXPECT_EQ(typeStr(w1.getType()), "tensor<2x2x1x1xi8>");
  EXPECT_EQ(kiln::top::readWeight(w1), (std::vector<float>{2, -4, -1, 127}));
  EXPECT_EQ(dqW1.getAxis(), 0);
  EXPECT_EQ(dqW1.getScale(),
            (ArrayRef<double>{(double)0.5f, (double)0.25f}));
  EXPECT_EQ(typeStr(dqW1.getType()), "tensor<2x2x1x1xf32>");

  // The float weight's quantize is not folded at import.
  auto w2 = quants[2].getInput().getDefiningOp<kiln::top::WeightOp>();
  ASSERT_TRUE(w2);
  EXPECT_TRUE(w2.getValue().getElementType().isF32());

  // The interpreter computes the ONNX semantics.
  std::vector<float> x = {-0.3f, 0.0f, 0.0125f, 0.2f,
                          1.0f,  -7.f, 0.0375f, 3.0f};
  kiln::interp::TensorMap inputs{{"x", {{1, 2, 2, 2}, x}}}, outputs;
  ASSERT_TRUE(succeeded(kiln::interp::runTop(mainFunc(*module), inputs,
                                             outputs)))
      << allErrors();
  std::vector<float> want = qdqNetReference(x);
  ASSERT_EQ(outputs["y"].data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_FLOAT_EQ(outputs["y"].data[i], want[i]) << "element " << i;

  // Folding the weight quantization (and running fold-constants, which must
  // leave the dequantizes alone) changes no value.
  PassManager pm(&ctx);
  pm.addNestedPass<func::FuncOp>(
      kiln::top::createFoldQuantizeConstantsPass());
  pm.addNestedPass<func::FuncOp>(kiln::top::createFoldConstantsPass());
  ASSERT_TRUE(succeeded(pm.run(*module))) << allErrors();
  EXPECT_EQ(opsOf<kiln::top::QuantizeLinearOp>(*module).size(), 2u);
  auto folded = opsOf<kiln::top::DequantizeLinearOp>(*module);
  ASSERT_EQ(folded.size(), 4u);
  auto w2q = folded[3].getInput().getDefiningOp<kiln::top::WeightOp>();
  ASSERT_TRUE(w2q);
  // 0.3 / 0.1 = 3, -0.7 / 0.1 = -7, 1.1 / 0.02 = 55, 0.05 / 0.02 = 2.5 -> 2.
  EXPECT_EQ(kiln::top::readWeight(w2q), (std::vector<float>{3, -7, 55, 2}));
  kiln::interp::TensorMap again;
  ASSERT_TRUE(succeeded(kiln::interp::runTop(mainFunc(*module), inputs,
                                             again)));
  EXPECT_EQ(again["y"].data, outputs["y"].data);
}

TEST_F(OnnxQdqTest, AbsorbQdqSetsQParams) {
  OnnxModelBuilder b;
  buildQdqNet(b);
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  PassManager pm(&ctx);
  pm.addNestedPass<func::FuncOp>(
      kiln::top::createFoldQuantizeConstantsPass());
  pm.addNestedPass<func::FuncOp>(kiln::top::createAbsorbQdqPass());
  ASSERT_TRUE(succeeded(pm.run(*module))) << allErrors();
  // Only the weights' dequantizes are left.
  EXPECT_TRUE(opsOf<kiln::top::QuantizeLinearOp>(*module).empty());
  EXPECT_EQ(opsOf<kiln::top::DequantizeLinearOp>(*module).size(), 2u);
  func::FuncOp func = mainFunc(*module);
  auto argParams = func.getArgAttrOfType<DenseF64ArrayAttr>(0, "kiln.qparams");
  ASSERT_TRUE(argParams);
  EXPECT_EQ(argParams.asArrayRef(), (ArrayRef<double>{(double)0.05f, 0.0}));
  auto relus = opsOf<kiln::top::ReluOp>(*module);
  ASSERT_EQ(relus.size(), 1u);
  auto params = relus[0]->getAttrOfType<DenseF64ArrayAttr>("kiln.qparams");
  ASSERT_TRUE(params);
  EXPECT_EQ(params.asArrayRef(), (ArrayRef<double>{0.125, -3.0}));
}

TEST_F(OnnxQdqTest, Opset10PerTensor) {
  OnnxModelBuilder b(10);
  b.addInput("x", {1, 4});
  b.addInitializer("s", {}, {0.5f});
  b.addInitializerRaw("z", {}, kInt8, bytesOf({1}));
  b.addNode("QuantizeLinear", "q", {"x", "s", "z"}, {"xq"});
  b.addNode("DequantizeLinear", "dq", {"xq", "s", "z"}, {"y"});
  b.addOutput("y", {1, 4});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  kiln::interp::TensorMap inputs{{"x", {{1, 4}, {0.25f, 0.75f, -100.f, 63.f}}}},
      outputs;
  ASSERT_TRUE(succeeded(kiln::interp::runTop(mainFunc(*module), inputs,
                                             outputs)));
  // 0.5 -> 0, 1.5 -> 2 (half to even), saturation at -128 and 127.
  EXPECT_EQ(outputs["y"].data,
            (std::vector<float>{0.0f, 1.0f, -64.5f, 63.0f}));
}

TEST_F(OnnxQdqTest, Int32DequantizeOfConstantIsAFloatWeight) {
  OnnxModelBuilder b;
  b.addInput("x", {4});
  b.addInitializerInt32Data("bq", {4}, kInt32, {10, -20, 0, 7});
  b.addInitializer("bs", {}, {0.25f});
  b.addNode("DequantizeLinear", "dq", {"bq", "bs"}, {"bias"});
  b.addNode("Add", "add", {"x", "bias"}, {"y"});
  b.addOutput("y", {4});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(opsOf<kiln::top::DequantizeLinearOp>(*module).empty());
  kiln::interp::TensorMap inputs{{"x", {{4}, {0, 0, 0, 0}}}}, outputs;
  ASSERT_TRUE(succeeded(kiln::interp::runTop(mainFunc(*module), inputs,
                                             outputs)));
  EXPECT_EQ(outputs["y"].data, (std::vector<float>{2.5f, -5.f, 0.f, 1.75f}));
}

TEST_F(OnnxQdqTest, ComputedScaleIsAnErrorNamingTheNode) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 4});
  b.addInput("s", {});
  b.addNode("QuantizeLinear", "q_dynamic", {"x", "s"}, {"xq"});
  b.addNode("DequantizeLinear", "dq", {"xq", "s"}, {"y"});
  b.addOutput("y", {1, 4});
  EXPECT_FALSE(import(b));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("node 'q_dynamic' (QuantizeLinear): input "
                                "'x_scale' ('s') must be a constant"),
            std::string::npos)
      << allErrors();
}

TEST_F(OnnxQdqTest, PerAxisScaleCountMustMatch) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 4, 2, 2});
  b.addInitializer("s", {3}, {0.1f, 0.2f, 0.3f});
  b.addInitializerRaw("z", {3}, kInt8, bytesOf({0, 0, 0}));
  b.addNode("QuantizeLinear", "q_axis", {"x", "s", "z"}, {"xq"},
            {attrInt("axis", 1)});
  b.addNode("DequantizeLinear", "dq", {"xq", "s", "z"}, {"y"},
            {attrInt("axis", 1)});
  b.addOutput("y", {1, 4, 2, 2});
  EXPECT_FALSE(import(b));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("node 'q_axis' (QuantizeLinear): has 3 scales "
                                "for axis 1 of extent 4"),
            std::string::npos)
      << allErrors();
}

} // namespace
