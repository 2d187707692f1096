// The ONNX importer: op sequences, shapes and NameLocs of imported models,
// constant handling, and every failure path (unsupported ops and attributes,
// corrupt/missing files, dynamic or non-float inputs) with its diagnostic.
// KILN_TEST_DUMP=1 prints each imported module and every error.
#include "kiln/Frontend/Onnx/OnnxImporter.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Frontend/Onnx/OnnxModel.h"
#include "import_test.h"
#include "onnx_model_builder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using namespace mlir;
using kiln::test::attrFloat;
using kiln::test::attrInt;
using kiln::test::attrInts;
using kiln::test::attrString;
using kiln::test::OnnxModelBuilder;
using kiln::test::rampData;

namespace {

class OnnxImporterTest : public kiln::test::ImportTest {};

func::FuncOp mainFunc(ModuleOp module) {
  return module.lookupSymbol<func::FuncOp>("main");
}

/// Names of the non-weight ops in @main, in order.
std::vector<std::string> computeOps(ModuleOp module) {
  std::vector<std::string> names;
  for (Operation &op : mainFunc(module).getBody().front())
    if (!isa<kiln::top::WeightOp, kiln::top::NoneOp>(op))
      names.push_back(op.getName().getStringRef().str());
  return names;
}

std::string nameOf(Location loc) {
  auto name = dyn_cast<NameLoc>(loc);
  return name ? name.getName().str() : "<not a NameLoc>";
}

std::string typeStr(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

/// The op in @main whose location is NameLoc(name).
Operation *opNamed(ModuleOp module, llvm::StringRef name) {
  Operation *found = nullptr;
  mainFunc(module).walk([&](Operation *op) {
    if (nameOf(op->getLoc()) == name)
      found = op;
  });
  return found;
}

/// conv(pad 1) -> batchnorm -> relu -> maxpool(2) -> flatten -> gemm(transB).
void buildConvBnReluGemm(OnnxModelBuilder &b, std::vector<int64_t> inputShape,
                         bool globalPool = false) {
  b.addInput("input", inputShape);
  b.addInitializer("conv1.weight", {4, 3, 3, 3}, rampData(108));
  b.addInitializer("conv1.bias", {4}, {0.1f, 0.2f, 0.3f, 0.4f});
  b.addInitializer("bn1.scale", {4}, {1, 2, 3, 4});
  b.addInitializer("bn1.bias", {4}, {0, 0, 0, 1});
  b.addInitializer("bn1.mean", {4}, {0.5f, 0.5f, 0.5f, 0.5f});
  b.addInitializer("bn1.var", {4}, {1, 1, 1, 2});
  int64_t features = globalPool ? 4 : 4 * 4 * 4;
  b.addInitializer("fc.weight", {10, features}, rampData(10 * features));
  b.addInitializer("fc.bias", {10}, rampData(10, 0.1f));
  b.addNode("Conv", "conv1", {"input", "conv1.weight", "conv1.bias"},
            {"conv1_out"},
            {attrInts("kernel_shape", {3, 3}), attrInts("pads", {1, 1, 1, 1}),
             attrInts("strides", {1, 1})});
  b.addNode("BatchNormalization", "bn1",
            {"conv1_out", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"},
            {"bn1_out"}, {attrFloat("epsilon", 1e-3f)});
  b.addNode("Relu", "relu1", {"bn1_out"}, {"relu1_out"});
  if (globalPool)
    b.addNode("GlobalAveragePool", "pool1", {"relu1_out"}, {"pool1_out"});
  else
    b.addNode("MaxPool", "pool1", {"relu1_out"}, {"pool1_out"},
              {attrInts("kernel_shape", {2, 2}), attrInts("strides", {2, 2})});
  b.addNode("Flatten", "flatten", {"pool1_out"}, {"flat"},
            {attrInt("axis", 1)});
  b.addNode("Gemm", "fc", {"flat", "fc.weight", "fc.bias"}, {"logits"},
            {attrInt("transB", 1)});
  b.addOutput("logits", {inputShape[0], 10});
}

/// The printed module (weights as resources, locations) parses back.
void expectRoundTrip(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().enableDebugInfo());
  if (std::getenv("KILN_TEST_DUMP"))
    llvm::errs() << text;
  MLIRContext other;
  other.loadDialect<kiln::top::TopDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> reparsed = parseSourceString<ModuleOp>(text, &other);
  EXPECT_TRUE(reparsed) << text;
}

TEST_F(OnnxImporterTest, ConvBnReluGemm) {
  OnnxModelBuilder b;
  buildConvBnReluGemm(b, {1, 3, 8, 8});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(errors.empty()) << allErrors();
  EXPECT_TRUE(warnings.empty()) << warnings.front();

  EXPECT_EQ((*module)->getAttrOfType<StringAttr>("kiln.source").str(),
            path("model.onnx"));
  EXPECT_EQ(computeOps(*module),
            (std::vector<std::string>{"top.conv", "top.batchnorm", "top.relu",
                                      "top.maxpool", "top.reshape",
                                      "top.matmul", "func.return"}));

  func::FuncOp func = mainFunc(*module);
  ASSERT_EQ(func.getNumArguments(), 1u);
  ASSERT_EQ(func.getNumResults(), 1u);
  EXPECT_EQ(typeStr(func.getArgumentTypes()[0]), "tensor<1x3x8x8xf32>");
  EXPECT_EQ(typeStr(func.getResultTypes()[0]), "tensor<1x10xf32>");
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(0, "kiln.name").str(), "input");
  EXPECT_EQ(func.getResultAttrOfType<StringAttr>(0, "kiln.name").str(),
            "logits");

  // Every compute op is named after its ONNX output and has that shape.
  std::vector<std::pair<std::string, std::string>> expected = {
      {"conv1_out", "tensor<1x4x8x8xf32>"},
      {"bn1_out", "tensor<1x4x8x8xf32>"},
      {"relu1_out", "tensor<1x4x8x8xf32>"},
      {"pool1_out", "tensor<1x4x4x4xf32>"},
      {"flat", "tensor<1x64xf32>"},
      {"logits", "tensor<1x10xf32>"}};
  for (auto &[name, type] : expected) {
    Operation *op = opNamed(*module, name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_EQ(typeStr(op->getResult(0).getType()), type) << name;
  }

  auto conv = cast<kiln::top::ConvOp>(opNamed(*module, "conv1_out"));
  EXPECT_EQ(conv.getPads(), ArrayRef<int64_t>({1, 1, 1, 1}));
  EXPECT_EQ(conv.getGroup(), 1u);
  EXPECT_EQ(nameOf(conv.getFilter().getLoc()), "conv1.weight");
  EXPECT_EQ(nameOf(conv.getBias().getLoc()), "conv1.bias");
  auto filter = conv.getFilter().getDefiningOp<kiln::top::WeightOp>();
  ASSERT_TRUE(filter);
  EXPECT_EQ(kiln::top::readWeight(filter), rampData(108));
  // Weights are dense resources, not printed literals.
  EXPECT_TRUE(isa<DenseResourceElementsAttr>(filter.getValue()));

  auto bn = cast<kiln::top::BatchNormOp>(opNamed(*module, "bn1_out"));
  EXPECT_FLOAT_EQ(bn.getEpsilon().convertToDouble(), 1e-3f);

  auto fc = cast<kiln::top::MatMulOp>(opNamed(*module, "logits"));
  EXPECT_TRUE(fc.getRightTranspose());
  EXPECT_EQ(nameOf(fc.getBias().getLoc()), "fc.bias");
  EXPECT_EQ(typeStr(fc.getBias().getType()), "tensor<10xf32>");

  expectRoundTrip(*module);
}

TEST_F(OnnxImporterTest, UnsupportedOperatorNamesTheNode) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 4});
  b.addNode("Relu", "relu0", {"x"}, {"r"});
  b.addNode("Celu", "act7", {"r"}, {"y"}, {attrFloat("alpha", 1.0f)});
  b.addNode("Celu", "act8", {"y"}, {"z"});
  b.addOutput("z", {1, 4});
  EXPECT_FALSE(import(b));
  // Reported once per operator type, at the node's output name.
  ASSERT_EQ(errors.size(), 1u) << allErrors();
  EXPECT_EQ(errors[0], "y: node 'act7' (Celu): unsupported operator");
}

TEST_F(OnnxImporterTest, CustomDomainIsUnsupported) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 4});
  b.addNode("FusedThing", "f0", {"x"}, {"y"}, {}, "com.example");
  b.addOutput("y", {1, 4});
  EXPECT_FALSE(import(b));
  EXPECT_NE(allErrors().find("node 'f0' (com.example:FusedThing): unsupported "
                             "operator"),
            std::string::npos)
      << allErrors();
}

