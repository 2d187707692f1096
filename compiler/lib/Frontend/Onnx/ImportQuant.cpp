//===- ImportQuant.cpp - QuantizeLinear and DequantizeLinear --------------===//
//
// QDQ models: QuantizeLinear / DequantizeLinear become top.quantize_linear /
// top.dequantize_linear with constant scales and zero points (per-tensor, or
// per-axis from opset 13). They are never folded here: quantize of a float
// weight stays for top-fold-quantize-constants, and dequantize of an INT8
// initializer stays dequantize_linear(top.weight i8/ui8) so INT8 lowering sees
// the model's own integers and scales.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace kiln::onnx_frontend {

namespace {
/// A QuantizeLinear / DequantizeLinear node's scale, zero point and axis.
struct QuantParams {
  SmallVector<double> scale;
  SmallVector<int64_t> zeroPoint;
  int64_t axis = 1;
  bool isUnsigned = true; // ONNX's default without a zero point is uint8
};
} // namespace

/// Reads inputs 1 (scale) and 2 (zero point) and the axis of `node`, whose
/// input 0 has shape `shape`. With `allowInt32`, an int32 zero point is
/// accepted (DequantizeLinear of an int32 constant, e.g. a bias).
static FailureOr<QuantParams>
readQuantParams(const Node &node, ArrayRef<int64_t> shape, int64_t opset,
                const TensorData *scaleData, const TensorData *zpData,
                bool hasZp, function_ref<InFlightDiagnostic()> error,
                bool allowInt32 = false) {
  QuantParams p;
  if (!scaleData)
    return error() << "input 'x_scale' ('" << node.inputs[1]
                   << "') must be a constant; it is computed";
  if (!scaleData->isFloat())
    return error() << "input 'x_scale' must be a float tensor, got "
                   << elemTypeName(scaleData->elemType);
  if (hasZp && !zpData)
    return error() << "input 'x_zero_point' ('" << node.inputs[2]
                   << "') must be a constant; it is computed";
  if (scaleData->shape.size() > 1)
    return error() << "x_scale must be a scalar or 1-D, got shape "
                   << shapeStr(scaleData->shape);
  p.scale.assign(scaleData->f32.begin(), scaleData->f32.end());
  if (zpData) {
    int32_t t = zpData->elemType;
    if (t != kInt8 && t != kUInt8 && !(allowInt32 && t == kInt32))
      return error() << "x_zero_point has element type " << elemTypeName(t)
                     << "; kiln supports int8 and uint8";
    if (zpData->shape != scaleData->shape)
      return error() << "x_zero_point has shape " << shapeStr(zpData->shape)
                     << " but x_scale " << shapeStr(scaleData->shape);
    p.zeroPoint.assign(zpData->i64.begin(), zpData->i64.end());
    p.isUnsigned = t == kUInt8;
  } else {
    p.zeroPoint.assign(p.scale.size(), 0);
  }
  if (p.scale.empty())
    return error() << "x_scale is empty";
  int64_t rank = shape.size();
  int64_t axis = 1;
  if (const OnnxAttr *a = node.attr("axis"); a && a->kind == OnnxAttr::Int)
    axis = a->i;
  (void)opset; // opset 10 has no axis; the attribute is simply absent
  if (axis < 0)
    axis += rank;
  if (p.scale.size() > 1) {
    // Per-axis: one entry per slice of `axis` (a 1-element 1-D scale is
    // per-tensor, as ONNX Runtime reads it).
    if (axis < 0 || axis >= rank)
      return error() << "axis " << axis << " is out of range for rank "
                     << rank;
    if (shape[axis] != (int64_t)p.scale.size())
      return error() << "has " << p.scale.size() << " scales for axis "
                     << axis << " of extent " << shape[axis];
  }
  p.axis = axis >= 0 && axis < rank ? axis : 1;
  for (double s : p.scale)
    if (!(s > 0) || !std::isfinite(s))
      return error() << "x_scale must be positive and finite, got " << s;
  return p;
}

/// Verifies `op` and runs its shape inference (no folding, unlike
/// Importer::complete).
static Value finish(Operation *op, StringRef what) {
  ScopedDiagnosticHandler handler(op->getContext(), [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diag.attachNote() << "while importing " << what;
    return failure();
  });
  if (failed(mlir::verify(op, /*verifyRecursively=*/false)))
    return {};
  if (failed(cast<top::ShapeInference>(op).inferShapes()))
    return {};
  return op->getResult(0);
}

