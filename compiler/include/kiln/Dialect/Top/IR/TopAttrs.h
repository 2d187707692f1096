//===- TopAttrs.h - Enums and attributes of Top IR --------------*- C++ -*-===//
//
// The modes Top and Tpu ops share and the `kiln.dtype` attribute
// (TopAttrs.td), without Top's ops: Tpu IR includes this.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_TOP_IR_TOPATTRS_H
#define KILN_DIALECT_TOP_IR_TOPATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Operation.h"

#include <optional>

#include "kiln/Dialect/Top/IR/TopEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Top/IR/TopAttrs.h.inc"

namespace kiln::top {
/// The dtype op runs in (its `kiln.dtype`), if assigned.
std::optional<DType> runDtype(mlir::Operation *op);
void setRunDtype(mlir::Operation *op, DType dtype);

/// A `kiln.dtype` on op, if any, is a #top.dtype. No dialect owns the
/// `kiln.` prefix, so Top and Tpu ops check it themselves (TypedRunDtype).
mlir::LogicalResult verifyRunDtype(mlir::Operation *op);

template <typename ConcreteType>
class TypedRunDtype : public mlir::OpTrait::TraitBase<ConcreteType, TypedRunDtype> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) { return verifyRunDtype(op); }
};
} // namespace kiln::top

#endif
