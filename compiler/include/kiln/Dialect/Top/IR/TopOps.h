#ifndef KILN_DIALECT_TOP_IR_TOPOPS_H
#define KILN_DIALECT_TOP_IR_TOPOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/Dialect/Top/IR/TopAttrs.h"
#include "kiln/Dialect/Top/IR/TopDialect.h.inc"
#include "kiln/Dialect/Top/IR/TopInterfaces.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Top/IR/TopOps.h.inc"

namespace kiln::top {
/// The float contents of a weight's value (dense or dense resource, f32 or
/// 8-bit integers, which read as their integer values).
std::vector<float> readWeight(WeightOp op);
/// A conv's filter and bias when both are weights (a missing bias reads as
/// zeros, one per output channel); false otherwise.
bool readFilterAndBias(ConvOp conv, std::vector<float> &filter, std::vector<float> &bias);
/// Erases the weights under `root` nothing reads any more (the ones a fold
/// replaced).
void eraseUnusedWeights(mlir::Operation *root);
/// Creates a top.weight holding `data` as a dense resource named after
/// `name` (made a bare identifier, as resource keys must be; the resource
/// manager makes it unique).
WeightOp createWeight(mlir::OpBuilder &b, mlir::Location loc,
                      llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<float> data,
                      llvm::StringRef name);
/// Creates a top.weight of 8-bit integers (a QDQ model's quantized data):
/// i8, or ui8 when `isUnsigned` (`data` holds the values, in range), as a
/// dense resource like createWeight.
WeightOp createInt8Weight(mlir::OpBuilder &b, mlir::Location loc,
                          llvm::ArrayRef<int64_t> shape,
                          llvm::ArrayRef<int64_t> data, bool isUnsigned,
                          llvm::StringRef name);
/// A bare-identifier resource key for tensor `name`: other characters
/// become '_' (the NameLoc keeps the original name).
std::string resourceKey(llvm::StringRef name);
/// The number of elements a normalized top.slice takes along one dimension.
int64_t sliceExtent(int64_t start, int64_t end, int64_t step);

/// ONNX QuantizeLinear of one value (float32 arithmetic, as ONNX Runtime):
/// saturate(round_half_to_even(x / scale) + zeroPoint) to [0, 255] when
/// `isUnsigned`, else [-128, 127].
float quantizeValue(float x, double scale, int64_t zeroPoint, bool isUnsigned);
/// ONNX DequantizeLinear of one value: (q - zeroPoint) * scale in float32.
float dequantizeValue(float q, double scale, int64_t zeroPoint);
/// Which scale/zero point element `flatIndex` of a tensor of `shape` uses:
/// 0 when there is one (per-tensor), else its index along `axis`.
int64_t quantChannel(llvm::ArrayRef<int64_t> shape, int64_t axis,
                     size_t numScales, int64_t flatIndex);
} // namespace kiln::top

#endif
