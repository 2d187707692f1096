// The ONNX backend node tests shipped by Debian's libonnx-testdata, run
// through the importer and the Top interpreter and compared with their stored
// outputs: the outside check of the importer's and the interpreter's
// semantics. Integer inputs (shapes, indices, axes) become initializers, as a
// deployed model has them; if a test still does not import, its other inputs
// after the first become initializers too (Resize's scales, Clip's bounds).
// A test that does not import is skipped with the reason (operators and
// features kiln does not take); one that imports must match.
//
// KILN_NODE_TESTS=substring runs only the matching tests and prints each;
// KILN_TEST_DUMP=1 prints the PyTorch network's IR.
#include "kiln/Frontend/Onnx/OnnxImporter.h"
#include "kiln/Frontend/Onnx/OnnxModel.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "onnx_model_builder.h"

#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Support/Pipeline.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <unistd.h>

namespace fs = std::filesystem;
namespace of = kiln::onnx_frontend;
using namespace mlir;

namespace {

const char *kTestData = "/usr/share/libonnx-testdata/data";

/// Tests whose reference kiln deliberately does not follow, with why (none
/// at present); a deviation is reported, not failed.
const std::map<std::string, std::string> kKnownDeviations = {};

struct Outcome {
  enum Kind { Pass, Fail, Skip } kind;
  std::string reason;
};

/// The reason with node and tensor names blanked, so skips group by cause.
std::string reasonKey(std::string reason) {
  static const std::regex unsupported(
      "node '[^']*' \\(([^)]*)\\): unsupported operator");
  std::smatch m;
  if (std::regex_search(reason, m, unsupported))
    return "unsupported operator " + m[1].str();
  reason = std::regex_replace(reason, std::regex("node '[^']*' "), "node ");
  reason = std::regex_replace(reason, std::regex("'[^']*'"), "'_'");
  reason = std::regex_replace(reason, std::regex("\\[[-0-9, ?]*\\]"), "[..]");
  return reason.substr(0, reason.find('\n'));
}

bool isClose(float actual, float expected) {
  if (std::isnan(expected))
    return std::isnan(actual);
  if (std::isinf(expected))
    return actual == expected;
  return std::fabs(actual - expected) <= 1e-5f + 1e-3f * std::fabs(expected);
}

/// Imports `model` in a fresh context; the first error goes to `error`.
OwningOpRef<ModuleOp> importQuietly(MLIRContext &ctx, const std::string &model,
                                    const kiln::ImportOptions &opts,
                                    std::string &error) {
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && error.empty())
      error = d.str();
    return success();
  });
  return kiln::importOnnx(ctx, model, opts);
}

