#include "Patterns.h"
#include "QuantHelpers.h"
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
    std::string name = locName(weight.getLoc());
    name = name.empty() ? "reshaped" : name + "_reshaped";
    return top::createWeight(rewriter, weight.getLoc(), shape, data, name);
  }
  return rewriter.create<tpu::ReshapeOp>(loc, newType, v);
}

namespace {
/// Carries the precision a Top op was given (docs/precision.md) to every op
/// its lowering creates, and marks the ops that produce its final results
/// (through reshapes): only those may take its calibrated range.
class PrecisionCarrier : public RewriterBase::Listener {
public:
  void notifyPatternBegin(const Pattern &, Operation *op) override { roots.push_back(op); }
  void notifyPatternEnd(const Pattern &, LogicalResult) override { roots.pop_back(); }

  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (roots.empty() || isa<top::WeightOp, top::NoneOp>(op))
      return;
    for (StringRef name : kCarried)
      if (Attribute a = roots.back()->getAttr(name); a && !op->hasAttr(name))
        op->setAttr(name, a);
  }

  void notifyOperationReplaced(Operation *op, ValueRange values) override {
    if (!op->hasAttr("kiln.calib") && !op->hasAttr("kiln.qparams"))
      return;
    for (Value v : values) {
      Operation *def = v.getDefiningOp();
      while (auto reshape = dyn_cast_or_null<tpu::ReshapeOp>(def))
        def = reshape.getInput().getDefiningOp();
      if (def && !isa<top::WeightOp>(def))
        def->setAttr("kiln.final", UnitAttr::get(op->getContext()));
    }
  }

private:
  static constexpr StringRef kCarried[] = {"kiln.dtype", "kiln.calib", "kiln.qparams",
                                           "kiln.reason"};
  SmallVector<Operation *> roots;
};

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
    tpu::populateQuantLowering(patterns);
    PrecisionCarrier carrier;
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    config.listener = &carrier;
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
