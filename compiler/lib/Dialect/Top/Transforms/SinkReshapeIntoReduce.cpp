//===- SinkReshapeIntoReduce.cpp - Reductions keep the axes a reshape restores -===//
//
// StyleGAN2's demodulation computes d = rsqrt(sum(w * w, [2, 3, 4]) + eps) as
// [1, O] and reshapes it to [1, O, 1, 1, 1] to scale the filter. On [1, O] the
// add and the rsqrt run with O along a row of one lane, and the reshapes
// around them move d between lanes through DDR; kept as [1, O, 1, 1, 1] the
// whole chain stays on the lanes of O, in the layout of the filter it scales,
// so the filter can be formed in one layer group. The rewrite: a reduction
// with keepdims = false, then elementwise ops whose other operands are
// scalars, then a reshape to the reduction's keepdims shape, becomes the
// reduction with keepdims = true and the same ops on that shape. Same values.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Top/Transforms/Passes.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPSINKRESHAPEINTOREDUCE
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

bool isScalar(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1;
}

/// The operand of an elementwise op that carries the chain (the other ones
/// are scalars), or null if the op is not such a link.
Value chainOperand(Operation *op) {
  if (isa<ActiveOp>(op))
    return op->getOperand(0);
  if (!isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp>(op))
    return {};
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (isScalar(rhs) && !isScalar(lhs))
    return lhs;
  if (isScalar(lhs) && !isScalar(rhs))
    return rhs;
  return {};
}

/// The reduction's result shape with its reduced axes kept as 1s.
SmallVector<int64_t> keptShape(ReduceOp reduce) {
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(reduce.getInput().getType()).getShape());
  for (int64_t axis : reduce.getAxes())
    shape[axis] = 1;
  return shape;
}

/// Rewrites the chain ending in `reshape` if it has the form above.
bool sink(ReshapeOp reshape) {
  SmallVector<Operation *> chain;
  Value v = reshape.getInput();
  ReduceOp reduce;
  while (v.hasOneUse()) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if ((reduce = dyn_cast<ReduceOp>(def)))
      break;
    Value next = chainOperand(def);
    if (!next)
      return false;
    chain.push_back(def);
    v = next;
  }
  auto outType = cast<RankedTensorType>(reshape.getType());
  if (!reduce || reduce.getKeepdims() || !outType.hasStaticShape() ||
      outType.getShape() != ArrayRef<int64_t>(keptShape(reduce)))
    return false;
  reduce.setKeepdims(true);
  reduce.getResult().setType(outType.clone(
      cast<RankedTensorType>(reduce.getType()).getElementType()));
  for (Operation *op : llvm::reverse(chain))
    op->getResult(0).setType(outType.clone(
        cast<RankedTensorType>(op->getResult(0).getType()).getElementType()));
  reshape.replaceAllUsesWith(reshape.getInput());
  reshape.erase();
  return true;
}

struct SinkReshapeIntoReducePass
    : public kiln::top::impl::TopSinkReshapeIntoReduceBase<SinkReshapeIntoReducePass> {
  void runOnOperation() override {
    SmallVector<ReshapeOp> reshapes;
    getOperation().walk([&](ReshapeOp r) { reshapes.push_back(r); });
    for (ReshapeOp r : reshapes)
      sink(r);
  }
};
} // namespace
