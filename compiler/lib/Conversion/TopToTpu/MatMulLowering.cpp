//===- MatMulLowering.cpp - Gemm and MatMul -------------------------------===//
//
// A matmul is a 1x1 conv, in one of two forms, whichever the cycle model
// says is faster.
//
// Rows on lanes: out[b] = left[b] x right[b] is a conv whose filter is the
// left operand, [B*m, k, 1, 1] with row i of a batch on lane i, and whose
// input is the right operand, [1, B*k, 1, n]; the batches are conv groups,
// and a weight right operand (shared by all batches) folds them into the
// rows. Every operand and the result keep their row-major DDR layout: no
// transpose except right^T when the matmul reads right transposed, each
// lane stores a whole output row (runs of n elements, not one), and the
// result [1, B*m, 1, n] has the layout elementwise ops give a [.., m, n]
// tensor (EltwiseLowering), so a bias add or a Softmax joins the matmul's
// layer group. A right operand too large to hold whole has its columns on H
// ([1, B*k, n, 1]) instead, which layer groups slice.
//
// Columns on lanes (one-row classifiers, left operands too large to hold):
// the filter is right^T. With a weight right operand: input [.., m, k] is
// [M, k, 1, 1] and the filter [n, k, 1, 1] (transposed at compile time).
// With a computed right operand (batched, broadcast): the batches become
// conv groups: the input moves to [1, B*k, m, 1], the filter to
// [B*n, k, 1, 1] and the result [1, B*n, m, 1] back to [B, m, n], all by
// tpu.dma transposes. In INT8 only this form quantizes (per output channel,
// the weight's column); rows on lanes has a computed filter, which runs in
// F16, and is chosen where that is still faster.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/IR/DmaProgram.h"
#include "kiln/Support/Names.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"
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
  tpu::DmaProgram program(rewriter.getContext());
  int64_t shape[3] = {b, r, c}, perm[3] = {0, 2, 1};
  program.transpose(shape, perm);
  auto type = RankedTensorType::get({b, c, r}, rewriter.getF32Type());
  return rewriter.create<tpu::DmaOp>(loc, type, x, program.attr());
}

/// Broadcasts x ([.., r, c]) to batch dims `batch` with a tpu.dma, if needed.
Value expandBatch(PatternRewriter &rewriter, Location loc, Value x,
                  ArrayRef<int64_t> batch) {
  auto s = shapeOf(x);
  SmallVector<int64_t> full(batch.begin(), batch.end());
  full.append({s[s.size() - 2], s.back()});
  if (s == ArrayRef<int64_t>(full))
    return x;
  tpu::DmaProgram program(rewriter.getContext());
  program.broadcast(s, full);
  return rewriter.create<tpu::DmaOp>(loc, RankedTensorType::get(full, rewriter.getF32Type()),
                                     x, program.attr());
}

/// Elements moved one per burst: an LMEM side whose planes hold one element
/// (a [.., c, 1, 1] tensor) or a transposing copy.
uint64_t scatteredCycles(int64_t elems, uint32_t milliBytesPerCycle) {
  return (uint64_t)elems * KILN_GDMA_BURST_BYTES * 1000 / milliBytesPerCycle;
}

/// The two forms' costs as the cycle model counts them (cost.h): the conv,
/// plus what each form adds. Rows on lanes: the left operand, a filter,
/// comes through DDR (its producer's layer group ends there: a store, a load
/// and their latency), and right^T is a transposing copy.
uint64_t rowsOnLanesCycles(int64_t b, int64_t m, int64_t k, int64_t n, uint32_t dtype,
                           bool transposeRight) {
  uint32_t pix, icp;
  kiln_conv_tiling(dtype, &pix, &icp);
  uint64_t conv = b * kiln_ceil_div(m, KILN_NPU_NUM) * kiln_ceil_div(n, pix) *
                  kiln_ceil_div(k, icp);
  uint64_t filterTrip = 2 * KILN_GDMA_CMD_LATENCY +
                        b * m * k * kiln_dtype_bytes(dtype) * 1000 / KILN_GDMA_MBPC_LMEM_TO_DDR;
  return conv + filterTrip +
         (transposeRight ? scatteredCycles(b * k * n, KILN_GDMA_MBPC_DDR_TO_DDR) : 0);
}

