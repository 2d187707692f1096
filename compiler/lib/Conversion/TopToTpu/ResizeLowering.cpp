//===- ResizeLowering.cpp - Resize and Upsample ---------------------------===//

#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
struct ResizeLowering : public OpRewritePattern<top::ResizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(top::ResizeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tpu::ResizeOp>(op, op.getType(), op.getInput(), op.getMode(),
                                               op.getCoordMode(), op.getNearestMode(),
                                               op.getScales());
    return success();
  }
};
} // namespace

void tpu::populateResizeLowering(RewritePatternSet &patterns) {
  patterns.add<ResizeLowering>(patterns.getContext());
}
