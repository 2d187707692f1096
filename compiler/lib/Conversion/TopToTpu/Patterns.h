#ifndef KILN_CONVERSION_TOPTOTPU_PATTERNS_H
#define KILN_CONVERSION_TOPTOTPU_PATTERNS_H

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Support/Names.h"
#include "kiln/abi/commands.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln::tpu {
/// Gives the ops a lowering created just before `op` (after `before`, or from
/// the block's start when null) `op`'s precision attributes
/// (docs/precision.md); defined in TopToTpu.cpp.
void carryPrecision(mlir::Operation *op, mlir::Operation *before);

/// Marks the ops that produce `replaced`'s results `values` (through
/// reshapes) when it had a calibrated range: only those may take it.
void markFinal(mlir::Operation *replaced, mlir::ValueRange values);

/// The lowering of one Top op: `lower` reads operands from the adaptor (the
/// values they were lowered to). What it creates takes the op's precision.
template <typename SourceOp>
class TopLowering : public mlir::OpConversionPattern<SourceOp> {
public:
  using OpAdaptor = typename mlir::OpConversionPattern<SourceOp>::OpAdaptor;
  using mlir::OpConversionPattern<SourceOp>::OpConversionPattern;

  virtual mlir::LogicalResult lower(SourceOp op, OpAdaptor adaptor,
                                    mlir::ConversionPatternRewriter &rewriter) const = 0;

  mlir::LogicalResult matchAndRewrite(SourceOp op, OpAdaptor adaptor,
                                      mlir::ConversionPatternRewriter &rewriter) const final {
    // Lowerings insert before the op (the rewriter's insertion point).
    mlir::Operation *before = op->getPrevNode();
    if (mlir::failed(lower(op, adaptor, rewriter)))
      return mlir::failure();
    carryPrecision(op, before);
    llvm::SmallVector<mlir::Value> values;
    for (mlir::Value result : op->getResults())
      values.push_back(rewriter.getRemappedValue(result));
    markFinal(op, values);
    return mlir::success();
  }
};

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
