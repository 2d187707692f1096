//===- ReduceLowering.cpp - Reductions as pooling -------------------------===//
//
// The reduced axes are moved last (a tpu.dma transpose when they are not),
// the tensor is viewed as [N, C, KH, KW] with N * C the kept elements and
// KH * KW the reduced ones (KH the first reduced axis when there are several,
// as elementwise lowering lays them out), and one pool over the whole
// KH x KW window reduces it. Sum of squares and L2 square first; L2 takes the root after.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/IR/DmaProgram.h"
#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {

constexpr int64_t kMaxDim = 65535; // TIU operand dimensions are 16-bit

/// Largest divisor of n not above limit.
int64_t divisorAtMost(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

struct ReduceLowering : public tpu::TopLowering<top::ReduceOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::ReduceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto in = inType.getShape();
    auto axes = op.getAxes();
    SmallVector<int64_t> perm, moved;
    int64_t kept = 1, reduced = 1;
    for (int64_t i = 0; i < (int64_t)in.size(); ++i)
      if (!llvm::is_contained(axes, i)) {
        perm.push_back(i);
        kept *= in[i];
      }
    for (int64_t a : axes) {
      perm.push_back(a);
      reduced *= in[a];
    }
    Value x = adaptor.getInput();
    auto mode = op.getMode();
    auto active = [&](Value v, top::ActiveMode kind) -> Value {
      return rewriter.create<tpu::ActiveOp>(loc, v.getType(), v, Value(), kind, APFloat(0.0),
                                            APFloat(0.0));
    };
    // Square while the tensor still has a TIU-friendly shape.
    bool squares = mode == top::ReduceMode::L2 || mode == top::ReduceMode::SumSquare;
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, in.size()))) {
      SmallVector<int64_t> shape;
      for (int64_t p : perm)
        shape.push_back(in[p]);
      tpu::DmaProgram program(rewriter.getContext());
      program.transpose(in, perm);
      x = rewriter.create<tpu::DmaOp>(
          loc, RankedTensorType::get(shape, inType.getElementType()), x,
          program.attr());
    }
    int64_t kw = divisorAtMost(reduced, kMaxDim), kh = reduced / kw;
    // Trailing axes keep their first as the window's rows and the rest as
    // its columns: the [.., a, b*c] layout elementwise lowering gives the
    // input, so the pool reads its producer's result in the same group.
    bool trailing = axes.size() >= 2 && perm == llvm::to_vector(llvm::seq<int64_t>(0, in.size()));
    if (trailing && in[axes[0]] <= kMaxDim && reduced / in[axes[0]] <= kMaxDim) {
      kh = in[axes[0]];
      kw = reduced / kh;
    }
    int64_t c = divisorAtMost(kept, 4096), n = kept / c;
    if (kh > kMaxDim || n > kMaxDim)
      return rewriter.notifyMatchFailure(op, "reduction too large for one pool");
    x = tpu::reshapeTo(rewriter, loc, x, {n, c, kh, kw});
    if (squares)
      x = active(x, top::ActiveMode::Square);
    tpu::PoolKind kind = tpu::PoolKind::Sum;
    if (mode == top::ReduceMode::Mean)
      kind = tpu::PoolKind::Avg;
    else if (mode == top::ReduceMode::Max)
      kind = tpu::PoolKind::Max;
    else if (mode == top::ReduceMode::Min)
      kind = tpu::PoolKind::Min;
    int64_t kernel[2] = {kh, kw}, strides[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
    auto pooledType = RankedTensorType::get({n, c, 1, 1}, inType.getElementType());
    Value pooled = rewriter.create<tpu::Pool2DOp>(loc, pooledType, x, kind, kernel,
                                                  strides, pads, false, false,
                                                  tpu::RequantAttr());
    if (mode == top::ReduceMode::L2)
      pooled = active(pooled, top::ActiveMode::Sqrt);
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, loc, pooled,
                                          cast<RankedTensorType>(op.getType()).getShape()));
    return success();
  }
};

struct GlobalMaxPoolLowering : public tpu::TopLowering<top::GlobalMaxPoolOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::GlobalMaxPoolOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(adaptor.getInput().getType()).getShape();
    int64_t kernel[2] = {in[2], in[3]}, strides[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
    rewriter.replaceOpWithNewOp<tpu::Pool2DOp>(op, op.getType(), adaptor.getInput(),
                                               tpu::PoolKind::Max, kernel, strides,
                                               pads, false, false, tpu::RequantAttr());
    return success();
  }
};
} // namespace

void tpu::populateReduceLowering(RewritePatternSet &patterns) {
  patterns.add<ReduceLowering, GlobalMaxPoolLowering>(patterns.getContext());
}
