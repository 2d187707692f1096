#ifndef KILN_DIALECT_TPU_TRANSFORMS_PASSES_H
#define KILN_DIALECT_TPU_TRANSFORMS_PASSES_H

#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln::tpu {
std::unique_ptr<mlir::Pass> createConvertTopToTpuPass();
std::unique_ptr<mlir::Pass> createLayerGroupPass();
std::unique_ptr<mlir::Pass> createLayerGroupPass(unsigned maxGroupOps, bool enabled);
std::unique_ptr<mlir::Pass> createAddressAssignPass();
std::unique_ptr<mlir::Pass> createAddressAssignPass(bool keepTensors);

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

#endif
