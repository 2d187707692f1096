#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
/// ceil_mode becomes extra bottom/right padding, so the chip op only knows
/// floor semantics; avg pool still divides by the valid input count.
template <typename TopPool, tpu::PoolKind Kind>
struct PoolLowering : public OpRewritePattern<TopPool> {
  using OpRewritePattern<TopPool>::OpRewritePattern;
  LogicalResult matchAndRewrite(TopPool op,
                                PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType()).getShape();
    auto out = cast<RankedTensorType>(op.getType()).getShape();
    auto k = op.getKernelShape();
    auto s = op.getStrides();
    SmallVector<int64_t> pads(op.getPads());
    for (int i = 0; i < 2; ++i) {
      int64_t needed = (out[2 + i] - 1) * s[i] + k[i] - in[2 + i] - pads[i];
      pads[2 + i] = std::max(pads[2 + i], needed);
    }
    rewriter.replaceOpWithNewOp<tpu::Pool2DOp>(
        op, op.getType(), op.getInput(), Kind, op.getKernelShape(),
        op.getStrides(), pads, op.getCountIncludePad(), false,
        DenseI64ArrayAttr());
    return success();
  }
};

struct GlobalAvgPoolLowering : public OpRewritePattern<top::GlobalAvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(top::GlobalAvgPoolOp op,
                                PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType()).getShape();
    int64_t kernel[2] = {in[2], in[3]};
    int64_t strides[2] = {1, 1};
    int64_t pads[4] = {0, 0, 0, 0};
    rewriter.replaceOpWithNewOp<tpu::Pool2DOp>(
        op, op.getType(), op.getInput(), tpu::PoolKind::Avg, kernel, strides,
        pads, false, false, DenseI64ArrayAttr());
    return success();
  }
};
} // namespace

void tpu::populatePoolLowering(RewritePatternSet &patterns) {
  patterns.add<PoolLowering<top::MaxPoolOp, tpu::PoolKind::Max>,
               PoolLowering<top::AvgPoolOp, tpu::PoolKind::Avg>,
               GlobalAvgPoolLowering>(patterns.getContext());
}
