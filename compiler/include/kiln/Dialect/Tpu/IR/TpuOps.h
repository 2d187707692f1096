#ifndef KILN_DIALECT_TPU_IR_TPUOPS_H
#define KILN_DIALECT_TPU_IR_TPUOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Quant/QuantOps.h"
#include "mlir/Dialect/Quant/QuantTypes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/Dialect/Top/IR/TopAttrs.h"
#include "kiln/Dialect/Tpu/IR/TpuDialect.h.inc"
#include "kiln/Dialect/Tpu/IR/TpuEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Tpu/IR/TpuAttrs.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Tpu/IR/TpuOps.h.inc"

namespace kiln::tpu {
/// Reshapes and views move no bytes: their result is part of their input's
/// DDR memory (`input` is where the bytes come from). A fold_rows result has
/// no memory of its own either: the loads that read it read its input.
inline mlir::Value viewSource(mlir::Operation *op) {
  if (auto reshape = llvm::dyn_cast_or_null<ReshapeOp>(op))
    return reshape.getInput();
  if (auto view = llvm::dyn_cast_or_null<ViewOp>(op))
    return view.getInput();
  if (auto fold = llvm::dyn_cast_or_null<FoldRowsOp>(op))
    return fold.getInput();
  return {};
}

/// The value whose op computed v's bytes: v with reshapes and views undone.
inline mlir::Value producedValue(mlir::Value v) {
  while (mlir::Value source = viewSource(v.getDefiningOp()))
    v = source;
  return v;
}
} // namespace kiln::tpu

#endif
