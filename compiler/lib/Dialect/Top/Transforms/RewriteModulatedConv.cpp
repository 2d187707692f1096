//===- RewriteModulatedConv.cpp - conv(x, W*s*d) -> d * conv(x*s, W) ------===//
//
// StyleGAN2's fused modulated convolution computes its filter per sample:
// W * s (style, per input channel) * d (demodulation, per output channel).
// Since a conv is linear in each input channel and each output channel,
// conv(x, W*s*d) = d * conv(x * s, W): the filter becomes the static W (held,
// prefetched, quantized per channel like any weight) and the per-sample work
// becomes two per-channel scales of activations. The demodulation's sum of
// squares over the dynamic filter, sum_{i,k} (W[o,i,k] s[i])^2, becomes
// sum_i s[i]^2 Q[o,i] with the constant Q[o,i] = sum_k W[o,i,k]^2: a [1, I] x
// [I, O] matmul instead of two passes over O*I*k*k elements.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Support/Precision.h"

#include "kiln/abi/chip.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPREWRITEMODULATEDCONV
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Location derivedLoc(Operation *op, StringRef suffix) {
  std::string base = kiln::opName(op);
  if (base.empty())
    base = op->getName().stripDialect().str();
  return NameLoc::get(StringAttr::get(op->getContext(), base + suffix.str()));
}

/// Creates a Top op and gives it the result type its operands imply.
template <typename OpT, typename... Args>
Value create(OpBuilder &b, Location loc, Value like, Args &&...args) {
  auto elem = cast<RankedTensorType>(like.getType()).getElementType();
  auto op = b.create<OpT>(loc, RankedTensorType::get({}, elem),
                          std::forward<Args>(args)...);
  if (failed(cast<ShapeInference>(op.getOperation()).inferShapes()))
    return nullptr;
  return op->getResult(0);
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  if (auto r = v.getDefiningOp<ReshapeOp>())
    v = r.getInput();
  if (shapeOf(v) == shape)
    return v;
  return create<ReshapeOp>(b, loc, v, v, shape);
}

/// The factors of a product tree of top.mul ops of one shape: every operand
/// reached through muls whose result has `shape`.
void collectFactors(Value v, ArrayRef<int64_t> shape, SmallVector<Value> &out) {
  auto mul = v.getDefiningOp<MulOp>();
  if (mul && !mul.getDoRelu() && shapeOf(v) == shape) {
    collectFactors(mul.getLhs(), shape, out);
    collectFactors(mul.getRhs(), shape, out);
    return;
  }
  out.push_back(v);
}

/// `v`'s shape aligned to the right against rank `rank` (numpy broadcasting).
SmallVector<int64_t> broadcastShape(Value v, size_t rank) {
  ArrayRef<int64_t> s = shapeOf(v);
  SmallVector<int64_t> out(rank - std::min(rank, s.size()), 1);
  out.append(s.begin(), s.end());
  return out;
}

/// The axes along which `f` varies when broadcast against `shape`.
SmallVector<int64_t> varyingAxes(Value f, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s = broadcastShape(f, shape.size()), axes;
  for (auto [i, d] : llvm::enumerate(s))
    if (d != 1)
      axes.push_back(i);
  return axes;
}

/// A modulated filter: static weight * per-input-channel factors *
/// per-output-channel factors (all broadcasting to the weight's shape).
struct Modulation {
  Value weight; ///< a top.weight of the product's shape
  SmallVector<Value> constants;  ///< other weights (scalars) in the product
  SmallVector<Value> inScales;   ///< runtime factors along `icAxis`
  SmallVector<Value> outScales;  ///< runtime factors along `ocAxis`
  int64_t icAxis = -1, ocAxis = -1;
};

