//===- QuantLowering.cpp - QuantizeLinear / DequantizeLinear -------------===//
//
// QDQ models in Top-to-Tpu lowering (QuantHelpers.h). In an INT8 compile
// top-absorb-qdq has already turned the pairs on activations into
// kiln.qparams; what remains here is the F32/F16 view of a QDQ model (fake
// quantization as tpu.cast pairs, weights dequantized at compile time) and
// the model's INT8 weights for INT8 conv lowering.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"
#include "QuantHelpers.h"
#include "kiln/Support/Names.h"

#include "kiln/Dialect/Tpu/IR/TpuOps.h"

#include "mlir/Dialect/Quant/QuantTypes.h"

using namespace mlir;
using namespace kiln;

namespace {

/// The float weight a quantize_linear reads, or null.
top::WeightOp floatWeightOf(top::QuantizeLinearOp q) {
  if (!q)
    return {};
  auto w = q.getInput().getDefiningOp<top::WeightOp>();
  return w && w.getValue().getElementType().isF32() ? w : top::WeightOp();
}

/// The integers of a dequantize's weight operand (i8/ui8 weight, or the
/// quantize of an f32 weight computed here) as their values; sets
/// `isUnsigned`. Empty when the operand is not a constant.
std::vector<float> weightIntegers(top::DequantizeLinearOp dq,
                                  bool &isUnsigned) {
  Value in = dq.getInput();
  isUnsigned = cast<RankedTensorType>(in.getType())
                   .getElementType()
                   .isUnsignedInteger();
  if (auto w = in.getDefiningOp<top::WeightOp>()) {
    if (!w.getValue().getElementType().isInteger(8))
      return {};
    return top::readWeight(w);
  }
  auto q = in.getDefiningOp<top::QuantizeLinearOp>();
  top::WeightOp w = floatWeightOf(q);
  if (!w)
    return {};
  std::vector<float> data = top::readWeight(w);
  auto shape = cast<RankedTensorType>(w.getType()).getShape();
  ArrayRef<double> scale = q.getScale();
  ArrayRef<int64_t> zp = q.getZeroPoint();
  for (int64_t i = 0, e = data.size(); i < e; ++i) {
    int64_t c = top::quantChannel(shape, q.getAxis(), scale.size(), i);
    data[i] = top::quantizeValue(data[i], scale[c], zp[c], isUnsigned);
  }
  return data;
}

/// !quant.uniform<i8:f32, scale:zp> for a per-tensor quantize/dequantize (a
/// uint8 zero point as int8: zp - 128).
Type quantElementType(MLIRContext *ctx, double scale, int64_t zp,
                      bool isUnsigned) {
  if (isUnsigned)
    zp -= 128;
  return quant::UniformQuantizedType::get(
      quant::QuantizationFlags::Signed, IntegerType::get(ctx, 8),
      Float32Type::get(ctx), scale, zp, -128, 127);
}

bool runsInInt8(Operation *op) { return top::runDtype(op) == top::DType::INT8; }

struct LowerQuantize : public tpu::TopLowering<top::QuantizeLinearOp> {
  using TopLowering::TopLowering;

  LogicalResult lower(top::QuantizeLinearOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    // A weight's quantize goes with its dequantize (compile time).
    if (adaptor.getInput().getDefiningOp<top::WeightOp>())
      return rewriter.notifyMatchFailure(op, "quantizes a weight");
    if (op.getScale().size() != 1)
      return op.emitOpError("quantizes an activation per axis (")
             << op.getScale().size()
             << " scales); the chip quantizes activations per tensor";
    auto type = cast<RankedTensorType>(op.getOutput().getType());
    Type elem = quantElementType(getContext(), op.getScale()[0],
                                 op.getZeroPoint()[0],
                                 type.getElementType().isUnsignedInteger());
    auto cast = rewriter.create<tpu::CastOp>(
        op.getLoc(), RankedTensorType::get(type.getShape(), elem),
        adaptor.getInput(), tpu::RequantAttr());
    rewriter.replaceOp(op, cast.getOutput());
    return success();
  }
};

struct LowerDequantize : public tpu::TopLowering<top::DequantizeLinearOp> {
  using TopLowering::TopLowering;

