//===- ResizeLowering.cpp - Resize and Upsample ---------------------------===//

#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
struct ResizeLowering : public tpu::TopLowering<top::ResizeOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::ResizeOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tpu::ResizeOp>(op, op.getType(), adaptor.getInput(),
                                               op.getMode(), op.getCoordMode(),
                                               op.getNearestMode(), op.getScales());
    return success();
  }
};
} // namespace

void tpu::populateResizeLowering(RewritePatternSet &patterns) {
  patterns.add<ResizeLowering>(patterns.getContext());
}
