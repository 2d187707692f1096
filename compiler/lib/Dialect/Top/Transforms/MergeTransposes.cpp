//===- MergeTransposes.cpp - Transposes that cancel or move no data -------===//
//
// Layout changes exported around an op (NCHW -> NHWC -> NCHW pairs, a
// permute of a [N, C, 1, 1] squeeze-and-excitation scale) need no data
// movement: consecutive transposes compose into one, an identity permutation
// goes, and a permutation that keeps the order of the dimensions larger than
// 1 is a reshape, which lowers to an alias of its input's memory.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Top/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPMERGETRANSPOSES
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

/// transpose(transpose(x, inner), outer) = transpose(x, inner[outer[i]]).
struct ComposeTransposes : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t d : op.getPerm())
      perm.push_back(inner.getPerm()[d]);
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(inner.getInput());
      op.setPerm(perm);
    });
    return success();
  }
};

/// A permutation that keeps the order of the dimensions larger than 1 moves
/// no element: a reshape (nothing at all if it is the identity).
struct TransposeAsReshape : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto out = dyn_cast<RankedTensorType>(op.getType());
    if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape())
      return failure();
    int64_t previous = -1;
    for (int64_t d : op.getPerm()) {
      if (in.getDimSize(d) == 1)
        continue;
      if (d < previous)
        return failure();
      previous = d;
    }
    if (in == out) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, out, op.getInput(),
                                           rewriter.getDenseI64ArrayAttr(out.getShape()));
    return success();
  }
};

struct MergeTransposesPass
    : public kiln::top::impl::TopMergeTransposesBase<MergeTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ComposeTransposes, TransposeAsReshape>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
