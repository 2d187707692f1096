#include "Patterns.h"
#include "QuantHelpers.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"
#include "kiln/Support/Precision.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"
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
/// The attributes a Top op's lowering gives every op it creates.
constexpr StringRef kCarried[] = {kDTypeAttr, kCalibAttr, kQParamsAttr, kReasonAttr,
                                  kChannelMeanAttr};
} // namespace

void tpu::carryPrecision(Operation *op, Operation *before) {
  Operation *created = before ? before->getNextNode() : &op->getBlock()->front();
  for (; created != op; created = created->getNextNode()) {
    if (isa<top::WeightOp, top::NoneOp>(created))
      continue;
    for (StringRef name : kCarried)
      if (Attribute a = op->getAttr(name); a && !created->hasAttr(name))
        created->setAttr(name, a);
  }
}

void tpu::markFinal(Operation *replaced, ValueRange values) {
  if (!replaced->hasAttr("kiln.calib") && !replaced->hasAttr("kiln.qparams"))
    return;
  for (Value v : values) {
    Operation *def = v.getDefiningOp();
    while (auto reshape = dyn_cast_or_null<tpu::ReshapeOp>(def))
      def = reshape.getInput().getDefiningOp();
    if (def && !isa<top::WeightOp>(def))
      def->setAttr("kiln.final", UnitAttr::get(replaced->getContext()));
  }
}

namespace {
/// A reshape folded away after lowering passes its range on like the op it
/// stood for (markFinal).
class FinalMarker : public RewriterBase::Listener {
public:
  void notifyOperationReplaced(Operation *op, ValueRange values) override {
    tpu::markFinal(op, values);
  }
};

/// Folds the reshape pairs lowering leaves between ops, erases what it left
/// unused and gathers the weights it created at the top of their function.
LogicalResult cleanUp(Operation *root) {
  FinalMarker marker;
  GreedyRewriteConfig config;
  config.useTopDownTraversal = true;
  config.listener = &marker;
  return applyPatternsAndFoldGreedily(root, FrozenRewritePatternSet(), config);
}

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

    // Top compute ops must all be lowered; weights and absent operands stay.
    // A weight's quantize goes with its dequantizes, at compile time. The
    // first round leaves the weight dequantizes INT8 ops read; the second
    // lowers them.
    bool firstRound = true;
    ConversionTarget target(getContext());
    target.addLegalDialect<tpu::TpuDialect, func::FuncDialect>();
    target.addIllegalDialect<top::TopDialect>();
    target.addLegalOp<ModuleOp, top::WeightOp, top::NoneOp>();
    target.addDynamicallyLegalOp<top::QuantizeLinearOp>([](top::QuantizeLinearOp q) {
      return q.getInput().getDefiningOp<top::WeightOp>() &&
             llvm::all_of(q->getUsers(), llvm::IsaPred<top::DequantizeLinearOp>);
    });
    target.addDynamicallyLegalOp<top::DequantizeLinearOp>(
        [&](top::DequantizeLinearOp dq) { return firstRound && tpu::waitsForInt8Users(dq); });

    FrozenRewritePatternSet lowerings(std::move(patterns));
    if (failed(applyFullConversion(getOperation(), target, lowerings)))
      return signalPassFailure();
    firstRound = false;
    if (failed(applyFullConversion(getOperation(), target, lowerings)) ||
        failed(cleanUp(getOperation())))
      return signalPassFailure();
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
