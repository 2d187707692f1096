//===- ApplyPrecision.cpp - Tpu types from the precision annotations ------===//
//
// Lowering builds F32 Tpu ops that carry their Top op's kiln.dtype, kiln.calib
// and kiln.qparams. This pass gives every op the types of its dtype, in
// program order: weights are converted (INT8 filters per channel, with the
// requantization table of docs/precision.md), data movement follows its
// input, and a tpu.cast goes wherever a value's type differs from what its
// user needs. An op INT8 cannot express (no INT8 arithmetic, or no range to
// quantize its result with) runs in F16 and the report says so.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"
#include "kiln/LayerGroup/Slicing.h"
#include "kiln/Support/Precision.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/commands.h"
#include "kiln/abi/quant.h"
#include "kiln/chip/tiu_kernels.h"

#include "mlir/Dialect/Quant/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::tpu {
#define GEN_PASS_DEF_TPUAPPLYPRECISION
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

namespace {

struct QParams {
  double scale = 1;
  int64_t zp = 0;
};

/// Multipliers sharing one shift, for ops that add requantized terms. A ratio
/// of 2^31 or more saturates, as requantMultiplier's: the result is a value
/// whose calibrated range is (nearly) zero, e.g. x - max(x) over an axis of
/// size 1, where any nonzero term saturates anyway.
std::pair<SmallVector<int64_t>, int64_t> sharedMultipliers(ArrayRef<double> ratios) {
  double largest = 0;
  for (double r : ratios)
    largest = std::max(largest, r);
  Multiplier top = requantMultiplier(largest);
  SmallVector<int64_t> ms;
  for (double r : ratios)
    ms.push_back(std::clamp<int64_t>(std::llround(std::min(std::ldexp(r, int(top.shift)), 4e18)),
                                     0, INT32_MAX));
  return {ms, top.shift};
}

class Applier {
public:
  Applier(func::FuncOp func, bool asymmetric, bool biasCorrection)
      : func(func), b(func.getContext()), asymmetric(asymmetric),
        biasCorrection(biasCorrection) {
    f32 = b.getF32Type();
  }

  LogicalResult run() {
    SmallVector<Operation *> ops;
    for (Operation &op : func.getBody().front())
      ops.push_back(&op);
    for (Operation *op : ops)
      if (failed(apply(op)))
        return failure();
    // Weights replaced by converted copies, filter views by cast ones (a
    // reshape left in place would still end a run of layer-group ops).
    func.walk([](Operation *op) {
      if (isa<top::WeightOp, tpu::ReshapeOp>(op) && op->use_empty())
        op->erase();
    });
    return success();
  }

private:
  func::FuncOp func;
  OpBuilder b;
  bool asymmetric;
  bool biasCorrection;
  Type f32;
  DenseMap<std::pair<Value, Type>, Value> converted;
  llvm::StringSet<> reported;

  // ---- types ---------------------------------------------------------------

  static RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }
  static Type elementOf(Value v) { return tensorType(v).getElementType(); }
  static void setElement(Value v, Type element) {
    v.setType(tensorType(v).clone(element));
  }

  Type floatType(top::DType dtype) {
    if (dtype == top::DType::F16)
      return b.getF16Type();
    if (dtype == top::DType::BF16)
      return b.getBF16Type();
    return f32;
  }

  Type quantType(QParams q) {
    return quant::UniformQuantizedType::get(quant::QuantizationFlags::Signed, b.getI8Type(),
                                            f32, q.scale, q.zp, -128, 127);
  }

  static std::optional<QParams> paramsOfType(Type t) {
    if (auto q = dyn_cast<quant::UniformQuantizedType>(t))
      return QParams{q.getScale(), q.getZeroPoint()};
    return std::nullopt;
  }

