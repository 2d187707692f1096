//===- Quant.cpp - QuantizeLinear / DequantizeLinear ----------------------===//
//
// Quantized values are held as floats (the interpreter's tensors are f32):
// quantize_linear's result holds the integers, dequantize_linear reads them.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

using namespace mlir;

namespace kiln::interp {

template <typename OpTy>
static LogicalResult checkParams(OpTy op, const Tensor &input) {
  size_t n = op.getScale().size();
  if (n <= 1)
    return success();
  int64_t axis = op.getAxis();
  if (axis < 0 || axis >= (int64_t)input.shape.size() ||
      input.shape[axis] != (int64_t)n)
    return op.emitOpError("has ")
           << n << " scales for axis " << axis << " of an input of shape ["
           << input.shape << "]";
  return success();
}

FailureOr<Tensor> runQuantizeLinear(top::QuantizeLinearOp op,
                                    const Tensor &input) {
  if (failed(checkParams(op, input)))
    return failure();
  ArrayRef<double> scale = op.getScale();
  ArrayRef<int64_t> zp = op.getZeroPoint();
  bool isUnsigned = op.getOutput().getType().getElementType().isUnsignedInteger();
  Tensor out{input.shape, std::vector<float>(input.data.size())};
  for (int64_t i = 0, e = input.data.size(); i < e; ++i) {
    int64_t c = top::quantChannel(input.shape, op.getAxis(), scale.size(), i);
    out.data[i] = top::quantizeValue(input.data[i], scale[c], zp[c], isUnsigned);
  }
  return out;
}

FailureOr<Tensor> runDequantizeLinear(top::DequantizeLinearOp op,
                                      const Tensor &input) {
  if (failed(checkParams(op, input)))
    return failure();
  ArrayRef<double> scale = op.getScale();
  ArrayRef<int64_t> zp = op.getZeroPoint();
  Tensor out{input.shape, std::vector<float>(input.data.size())};
  for (int64_t i = 0, e = input.data.size(); i < e; ++i) {
    int64_t c = top::quantChannel(input.shape, op.getAxis(), scale.size(), i);
    out.data[i] = top::dequantizeValue(input.data[i], scale[c], zp[c]);
  }
  return out;
}

} // namespace kiln::interp
