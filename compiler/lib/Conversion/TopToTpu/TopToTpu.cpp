#include "Patterns.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln::tpu {
#define GEN_PASS_DEF_CONVERTTOPTOTPU
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

Value tpu::reshapeTo(PatternRewriter &rewriter, Location loc, Value v,
                     ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  auto newType = RankedTensorType::get(shape, type.getElementType());
  if (auto weight = v.getDefiningOp<top::WeightOp>()) {
    // Weights are reshaped at compile time, not on the chip.
    auto data = top::readWeight(weight);
    std::string name = "reshaped";
    if (auto named = dyn_cast<NameLoc>(weight.getLoc()))
      name = named.getName().str() + "_reshaped";
    return top::createWeight(rewriter, weight.getLoc(), shape, data, name);
  }
  return rewriter.create<tpu::ReshapeOp>(loc, newType, v);
}

namespace {
struct ConvertTopToTpuPass
    : public tpu::impl::ConvertTopToTpuBase<ConvertTopToTpuPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    tpu::populateConvLowering(patterns);
    tpu::populatePoolLowering(patterns);
    tpu::populateEltwiseLowering(patterns);
    tpu::populateMatMulLowering(patterns);
    tpu::populateShapeLowering(patterns);
    tpu::populateDataMovementLowering(patterns);
    tpu::populateReduceLowering(patterns);
    tpu::populateDeconvLowering(patterns);
    tpu::populateResizeLowering(patterns);
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                            config)))
      return signalPassFailure();
    // Every compute op must have been lowered; weights stay as top.weight.
    WalkResult result = getOperation().walk([](Operation *op) {
      if (isa<top::TopDialect>(op->getDialect()) &&
          !isa<top::WeightOp, top::NoneOp>(op)) {
        op->emitError("cannot lower '")
            << op->getName() << "' with these operands to the chip (F32)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
    getOperation().walk([](top::WeightOp w) {
      if (w->use_empty())
        w.erase();
    });
  }
};
} // namespace

std::unique_ptr<Pass> tpu::createConvertTopToTpuPass() {
  return std::make_unique<ConvertTopToTpuPass>();
}