TEST_F(OnnxImporterTest, UnsupportedAttributeValue) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 2, 4, 4});
  b.addNode("MaxPool", "pool", {"x"}, {"y"},
            {attrInts("kernel_shape", {2, 2}), attrInt("storage_order", 1)});
  b.addOutput("y", {1, 2, 3, 3});
  EXPECT_FALSE(import(b));
  EXPECT_NE(allErrors().find("node 'pool' (MaxPool): attribute 'storage_order' "
                             "= 1 is not supported"),
            std::string::npos)
      << allErrors();
}

TEST_F(OnnxImporterTest, TruncatedFileFailsCleanly) {
  OnnxModelBuilder b;
  buildConvBnReluGemm(b, {1, 3, 8, 8});
  std::string bytes = b.serialize();
  std::string file = path("truncated.onnx");
  std::ofstream(file, std::ios::binary).write(bytes.data(), bytes.size() / 2);
  EXPECT_FALSE(kiln::importOnnx(ctx, file, {}));
  ASSERT_EQ(errors.size(), 1u) << allErrors();
  EXPECT_NE(errors[0].find(file + ":0:0: not a valid ONNX protobuf (truncated "
                                  "or corrupt)"),
            std::string::npos)
      << errors[0];
}

// Every prefix of a model either loads or fails with a message: no crash,
// no escaping exception.
TEST_F(OnnxImporterTest, EveryTruncationFailsCleanly) {
  OnnxModelBuilder b;
  buildConvBnReluGemm(b, {1, 3, 8, 8});
  std::string bytes = b.serialize();
  std::string file = path("prefix.onnx");
  int failures = 0;
  for (size_t n = 0; n < bytes.size(); n += 3) {
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), n);
    kiln::onnx_frontend::Model model;
    std::string error = kiln::onnx_frontend::loadModel(file, {}, model);
    if (!error.empty()) {
      ++failures;
      EXPECT_EQ(error.rfind(file + ": error: ", 0), 0u) << error;
    }
  }
  EXPECT_GT(failures, 0);
}

TEST_F(OnnxImporterTest, GarbageAndEmptyFilesFail) {
  std::string garbage = path("garbage.onnx");
  std::ofstream(garbage) << "this is not a protobuf at all\n";
  EXPECT_FALSE(kiln::importOnnx(ctx, garbage, {}));
  std::string empty = path("empty.onnx");
  std::ofstream{empty};
  EXPECT_FALSE(kiln::importOnnx(ctx, empty, {}));
  ASSERT_EQ(errors.size(), 2u) << allErrors();
  EXPECT_NE(errors[0].find(garbage), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("empty file"), std::string::npos) << errors[1];
}

TEST_F(OnnxImporterTest, MissingFileFails) {
  std::string file = path("does_not_exist.onnx");
  EXPECT_FALSE(kiln::importOnnx(ctx, file, {}));
  ASSERT_EQ(errors.size(), 1u) << allErrors();
  EXPECT_NE(errors[0].find(file + ":0:0: cannot open file"), std::string::npos)
      << errors[0];
}

TEST_F(OnnxImporterTest, CheckerFailureIsReported) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 4});
  // Uses a value nothing defines.
  b.addNode("Add", "add", {"x", "ghost"}, {"y"});
  b.addOutput("y", {1, 4});
  EXPECT_FALSE(import(b));
  EXPECT_NE(allErrors().find("invalid ONNX model"), std::string::npos)
      << allErrors();
  EXPECT_NE(allErrors().find("ghost"), std::string::npos) << allErrors();
}

TEST_F(OnnxImporterTest, InputShapeOverridePropagates) {
  OnnxModelBuilder b;
  buildConvBnReluGemm(b, {-1, 3, -1, -1}, /*globalPool=*/true);

  // Symbolic dims without an override are an error that names the input.
  EXPECT_FALSE(import(b));
  EXPECT_NE(allErrors().find("graph input 'input' has shape [?, 3, ?, ?]"),
            std::string::npos)
      << allErrors();
  errors.clear();

  kiln::ImportOptions opts;
  opts.inputShapes["input"] = {2, 3, 16, 12};
  auto module = import(b, opts);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  func::FuncOp func = mainFunc(*module);
  EXPECT_EQ(typeStr(func.getArgumentTypes()[0]), "tensor<2x3x16x12xf32>");
  EXPECT_EQ(typeStr(func.getResultTypes()[0]), "tensor<2x10xf32>");
  EXPECT_EQ(typeStr(opNamed(*module, "relu1_out")->getResult(0).getType()),
            "tensor<2x4x16x12xf32>");
  EXPECT_EQ(typeStr(opNamed(*module, "pool1_out")->getResult(0).getType()),
            "tensor<2x4x1x1xf32>");
  EXPECT_EQ(typeStr(opNamed(*module, "flat")->getResult(0).getType()),
            "tensor<2x4xf32>");

  // A second override changes the signature again.
  opts.inputShapes["input"] = {1, 3, 5, 5};
  module = import(b, opts);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_EQ(typeStr(mainFunc(*module).getResultTypes()[0]), "tensor<1x10xf32>");

  // Overriding an input the model does not have is an error.
  opts.inputShapes = {{"nope", {1, 3, 8, 8}}};
  EXPECT_FALSE(import(b, opts));
  EXPECT_NE(allErrors().find("input shape given for 'nope', which is not a "
                             "graph input (inputs: 'input')"),
            std::string::npos)
      << allErrors();
}

TEST_F(OnnxImporterTest, NonFloatInputIsRejected) {
  OnnxModelBuilder b;
  b.addInput("ids", {1, 4}, /*INT64=*/7);
  b.addNode("Identity", "id", {"ids"}, {"y"});
  b.addOutput("y", {1, 4}, /*INT64=*/7);
  EXPECT_FALSE(import(b));
  EXPECT_NE(allErrors().find("graph input 'ids' has element type int64"),
            std::string::npos)
      << allErrors();
}

TEST_F(OnnxImporterTest, ConstantsShapesAndAliases) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 2, 4, 4});
  b.addConstant("scale", {1, 2, 1, 1}, {2.0f, 3.0f});
  b.addInitializerI64("new_shape", {3}, {1, 2, -1});
  b.addInitializer("w", {32, 8}, rampData(256));
  b.addNode("Mul", "mul", {"x", "scale"}, {"m"});
  b.addNode("Identity", "id", {"m"}, {"m2"});
  b.addNode("Dropout", "drop", {"m2"}, {"d"});
  b.addNode("AveragePool", "avg", {"d"}, {"a"},
            {attrInts("kernel_shape", {3, 3}),
             attrString("auto_pad", "SAME_UPPER"),
             attrInt("count_include_pad", 1)});
  b.addNode("Add", "add", {"a", "x"}, {"s"});
  b.addNode("Concat", "cat", {"s", "x"}, {"c"}, {attrInt("axis", -3)});
  b.addNode("Reshape", "reshape", {"c", "new_shape"}, {"r"});
  b.addNode("MatMul", "mm", {"r", "w"}, {"y"});
  b.addOutput("y", {1, 2, 8});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(computeOps(*module),
            (std::vector<std::string>{"top.mul", "top.avgpool", "top.add",
                                      "top.concat", "top.reshape", "top.matmul",
                                      "func.return"}));
  // Only float constants used as data become weights; the shape does not.
  std::vector<std::string> weights;
  mainFunc(*module).walk(
      [&](kiln::top::WeightOp w) { weights.push_back(nameOf(w.getLoc())); });
  EXPECT_EQ(weights, (std::vector<std::string>{"scale", "w"}));

  auto avg = cast<kiln::top::AvgPoolOp>(opNamed(*module, "a"));
  EXPECT_EQ(avg.getPads(), ArrayRef<int64_t>({1, 1, 1, 1}));
  EXPECT_TRUE(avg.getCountIncludePad());
  // Identity and Dropout alias their input: avgpool reads the mul directly.
  EXPECT_EQ(nameOf(avg.getInput().getLoc()), "m");
  auto cat = cast<kiln::top::ConcatOp>(opNamed(*module, "c"));
  EXPECT_EQ(cat.getAxis(), 1u);
  auto reshape = cast<kiln::top::ReshapeOp>(opNamed(*module, "r"));
  EXPECT_EQ(reshape.getShape(), ArrayRef<int64_t>({1, 2, -1}));
  EXPECT_EQ(typeStr(reshape.getType()), "tensor<1x2x32xf32>");
  EXPECT_EQ(typeStr(mainFunc(*module).getResultTypes()[0]),
            "tensor<1x2x8xf32>");
}

