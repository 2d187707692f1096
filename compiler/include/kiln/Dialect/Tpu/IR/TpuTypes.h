//===- TpuTypes.h - Element types of Tpu IR as the chip sees them -*- C++ -*-===//
//
// Tpu IR carries dtypes in tensor element types (docs/precision.md): f32, f16,
// bf16, i32, i8 and the quant dialect's uniform types. These helpers map them
// to firmware-abi's kiln_dtype, element sizes and per-tensor quantization, so
// every place that sizes or encodes a tensor agrees.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_TPU_IR_TPUTYPES_H
#define KILN_DIALECT_TPU_IR_TPUTYPES_H

#include "kiln/abi/chip.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>

namespace kiln::tpu {

/// The kiln_dtype of an element type, or of a shaped type's element type:
/// f32, f16, bf16, i32 (signless or signed), i8 (signless or signed), ui8,
/// i16, and a quant type's storage type (per-tensor and per-axis alike).
/// nullopt for anything else (index, f64, i64, none, ...).
std::optional<kiln_dtype> dtypeOf(mlir::Type type);
/// dtypeOf(type), F32 when the type has no chip dtype.
kiln_dtype dtypeOrF32(mlir::Type type);
inline kiln_dtype dtypeOrF32(mlir::Value v) { return dtypeOrF32(v.getType()); }

/// Bytes of one element (kiln_dtype_bytes of dtypeOf); 4 when the type has
/// no chip dtype.
uint32_t elementBytes(mlir::Type type);
inline uint32_t elementBytes(mlir::Value v) { return elementBytes(v.getType()); }

/// Bytes of a ranked tensor with a static shape (elements * elementBytes).
uint64_t tensorBytes(mlir::Type type);
inline uint64_t tensorBytes(mlir::Value v) { return tensorBytes(v.getType()); }

/// Per-tensor quantization: scale and zero point of a
/// !quant.uniform<i8:f32, S:Z> element type (of a shaped type or itself).
/// Anything else, per-axis quant types included, gives {1.0, 0}.
struct QuantParams {
  double scale = 1.0;
  int64_t zeroPoint = 0;
};
QuantParams quantParamsOf(mlir::Type type);
inline QuantParams quantParamsOf(mlir::Value v) { return quantParamsOf(v.getType()); }

/// Whether the (element) type is a quant dialect type.
bool isQuantType(mlir::Type type);
/// Whether the (element) type is INT8 data: an i8/ui8 or a quant type.
bool isInt8Type(mlir::Type type);

} // namespace kiln::tpu

#endif
