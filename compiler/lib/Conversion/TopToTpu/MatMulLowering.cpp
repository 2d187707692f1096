//===- MatMulLowering.cpp - Gemm and MatMul -------------------------------===//
//
// A matmul is a 1x1 conv. With a weight right operand: input [.., m, k] is
// [M, k, 1, 1] and the filter [n, k, 1, 1] (transposed at compile time).
// With a computed right operand (batched, broadcast): per batch b the filter
// is right_b^T, so the batches become conv groups: the input moves to
// [1, B*k, m, 1], the filter to [B*n, k, 1, 1] and the result [1, B*n, m, 1]
// back to [B, m, n], all by tpu.dma transposes.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/IR/DmaProgram.h"
#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

Value conv1x1(PatternRewriter &rewriter, Location loc, Value in, Value filter,
              Value bias, ArrayRef<int64_t> outShape, int64_t group, bool relu) {
  int64_t one[2] = {1, 1}, zero[4] = {0, 0, 0, 0};
  auto type = RankedTensorType::get(outShape, rewriter.getF32Type());
  return rewriter.create<tpu::Conv2DOp>(loc, type, in, filter, bias, one, one, zero,
                                        one, group, relu);
}

/// x viewed as [b, r, c] -> [b, c, r].
Value transposeLast2(PatternRewriter &rewriter, Location loc, Value x, int64_t b,
                     int64_t r, int64_t c) {
  tpu::DmaProgram program;
  int64_t shape[3] = {b, r, c}, perm[3] = {0, 2, 1};
  program.transpose(shape, perm);
  auto type = RankedTensorType::get({b, c, r}, rewriter.getF32Type());
  return rewriter.create<tpu::DmaOp>(loc, type, x, program.records());
}

/// Broadcasts x ([.., r, c]) to batch dims `batch` with a tpu.dma, if needed.
Value expandBatch(PatternRewriter &rewriter, Location loc, Value x,
                  ArrayRef<int64_t> batch) {
  auto s = shapeOf(x);
  SmallVector<int64_t> full(batch.begin(), batch.end());
  full.append({s[s.size() - 2], s.back()});
  if (s == ArrayRef<int64_t>(full))
    return x;
  tpu::DmaProgram program;
  program.broadcast(s, full);
  return rewriter.create<tpu::DmaOp>(loc, RankedTensorType::get(full, rewriter.getF32Type()),
                                     x, program.records());
}

struct MatMulLowering : public OpRewritePattern<top::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(top::MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto right = op.getRight().getDefiningOp<top::WeightOp>();
    if (right && shapeOf(op.getRight()).size() == 2)
      return lowerWithWeight(op, right, rewriter);
    return lowerComputed(op, rewriter);
  }

  LogicalResult lowerWithWeight(top::MatMulOp op, top::WeightOp right,
                                PatternRewriter &rewriter) const {
    auto rShape = shapeOf(right);
    int64_t k = op.getRightTranspose() ? rShape[1] : rShape[0];
    int64_t n = op.getRightTranspose() ? rShape[0] : rShape[1];
    std::vector<float> w = top::readWeight(right);
    std::vector<float> filter(n * k);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j)
        filter[i * k + j] = op.getRightTranspose() ? w[i * k + j] : w[j * n + i];
    Location loc = op.getLoc();
    std::string name = locName(loc, "matmul");
    Value filterW = top::createWeight(rewriter, right.getLoc(), {n, k, 1, 1}, filter,
                                      name + "_filter");
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t m = 1;
    for (int64_t d : outType.getShape().drop_back())
      m *= d;
    Value in = tpu::reshapeTo(rewriter, loc, op.getInput(), {m, k, 1, 1});
    Value conv = conv1x1(rewriter, loc, in, filterW, op.getBias(), {m, n, 1, 1}, 1,
                         op.getDoRelu());
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, loc, conv, outType.getShape()));
    return success();
  }

  LogicalResult lowerComputed(top::MatMulOp op, PatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    auto outShape = cast<RankedTensorType>(op.getType()).getShape();
    auto a = shapeOf(op.getInput());
    if (a.size() < 2)
      return rewriter.notifyMatchFailure(op, "1-D matmul input");
    SmallVector<int64_t> batch(outShape.drop_back(2));
    int64_t b = 1;
    for (int64_t d : batch)
      b *= d;
    int64_t m = outShape[outShape.size() - 2], n = outShape.back();
    int64_t k = a.back();
    Value lhs = expandBatch(rewriter, loc, op.getInput(), batch);
    // The filter is right^T per batch: [b, n, k].
    Value filter;
    if (op.getRightTranspose()) {
      filter = expandBatch(rewriter, loc, op.getRight(), batch);
    } else {
      Value rhs = expandBatch(rewriter, loc, op.getRight(), batch);
      filter = transposeLast2(rewriter, loc, rhs, b, k, n);
    }
    filter = tpu::reshapeTo(rewriter, loc, filter, {b * n, k, 1, 1});
    Value in = transposeLast2(rewriter, loc, lhs, b, m, k);
    in = tpu::reshapeTo(rewriter, loc, in, {1, b * k, m, 1});
    // The bias adds after the final transpose, and ReLU after the bias.
    bool hasBias = !isa<NoneType>(op.getBias().getType());
    Value none = hasBias ? rewriter.create<top::NoneOp>(loc, rewriter.getNoneType()).getResult()
                         : op.getBias();
    Value conv = conv1x1(rewriter, loc, in, filter, none, {1, b * n, m, 1}, b,
                         op.getDoRelu() && !hasBias);
    Value out = transposeLast2(rewriter, loc, conv, b, n, m);
    out = tpu::reshapeTo(rewriter, loc, out, outShape);
    if (hasBias) {
      Value bias = op.getBias();
      Value b4 = tpu::reshapeTo(rewriter, loc, bias, {1, 1, 1, n});
      SmallVector<int64_t> out4 = {1, 1, b * m, n};
      Value flat = tpu::reshapeTo(rewriter, loc, out, out4);
      Value sum = rewriter.create<tpu::EltwiseOp>(
          loc, RankedTensorType::get(out4, rewriter.getF32Type()), flat, b4,
          tpu::EltwiseKind::Add, op.getDoRelu(), DenseI64ArrayAttr());
      out = tpu::reshapeTo(rewriter, loc, sum, outShape);
    }
    rewriter.replaceOp(op, out);
    return success();
  }
};
} // namespace

void tpu::populateMatMulLowering(RewritePatternSet &patterns) {
  patterns.add<MatMulLowering>(patterns.getContext());
}
