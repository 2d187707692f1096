#include "kiln/Support/Pipeline.h"

#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"

using namespace mlir;

void kiln::addTopPipeline(PassManager &pm, const PipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(top::createShapeInferPass());
  pm.addNestedPass<func::FuncOp>(top::createFoldConstantsPass());
  pm.addNestedPass<func::FuncOp>(top::createTopMergeTransposes());
  top::TopRewriteModulatedConvOptions modulated;
  modulated.mode = options.modulatedConv;
  modulated.precision = options.precision;
  pm.addNestedPass<func::FuncOp>(top::createTopRewriteModulatedConv(modulated));
  // The static filters and demodulation constants the rewrite built.
  pm.addNestedPass<func::FuncOp>(top::createFoldConstantsPass());
  pm.addNestedPass<func::FuncOp>(top::createTopFoldPadIntoConv());
  pm.addNestedPass<func::FuncOp>(top::createTopSinkReshapeIntoReduce());
  pm.addNestedPass<func::FuncOp>(top::createTopFuseActivations());
  pm.addNestedPass<func::FuncOp>(top::createFuseBatchNormPass());
  top::TopFoldAffineIntoConvOptions affine;
  affine.precision = options.precision;
  pm.addNestedPass<func::FuncOp>(top::createTopFoldAffineIntoConv(affine));
  pm.addNestedPass<func::FuncOp>(top::createTopPoolBeforePointwiseConv());
  pm.addNestedPass<func::FuncOp>(top::createFuseReluPass());
  pm.addNestedPass<func::FuncOp>(top::createDecomposePass());
  pm.addNestedPass<func::FuncOp>(top::createReorderDeconvFilterPass());
}

void kiln::addPrecisionPipeline(PassManager &pm, const PipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(top::createFoldQuantizeConstantsPass());
  if (options.precision == "int8")
    pm.addNestedPass<func::FuncOp>(top::createAbsorbQdqPass());
  if (options.isF32())
    return;
  top::TopAssignPrecisionOptions assign;
  assign.mode = options.precision;
  assign.qtable = options.qtable;
  pm.addNestedPass<func::FuncOp>(top::createTopAssignPrecision(assign));
}

void kiln::addTpuLoweringPipeline(PassManager &pm, const PipelineOptions &options) {
  pm.addPass(tpu::createConvertTopToTpuPass());
  tpu::TpuApplyPrecisionOptions apply;
  apply.asymmetric = options.asymmetric;
  apply.biasCorrection = options.biasCorrection;
  pm.addNestedPass<func::FuncOp>(tpu::createTpuApplyPrecision(apply));
  pm.addNestedPass<func::FuncOp>(tpu::createTpuFuseCasts());
  // Here, not in the backend: the Tpu interpreter runs what the chip runs.
  if (!options.shapeIndependentWeights)
    pm.addNestedPass<func::FuncOp>(tpu::createTpuFoldStemRows());
  pm.addNestedPass<func::FuncOp>(tpu::createTpuSpreadLanes());
  // Folded intermediates are no model tensors: not when each op is its own
  // group or every activation is kept for inspection.
  if (options.layerGroups) {
    tpu::TpuHoistShrinkingOpsOptions hoist;
    hoist.maxGroupOps = options.maxGroupOps;
    pm.addNestedPass<func::FuncOp>(tpu::createTpuHoistShrinkingOps(hoist));
  }
  if (options.layerGroups && !options.keepTensors && !options.shapeIndependentWeights) {
    tpu::TpuFoldOutputRowsOptions fold;
    fold.maxGroupOps = options.maxGroupOps;
    pm.addNestedPass<func::FuncOp>(tpu::createTpuFoldOutputRows(fold));
  }
}

void kiln::addTpuPipeline(PassManager &pm, const PipelineOptions &options) {
  addTpuLoweringPipeline(pm, options);
  addTpuBackendPipeline(pm, options);
}

void kiln::addTpuBackendPipeline(PassManager &pm, const PipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(tpu::createTpuFormViews());
  tpu::TpuFoldTransposesOptions foldTransposes;
  foldTransposes.keepTensors = options.keepTensors;
  pm.addNestedPass<func::FuncOp>(tpu::createTpuFoldTransposes(foldTransposes));
  pm.addNestedPass<func::FuncOp>(
      tpu::createLayerGroupPass(options.maxGroupOps, options.layerGroups));
  pm.addPass(tpu::createAddressAssignPass(options.keepTensors));
}

void kiln::addCompilePipeline(PassManager &pm, const PipelineOptions &options) {
  addTopPipeline(pm, options);
  addPrecisionPipeline(pm, options);
  addTpuPipeline(pm, options);
}
