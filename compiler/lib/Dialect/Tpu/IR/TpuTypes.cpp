//===- TpuTypes.cpp - Element types of Tpu IR as the chip sees them -------===//

#include "kiln/Dialect/Tpu/IR/TpuTypes.h"

#include "mlir/Dialect/Quant/QuantTypes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace kiln::tpu {

static Type elementOf(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.getElementType();
  return type;
}

std::optional<kiln_dtype> dtypeOf(Type type) {
  Type e = elementOf(type);
  if (auto q = dyn_cast<quant::QuantizedType>(e)) {
    unsigned width = q.getStorageTypeIntegralWidth();
    if (width == 8)
      return q.isSigned() ? KILN_DTYPE_INT8 : KILN_DTYPE_UINT8;
    if (width == 16 && q.isSigned())
      return KILN_DTYPE_INT16;
    if (width == 32 && q.isSigned())
      return KILN_DTYPE_INT32;
    return std::nullopt;
  }
  if (e.isF32())
    return KILN_DTYPE_F32;
  if (e.isF16())
    return KILN_DTYPE_F16;
  if (e.isBF16())
    return KILN_DTYPE_BF16;
  if (auto i = dyn_cast<IntegerType>(e)) {
    bool isUnsigned = i.isUnsigned();
    switch (i.getWidth()) {
    case 8:
      return isUnsigned ? KILN_DTYPE_UINT8 : KILN_DTYPE_INT8;
    case 16:
      return isUnsigned ? std::nullopt : std::optional(KILN_DTYPE_INT16);
    case 32:
      return isUnsigned ? std::nullopt : std::optional(KILN_DTYPE_INT32);
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

kiln_dtype dtypeOrF32(Type type) { return dtypeOf(type).value_or(KILN_DTYPE_F32); }

uint32_t elementBytes(Type type) { return kiln_dtype_bytes(dtypeOrF32(type)); }

uint64_t tensorBytes(Type type) {
  auto shaped = cast<ShapedType>(type);
  return (uint64_t)shaped.getNumElements() * elementBytes(type);
}

QuantParams quantParamsOf(Type type) {
  QuantParams p;
  if (auto q = dyn_cast<quant::UniformQuantizedType>(elementOf(type))) {
    p.scale = q.getScale();
    p.zeroPoint = q.getZeroPoint();
  }
  return p;
}

bool isQuantType(Type type) { return isa<quant::QuantizedType>(elementOf(type)); }

bool isInt8Type(Type type) {
  auto d = dtypeOf(type);
  return d && (*d == KILN_DTYPE_INT8 || *d == KILN_DTYPE_UINT8);
}

} // namespace kiln::tpu
