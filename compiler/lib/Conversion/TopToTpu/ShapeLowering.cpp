#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
struct ReshapeLowering : public OpRewritePattern<top::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(top::ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, op.getLoc(), op.getInput(),
                                          cast<RankedTensorType>(op.getType()).getShape()));
    return success();
  }
};

struct ConcatLowering : public OpRewritePattern<top::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(top::ConcatOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    rewriter.replaceOpWithNewOp<tpu::ConcatOp>(op, op.getType(), op.getInputs(),
                                               axis);
    return success();
  }
};
} // namespace

void tpu::populateShapeLowering(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, ConcatLowering>(patterns.getContext());
}
