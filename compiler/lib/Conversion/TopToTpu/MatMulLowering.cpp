#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
/// input [.., m, k] x weight -> 1x1 conv on [M, k, 1, 1] with filter
/// [n, k, 1, 1], M the product of the leading dims.
struct MatMulLowering : public OpRewritePattern<top::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(top::MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto right = op.getRight().getDefiningOp<top::WeightOp>();
    if (!right)
      return rewriter.notifyMatchFailure(op, "right operand is not a weight");
    auto rShape = cast<RankedTensorType>(right.getType()).getShape();
    int64_t k = op.getRightTranspose() ? rShape[1] : rShape[0];
    int64_t n = op.getRightTranspose() ? rShape[0] : rShape[1];
    std::vector<float> w = top::readWeight(right);
    std::vector<float> filter(n * k);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j)
        filter[i * k + j] = op.getRightTranspose() ? w[i * k + j] : w[j * n + i];
    Location loc = op.getLoc();
    std::string name = "matmul";
    if (auto named = dyn_cast<NameLoc>(loc))
      name = named.getName().str();
    Value filterW =
        top::createWeight(rewriter, right.getLoc(), {n, k, 1, 1}, filter, name + "_filter");

    auto outType = cast<RankedTensorType>(op.getType());
    int64_t m = 1;
    for (int64_t d : outType.getShape().drop_back())
      m *= d;
    Value in = tpu::reshapeTo(rewriter, loc, op.getInput(), {m, k, 1, 1});
    int64_t one[2] = {1, 1}, zero[4] = {0, 0, 0, 0};
    auto convType = RankedTensorType::get({m, n, 1, 1}, outType.getElementType());
    Value conv = rewriter.create<tpu::Conv2DOp>(
        loc, convType, in, filterW, op.getBias(), one, one, zero, one,
        int64_t(1), op.getDoRelu());
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, loc, conv, outType.getShape()));
    return success();
  }
};
} // namespace

void tpu::populateMatMulLowering(RewritePatternSet &patterns) {
  patterns.add<MatMulLowering>(patterns.getContext());
}