LogicalResult Importer::importQuantizeLinear(const Node &node) {
  FailureOr<SmallVector<int64_t>> shape = inputShape(node, 0);
  if (failed(shape))
    return failure();
  FailureOr<QuantParams> p =
      readQuantParams(node, *shape, opset(), constant(node, 1),
                      constant(node, 2), hasInput(node, 2),
                      [&] { return nodeError(node); });
  if (failed(p))
    return failure();
  if (const TensorData *x = constant(node, 0); x && !x->isFloat())
    return nodeError(node) << "input 'x' has element type "
                           << elemTypeName(x->elemType)
                           << "; kiln quantizes float tensors only";
  Value x = operand(node, 0);
  if (!x)
    return failure();
  auto elem = IntegerType::get(&ctx, 8,
                               p->isUnsigned ? IntegerType::Unsigned
                                             : IntegerType::Signless);
  auto op = builder.create<top::QuantizeLinearOp>(
      nodeLoc(node), RankedTensorType::get(*shape, elem), x, p->scale,
      p->zeroPoint, p->axis);
  return setValue(node, 0, finish(op, describe(node)));
}

LogicalResult Importer::importDequantizeLinear(const Node &node) {
  FailureOr<SmallVector<int64_t>> shape = inputShape(node, 0);
  if (failed(shape))
    return failure();
  const TensorData *x = constant(node, 0);
  bool int32 = x && x->elemType == kInt32;
  FailureOr<QuantParams> p = readQuantParams(
      node, *shape, opset(), constant(node, 1), constant(node, 2),
      hasInput(node, 2), [&] { return nodeError(node); }, int32);
  if (failed(p))
    return failure();

  Value input;
  if (x) {
    if (x->elemType != kInt8 && x->elemType != kUInt8 && !int32)
      return nodeError(node) << "input 'x' has element type "
                             << elemTypeName(x->elemType)
                             << "; kiln supports int8, uint8 and int32";
    if (hasInput(node, 2) && !int32 &&
        constant(node, 2)->elemType != x->elemType)
      return nodeError(node) << "x and x_zero_point differ in element type";
    if (int32) {
      // An int32 constant (a quantized bias): nothing on the chip reads the
      // integers, so it becomes the float weight it stands for.
      std::vector<float> data(x->i64.size());
      for (size_t i = 0; i < data.size(); ++i) {
        int64_t c = top::quantChannel(*shape, p->axis, p->scale.size(), i);
        data[i] = top::dequantizeValue((float)x->i64[i], p->scale[c],
                                       p->zeroPoint[c]);
      }
      return setValue(node, 0,
                      derivedWeight(*shape, data, node.outputs.front()));
    }
    bool isUnsigned = x->elemType == kUInt8;
    if (!hasInput(node, 2))
      p->isUnsigned = isUnsigned;
    auto w = top::createInt8Weight(constantBuilder(), nameLoc(node.inputs[0]),
                                   *shape, x->i64, isUnsigned, node.inputs[0]);
    lastConstant = w;
    input = w.getOutput();
  } else {
    input = values.lookup(node.inputs[0]);
    if (!input)
      return nodeError(node) << "input '" << node.inputs[0]
                             << "' is not produced by any node kiln imported";
    auto type = cast<RankedTensorType>(input.getType());
    if (!type.getElementType().isInteger(8))
      return nodeError(node)
             << "input 'x' must be an int8 or uint8 tensor (a QuantizeLinear "
             << "result or an initializer), got " << type.getElementType();
    if (hasInput(node, 2) &&
        type.getElementType().isUnsignedInteger() != p->isUnsigned)
      return nodeError(node) << "x and x_zero_point differ in element type";
    p->isUnsigned = type.getElementType().isUnsignedInteger();
  }
  auto op = builder.create<top::DequantizeLinearOp>(
      nodeLoc(node), RankedTensorType::get(*shape, builder.getF32Type()), input,
      p->scale, p->zeroPoint, p->axis);
  return setValue(node, 0, finish(op, describe(node)));
}

} // namespace kiln::onnx_frontend
