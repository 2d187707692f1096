#ifndef KILN_DIALECT_TOP_IR_TOPOPS_H
#define KILN_DIALECT_TOP_IR_TOPOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/Dialect/Top/IR/TopDialect.h.inc"
#include "kiln/Dialect/Top/IR/TopEnums.h.inc"
#include "kiln/Dialect/Top/IR/TopInterfaces.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Top/IR/TopOps.h.inc"

namespace kiln::top {
/// The float contents of a weight's value (dense or dense resource).
std::vector<float> readWeight(WeightOp op);
/// Creates a top.weight holding `data` as a dense resource named after
/// `name` (made a bare identifier, as resource keys must be; the resource
/// manager makes it unique).
WeightOp createWeight(mlir::OpBuilder &b, mlir::Location loc,
                      llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<float> data,
                      llvm::StringRef name);
/// A bare-identifier resource key for tensor `name`: other characters
/// become '_' (the NameLoc keeps the original name).
std::string resourceKey(llvm::StringRef name);
/// The number of elements a normalized top.slice takes along one dimension.
int64_t sliceExtent(int64_t start, int64_t end, int64_t step);
} // namespace kiln::top

#endif
