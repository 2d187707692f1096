//===- FormViews.cpp - Contiguous copies become views ---------------------===//
//
// A slice or split along the outermost dimension that is not 1 (and a gather
// of one index there, or a broadcast that repeats nothing) copies one
// contiguous range of its input. Its consumers can read that range where it
// is: the copy becomes a tpu.view, which runs no command.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace kiln::tpu {
#define GEN_PASS_DEF_TPUFORMVIEWS
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

namespace {

/// The source element offset if `dma` is one copy of a contiguous range of
/// operand 0 onto its whole result.
std::optional<int64_t> contiguousSource(tpu::DmaOp dma) {
  ArrayAttr program = dma.getProgram();
  auto type = cast<RankedTensorType>(dma.getType());
  if (dma.getInputs().empty() || program.size() != 1 ||
      !type.hasStaticShape() ||
      cast<RankedTensorType>(dma.getInputs()[0].getType()).getElementType() !=
          type.getElementType())
    return std::nullopt;
  auto copy = cast<tpu::DmaCopyAttr>(program[0]);
  int64_t srcOff = copy.getSrcOffset();
  ArrayRef<int64_t> shape = copy.getShape(), srcStrides = copy.getSrcStrides(),
                    dstStrides = copy.getDstStrides();
  if (copy.getSrc() != 0 || copy.getDstOffset() != 0)
    return std::nullopt;
  int64_t inner = 1;
  for (int i = 3; i >= 0; --i) {
    if (shape[i] > 1 && (srcStrides[i] != inner || dstStrides[i] != inner))
      return std::nullopt;
    inner *= shape[i];
  }
  if (inner != type.getNumElements())
    return std::nullopt;
  return srcOff;
}

struct FormViewsPass : public tpu::impl::TpuFormViewsBase<FormViewsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](tpu::DmaOp dma) {
      std::optional<int64_t> offset = contiguousSource(dma);
      if (!offset)
        return;
      rewriter.setInsertionPoint(dma);
      rewriter.replaceOpWithNewOp<tpu::ViewOp>(dma, dma.getType(), dma.getInputs()[0],
                                               rewriter.getI64IntegerAttr(*offset));
    });
  }
};
} // namespace
