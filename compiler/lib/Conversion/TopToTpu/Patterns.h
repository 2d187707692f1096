#ifndef KILN_CONVERSION_TOPTOTPU_PATTERNS_H
#define KILN_CONVERSION_TOPTOTPU_PATTERNS_H

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Support/Names.h"
#include "kiln/abi/commands.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln::tpu {
// One populate function per op family; each lowers F32 (other dtypes go
// inside the same files).
void populateConvLowering(mlir::RewritePatternSet &patterns);
void populatePoolLowering(mlir::RewritePatternSet &patterns);
void populateEltwiseLowering(mlir::RewritePatternSet &patterns);
void populateMatMulLowering(mlir::RewritePatternSet &patterns);
void populateShapeLowering(mlir::RewritePatternSet &patterns);
void populateDataMovementLowering(mlir::RewritePatternSet &patterns);
void populateReduceLowering(mlir::RewritePatternSet &patterns);
void populateDeconvLowering(mlir::RewritePatternSet &patterns);
void populateResizeLowering(mlir::RewritePatternSet &patterns);

/// Reshapes `v` to `shape` with a tpu.reshape (or returns it when equal).
mlir::Value reshapeTo(mlir::PatternRewriter &rewriter, mlir::Location loc,
                      mlir::Value v, llvm::ArrayRef<int64_t> shape);
} // namespace kiln::tpu

#endif
