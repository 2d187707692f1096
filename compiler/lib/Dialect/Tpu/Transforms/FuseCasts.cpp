//===- FuseCasts.cpp - Remove redundant tpu.cast ops ----------------------===//
//
// Casts meet where dtypes change: at net boundaries, around ops kept wider,
// and where a QDQ model dequantizes only to quantize again. A pair whose first
// cast loses nothing (f16/bf16 -> f32, or int8 -> float -> int8, which
// requantizes) becomes one cast or none. A cast of a reshape of a TIU op's
// result casts before the reshape: the output cast of a net whose last op
// ran at another rank joins that op's layer group instead of reloading it.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"
#include "kiln/Support/Precision.h"

#include "mlir/Dialect/Quant/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"


namespace kiln::tpu {
#define GEN_PASS_DEF_TPUFUSECASTS
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

namespace {
Type elementOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

/// Widening f16/bf16 -> f32: the f32 value is the narrow value exactly.
bool isExactWidening(Type from, Type to) { return (from.isF16() || from.isBF16()) && to.isF32(); }

/// The requantization between two INT8 scales.
tpu::RequantAttr requant(OpBuilder &b, quant::UniformQuantizedType from,
                         quant::UniformQuantizedType to) {
  Multiplier m = requantMultiplier(from.getScale() / to.getScale());
  return tpu::RequantAttr::get(b.getContext(), m.m, m.shift);
}

struct FuseCastsPass : public tpu::impl::TpuFuseCastsBase<FuseCastsPass> {
  void runOnOperation() override {
    SmallVector<tpu::CastOp> casts;
    getOperation().walk([&](tpu::CastOp c) { casts.push_back(c); });
    OpBuilder b(&getContext());
    for (tpu::CastOp c : casts) {
      Value in = c.getInput();
      Type target = elementOf(c.getOutput());
      if (elementOf(in) == target) {
        c.getOutput().replaceAllUsesWith(in);
        continue;
      }
      auto inner = in.getDefiningOp<tpu::CastOp>();
      if (!inner)
        continue;
      Value source = inner.getInput();
      Type from = elementOf(source), mid = elementOf(in);
      auto fromQ = dyn_cast<quant::UniformQuantizedType>(from);
      auto toQ = dyn_cast<quant::UniformQuantizedType>(target);
      if (isExactWidening(from, mid)) {
        if (from == target) {
          c.getOutput().replaceAllUsesWith(source);
        } else {
          b.setInsertionPoint(c);
          auto fused = b.create<tpu::CastOp>(c.getLoc(), c.getOutput().getType(), source,
                                             tpu::RequantAttr());
          c.getOutput().replaceAllUsesWith(fused.getOutput());
        }
      } else if (fromQ && toQ && isa<FloatType>(mid)) {
        if (fromQ == toQ) {
          c.getOutput().replaceAllUsesWith(source);
        } else {
          b.setInsertionPoint(c);
          auto fused = b.create<tpu::CastOp>(c.getLoc(), c.getOutput().getType(), source,
                                             requant(b, fromQ, toQ));
          c.getOutput().replaceAllUsesWith(fused.getOutput());
        }
      }
    }
    // cast(reshape(x)) -> reshape(cast(x)) where x comes from the TIU.
    SmallVector<tpu::CastOp> afterReshapes;
    getOperation().walk([&](tpu::CastOp c) { afterReshapes.push_back(c); });
    for (tpu::CastOp c : afterReshapes) {
      auto reshape = c.getInput().getDefiningOp<tpu::ReshapeOp>();
      Operation *def = reshape ? reshape.getInput().getDefiningOp() : nullptr;
      if (!def || !def->hasTrait<tpu::RunsOnTiu>() || !reshape->hasOneUse())
        continue;
      auto inType = cast<RankedTensorType>(reshape.getInput().getType());
      b.setInsertionPoint(c);
      auto early = b.create<tpu::CastOp>(
          c.getLoc(), inType.clone(elementOf(c.getOutput())), reshape.getInput(), c.getQuantAttr());
      auto late = b.create<tpu::ReshapeOp>(reshape.getLoc(), c.getOutput().getType(), early);
      c.getOutput().replaceAllUsesWith(late.getOutput());
      c.erase();
      reshape.erase();
    }
    // Equal casts of one value: the first serves all.
    DenseMap<std::pair<Value, Type>, tpu::CastOp> first;
    getOperation().walk([&](tpu::CastOp c) {
      auto key = std::make_pair(c.getInput(), c.getOutput().getType());
      auto [it, inserted] = first.try_emplace(key, c);
      if (!inserted && c.getQuantAttr() == it->second.getQuantAttr())
        c.getOutput().replaceAllUsesWith(it->second.getOutput());
    });
    // Casts nothing reads any more (walked backwards so chains go too).
    SmallVector<tpu::CastOp> all;
    getOperation().walk([&](tpu::CastOp c) { all.push_back(c); });
    for (tpu::CastOp c : llvm::reverse(all))
      if (c->use_empty())
        c.erase();
  }
};
} // namespace
