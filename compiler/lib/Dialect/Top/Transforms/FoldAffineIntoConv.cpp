//===- FoldAffineIntoConv.cpp - Constant scales and shifts into convs -----===//
//
// Exports scale and shift conv results with constants the conv could apply
// itself: PP-LCNetV3's LearnableAffineBlock (a learned scalar Mul and Add
// after every re-parameterized conv), a BatchNorm that became a Mul and an
// Add, a Div by a constant. On the chip each is an elementwise pass over the
// conv's output and an op more in its layer group; folded, the conv's filter
// and bias carry it for free. The same affine in front of a conv that pads
// nothing (a pointwise conv after an activation's affine block) folds into
// that conv's filter and bias too (not in INT8, see below).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Support/Names.h"

#include "mlir/IR/Builders.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPFOLDAFFINEINTOCONV
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

/// y = x * scale + shift, per channel (channels == 1: one value for all).
struct Affine {
  Value x;
  std::vector<float> scale, shift;
  Operation *op;
};

/// A constant that is one value or one per channel of a [N, C, H, W] result:
/// its values per channel, else nothing.
std::optional<std::vector<float>> perChannel(Value v, int64_t channels) {
  auto weight = v.getDefiningOp<WeightOp>();
  if (!weight)
    return std::nullopt;
  auto shape = cast<RankedTensorType>(weight.getType()).getShape();
  std::vector<float> values = readWeight(weight);
  if (values.size() == 1)
    return std::vector<float>(channels, values[0]);
  // [C, 1, 1] or [1, C, 1, 1]: numpy aligns it with the channel axis.
  if (shape.size() < 3 || shape.size() > 4 || shape[shape.size() - 3] != channels ||
      (int64_t)values.size() != channels)
    return std::nullopt;
  return values;
}

/// `op` as an affine function of one of its operands, over `channels`.
std::optional<Affine> asAffine(Operation *op, int64_t channels) {
  if (!isa<MulOp, AddOp, SubOp, DivOp>(op) || op->getNumOperands() != 2)
    return std::nullopt;
  if (auto relu = op->getAttrOfType<BoolAttr>("do_relu"); relu && relu.getValue())
    return std::nullopt;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Affine a{lhs, {}, {}, op};
  std::optional<std::vector<float>> c = perChannel(rhs, channels);
  // Mul and Add take the constant either side.
  if (!c && isa<MulOp, AddOp>(op)) {
    c = perChannel(lhs, channels);
    a.x = rhs;
  }
  // x must have the result's shape: the constant only broadcasts.
  if (!c || a.x.getType() != op->getResult(0).getType())
    return std::nullopt;
  a.scale.assign(channels, 1.0f);
  a.shift.assign(channels, 0.0f);
  for (int64_t i = 0; i < channels; ++i) {
    float v = (*c)[i];
    if (isa<MulOp>(op))
      a.scale[i] = v;
    else if (isa<DivOp>(op) && v != 0.0f)
      a.scale[i] = 1.0f / v;
    else if (isa<DivOp>(op))
      return std::nullopt;
    else
      a.shift[i] = isa<AddOp>(op) ? v : -v;
  }
  return a;
}

std::string nameOf(Operation *op, StringRef suffix) {
  return kiln::opName(op, "conv") + suffix.str();
}

void setFilterAndBias(ConvOp conv, ArrayRef<float> filter, ArrayRef<float> bias,
                      StringRef suffix) {
  OpBuilder b(conv);
  auto shape = cast<RankedTensorType>(conv.getFilter().getType()).getShape();
  conv.getFilterMutable().assign(
      createWeight(b, conv.getFilter().getLoc(), shape, filter, nameOf(conv, suffix)));
  conv.getBiasMutable().assign(createWeight(b, conv.getLoc(), {shape[0]}, bias,
                                            nameOf(conv, (suffix + "_bias").str())));
}

/// conv -> x * s + t: W[o] * s[o], b[o] * s[o] + t[o]; the conv takes the
/// affine op's name and place in the graph.
bool foldAfter(ConvOp conv) {
  if (!conv->hasOneUse() || conv.getDoRelu())
    return false;
  int64_t oc = cast<RankedTensorType>(conv.getType()).getDimSize(1);
  std::optional<Affine> a = asAffine(*conv->user_begin(), oc);
  std::vector<float> filter, bias;
  if (!a || a->x != conv.getOutput() || !readFilterAndBias(conv, filter, bias))
    return false;
  size_t perOc = filter.size() / oc;
  for (int64_t o = 0; o < oc; ++o) {
    for (size_t i = 0; i < perOc; ++i)
      filter[o * perOc + i] *= a->scale[o];
    bias[o] = bias[o] * a->scale[o] + a->shift[o];
  }
  conv->setLoc(a->op->getLoc());
  setFilterAndBias(conv, filter, bias, "_affine");
  a->op->getResult(0).replaceAllUsesWith(conv.getOutput());
  a->op->erase();
  return true;
}

/// x * s + t -> conv without padding: W[o][i] * s[i], b[o] + sum_i W[o][i] * t[i]
/// (every window reads only real input, so the shift reaches every tap).
bool foldBefore(ConvOp conv) {
  Operation *def = conv.getInput().getDefiningOp();
  if (!def || !def->hasOneUse() || llvm::any_of(conv.getPads(), [](int64_t p) { return p; }))
    return false;
  auto inType = cast<RankedTensorType>(conv.getInput().getType());
  if (inType.getRank() != 4)
    return false;
  int64_t ic = inType.getDimSize(1), group = conv.getGroup();
  std::optional<Affine> a = asAffine(def, ic);
  std::vector<float> filter, bias;
  if (!a || !readFilterAndBias(conv, filter, bias))
    return false;
  int64_t oc = bias.size(), icg = ic / group, ocg = oc / group;
  size_t taps = filter.size() / (oc * icg);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t j = 0; j < icg; ++j) {
      int64_t i = o / ocg * icg + j; // the input channel tap j of o reads
      for (size_t t = 0; t < taps; ++t) {
        float &w = filter[(o * icg + j) * taps + t];
        bias[o] += w * a->shift[i];
        w *= a->scale[i];
      }
    }
  setFilterAndBias(conv, filter, bias, "_input_affine");
  conv.getInputMutable().assign(a->x);
  a->op->erase();
  return true;
}

struct FoldAffineIntoConvPass
    : public kiln::top::impl::TopFoldAffineIntoConvBase<FoldAffineIntoConvPass> {
  using TopFoldAffineIntoConvBase::TopFoldAffineIntoConvBase;
  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation().walk([&](ConvOp conv) { convs.push_back(conv); });
    for (ConvOp conv : convs) {
      while (foldAfter(conv)) {
      }
      // In INT8 the conv would quantize the affine's input instead of its
      // output: PP-OCRv4's recognizer loses 0.008 of cosine to that.
      while (precision != "int8" && foldBefore(conv)) {
      }
    }
    eraseUnusedWeights(getOperation());
  }
};
} // namespace
