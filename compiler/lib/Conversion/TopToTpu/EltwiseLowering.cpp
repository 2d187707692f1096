//===- EltwiseLowering.cpp - Unary and binary elementwise ops -------------===//

#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The TIU works on 4-D tensors. Shapes are left-padded with 1s (numpy's
/// alignment); above 4-D, neighbouring dimensions that every operand either
/// has whole or broadcasts are merged, which keeps broadcasting intact. The
/// merging starts from the innermost dimensions: rows grow long (long DDR
/// runs, full EU rows) and the outer dimensions stay on the lanes. StyleGAN2's
/// modulation W [1, O, I, 3, 3] * s [1, 1, I, 1, 1] becomes [1, O, I, 9] *
/// [1, 1, I, 1]: O on the lanes, each channel one run of I * 9 elements, as
/// the conv reads its filter.
///
/// Below 4-D the rows go on the lanes: [.., r, c] is [1, R, 1, c] with R the
/// leading dimensions merged (when every operand has them whole or
/// broadcasts them alike), as reductions over the last axis and row-major
/// matmuls lay them out, so that a sequence [1, T, D] uses T lanes rather
/// than one and its ops share their neighbours' layout.
std::optional<SmallVector<SmallVector<int64_t>>>
to4D(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (auto s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<SmallVector<int64_t>> padded;
  for (auto s : shapes) {
    SmallVector<int64_t> p(rank - s.size(), 1);
    p.append(s.begin(), s.end());
    padded.push_back(p);
  }
  SmallVector<int64_t> out(rank, 1);
  for (auto &p : padded)
    for (size_t i = 0; i < rank; ++i)
      out[i] = std::max(out[i], p[i]);
  auto sameKind = [&](size_t i, size_t j) {
    for (auto &p : padded) {
      bool wholeI = p[i] == out[i], wholeJ = p[j] == out[j];
      bool oneI = p[i] == 1, oneJ = p[j] == 1;
      if (!((wholeI && wholeJ) || (oneI && oneJ)))
        return false;
    }
    return true;
  };
  for (size_t i = padded[0].size() - 1; padded[0].size() > 4 && i > 0; --i) {
    if (!sameKind(i - 1, i))
      continue;
    for (auto &p : padded) {
      p[i - 1] *= p[i];
      p.erase(p.begin() + i);
    }
    out[i - 1] *= out[i];
    out.erase(out.begin() + i);
  }
  if (padded[0].size() > 4)
    return std::nullopt;
  // A 4-D op that broadcasts a per-row value along W (Softmax's and
  // LayerNorm's statistics over the last axis of [B, heads, T, T]) runs on
  // rows as well: [1, N*C*H, 1, W], the layout its reductions and row-major
  // matmuls give it, so they share a layer group.
  // Every operand has the rows whole or is one value per W position.
  auto rows = [](ArrayRef<int64_t> p) { return p[0] * p[1] * p[2]; };
  if (rank == 4 && rows(out) > out[1] &&
      llvm::all_of(padded, [&](ArrayRef<int64_t> p) {
        return (p[0] == out[0] && p[1] == out[1] && p[2] == out[2]) || rows(p) == 1;
      }) &&
      llvm::any_of(padded, [&](ArrayRef<int64_t> p) {
        return p[3] == 1 && out[3] > 1 && rows(p) == rows(out);
      })) {
    for (auto &p : padded)
      p = {1, p[0] * p[1] * p[2], 1, p[3]};
    return padded;
  }
  if (rank >= 2 && rank < 4) {
    if (rank == 3 && sameKind(0, 1))
      for (auto &p : padded) {
        p[1] *= p[0];
        p.erase(p.begin());
      }
    for (auto &p : padded)
      p.insert(p.end() - 1, 1); // [.., r, 1, c]
  }
  for (auto &p : padded)
    p.insert(p.begin(), 4 - p.size(), 1);
  return padded;
}

template <typename TopOp, tpu::EltwiseKind Kind>
struct BinaryLowering : public tpu::TopLowering<TopOp> {
  using tpu::TopLowering<TopOp>::TopLowering;
  using OpAdaptor = typename tpu::TopLowering<TopOp>::OpAdaptor;
  LogicalResult lower(TopOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto outType = cast<RankedTensorType>(op.getType());
    auto shapes = to4D({shapeOf(adaptor.getLhs()), shapeOf(adaptor.getRhs()), outType.getShape()});
    if (!shapes)
      return rewriter.notifyMatchFailure(op, "broadcast pattern needs more than 4-D");
    Location loc = op.getLoc();
    Value lhs = tpu::reshapeTo(rewriter, loc, adaptor.getLhs(), (*shapes)[0]);
    // x * x reads one value: one load in its layer group, not two.
    Value rhs = adaptor.getRhs() == adaptor.getLhs()
                    ? lhs
                    : tpu::reshapeTo(rewriter, loc, adaptor.getRhs(), (*shapes)[1]);
    auto type4 = RankedTensorType::get((*shapes)[2], outType.getElementType());
    Value result = rewriter.create<tpu::EltwiseOp>(loc, type4, lhs, rhs, Kind,
                                                   op.getDoRelu(), tpu::RequantAttr());
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, loc, result, outType.getShape()));
    return success();
  }
};

