//===- ResizeLowering.cpp - Resize and Upsample ---------------------------===//

#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
struct ResizeLowering : public tpu::TopLowering<top::ResizeOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::ResizeOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    // Top's ResizeMode values are firmware-abi's kiln_resize_mode.
    rewriter.replaceOpWithNewOp<tpu::ResizeOp>(
        op, op.getType(), adaptor.getInput(), static_cast<int64_t>(op.getMode()),
        static_cast<int64_t>(op.getCoordMode()),
        static_cast<int64_t>(op.getNearestMode()), op.getScales());
    return success();
  }
};
} // namespace

void tpu::populateResizeLowering(RewritePatternSet &patterns) {
  patterns.add<ResizeLowering>(patterns.getContext());
}
