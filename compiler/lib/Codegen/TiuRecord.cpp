//===- TiuRecord.cpp - The op-specific part of a TIU record ---------------===//

#include "kiln/Codegen/TiuRecord.h"

#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/Schedule.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/quant.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>

using namespace mlir;
using namespace kiln;

namespace {

LogicalResult describeOperand(Operation *op, int operandNumber, kiln_tiu_operand &o) {
  Value v = operandNumber < 0 ? op->getResult(0) : op->getOperand(operandNumber);
  auto dtype = tpu::dtypeOf(v.getType());
  if (!dtype)
    return op->emitError("codegen: no chip dtype for ") << v.getType();
  std::array<int64_t, 4> shape = lg::lmemShapeOf(op, operandNumber);
  for (int64_t d : shape)
    if (d < 0 || d > 0xffff)
      return op->emitError("codegen: operand dimension ")
             << d << " does not fit a TIU record (at most 65535)";
  o = kiln_tiu_operand{};
  o.n = shape[0];
  o.c = shape[1];
  o.h = shape[2];
  o.w = shape[3];
  o.dtype = *dtype;
  o.flags = KILN_OPND_USED;
  return success();
}

int64_t zeroPointOf(Value v) {
  return tpu::isInt8Type(v.getType()) ? tpu::quantParamsOf(v.getType()).zeroPoint : 0;
}

/// aux[0] = m0, aux[1] = m1, aux[3] = rshift from the op's `quant`.
LogicalResult setQuant(Operation *op, tpu::RequantAttr quant, kiln_tiu_cmd &c) {
  if (!quant)
    return op->emitError("codegen: INT8 op needs its `quant` attribute");
  c.aux[0] = (uint32_t)quant.getM0();
  c.aux[1] = (uint32_t)quant.getM1();
  c.aux[3] = (uint32_t)quant.getRshift();
  return success();
}

void setWindow(kiln_tiu_cmd &c, ArrayRef<int64_t> k, ArrayRef<int64_t> st,
               ArrayRef<int64_t> pads) {
  c.kh = k[0];
  c.kw = k[1];
  c.stride_h = st[0];
  c.stride_w = st[1];
  c.dil_h = c.dil_w = 1;
  c.pad_top = pads[0];
  c.pad_left = pads[1];
  c.pad_bottom = pads[2];
  c.pad_right = pads[3];
}

} // namespace