/// Columns on lanes: with a weight right operand the rows are batches of
/// [1, k, 1, 1] and [1, n, 1, 1] planes, loaded and stored an element per
/// burst; with a computed one three transposing copies.
uint64_t columnsOnLanesCycles(int64_t b, int64_t m, int64_t k, int64_t n, uint32_t dtype,
                              bool weightRight) {
  uint32_t pix, icp;
  kiln_conv_tiling(dtype, &pix, &icp);
  if (weightRight)
    return b * m * kiln_ceil_div(n, KILN_NPU_NUM) * kiln_ceil_div(k, icp) +
           scatteredCycles(b * m * k, KILN_GDMA_MBPC_DDR_TO_LMEM) +
           scatteredCycles(b * m * n, KILN_GDMA_MBPC_LMEM_TO_DDR);
  return b * kiln_ceil_div(n, KILN_NPU_NUM) * kiln_ceil_div(m, pix) * kiln_ceil_div(k, icp) +
         scatteredCycles(b * (m * k + n * k + m * n), KILN_GDMA_MBPC_DDR_TO_DDR);
}

/// The left operand, as a filter, is loaded whole into every group that
/// reads it: rows on lanes only while its share of a lane stays small.
constexpr int64_t kMaxFilterBytesPerLane = KILN_LMEM_BYTES_PER_LANE / 8;
/// The right operand in W layout is not sliced: held whole up to this.
constexpr int64_t kMaxRowBytesPerLane = KILN_LMEM_BYTES_PER_LANE / 4;