/// Unary ops take the layout binary ops give the same shape, so a chain of
/// both shares one layer group; a 4-D input a TIU op computed in rows
/// ([1, N*C*H, 1, W], a Softmax's) stays in rows.
SmallVector<int64_t> unary4D(Value input, ArrayRef<int64_t> shape) {
  if (auto reshape = input.getDefiningOp<tpu::ReshapeOp>()) {
    ArrayRef<int64_t> from = shapeOf(reshape.getInput());
    Operation *def = reshape.getInput().getDefiningOp();
    if (shape.size() == 4 && def && def->hasTrait<tpu::RunsOnTiu>() &&
        from == ArrayRef<int64_t>{1, shape[0] * shape[1] * shape[2], 1, shape[3]})
      return SmallVector<int64_t>(from);
  }
  return (*to4D({shape}))[0];
}

struct ReluLowering : public tpu::TopLowering<top::ReluOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::ReluOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    Value in = tpu::reshapeTo(rewriter, loc, adaptor.getInput(),
                              unary4D(adaptor.getInput(), type.getShape()));
    Value result = rewriter.create<tpu::ReluOp>(loc, in.getType(), in);
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, loc, result, type.getShape()));
    return success();
  }
};

struct ActiveLowering : public tpu::TopLowering<top::ActiveOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::ActiveOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    Value in = tpu::reshapeTo(rewriter, loc, adaptor.getInput(),
                              unary4D(adaptor.getInput(), type.getShape()));
    Value result = rewriter.create<tpu::ActiveOp>(loc, in.getType(), in, Value(),
                                                  op.getModeAttr(), op.getAlphaAttr(),
                                                  op.getBetaAttr());
    rewriter.replaceOp(op, tpu::reshapeTo(rewriter, loc, result, type.getShape()));
    return success();
  }
};
} // namespace

void tpu::populateEltwiseLowering(RewritePatternSet &patterns) {
  patterns.add<BinaryLowering<top::AddOp, tpu::EltwiseKind::Add>,
               BinaryLowering<top::MulOp, tpu::EltwiseKind::Mul>,
               BinaryLowering<top::SubOp, tpu::EltwiseKind::Sub>,
               BinaryLowering<top::DivOp, tpu::EltwiseKind::Div>,
               BinaryLowering<top::PowOp, tpu::EltwiseKind::Pow>,
               BinaryLowering<top::MaxOp, tpu::EltwiseKind::Max>,
               BinaryLowering<top::MinOp, tpu::EltwiseKind::Min>,
               BinaryLowering<top::PReluOp, tpu::EltwiseKind::PRelu>, ReluLowering,
               ActiveLowering>(patterns.getContext());
}
