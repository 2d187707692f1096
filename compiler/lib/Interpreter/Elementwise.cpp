//===- Elementwise.cpp - Reference relu, broadcast binaries, batchnorm ----===//

#include "Kernels.h"

#include "llvm/ADT/SmallVector.h"

#include <cmath>

using namespace mlir;

namespace kiln::interp {

Tensor runRelu(const Tensor &input) {
  Tensor out{input.shape, input.data};
  for (float &v : out.data)
    v = relu(v);
  return out;
}

/// Row-major strides of `shape` aligned to the last `rank` dimensions, with
/// stride 0 along broadcast (size-1 or missing) dimensions.
static llvm::SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> shape,
                                                   size_t rank) {
  llvm::SmallVector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t dim = shape.size() - 1 - i;
    if (shape[dim] != 1)
      strides[rank - 1 - i] = stride;
    stride *= shape[dim];
  }
  return strides;
}

FailureOr<Tensor> runBroadcast(Operation *op, const Tensor &lhs,
                               const Tensor &rhs,
                               llvm::function_ref<float(float, float)> fn) {
  size_t rank = std::max(lhs.shape.size(), rhs.shape.size());
  Tensor out{std::vector<int64_t>(rank), {}};
  for (size_t i = 0; i < rank; ++i) {
    size_t offL = rank - lhs.shape.size(), offR = rank - rhs.shape.size();
    int64_t l = i < offL ? 1 : lhs.shape[i - offL];
    int64_t r = i < offR ? 1 : rhs.shape[i - offR];
    if (l != r && l != 1 && r != 1)
      return op->emitOpError("operands [")
             << lhs.shape << "] and [" << rhs.shape << "] do not broadcast";
    out.shape[i] = l == 1 ? r : l;
  }
  llvm::SmallVector<int64_t> strideL = broadcastStrides(lhs.shape, rank);
  llvm::SmallVector<int64_t> strideR = broadcastStrides(rhs.shape, rank);

  int64_t count = out.numElements();
  out.data.reserve(count);
  llvm::SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offL = 0, offR = 0;
    for (size_t d = 0; d < rank; ++d) {
      offL += index[d] * strideL[d];
      offR += index[d] * strideR[d];
    }
    out.data.push_back(fn(lhs.data[offL], rhs.data[offR]));
    // Advance the multi-index like an odometer, last dimension fastest.
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out.shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// A broadcast binary op followed by its optional fused ReLU.
template <typename BinaryOp>
static FailureOr<Tensor> runBinary(BinaryOp op, const Tensor &lhs,
                                   const Tensor &rhs,
                                   float (*fn)(float, float)) {
  FailureOr<Tensor> out = runBroadcast(op, lhs, rhs, fn);
  if (succeeded(out) && op.getDoRelu())
    for (float &v : out->data)
      v = relu(v);
  return out;
}

FailureOr<Tensor> runAdd(top::AddOp op, const Tensor &lhs, const Tensor &rhs) {
  return runBinary(op, lhs, rhs, [](float a, float b) { return a + b; });
}

FailureOr<Tensor> runMul(top::MulOp op, const Tensor &lhs, const Tensor &rhs) {
  return runBinary(op, lhs, rhs, [](float a, float b) { return a * b; });
}

FailureOr<Tensor> runBatchNorm(top::BatchNormOp op, const Tensor &input,
                               const Tensor &scale, const Tensor &bias,
                               const Tensor &mean, const Tensor &variance) {
  if (input.shape.size() < 2)
    return op.emitOpError("expects an [N, C, ...] input");
  int64_t channels = input.shape[1];
  for (const Tensor *param : {&scale, &bias, &mean, &variance})
    if (param->numElements() != channels)
      return op.emitOpError("parameters must have ")
             << channels << " elements, one per channel";
  int64_t planeSize = product(ArrayRef<int64_t>(input.shape).drop_front(2));
  double epsilon = op.getEpsilon().convertToDouble();
  Tensor out{input.shape, {}};
  out.data.reserve(input.data.size());
  for (int64_t i = 0, e = input.numElements(); i < e; ++i) {
    int64_t c = (i / planeSize) % channels;
    double normalized = (double(input.data[i]) - mean.data[c]) /
                        std::sqrt(double(variance.data[c]) + epsilon);
    out.data.push_back(float(normalized * scale.data[c] + bias.data[c]));
  }
  return out;
}

} // namespace kiln::interp