TEST_F(OnnxImporterTest, GemmFoldsAlphaAndBeta) {
  OnnxModelBuilder b;
  b.addInput("x", {2, 3});
  b.addInitializer("B", {3, 2}, {1, 2, 3, 4, 5, 6});
  b.addInitializer("C", {1, 2}, {10, 20});
  b.addInitializer("C2", {2, 2}, {1, 1, 1, 1});
  b.addNode("Gemm", "g1", {"x", "B", "C"}, {"y1"},
            {attrFloat("alpha", 2.0f), attrFloat("beta", 0.5f)});
  b.addNode("Gemm", "g2", {"y1", "B2", "C2"}, {"y2"});
  b.addInitializer("B2", {2, 2}, {1, 0, 0, 1});
  b.addOutput("y2", {2, 2});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  auto g1 = cast<kiln::top::MatMulOp>(opNamed(*module, "y1"));
  EXPECT_FALSE(g1.getRightTranspose());
  EXPECT_EQ(
      kiln::top::readWeight(g1.getRight().getDefiningOp<kiln::top::WeightOp>()),
      (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(
      kiln::top::readWeight(g1.getBias().getDefiningOp<kiln::top::WeightOp>()),
      (std::vector<float>{5, 10}));
  EXPECT_EQ(typeStr(g1.getBias().getType()), "tensor<2xf32>");
  // A full [M, N] C is added after the product.
  auto add = cast<kiln::top::AddOp>(opNamed(*module, "y2"));
  auto mm = add.getLhs().getDefiningOp<kiln::top::MatMulOp>();
  ASSERT_TRUE(mm);
  EXPECT_EQ(nameOf(mm.getLoc()), "y2_matmul");
  EXPECT_TRUE(isa<NoneType>(mm.getBias().getType()));
}

TEST_F(OnnxImporterTest, GemmTransposesAAndScalesComputedOperands) {
  // transA transposes A; an alpha that cannot fold into a computed B scales
  // the product, and beta scales a computed C, both after the matmul.
  OnnxModelBuilder b;
  b.addInput("x", {3, 2});
  b.addInput("B", {3, 4});
  b.addInput("C", {2, 4});
  b.addNode("Gemm", "g", {"x", "B", "C"}, {"y"},
            {attrInt("transA", 1), attrFloat("alpha", 2.5f),
             attrFloat("beta", 0.5f)});
  b.addOutput("y", {2, 4});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_EQ(
      computeOps(*module),
      (std::vector<std::string>{"top.transpose", "top.active", "top.matmul",
                                "top.active", "top.add", "func.return"}));
  auto add = cast<kiln::top::AddOp>(opNamed(*module, "y"));
  auto scaled = add.getLhs().getDefiningOp<kiln::top::ActiveOp>();
  ASSERT_TRUE(scaled);
  EXPECT_EQ(scaled.getMode(), kiln::top::ActiveMode::Scale);
  EXPECT_EQ(scaled.getAlpha().convertToDouble(), 2.5);
  auto cScaled = add.getRhs().getDefiningOp<kiln::top::ActiveOp>();
  ASSERT_TRUE(cScaled);
  EXPECT_EQ(cScaled.getAlpha().convertToDouble(), 0.5);
  EXPECT_EQ(typeStr(add.getType()), "tensor<2x4xf32>");

  // A 3-D A is still rejected, naming the node.
  errors.clear();
  OnnxModelBuilder t;
  t.addInput("x", {1, 3, 2});
  t.addInitializer("B", {2, 2}, rampData(4));
  t.addNode("Gemm", "g3", {"x", "B"}, {"y"});
  t.addOutput("y", {1, 3, 2});
  EXPECT_FALSE(import(t));
  EXPECT_NE(allErrors().find("node 'g3' (Gemm): A must be 2-D"),
            std::string::npos)
      << allErrors();
}

TEST_F(OnnxImporterTest, ConvWithDynamicFilterAndSamePadding) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 2, 7, 7});
  b.addInput("w", {4, 1, 3, 3});
  b.addNode("Conv", "dconv", {"x", "w"}, {"y"},
            {attrInt("group", 2), attrInts("strides", {2, 2}),
             attrString("auto_pad", "SAME_LOWER")});
  b.addOutput("y", {1, 4, 4, 4});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  auto conv = cast<kiln::top::ConvOp>(opNamed(*module, "y"));
  EXPECT_TRUE(isa<BlockArgument>(conv.getFilter()));
  EXPECT_EQ(conv.getGroup(), 2u);
  // out = ceil(7 / 2) = 4, total pad = 3 * 2 + 3 - 7 = 2: one each side.
  EXPECT_EQ(conv.getPads(), ArrayRef<int64_t>({1, 1, 1, 1}));
  EXPECT_EQ(typeStr(conv.getType()), "tensor<1x4x4x4xf32>");
  EXPECT_TRUE(isa<NoneType>(conv.getBias().getType()));
}

TEST_F(OnnxImporterTest, OldOpsetIsConverted) {
  OnnxModelBuilder b(/*opset=*/9);
  b.addInput("x", {1, 2, 4, 4});
  // An exporter-style name that is not a bare identifier.
  b.addInitializer("onnx::Conv_7/w:0", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.addNode("Conv", "c", {"x", "onnx::Conv_7/w:0"}, {"y"});
  b.addNode("Relu", "r", {"y"}, {"z"});
  b.addOutput("z", {1, 2, 4, 4});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_EQ(computeOps(*module),
            (std::vector<std::string>{"top.conv", "top.relu", "func.return"}));
  // The weight's resource key keeps the odd name and still parses back.
  EXPECT_NE(opNamed(*module, "onnx::Conv_7/w:0"), nullptr);
  expectRoundTrip(*module);
}

TEST_F(OnnxImporterTest, ShapeErrorsFromTopOpsNameTheNode) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 3});
  b.addInput("y", {1, 4});
  b.addNode("Add", "bad_add", {"x", "y"}, {"z"});
  b.addOutput("z", {1, 4});
  EXPECT_FALSE(import(b));
  EXPECT_NE(allErrors().find("do not broadcast"), std::string::npos)
      << allErrors();
  EXPECT_NE(allErrors().find("while importing node 'bad_add' (Add)"),
            std::string::npos)
      << allErrors();
}

TEST_F(OnnxImporterTest, NewerOpsetIsRejected) {
  OnnxModelBuilder b(/*opset=*/18);
  b.addInput("x", {1, 4});
  b.addNode("Relu", "r", {"x"}, {"y"});
  b.addOutput("y", {1, 4});
  EXPECT_FALSE(import(b));
  ASSERT_EQ(errors.size(), 1u) << allErrors();
  EXPECT_NE(errors[0].find("opset 18"), std::string::npos) << errors[0];
}

TEST_F(OnnxImporterTest, ExternalWeights) {
  std::vector<float> w = rampData(8);
  {
    std::ofstream data(path("weights.bin"), std::ios::binary);
    data << "pad!"; // the tensor starts at offset 4
    data.write(reinterpret_cast<const char *>(w.data()), w.size() * 4);
  }
  OnnxModelBuilder b;
  b.addInput("x", {1, 2, 3, 3});
  b.addExternalInitializer("w", {4, 2, 1, 1}, "weights.bin", 4, 32);
  b.addNode("Conv", "c", {"x", "w"}, {"y"});
  b.addOutput("y", {1, 4, 3, 3});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  auto conv = cast<kiln::top::ConvOp>(opNamed(*module, "y"));
  EXPECT_EQ(kiln::top::readWeight(
                conv.getFilter().getDefiningOp<kiln::top::WeightOp>()),
            w);

  // A length past the end of the file is an error naming the tensor.
  OnnxModelBuilder bad;
  bad.addInput("x", {1, 2, 3, 3});
  bad.addExternalInitializer("w", {4, 2, 1, 1}, "weights.bin", 8, 32);
  bad.addNode("Conv", "c", {"x", "w"}, {"y"});
  bad.addOutput("y", {1, 4, 3, 3});
  EXPECT_FALSE(import(bad));
  EXPECT_NE(allErrors().find("tensor 'w'"), std::string::npos) << allErrors();
}

