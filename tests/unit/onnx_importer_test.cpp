// The ONNX importer: op sequences, shapes and NameLocs of imported models,
// constant handling, and every failure path (unsupported ops and attributes,
// corrupt/missing files, dynamic or non-float inputs) with its diagnostic.
// KILN_TEST_DUMP=1 prints each imported module and every error.
#include "kiln/Frontend/Onnx/OnnxImporter.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Frontend/Onnx/OnnxModel.h"
#include "onnx_model_builder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace mlir;
using kiln::test::attrFloat;
using kiln::test::attrInt;
using kiln::test::attrInts;
using kiln::test::attrString;
using kiln::test::OnnxModelBuilder;
using kiln::test::rampData;

namespace {

/// "file:line:col" or a NameLoc's name, as a driver would print them.
std::string locStr(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().str() + ":" + std::to_string(file.getLine()) +
            ":" + std::to_string(file.getColumn()));
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << loc;
  return s;
}

class OnnxImporterTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "kiln_onnx_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir = pattern;
    // Collect diagnostics instead of printing them.
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &ctx, [this](Diagnostic &diag) {
          std::string text;
          llvm::raw_string_ostream os(text);
          os << locStr(diag.getLocation()) << ": " << diag;
          for (const Diagnostic &note : diag.getNotes())
            os << "\n  note: " << note;
          (diag.getSeverity() == DiagnosticSeverity::Error ? errors : warnings)
              .push_back(text);
          return success();
        });
  }
  void TearDown() override {
    if (std::getenv("KILN_TEST_DUMP"))
      for (const std::string &d : errors)
        llvm::errs() << "[diag] " << d << "\n";
    handler.reset();
    fs::remove_all(dir);
  }

  std::string path(const std::string &name) const {
    return (dir / name).string();
  }

  OwningOpRef<ModuleOp> import(const OnnxModelBuilder &b,
                               const kiln::ImportOptions &opts = {}) {
    std::string file = path("model.onnx");
    EXPECT_TRUE(b.save(file));
    return kiln::importOnnx(ctx, file, opts);
  }

  std::string allErrors() const {
    std::string s;
    for (const std::string &e : errors)
      s += e + "\n";
    return s;
  }

  MLIRContext ctx;
  fs::path dir;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::vector<std::string> errors, warnings;
};

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
    std::ofstream(file, std::ios::binary | std::ios::trunc).write(bytes.data(), n);
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

TEST_F(OnnxImporterTest, GemmRejectsWhatItCannotFold) {
  OnnxModelBuilder b;
  b.addInput("x", {2, 3});
  b.addInput("B", {3, 2});
  b.addNode("Gemm", "g", {"x", "B"}, {"y"}, {attrFloat("alpha", 2.5f)});
  b.addOutput("y", {2, 2});
  EXPECT_FALSE(import(b));
  EXPECT_NE(allErrors().find("node 'g' (Gemm): attribute 'alpha' = 2.5 is not "
                             "supported unless B is a float constant"),
            std::string::npos)
      << allErrors();

  errors.clear();
  OnnxModelBuilder t;
  t.addInput("x", {3, 2});
  t.addInitializer("B", {3, 2}, rampData(6));
  t.addNode("Gemm", "g", {"x", "B"}, {"y"}, {attrInt("transA", 1)});
  t.addOutput("y", {2, 2});
  EXPECT_FALSE(import(t));
  EXPECT_NE(allErrors().find("attribute 'transA' = 1 is not supported"),
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

} // namespace
