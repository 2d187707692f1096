#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Support/Names.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace kiln::top {
#define GEN_PASS_DEF_TOPFUSEBATCHNORM
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

struct BatchNormParams {
  std::vector<float> scale; // gamma / sqrt(var + eps)
  std::vector<float> shift; // beta - mean * scale
};

static std::optional<BatchNormParams> readParams(BatchNormOp bn) {
  auto gamma = bn.getScale().getDefiningOp<WeightOp>();
  auto beta = bn.getBias().getDefiningOp<WeightOp>();
  auto mean = bn.getMean().getDefiningOp<WeightOp>();
  auto var = bn.getVariance().getDefiningOp<WeightOp>();
  if (!gamma || !beta || !mean || !var)
    return std::nullopt;
  auto g = readWeight(gamma), b = readWeight(beta), m = readWeight(mean),
       v = readWeight(var);
  size_t c = g.size();
  if (b.size() != c || m.size() != c || v.size() != c)
    return std::nullopt;
  BatchNormParams p;
  for (size_t i = 0; i < c; ++i) {
    float s = g[i] / std::sqrt(v[i] + (float)bn.getEpsilon().convertToDouble());
    p.scale.push_back(s);
    p.shift.push_back(b[i] - m[i] * s);
  }
  return p;
}

static std::string nameOf(Location loc, StringRef suffix) {
  return kiln::locName(loc, "bn") + suffix.str();
}

/// conv -> bn with weight filter and bias: scale the filter and bias.
static bool foldIntoConv(BatchNormOp bn, const BatchNormParams &p) {
  auto conv = bn.getInput().getDefiningOp<ConvOp>();
  if (!conv || !conv->hasOneUse() || conv.getDoRelu())
    return false;
  auto filterOp = conv.getFilter().getDefiningOp<WeightOp>();
  if (!filterOp)
    return false;
  auto filterShape = cast<RankedTensorType>(filterOp.getType()).getShape();
  int64_t oc = filterShape[0];
  if ((int64_t)p.scale.size() != oc)
    return false;
  std::vector<float> bias(oc, 0.f);
  if (!isa<NoneType>(conv.getBias().getType())) {
    auto biasOp = conv.getBias().getDefiningOp<WeightOp>();
    if (!biasOp)
      return false;
    bias = readWeight(biasOp);
  }
  std::vector<float> filter = readWeight(filterOp);
  size_t perOc = filter.size() / oc;
  for (int64_t o = 0; o < oc; ++o) {
    for (size_t i = 0; i < perOc; ++i)
      filter[o * perOc + i] *= p.scale[o];
    bias[o] = bias[o] * p.scale[o] + p.shift[o];
  }
  OpBuilder b(conv);
  auto newFilter = createWeight(b, filterOp.getLoc(), filterShape, filter,
                                nameOf(bn.getLoc(), "_folded_filter"));
  auto newBias = createWeight(b, bn.getLoc(), {oc}, bias,
                              nameOf(bn.getLoc(), "_folded_bias"));
  conv.getFilterMutable().assign(newFilter);
  conv.getBiasMutable().assign(newBias);
  // The conv now computes the batch norm's output: it takes the later name.
  conv->setLoc(bn.getLoc());
  bn.getOutput().replaceAllUsesWith(conv.getOutput());
  bn.erase();
  return true;
}

/// Any other batch norm: x * scale + shift with [1, C, 1, 1] constants.
static void lowerToMulAdd(BatchNormOp bn, const BatchNormParams &p) {
  OpBuilder b(bn);
  int64_t c = p.scale.size();
  auto rank = cast<RankedTensorType>(bn.getType()).getRank();
  SmallVector<int64_t> shape(rank, 1);
  if (rank > 1)
    shape[1] = c;
  auto scale = createWeight(b, bn.getLoc(), shape, p.scale,
                            nameOf(bn.getLoc(), "_scale"));
  auto shift = createWeight(b, bn.getLoc(), shape, p.shift,
                            nameOf(bn.getLoc(), "_shift"));
  auto loc = bn.getLoc();
  auto mul = b.create<MulOp>(NameLoc::get(b.getStringAttr(nameOf(loc, "_mul"))),
                             bn.getType(), bn.getInput(), scale, false);
  auto add = b.create<AddOp>(loc, bn.getType(), mul, shift, false);
  bn.getOutput().replaceAllUsesWith(add.getOutput());
  bn.erase();
}

