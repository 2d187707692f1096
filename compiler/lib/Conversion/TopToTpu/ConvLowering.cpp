#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
struct ConvLowering : public OpRewritePattern<top::ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(top::ConvOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tpu::Conv2DOp>(
        op, op.getType(), op.getInput(), op.getFilter(), op.getBias(),
        op.getKernelShapeAttr(), op.getStridesAttr(), op.getPadsAttr(),
        op.getDilationsAttr(), op.getGroupAttr(), op.getDoReluAttr());
    return success();
  }
};
} // namespace

void tpu::populateConvLowering(RewritePatternSet &patterns) {
  patterns.add<ConvLowering>(patterns.getContext());
}