LogicalResult codegen::fillTiuRecord(Operation *op, kiln_tiu_cmd &c) {
  uint32_t cmdId = c.cmd_id, wait = c.wait_gdma_id;
  c = kiln_tiu_cmd{};
  c.cmd_id = cmdId;
  c.wait_gdma_id = wait;
  if (!op->hasTrait<tpu::RunsOnTiu>())
    return op->emitError("codegen: not a TIU op");
  if (failed(describeOperand(op, -1, c.out)))
    return failure();
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    if (isa<NoneType>(v.getType()))
      continue;
    kiln_tiu_operand *slot = lg::tiuOperandSlot(c, i);
    if (!slot)
      return op->emitError("codegen: too many operands for a TIU record");
    if (failed(describeOperand(op, i, *slot)))
      return failure();
  }
  Value in0 = op->getOperand(0), out = op->getResult(0);
  bool int8 = tpu::isInt8Type(in0.getType()) || tpu::isInt8Type(out.getType());
  int64_t zpIn0 = zeroPointOf(in0), zpOut = zeroPointOf(out);
  bool relu = false;

  if (auto conv = dyn_cast<tpu::Conv2DOp>(op)) {
    c.op = KILN_TIU_CONV;
    setWindow(c, conv.getKernelShape(), conv.getStrides(), conv.getPads());
    c.dil_h = conv.getDilations()[0];
    c.dil_w = conv.getDilations()[1];
    c.groups = conv.getGroup();
    if (c.in2.flags & KILN_OPND_USED)
      c.flags |= KILN_TIU_FLAG_HAS_BIAS;
    // One input channel per output channel: the chip's depthwise datapath.
    if (c.groups > 1 && c.groups == c.in0.c && c.out.c == c.in0.c)
      c.flags |= KILN_TIU_FLAG_DEPTHWISE;
    relu = conv.getDoRelu();
    if (int8) {
      if (!(c.in2.flags & KILN_OPND_USED) || c.in2.dtype != KILN_DTYPE_INT32 ||
          c.in2.w != 3)
        return op->emitError("codegen: INT8 conv needs its tensor<oc x 3 x i32> requant table");
      c.aux[2] = kiln_pack_zero_points(zpIn0, 0, zpOut);
    }
  } else if (auto deconv = dyn_cast<tpu::Deconv2DOp>(op)) {
    c.op = KILN_TIU_DECONV;
    setWindow(c, deconv.getKernelShape(), deconv.getStrides(), deconv.getPads());
    c.pad_bottom = 0;
    c.pad_right = 0;
    c.dil_h = deconv.getDilations()[0];
    c.dil_w = deconv.getDilations()[1];
    c.groups = deconv.getGroup();
    if (c.in2.flags & KILN_OPND_USED)
      c.flags |= KILN_TIU_FLAG_HAS_BIAS;
    relu = deconv.getDoRelu();
    if (int8) {
      if (!(c.in2.flags & KILN_OPND_USED) || c.in2.dtype != KILN_DTYPE_INT32 ||
          c.in2.w != 3)
        return op->emitError("codegen: INT8 deconv needs its tensor<oc x 3 x i32> requant table");
      c.aux[2] = kiln_pack_zero_points(zpIn0, 0, zpOut);
    }
  } else if (auto pool = dyn_cast<tpu::Pool2DOp>(op)) {
    c.op = KILN_TIU_POOL;
    // PoolKind values are firmware-abi's kiln_pool_kind.
    c.subop = static_cast<uint16_t>(pool.getKind());
    setWindow(c, pool.getKernelShape(), pool.getStrides(), pool.getPads());
    if (pool.getCountIncludePad())
      c.flags |= KILN_TIU_FLAG_COUNT_INCLUDE_PAD;
    relu = pool.getDoRelu();
    if (int8) {
      bool minMax = pool.getKind() == tpu::PoolKind::Max ||
                    pool.getKind() == tpu::PoolKind::Min;
      if (!minMax && failed(setQuant(op, pool.getQuantAttr(), c)))
        return failure();
      c.aux[2] = kiln_pack_zero_points(zpIn0, 0, zpOut);
    }
  } else if (auto elt = dyn_cast<tpu::EltwiseOp>(op)) {
    c.op = KILN_TIU_ELTWISE;
    c.subop = static_cast<uint16_t>(elt.getKind());
    relu = elt.getDoRelu();
    if (int8) {
      if (failed(setQuant(op, elt.getQuantAttr(), c)))
        return failure();
      c.aux[2] = kiln_pack_zero_points(zpIn0, zeroPointOf(elt.getRhs()), zpOut);
    }
  } else if (auto resize = dyn_cast<tpu::ResizeOp>(op)) {
    c.op = KILN_TIU_RESIZE;
    // The modes' values are firmware-abi's (TopAttrs.td).
    c.subop = uint32_t(resize.getMode()) | uint32_t(resize.getCoordMode()) << 4 |
              uint32_t(resize.getNearestMode()) << 8;
    c.param[0] = resize.getScales()[0];
    c.param[1] = resize.getScales()[1];
    // An axis whose scale is exactly out / in of its full lengths (sizes):
    // nearest computes ties exactly (commands.h, KILN_RESIZE_EXACT_*).
    auto inShape = cast<ShapedType>(resize.getInput().getType()).getShape();
    auto outShape = cast<ShapedType>(resize.getType()).getShape();
    if (inShape.size() == 4 && outShape.size() == 4) {
      if (resize.getScales()[0] == double(outShape[2]) / double(inShape[2]))
        c.subop |= KILN_RESIZE_EXACT_H;
      if (resize.getScales()[1] == double(outShape[3]) / double(inShape[3]))
        c.subop |= KILN_RESIZE_EXACT_W;
    }
  } else if (auto active = dyn_cast<tpu::ActiveOp>(op)) {
    c.op = KILN_TIU_ACTIVE;
    c.subop = uint32_t(active.getMode());
    if (int8) {
      if (!active.getTable())
        return op->emitError("codegen: INT8 active needs its 256-entry table");
      if (c.in1.dtype != KILN_DTYPE_INT8 || (uint32_t)c.in1.n * c.in1.c * c.in1.h * c.in1.w != 256)
        return op->emitError("codegen: the INT8 active table must be 256 INT8 values");
    } else {
      if (active.getTable())
        return op->emitError("codegen: a table is for INT8 actives only");
      c.param[0] = active.getAlpha().convertToDouble();
      c.param[1] = active.getBeta().convertToDouble();
    }
  } else if (isa<tpu::ReluOp>(op)) {
    c.op = KILN_TIU_ACTIVE;
    c.subop = KILN_ACT_RELU;
    if (int8)
      return op->emitError(
          "codegen: INT8 relu runs as tpu.active with a table (or a fused do_relu)");
  } else if (auto cast = dyn_cast<tpu::CastOp>(op)) {
    c.op = KILN_TIU_CAST;
    bool qIn = tpu::isInt8Type(in0.getType()), qOut = tpu::isInt8Type(out.getType());
    if (qIn && qOut) {
      if (failed(setQuant(op, cast.getQuantAttr(), c)))
        return failure();
      c.aux[1] = 0;
      c.aux[2] = kiln_pack_zero_points(zpIn0, 0, zpOut);
    } else if (qOut) {
      c.param[0] = tpu::quantParamsOf(out.getType()).scale;
      c.aux[2] = kiln_pack_zero_points(0, 0, zpOut);
    } else if (qIn) {
      c.param[0] = tpu::quantParamsOf(in0.getType()).scale;
      c.aux[2] = kiln_pack_zero_points(zpIn0, 0, 0);
    }
    if ((qIn || qOut) && !(qIn && qOut) && !(c.param[0] > 0.f))
      return op->emitError("codegen: cast needs a per-tensor quant type with a positive scale");
  }
  if (relu)
    c.flags |= KILN_TIU_FLAG_RELU;
  return success();
}