/// Splits the product `v` into a Modulation along `icAxis`/`ocAxis` (-1:
/// no such factors allowed); fails if any factor varies along another axis.
FailureOr<Modulation> decompose(Value v, int64_t icAxis, int64_t ocAxis) {
  ArrayRef<int64_t> shape = shapeOf(v);
  if (!v.getDefiningOp<MulOp>())
    return failure();
  SmallVector<Value> factors;
  collectFactors(v, shape, factors);
  Modulation m;
  m.icAxis = icAxis;
  m.ocAxis = ocAxis;
  for (Value f : factors) {
    auto weight = f.getDefiningOp<WeightOp>();
    if (weight && shapeOf(f) == shape) {
      if (m.weight)
        return failure();
      m.weight = f;
      continue;
    }
    if (shapeOf(f).size() > shape.size())
      return failure();
    SmallVector<int64_t> varying = varyingAxes(f, shape);
    if (varying.empty() && weight) {
      m.constants.push_back(f);
      continue;
    }
    if (varying.size() != 1 ||
        broadcastShape(f, shape.size())[varying[0]] != shape[varying[0]])
      return failure();
    if (varying[0] == icAxis)
      m.inScales.push_back(f);
    else if (varying[0] == ocAxis)
      m.outScales.push_back(f);
    else
      return failure();
  }
  if (!m.weight || (m.inScales.empty() && m.outScales.empty()))
    return failure();
  return m;
}

/// The product of `factors`, each reshaped to `shape`.
Value product(OpBuilder &b, Location loc, ArrayRef<Value> factors,
              ArrayRef<int64_t> shape) {
  Value acc;
  for (Value f : factors) {
    Value r = reshape(b, loc, f, shape);
    acc = acc ? create<MulOp>(b, loc, acc, acc, r) : r;
  }
  return acc;
}

/// The weight times its constant factors (folded by top-fold-constants).
Value staticWeight(OpBuilder &b, const Modulation &m) {
  Value w = m.weight;
  for (Value c : m.constants)
    w = create<MulOp>(b, m.weight.getLoc(), w, w, c);
  return w;
}

//===----------------------------------------------------------------------===//
// The filter of a conv or deconv, traced back to the product forming it.
//===----------------------------------------------------------------------===//

/// Data movement between the product and the conv's filter: reshapes that
/// only add or drop unit dimensions, and transposes.
struct FilterView {
  Value product;
  SmallVector<Operation *> ops; ///< from the product to the filter
  int64_t icAxis, ocAxis;       ///< the filter's channel axes in the product
};

/// Maps axis `a` of a reshape's result to its input, if the reshape only
/// adds or drops unit dimensions and `a` is not one.
std::optional<int64_t> throughReshape(ArrayRef<int64_t> in,
                                      ArrayRef<int64_t> out, int64_t a) {
  SmallVector<int64_t> inAxes, outAxes;
  for (auto [i, d] : llvm::enumerate(in))
    if (d != 1)
      inAxes.push_back(i);
  for (auto [i, d] : llvm::enumerate(out))
    if (d != 1)
      outAxes.push_back(i);
  if (inAxes.size() != outAxes.size())
    return std::nullopt;
  for (size_t k = 0; k < inAxes.size(); ++k)
    if (in[inAxes[k]] != out[outAxes[k]])
      return std::nullopt;
  auto it = llvm::find(outAxes, a);
  if (it == outAxes.end())
    return std::nullopt;
  return inAxes[it - outAxes.begin()];
}

std::optional<FilterView> traceFilter(Value filter, int64_t icAxis,
                                      int64_t ocAxis) {
  FilterView view;
  Value v = filter;
  while (true) {
    Operation *op = v.getDefiningOp();
    if (auto r = dyn_cast_or_null<ReshapeOp>(op)) {
      auto ic = throughReshape(shapeOf(r.getInput()), shapeOf(v), icAxis);
      auto oc = throughReshape(shapeOf(r.getInput()), shapeOf(v), ocAxis);
      if (!ic || !oc)
        return std::nullopt;
      icAxis = *ic;
      ocAxis = *oc;
      view.ops.push_back(op);
      v = r.getInput();
    } else if (auto t = dyn_cast_or_null<TransposeOp>(op)) {
      icAxis = t.getPerm()[icAxis];
      ocAxis = t.getPerm()[ocAxis];
      view.ops.push_back(op);
      v = t.getInput();
    } else {
      break;
    }
  }
  std::reverse(view.ops.begin(), view.ops.end());
  view.product = v;
  view.icAxis = icAxis;
  view.ocAxis = ocAxis;
  return view;
}

