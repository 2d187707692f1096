//===- Pipeline.h - The compile pipeline from Top IR to addresses -*- C++ -*-===//
#ifndef KILN_SUPPORT_PIPELINE_H
#define KILN_SUPPORT_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace kiln {
struct PipelineOptions {
  bool layerGroups = true;   ///< false: every op is its own group
  unsigned maxGroupOps = 8;
};

/// Top canonicalization: shape inference, constant folding, fusions,
/// decompositions. Calibration and verification run the Top IR it leaves, so
/// their tensor names are the ones lowering sees.
void addTopPipeline(mlir::PassManager &pm);

/// Lowering to Tpu, layer groups and DDR addresses.
void addTpuPipeline(mlir::PassManager &pm, const PipelineOptions &options);

/// Top canonicalization, lowering to Tpu, layer groups and DDR addresses:
/// everything codegen needs.
void addCompilePipeline(mlir::PassManager &pm, const PipelineOptions &options);
} // namespace kiln

#endif
