//===- ResizeLowering.cpp - Resize and Upsample ---------------------------===//

#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
struct ResizeLowering : public OpRewritePattern<top::ResizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(top::ResizeOp op,
                                PatternRewriter &rewriter) const override {
    // Top's ResizeMode values are firmware-abi's kiln_resize_mode.
    rewriter.replaceOpWithNewOp<tpu::ResizeOp>(
        op, op.getType(), op.getInput(), static_cast<int64_t>(op.getMode()),
        static_cast<int64_t>(op.getCoordMode()),
        static_cast<int64_t>(op.getNearestMode()), op.getScales());
    return success();
  }
};
} // namespace

void tpu::populateResizeLowering(RewritePatternSet &patterns) {
  patterns.add<ResizeLowering>(patterns.getContext());
}
