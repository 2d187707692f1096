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

#include "kiln/Dialect/Tpu/IR/TpuDialect.h.inc"
#include "kiln/Dialect/Tpu/IR/TpuEnums.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Tpu/IR/TpuOps.h.inc"

#endif