// loadModel on its own: every stored element type converts to f32 or i64.
TEST_F(OnnxImporterTest, LoadModelConvertsElementTypes) {
  namespace of = kiln::onnx_frontend;
  OnnxModelBuilder b;
  b.addInput("x", {1, 4});
  b.addInitializer("x_init", {1, 4}, {9, 9, 9, 9}); // an input with a default
  b.addInput("x_init", {1, 4});
  // float16 1.0, -2.0, 0.5, 65504 (max), and a subnormal 2^-24.
  const uint16_t halves[] = {0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001};
  b.addInitializerRaw("f16", {5}, of::kFloat16,
                      std::string(reinterpret_cast<const char *>(halves), 10));
  b.addInitializerInt32Data("bf16", {2}, of::kBFloat16, {0x3f80, 0xc040});
  b.addInitializerDoubleData("f64", {2}, {0.25, -8.0});
  const int32_t ints[] = {-7, 1 << 30};
  b.addInitializerRaw("i32", {2}, of::kInt32,
                      std::string(reinterpret_cast<const char *>(ints), 8));
  b.addInitializerRaw("b", {3}, of::kBool, std::string("\x01\x00\x01", 3));
  b.addNode("Relu", "r", {"x"}, {"y"});
  b.addOutput("y", {1, 4});
  std::string file = path("types.onnx");
  ASSERT_TRUE(b.save(file));

  of::Model model;
  ASSERT_EQ(of::loadModel(file, {}, model), "");
  EXPECT_EQ(model.opset, 13);
  ASSERT_EQ(model.inputs.size(), 1u);
  EXPECT_EQ(model.inputs[0].name, "x");
  EXPECT_TRUE(model.inputs[0].known);
  EXPECT_EQ(model.initializers.at("f16").f32,
            (std::vector<float>{1.0f, -2.0f, 0.5f, 65504.0f, 5.9604645e-8f}));
  EXPECT_EQ(model.initializers.at("bf16").f32,
            (std::vector<float>{1.0f, -3.0f}));
  EXPECT_EQ(model.initializers.at("f64").f32,
            (std::vector<float>{0.25f, -8.0f}));
  EXPECT_EQ(model.initializers.at("i32").i64,
            (std::vector<int64_t>{-7, 1 << 30}));
  EXPECT_EQ(model.initializers.at("b").i64, (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(model.valueInfo.at("y").shape, (std::vector<int64_t>{1, 4}));
  ASSERT_EQ(model.nodes.size(), 1u);
  EXPECT_EQ(model.nodes[0].opType, "Relu");
  EXPECT_EQ(model.nodes[0].attr("nope"), nullptr);

  // Errors are "<path>: error: <message>".
  EXPECT_EQ(of::loadModel(path("missing.onnx"), {}, model),
            path("missing.onnx") + ": error: cannot open file: no such file");
}

// A network exported by PyTorch, when /usr/bin/python3 has torch: guards the
// exporter's idioms (Constant nodes, Flatten, Gemm, value_info) end to end.
TEST_F(OnnxImporterTest, TorchExportedModel) {
  std::string file = path("torch.onnx");
  std::string script = path("export.py");
  std::ofstream(script) << R"(import sys, torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(8 * 4 * 4, 5)
    def forward(self, x):
        # BN after the ReLU: the exporter would fold it into a preceding conv.
        y = self.pool(self.bn(torch.relu(self.conv(x))))
        return self.fc(torch.flatten(y, 1))
torch.onnx.export(Net().eval(), torch.randn(1, 3, 8, 8), sys.argv[1],
                  input_names=["image"], output_names=["scores"], opset_version=13,
                  do_constant_folding=False)
)";
  std::string cmd = "/usr/bin/python3 -c 'import torch' 2>/dev/null && "
                    "/usr/bin/python3 " +
                    script + " " + file + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0 || !fs::exists(file))
    GTEST_SKIP() << "/usr/bin/python3 cannot export with torch";
  auto module = kiln::importOnnx(ctx, file, {});
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(computeOps(*module),
            (std::vector<std::string>{"top.conv", "top.relu", "top.batchnorm",
                                      "top.maxpool", "top.reshape",
                                      "top.matmul", "func.return"}));
  func::FuncOp func = mainFunc(*module);
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(0, "kiln.name").str(), "image");
  EXPECT_EQ(func.getResultAttrOfType<StringAttr>(0, "kiln.name").str(),
            "scores");
  EXPECT_EQ(typeStr(func.getResultTypes()[0]), "tensor<1x5xf32>");
  expectRoundTrip(*module);
}

//===----------------------------------------------------------------------===//
// Constant folding
//===----------------------------------------------------------------------===//

/// Weights in @main, by name.
std::vector<std::string> weightNames(ModuleOp module) {
  std::vector<std::string> names;
  mainFunc(module).walk(
      [&](kiln::top::WeightOp w) { names.push_back(nameOf(w.getLoc())); });
  return names;
}

// PyTorch's x.view(x.size(0), x.size(1), -1)-style chains: Shape of a static
// value is a constant, and so is everything computed from it. Nothing of the
// chain reaches the IR; integer tensors never become Top ops.
TEST_F(OnnxImporterTest, ShapeChainFoldsAtImport) {
  OnnxModelBuilder b(13);
  b.addInput("x", {2, 3, 4, 4});
  b.addNode("Shape", "shape", {"x"}, {"s"});
  b.addNode("Constant", "c0", {}, {"i0"}, {attrInt("value_int", 0)});
  b.addNode("Constant", "c2", {}, {"i2"}, {attrInt("value_int", 2)});
  b.addNode("Constant", "c3", {}, {"i3"}, {attrInt("value_int", -1)});
  b.addInitializerI64("axes0", {1}, {0});
  b.addInitializerI64("i1", {1}, {1});
  b.addNode("Gather", "g0", {"s", "i0"}, {"n"});          // 2 (scalar)
  b.addNode("Gather", "g1", {"s", "i1"}, {"c"});          // [3]
  b.addNode("Gather", "g2", {"s", "i2"}, {"h"});          // 4
  b.addNode("Gather", "g3", {"s", "i3"}, {"w"});          // 4 (index -1)
  b.addNode("Mul", "hw", {"h", "w"}, {"hw"});             // 16
  b.addNode("Unsqueeze", "u0", {"n", "axes0"}, {"n1"});   // [2]
  b.addNode("Unsqueeze", "u1", {"hw", "axes0"}, {"hw1"}); // [16]
  b.addNode("Concat", "cat", {"n1", "c", "hw1"}, {"shape2"},
            {attrInt("axis", 0)});
  b.addNode("Reshape", "reshape", {"x", "shape2"}, {"y"});
  // An integer turned float becomes the one weight.
  b.addNode("Cast", "cast", {"hw"}, {"hw_f"}, {attrInt("to", 1)});
  b.addNode("Div", "div", {"y", "hw_f"}, {"z"});
  b.addOutput("z", {2, 3, 16});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(computeOps(*module), (std::vector<std::string>{
                                     "top.reshape", "top.div", "func.return"}));
  auto reshape = cast<kiln::top::ReshapeOp>(opNamed(*module, "y"));
  EXPECT_EQ(reshape.getShape(), ArrayRef<int64_t>({2, 3, 16}));
  EXPECT_EQ(weightNames(*module), (std::vector<std::string>{"hw_f"}));
  auto div = cast<kiln::top::DivOp>(opNamed(*module, "z"));
  EXPECT_EQ(
      kiln::top::readWeight(div.getRhs().getDefiningOp<kiln::top::WeightOp>()),
      (std::vector<float>{16}));
  // No integer type anywhere in the IR.
  mainFunc(*module).walk([](Operation *op) {
    for (Type t : op->getResultTypes()) {
      if (auto tensor = dyn_cast<RankedTensorType>(t)) {
        EXPECT_TRUE(tensor.getElementType().isF32()) << typeStr(t);
      }
    }
  });
}

// Float ops on constants are evaluated with the Top interpreter at import.
TEST_F(OnnxImporterTest, FloatConstantsFoldWithTheInterpreter) {
  OnnxModelBuilder b;
  b.addInput("x", {2, 3});
  b.addInitializer("a", {3, 2}, {1, 2, 3, 4, 5, 6});
  b.addInitializer("s", {1}, {10});
  b.addNode("Transpose", "t", {"a"}, {"at"});     // [[1, 3, 5], [2, 4, 6]]
  b.addNode("Mul", "m", {"at", "s"}, {"scaled"}); // x 10
  b.addNode("Relu", "r", {"scaled"}, {"bias"});
  b.addNode("Equal", "eq", {"a", "a"}, {"same"});
  b.addNode("Add", "add", {"x", "bias"}, {"y"});
  b.addOutput("y", {2, 3});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_EQ(computeOps(*module),
            (std::vector<std::string>{"top.add", "func.return"}));
  auto add = cast<kiln::top::AddOp>(opNamed(*module, "y"));
  auto bias = add.getRhs().getDefiningOp<kiln::top::WeightOp>();
  ASSERT_TRUE(bias);
  EXPECT_EQ(nameOf(bias.getLoc()), "bias");
  EXPECT_EQ(kiln::top::readWeight(bias),
            (std::vector<float>{10, 30, 50, 20, 40, 60}));
  // The inputs of folded ops are gone.
  EXPECT_EQ(weightNames(*module), (std::vector<std::string>{"bias"}));
  expectRoundTrip(*module);
}

