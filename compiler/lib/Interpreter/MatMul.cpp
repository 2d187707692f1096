//===- MatMul.cpp - Reference matrix product (MatMul and Gemm) ------------===//

#include "Kernels.h"

using namespace mlir;

namespace kiln::interp {

FailureOr<Tensor> runMatMul(top::MatMulOp op, const Tensor &input,
                            const Tensor &right, const Tensor *bias) {
  if (input.shape.size() < 2 || right.shape.size() != 2)
    return op.emitOpError("expects input [.., m, k] and a 2-D right operand");
  bool transpose = op.getRightTranspose();
  int64_t k = input.shape.back();
  int64_t rightK = transpose ? right.shape[1] : right.shape[0];
  int64_t n = transpose ? right.shape[0] : right.shape[1];
  if (rightK != k)
    return op.emitOpError("input [")
           << input.shape << "] and right [" << right.shape
           << "] differ in the inner dimension";

  // Every leading dimension of the input is a row: right is shared.
  int64_t rows = product(ArrayRef<int64_t>(input.shape).drop_back());
  Tensor out{input.shape, {}};
  out.shape.back() = n;
  out.data.reserve(rows * n);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t i = 0; i < k; ++i) {
        float w = transpose ? right.data[j * k + i] : right.data[i * n + j];
        acc += double(input.data[r * k + i]) * w;
      }
      out.data.push_back(float(acc));
    }

  if (bias) {
    // Numpy broadcasting covers Gemm's C of shape [n], [1, n] or [m, n].
    FailureOr<Tensor> withBias =
        runBroadcast(op, out, *bias, [](float a, float b) { return a + b; });
    if (failed(withBias))
      return failure();
    if (withBias->shape != out.shape)
      return op.emitOpError("bias [")
             << bias->shape << "] would grow the result [" << out.shape << "]";
    out = std::move(*withBias);
  }
  if (op.getDoRelu())
    for (float &v : out.data)
      v = relu(v);
  return out;
}

} // namespace kiln::interp