Outcome runCase(const fs::path &dir, const fs::path &scratch) {
  fs::path modelPath = dir / "model.onnx", data = dir / "test_data_set_0";
  of::Model model;
  if (std::string e = of::loadModel(modelPath.string(), {}, model); !e.empty())
    return {Outcome::Skip, "load: " + e.substr(e.find("error: ") + 7)};
  if (!fs::exists(data))
    return {Outcome::Skip, "no test_data_set_0"};

  // input_<i>.pb is graph input i (initializers excluded).
  std::vector<of::TensorData> inputs(model.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string file = (data / ("input_" + std::to_string(i) + ".pb")).string();
    if (std::string e = of::loadTensor(file, inputs[i]); !e.empty())
      return {Outcome::Skip, "unreadable input: " + e};
    if (inputs[i].elemType != model.inputs[i].elemType)
      return {Outcome::Skip,
              std::string("test data is ") +
                  of::elemTypeName(inputs[i].elemType) + " for a " +
                  of::elemTypeName(model.inputs[i].elemType) + " input"};
  }
  std::vector<of::TensorData> expected(model.outputs.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    std::string file =
        (data / ("output_" + std::to_string(i) + ".pb")).string();
    if (std::string e = of::loadTensor(file, expected[i]); !e.empty())
      return {Outcome::Skip, "unreadable output: " + e};
    if (expected[i].elemType != of::kFloat)
      return {Outcome::Skip, std::string("non-float output (") +
                                 of::elemTypeName(expected[i].elemType) + ")"};
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  std::string error;
  std::vector<bool> baked;
  // The second attempt only differs when a float input follows the first.
  bool floatAfterFirst = false;
  for (size_t i = 1; i < inputs.size(); ++i)
    floatAfterFirst |= model.inputs[i].elemType == of::kFloat;
  for (int attempt = 0; attempt < (floatAfterFirst ? 2 : 1) && !module;
       ++attempt) {
    std::vector<std::pair<std::string, std::string>> bake;
    baked.assign(inputs.size(), false);
    for (size_t i = 0; i < inputs.size(); ++i) {
      bool isFloat = model.inputs[i].elemType == of::kFloat;
      if (!isFloat || (attempt == 1 && i > 0)) {
        bake.push_back(
            {model.inputs[i].name,
             (data / ("input_" + std::to_string(i) + ".pb")).string()});
        baked[i] = true;
      }
    }
    std::string file = (scratch / "model.onnx").string();
    if (std::string e = kiln::test::bakeInputs(modelPath.string(), file, bake);
        !e.empty())
      return {Outcome::Skip, e};
    // The data's shapes are the deployment's input shapes.
    kiln::ImportOptions opts;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!baked[i])
        opts.inputShapes[model.inputs[i].name] = inputs[i].shape;
    error.clear();
    module = importQuietly(ctx, file, opts, error);
  }
  if (!module)
    return {Outcome::Skip, error};

  kiln::interp::TensorMap feeds, outputs;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!baked[i])
      feeds[model.inputs[i].name] = {inputs[i].shape, inputs[i].f32};
  auto func = module->lookupSymbol<func::FuncOp>("main");
  std::string runError;
  {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      if (runError.empty())
        runError = d.str();
      return success();
    });
    if (failed(kiln::interp::runTop(func, feeds, outputs)))
      return {Outcome::Fail, "interpreter: " + runError};
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::string &name = model.outputs[i].name;
    auto it = outputs.find(name);
    if (it == outputs.end())
      return {Outcome::Fail, "no output '" + name + "'"};
    const kiln::interp::Tensor &actual = it->second;
    // A scalar and a one-element tensor are the same values.
    if (actual.data.size() != expected[i].f32.size() ||
        (actual.shape != expected[i].shape &&
         !(actual.data.size() == 1 && expected[i].f32.size() == 1)))
      return {Outcome::Fail, "output '" + name + "' has " +
                                 std::to_string(actual.data.size()) +
                                 " elements, expected " +
                                 std::to_string(expected[i].f32.size())};
    for (size_t j = 0; j < actual.data.size(); ++j)
      if (!isClose(actual.data[j], expected[i].f32[j]))
        return {Outcome::Fail,
                "output '" + name + "' element " + std::to_string(j) + " is " +
                    std::to_string(actual.data[j]) + ", expected " +
                    std::to_string(expected[i].f32[j])};
  }
  return {Outcome::Pass, ""};
}

/// Runs every test under `suite`; prints failures, grouped skip reasons and
/// "N passed, N failed, N skipped"; returns the failures.
std::vector<std::string> runSuite(const std::string &suite, int &passed) {
  fs::path root = fs::path(kTestData) / suite;
  std::vector<std::string> failures;
  passed = 0;
  if (!fs::exists(root))
    return failures;
  fs::path scratch = fs::path(::testing::TempDir()) /
                     ("kiln_node_" + suite + "_" + std::to_string(getpid()));
  fs::create_directories(scratch);
  const char *filter = std::getenv("KILN_NODE_TESTS");
  std::vector<fs::path> dirs;
  for (const auto &entry : fs::directory_iterator(root))
    if (entry.is_directory() &&
        (!filter ||
         entry.path().filename().string().find(filter) != std::string::npos))
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  std::map<std::string, std::vector<std::string>> skips;
  int skipped = 0, deviations = 0;
  for (const fs::path &dir : dirs) {
    std::string name = dir.filename().string();
    Outcome o = runCase(dir, scratch);
    if (filter)
      llvm::outs() << name << ": "
                   << (o.kind == Outcome::Pass   ? "pass"
                       : o.kind == Outcome::Fail ? "FAIL "
                                                 : "skip ")
                   << o.reason << "\n";
    if (o.kind == Outcome::Pass) {
      ++passed;
    } else if (o.kind == Outcome::Fail && kKnownDeviations.count(name)) {
      ++deviations;
      llvm::outs() << "known deviation " << name << ": " << o.reason << " ("
                   << kKnownDeviations.at(name) << ")\n";
    } else if (o.kind == Outcome::Fail) {
      failures.push_back(name + ": " + o.reason);
      if (!filter)
        llvm::outs() << "FAIL " << name << ": " << o.reason << "\n";
    } else {
      ++skipped;
      skips[reasonKey(o.reason)].push_back(name);
    }
  }
  llvm::outs() << "skipped, by reason:\n";
  for (const auto &[reason, names] : skips)
    llvm::outs() << "  " << names.size() << "  " << reason << "  (e.g. "
                 << names.front() << ")\n";
  llvm::outs() << suite << ": " << passed << " passed, " << failures.size()
               << " failed, " << skipped << " skipped";
  if (deviations)
    llvm::outs() << ", " << deviations << " known deviation(s)";
  llvm::outs() << "\n";
  llvm::outs().flush();
  fs::remove_all(scratch);
  return failures;
}

