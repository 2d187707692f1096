// kiln compile CONFIG.yaml [-o OUT.bmodel] [--emit-top] [--emit-tpu]
//   [--compare-all] [--no-verify]
// With `verify:` in the config the compiled net is checked at every level
// (tools/kiln/Verify.h) unless --no-verify.
#include "Commands.h"

#include "ConfigFiles.h"
#include "ConfigModel.h"
#include "Ranges.h"
#include "Verify.h"

#include "kiln/Calibration/CalibrationTable.h"
#include "kiln/Codegen/Codegen.h"
#include "kiln/Support/Precision.h"
#include "kiln/Config/Config.h"
#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"
#include "kiln/Frontend/Onnx/OnnxImporter.h"
#include "kiln/LayerGroup/Slicing.h"
#include "kiln/Support/IRChecks.h"
#include "kiln/Support/Pipeline.h"
#include "kiln/Target/Bmodel/BmodelWriter.h"
#include "kiln/host/npz.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <optional>

using namespace mlir;
using namespace kiln;
using namespace kiln::cli;

llvm::cl::SubCommand kiln::cli::compileCommand("compile",
                                               "Compile a deployment config's ONNX model into a "
                                               "bmodel");

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> configPath(cl::Positional, cl::Required, cl::desc("<CONFIG.yaml>"),
                                cl::sub(cli::compileCommand), cl::cat(cli::options()));
cl::opt<std::string> output("output", cl::desc("The bmodel to write (default: the config's "
                                               "output)"),
                            cl::value_desc("OUT.bmodel"), cl::sub(cli::compileCommand),
                            cl::cat(cli::options()));
// Aliases are hidden by default; -o is the usual spelling.
cl::alias outputShort("o", cl::desc("Alias for --output"), cl::aliasopt(output), cl::NotHidden);
cl::opt<bool> emitTop("emit-top", cl::desc("Print the imported Top IR and stop"),
                      cl::sub(cli::compileCommand), cl::cat(cli::options()));
cl::opt<bool> emitTpu("emit-tpu", cl::desc("Print the final Tpu IR and stop"),
                      cl::sub(cli::compileCommand), cl::cat(cli::options()));
cl::opt<bool> compareAll("compare-all",
                         cl::desc("With verify: the per-layer table of every level, not "
                                  "only on a failure"),
                         cl::sub(cli::compileCommand), cl::cat(cli::options()));
cl::opt<bool> noVerify("no-verify", cl::desc("Skip the config's verify: checks"),
                       cl::sub(cli::compileCommand), cl::cat(cli::options()));

std::string dtypeName(config::DType d) { return config::toString(d); }

void printSummary(const codegen::NetCode &net, size_t ops, double ms,
                  const std::string &out, const std::string &dtype) {
  uint64_t tiu = 0, gdma = 0, sliced = 0;
  for (const auto &g : net.groups) {
    tiu += g.tiu.size();
    gdma += g.gdma.size();
    sliced += g.nSlices * g.cSlices * g.hSlices * g.wSlices > 1;
  }
  std::printf("compiled %s -> %s\n", net.name.c_str(), out.c_str());
  std::printf("  ops %zu, layer groups %zu (%llu sliced), dtype %s\n", ops,
              net.groups.size(), (unsigned long long)sliced, dtype.c_str());
  std::printf("  coefficients %llu bytes, activations %llu bytes (largest live set %llu)\n",
              (unsigned long long)net.coeffSize, (unsigned long long)net.neuronSize,
              (unsigned long long)net.activationPeak);
  std::printf("  commands: %llu TIU, %llu GDMA; modelled cycles %llu\n",
              (unsigned long long)tiu, (unsigned long long)gdma,
              (unsigned long long)net.modelledCycles());
  std::printf("  compile time %.1f ms\n", ms);
}
void printReport(ModuleOp module, llvm::StringRef attr, const char *title) {
  std::vector<std::string> lines = readReport(module, attr);
  if (lines.empty())
    return;
  std::printf("  %s (%zu):\n", title, lines.size());
  for (const std::string &line : lines)
    std::printf("    %s\n", line.c_str());
}
} // namespace

