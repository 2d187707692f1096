//===- Decompose.cpp - Composite Top ops into simpler ones ----------------===//

#include "kiln/Dialect/Top/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPDECOMPOSE
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

/// NameLoc "<op's name><suffix>" for a helper op of a decomposition.
Location helperLoc(Operation *op, StringRef suffix) {
  std::string base = "softmax";
  if (auto loc = op->getLoc()->findInstanceOf<NameLoc>())
    base = loc.getName().str();
  return NameLoc::get(StringAttr::get(op->getContext(), base + suffix.str()));
}

/// softmax = e / sum(e), log-softmax = (x - max) - log(sum(e)), with
/// e = exp(x - max(x)): subtracting the maximum keeps exp() finite.
LogicalResult decomposeSoftmax(SoftmaxOp op) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  int64_t rank = type.getRank();
  int64_t axis = op.getAxis();
  if (axis < -rank || axis >= rank)
    return op.emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> reducedShape(type.getShape());
  reducedShape[axis] = 1;
  auto reduced = RankedTensorType::get(reducedShape, type.getElementType());

  OpBuilder b(op);
  Value x = op.getInput();
  auto max = b.create<ReduceOp>(helperLoc(op, "_max"), reduced, x,
                                ReduceMode::Max, ArrayRef<int64_t>{axis}, true);
  auto shifted =
      b.create<SubOp>(helperLoc(op, "_shifted"), type, x, max, false);
  auto exp = b.create<ActiveOp>(helperLoc(op, "_exp"), type, shifted,
                                ActiveMode::Exp, APFloat(0.0), APFloat(0.0));
  auto sum = b.create<ReduceOp>(helperLoc(op, "_sum"), reduced, exp,
                                ReduceMode::Sum, ArrayRef<int64_t>{axis}, true);
  Value result;
  if (op.getLog()) {
    auto logSum =
        b.create<ActiveOp>(helperLoc(op, "_log_sum"), reduced, sum,
                           ActiveMode::Log, APFloat(0.0), APFloat(0.0));
    result = b.create<SubOp>(op.getLoc(), type, shifted, logSum, false);
  } else {
    result = b.create<DivOp>(op.getLoc(), type, exp, sum, false);
  }
  op.getOutput().replaceAllUsesWith(result);
  op.erase();
  return success();
}

struct DecomposePass : public kiln::top::impl::TopDecomposeBase<DecomposePass> {
  void runOnOperation() override {
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp op) { softmaxes.push_back(op); });
    for (SoftmaxOp op : softmaxes)
      if (failed(decomposeSoftmax(op)))
        return signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> kiln::top::createDecomposePass() {
  return std::make_unique<DecomposePass>();
}
