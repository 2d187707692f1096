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

LogicalResult ViewOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError("views its input's elements: element types ")
           << in.getElementType() << " and " << out.getElementType() << " differ";
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return emitOpError("needs static shapes");
  const int64_t offset = static_cast<int64_t>(getOffset());
  if (offset < 0 || offset + out.getNumElements() > in.getNumElements())
    return emitOpError("elements [")
           << offset << ", " << offset + out.getNumElements()
           << ") lie outside the input's " << in.getNumElements();
  return success();
}
