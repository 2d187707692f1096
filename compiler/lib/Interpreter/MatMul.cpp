//===- MatMul.cpp - Reference matrix product (MatMul and Gemm) ------------===//

#include "Kernels.h"
#include "kiln/Support/ShapeRules.h"

using namespace mlir;

namespace kiln::interp {

FailureOr<Tensor> runMatMul(top::MatMulOp op, const Tensor &input,
                            const Tensor &right, const Tensor *bias) {
  size_t rankA = input.shape.size(), rankB = right.shape.size();
  bool transpose = op.getRightTranspose();
  if (rankA < 2 || rankB < 2 || (transpose && rankB != 2))
    return op.emitOpError("expects input [.., m, k] and right [.., k, n] "
                          "(2-D when transposed)");
  int64_t m = input.shape[rankA - 2], k = input.shape.back();
  int64_t rightK = transpose ? right.shape[1] : right.shape[rankB - 2];
  int64_t n = transpose ? right.shape[0] : right.shape.back();
  if (rightK != k)
    return op.emitOpError("input [")
           << input.shape << "] and right [" << right.shape
           << "] differ in the inner dimension";

  // Batch dimensions broadcast as in numpy.matmul.
  ArrayRef<int64_t> batchA = ArrayRef<int64_t>(input.shape).drop_back(2);
  ArrayRef<int64_t> batchB = ArrayRef<int64_t>(right.shape).drop_back(2);
  size_t bad = 0;
  auto broadcast = kiln::broadcastShapes(batchA, batchB, bad);
  if (!broadcast)
    return op.emitOpError("batch dimensions of [")
           << input.shape << "] and [" << right.shape << "] do not broadcast";
  std::vector<int64_t> batch(broadcast->begin(), broadcast->end());
  /// The flat matrix index of `index` in a batch of shape `own`.
  auto matrixOf = [&](ArrayRef<int64_t> own, ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (size_t d = 0; d < own.size(); ++d) {
      int64_t i = index[d + batch.size() - own.size()];
      flat = flat * own[d] + (own[d] == 1 ? 0 : i);
    }
    return flat;
  };

  Tensor out{batch, {}};
  out.shape.push_back(m);
  out.shape.push_back(n);
  out.data.reserve(out.numElements());
  forEachIndex(batch, [&](ArrayRef<int64_t> index) {
    const float *a = input.data.data() + matrixOf(batchA, index) * m * k;
    const float *b = right.data.data() + matrixOf(batchB, index) * k * n;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t i = 0; i < k; ++i)
          acc +=
              double(a[r * k + i]) * (transpose ? b[j * k + i] : b[i * n + j]);
        out.data.push_back(float(acc));
      }
  });

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