  /// Quantization of a calibrated range (symmetric unless asymmetric). A
  /// value that is exactly zero on every calibration sample (ReLU of a
  /// negative input, x - max(x) over an axis of size 1) holds no scale of
  /// its own: it gets threshold 1, so zero stays exact and its consumers'
  /// arithmetic stays in range (a 1e-12 scale made a conv's bias saturate
  /// int32 and its multiplier underflow to 0: the output was all zeros).
  QParams paramsOfRange(const Range &r) const {
    if (!asymmetric) {
      double t = r.threshold > 0 ? r.threshold : r.absMax();
      if (!(t > 0))
        t = 1.0;
      return {std::max(t / 127.0, 1e-12), 0};
    }
    double lo = std::min(r.min, 0.0), hi = std::max(r.max, 0.0);
    if (!(hi > lo))
      hi = 1.0;
    double scale = std::max((hi - lo) / 255.0, 1e-12);
    int64_t zp = std::llround(-128.0 - lo / scale);
    return {scale, std::clamp<int64_t>(zp, -128, 127)};
  }

  /// The quantization an op's own annotations give its result, if it may use
  /// them (the op computes its Top op's final result).
  std::optional<QParams> resultParams(Operation *op) const {
    if (!op->hasAttr(kFinalAttr))
      return std::nullopt;
    if (auto qp = op->getAttrOfType<DenseF64ArrayAttr>(kQParamsAttr); qp && qp.size() == 2)
      return QParams{qp[0], int64_t(qp[1])};
    if (auto r = calibratedRange(op))
      return paramsOfRange(*r);
    return std::nullopt;
  }

