//===- Decompose.cpp - Composite Top ops into simpler ones ----------------===//

#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Support/Names.h"
#include "kiln/Support/Precision.h"

#include "mlir/IR/Builders.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPDECOMPOSE
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

/// NameLoc "<op's name><suffix>" for a helper op of a decomposition.
Location helperLoc(Operation *op, StringRef suffix, StringRef fallback = "softmax") {
  return kiln::derivedLoc(op, suffix, fallback);
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
  // Under `quantize: int8` exp, sum and log-sum run in F16: INT8 rounds the
  // small exponentials of a wide row to 0 and the sum loses them.
  std::string name = kiln::opName(op);
  for (Operation *inner : {exp.getOperation(), sum.getOperation()})
    kiln::markNormalization(inner, name, "int8 rounds small exponentials to 0");
  if (op.getLog())
    kiln::markNormalization(result.getDefiningOp()->getOperand(1).getDefiningOp(), name,
                            "int8 rounds small exponentials to 0");
  op.getOutput().replaceAllUsesWith(result);
  op.erase();
  return success();
}

/// Average pooling with count_include_pad whose ceil_mode windows hang past
/// the end padding: ONNX (and PyTorch) count the pads but not the part past
/// them, while the chip's pool counts its whole window once lowering turns
/// ceil_mode into extra end padding. Without pads, counting them changes
/// nothing: the op becomes count_include_pad = false. Otherwise the pads
/// become a zero top.pad ("<name>_pad") in front of a pool without pads that
/// counts only real elements (the zeros now are).
void decomposeCeilAvgPool(AvgPoolOp op) {
  if (!op.getCountIncludePad() || !op.getCeilMode())
    return;
  auto in = cast<RankedTensorType>(op.getInput().getType()).getShape();
  auto out = cast<RankedTensorType>(op.getType()).getShape();
  auto k = op.getKernelShape();
  auto s = op.getStrides();
  auto pads = op.getPads();
  if (in.size() != 4 || out.size() != 4 || k.size() != 2 || s.size() != 2 || pads.size() != 4)
    return;
  bool hangs = false;
  for (int i = 0; i < 2; ++i)
    hangs |= (out[2 + i] - 1) * s[i] + k[i] > in[2 + i] + pads[i] + pads[2 + i];
  if (!hangs)
    return;
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; })) {
    op.setCountIncludePad(false);
    return;
  }
  OpBuilder b(op);
  auto type = cast<RankedTensorType>(op.getInput().getType());
  SmallVector<int64_t> padded(in);
  padded[2] += pads[0] + pads[2];
  padded[3] += pads[1] + pads[3];
  int64_t allPads[8] = {0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]};
  auto pad = b.create<PadOp>(helperLoc(op, "_pad", "avgpool"),
                             RankedTensorType::get(padded, type.getElementType()),
                             op.getInput(), allPads, PadMode::Constant, APFloat(0.0));
  op.getInputMutable().assign(pad);
  int64_t zero[4] = {0, 0, 0, 0};
  op.setPads(zero);
  op.setCountIncludePad(false);
}

struct DecomposePass : public kiln::top::impl::TopDecomposeBase<DecomposePass> {
  void runOnOperation() override {
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp op) { softmaxes.push_back(op); });
    for (SoftmaxOp op : softmaxes)
      if (failed(decomposeSoftmax(op)))
        return signalPassFailure();
    getOperation().walk([&](AvgPoolOp op) { decomposeCeilAvgPool(op); });
  }
};
} // namespace

std::unique_ptr<Pass> kiln::top::createDecomposePass() {
  return std::make_unique<DecomposePass>();
}