// Where and Equal on constants fold; Equal on a computed value is an error;
// Where with a constant condition selects computed values by a gather.
TEST_F(OnnxImporterTest, WhereAndEqualOnConstants) {
  OnnxModelBuilder b;
  b.addInput("x", {4});
  b.addInitializerI64("a", {4}, {1, 2, 3, 4});
  b.addInitializerI64("two", {}, {2});
  b.addInitializer("yes", {1}, {100});
  b.addInitializer("no", {4}, {1, 2, 3, 4});
  b.addNode("Equal", "eq", {"a", "two"}, {"mask"});
  b.addNode("Where", "wh", {"mask", "yes", "no"}, {"picked"});
  b.addNode("Add", "add", {"x", "picked"}, {"y"});
  b.addOutput("y", {4});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  auto add = cast<kiln::top::AddOp>(opNamed(*module, "y"));
  EXPECT_EQ(
      kiln::top::readWeight(add.getRhs().getDefiningOp<kiln::top::WeightOp>()),
      (std::vector<float>{1, 100, 3, 4}));

  errors.clear();
  OnnxModelBuilder c;
  c.addInput("x", {4});
  c.addInitializer("zero", {1}, {0});
  c.addNode("Equal", "eqx", {"x", "zero"}, {"mask"});
  c.addNode("Where", "wh", {"mask", "x", "zero"}, {"y"});
  c.addOutput("y", {4});
  EXPECT_FALSE(import(c));
  EXPECT_NE(allErrors().find("node 'eqx' (Equal): only constant inputs are "
                             "supported"),
            std::string::npos)
      << allErrors();

  // masked_fill(x, mask, -inf): x broadcast, both flattened, a gather picks.
  errors.clear();
  OnnxModelBuilder m;
  m.addInput("x", {1, 3});
  m.addInitializerRaw("mask", {2, 1}, kiln::onnx_frontend::kBool,
                      std::string("\x01\x00", 2));
  m.addInitializer("ninf", {}, {-INFINITY});
  m.addNode("Where", "wh", {"mask", "ninf", "x"}, {"y"});
  m.addOutput("y", {2, 3});
  module = import(m);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_EQ(computeOps(*module),
            (std::vector<std::string>{"top.expand", "top.reshape", "top.concat",
                                      "top.gather", "func.return"}));
  auto gather = cast<kiln::top::GatherOp>(opNamed(*module, "y"));
  // Row 0 takes -inf (indices 0..2), row 1 takes x (6 + 3..5).
  EXPECT_EQ(gather.getIndices(), ArrayRef<int64_t>({0, 1, 2, 9, 10, 11}));
  EXPECT_EQ(typeStr(gather.getType()), "tensor<2x3xf32>");
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

// A 1-D conv runs as a 2-D one with H = 1: reshapes around it, the filter
// reshaped at import.
TEST_F(OnnxImporterTest, Conv1DRunsAs2D) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 2, 9});
  b.addInitializer("w", {4, 2, 3}, rampData(24));
  b.addNode("Conv", "c", {"x", "w"}, {"y"},
            {attrInts("strides", {2}), attrInts("pads", {1, 0}),
             attrInts("dilations", {2})});
  b.addOutput("y", {1, 4, 3});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(computeOps(*module),
            (std::vector<std::string>{"top.reshape", "top.conv", "top.reshape",
                                      "func.return"}));
  auto conv = cast<kiln::top::ConvOp>(opNamed(*module, "y_2d"));
  EXPECT_EQ(conv.getKernelShape(), ArrayRef<int64_t>({1, 3}));
  EXPECT_EQ(conv.getStrides(), ArrayRef<int64_t>({1, 2}));
  EXPECT_EQ(conv.getDilations(), ArrayRef<int64_t>({1, 2}));
  EXPECT_EQ(conv.getPads(), ArrayRef<int64_t>({0, 1, 0, 0}));
  EXPECT_EQ(typeStr(conv.getFilter().getType()), "tensor<4x2x1x3xf32>");
  EXPECT_TRUE(conv.getFilter().getDefiningOp<kiln::top::WeightOp>());
  // (9 + 1 - 5) / 2 + 1 = 3 columns.
  EXPECT_EQ(typeStr(opNamed(*module, "y")->getResult(0).getType()),
            "tensor<1x4x3xf32>");
}

TEST_F(OnnxImporterTest, ConvTransposeAttributes) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 4, 3, 3});
  b.addInitializer("w", {4, 3, 3, 3}, rampData(108)); // [ic, oc/g, kh, kw]
  b.addInitializer("bias", {6}, rampData(6));
  // output_shape sets the pads: full H = 2 * 2 + 3 = 7 -> 6 trims 1 (at the
  // beginning without SAME_UPPER); full W = 7 -> 9 adds 2 output padding.
  b.addNode("ConvTranspose", "up", {"x", "w", "bias"}, {"y"},
            {attrInts("strides", {2, 2}), attrInt("group", 2),
             attrInts("output_shape", {6, 9})});
  b.addOutput("y", {1, 6, 6, 9});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  auto deconv = cast<kiln::top::DeconvOp>(opNamed(*module, "y"));
  EXPECT_EQ(deconv.getPads(), ArrayRef<int64_t>({1, 0, 0, 0}));
  EXPECT_EQ(deconv.getOutputPadding(), ArrayRef<int64_t>({0, 2}));
  EXPECT_EQ(deconv.getGroup(), 2u);
  EXPECT_FALSE(deconv.getFilterReordered());
  EXPECT_EQ(typeStr(deconv.getFilter().getType()), "tensor<4x3x3x3xf32>");
  EXPECT_EQ(typeStr(deconv.getType()), "tensor<1x6x6x9xf32>");

  // A computed filter stays a graph value; 1-D runs as 2-D.
  OnnxModelBuilder d;
  d.addInput("x", {1, 2, 5});
  d.addInput("w", {2, 3, 4});
  d.addNode("ConvTranspose", "up1", {"x", "w"}, {"y"},
            {attrInts("strides", {3}), attrInts("pads", {1, 2}),
             attrInts("output_padding", {1})});
  d.addOutput("y", {1, 3, 14});
  module = import(d);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_EQ(computeOps(*module), (std::vector<std::string>{
                                     "top.reshape", "top.reshape", "top.deconv",
                                     "top.reshape", "func.return"}));
  deconv = cast<kiln::top::DeconvOp>(opNamed(*module, "y_2d"));
  EXPECT_EQ(deconv.getPads(), ArrayRef<int64_t>({0, 1, 0, 2}));
  EXPECT_EQ(deconv.getOutputPadding(), ArrayRef<int64_t>({0, 1}));
  EXPECT_EQ(typeStr(opNamed(*module, "y")->getResult(0).getType()),
            "tensor<1x3x14xf32>");
}

