#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
struct ReshapeLowering : public tpu::TopLowering<top::ReshapeOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::ReshapeOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, op.getLoc(), adaptor.getInput(),
                                          cast<RankedTensorType>(op.getType()).getShape()));
    return success();
  }
};

struct ConcatLowering : public tpu::TopLowering<top::ConcatOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::ConcatOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    rewriter.replaceOpWithNewOp<tpu::ConcatOp>(op, op.getType(), adaptor.getInputs(),
                                               axis);
    return success();
  }
};
} // namespace

void tpu::populateShapeLowering(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, ConcatLowering>(patterns.getContext());
}