TEST(OnnxNodeTest, BackendNodeTests) {
  if (!fs::exists(fs::path(kTestData) / "node"))
    GTEST_SKIP() << "libonnx-testdata is not installed";
  int passed = 0;
  std::vector<std::string> failures = runSuite("node", passed);
  EXPECT_TRUE(failures.empty())
      << failures.size() << " failed, first: " << failures.front();
  if (!std::getenv("KILN_NODE_TESTS")) {
    EXPECT_GT(passed, 0);
  }
}

TEST(OnnxNodeTest, PyTorchOperatorTests) {
  for (const char *suite : {"pytorch-operator", "pytorch-converted"}) {
    if (!fs::exists(fs::path(kTestData) / suite))
      continue;
    int passed = 0;
    std::vector<std::string> failures = runSuite(suite, passed);
    EXPECT_TRUE(failures.empty()) << suite << ": " << failures.size()
                                  << " failed, first: " << failures.front();
  }
}

//===----------------------------------------------------------------------===//
// A network written in PyTorch
//===----------------------------------------------------------------------===//

/// A U-Net-like network with the operators the issue lists (strided and
/// depthwise convs, batch and instance norm, grouped and modulated
/// transposed convs, bilinear and nearest upsampling, skip concats, reflect
/// padding, slicing, GELU, hardswish, softmax, view/expand/repeat shape
/// chains, reductions), exported without constant folding so the importer
/// folds the shape chains. argv: model path, opset; writes <model>.in (x,
/// style) and <model>.out (PyTorch's outputs, concatenated).
const char *kTorchNetwork =
    R"(import sys, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.bn = nn.BatchNorm2d(8)
        self.up = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.inorm = nn.InstanceNorm2d(9, affine=True)
        self.prelu = nn.PReLU(9)
        self.conv1d = nn.Conv1d(9, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 16, 5)
    def forward(self, x, style):
        y = F.relu6(self.bn(self.dw(F.relu(self.down(x)))))          # [1,8,8,8]
        z = self.up(y)                                               # [1,6,16,16]
        u = F.interpolate(y, scale_factor=2, mode='bilinear', align_corners=False)  # [1,8,16,16]
        n = F.interpolate(y[:, :3], size=(16, 16), mode='nearest')
        cat = torch.cat([z[:, :3], u[:, 1:5], n[:, :2]], 1)          # [1,9,16,16]
        cat = self.prelu(self.inorm(cat))
        cat = F.pad(cat, (1, 2, 0, 1), mode='reflect')[:, :, :16, 1:17]
        g = F.gelu(cat) + F.hardswish(cat) * torch.sigmoid(cat) - F.leaky_relu(cat, 0.2)
        g = torch.maximum(g, torch.tanh(cat)) / (1 + cat.abs())
        # A modulated deconv: the filter is computed from an input.
        w = self.up.weight * style.view(8, 1, 1, 1)
        m = F.conv_transpose2d(y, w, None, stride=2, padding=1, output_padding=1, groups=2)
        s = g.mean(dim=(2,), keepdim=False)                           # [1,9,16]
        s = self.conv1d(s)                                            # [1,4,16]
        logits = self.fc(s.view(s.size(0), -1))
        p = torch.softmax(logits, dim=-1)
        lp = F.log_softmax(g.permute(0, 2, 3, 1).reshape(-1, 9), dim=1)
        e = g[:, :, ::2, -3:].expand(2, 9, 8, 3).repeat(1, 1, 1, 2).sum(dim=(1, 3))
        a, b = torch.chunk(z, 2, dim=1)
        return p, lp, e, (a * b).amax(dim=1), m.pow(2).sqrt()

net = Net().eval()
with torch.no_grad():
    for p in net.bn.parameters():
        p.uniform_(0.5, 1.5)
    net.bn.running_mean.uniform_(-0.2, 0.2); net.bn.running_var.uniform_(0.5, 1.5)
x = torch.randn(1, 3, 16, 16)
style = torch.rand(8) + 0.5
opset = int(sys.argv[2])
torch.onnx.export(net, (x, style), sys.argv[1], opset_version=opset,
                  input_names=['x', 'style'], output_names=['p', 'lp', 'e', 'ab', 'm'],
                  do_constant_folding=False)
with torch.no_grad():
    outs = net(x, style)