struct MatMulLowering : public tpu::TopLowering<top::MatMulOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::MatMulOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    if (succeeded(lowerRowsOnLanes(op, adaptor, rewriter)))
      return success();
    auto right = adaptor.getRight().getDefiningOp<top::WeightOp>();
    if (right && shapeOf(adaptor.getRight()).size() == 2)
      return lowerWithWeight(op, adaptor, right, rewriter);
    return lowerComputed(op, adaptor, rewriter);
  }

  LogicalResult lowerRowsOnLanes(top::MatMulOp op, OpAdaptor adaptor,
                                 ConversionPatternRewriter &rewriter) const {
    auto a = shapeOf(adaptor.getInput()), r = shapeOf(adaptor.getRight());
    auto outShape = cast<RankedTensorType>(op.getType()).getShape();
    if (a.size() < 2 || r.size() < 2)
      return failure();
    int64_t k = a.back(), n = outShape.back();
    bool sharedRight = r.size() == 2;
    // A right operand shared by every batch folds the batches into the rows.
    SmallVector<int64_t> batch(outShape.drop_back(2));
    int64_t b = 1, rows = outShape[outShape.size() - 2];
    for (int64_t d : batch)
      b *= d;
    if (sharedRight) {
      rows *= b;
      b = 1;
    }
    int64_t rowsPerLane = (rows * b + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
    if (rowsPerLane * k * 4 > kMaxFilterBytesPerLane)
      return failure();
    bool rightWeight = isa_and_nonnull<top::WeightOp>(adaptor.getRight().getDefiningOp());
    // In INT8 a conv whose filter is computed runs in F16 (tpu-apply-precision).
    // DType values are firmware-abi's kiln_dtype.
    uint32_t colsDtype = uint32_t(top::runDtype(op).value_or(top::DType::F32));
    uint32_t rowsDtype = colsDtype == KILN_DTYPE_INT8 ? uint32_t{KILN_DTYPE_F16} : colsDtype;
    if (rowsOnLanesCycles(b, rows, k, n, rowsDtype, op.getRightTranspose() && !rightWeight) >=
        columnsOnLanesCycles(b, rows, k, n, colsDtype, sharedRight && rightWeight))
      return failure();
    Location loc = op.getLoc();
    Value lhs = sharedRight ? adaptor.getInput()
                            : expandBatch(rewriter, loc, adaptor.getInput(), batch);
    Value filter = tpu::reshapeTo(rewriter, loc, lhs, {b * rows, k, 1, 1});
    bool wide = (b * k + KILN_NPU_NUM - 1) / KILN_NPU_NUM * n * 4 > kMaxRowBytesPerLane;
    auto columns = [&](int64_t c) -> SmallVector<int64_t> {
      if (wide)
        return {1, c, n, 1};
      return {1, c, 1, n};
    };
    // The input is right as [b, k, n]: a weight is transposed at compile
    // time, a computed right^T by a tpu.dma.
    Value in;
    if (auto weight = adaptor.getRight().getDefiningOp<top::WeightOp>();
        weight && sharedRight && op.getRightTranspose()) {
      std::vector<float> w = top::readWeight(weight), t(n * k);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < k; ++i)
          t[i * n + j] = w[j * k + i];
      in = top::createWeight(rewriter, weight.getLoc(), columns(b * k), t,
                             opName(op) + "_right");
    } else {
      Value rhs = sharedRight ? adaptor.getRight()
                              : expandBatch(rewriter, loc, adaptor.getRight(), batch);
      if (op.getRightTranspose())
        rhs = transposeLast2(rewriter, loc, rhs, b, n, k);
      in = tpu::reshapeTo(rewriter, loc, rhs, columns(b * k));
    }
    bool hasBias = !isa<NoneType>(adaptor.getBias().getType());
    Value none = hasBias ? rewriter.create<top::NoneOp>(loc, rewriter.getNoneType()).getResult()
                         : adaptor.getBias();
    Value out = conv1x1(rewriter, loc, in, filter, none, columns(b * rows), b,
                        op.getDoRelu() && !hasBias);
    if (hasBias) {
      Value bias = tpu::reshapeTo(rewriter, loc, adaptor.getBias(), columns(1));
      out = rewriter.create<tpu::EltwiseOp>(loc, out.getType(), out, bias,
                                            tpu::EltwiseKind::Add, op.getDoRelu(),
                                            tpu::RequantAttr());
    }
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, loc, out, outShape));
    return success();
  }

  LogicalResult lowerWithWeight(top::MatMulOp op, OpAdaptor adaptor, top::WeightOp right,
                                ConversionPatternRewriter &rewriter) const {
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
    Value in = tpu::reshapeTo(rewriter, loc, adaptor.getInput(), {m, k, 1, 1});
    Value conv = conv1x1(rewriter, loc, in, filterW, adaptor.getBias(), {m, n, 1, 1}, 1,
                         op.getDoRelu());
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, loc, conv, outType.getShape()));
    return success();
  }

  LogicalResult lowerComputed(top::MatMulOp op, OpAdaptor adaptor,
                              ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    auto outShape = cast<RankedTensorType>(op.getType()).getShape();
    auto a = shapeOf(adaptor.getInput());
    if (a.size() < 2)
      return rewriter.notifyMatchFailure(op, "1-D matmul input");
    SmallVector<int64_t> batch(outShape.drop_back(2));
    int64_t b = 1;
    for (int64_t d : batch)
      b *= d;
    int64_t m = outShape[outShape.size() - 2], n = outShape.back();
    int64_t k = a.back();
    Value lhs = expandBatch(rewriter, loc, adaptor.getInput(), batch);
    // The filter is right^T per batch: [b, n, k].
    Value filter;
    if (op.getRightTranspose()) {
      filter = expandBatch(rewriter, loc, adaptor.getRight(), batch);
    } else {
      Value rhs = expandBatch(rewriter, loc, adaptor.getRight(), batch);
      filter = transposeLast2(rewriter, loc, rhs, b, k, n);
    }
    filter = tpu::reshapeTo(rewriter, loc, filter, {b * n, k, 1, 1});
    Value in = transposeLast2(rewriter, loc, lhs, b, m, k);
    in = tpu::reshapeTo(rewriter, loc, in, {1, b * k, m, 1});
    // The bias adds after the final transpose, and ReLU after the bias.
    bool hasBias = !isa<NoneType>(adaptor.getBias().getType());
    Value none = hasBias ? rewriter.create<top::NoneOp>(loc, rewriter.getNoneType()).getResult()
                         : adaptor.getBias();
    Value conv = conv1x1(rewriter, loc, in, filter, none, {1, b * n, m, 1}, b,
                         op.getDoRelu() && !hasBias);
    Value out = transposeLast2(rewriter, loc, conv, b, n, m);
    out = tpu::reshapeTo(rewriter, loc, out, outShape);
    if (hasBias) {
      Value bias = adaptor.getBias();
      Value b4 = tpu::reshapeTo(rewriter, loc, bias, {1, 1, 1, n});
      SmallVector<int64_t> out4 = {1, 1, b * m, n};
      Value flat = tpu::reshapeTo(rewriter, loc, out, out4);
      Value sum = rewriter.create<tpu::EltwiseOp>(
          loc, RankedTensorType::get(out4, rewriter.getF32Type()), flat, b4,
          tpu::EltwiseKind::Add, op.getDoRelu(), tpu::RequantAttr());
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