/// A batch norm whose parameters are computed: the same arithmetic as Top
/// ops, x * s + (beta - mean * s) with s = gamma * rsqrt(var + eps), the
/// per-channel values reshaped to broadcast along dimension 1.
static LogicalResult lowerComputed(BatchNormOp bn) {
  auto type = cast<RankedTensorType>(bn.getType());
  int64_t rank = type.getRank();
  if (rank < 2)
    return bn.emitOpError("expects an [N, C, ...] input");
  int64_t c = type.getDimSize(1);
  for (Value param :
       {bn.getScale(), bn.getBias(), bn.getMean(), bn.getVariance()}) {
    auto shape = cast<RankedTensorType>(param.getType()).getShape();
    if (shape.size() != 1 || shape[0] != c)
      return bn.emitOpError("parameters must have ")
             << c << " elements, one per channel";
  }
  OpBuilder b(bn);
  Location loc = bn.getLoc();
  auto sub = [&](StringRef suffix) {
    return NameLoc::get(b.getStringAttr(nameOf(loc, suffix)));
  };
  auto vec = RankedTensorType::get({c}, type.getElementType());
  SmallVector<int64_t> perChannel(rank - 1, 1);
  perChannel[0] = c;
  auto chan = RankedTensorType::get(perChannel, type.getElementType());
  double eps = bn.getEpsilon().convertToDouble();
  Value varEps =
      b.create<ActiveOp>(sub("_var_eps"), vec, bn.getVariance(),
                         ActiveMode::Scale, APFloat(1.0), APFloat(eps));
  Value rstd = b.create<ActiveOp>(sub("_rstd"), vec, varEps, ActiveMode::Rsqrt,
                                  APFloat(0.0), APFloat(0.0));
  Value scale = b.create<MulOp>(sub("_scale"), vec, bn.getScale(), rstd, false);
  Value meanScaled =
      b.create<MulOp>(sub("_mean_scaled"), vec, bn.getMean(), scale, false);
  Value shift =
      b.create<SubOp>(sub("_shift"), vec, bn.getBias(), meanScaled, false);
  Value scaleC = b.create<ReshapeOp>(sub("_scale_c"), chan, scale, perChannel);
  Value shiftC = b.create<ReshapeOp>(sub("_shift_c"), chan, shift, perChannel);
  Value mul = b.create<MulOp>(sub("_mul"), type, bn.getInput(), scaleC, false);
  auto add = b.create<AddOp>(loc, type, mul, shiftC, false);
  bn.getOutput().replaceAllUsesWith(add.getOutput());
  bn.erase();
  return success();
}

struct FuseBatchNormPass
    : public kiln::top::impl::TopFuseBatchNormBase<FuseBatchNormPass> {
  void runOnOperation() override {
    SmallVector<BatchNormOp> bns;
    getOperation().walk([&](BatchNormOp bn) { bns.push_back(bn); });
    for (BatchNormOp bn : bns) {
      auto params = readParams(bn);
      if (!params) {
        if (failed(lowerComputed(bn)))
          return signalPassFailure();
        continue;
      }
      if (!foldIntoConv(bn, *params))
        lowerToMulAdd(bn, *params);
    }
    // The unfolded filters, biases and statistics are no longer read.
    eraseUnusedWeights(getOperation());
  }
};
} // namespace

std::unique_ptr<Pass> kiln::top::createFuseBatchNormPass() {
  return std::make_unique<FuseBatchNormPass>();
}