TEST_F(OnnxImporterTest, SliceGatherSplitPadNormalize) {
  OnnxModelBuilder b(13);
  b.addInput("x", {4, 6});
  // Backwards from the last row past the first, every 2nd column from 1 to
  // an end far past the last: rows 3, 1 and columns 1, 3, 5.
  b.addInitializerI64("starts", {2}, {-1, 1});
  b.addInitializerI64("ends", {2}, {INT64_MIN, 1000});
  b.addInitializerI64("axes", {2}, {0, -1});
  b.addInitializerI64("steps", {2}, {-2, 2});
  b.addNode("Slice", "sl", {"x", "starts", "ends", "axes", "steps"}, {"s"});
  b.addInitializerI64("idx", {1, 2}, {-1, 0});
  b.addNode("Gather", "ga", {"x", "idx"}, {"g"}, {attrInt("axis", 1)});
  b.addInitializerI64("split", {2}, {1, 3});
  b.addNode("Split", "sp", {"x", "split"}, {"p0", "p1"}, {attrInt("axis", 0)});
  // Pad rows by 1 on top, crop 2 columns at the end.
  b.addInitializerI64("pads", {4}, {1, 0, 0, -2});
  b.addNode("Pad", "pa", {"x", "pads"}, {"pd"}, {attrString("mode", "edge")});
  for (const char *out : {"s", "p0", "p1", "pd"})
    b.addOutput(out, {-1, -1});
  b.addOutput("g", {-1, -1, -1});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  auto slice = cast<kiln::top::SliceOp>(opNamed(*module, "s"));
  EXPECT_EQ(slice.getStarts(), ArrayRef<int64_t>({3, 1}));
  EXPECT_EQ(slice.getEnds(), ArrayRef<int64_t>({-1, 6}));
  EXPECT_EQ(slice.getSteps(), ArrayRef<int64_t>({-2, 2}));
  EXPECT_EQ(typeStr(slice.getType()), "tensor<2x3xf32>");
  auto gather = cast<kiln::top::GatherOp>(opNamed(*module, "g"));
  EXPECT_EQ(gather.getIndices(), ArrayRef<int64_t>({5, 0}));
  EXPECT_EQ(gather.getIndicesShape(), ArrayRef<int64_t>({1, 2}));
  EXPECT_EQ(typeStr(gather.getType()), "tensor<4x1x2xf32>");
  auto p1 = cast<kiln::top::SliceOp>(opNamed(*module, "p1"));
  EXPECT_EQ(p1.getStarts(), ArrayRef<int64_t>({1, 0}));
  EXPECT_EQ(typeStr(p1.getType()), "tensor<3x6xf32>");
  auto crop = cast<kiln::top::SliceOp>(opNamed(*module, "pd"));
  auto pad = crop.getInput().getDefiningOp<kiln::top::PadOp>();
  ASSERT_TRUE(pad);
  EXPECT_EQ(nameOf(pad.getLoc()), "pd_pad");
  EXPECT_EQ(pad.getPads(), ArrayRef<int64_t>({1, 0, 0, 0}));
  EXPECT_EQ(pad.getMode(), kiln::top::PadMode::Edge);
  EXPECT_EQ(typeStr(crop.getType()), "tensor<5x4xf32>");
}

TEST_F(OnnxImporterTest, ActivationsAndClip) {
  OnnxModelBuilder b(13);
  b.addInput("x", {2, 3});
  b.addInitializer("lo", {}, {-1});
  b.addInitializer("zero", {}, {0});
  b.addInitializer("six", {}, {6});
  b.addNode("Clip", "c1", {"x", "lo", "six"}, {"a"});
  b.addNode("Clip", "c2", {"a", "zero"}, {"b"});    // max absent: a ReLU
  b.addNode("Clip", "c3", {"b", "", "six"}, {"c"}); // min absent
  b.addNode("Selu", "selu", {"c"}, {"d"});
  b.addNode("HardSigmoid", "hs", {"d"}, {"e"}, {attrFloat("alpha", 0.3f)});
  b.addOutput("e", {2, 3});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_EQ(
      computeOps(*module),
      (std::vector<std::string>{"top.active", "top.relu", "top.active",
                                "top.active", "top.active", "func.return"}));
  auto c1 = cast<kiln::top::ActiveOp>(opNamed(*module, "a"));
  EXPECT_EQ(c1.getMode(), kiln::top::ActiveMode::Clip);
  EXPECT_EQ(c1.getAlpha().convertToDouble(), -1);
  EXPECT_EQ(c1.getBeta().convertToDouble(), 6);
  auto c3 = cast<kiln::top::ActiveOp>(opNamed(*module, "c"));
  EXPECT_TRUE(std::isinf(c3.getAlpha().convertToDouble()));
  EXPECT_LT(c3.getAlpha().convertToDouble(), 0);
  auto selu = cast<kiln::top::ActiveOp>(opNamed(*module, "d"));
  EXPECT_EQ(selu.getMode(), kiln::top::ActiveMode::Selu);
  EXPECT_FLOAT_EQ(selu.getBeta().convertToDouble(), 1.0507009873554805f);
  auto hs = cast<kiln::top::ActiveOp>(opNamed(*module, "e"));
  EXPECT_FLOAT_EQ(hs.getAlpha().convertToDouble(), 0.3f);
  EXPECT_FLOAT_EQ(hs.getBeta().convertToDouble(), 0.5f);
  expectRoundTrip(*module);
}

// Opsets 11-12 normalize the input coerced to 2-D at the axis; 13+ along
// the one axis.
TEST_F(OnnxImporterTest, SoftmaxBySemanticsOfTheOpset) {
  for (int64_t opset : {11, 13}) {
    OnnxModelBuilder b(opset);
    b.addInput("x", {2, 3, 4});
    b.addNode("Softmax", "sm", {"x"}, {"y"}, {attrInt("axis", 1)});
    b.addNode("LogSoftmax", "lsm", {"x"}, {"z"});
    b.addOutput("y", {2, 3, 4});
    b.addOutput("z", {2, 3, 4});
    auto module = import(b);
    ASSERT_TRUE(module) << allErrors();
    if (opset == 11) {
      // Softmax: [2, 12] along 1; LogSoftmax's default axis 1 likewise.
      EXPECT_EQ(computeOps(*module),
                (std::vector<std::string>{
                    "top.reshape", "top.softmax", "top.reshape", "top.reshape",
                    "top.softmax", "top.reshape", "func.return"}));
      auto inner = cast<kiln::top::SoftmaxOp>(opNamed(*module, "y_softmax"));
      EXPECT_EQ(typeStr(inner.getType()), "tensor<2x12xf32>");
      EXPECT_EQ(inner.getAxis(), 1u);
      EXPECT_TRUE(
          cast<kiln::top::SoftmaxOp>(opNamed(*module, "z_softmax")).getLog());
    } else {
      EXPECT_EQ(computeOps(*module),
                (std::vector<std::string>{"top.softmax", "top.softmax",
                                          "func.return"}));
      EXPECT_EQ(cast<kiln::top::SoftmaxOp>(opNamed(*module, "y")).getAxis(),
                1u);
      // LogSoftmax-13 defaults to the last axis.
      EXPECT_EQ(cast<kiln::top::SoftmaxOp>(opNamed(*module, "z")).getAxis(),
                2u);
    }
  }
}

TEST_F(OnnxImporterTest, ReductionsNormalizeAxes) {
  OnnxModelBuilder b(13);
  b.addInput("x", {2, 3, 4, 5});
  b.addNode("ReduceMean", "m", {"x"}, {"mean"},
            {attrInts("axes", {-1, 1}), attrInt("keepdims", 0)});
  b.addInitializerI64("axes", {1}, {-2});
  b.addNode("ReduceSum", "s", {"x", "axes"}, {"sum"});
  b.addNode("ReduceL2", "l2", {"x"}, {"norm"});
  b.addInitializerI64("none", {0}, {});
  b.addNode("ReduceSum", "noop", {"x", "none"}, {"same"},
            {attrInt("noop_with_empty_axes", 1)});
  b.addOutput("mean", {2, 4});
  b.addOutput("sum", {2, 3, 1, 5});
  b.addOutput("norm", {1, 1, 1, 1});
  b.addOutput("same", {2, 3, 4, 5});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  auto mean = cast<kiln::top::ReduceOp>(opNamed(*module, "mean"));
  EXPECT_EQ(mean.getAxes(), ArrayRef<int64_t>({1, 3}));
  EXPECT_FALSE(mean.getKeepdims());
  EXPECT_EQ(cast<kiln::top::ReduceOp>(opNamed(*module, "sum")).getAxes(),
            ArrayRef<int64_t>({2}));
  auto l2 = cast<kiln::top::ReduceOp>(opNamed(*module, "norm"));
  EXPECT_EQ(l2.getMode(), kiln::top::ReduceMode::L2);
  EXPECT_EQ(l2.getAxes(), ArrayRef<int64_t>({0, 1, 2, 3}));
  // noop_with_empty_axes: the output is the input.
  EXPECT_TRUE(isa<BlockArgument>(
      mainFunc(*module).getBody().back().getTerminator()->getOperand(3)));
}