/// The view's data movement applied to `w` (a constant: folded later).
Value replayView(OpBuilder &b, const FilterView &view, Value w) {
  for (Operation *op : view.ops) {
    Location loc = op->getLoc();
    if (auto r = dyn_cast<ReshapeOp>(op))
      w = reshape(b, loc, w, shapeOf(r.getOutput()));
    else
      w = create<TransposeOp>(b, loc, w, w, cast<TransposeOp>(op).getPerm());
  }
  return w;
}

//===----------------------------------------------------------------------===//
// Cost: forming the filter versus scaling the activations.
//===----------------------------------------------------------------------===//

/// EU cycles of one elementwise pass over `channels` x `perChannel`
/// elements: channels spread over the lanes, each lane kiln_eu_elems per
/// cycle.
uint64_t euCycles(int64_t channels, int64_t perChannel, uint32_t dtype) {
  uint64_t lanes = (channels + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
  uint64_t per = kiln_eu_elems(dtype);
  return lanes * ((perChannel + per - 1) / per);
}

/// GDMA cycles to move `runs` contiguous runs of `runBytes` each between DDR
/// and LMEM, every run rounded up to the burst.
uint64_t ddrCycles(int64_t runs, int64_t runBytes) {
  uint64_t burst = KILN_GDMA_BURST_BYTES;
  uint64_t bytes = runs * ((runBytes + burst - 1) / burst * burst);
  return bytes * 1000 / KILN_GDMA_MBPC_DDR_TO_LMEM;
}

uint64_t macsPerCycle(uint32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_INT8: return KILN_MACS_PER_CYCLE_INT8;
  case KILN_DTYPE_F32: return KILN_MACS_PER_CYCLE_F32;
  default: return KILN_MACS_PER_CYCLE_F16;
  }
}

/// Whether layer groups can slice the conv's output channels (lg::isChannelSliceable
/// on the Tpu op it lowers to): ungrouped convs and deconvs.
bool channelSliceable(Operation *conv) {
  if (auto c = dyn_cast<ConvOp>(conv))
    return c.getGroup() == 1;
  return cast<DeconvOp>(conv).getGroup() == 1;
}