np.concatenate([x.numpy().ravel(), style.numpy().ravel()]).astype('<f4').tofile(sys.argv[1] + '.in')
np.concatenate([o.numpy().ravel() for o in outs]).astype('<f4').tofile(sys.argv[1] + '.out')
print([tuple(o.shape) for o in outs])
)";

/// Concatenated outputs of `func` in result order.
std::vector<float> runAll(func::FuncOp func,
                          const kiln::interp::TensorMap &inputs,
                          std::string &error) {
  MLIRContext *ctx = func->getContext();
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
    error += d.str() + "\n";
    return success();
  });
  kiln::interp::TensorMap outputs;
  if (failed(kiln::interp::runTop(func, inputs, outputs)))
    return {};
  std::vector<float> all;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, "kiln.name");
    const auto &data = outputs.at(name.str()).data;
    all.insert(all.end(), data.begin(), data.end());
  }
  return all;
}

void expectAllClose(const std::vector<float> &actual,
                    const std::vector<float> &expected, const char *what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < actual.size(); ++i)
    if (std::fabs(actual[i] - expected[i]) >
            1e-4f + 1e-3f * std::fabs(expected[i]) &&
        bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << actual[i]
                    << ", PyTorch " << expected[i];
  EXPECT_EQ(bad, 0u) << what;
}

std::vector<float> readFloats(const std::string &path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::streamsize bytes = in.tellg();
  std::vector<float> values(bytes > 0 ? bytes / sizeof(float) : 0);
  in.seekg(0);
  in.read(reinterpret_cast<char *>(values.data()), bytes);
  return values;
}

TEST(OnnxNodeTest, TorchNetworkThroughImporterAndTopPasses) {
  fs::path dir = fs::path(::testing::TempDir()) /
                 ("kiln_torch_network_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string script = (dir / "export.py").string();
  std::ofstream(script) << kTorchNetwork;
  for (int opset : {11, 13}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    std::string model =
        (dir / ("net" + std::to_string(opset) + ".onnx")).string();
    std::string cmd = std::string(KILN_TEST_PYTHON) +
                      " -c 'import torch' 2>/dev/null && " + KILN_TEST_PYTHON +
                      " " + script + " " + model + " " + std::to_string(opset) +
                      " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0 || !fs::exists(model))
      GTEST_SKIP() << KILN_TEST_PYTHON << " cannot export with torch";
    std::vector<float> in = readFloats(model + ".in");
    std::vector<float> expected = readFloats(model + ".out");
    ASSERT_EQ(in.size(), 3u * 16 * 16 + 8);
    kiln::interp::TensorMap inputs = {
        {"x", {{1, 3, 16, 16}, {in.begin(), in.end() - 8}}},
        {"style", {{8}, {in.end() - 8, in.end()}}}};

    MLIRContext ctx;
    std::string error;
    OwningOpRef<ModuleOp> module = importQuietly(ctx, model, {}, error);
    ASSERT_TRUE(module) << error;
    if (std::getenv("KILN_TEST_DUMP"))
      module->print(llvm::errs());
    auto func = module->lookupSymbol<func::FuncOp>("main");
    // The shape chains folded.
    func.walk([](Operation *op) {
      EXPECT_FALSE(isa<kiln::top::GatherOp>(op)) << "a shape chain was left";
    });
    expectAllClose(runAll(func, inputs, error), expected, "imported");

    // The Top pipeline of kiln compile keeps the values (and fuses GELU).
    PassManager pm(&ctx);
    kiln::addTopPipeline(pm, kiln::PipelineOptions());
    ASSERT_TRUE(succeeded(pm.run(*module))) << error;
    if (std::getenv("KILN_TEST_DUMP"))
      module->print(llvm::errs());
    int gelus = 0;
    func.walk([&](kiln::top::ActiveOp op) {
      gelus += op.getMode() == kiln::top::ActiveMode::Gelu;
    });
    EXPECT_EQ(gelus, 1);
    int reordered = 0, softmaxes = 0;
    func.walk([&](kiln::top::DeconvOp op) {
      reordered += op.getFilterReordered();
      // Only the computed filter is reordered, by reshape-transpose-reshape
      // (group 2).
      if (op.getFilterReordered()) {
        EXPECT_TRUE(op.getFilter().getDefiningOp<kiln::top::ReshapeOp>());
      }
    });
    func.walk([&](kiln::top::SoftmaxOp) { ++softmaxes; });
    EXPECT_EQ(reordered, 1);
    EXPECT_EQ(softmaxes, 0);
    expectAllClose(runAll(func, inputs, error), expected, "after Top passes");
  }
  fs::remove_all(dir);
}

} // namespace