  /// The quantization to read value v with as INT8: its type's, or what its
  /// producer's annotations (through data movement) say.
  std::optional<QParams> valueParams(Value v) {
    if (auto q = paramsOfType(elementOf(v)))
      return q;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      unsigned i = arg.getArgNumber();
      if (auto qp = func.getArgAttrOfType<DenseF64ArrayAttr>(i, kQParamsAttr); qp && qp.size() == 2)
        return QParams{qp[0], int64_t(qp[1])};
      if (auto r = func.getArgAttrOfType<DenseF64ArrayAttr>(i, kCalibAttr); r && r.size() == 3)
        return paramsOfRange({r[0], r[1], r[2]});
      return std::nullopt;
    }
    Operation *def = v.getDefiningOp();
    if (isa<tpu::ReshapeOp, tpu::DmaOp>(def) && def->getNumOperands() > 0)
      if (auto own = resultParams(def); !own)
        return valueParams(def->getOperand(0));
    return resultParams(def);
  }

  // ---- weights and casts ---------------------------------------------------

  /// A weight converted to a float dtype, computed once per dtype.
  Value floatWeight(top::WeightOp w, Type element) {
    auto key = std::make_pair(w.getResult(), element);
    if (Value done = converted.lookup(key))
      return done;
    OpBuilder::InsertionGuard guard(b);
    std::vector<float> data = top::readWeight(w);
    const llvm::fltSemantics &sem = cast<FloatType>(element).getFloatSemantics();
    SmallVector<APFloat> values;
    values.reserve(data.size());
    for (float x : data) {
      APFloat v(x);
      bool lost;
      v.convert(sem, APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
    auto type = tensorType(w).clone(element);
    b.setInsertionPoint(w);
    Value out = b.create<top::WeightOp>(w.getLoc(), type, DenseElementsAttr::get(type, values));
    converted[key] = out;
    return out;
  }

  static std::string nameOf(Value v, func::FuncOp func) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      if (auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name"))
        return n.str();
    if (Operation *def = v.getDefiningOp())
      return opName(def);
    return "value";
  }

  static std::string suffixOf(Type element) {
    if (isa<quant::UniformQuantizedType>(element))
      return "int8";
    std::string s;
    llvm::raw_string_ostream os(s);
    element.print(os);
    return s;
  }

  /// v as element type `element`: itself, a converted weight, or a tpu.cast
  /// placed right after v's definition so every user shares it. The caller's
  /// insertion point is kept: callers build their own ops after converting.
  Value convert(Value v, Type element) {
    Type from = elementOf(v);
    if (from == element)
      return v;
    if (auto w = v.getDefiningOp<top::WeightOp>(); w && from == f32 && isa<FloatType>(element))
      return floatWeight(w, element);
    auto key = std::make_pair(v, element);
    if (Value done = converted.lookup(key))
      return done;
    OpBuilder::InsertionGuard guard(b);
    // A computed filter reached through a reshape is cast next to its conv,
    // on [1, O, I, kh*kw] (the layout the conv reads its filter in) and then
    // viewed as [O, I, kh, kw]: the cast joins the conv's layer group and the
    // filter is formed on chip (lg::isFilterView).
    auto view = v.getDefiningOp<tpu::ReshapeOp>();
    if (view && !view.getInput().getDefiningOp<top::WeightOp>() && readOnlyAsFilter(v)) {
      ArrayRef<int64_t> f = tensorType(v).getShape();
      b.setInsertionPoint(view);
      Location loc = view.getLoc();
      Value laid = b.create<tpu::ReshapeOp>(
          loc, RankedTensorType::get({1, f[0], f[1], f[2] * f[3]}, from), view.getInput());
      laid.getDefiningOp()->setAttrs(view->getAttrs());
      Value cast = createCast(laid, element);
      Value out = b.create<tpu::ReshapeOp>(loc, tensorType(v).clone(element), cast);
      out.getDefiningOp()->setAttrs(view->getAttrs());
      converted[key] = out;
      return out;
    }
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(&func.getBody().front());
    Value out = createCast(v, element);
    converted[key] = out;
    return out;
  }

  /// A tpu.cast of v to `element` at the insertion point.
  Value createCast(Value v, Type element) {
    Location loc = NameLoc::get(b.getStringAttr(nameOf(v, func) + "_to_" + suffixOf(element)));
    tpu::RequantAttr quant;
    auto fromQ = paramsOfType(elementOf(v)), toQ = paramsOfType(element);
    if (fromQ && toQ) {
      Multiplier m = requantMultiplier(fromQ->scale / toQ->scale);
      quant = tpu::RequantAttr::get(b.getContext(), m.m, m.shift);
    }
    return b.create<tpu::CastOp>(loc, tensorType(v).clone(element), v, quant);
  }

  /// Whether every user reads v as its conv's or deconv's 4-D filter.
  static bool readOnlyAsFilter(Value v) {
    return tensorType(v).getRank() == 4 && llvm::all_of(v.getUses(), [](OpOperand &use) {
      return isa<tpu::Conv2DOp, tpu::Deconv2DOp>(use.getOwner()) && use.getOperandNumber() == 1;
    });
  }

  // ---- ops -----------------------------------------------------------------

  LogicalResult apply(Operation *op) {
    if (isa<top::WeightOp, top::NoneOp, tpu::CastOp>(op))
      return success();
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (OpOperand &operand : ret->getOpOperands())
        operand.set(convert(operand.get(), f32));
      return success();
    }
    if (isa<tpu::ReshapeOp>(op)) {
      setElement(op->getResult(0), elementOf(op->getOperand(0)));
      return success();
    }
    if (auto dma = dyn_cast<tpu::DmaOp>(op))
      return applyDma(dma);

    top::DType dtype = top::runDtype(op).value_or(top::DType::F32);
    if (dtype == top::DType::INT8) {
      std::string why = applyInt8(op);
      if (why.empty())
        return success();
      report(op, "f16 (" + why + ")");
      dtype = top::DType::F16;
    }
    applyFloat(op, floatType(dtype));
    return success();
  }

  void report(Operation *op, const std::string &what) {
    std::string name = opName(op);
    if (reported.insert(name).second)
      appendReport(op, kPrecisionReportAttr, name + ": " + what);
  }

  /// Every operand in `element` (conv and deconv biases stay F32: the
  /// accumulator is F32; but BM1684X's depthwise datapath sums in the 16-bit
  /// format and takes a bias of it, so with `isa: bm1684x` a depthwise
  /// conv's bias is `element` too), the result likewise.
  void applyFloat(Operation *op, Type element) {
    auto conv = dyn_cast<tpu::Conv2DOp>(op);
    auto func = op->getParentOfType<func::FuncOp>();
    const bool chipDepthwise =
        conv && func && func->hasAttr(lg::kIsaAttr) && conv.getGroup() > 1 &&
        int64_t(conv.getGroup()) == cast<RankedTensorType>(conv.getInput().getType()).getShape()[1];
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (isa<NoneType>(v.getType()))
        continue;
      bool bias = op->hasTrait<tpu::HasFilter>() && operand.getOperandNumber() == 2 &&
                  !chipDepthwise;
      operand.set(convert(v, bias ? f32 : element));
    }
    for (Value r : op->getResults())
      setElement(r, element);
  }

  /// Whether an INT8 fill of `value` saturates under quantization q.
  static bool fillSaturates(float value, QParams q) {
    double level = std::nearbyint(double(value) / q.scale) + double(q.zp);
    return !(level >= -128.0 && level <= 127.0);
  }

  /// The fill values of a dma program.
  static SmallVector<float> fillsOf(tpu::DmaOp dma) {
    SmallVector<float> fills;
    for (tpu::DmaCopyAttr copy : dma.getCopies())
      if (copy.isFill())
        fills.push_back(kiln_f32_from_bits(copy.getBits()));
    return fills;
  }

  /// Data movement keeps its first input's type; fills are re-encoded. In
  /// INT8 a constant pad whose fill lies outside its input's range would
  /// saturate (Clip(-0.5, 0.5) then a pad of 1.0): the dma then takes its own
  /// calibrated range, which covers the fill, and its inputs are requantized
  /// to it; without one it runs in F16 (reported).
  LogicalResult applyDma(tpu::DmaOp dma) {
    if (dma.getInputs().empty())
      return success();
    Type element = elementOf(dma.getInputs()[0]);
    if (auto in = paramsOfType(element)) {
      SmallVector<float> fills = fillsOf(dma);
      auto saturates = [&](QParams q) {
        return llvm::any_of(fills, [&](float v) { return fillSaturates(v, q); });
      };
      if (saturates(*in)) {
        auto own = resultParams(dma);
        if (own && !saturates(*own)) {
          element = quantType(*own);
        } else {
          element = b.getF16Type();
          report(dma, "f16 (pad value outside its input's INT8 range, and no calibrated range "
                      "of its own covers it)");
        }
      }
    }
    for (OpOperand &operand : dma->getOpOperands())
      operand.set(convert(operand.get(), element));
    setElement(dma.getResult(), element);
    if (element == f32)
      return success();
    SmallVector<Attribute> program;
    for (tpu::DmaCopyAttr copy : dma.getCopies()) {
      program.push_back(copy);
      if (!copy.isFill())
        continue;
      uint32_t bits = copy.getBits();
      float value = kiln_f32_from_bits(bits);
      if (element.isF16())
        bits = kiln_f32_to_f16(value);
      else if (element.isBF16())
        bits = kiln_f32_to_bf16(value);
      else if (auto q = paramsOfType(element))
        bits = uint8_t(kiln_quantize_f32(value, float(q->scale), int32_t(q->zp)));
      program.back() = tpu::DmaCopyAttr::get(b.getContext(), copy.getSrc(), copy.getSrcOffset(),
                                             copy.getDstOffset(), copy.getShape(),
                                             copy.getSrcStrides(), copy.getDstStrides(), bits);
    }
    dma.setProgramAttr(b.getArrayAttr(program));
    return success();
  }

  /// Lowers op to INT8; returns why not ("" on success, nothing changed on
  /// failure).
  std::string applyInt8(Operation *op) {
    if (isa<tpu::ResizeOp>(op) ||
        (isa<tpu::Pool2DOp>(op) && (cast<tpu::Pool2DOp>(op).getKind() == tpu::PoolKind::Max ||
                                    cast<tpu::Pool2DOp>(op).getKind() == tpu::PoolKind::Min)))
      return sameAsInput(op);
    if (isa<tpu::Conv2DOp, tpu::Deconv2DOp>(op))
      return convInt8(op);
    if (auto pool = dyn_cast<tpu::Pool2DOp>(op))
      return poolInt8(pool);
    if (auto elt = dyn_cast<tpu::EltwiseOp>(op))
      return eltwiseInt8(elt);
    if (isa<tpu::ActiveOp, tpu::ReluOp>(op))
      return activeInt8(op);
    if (auto concat = dyn_cast<tpu::ConcatOp>(op))
      return concatInt8(concat);
    return "no INT8 " + op->getName().getStringRef().str();
  }

  /// Ops whose INT8 result has its input's quantization.
  std::string sameAsInput(Operation *op) {
    auto in = valueParams(op->getOperand(0));
    if (!in)
      return "input has no calibrated range";
    Type q = quantType(*in);
    op->getOpOperand(0).set(convert(op->getOperand(0), q));
    setElement(op->getResult(0), q);
    return "";
  }

  std::string convInt8(Operation *op) {
    Value input = op->getOperand(0), filter = op->getOperand(1), bias = op->getOperand(2);
    auto w = filter.getDefiningOp<top::WeightOp>();
    if (!w)
      return "computed filter";
    auto in = valueParams(input);
    auto out = resultParams(op);
    if (!in || !out)
      return in ? "no calibrated range" : "input has no calibrated range";
    auto shape = tensorType(filter).getShape();
    int64_t oc = shape[0], perChannel = tensorType(filter).getNumElements() / oc;
    std::vector<float> data = top::readWeight(w);
    std::vector<float> biasData;
    if (auto bw = bias.getDefiningOp<top::WeightOp>())
      biasData = top::readWeight(bw);
    else if (!isa<NoneType>(bias.getType()))
      return "computed bias";

    // Bias correction: the filter's rounding moves the output's mean by
    // sum (q * scale - w) * mean(input channel) * (the share of outputs whose
    // tap reads the input, not padding); the bias takes it back.
    std::optional<std::vector<double>> inputMean;
    auto conv = dyn_cast<tpu::Conv2DOp>(op);
    if (biasCorrection && conv)
      inputMean = channelMeans(input);
    const int64_t icPerGroup = shape[1], ocPerGroup = conv ? oc / int64_t(conv.getGroup()) : oc;
    if (inputMean && int64_t(inputMean->size()) != icPerGroup * (oc / ocPerGroup))
      inputMean.reset();
    const int64_t taps = perChannel / icPerGroup;
    std::vector<double> tapShare;
    if (inputMean)
      tapShare = insideShare(conv);

    SmallVector<double> scales(oc);
    SmallVector<int64_t> zeros(oc, 0);
    SmallVector<int8_t> q(data.size());
    SmallVector<int32_t> table(oc * 3);
    for (int64_t o = 0; o < oc; ++o) {
      float absMax = 0;
      for (int64_t i = 0; i < perChannel; ++i)
        absMax = std::max(absMax, std::fabs(data[o * perChannel + i]));
      double scale = absMax > 0 ? absMax / 127.0 : 1.0;
      scales[o] = scale;
      for (int64_t i = 0; i < perChannel; ++i)
        q[o * perChannel + i] = kiln_quantize_f32(data[o * perChannel + i], float(scale), 0);
      double accScale = in->scale * scale;
      double b = biasData.empty() ? 0.0 : biasData[o];
      if (inputMean) {
        const double *mean = inputMean->data() + o / ocPerGroup * icPerGroup;
        for (int64_t i = 0; i < perChannel; ++i)
          b -= (double(q[o * perChannel + i]) * scale - double(data[o * perChannel + i])) *
               mean[i / taps] * tapShare[i % taps];
      }
      Multiplier m = requantMultiplier(accScale / out->scale);
      table[o * 3] = int32_t(std::clamp<double>(std::llround(b / accScale), INT32_MIN, INT32_MAX));
      table[o * 3 + 1] = int32_t(m.m);
      table[o * 3 + 2] = int32_t(m.shift);
    }
    b.setInsertionPoint(op);
    auto i8 = b.getI8Type();
    auto filterQ = quant::UniformQuantizedPerAxisType::get(
        quant::QuantizationFlags::Signed, i8, f32, scales, zeros, 0, -128, 127);
    auto filterType = RankedTensorType::get(shape, filterQ);
    Value newFilter = b.create<top::WeightOp>(
        w.getLoc(), filterType, DenseElementsAttr::get(RankedTensorType::get(shape, i8), ArrayRef(q)));
    auto tableType = RankedTensorType::get({oc, 3}, b.getI32Type());
    Location tableLoc = NameLoc::get(b.getStringAttr(opName(op) + "_requant"));
    Value newTable = b.create<top::WeightOp>(tableLoc, tableType,
                                             DenseElementsAttr::get(tableType, ArrayRef(table)));
    op->getOpOperand(0).set(convert(input, quantType(*in)));
    op->getOpOperand(1).set(newFilter);
    op->getOpOperand(2).set(newTable);
    setElement(op->getResult(0), quantType(*out));
    return "";
  }

  /// For each filter tap (kh * kw, row-major), the share of the conv's
  /// outputs at which it reads the input rather than padding.
  static std::vector<double> insideShare(tpu::Conv2DOp conv) {
    ArrayRef<int64_t> in = tensorType(conv.getInput()).getShape(),
                      out = tensorType(conv.getResult()).getShape();
    ArrayRef<int64_t> k = conv.getKernelShape(), st = conv.getStrides(), pad = conv.getPads(),
                      dil = conv.getDilations();
    auto axis = [&](int d) { // d: 0 rows, 1 columns
      std::vector<double> share(size_t(k[d]));
      for (int64_t t = 0; t < k[d]; ++t) {
        int64_t inside = 0;
        for (int64_t p = 0; p < out[2 + d]; ++p) {
          const int64_t x = p * st[d] - pad[d] + t * dil[d];
          inside += x >= 0 && x < in[2 + d];
        }
        share[size_t(t)] = out[2 + d] > 0 ? double(inside) / double(out[2 + d]) : 1.0;
      }
      return share;
    };
    std::vector<double> rows = axis(0), cols = axis(1), share;
    for (double r : rows)
      for (double c : cols)
        share.push_back(r * c);
    return share;
  }

  /// The calibration samples' channel means of v (kChannelMeanAttr on its
  /// producer or argument), if the table had them.
  std::optional<std::vector<double>> channelMeans(Value v) {
    DenseF64ArrayAttr means;
    if (auto arg = dyn_cast<BlockArgument>(v))
      means = func.getArgAttrOfType<DenseF64ArrayAttr>(arg.getArgNumber(), kChannelMeanAttr);
    else
      means = v.getDefiningOp()->getAttrOfType<DenseF64ArrayAttr>(kChannelMeanAttr);
    if (!means)
      return std::nullopt;
    return std::vector<double>(means.asArrayRef().begin(), means.asArrayRef().end());
  }

  std::string poolInt8(tpu::Pool2DOp pool) {
    auto in = valueParams(pool.getInput());
    auto out = resultParams(pool);
    if (!in || !out)
      return "no calibrated range";
    Multiplier m = requantMultiplier(in->scale / out->scale);
    pool->getOpOperand(0).set(convert(pool.getInput(), quantType(*in)));
    pool.setQuantAttr(tpu::RequantAttr::get(b.getContext(), m.m, m.shift));
    setElement(pool.getResult(), quantType(*out));
    return "";
  }

  std::string eltwiseInt8(tpu::EltwiseOp elt) {
    using K = tpu::EltwiseKind;
    K kind = elt.getKind();
    if (kind == K::Div || kind == K::Pow || kind == K::PRelu)
      return "no INT8 " + tpu::stringifyEltwiseKind(kind).str();
    auto lhs = valueParams(elt.getLhs()), rhs = valueParams(elt.getRhs());
    auto out = resultParams(elt);
    if (!lhs || !rhs || !out)
      return "no calibrated range";
    tpu::RequantAttr quant;
    if (kind == K::Mul) {
      Multiplier m = requantMultiplier(lhs->scale * rhs->scale / out->scale);
      quant = tpu::RequantAttr::get(b.getContext(), m.m, m.shift);
    } else {
      auto [ms, shift] = sharedMultipliers({lhs->scale / out->scale, rhs->scale / out->scale});
      quant = tpu::RequantAttr::get(b.getContext(), ms[0], ms[1], shift);
    }
    elt->getOpOperand(0).set(convert(elt.getLhs(), quantType(*lhs)));
    elt->getOpOperand(1).set(convert(elt.getRhs(), quantType(*rhs)));
    elt.setQuantAttr(quant);
    setElement(elt.getResult(), quantType(*out));
    return "";
  }

  /// Active functions and ReLU become a 256-entry table, computed by the
  /// cmodel's own F32 kernel so the table is what the chip would compute.
  std::string activeInt8(Operation *op) {
    Value input = op->getOperand(0);
    auto in = valueParams(input);
    auto out = resultParams(op);
    if (!in || !out)
      return "no calibrated range";
    top::ActiveMode mode = top::ActiveMode::Relu;
    double alpha = 0, beta = 0;
    if (auto active = dyn_cast<tpu::ActiveOp>(op)) {
      mode = active.getMode();
      alpha = active.getAlpha().convertToDouble();
      beta = active.getBeta().convertToDouble();
    }
    // Table entry i holds f of the input whose bits, as uint8, are i.
    std::vector<float> lmem(KILN_NPU_NUM * 512, 0.0f);
    for (int i = 0; i < 256; ++i)
      lmem[i] = kiln_dequantize_i8(int8_t(uint8_t(i)), float(in->scale), int32_t(in->zp));
    kiln_tiu_cmd c{};
    c.op = KILN_TIU_ACTIVE;
    c.subop = uint16_t(mode);
    c.param[0] = float(alpha);
    c.param[1] = float(beta);
    kiln_tiu_operand t{};
    t.n = t.c = t.h = 1;
    t.w = 256;
    t.dtype = KILN_DTYPE_F32;
    t.flags = KILN_OPND_USED;
    c.in0 = t;
    c.out = t;
    c.out.addr = 256 * sizeof(float);
    const uint64_t laneBytes = 512 * sizeof(float);
    if (const char *err = kiln::chip::runTiuRecord(
            c, reinterpret_cast<uint8_t *>(lmem.data()), laneBytes))
      return std::string("table: ") + err;
    SmallVector<int8_t> table(256);
    for (int i = 0; i < 256; ++i)
      table[i] = kiln_quantize_f32(lmem[256 + i], float(out->scale), int32_t(out->zp));

    b.setInsertionPoint(op);
    auto tableType = RankedTensorType::get({256}, b.getI8Type());
    Value tableValue = b.create<top::WeightOp>(
        NameLoc::get(b.getStringAttr(opName(op) + "_table")), tableType,
        DenseElementsAttr::get(tableType, ArrayRef(table)));
    Value qin = convert(input, quantType(*in));
    auto type = tensorType(op->getResult(0)).clone(quantType(*out));
    auto active = b.create<tpu::ActiveOp>(op->getLoc(), type, qin, tableValue,
                                          mode, APFloat(alpha), APFloat(beta));
    for (NamedAttribute a : op->getDiscardableAttrs())
      active->setAttr(a.getName(), a.getValue());
    op->getResult(0).replaceAllUsesWith(active.getResult());
    op->erase();
    return "";
  }

  std::string concatInt8(tpu::ConcatOp concat) {
    auto out = resultParams(concat);
    if (!out)
      return "no calibrated range";
    SmallVector<QParams> ins;
    for (Value v : concat.getInputs()) {
      auto q = valueParams(v);
      if (!q)
        return "input has no calibrated range";
      ins.push_back(*q);
    }
    Type qout = quantType(*out);
    for (auto [i, operand] : llvm::enumerate(concat->getOpOperands()))
      operand.set(convert(convert(operand.get(), quantType(ins[i])), qout));
    setElement(concat.getResult(), qout);
    return "";
  }
};

struct ApplyPrecisionPass : public tpu::impl::TpuApplyPrecisionBase<ApplyPrecisionPass> {
  using TpuApplyPrecisionBase::TpuApplyPrecisionBase;
  void runOnOperation() override {
    if (failed(Applier(getOperation(), asymmetric, biasCorrection).run()))
      signalPassFailure();
  }
};
} // namespace
