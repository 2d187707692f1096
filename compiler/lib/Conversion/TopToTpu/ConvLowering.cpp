#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
struct ConvLowering : public tpu::TopLowering<top::ConvOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::ConvOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tpu::Conv2DOp>(
        op, op.getType(), adaptor.getInput(), adaptor.getFilter(), adaptor.getBias(),
        op.getKernelShapeAttr(), op.getStridesAttr(), op.getPadsAttr(),
        op.getDilationsAttr(), op.getGroupAttr(), op.getDoReluAttr());
    return success();
  }
};
} // namespace

void tpu::populateConvLowering(RewritePatternSet &patterns) {
  patterns.add<ConvLowering>(patterns.getContext());
}
