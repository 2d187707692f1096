//===- FoldQuantizeConstants.cpp - quantize_linear(weight) -> INT8 weight -===//
//
// QDQ models quantize their float weights in the graph (weight ->
// QuantizeLinear -> DequantizeLinear). The quantize is evaluated here into an
// i8/ui8 top.weight; the dequantize stays so INT8 lowering reads the model's
// own integers and scales.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Support/Names.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPFOLDQUANTIZECONSTANTS
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

struct FoldQuantizeOfWeight : public OpRewritePattern<QuantizeLinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeLinearOp op,
                                PatternRewriter &rewriter) const override {
    auto weight = op.getInput().getDefiningOp<WeightOp>();
    if (!weight || !weight.getValue().getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "input is not an f32 weight");
    auto type = cast<RankedTensorType>(op.getOutput().getType());
    auto inType = cast<RankedTensorType>(weight.getOutput().getType());
    if (!inType.hasStaticShape() || inType.getShape() != type.getShape())
      return rewriter.notifyMatchFailure(op, "shapes differ or are dynamic");
    std::vector<float> data = readWeight(weight);
    if ((int64_t)data.size() != inType.getNumElements())
      return rewriter.notifyMatchFailure(op, "weight data is unavailable");
    ArrayRef<double> scale = op.getScale();
    ArrayRef<int64_t> zp = op.getZeroPoint();
    bool isUnsigned = type.getElementType().isUnsignedInteger();
    SmallVector<int64_t> q(data.size());
    for (int64_t i = 0, e = data.size(); i < e; ++i) {
      int64_t c = quantChannel(inType.getShape(), op.getAxis(), scale.size(), i);
      q[i] = static_cast<int64_t>(
          quantizeValue(data[i], scale[c], zp[c], isUnsigned));
    }
    std::string name = kiln::opName(op, "quantized");
    WeightOp folded = createInt8Weight(rewriter, op.getLoc(), type.getShape(),
                                       q, isUnsigned, name);
    rewriter.replaceOp(op, folded.getOutput());
    // The greedy driver erases the float weight once nothing reads it.
    return success();
  }
};

struct FoldQuantizeConstantsPass
    : public kiln::top::impl::TopFoldQuantizeConstantsBase<
          FoldQuantizeConstantsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldQuantizeOfWeight>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> kiln::top::createFoldQuantizeConstantsPass() {
  return std::make_unique<FoldQuantizeConstantsPass>();
}
