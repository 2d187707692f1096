#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
/// The TIU works on 4-D tensors: shapes are padded with leading 1s, the same
/// alignment numpy broadcasting uses, so broadcasting is preserved.
static SmallVector<int64_t> to4D(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> out(4 - std::min<size_t>(shape.size(), 4), 1);
  out.append(shape.begin(), shape.end());
  return out;
}

template <typename TopOp, tpu::EltwiseKind Kind>
struct EltwiseLowering : public OpRewritePattern<TopOp> {
  using OpRewritePattern<TopOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(TopOp op,
                                PatternRewriter &rewriter) const override {
    auto outType = cast<RankedTensorType>(op.getType());
    if (outType.getRank() > 4)
      return rewriter.notifyMatchFailure(op, "above 4-D");
    Location loc = op.getLoc();
    auto shapeOf = [](Value v) {
      return to4D(cast<RankedTensorType>(v.getType()).getShape());
    };
    Value lhs = tpu::reshapeTo(rewriter, loc, op.getLhs(), shapeOf(op.getLhs()));
    Value rhs = tpu::reshapeTo(rewriter, loc, op.getRhs(), shapeOf(op.getRhs()));
    auto type4 = RankedTensorType::get(to4D(outType.getShape()),
                                       outType.getElementType());
    Value result = rewriter.create<tpu::EltwiseOp>(loc, type4, lhs, rhs, Kind,
                                                   op.getDoRelu());
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, loc, result,
                                          outType.getShape()));
    return success();
  }
};

struct ReluLowering : public OpRewritePattern<top::ReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(top::ReluOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    Value in = tpu::reshapeTo(rewriter, loc, op.getInput(), to4D(type.getShape()));
    Value result = rewriter.create<tpu::ReluOp>(loc, in.getType(), in);
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, loc, result, type.getShape()));
    return success();
  }
};
} // namespace

void tpu::populateEltwiseLowering(RewritePatternSet &patterns) {
  patterns.add<EltwiseLowering<top::AddOp, tpu::EltwiseKind::Add>,
               EltwiseLowering<top::MulOp, tpu::EltwiseKind::Mul>, ReluLowering>(
      patterns.getContext());
}