namespace {
// One stage compiled: its net, and for verify the IR at each level.
struct StageResult {
  std::optional<codegen::NetCode> net;
  OwningOpRef<ModuleOp> module, topIR, tpuIR;
  size_t ops = 0;
};

// Compiles `cfg` (one shape per input) into a net; 0 or the exit code.
int compileStage(MLIRContext &ctx, const config::DeployConfig &cfg,
                 bool shapeIndependentWeights, StageResult &out) {
  OwningOpRef<ModuleOp> module = importConfigModel(ctx, cfg);
  if (!module)
    return 1;
  // Lowering and layer groups lay out what the chip's own commands read.
  if (cfg.isa == config::Isa::Bm1684x) {
    auto isaAttr = StringAttr::get(&ctx, config::toString(cfg.isa));
    (*module)->setAttr(lg::kIsaAttr, isaAttr);
    module->walk([&](func::FuncOp f) { f->setAttr(lg::kIsaAttr, isaAttr); });
  }
  if (emitTop) {
    module->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  module->walk([&](Operation *op) {
    out.ops += isa<top::TopDialect>(op->getDialect()) && !isa<top::WeightOp, top::NoneOp>(op);
  });

  PipelineOptions pipeline = pipelineOptionsOf(cfg);
  pipeline.shapeIndependentWeights = shapeIndependentWeights;
  PassManager topPm(&ctx);
  addIRChecks(topPm);
  addTopPipeline(topPm, pipeline);
  if (failed(topPm.run(*module)))
    return 1;
  if (!pipeline.isF32()) {
    if (int rc = annotateModule(cfg, *module, pipeline); rc != 0)
      return rc;
  }
  // Verification runs the Top IR lowering starts from and the Tpu IR before
  // layer groups.
  if (cfg.verify.enabled)
    out.topIR = module->clone();
  if (failed(lowerToTpuIR(*module, pipeline)))
    return 1;
  if (cfg.verify.enabled)
    out.tpuIR = module->clone();
  PassManager pm(&ctx);
  addIRChecks(pm);
  addTpuBackendPipeline(pm, pipeline);
  if (failed(pm.run(*module)))
    return 1;
  if (emitTpu) {
    module->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  auto net = codegen::generateNet(*module, cfg.name);
  if (failed(net))
    return 1;
  if (cfg.isa == config::Isa::Bm1684x)
    if (std::string err = codegen::lowerToBm1684x(*net); !err.empty())
      return fail(cfg.config_path + ": isa: bm1684x: " + err);
  out.net = std::move(*net);
  out.module = std::move(module);
  return 0;
}

std::string shapesOf(const config::DeployConfig &stage) {
  std::string out;
  for (const config::InputOverride &in : stage.inputs)
    out += (out.empty() ? "" : ", ") + in.name + " " + host::shapeString(in.shapes.front());
  return out;
}

// The stage whose input shapes are those of verify's input.npz.
std::optional<size_t> verifiedStage(const config::DeployConfig &cfg, size_t stages) {
  std::vector<host::Array> inputs;
  std::string in = verifyInputPath(cfg);
  if (stages == 1 || in.empty() || !host::readNpz(in, inputs).empty())
    return 0; // verifyLevels reports what is missing
  for (size_t s = 0; s < stages; ++s) {
    bool all = true;
    for (const config::InputOverride &o : config::stageConfig(cfg, s).inputs)
      for (const host::Array &a : inputs)
        all = all && (a.name != o.name || a.shape == o.shapes.front());
    if (all)
      return s;
  }
  return std::nullopt;
}
} // namespace

int kiln::cli::compileMain() {
  auto start = std::chrono::steady_clock::now();

  config::DeployConfig cfg;
  if (auto err = config::loadConfig(configPath, cfg); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 2;
  }
  if (!output.empty())
    cfg.output = output;

  // One compile per stage (set of input shapes); the stages share the
  // coefficients, which do not depend on the shapes.
  const size_t stages = config::stageCount(cfg);
  std::optional<size_t> verified = verifiedStage(cfg, stages);
  if (cfg.verify.enabled && !noVerify && !verified)
    return fail(cfg.config_path + ": verify: the inputs beside " + cfg.verify.reference +
                " have the shapes of no stage");
  MLIRContext ctx;
  std::vector<StageResult> results;
  bmodel::StagedNet net;
  auto compileStages = [&](bool shapeIndependentWeights) {
    results = std::vector<StageResult>(stages);
    net.clear();
    for (size_t s = 0; s < stages; ++s) {
      config::DeployConfig stage = config::stageConfig(cfg, s);
      stage.verify.enabled = cfg.verify.enabled && s == verified;
      if (int rc = compileStage(ctx, stage, shapeIndependentWeights, results[s]);
          rc != 0 || emitTop || emitTpu)
        return rc;
      net.push_back(*results[s].net);
    }
    return 0;
  };
  if (int rc = compileStages(false); rc != 0 || emitTop || emitTpu)
    return rc;
  std::string stagesError = bmodel::checkStages(net);
  if (!stagesError.empty() && stages > 1) {
    // A shape-dependent rewrite (a row fold) changed some filter in some
    // stage: compile every stage without those, so all read one copy.
    if (int rc = compileStages(true); rc != 0)
      return rc;
    stagesError = bmodel::checkStages(net);
    if (stagesError.empty())
      for (codegen::NetCode &n : net)
        n.decisions.push_back("stages: no row folds, so that every stage reads the same "
                              "weights (with them the stages' filters differ)");
  }
  if (!stagesError.empty())
    return fail(cfg.config_path + ": inputs: " + stagesError);
  std::vector<uint8_t> bytes;
  if (config::containerOf(cfg) == config::Container::Sophgo) {
    auto sophgo = bmodel::serializeSophgo({net});
    if (!sophgo)
      return fail(cfg.config_path + ": " + llvm::toString(sophgo.takeError()));
    bytes = std::move(*sophgo);
  } else {
    bytes = bmodel::serialize({net});
  }
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(cfg.output));
  if (auto err = host::writeFile(cfg.output, bytes.data(), bytes.size()); !err.empty())
    return fail(err);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  for (size_t s = 0; s < stages; ++s) {
    if (stages > 1)
      std::printf("stage %zu (%s):\n", s, shapesOf(config::stageConfig(cfg, s)).c_str());
    printSummary(net[s], results[s].ops, ms, cfg.output, dtypeName(cfg.quantize));
  }
  if (stages > 1)
    std::printf("  %zu stages over one coefficient region of %llu bytes; %zu bytes in all\n",
                stages, (unsigned long long)net.front().coeffSize, bytes.size());
  printReport(*results.front().module, kRewriteReportAttr, "graph rewrites");
  printReport(*results.front().module, kPrecisionReportAttr, "precision decisions");
  if (cfg.verify.enabled && !noVerify) {
    VerifyOptions verify;
    verify.compareAll = compareAll;
    verify.dtype = dtypeName(cfg.quantize);
    StageResult &checked = results[*verified];
    return verifyLevels(config::stageConfig(cfg, *verified), *checked.topIR, *checked.tpuIR,
                        bytes, verify);
  }
  return 0;
}
