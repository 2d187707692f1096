//===- FuseActivations.cpp - Decomposed activations become one op ---------===//
//
// Exporters without an ONNX op for an activation (Paddle2ONNX, PyTorch at old
// opsets, hand-written models) spell it as arithmetic: HardSwish as
// x * clip(x + 3, 0, 6) / 6, HardSigmoid as clip(x + 3, 0, 6) / 6 or
// clip(x / 6 + 0.5, 0, 1), SiLU as x * sigmoid(x), Mish as
// x * tanh(softplus(x)), GELU as
// 0.5 * x * (1 + erf(x / sqrt(2))). Each step is a pass over the tensor on
// the EU; the chip's ACTIVE kinds do the whole function in one.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Top/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace kiln::top {
#define GEN_PASS_DEF_TOPFUSEACTIVATIONS
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

/// The value of a one-element weight.
std::optional<double> scalarOf(Value v) {
  auto w = v.getDefiningOp<WeightOp>();
  if (!w || cast<RankedTensorType>(w.getType()).getNumElements() != 1)
    return std::nullopt;
  return readWeight(w)[0];
}

bool near(double value, double expected) {
  return std::fabs(value - expected) <= 1e-5 * std::max(1.0, std::fabs(expected));
}

/// A product of factors times a constant: x * y / c is {x, y} and 1 / c.
struct Product {
  SmallVector<Value, 4> factors;
  double scale = 1.0;
};

/// Flattens the muls (and divisions by a constant) under `v`; inner ops are
/// taken apart only when `v`'s tree is their only user and they fuse no
/// ReLU.
void flatten(Value v, bool root, Product &p) {
  Operation *op = v.getDefiningOp();
  bool inner = op && (root || v.hasOneUse());
  if (auto mul = dyn_cast_or_null<MulOp>(op); mul && inner && !mul.getDoRelu()) {
    flatten(mul.getLhs(), false, p);
    flatten(mul.getRhs(), false, p);
    return;
  }
  if (auto div = dyn_cast_or_null<DivOp>(op); div && inner && !div.getDoRelu()) {
    if (auto c = scalarOf(div.getRhs()); c && *c != 0) {
        p.scale /= *c;
      flatten(div.getLhs(), false, p);
      return;
    }
  }
  if (auto c = scalarOf(v)) {
    p.scale *= *c;
    return;
  }
  p.factors.push_back(v);
}

Product productOf(Value v) {
  Product p;
  flatten(v, true, p);
  return p;
}

/// x for clip(x + 3, 0, 6) (relu6 of x + 3).
Value reluSixInput(Value v) {
  auto clip = v.getDefiningOp<ActiveOp>();
  if (!clip || clip.getMode() != ActiveMode::Clip ||
      !near(clip.getAlpha().convertToDouble(), 0) ||
      !near(clip.getBeta().convertToDouble(), 6))
    return nullptr;
  auto add = clip.getInput().getDefiningOp<AddOp>();
  if (!add || add.getDoRelu())
    return nullptr;
  if (auto c = scalarOf(add.getRhs()); c && near(*c, 3))
    return add.getLhs();
  if (auto c = scalarOf(add.getLhs()); c && near(*c, 3))
    return add.getRhs();
  return nullptr;
}

/// x for hard_sigmoid(x) with ONNX's default 1/6 and 1/2.
Value hardSigmoidInput(Value v) {
  auto hs = v.getDefiningOp<ActiveOp>();
  if (hs && hs.getMode() == ActiveMode::HardSigmoid &&
      near(hs.getAlpha().convertToDouble(), 1.0 / 6) &&
      near(hs.getBeta().convertToDouble(), 0.5))
    return hs.getInput();
  return nullptr;
}

/// x for f(x), f an active op of `mode`.
Value activeInput(Value v, ActiveMode mode) {
  auto active = v.getDefiningOp<ActiveOp>();
  return active && active.getMode() == mode ? active.getInput() : nullptr;
}

/// x for tanh(softplus(x)).
Value tanhSoftplusInput(Value v) {
  Value s = activeInput(v, ActiveMode::Tanh);
  return s ? activeInput(s, ActiveMode::Softplus) : nullptr;
}

