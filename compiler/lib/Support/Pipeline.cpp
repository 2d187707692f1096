#include "kiln/Support/Pipeline.h"

#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"

using namespace mlir;

void kiln::addTopPipeline(PassManager &pm) {
  pm.addNestedPass<func::FuncOp>(top::createShapeInferPass());
  pm.addNestedPass<func::FuncOp>(top::createFoldConstantsPass());
  pm.addNestedPass<func::FuncOp>(top::createFuseBatchNormPass());
  pm.addNestedPass<func::FuncOp>(top::createFuseReluPass());
  pm.addNestedPass<func::FuncOp>(top::createDecomposePass());
  pm.addNestedPass<func::FuncOp>(top::createReorderDeconvFilterPass());
}

void kiln::addTpuPipeline(PassManager &pm, const PipelineOptions &options) {
  pm.addPass(tpu::createConvertTopToTpuPass());
  pm.addNestedPass<func::FuncOp>(
      tpu::createLayerGroupPass(options.maxGroupOps, options.layerGroups));
  pm.addPass(tpu::createAddressAssignPass());
}

void kiln::addCompilePipeline(PassManager &pm, const PipelineOptions &options) {
  addTopPipeline(pm);
  addTpuPipeline(pm, options);
}
