//===- QuantHelpers.h - QDQ models in Top-to-Tpu lowering -------*- C++ -*-===//
//
// QDQ models carry INT8 weights as dequantize_linear(top.weight i8/ui8) (or,
// before top-fold-quantize-constants, dequantize_linear(quantize_linear(
// top.weight f32))). QuantLowering.cpp lowers quantize/dequantize; INT8 conv
// lowering asks weightQuantization for the model's own integers and scales.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_CONVERSION_TOPTOTPU_QUANTHELPERS_H
#define KILN_LIB_CONVERSION_TOPTOTPU_QUANTHELPERS_H

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "mlir/IR/PatternMatch.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::tpu {

/// Lowers top.quantize_linear / top.dequantize_linear (registered in
/// TopToTpu.cpp):
/// - quantize_linear of an activation: tpu.cast f32 -> !quant.uniform<i8:f32,
///   scale:zp> (uint8 zero points become int8: zp - 128; per-tensor only);
/// - dequantize_linear of such a value: tpu.cast quant -> f32;
/// - dequantize_linear of a weight: an f32 top.weight at compile time, after
///   its users when waitsForInt8Users.
void populateQuantLowering(mlir::RewritePatternSet &patterns);

/// Whether a weight's dequantize_linear has a user that is a Top op running
/// in INT8 (kiln.dtype = #top.dtype<int8>) and weightQuantization accepts it: then it
/// is lowered after its users, whose lowering sees a computed value.
bool waitsForInt8Users(top::DequantizeLinearOp dq);

/// A QDQ model's quantized weight: symmetric INT8, per output channel.
struct WeightQuantization {
  /// Row-major values of the weight's shape (uint8 data shifted to int8).
  std::vector<int8_t> data;
  /// One scale per slice of dimension 0 (a per-tensor scale repeated).
  std::vector<double> scales;
  llvm::SmallVector<int64_t> shape;
  /// The dequantize_linear `filter` is the result of.
  top::DequantizeLinearOp dequantize;
};

/// For `filter` = dequantize_linear(top.weight i8/ui8) or
/// dequantize_linear(quantize_linear(top.weight f32)), per-tensor or per-axis
/// along dimension 0, with every zero point 0 (int8) or 128 (uint8): the
/// integers and per-channel scales, so filter ≈ data[i] * scales[channel].
/// nullopt for anything else (a float weight, a computed filter, another
/// axis, asymmetric zero points).
std::optional<WeightQuantization> weightQuantization(mlir::Value filter);

} // namespace kiln::tpu

#endif
