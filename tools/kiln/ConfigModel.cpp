#include "ConfigModel.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Support/IRChecks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace kiln;

ImportOptions cli::importOptionsOf(const config::DeployConfig &cfg) {
  ImportOptions options;
  for (const auto &in : cfg.inputs) // stage 0's shapes (stageConfig picks another)
    options.inputShapes[in.name] = in.shapes.front();
  options.randomSeed = cfg.random_seed;
  switch (cfg.random_ops) {
  case config::RandomOps::Reject: options.randomOps = RandomOps::Reject; break;
  case config::RandomOps::Const: options.randomOps = RandomOps::Const; break;
  case config::RandomOps::Input: options.randomOps = RandomOps::Input; break;
  }
  return options;
}

OwningOpRef<ModuleOp> cli::importConfigModel(MLIRContext &ctx,
                                             const config::DeployConfig &cfg) {
  ctx.loadDialect<func::FuncDialect, top::TopDialect, tpu::TpuDialect>();
  return importOnnx(ctx, cfg.model, importOptionsOf(cfg));
}

PipelineOptions cli::pipelineOptionsOf(const config::DeployConfig &cfg) {
  PipelineOptions p;
  p.layerGroups = cfg.layer_group_enabled;
  p.precision = config::toString(cfg.quantize);
  for (const auto &[name, dtype] : cfg.qtable)
    p.qtable.push_back(name + "=" + config::toString(dtype));
  p.asymmetric = cfg.calibration.asymmetric;
  p.biasCorrection = cfg.calibration.bias_correction;
  p.keepTensors = cfg.keep_tensors;
  p.modulatedConv = config::toString(cfg.modulated_conv);
  return p;
}

LogicalResult cli::lowerToTpuIR(ModuleOp module, const PipelineOptions &pipeline) {
  PassManager lower(module.getContext());
  addIRChecks(lower);
  addPrecisionPipeline(lower, pipeline);
  addTpuLoweringPipeline(lower, pipeline);
  return lower.run(module);
}