TEST_F(OnnxImporterTest, MatMulVectorsAndBatches) {
  OnnxModelBuilder b;
  b.addInput("v", {4});
  b.addInput("m", {2, 1, 3, 4});
  b.addInitializer("w", {5, 4, 2}, rampData(40));
  b.addNode("MatMul", "vm", {"v", "w"}, {"vw"});  // [5, 2]
  b.addNode("MatMul", "mv", {"m", "v"}, {"mvv"}); // [2, 1, 3]
  b.addNode("MatMul", "mm", {"m", "w"}, {"mw"});  // [2, 5, 3, 2]
  b.addOutput("vw", {5, 2});
  b.addOutput("mvv", {2, 1, 3});
  b.addOutput("mw", {2, 5, 3, 2});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(typeStr(opNamed(*module, "vw_matmul")->getResult(0).getType()),
            "tensor<5x1x2xf32>");
  EXPECT_EQ(typeStr(opNamed(*module, "vw")->getResult(0).getType()),
            "tensor<5x2xf32>");
  EXPECT_EQ(typeStr(opNamed(*module, "mvv")->getResult(0).getType()),
            "tensor<2x1x3xf32>");
  EXPECT_EQ(typeStr(opNamed(*module, "mw")->getResult(0).getType()),
            "tensor<2x5x3x2xf32>");
}

TEST_F(OnnxImporterTest, ResizeAndUpsample) {
  OnnxModelBuilder b(13);
  b.addInput("x", {1, 2, 4, 6});
  b.addInitializerI64("sizes", {4}, {1, 2, 8, 9});
  b.addNode(
      "Resize", "bilinear", {"x", "", "", "sizes"}, {"y"},
      {attrString("mode", "linear"),
       attrString("coordinate_transformation_mode", "pytorch_half_pixel")});
  b.addInitializer("scales", {4}, {1, 1, 2, 1.5f});
  b.addNode("Resize", "nearest", {"x", "", "scales"}, {"z"},
            {attrString("coordinate_transformation_mode", "asymmetric"),
             attrString("nearest_mode", "floor")});
  b.addOutput("y", {1, 2, 8, 9});
  b.addOutput("z", {1, 2, 8, 9});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  auto y = cast<kiln::top::ResizeOp>(opNamed(*module, "y"));
  EXPECT_EQ(y.getMode(), kiln::top::ResizeMode::Linear);
  EXPECT_EQ(y.getOutHw(), ArrayRef<int64_t>({8, 9}));
  EXPECT_EQ(y.getScales(), ArrayRef<double>({2.0, 1.5}));
  EXPECT_EQ(y.getCoordMode(), kiln::top::ResizeCoordMode::PytorchHalfPixel);
  auto z = cast<kiln::top::ResizeOp>(opNamed(*module, "z"));
  EXPECT_EQ(z.getMode(), kiln::top::ResizeMode::Nearest);
  EXPECT_EQ(z.getCoordMode(), kiln::top::ResizeCoordMode::Asymmetric);
  EXPECT_EQ(z.getNearestMode(), kiln::top::ResizeNearestMode::Floor);

  // Upsample (opset 9) keeps its asymmetric, floor semantics through the
  // conversion to Resize-11.
  OnnxModelBuilder u(9);
  u.addInput("x", {1, 2, 3, 3});
  u.addInitializer("scales", {4}, {1, 1, 2, 2});
  u.addNode("Upsample", "up", {"x", "scales"}, {"y"},
            {attrString("mode", "linear")});
  u.addOutput("y", {1, 2, 6, 6});
  module = import(u);
  ASSERT_TRUE(module) << allErrors();
  auto up = cast<kiln::top::ResizeOp>(opNamed(*module, "y"));
  EXPECT_EQ(up.getMode(), kiln::top::ResizeMode::Linear);
  EXPECT_EQ(up.getCoordMode(), kiln::top::ResizeCoordMode::Asymmetric);
  EXPECT_EQ(up.getNearestMode(), kiln::top::ResizeNearestMode::Floor);
  EXPECT_EQ(typeStr(up.getType()), "tensor<1x2x6x6xf32>");
}

TEST_F(OnnxImporterTest, InstanceNormDecomposes) {
  OnnxModelBuilder b;
  b.addInput("x", {1, 3, 4, 4});
  b.addInitializer("scale", {3}, {1, 2, 3});
  b.addInitializer("bias", {3}, {0, 1, 2});
  b.addNode("InstanceNormalization", "in", {"x", "scale", "bias"}, {"y"},
            {attrFloat("epsilon", 1e-3f)});
  b.addOutput("y", {1, 3, 4, 4});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_EQ(computeOps(*module),
            (std::vector<std::string>{"top.reduce", "top.sub", "top.active",
                                      "top.reduce", "top.active", "top.active",
                                      "top.mul", "top.mul", "top.add",
                                      "func.return"}));
  auto eps = cast<kiln::top::ActiveOp>(opNamed(*module, "y_var_eps"));
  EXPECT_EQ(eps.getMode(), kiln::top::ActiveMode::Scale);
  EXPECT_FLOAT_EQ(eps.getBeta().convertToDouble(), 1e-3f);
  EXPECT_EQ(cast<kiln::top::ReduceOp>(opNamed(*module, "y_mean")).getAxes(),
            ArrayRef<int64_t>({2, 3}));
  auto add = cast<kiln::top::AddOp>(opNamed(*module, "y"));
  EXPECT_EQ(typeStr(add.getRhs().getType()), "tensor<1x3x1x1xf32>");
}

TEST_F(OnnxImporterTest, VariadicMaxIsAChain) {
  OnnxModelBuilder b;
  b.addInput("a", {2});
  b.addInput("b", {2});
  b.addInput("c", {2});
  b.addNode("Max", "mx", {"a", "b", "c"}, {"y"});
  b.addNode("Sum", "sum", {"y"}, {"z"}); // one input: the input itself
  b.addOutput("z", {2});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_EQ(computeOps(*module),
            (std::vector<std::string>{"top.max", "top.max", "func.return"}));
  auto last = cast<kiln::top::MaxOp>(opNamed(*module, "y"));
  EXPECT_EQ(nameOf(last.getLhs().getLoc()), "y_1");
}

// PyTorch's erf-based GELU becomes one top.active gelu.
//===----------------------------------------------------------------------===//
// Errors name the node, the op type and the attribute
//===----------------------------------------------------------------------===//

TEST_F(OnnxImporterTest, UnsupportedAttributeValuesNameTheAttribute) {
  struct Case {
    std::string expected;
    std::function<void(OnnxModelBuilder &)> build;
    std::vector<int64_t> outShape = {-1, -1, -1, -1};
    int32_t outType = 1;
  };
  std::vector<Case> cases = {
      {"node 'r' (Resize): attribute 'mode' = \"cubic\" is not supported",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {1, 1, 2, 2});
         b.addInitializer("scales", {4}, {1, 1, 2, 2});
         b.addNode("Resize", "r", {"x", "", "scales"}, {"y"},
                   {attrString("mode", "cubic")});
       }},
      {"node 'r' (Resize): attribute 'coordinate_transformation_mode' = "
       "\"tf_crop_and_resize\" is not supported",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {1, 1, 2, 2});
         b.addInitializer("scales", {4}, {1, 1, 2, 2});
         b.addNode("Resize", "r", {"x", "", "scales"}, {"y"},
                   {attrString("coordinate_transformation_mode",
                               "tf_crop_and_resize")});
       }},
      {"node 'p' (Pad): attribute 'mode' = \"wrap\" is not supported",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {1, 1, 2, 2});
         b.addInitializerI64("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
         b.addNode("Pad", "p", {"x", "pads"}, {"y"},
                   {attrString("mode", "wrap")});
       }},
      {"node 'c' (Conv): attribute 'kernel_shape' = [3, 3, 3] is not "
       "supported (only 1-D and 2-D convolution, input [1, 1, 4, 4, 4])",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {1, 1, 4, 4, 4});
         b.addInitializer("w", {1, 1, 3, 3, 3}, rampData(27));
         b.addNode("Conv", "c", {"x", "w"}, {"y"});
       },
       {-1, -1, -1, -1, -1}},
      {"node 'm' (MaxPool): attribute 'dilations' = [2, 2] is not supported",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {1, 1, 4, 4});
         b.addNode(
             "MaxPool", "m", {"x"}, {"y"},
             {attrInts("kernel_shape", {2, 2}), attrInts("dilations", {2, 2})});
       }},
      {"node 'cast' (Cast): attribute 'to' = 7 is not supported (cast to "
       "int64 of a computed tensor)",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {2});
         b.addNode("Cast", "cast", {"x"}, {"y"}, {attrInt("to", 7)});
       },
       {2},
       7},
      {"node 'r' (Resize): scales [1.000000, 2.000000, 2.000000, 2.000000] "
       "must keep N and C (1) of a 4-D input",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {1, 1, 2, 2});
         b.addInitializer("scales", {4}, {1, 2, 2, 2});
         b.addNode("Resize", "r", {"x", "", "scales"}, {"y"});
       }},
      {"node 'sh' (Reshape): input 'shape' ('dyn') must be a constant; it is "
       "computed",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {2, 2});
         b.addInput("s", {2});
         b.addNode("Relu", "dyn", {"s"}, {"dyn"});
         b.addNode("Reshape", "sh", {"x", "dyn"}, {"y"});
       },
       {-1}},
  };
  for (const Case &c : cases) {
    errors.clear();
    OnnxModelBuilder b(13);
    c.build(b);
    b.addOutput("y", c.outShape, c.outType);
    EXPECT_FALSE(import(b)) << c.expected;
    EXPECT_NE(allErrors().find(c.expected), std::string::npos)
        << "expected: " << c.expected << "\ngot: " << allErrors();
  }
}

