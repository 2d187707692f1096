// kiln compile CONFIG.yaml [-o OUT.bmodel] [--emit-top] [--emit-tpu]
#include "Commands.h"

#include "kiln/Codegen/Codegen.h"
#include "kiln/Config/Config.h"
#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"
#include "kiln/Frontend/Onnx/OnnxImporter.h"
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

using namespace mlir;
using namespace kiln;

namespace {
struct Options {
  std::string config, output;
  bool emitTop = false, emitTpu = false;
};

std::string dtypeName(config::DType d) { return config::toString(d); }

void printSummary(const codegen::NetCode &net, size_t ops, double ms,
                  const std::string &out) {
  uint64_t tiu = 0, gdma = 0, sliced = 0;
  for (const auto &g : net.groups) {
    tiu += g.tiu.size();
    gdma += g.gdma.size();
    sliced += g.nSlices * g.hSlices > 1;
  }
  std::printf("compiled %s -> %s\n", net.name.c_str(), out.c_str());
  std::printf("  ops %zu, layer groups %zu (%llu sliced), dtype f32\n", ops,
              net.groups.size(), (unsigned long long)sliced);
  std::printf("  coefficients %llu bytes, activations %llu bytes\n",
              (unsigned long long)net.coeffSize, (unsigned long long)net.neuronSize);
  std::printf("  commands: %llu TIU, %llu GDMA; modelled cycles %llu\n",
              (unsigned long long)tiu, (unsigned long long)gdma,
              (unsigned long long)net.modelledCycles());
  std::printf("  compile time %.1f ms\n", ms);
}
} // namespace

int kiln::cli::compileMain(const Args &args) {
  Options opt;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "-o" || args[i] == "--output") && i + 1 < args.size())
      opt.output = args[++i];
    else if (args[i] == "--emit-top")
      opt.emitTop = true;
    else if (args[i] == "--emit-tpu")
      opt.emitTpu = true;
    else if (!args[i].empty() && args[i][0] == '-')
      return fail("compile: unknown option '" + args[i] + "'");
    else
      opt.config = args[i];
  }
  if (opt.config.empty())
    return fail("compile expects a config file");
  auto start = std::chrono::steady_clock::now();

  config::DeployConfig cfg;
  if (auto err = config::loadConfig(opt.config, cfg); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 2;
  }
  if (cfg.quantize != config::DType::F32)
    return fail(opt.config + ": quantize: " + dtypeName(cfg.quantize) +
                " is not supported yet; use f32");
  if (!opt.output.empty())
    cfg.output = opt.output;

  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect, top::TopDialect, tpu::TpuDialect>();
  ImportOptions importOpts;
  for (const auto &in : cfg.inputs)
    importOpts.inputShapes[in.name] = in.shape;
  importOpts.randomSeed = cfg.random_seed;
  switch (cfg.random_ops) {
  case config::RandomOps::Reject: importOpts.randomOps = RandomOps::Reject; break;
  case config::RandomOps::Const: importOpts.randomOps = RandomOps::Const; break;
  case config::RandomOps::Input: importOpts.randomOps = RandomOps::Input; break;
  }
  OwningOpRef<ModuleOp> module = importOnnx(ctx, cfg.model, importOpts);
  if (!module)
    return 1;
  if (opt.emitTop) {
    module->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  size_t ops = 0;
  module->walk([&](Operation *op) {
    ops += isa<top::TopDialect>(op->getDialect()) && !isa<top::WeightOp, top::NoneOp>(op);
  });

  PassManager pm(&ctx);
  PipelineOptions pipeline;
  pipeline.layerGroups = cfg.layer_group_enabled;
  addCompilePipeline(pm, pipeline);
  if (failed(pm.run(*module)))
    return 1;
  if (opt.emitTpu) {
    module->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  auto net = codegen::generateNet(*module, cfg.name);
  if (failed(net))
    return 1;
  std::vector<uint8_t> bytes = bmodel::serialize({*net});
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(cfg.output));
  if (auto err = host::writeFile(cfg.output, bytes.data(), bytes.size()); !err.empty())
    return fail(err);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  printSummary(*net, ops, ms, cfg.output);
  return 0;
}
