//===- Pipeline.h - The compile pipeline from Top IR to addresses -*- C++ -*-===//
#ifndef KILN_SUPPORT_PIPELINE_H
#define KILN_SUPPORT_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace kiln {
struct PipelineOptions {
  bool layerGroups = true;   ///< false: every op is its own group
  unsigned maxGroupOps = 8;
};

/// Top canonicalization, lowering to Tpu, layer groups and DDR addresses:
/// everything codegen needs.
void addCompilePipeline(mlir::PassManager &pm, const PipelineOptions &options);
} // namespace kiln

#endif
