#include "kiln/Dialect/Tpu/IR/TpuOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kiln::tpu;

#include "kiln/Dialect/Tpu/IR/TpuDialect.cpp.inc"
#include "kiln/Dialect/Tpu/IR/TpuEnums.cpp.inc"

void TpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/Tpu/IR/TpuOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Tpu/IR/TpuOps.cpp.inc"
