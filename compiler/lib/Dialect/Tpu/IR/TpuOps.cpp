#include "kiln/Dialect/Tpu/IR/TpuOps.h"

#include "kiln/abi/chip.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::tpu;

#include "kiln/Dialect/Tpu/IR/TpuDialect.cpp.inc"
#include "kiln/Dialect/Tpu/IR/TpuEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Tpu/IR/TpuAttrs.cpp.inc"

void TpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/Tpu/IR/TpuOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kiln/Dialect/Tpu/IR/TpuAttrs.cpp.inc"
      >();
}

/// `tpu.lmem` places a value of a tpu.group's body inside a lane. The module
/// facts tpu-address-assign records (tpu.coeff_size, tpu.neuron_size,
/// tpu.activation_peak, tpu.keep_tensors) are plain integers and units.
LogicalResult TpuDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() != lmemAttrName())
    return success();
  auto lmem = dyn_cast<LmemAttr>(attr.getValue());
  if (!lmem)
    return op->emitError("'tpu.lmem' must be a #tpu.lmem<ping, pong>");
  if (!op->getParentOfType<GroupOp>() || op->getNumResults() != 1)
    return op->emitError("'tpu.lmem' places the one result of an op in a tpu.group");
  if (lmem.getPing() >= KILN_LMEM_BYTES_PER_LANE || lmem.getPong() >= KILN_LMEM_BYTES_PER_LANE)
    return op->emitError("'tpu.lmem' offsets must lie in a lane's ")
           << KILN_LMEM_BYTES_PER_LANE << " bytes";
  return success();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Tpu/IR/TpuOps.cpp.inc"

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto inner = getInput().getDefiningOp<ReshapeOp>();
  if (!inner)
    return {};
  if (inner.getInput().getType() == getType())
    return inner.getInput();
  getInputMutable().assign(inner.getInput());
  return getResult();
}

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

LogicalResult FoldRowsOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError("moves its input's elements: element types ")
           << in.getElementType() << " and " << out.getElementType() << " differ";
  if (in.getRank() != 4 || out.getRank() != 4 || !in.hasStaticShape() || !out.hasStaticShape())
    return emitOpError("needs static 4-D shapes");
  auto kernel = int64_t(getKernelH()), stride = int64_t(getStrideH()),
       dilation = int64_t(getDilationH()), padTop = int64_t(getPadTop());
  if (kernel < 1 || stride < 1 || dilation < 1 || padTop < 0)
    return emitOpError("needs kernel_h, stride_h and dilation_h >= 1 and pad_top >= 0");
  int64_t channels = in.getDimSize(1) * kernel;
  if (out.getDimSize(0) != in.getDimSize(0) || out.getDimSize(1) != channels ||
      out.getDimSize(3) != in.getDimSize(3))
    return emitOpError("result must be [N, C * kernel_h, rows, W] of the input's N, C, W");
  if (channels > KILN_NPU_NUM)
    return emitOpError("folds ") << channels << " channels; its loads place at most "
                                 << KILN_NPU_NUM << " (one lane each)";
  return success();
}

LogicalResult GroupOp::verify() {
  for (Operation &op : getBody().front())
    if (!isa<StoreOp, YieldOp>(op) && !op.hasAttr(TpuDialect::lmemAttrName()))
      return op.emitOpError("in a tpu.group needs its LMEM placement ('tpu.lmem')");
  return success();
}
