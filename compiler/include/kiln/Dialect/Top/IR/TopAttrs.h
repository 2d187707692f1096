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
#include "mlir/IR/Operation.h"

#include <optional>

#include "kiln/Dialect/Top/IR/TopEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Top/IR/TopAttrs.h.inc"

namespace kiln::top {
/// The dtype op runs in (its `kiln.dtype`), if assigned.
std::optional<DType> runDtype(mlir::Operation *op);
void setRunDtype(mlir::Operation *op, DType dtype);
} // namespace kiln::top

#endif
