//===- Names.h - The ONNX names ops and weights carry ----------*- C++ -*-===//
//
// The importer locates the op producing an ONNX value at NameLoc(<its name>)
// and every weight at NameLoc(<initializer name>); passes name the ops and
// weights they derive "<name><suffix>". These read and make such names, for
// every pass, lowering, interpreter and tool. Header-only: any library may
// use them without a link dependency.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SUPPORT_NAMES_H
#define KILN_SUPPORT_NAMES_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace kiln {

/// The name of the first NameLoc in `loc` (itself, or inside a fused or
/// call-site location), else `fallback`.
inline std::string locName(mlir::Location loc, llvm::StringRef fallback = "") {
  if (auto named = loc->findInstanceOf<mlir::NameLoc>())
    return named.getName().str();
  return fallback.str();
}

/// The ONNX name of an op's result (its NameLoc), else `fallback`.
inline std::string opName(mlir::Operation *op, llvm::StringRef fallback = "") {
  return locName(op->getLoc(), fallback);
}

/// NameLoc "<op's name, else fallback><suffix>" for an op or weight derived
/// from `op` (a decomposition's helper ops, a reordered filter).
inline mlir::Location derivedLoc(mlir::Operation *op, llvm::StringRef suffix,
                                 llvm::StringRef fallback) {
  return mlir::NameLoc::get(
      mlir::StringAttr::get(op->getContext(), opName(op, fallback) + suffix.str()));
}

} // namespace kiln

#endif