//===----------------------------------------------------------------------===//
// Weight bytes
//===----------------------------------------------------------------------===//

namespace {

void put(std::vector<uint8_t> &out, size_t i, uint32_t bytes, uint64_t bits) {
  std::memcpy(out.data() + i * bytes, &bits, bytes); // little-endian host
}

/// One float in the dtype's bits.
std::optional<uint64_t> floatBits(kiln_dtype dtype, float x) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return kiln_f32_bits(x);
  case KILN_DTYPE_F16:
    return kiln_f32_to_f16(x);
  case KILN_DTYPE_BF16:
    return kiln_f32_to_bf16(x);
  default:
    return std::nullopt;
  }
}

} // namespace

FailureOr<std::vector<uint8_t>> codegen::weightBytes(top::WeightOp w) {
  auto type = cast<RankedTensorType>(w.getOutput().getType());
  auto dtype = tpu::dtypeOf(type);
  if (!dtype || !type.hasStaticShape())
    return w.emitError("codegen: weight type ") << type << " has no chip dtype";
  uint32_t bytes = kiln_dtype_bytes(*dtype);
  size_t count = type.getNumElements();
  std::vector<uint8_t> out(count * bytes, 0);
  ElementsAttr value = w.getValue();
  Type attrElem = value.getElementType();
  auto attrDtype = tpu::dtypeOf(attrElem);
  auto isIntDtype = [](kiln_dtype d) {
    return d == KILN_DTYPE_INT8 || d == KILN_DTYPE_UINT8 || d == KILN_DTYPE_INT16 ||
           d == KILN_DTYPE_INT32;
  };
  // Integer data into an integer (or quant) type of the same width, or float
  // data of the very same format: the raw bytes are the chip's.
  bool sameBits = attrDtype && (isa<IntegerType>(attrElem)
                                    ? isIntDtype(*dtype) && kiln_dtype_bytes(*attrDtype) == bytes
                                    : *attrDtype == *dtype);
  if ((size_t)value.getNumElements() != count)
    return w.emitError("codegen: weight holds ")
           << value.getNumElements() << " values for " << type;

  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return w.emitError("codegen: weight resource has no data");
    ArrayRef<char> raw = blob->getData();
    if (sameBits && raw.size() == out.size()) {
      std::memcpy(out.data(), raw.data(), raw.size());
      return out;
    }
    if (attrElem.isF32() && raw.size() == count * 4) {
      for (size_t i = 0; i < count; ++i) {
        float x;
        std::memcpy(&x, raw.data() + i * 4, 4);
        auto bits = floatBits(*dtype, x);
        if (!bits)
          return w.emitError("codegen: cannot convert f32 weight data to ") << type;
        put(out, i, bytes, *bits);
      }
      return out;
    }
    return w.emitError("codegen: cannot read weight resource data for ") << type;
  }

  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return w.emitError("codegen: weight data is neither dense nor a dense resource");
  if (sameBits && attrElem.getIntOrFloatBitWidth() == bytes * 8) {
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      for (size_t i = 0; i < count; ++i)
        std::memcpy(out.data() + i * bytes, raw.data(), bytes);
      return out;
    }
    if (raw.size() == out.size()) {
      std::memcpy(out.data(), raw.data(), raw.size());
      return out;
    }
  }
  if (isa<FloatType>(attrElem)) {
    size_t i = 0;
    for (APFloat x : dense.getValues<APFloat>()) {
      bool loses;
      x.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &loses);
      auto bits = floatBits(*dtype, x.convertToFloat());
      if (!bits)
        return w.emitError("codegen: cannot convert float weight data to ") << type;
      put(out, i++, bytes, *bits);
    }
    return out;
  }
  if (isa<IntegerType>(attrElem) && !isa<FloatType>(type.getElementType())) {
    size_t i = 0;
    for (const APInt &x : dense.getValues<APInt>())
      put(out, i++, bytes, x.getZExtValue() & (bytes == 8 ? ~0ull : (1ull << (bytes * 8)) - 1));
    return out;
  }
  return w.emitError("codegen: cannot convert weight data ") << attrElem << " to " << type;
}

std::optional<kiln_tiu_cmd> codegen::tryTiuRecord(Operation *op) {
  ScopedDiagnosticHandler quiet(op->getContext(), [](Diagnostic &) { return success(); });
  kiln_tiu_cmd cmd{};
  if (failed(fillTiuRecord(op, cmd)))
    return std::nullopt;
  return cmd;
}

std::optional<std::vector<kiln_tiu_cmd>> codegen::tryTiuRecords(ArrayRef<Operation *> ops) {
  std::vector<kiln_tiu_cmd> records;
  for (Operation *op : ops) {
    std::optional<kiln_tiu_cmd> record = tryTiuRecord(op);
    if (!record)
      return std::nullopt;
    records.push_back(*record);
  }
  return records;
}
