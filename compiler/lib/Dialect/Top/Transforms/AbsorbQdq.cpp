//===- AbsorbQdq.cpp - QDQ pairs on activations -> kiln.qparams -----------===//
//
// A QDQ model states the quantization of an activation x as
// dequantize_linear(quantize_linear(x)). For an INT8 compile that pair is
// exactly the information calibration would estimate: it becomes
// `kiln.qparams` = [scale, zero_point] on x's producer (or the function's
// argument attribute) and the pair disappears, so lowering quantizes x with
// the model's own parameters. Weights are left alone (their quantize folds
// into an INT8 weight, top-fold-quantize-constants).
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Top/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPABSORBQDQ
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

constexpr StringLiteral kQParams = "kiln.qparams";

/// The quantize a dequantize reads, when the pair is one per-tensor fake
/// quantization of a computed value; else null.
QuantizeLinearOp absorbablePair(DequantizeLinearOp dq) {
  auto q = dq.getInput().getDefiningOp<QuantizeLinearOp>();
  if (!q || q.getScale().size() != 1 || dq.getScale().size() != 1)
    return {};
  if (q.getScale() != dq.getScale() || q.getZeroPoint() != dq.getZeroPoint())
    return {};
  if (q.getInput().getDefiningOp<WeightOp>())
    return {};
  return q;
}

std::string fmt(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}

/// Sets `kiln.qparams` where `x` is defined, unless it already has other
/// parameters: then the first stays and a warning says so.
void setQParams(Value x, DenseF64ArrayAttr params, Location pairLoc) {
  DenseF64ArrayAttr existing;
  auto arg = dyn_cast<BlockArgument>(x);
  func::FuncOp func;
  if (arg) {
    func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!func)
      return;
    existing = func.getArgAttrOfType<DenseF64ArrayAttr>(arg.getArgNumber(),
                                                        kQParams);
  } else {
    existing = x.getDefiningOp()->getAttrOfType<DenseF64ArrayAttr>(kQParams);
  }
  if (existing) {
    if (existing != params)
      emitWarning(pairLoc)
          << "a second QDQ pair on one tensor: keeping its first quantization "
          << "(scale " << fmt(existing[0]) << ", zero point "
          << (int64_t)existing[1] << ") over (scale "
          << fmt(params[0]) << ", zero point "
          << (int64_t)params[1] << ")";
    return;
  }
  if (arg)
    func.setArgAttr(arg.getArgNumber(), kQParams, params);
  else
    x.getDefiningOp()->setAttr(kQParams, params);
}

struct AbsorbQdqPass
    : public kiln::top::impl::TopAbsorbQdqBase<AbsorbQdqPass> {
  void runOnOperation() override {
    // Program order, so the first pair on a tensor is the one kept.
    SmallVector<DequantizeLinearOp> dqs;
    getOperation().walk([&](DequantizeLinearOp dq) { dqs.push_back(dq); });
    for (DequantizeLinearOp dq : dqs) {
      QuantizeLinearOp q = absorbablePair(dq);
      if (!q)
        continue;
      Value x = q.getInput();
      double scale = q.getScale()[0];
      int64_t zp = q.getZeroPoint()[0];
      // uint8 q = int8 q + 128: the same real values with zero point - 128.
      if (q.getOutput().getType().getElementType().isUnsignedInteger())
        zp -= 128;
      setQParams(x,
                 DenseF64ArrayAttr::get(&getContext(), {scale, (double)zp}),
                 dq.getLoc());
      dq.getOutput().replaceAllUsesWith(x);
      dq.erase();
      if (q->use_empty())
        q.erase();
    }
  }
};
} // namespace

std::unique_ptr<Pass> kiln::top::createAbsorbQdqPass() {
  return std::make_unique<AbsorbQdqPass>();
}
