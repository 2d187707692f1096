#ifndef KILN_DIALECT_TOP_TRANSFORMS_PASSES_H
#define KILN_DIALECT_TOP_TRANSFORMS_PASSES_H

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln::top {
std::unique_ptr<mlir::Pass> createShapeInferPass();
std::unique_ptr<mlir::Pass> createFuseBatchNormPass();
std::unique_ptr<mlir::Pass> createFuseReluPass();
std::unique_ptr<mlir::Pass> createFoldConstantsPass();
std::unique_ptr<mlir::Pass> createDecomposePass();
std::unique_ptr<mlir::Pass> createReorderDeconvFilterPass();
std::unique_ptr<mlir::Pass> createFoldQuantizeConstantsPass();
std::unique_ptr<mlir::Pass> createAbsorbQdqPass();

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

#endif