// Models that crashed, hung or exhausted memory under
// tests/fuzz/onnx_import_fuzzer.cpp (their inputs are in
// tests/fuzz/regressions/onnx_import), each refused with a clear error.
TEST_F(OnnxImporterTest, HostileModelsFailCleanly) {
  std::ofstream(path("weights.bin"), std::ios::binary) << std::string(32, '\0');
  fs::create_directories(path("sub"));
  struct Case {
    std::string expected;
    std::function<void(OnnxModelBuilder &)> build;
    int64_t opset = 13;
    std::string file = "model.onnx";
  };
  auto addWithX = [](OnnxModelBuilder &b, const std::string &w) {
    b.addInput("x", {8});
    b.addNode("Add", "add", {"x", w}, {"y"});
    b.addOutput("y", {8});
  };
  std::vector<Case> cases = {
      // External data must stay in the model's directory (/dev/zero was read
      // until memory ran out) and be a regular file, and its offset and
      // length are checked against the file before anything is allocated.
      {"tensor 'w' has external data at '../weights.bin', which is not a "
       "relative path inside the model's directory",
       [&](OnnxModelBuilder &b) {
         b.addExternalInitializer("w", {8}, "../weights.bin", 0, 32);
         addWithX(b, "w");
       },
       13, "sub/model.onnx"},
      {"external data '" + path(".") + "' of tensor 'w' is not a regular file",
       [&](OnnxModelBuilder &b) {
         b.addExternalInitializer("w", {8}, ".", 0, 32);
         addWithX(b, "w");
       }},
      {"external data '" + path("weights.bin") +
           "' of tensor 'w' ends before offset 0 + length 1000000000000000",
       [&](OnnxModelBuilder &b) {
         b.addExternalInitializer("w", {8}, "weights.bin", 0, 1000000000000000);
         addWithX(b, "w");
       }},
      // Counts that overflowed int64.
      {"tensor 'w' has shape [4294967296, 4294967296], more than kiln "
       "supports (2^40 elements)",
       [&](OnnxModelBuilder &b) {
         b.addInitializerRaw("w", {int64_t(1) << 32, int64_t(1) << 32}, 1, "");
         addWithX(b, "w");
       }},
      {"node 'r' (Reshape): cannot reshape [2, 3] to [9, 8026258960904359940]",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {2, 3});
         b.addInitializerI64("s", {2}, {9, 8026258960904359940});
         b.addNode("Reshape", "r", {"x", "s"}, {"y"});
         b.addOutput("y", {-1, -1});
       }},
      {"node 'm' (Mul): cannot evaluate 4611686018427387904 and 4 on integers",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {2});
         b.addInitializerI64("a", {1}, {int64_t(1) << 62});
         b.addInitializerI64("four", {1}, {4});
         b.addNode("Mul", "m", {"a", "four"}, {"s"});
         b.addNode("Reshape", "r", {"x", "s"}, {"y"});
         b.addOutput("y", {-1});
       }},
      // A few bytes must not make the importer allocate gigabytes.
      {"node 'c' (ConstantOfShape): its constant result [1048576, 1048576] "
       "would hold more elements than its inputs and the 2^25 kiln computes "
       "at import",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {2});
         b.addInitializerI64("s", {2}, {1 << 20, 1 << 20});
         b.addNode("ConstantOfShape", "c", {"s"}, {"k"});
         b.addNode("Add", "add", {"x", "k"}, {"y"});
         b.addOutput("y", {-1, -1});
       }},
      {"node 'rg' (Range): the range would hold more than the 2^25 elements "
       "kiln computes at import",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {2});
         b.addInitializerI64("start", {}, {0});
         b.addInitializerI64("limit", {}, {1000000000000000000});
         b.addInitializerI64("delta", {}, {1});
         b.addNode("Range", "rg", {"start", "limit", "delta"}, {"k"});
         b.addNode("Reshape", "r", {"x", "k"}, {"y"});
         b.addOutput("y", {-1});
       }},
      // libonnx 1.12's opset converter dereferenced null on an output
      // nothing produces, and Gemm-6's shape inference and the Gemm 6->7
      // adapter read dimension 1 of a 1-D B.
      {"graph output 'ghost' is not produced by any node, input or "
       "initializer",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {2});
         b.addNode("Relu", "r", {"x"}, {"y"});
         b.addOutput("y", {2});
         b.addOutput("ghost", {2});
       },
       6},
      {"node 'g' (Gemm): input B ('b') has rank 1; Gemm multiplies 2-D "
       "matrices",
       [](OnnxModelBuilder &b) {
         b.addInput("a", {2, 3});
         b.addInitializer("b", {4}, {1, 2, 3, 4});
         b.addNode("Gemm", "g", {"a", "b", "b"}, {"y"},
                   {attrFloat("alpha", 1), attrFloat("beta", 1)});
         b.addOutput("y", {2, 4});
       },
       6},
      // Gemm's inference dereferenced null on a sparse input.
      {"graph input 'a' is not a dense tensor (a sparse tensor), which kiln "
       "does not compile",
       [](OnnxModelBuilder &b) {
         b.addSparseInput("a", {2, 3});
         b.addInitializer("b", {3, 4}, rampData(12));
         b.addInitializer("c", {4}, {1, 2, 3, 4});
         b.addNode("Gemm", "g", {"a", "b", "c"}, {"y"});
         b.addOutput("y", {2, 4});
       },
       6},
      // MaxPool's inference divided by a stride of 0 (SIGFPE).
      {"node 'pool' (MaxPool): attribute 'strides' has 0; every entry must be at least 1",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {1, 1, 5, 5});
         b.addNode("MaxPool", "pool", {"x"}, {"y"},
                   {attrInts("kernel_shape", {2, 2}), attrInts("strides", {0, 2})});
         b.addOutput("y", {1, 1, 2, 2});
       },
       12},
      // ConvTranspose's inference dereferenced null on an X and a W of
      // different ranks.
      {"node 'ct' (ConvTranspose): ",
       [](OnnxModelBuilder &b) {
         b.addInput("x", {1, 1});
         b.addInitializer("w", {1, 2, 3}, rampData(6));
         b.addNode("ConvTranspose", "ct", {"x", "w"}, {"y"});
         b.addOutput("y", {-1, -1, -1});
       },
       11},
  };
  for (const Case &c : cases) {
    errors.clear();
    OnnxModelBuilder b(c.opset);
    c.build(b);
    std::string file = path(c.file);
    ASSERT_TRUE(b.save(file));
    EXPECT_FALSE(kiln::importOnnx(ctx, file, {})) << c.expected;
    EXPECT_NE(allErrors().find(c.expected), std::string::npos)
        << "expected: " << c.expected << "\ngot: " << allErrors();
  }
}

// Range counts integer elements exactly, even where a double would round
// (2^60 + 10 is 2^60 in double); the count decides the output's shape.
TEST_F(OnnxImporterTest, IntegerRangeCountsExactly) {
  OnnxModelBuilder b;
  b.addInput("x", {2, 2});
  b.addInitializerI64("start", {}, {int64_t(1) << 60});
  b.addInitializerI64("limit", {}, {(int64_t(1) << 60) + 10});
  b.addInitializerI64("delta", {}, {3});
  b.addNode("Range", "rg", {"start", "limit", "delta"}, {"k"});
  b.addNode("Shape", "sh", {"k"}, {"n"});
  b.addNode("Reshape", "r", {"x", "n"}, {"y"});
  b.addOutput("y", {-1});
  auto module = import(b);
  ASSERT_TRUE(module) << allErrors();
  EXPECT_EQ(typeStr(mainFunc(*module).getResultTypes()[0]), "tensor<4xf32>");
}

} // namespace
