//===- FoldConstants.cpp - Evaluate ops whose operands are all weights ----===//

#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Support/Names.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPFOLDCONSTANTS
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;
namespace interp = kiln::interp;

namespace {

/// Whether `op` is a Top compute op reading only weights (and absent
/// optional operands).
bool isFoldable(Operation *op) {
  if (!isa<ShapeInference>(op) || op->getNumOperands() == 0 ||
      op->getNumResults() != 1)
    return false;
  // A QDQ model's weight quantization stays: INT8 lowering needs the
  // integers and scales (top-fold-quantize-constants makes the INT8 weight;
  // F32 lowering dequantizes at compile time).
  if (isa<QuantizeLinearOp, DequantizeLinearOp>(op))
    return false;
  return interp::readsOnlyWeights(op);
}

/// Evaluates `op` with the reference interpreter; replaces it by a weight.
LogicalResult fold(Operation *op) {
  FailureOr<interp::Tensor> result = interp::evaluateOnWeights(op);
  if (failed(result))
    return failure();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (type.getShape() != ArrayRef<int64_t>(result->shape))
    return op->emitOpError("folds to shape [")
           << result->shape << "] but its result type is " << type;

  std::string name = kiln::opName(op, "folded");
  OpBuilder b(op);
  WeightOp weight =
      createWeight(b, op->getLoc(), result->shape, result->data, name);
  llvm::SetVector<Operation *> inputs;
  for (Value v : op->getOperands())
    inputs.insert(v.getDefiningOp());
  op->getResult(0).replaceAllUsesWith(weight.getOutput());
  op->erase();
  // Weights (and a none) that only fed the folded op are dead now.
  for (Operation *input : inputs)
    if (input->use_empty())
      input->erase();
  return success();
}

struct FoldConstantsPass
    : public kiln::top::impl::TopFoldConstantsBase<FoldConstantsPass> {
  void runOnOperation() override {
    // Program order: a folded result is a weight by the time its users are
    // visited, so chains fold completely. Only compute ops are collected:
    // folding erases weights, never a compute op other than itself.
    SmallVector<Operation *> ops;
    getOperation().walk([&](ShapeInference op) { ops.push_back(op); });
    for (Operation *op : ops)
      if (isFoldable(op) && failed(fold(op)))
        return signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> kiln::top::createFoldConstantsPass() {
  return std::make_unique<FoldConstantsPass>();
}
