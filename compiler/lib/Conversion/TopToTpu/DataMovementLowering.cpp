//===- DataMovementLowering.cpp - Transpose, slice, gather, pad... --------===//
//
// Ops that only move data become tpu.dma: strided DDR-to-DDR GDMA copies
// computed here at compile time.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/IR/DmaProgram.h"
#include "Patterns.h"

using namespace mlir;
using namespace kiln;
using tpu::DmaProgram;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

void replaceWithDma(PatternRewriter &rewriter, Operation *op, ValueRange inputs,
                    const DmaProgram &program) {
  rewriter.replaceOpWithNewOp<tpu::DmaOp>(op, op->getResult(0).getType(), inputs,
                                          program.attr());
}

struct TransposeLowering : public tpu::TopLowering<top::TransposeOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::TransposeOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    DmaProgram program(rewriter.getContext());
    program.transpose(shapeOf(adaptor.getInput()), op.getPerm());
    replaceWithDma(rewriter, op, adaptor.getInput(), program);
    return success();
  }
};

struct SliceLowering : public tpu::TopLowering<top::SliceOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::SliceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto in = shapeOf(adaptor.getInput());
    auto out = shapeOf(op.getOutput());
    auto inStrides = tpu::contiguousStrides(in);
    auto outStrides = tpu::contiguousStrides(out);
    auto starts = op.getStarts(), steps = op.getSteps();
    int64_t srcOff = 0;
    SmallVector<int64_t> src;
    for (size_t i = 0; i < in.size(); ++i) {
      srcOff += starts[i] * inStrides[i];
      src.push_back(steps[i] * inStrides[i]);
    }
    DmaProgram program(rewriter.getContext());
    // GDMA strides are unsigned: a reversed axis is copied index by index.
    std::function<void(size_t, int64_t, int64_t, SmallVector<int64_t>)> walk =
        [&](size_t axis, int64_t s, int64_t d, SmallVector<int64_t> shape) {
          if (axis == in.size()) {
            program.copy(0, s, d, shape, src, outStrides);
            return;
          }
          if (src[axis] >= 0) {
            shape.push_back(out[axis]);
            walk(axis + 1, s, d, shape);
            return;
          }
          // Unrolled: this axis has extent 1 in each copy.
          SmallVector<int64_t> savedSrc(src);
          for (int64_t j = 0; j < out[axis]; ++j) {
            src[axis] = 0;
            SmallVector<int64_t> one(shape);
            one.push_back(1);
            walk(axis + 1, s + j * savedSrc[axis], d + j * outStrides[axis], one);
            src = savedSrc;
          }
        };
    walk(0, srcOff, 0, {});
    replaceWithDma(rewriter, op, adaptor.getInput(), program);
    return success();
  }
};

struct GatherLowering : public tpu::TopLowering<top::GatherOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::GatherOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto in = shapeOf(adaptor.getInput());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    int64_t pre = 1, suf = 1;
    for (int64_t i = 0; i < axis; ++i)
      pre *= in[i];
    for (size_t i = axis + 1; i < in.size(); ++i)
      suf *= in[i];
    auto indices = op.getIndices();
    int64_t count = indices.size();
    DmaProgram program(rewriter.getContext());
    // Runs of consecutive indices move as one block.
    for (int64_t p = 0; p < count;) {
      int64_t run = 1;
      while (p + run < count && indices[p + run] == indices[p] + run)
        ++run;
      int64_t shape[3] = {pre, run, suf};
      int64_t src[3] = {in[axis] * suf, suf, 1};
      int64_t dst[3] = {count * suf, suf, 1};
      program.copy(0, indices[p] * suf, p * suf, shape, src, dst);
      p += run;
    }
    replaceWithDma(rewriter, op, adaptor.getInput(), program);
    return success();
  }
};

struct ExpandLowering : public tpu::TopLowering<top::ExpandOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::ExpandOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto in = shapeOf(adaptor.getInput());
    auto out = shapeOf(op.getOutput());
    auto outStrides = tpu::contiguousStrides(out);
    DmaProgram program(rewriter.getContext());
    if (!op.getRepeats().empty()) {
      // Tile: output dim i is (repeat r, element j) -> r * in[i] + j.
      auto inStrides = tpu::contiguousStrides(in);
      SmallVector<int64_t> shape, src, dst;
      for (size_t i = 0; i < in.size(); ++i) {
        shape.append({op.getRepeats()[i], in[i]});
        src.append({0, inStrides[i]});
        dst.append({in[i] * outStrides[i], outStrides[i]});
      }
      program.copy(0, 0, 0, shape, src, dst);
    } else {
      program.broadcast(in, out);
    }
    replaceWithDma(rewriter, op, adaptor.getInput(), program);
    return success();
  }
};

struct PadLowering : public tpu::TopLowering<top::PadOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::PadOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto in = shapeOf(adaptor.getInput());
    auto out = shapeOf(op.getOutput());
    size_t rank = in.size();
    auto pads = op.getPads();
    auto outStrides = tpu::contiguousStrides(out);
    auto inStrides = tpu::contiguousStrides(in);
    DmaProgram program(rewriter.getContext());
    if (op.getMode() == top::PadMode::Constant)
      program.fill(0, out, outStrides, (float)op.getValue().convertToDouble());
    int64_t interior = 0;
    for (size_t i = 0; i < rank; ++i)
      interior += pads[i] * outStrides[i];
    program.copy(0, 0, interior, in, inStrides, outStrides);
    if (op.getMode() != top::PadMode::Constant) {
      // Axis by axis, borders copy slabs of the output itself: axes already
      // done span their full padded extent, later ones only the interior.
      for (size_t a = 0; a < rank; ++a) {
        int64_t begin = pads[a], size = in[a];
        SmallVector<int64_t> slab;
        int64_t base = 0;
        for (size_t i = 0; i < rank; ++i) {
          if (i == a) {
            slab.push_back(1);
          } else if (i < a) {
            slab.push_back(out[i]);
          } else {
            slab.push_back(in[i]);
            base += pads[i] * outStrides[i];
          }
        }
        bool reflect = op.getMode() == top::PadMode::Reflect;
        auto copyRow = [&](int64_t dstIdx, int64_t srcIdx) {
          program.copy(tpu::DmaCopyAttr::kSelf, base + srcIdx * outStrides[a],
                       base + dstIdx * outStrides[a], slab, outStrides, outStrides);
        };
        for (int64_t b = 0; b < begin; ++b)
          copyRow(b, reflect ? 2 * begin - b : begin);
        for (int64_t e = 0; e < pads[rank + a]; ++e)
          copyRow(begin + size + e, reflect ? begin + size - 2 - e : begin + size - 1);
      }
    }
    replaceWithDma(rewriter, op, adaptor.getInput(), program);
    return success();
  }
};
} // namespace

void tpu::populateDataMovementLowering(RewritePatternSet &patterns) {
  patterns.add<TransposeLowering, SliceLowering, GatherLowering, ExpandLowering,
               PadLowering>(patterns.getContext());
}