  LogicalResult lower(top::DequantizeLinearOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getOutput().getType());
    Value in = adaptor.getInput();
    bool isConstant =
        in.getDefiningOp<top::WeightOp>() ||
        floatWeightOf(in.getDefiningOp<top::QuantizeLinearOp>());
    if (isConstant) {
      bool isUnsigned = false;
      std::vector<float> data = weightIntegers(op, isUnsigned);
      if ((int64_t)data.size() != type.getNumElements())
        return rewriter.notifyMatchFailure(op, "weight data unavailable");
      ArrayRef<double> scale = op.getScale();
      ArrayRef<int64_t> zp = op.getZeroPoint();
      for (int64_t i = 0, e = data.size(); i < e; ++i) {
        int64_t c = top::quantChannel(type.getShape(), op.getAxis(),
                                      scale.size(), i);
        data[i] = top::dequantizeValue(data[i], scale[c], zp[c]);
      }
      std::string name = opName(op, "dequantized");
      auto weight = top::createWeight(rewriter, op.getLoc(), type.getShape(),
                                      data, name);
      rewriter.replaceOp(op, weight.getOutput());
      return success();
    }
    // An activation: the quantize before it is a tpu.cast to a quant type
    // by now (top-down order).
    auto inType = cast<RankedTensorType>(in.getType());
    if (!isa<quant::UniformQuantizedType>(inType.getElementType()))
      return rewriter.notifyMatchFailure(op, "input is not lowered yet");
    if (op.getScale().size() != 1)
      return op.emitOpError("dequantizes an activation per axis (")
             << op.getScale().size()
             << " scales); the chip quantizes activations per tensor";
    auto cast = rewriter.create<tpu::CastOp>(
        op.getLoc(), RankedTensorType::get(type.getShape(), rewriter.getF32Type()),
        in, tpu::RequantAttr());
    rewriter.replaceOp(op, cast.getOutput());
    return success();
  }
};

} // namespace

std::optional<tpu::WeightQuantization> tpu::weightQuantization(Value filter) {
  auto dq = filter.getDefiningOp<top::DequantizeLinearOp>();
  if (!dq)
    return std::nullopt;
  bool isUnsigned = false;
  std::vector<float> values = weightIntegers(dq, isUnsigned);
  auto type = cast<RankedTensorType>(dq.getOutput().getType());
  if (values.empty() || (int64_t)values.size() != type.getNumElements() ||
      type.getRank() < 1)
    return std::nullopt;
  ArrayRef<double> scale = dq.getScale();
  ArrayRef<int64_t> zp = dq.getZeroPoint();
  if (scale.size() > 1 && dq.getAxis() != 0)
    return std::nullopt;
  int64_t symmetric = isUnsigned ? 128 : 0;
  if (llvm::any_of(zp, [&](int64_t z) { return z != symmetric; }))
    return std::nullopt;
  WeightQuantization out;
  out.dequantize = dq;
  out.shape.assign(type.getShape().begin(), type.getShape().end());
  out.data.reserve(values.size());
  for (float v : values)
    out.data.push_back(static_cast<int8_t>(static_cast<int64_t>(v) - symmetric));
  int64_t channels = type.getShape()[0];
  for (int64_t c = 0; c < channels; ++c)
    out.scales.push_back(scale.size() == 1 ? scale[0] : scale[c]);
  return out;
}

bool tpu::waitsForInt8Users(top::DequantizeLinearOp dq) {
  Value in = dq.getInput();
  bool isConstant = in.getDefiningOp<top::WeightOp>() ||
                    floatWeightOf(in.getDefiningOp<top::QuantizeLinearOp>());
  bool int8User = llvm::any_of(dq->getUsers(), [](Operation *user) {
    return isa<top::TopDialect>(user->getDialect()) && runsInInt8(user);
  });
  return isConstant && int8User && weightQuantization(dq.getOutput());
}

void tpu::populateQuantLowering(RewritePatternSet &patterns) {
  patterns.add<LowerQuantize, LowerDequantize>(patterns.getContext());
}