/// Modelled cycles the rewrite saves (negative: it costs), as the conv's
/// layer group runs in each form: its TIU and GDMA work overlap, so the group
/// takes the longer of the two.
///  - Kept, the TIU forms the filter by one EU pass per runtime factor over
///    O x I*k*k elements, and demodulating it squares them and sums each
///    output channel's (a pool over I*k*k taps, two per cycle). The GDMA
///    loads the static weight. In an INT8 net the conv runs in F16 (its
///    filter has no INT8 range), at half the MAC rate, its weight twice the
///    bytes, its input and output cast. The filter is formed in LMEM, a lane
///    group of output channels at a time when the group slices them, when
///    the static weight's rows and two working copies take at most half a
///    lane; larger, it goes through DDR on its way to the conv (written and
///    read back in the conv's layout, in runs of k*k elements).
///  - Rewritten, the input and the output are scaled in one pass each, and
///    the demodulation rsqrt(s^2 Q + eps) loads Q [O, I] and takes small
///    layer groups of its own: about two, each at least a load's and a
///    store's latency and two TIU commands.
int64_t savedCycles(Operation *conv, const Modulation &m, uint32_t dtype) {
  ArrayRef<int64_t> x = shapeOf(conv->getOperand(0));
  ArrayRef<int64_t> y = shapeOf(conv->getResult(0));
  ArrayRef<int64_t> w = shapeOf(m.weight);
  int64_t oc = w[m.ocAxis], ic = w[m.icAxis];
  int64_t k = numElements(w) / (oc * ic);
  uint64_t macs = isa<DeconvOp>(conv) ? numElements(x) * oc * k : numElements(y) * ic * k;
  auto scalePass = [&](ArrayRef<int64_t> t, uint32_t dt) {
    return euCycles(t[1], numElements(t) / t[1], dt);
  };

  uint32_t keptDtype = dtype == KILN_DTYPE_INT8 ? uint32_t{KILN_DTYPE_F16} : dtype;
  uint64_t lanes = (oc + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
  int64_t passes = m.inScales.size() + m.outScales.size();
  uint64_t keepTiu = macs / macsPerCycle(keptDtype) + passes * euCycles(oc, ic * k, keptDtype);
  if (!m.outScales.empty())
    keepTiu += euCycles(oc, ic * k, keptDtype) + lanes * ((ic * k + 1) / 2);
  if (keptDtype != dtype)
    keepTiu += scalePass(x, keptDtype) + scalePass(y, keptDtype);
  uint64_t keepGdma = ddrCycles(1, oc * ic * k * kiln_dtype_bytes(keptDtype));
  uint64_t keep = std::max(keepTiu, keepGdma);
  uint64_t sliceBytes = ic * k * kiln_dtype_bytes(keptDtype);
  if (!channelSliceable(conv))
    sliceBytes *= lanes;
  if (3 * sliceBytes > KILN_LMEM_BYTES_PER_LANE / 2)
    keep += 2 * ddrCycles(oc * ic, k * kiln_dtype_bytes(keptDtype));

  uint64_t rewriteTiu = macs / macsPerCycle(dtype);
  uint64_t rewriteGdma = ddrCycles(1, oc * ic * k * kiln_dtype_bytes(dtype));
  if (!m.inScales.empty())
    rewriteTiu += scalePass(x, dtype);
  uint64_t demod = 0;
  if (!m.outScales.empty()) {
    rewriteTiu += scalePass(y, dtype);
    rewriteGdma += ddrCycles(1, oc * ic * kiln_dtype_bytes(dtype));
    demod = 2 * (2 * KILN_GDMA_CMD_LATENCY + 2 * KILN_TIU_CMD_OVERHEAD);
  }
  uint64_t rewrite = std::max(rewriteTiu, rewriteGdma) + demod;
  return (int64_t)keep - (int64_t)rewrite;
}

//===----------------------------------------------------------------------===//
// The rewrites.
//===----------------------------------------------------------------------===//

/// conv(x, view(W * s * d)) -> conv(x * s, view(W)) * d.
LogicalResult rewriteConv(Operation *conv, const FilterView &view,
                          const Modulation &m) {
  Value input = conv->getOperand(0);
  Value output = conv->getResult(0);
  int64_t rank = shapeOf(input).size();
  SmallVector<int64_t> inShape(rank, 1), outShape(rank, 1);
  inShape[1] = shapeOf(input)[1];
  outShape[1] = shapeOf(output)[1];

  // The scales' reshapes come first, so the scaling muls and the conv stay
  // adjacent: a reshape between them would end a run of layer-group ops.
  OpBuilder b(conv);
  Value s, d;
  if (!m.inScales.empty())
    s = product(b, derivedLoc(conv, "_in_scale"), m.inScales, inShape);
  if (!m.outScales.empty())
    d = product(b, derivedLoc(conv, "_out_scale"), m.outScales, outShape);
  Value filter = replayView(b, view, staticWeight(b, m));
  Value x = input;
  if (s)
    x = create<MulOp>(b, derivedLoc(conv, "_scaled_input"), x, x, s);
  Operation *unscaled = b.clone(*conv);
  unscaled->setOperand(0, x);
  unscaled->setOperand(1, filter);
  Value y = unscaled->getResult(0);
  if (d) {
    unscaled->setLoc(derivedLoc(conv, "_unscaled"));
    y = create<MulOp>(b, conv->getLoc(), y, y, d);
  }
  if (!filter || !x || !y)
    return failure();
  output.replaceAllUsesWith(y);
  conv->erase();
  return success();
}

/// sum over every axis but `oc` of (W * s)^2, with s along `ic`, ->
/// reshape((s * s) x Q) with Q = sum_k W^2 folded to [I, O] or [O, I].
LogicalResult rewriteSumOfSquares(ReduceOp reduce, const Modulation &m,
                                  int64_t oc) {
  OpBuilder b(reduce);
  Location loc = reduce.getLoc();
  int64_t ic = m.icAxis;
  ArrayRef<int64_t> shape = shapeOf(m.weight);
  SmallVector<int64_t> others;
  for (int64_t a = 0; a < (int64_t)shape.size(); ++a)
    if (a != ic && a != oc)
      others.push_back(a);
  Value w = staticWeight(b, m);
  Value q = create<MulOp>(b, derivedLoc(reduce, "_weight_squared"), w, w, w);
  if (!others.empty())
    q = create<ReduceOp>(b, derivedLoc(reduce, "_weight_square_sum"), q, q,
                         ReduceMode::Sum, others, /*keepdims=*/false);
  int64_t i = shape[ic];
  Value s = product(b, derivedLoc(reduce, "_scale"), m.inScales, {1, i});
  Value s2 = create<MulOp>(b, derivedLoc(reduce, "_scale_squared"), s, s, s);
  Value none = b.create<NoneOp>(loc, b.getNoneType());
  // Q is [O, I] when the output axis comes first: Gemm's transB. The
  // reduce's name goes to the op that produces its value.
  bool needsReshape = shapeOf(reduce.getOutput()) != ArrayRef<int64_t>{1, shape[oc]};
  Value sum = create<MatMulOp>(
      b, needsReshape ? derivedLoc(reduce, "_matmul") : loc, s2, s2, q, none,
      /*right_transpose=*/oc < ic, /*do_relu=*/false);
  if (!sum)
    return failure();
  Value out = reshape(b, loc, sum, shapeOf(reduce.getOutput()));
  reduce.getOutput().replaceAllUsesWith(out);
  reduce->erase();
  return success();
}

/// The value squared by `reduce`: x for sum(x * x) or sum_square(x).
Value squaredInput(ReduceOp reduce) {
  if (reduce.getMode() == ReduceMode::SumSquare)
    return reduce.getInput();
  if (reduce.getMode() != ReduceMode::Sum)
    return nullptr;
  auto mul = reduce.getInput().getDefiningOp<MulOp>();
  if (mul && !mul.getDoRelu() && mul.getLhs() == mul.getRhs())
    return mul.getLhs();
  return nullptr;
}

/// The one non-unit axis `reduce` keeps, if it keeps exactly one.
std::optional<int64_t> keptAxis(ReduceOp reduce, ArrayRef<int64_t> shape) {
  std::optional<int64_t> kept;
  for (int64_t a = 0; a < (int64_t)shape.size(); ++a) {
    if (shape[a] == 1 || llvm::is_contained(reduce.getAxes(), a))
      continue;
    if (kept)
      return std::nullopt;
    kept = a;
  }
  return kept;
}

/// The input-channel axis of a product's runtime factors, if they share one.
std::optional<int64_t> scaledAxis(Value product) {
  ArrayRef<int64_t> shape = shapeOf(product);
  SmallVector<Value> factors;
  collectFactors(product, shape, factors);
  std::optional<int64_t> axis;
  for (Value f : factors) {
    if (f.getDefiningOp<WeightOp>() || shapeOf(f).size() > shape.size())
      continue;
    for (int64_t a : varyingAxes(f, shape)) {
      if (axis && *axis != a)
        return std::nullopt;
      axis = a;
    }
  }
  return axis;
}

void eraseDeadOps(func::FuncOp func) {
  bool erased = true;
  while (erased) {
    erased = false;
    SmallVector<Operation *> dead;
    func.walk([&](Operation *op) {
      if (isa<TopDialect>(op->getDialect()) &&
          op->getNumResults() > 0 && op->use_empty())
        dead.push_back(op);
    });
    for (Operation *op : llvm::reverse(dead)) {
      op->erase();
      erased = true;
    }
  }
}

struct RewriteModulatedConvPass
    : public kiln::top::impl::TopRewriteModulatedConvBase<
          RewriteModulatedConvPass> {
  using TopRewriteModulatedConvBase::TopRewriteModulatedConvBase;

  void runOnOperation() override {
    if (mode == "keep")
      return;
    if (mode != "auto" && mode != "rewrite") {
      getOperation().emitError("top-rewrite-modulated-conv: mode '")
          << mode << "' is not auto, rewrite or keep";
      return signalPassFailure();
    }
    // DType values are firmware-abi's kiln_dtype; other names run in F32.
    uint32_t dtype = uint32_t(symbolizeDType(precision).value_or(DType::F32));
    bool changed = false;

    SmallVector<Operation *> convs;
    getOperation().walk([&](Operation *op) {
      if (isa<ConvOp, DeconvOp>(op))
        convs.push_back(op);
    });
    // Values the filters of kept convs are formed from: their demodulation
    // stays a sum of squares, which is formed with the filter in its group.
    llvm::DenseSet<Value> keptFactors;
    for (Operation *op : convs) {
      auto view = candidate(op);
      if (!view)
        continue;
      FailureOr<Modulation> m =
          decompose(view->product, view->icAxis, view->ocAxis);
      if (failed(m))
        continue;
      int64_t saved = savedCycles(op, *m, dtype);
      std::string name = kiln::opName(op);
      if (name.empty())
        name = op->getName().getStringRef().str();
      if (mode == "auto" && saved <= 0) {
        SmallVector<Value> work = {view->product};
        while (!work.empty()) {
          Value v = work.pop_back_val();
          if (!keptFactors.insert(v).second)
            continue;
          if (auto mul = v.getDefiningOp<MulOp>())
            work.append({mul.getLhs(), mul.getRhs()});
        }
        kiln::appendReport(getOperation(), kiln::kRewriteReportAttr,
                           name + ": modulated conv kept (forming its filter "
                                  "is about " +
                               std::to_string(-saved) + " cycles cheaper)");
        continue;
      }
      if (failed(rewriteConv(op, *view, *m)))
        return signalPassFailure();
      kiln::appendReport(getOperation(), kiln::kRewriteReportAttr,
                         name + ": modulated conv rewritten to a static "
                                "filter (saves about " +
                             std::to_string(saved) + " cycles)");
      changed = true;
    }

    // The demodulation's sum of squares over a modulated filter.
    SmallVector<ReduceOp> reduces;
    getOperation().walk([&](ReduceOp op) { reduces.push_back(op); });
    for (ReduceOp reduce : reduces) {
      Value x = squaredInput(reduce);
      if (!x || keptFactors.contains(x))
        continue;
      ArrayRef<int64_t> shape = shapeOf(x);
      auto oc = keptAxis(reduce, shape);
      auto ic = scaledAxis(x);
      if (!oc || !ic || *oc == *ic)
        continue;
      FailureOr<Modulation> m = decompose(x, *ic, -1);
      if (failed(m) || m->inScales.empty())
        continue;
      if (failed(rewriteSumOfSquares(reduce, *m, *oc)))
        return signalPassFailure();
      changed = true;
    }
    if (changed)
      eraseDeadOps(getOperation());
  }

  /// The filter view of a conv or deconv the rewrite applies to: one group,
  /// no fused bias or ReLU (d * relu(.) is not relu(d * .)), a computed
  /// filter in the layout ONNX gives.
  std::optional<FilterView> candidate(Operation *op) {
    Value filter = op->getOperand(1);
    if (!isa<NoneType>(op->getOperand(2).getType()) ||
        filter.getDefiningOp<WeightOp>())
      return std::nullopt;
    if (auto conv = dyn_cast<ConvOp>(op)) {
      if (conv.getGroup() != 1 || conv.getDoRelu())
        return std::nullopt;
      return traceFilter(filter, /*icAxis=*/1, /*ocAxis=*/0);
    }
    auto deconv = cast<DeconvOp>(op);
    if (deconv.getGroup() != 1 || deconv.getDoRelu() ||
        deconv.getFilterReordered())
      return std::nullopt;
    return traceFilter(filter, /*icAxis=*/0, /*ocAxis=*/1);
  }
};
} // namespace