/// x for 1 + erf(x / sqrt(2)) (the division possibly a multiplication).
Value erfPlusOneInput(Value v) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add || add.getDoRelu())
    return nullptr;
  Value erf;
  if (auto c = scalarOf(add.getRhs()); c && near(*c, 1))
    erf = add.getLhs();
  else if (auto c = scalarOf(add.getLhs()); c && near(*c, 1))
    erf = add.getRhs();
  auto active = erf ? erf.getDefiningOp<ActiveOp>() : ActiveOp();
  if (!active || active.getMode() != ActiveMode::Erf)
    return nullptr;
  Product arg = productOf(active.getInput());
  if (arg.factors.size() != 1 || !near(arg.scale, 1 / std::sqrt(2.0)))
    return nullptr;
  return arg.factors[0];
}

/// The activation `root` (a mul, div or clip) computes, as (mode, input,
/// alpha, beta), if it is one of the spelled-out forms.
struct Match {
  ActiveMode mode;
  Value input;
  double alpha = 0, beta = 0;
};
std::optional<Match> match(Operation *root) {
  // clip(a * x + b, 0, 1): hard_sigmoid(x) with alpha a, beta b.
  if (auto clip = dyn_cast<ActiveOp>(root)) {
    auto add = clip.getInput().getDefiningOp<AddOp>();
    if (clip.getMode() != ActiveMode::Clip || !near(clip.getAlpha().convertToDouble(), 0) ||
        !near(clip.getBeta().convertToDouble(), 1) || !add || add.getDoRelu() ||
        !add->hasOneUse())
      return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      auto offset = scalarOf(add->getOperand(1 - i));
      Product p = productOf(add->getOperand(i));
      if (offset && p.factors.size() == 1)
        return Match{ActiveMode::HardSigmoid, p.factors[0], p.scale, *offset};
    }
    return std::nullopt;
  }
  Product p = productOf(root->getResult(0));
  if (p.factors.size() == 1) {
    // clip(x + 3, 0, 6) / 6
    if (Value x = reluSixInput(p.factors[0]); x && near(p.scale, 1.0 / 6))
      return Match{ActiveMode::HardSigmoid, x, 1.0 / 6, 0.5};
    return std::nullopt;
  }
  if (p.factors.size() != 2)
    return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    Value x = p.factors[i], other = p.factors[1 - i];
    // x * clip(x + 3, 0, 6) / 6, x * hard_sigmoid(x)
    if ((reluSixInput(other) == x && near(p.scale, 1.0 / 6)) ||
        (hardSigmoidInput(other) == x && near(p.scale, 1)))
      return Match{ActiveMode::HardSwish, x};
    // 0.5 * x * (1 + erf(x / sqrt(2)))
    if (erfPlusOneInput(other) == x && near(p.scale, 0.5))
      return Match{ActiveMode::Gelu, x};
    // x * sigmoid(x) (SiLU, Swish), x * tanh(softplus(x)) (Mish)
    if (activeInput(other, ActiveMode::Sigmoid) == x && near(p.scale, 1))
      return Match{ActiveMode::Silu, x};
    if (tanhSoftplusInput(other) == x && near(p.scale, 1))
      return Match{ActiveMode::Mish, x};
  }
  return std::nullopt;
}

struct FuseActivationsPass
    : public kiln::top::impl::TopFuseActivationsBase<FuseActivationsPass> {
  void runOnOperation() override {
    // Consumers first, so the largest product is matched, not a part of it.
    SmallVector<Operation *> roots;
    getOperation().walk([&](Operation *op) {
      if (isa<MulOp, DivOp, ActiveOp>(op))
        roots.push_back(op);
    });
    DenseSet<Operation *> erased;
    for (Operation *root : llvm::reverse(roots)) {
      if (erased.contains(root))
        continue;
      std::optional<Match> m = match(root);
      if (!m)
        continue;
      OpBuilder b(root);
      auto active = b.create<ActiveOp>(root->getLoc(), root->getResult(0).getType(), m->input,
                                       m->mode, APFloat(m->alpha), APFloat(m->beta));
      root->getResult(0).replaceAllUsesWith(active.getOutput());
      // The spelled-out ops, from the root down, as they lose their users.
      SmallVector<Operation *> dead = {root};
      while (!dead.empty()) {
        Operation *op = dead.pop_back_val();
        // Checked before touching op: it may have been erased already.
        if (erased.contains(op) || !op->use_empty())
          continue;
        SmallVector<Value> operands(op->getOperands());
        erased.insert(op);
        op->erase();
        for (Value v : operands)
          if (Operation *def = v.getDefiningOp(); def && isa<TopDialect>(def->getDialect()))
            dead.push_back(def);
      }
    }
  }
};
} // namespace
