//===- PoolBeforePointwiseConv.cpp - Average the input, not the output ----===//
//
// A 1 x 1 conv is linear per pixel, so the spatial mean of its output is the
// conv of the spatial mean of its input: GAP(W x + b) = W GAP(x) + b. PP-OCR's
// RSE necks (and SE blocks after a pointwise projection) average a projection
// that widens a narrow map (12 -> 96 channels at 160 x 160): averaging first
// reads the narrow input and runs the conv on one pixel. More than saving the
// pool's work, it frees the scale from waiting for the whole wide map: a
// layer group otherwise computes the projection over every row in each slice
// before the first slice can be scaled. When the projection of the mean is
// read only by another 1 x 1 conv (the squeeze), the two compose into one:
// two linear maps of a single pixel, with no activation between them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Support/Names.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPPOOLBEFOREPOINTWISECONV
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

/// A conv that maps each pixel on its own: 1 x 1, unit strides, no pads, and
/// (unless `reluAllowed`) no fused ReLU, which is not linear.
bool isPointwise(ConvOp conv, bool reluAllowed = false) {
  auto all = [](ArrayRef<int64_t> a, int64_t v) {
    return llvm::all_of(a, [&](int64_t x) { return x == v; });
  };
  return all(conv.getKernelShape(), 1) && all(conv.getStrides(), 1) && all(conv.getPads(), 0) &&
         (reluAllowed || !conv.getDoRelu()) &&
         cast<RankedTensorType>(conv.getInput().getType()).getRank() == 4;
}

/// A 1 x 1 conv's f32 weights as an [oc][ic] matrix (group 1) and its bias.
bool readMatrix(ConvOp conv, std::vector<float> &filter, std::vector<float> &bias) {
  auto type = cast<RankedTensorType>(conv.getFilter().getType());
  return conv.getGroup() == 1 && type.getElementType().isF32() &&
         readFilterAndBias(conv, filter, bias);
}

/// reader(first(x)) -> one conv: W = W2 W1, b = W2 b1 + b2. Both are 1 x 1
/// convs of one pixel; the reader's ReLU stays on the composed conv.
void composeWithReader(ConvOp first) {
  if (!first->hasOneUse())
    return;
  auto reader = dyn_cast<ConvOp>(*first->user_begin());
  if (!reader || reader.getInput() != first.getOutput() || !isPointwise(reader, true))
    return;
  std::vector<float> w1, b1, w2, b2;
  if (!readMatrix(first, w1, b1) || !readMatrix(reader, w2, b2))
    return;
  size_t mid = b1.size(), out = b2.size(), in = w1.size() / mid;
  std::vector<float> w(out * in, 0.0f), b(b2);
  for (size_t o = 0; o < out; ++o)
    for (size_t m = 0; m < mid; ++m) {
      float k = w2[o * mid + m];
      b[o] += k * b1[m];
      for (size_t i = 0; i < in; ++i)
        w[o * in + i] += k * w1[m * in + i];
    }
  OpBuilder builder(reader);
  std::string name = kiln::opName(reader, "conv");
  reader.getFilterMutable().assign(
      createWeight(builder, reader.getFilter().getLoc(), {(int64_t)out, (int64_t)in, 1, 1}, w,
                   name + "_composed"));
  reader.getBiasMutable().assign(
      createWeight(builder, reader.getLoc(), {(int64_t)out}, b, name + "_composed_bias"));
  reader.getInputMutable().assign(first.getInput());
  first.erase();
}

struct PoolBeforePointwiseConvPass
    : public kiln::top::impl::TopPoolBeforePointwiseConvBase<PoolBeforePointwiseConvPass> {
  void runOnOperation() override {
    SmallVector<GlobalAvgPoolOp> pools;
    getOperation().walk([&](GlobalAvgPoolOp pool) { pools.push_back(pool); });
    for (GlobalAvgPoolOp pool : pools) {
      auto conv = pool.getInput().getDefiningOp<ConvOp>();
      if (!conv || !isPointwise(conv))
        continue;
      auto in = cast<RankedTensorType>(conv.getInput().getType());
      auto out = cast<RankedTensorType>(pool.getType());
      OpBuilder b(pool);
      auto pooledType = RankedTensorType::get({in.getDimSize(0), in.getDimSize(1), 1, 1},
                                              in.getElementType());
      Value pooled = b.create<GlobalAvgPoolOp>(pool.getLoc(), pooledType, conv.getInput());
      auto projected = cast<ConvOp>(b.clone(*conv.getOperation()));
      projected.getInputMutable().assign(pooled);
      projected.getOutput().setType(out);
      projected->setLoc(pool.getLoc());
      pool.replaceAllUsesWith(projected.getOutput());
      pool.erase();
      if (conv->use_empty())
        conv.erase();
      composeWithReader(projected);
    }
    eraseUnusedWeights(getOperation());
  }
};
} // namespace
