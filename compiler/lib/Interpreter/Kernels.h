//===- Kernels.h - Float32 reference kernels of the Top interpreter -------===//
//
// One function per op family. Each checks its operands' shapes, emits a
// diagnostic at the op when they are inconsistent, and otherwise computes the
// result with plain loops. Sums accumulate in double so the reference is at
// least as accurate as anything it is compared with.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_INTERPRETER_KERNELS_H
#define KILN_LIB_INTERPRETER_KERNELS_H

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Interpreter/TopInterpreter.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace kiln::interp {

/// ReLU that lets NaN through, so a NaN is never hidden as a zero.
inline float relu(float x) { return x < 0 ? 0.0f : x; }

/// The product of `dims` (1 for a scalar).
int64_t product(llvm::ArrayRef<int64_t> dims);

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape);

/// Calls `fn(index)` for every multi-index of `shape` in row-major order.
void forEachIndex(llvm::ArrayRef<int64_t> shape,
                  llvm::function_ref<void(llvm::ArrayRef<int64_t>)> fn);

/// Output extent of a sliding window as ONNX defines it: floor or ceil of
/// (in + pads - dilated kernel) / stride, plus one. With ceil_mode a window
/// that would start in the end padding is dropped (ONNX and PyTorch agree).
int64_t windowOutput(int64_t in, int64_t kernel, int64_t stride,
                     int64_t dilation, int64_t padBegin, int64_t padEnd,
                     bool ceilMode);

// Conv.cpp
mlir::FailureOr<Tensor> runConv(top::ConvOp op, const Tensor &input,
                                const Tensor &filter, const Tensor *bias);
/// Reads the filter in either layout (per filter_reordered) when it runs.
mlir::FailureOr<Tensor> runDeconv(top::DeconvOp op, const Tensor &input,
                                  const Tensor &filter, const Tensor *bias);

// Pool.cpp
mlir::FailureOr<Tensor> runMaxPool(top::MaxPoolOp op, const Tensor &input);
mlir::FailureOr<Tensor> runAvgPool(top::AvgPoolOp op, const Tensor &input);
mlir::FailureOr<Tensor> runGlobalAvgPool(top::GlobalAvgPoolOp op,
                                         const Tensor &input);
mlir::FailureOr<Tensor> runGlobalMaxPool(top::GlobalMaxPoolOp op,
                                         const Tensor &input);

// Elementwise.cpp
Tensor runRelu(const Tensor &input);
/// Applies `fn` under multidirectional (numpy) broadcasting.
mlir::FailureOr<Tensor>
runBroadcast(mlir::Operation *op, const Tensor &lhs, const Tensor &rhs,
             llvm::function_ref<float(float, float)> fn);
/// Any Top binary op (add, sub, mul, div, pow, max, min, prelu) with its
/// optional fused ReLU.
mlir::FailureOr<Tensor> runBinary(mlir::Operation *op, const Tensor &lhs,
                                  const Tensor &rhs);
mlir::FailureOr<Tensor> runActive(top::ActiveOp op, const Tensor &input);
mlir::FailureOr<Tensor> runBatchNorm(top::BatchNormOp op, const Tensor &input,
                                     const Tensor &scale, const Tensor &bias,
                                     const Tensor &mean,
                                     const Tensor &variance);

// MatMul.cpp
mlir::FailureOr<Tensor> runMatMul(top::MatMulOp op, const Tensor &input,
                                  const Tensor &right, const Tensor *bias);

// Reduce.cpp
mlir::FailureOr<Tensor> runReduce(top::ReduceOp op, const Tensor &input);
mlir::FailureOr<Tensor> runSoftmax(top::SoftmaxOp op, const Tensor &input);

// Shape.cpp
mlir::FailureOr<Tensor> runReshape(top::ReshapeOp op, const Tensor &input);
mlir::FailureOr<Tensor> runConcat(top::ConcatOp op,
                                  llvm::ArrayRef<const Tensor *> inputs);
mlir::FailureOr<Tensor> runTranspose(top::TransposeOp op, const Tensor &input);
mlir::FailureOr<Tensor> runSlice(top::SliceOp op, const Tensor &input);
mlir::FailureOr<Tensor> runGather(top::GatherOp op, const Tensor &input);
mlir::FailureOr<Tensor> runExpand(top::ExpandOp op, const Tensor &input);
mlir::FailureOr<Tensor> runPad(top::PadOp op, const Tensor &input);

// Resize.cpp
mlir::FailureOr<Tensor> runResize(top::ResizeOp op, const Tensor &input);

// Quant.cpp (quantized values are held as floats)
mlir::FailureOr<Tensor> runQuantizeLinear(top::QuantizeLinearOp op,
                                          const Tensor &input);
mlir::FailureOr<Tensor> runDequantizeLinear(top::DequantizeLinearOp op,
                                            const Tensor &input);

} // namespace kiln::interp

#endif // KILN_LIB_INTERPRETER_KERNELS_H
