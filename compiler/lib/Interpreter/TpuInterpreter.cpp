//===- TpuInterpreter.cpp - Runs typed Tpu IR on the cmodel's kernels -----===//

#include "kiln/Interpreter/TpuInterpreter.h"

#include "kiln/Codegen/TiuRecord.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/Schedule.h"
#include "kiln/Support/Names.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/quant.h"
#include "kiln/chip/tiu_kernels.h"

#include "mlir/Dialect/Quant/QuantTypes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace kiln;
using namespace kiln::interp;

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

namespace {

/// Scale and zero point of element i of a tensor of `type` (per-axis quant
/// types by the element's channel).
std::pair<float, int32_t> quantOf(RankedTensorType type, int64_t i) {
  Type e = type.getElementType();
  if (auto q = dyn_cast<quant::UniformQuantizedType>(e))
    return {(float)q.getScale(), (int32_t)q.getZeroPoint()};
  if (auto q = dyn_cast<quant::UniformQuantizedPerAxisType>(e)) {
    int32_t dim = q.getQuantizedDimension();
    int64_t inner = 1;
    for (int64_t d = dim + 1; d < type.getRank(); ++d)
      inner *= type.getDimSize(d);
    int64_t ch = (i / inner) % type.getDimSize(dim);
    return {(float)q.getScales()[ch], (int32_t)q.getZeroPoints()[ch]};
  }
  return {1.f, 0};
}

int64_t saturate(double x, int64_t lo, int64_t hi) {
  if (std::isnan(x))
    return 0;
  x = std::nearbyint(x); // the default rounding mode: half to even
  return x < (double)lo ? lo : x > (double)hi ? hi : (int64_t)x;
}

} // namespace

Tensor kiln::interp::toF32(const RawTensor &t) {
  Tensor out;
  out.shape = t.type.getShape().vec();
  int64_t count = t.type.getNumElements();
  out.data.resize(count);
  kiln_dtype dtype = tpu::dtypeOrF32(t.type);
  bool quant = tpu::isQuantType(t.type);
  const uint8_t *p = t.bytes.data();
  for (int64_t i = 0; i < count; ++i) {
    float v = 0.f;
    switch (dtype) {
    case KILN_DTYPE_F32:
      std::memcpy(&v, p + i * 4, 4);
      break;
    case KILN_DTYPE_F16: {
      uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      v = kiln_f16_to_f32(h);
      break;
    }
    case KILN_DTYPE_BF16: {
      uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      v = kiln_bf16_to_f32(h);
      break;
    }
    case KILN_DTYPE_INT8:
    case KILN_DTYPE_UINT8: {
      int32_t q = dtype == KILN_DTYPE_INT8 ? (int32_t)(int8_t)p[i] : (int32_t)p[i];
      if (quant) {
        auto [scale, zp] = quantOf(t.type, i);
        v = kiln_dequantize_i8(q, scale, zp);
      } else {
        v = (float)q;
      }
      break;
    }
    case KILN_DTYPE_INT16: {
      int16_t x;
      std::memcpy(&x, p + i * 2, 2);
      v = quant ? (float)(x - quantOf(t.type, i).second) * quantOf(t.type, i).first : (float)x;
      break;
    }
    case KILN_DTYPE_INT32: {
      int32_t x;
      std::memcpy(&x, p + i * 4, 4);
      v = (float)x;
      break;
    }
    default:
      break;
    }
    out.data[i] = v;
  }
  return out;
}

FailureOr<RawTensor> kiln::interp::fromF32(const Tensor &t, RankedTensorType type) {
  auto dtype = tpu::dtypeOf(type);
  if (!dtype || !type.hasStaticShape() ||
      (int64_t)t.data.size() != type.getNumElements())
    return failure();
  RawTensor out{type, {}};
  uint32_t bytes = kiln_dtype_bytes(*dtype);
  out.bytes.resize(t.data.size() * bytes);
  bool quant = tpu::isQuantType(type);
  uint8_t *p = out.bytes.data();
  for (size_t i = 0; i < t.data.size(); ++i) {
    float x = t.data[i];
    switch (*dtype) {
    case KILN_DTYPE_F32:
      std::memcpy(p + i * 4, &x, 4);
      break;
    case KILN_DTYPE_F16: {
      uint16_t h = kiln_f32_to_f16(x);
      std::memcpy(p + i * 2, &h, 2);
      break;
    }
    case KILN_DTYPE_BF16: {
      uint16_t h = kiln_f32_to_bf16(x);
      std::memcpy(p + i * 2, &h, 2);
      break;
    }
    case KILN_DTYPE_INT8:
      if (quant) {
        auto [scale, zp] = quantOf(type, i);
        p[i] = (uint8_t)kiln_quantize_f32(x, scale, zp);
      } else {
        p[i] = (uint8_t)(int8_t)saturate(x, -128, 127);
      }
      break;
    case KILN_DTYPE_UINT8: {
      double v = x;
      int64_t lo = 0;
      if (quant) {
        auto [scale, zp] = quantOf(type, i);
        v = std::nearbyint((double)(x / scale)) + zp;
      }
      p[i] = (uint8_t)saturate(v, lo, 255);
      break;
    }
    case KILN_DTYPE_INT16: {
      double v = x;
      if (quant) {
        auto [scale, zp] = quantOf(type, i);
        v = std::nearbyint((double)(x / scale)) + zp;
      }
      int16_t s = (int16_t)saturate(v, INT16_MIN, INT16_MAX);
      std::memcpy(p + i * 2, &s, 2);
      break;
    }
    case KILN_DTYPE_INT32: {
      int32_t s = (int32_t)saturate(x, INT32_MIN, INT32_MAX);
      std::memcpy(p + i * 4, &s, 4);
      break;
    }
    default:
      return failure();
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

namespace {

std::string nameOr(StringAttr name, StringRef prefix, unsigned index) {
  return name ? name.str() : (prefix + Twine(index)).str();
}

/// Whether bytes of `a` mean the same values in `b`: same dtype and
/// per-tensor quantization.
bool sameStorage(Type a, Type b) {
  tpu::QuantParams qa = tpu::quantParamsOf(a), qb = tpu::quantParamsOf(b);
  return tpu::dtypeOf(a) == tpu::dtypeOf(b) && qa.scale == qb.scale &&
         qa.zeroPoint == qb.zeroPoint;
}

uint64_t bytesOf(const kiln_tiu_operand &o) {
  return lg::alignLmem(kiln_lmem_lane_bytes(o.n, o.c, o.h, o.w, kiln_dtype_bytes(o.dtype)));
}

/// Copies a row-major [n, c, h, w] tensor into (or, with `in` false, out of)
/// the LMEM layout of chip.h at the operand's address.
void moveLmem(const kiln_tiu_operand &o, uint8_t *host, uint8_t *lmem,
              uint64_t laneBytes, bool in) {
  uint32_t dsize = kiln_dtype_bytes(o.dtype);
  uint64_t plane = kiln_lmem_plane_stride(o.h, o.w, dsize);
  uint64_t cgroups = (o.c + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
  uint64_t row = (uint64_t)o.w * dsize;
  for (uint64_t n = 0; n < o.n; ++n)
    for (uint64_t c = 0; c < o.c; ++c)
      for (uint64_t h = 0; h < o.h; ++h) {
        uint8_t *l = lmem + c % KILN_NPU_NUM * laneBytes + o.addr +
                     (n * cgroups + c / KILN_NPU_NUM) * plane + h * row;
        uint8_t *r = host + ((n * o.c + c) * o.h + h) * row;
        if (in)
          std::memcpy(l, r, row);
        else
          std::memcpy(r, l, row);
      }
}

class Interpreter {
public:
  LogicalResult bindArguments(func::FuncOp func, const TensorMap &inputs);
  LogicalResult execute(Operation *op, std::map<std::string, RawTensor> *allValues);
  /// Gives `op`'s consumers `ref` (in the result's dtype) in place of its result.
  void substitute(Operation *op, const Tensor &ref);
  void collectOutputs(func::FuncOp func, func::ReturnOp ret,
                      std::map<std::string, RawTensor> &outputs);

private:
  FailureOr<RawTensor> evaluate(Operation *op);
  FailureOr<RawTensor> runTiu(Operation *op);
  FailureOr<RawTensor> runDma(tpu::DmaOp op);
  RawTensor runFoldRows(tpu::FoldRowsOp op);
  RawTensor runUnfoldRows(tpu::UnfoldRowsOp op);
  FailureOr<RawTensor> runConcat(tpu::ConcatOp op);
  void releaseDeadOperands(Operation *op);

  const RawTensor &get(Value v) {
    auto it = values.find(v);
    assert(it != values.end() && "operand has not been computed");
    return it->second;
  }

  llvm::DenseMap<Value, RawTensor> values;
  std::vector<uint8_t> lmem; // reused from op to op
};

} // namespace

LogicalResult Interpreter::bindArguments(func::FuncOp func, const TensorMap &inputs) {
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    std::string name = nameOr(func.getArgAttrOfType<StringAttr>(i, "kiln.name"), "arg", i);
    auto it = inputs.find(name);
    if (it == inputs.end())
      return func.emitError() << "missing input '" << name << "'";
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() || ArrayRef<int64_t>(it->second.shape) != type.getShape())
      return func.emitError() << "input '" << name << "' has shape [" << it->second.shape
                              << "] but argument " << i << " is " << arg.getType();
    FailureOr<RawTensor> raw = fromF32(it->second, type);
    if (failed(raw))
      return func.emitError() << "input '" << name << "' does not convert to " << type;
    values[arg] = std::move(*raw);
  }
  return success();
}

FailureOr<RawTensor> Interpreter::runTiu(Operation *op) {
  kiln_tiu_cmd cmd{};
  if (failed(codegen::fillTiuRecord(op, cmd)))
    return failure();
  cmd.cmd_id = 1;
  // Every operand whole, one after another in each lane.
  SmallVector<std::pair<kiln_tiu_operand *, Value>> placed;
  placed.push_back({&cmd.out, op->getResult(0)});
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (kiln_tiu_operand *slot = lg::tiuOperandSlot(cmd, i);
        slot && (slot->flags & KILN_OPND_USED))
      placed.push_back({slot, v});
  uint64_t cursor = 0;
  for (auto &[o, v] : placed) {
    o->addr = cursor;
    cursor += bytesOf(*o);
  }
  if (cursor > UINT32_MAX)
    return op->emitError("Tpu interpreter: operands too large for LMEM addresses");
  uint64_t laneBytes = std::max<uint64_t>(cursor, KILN_EU_BYTES);
  lmem.assign(laneBytes * KILN_NPU_NUM, 0);

  RawTensor result{cast<RankedTensorType>(op->getResult(0).getType()), {}};
  result.bytes.resize(tpu::tensorBytes(result.type));
  for (auto &[o, v] : placed) {
    uint64_t want = (uint64_t)o->n * o->c * o->h * o->w * kiln_dtype_bytes(o->dtype);
    if (o == &cmd.out) {
      if (want != result.bytes.size())
        return op->emitError("Tpu interpreter: result layout does not match its type");
      continue;
    }
    const RawTensor &operand = get(v);
    if (want != operand.bytes.size())
      return op->emitError("Tpu interpreter: operand layout does not match its type ")
             << v.getType();
    moveLmem(*o, const_cast<uint8_t *>(operand.bytes.data()), lmem.data(), laneBytes, true);
  }
  if (const char *fault = chip::runTiuRecord(cmd, lmem.data(), laneBytes))
    return op->emitError("Tpu interpreter: the cmodel rejects the record: ") << fault;
  moveLmem(cmd.out, result.bytes.data(), lmem.data(), laneBytes, false);
  return result;
}

RawTensor Interpreter::runUnfoldRows(tpu::UnfoldRowsOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  ArrayRef<int64_t> shape = type.getShape();
  const std::vector<uint8_t> &src = get(op.getInput()).bytes;
  int64_t n = shape[0], c = shape[1], h = shape[2], rows = op.getRows(), folded = h / rows;
  uint64_t rowBytes = shape[3] * tpu::elementBytes(type);
  RawTensor out{type, std::vector<uint8_t>(tpu::tensorBytes(type))};
  for (int64_t b = 0; b < n; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t y = 0; y < folded; ++y)
          std::memcpy(&out.bytes[((b * c + ch) * h + y * rows + r) * rowBytes],
                      &src[(((b * rows + r) * c + ch) * folded + y) * rowBytes], rowBytes);
  return out;
}

RawTensor Interpreter::runFoldRows(tpu::FoldRowsOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  ArrayRef<int64_t> in = cast<RankedTensorType>(op.getInput().getType()).getShape();
  const std::vector<uint8_t> &src = get(op.getInput()).bytes;
  int64_t n = in[0], c = in[1], h = in[2], rows = type.getDimSize(2);
  uint64_t rowBytes = in[3] * tpu::elementBytes(type);
  // Rows outside the input are zero (the zero point of a quantized type).
  RawTensor out{type, std::vector<uint8_t>(tpu::tensorBytes(type), 0)};
  std::vector<uint8_t> zeroRow(rowBytes, 0);
  if (tpu::isQuantType(type.getElementType()))
    std::fill(zeroRow.begin(), zeroRow.end(),
              uint8_t(tpu::quantParamsOf(type.getElementType()).zeroPoint));
  int64_t kh = op.getKernelH();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ky = 0; ky < kh; ++ky)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t y = 0; y < rows; ++y) {
          int64_t from = op.sourceRow(y, ky);
          uint8_t *to = &out.bytes[(((b * kh + ky) * c + ch) * rows + y) * rowBytes];
          const uint8_t *row = from >= 0 && from < h
                                   ? &src[((b * c + ch) * h + from) * rowBytes]
                                   : zeroRow.data();
          std::memcpy(to, row, rowBytes);
        }
  return out;
}

FailureOr<RawTensor> Interpreter::runDma(tpu::DmaOp op) {
  RawTensor out{cast<RankedTensorType>(op.getType()), {}};
  out.bytes.assign(tpu::tensorBytes(out.type), 0);
  uint64_t dsize = tpu::elementBytes(out.type);
  for (Value in : op.getInputs())
    if (!sameStorage(in.getType(), out.type))
      return op.emitError("Tpu interpreter: dma moves bytes, its inputs need the result's "
                          "element type");
  for (tpu::DmaCopyAttr copy : op.getCopies()) {
    // The attribute keeps shapes positive, strides and offsets non-negative
    // and sources in range.
    const std::vector<uint8_t> *from = nullptr;
    if (copy.getSrc() >= 0)
      from = &get(op.getInputs()[copy.getSrc()]).bytes;
    else if (copy.getSrc() == tpu::DmaCopyAttr::kSelf)
      from = &out.bytes;
    ArrayRef<int64_t> shape = copy.getShape(), sst = copy.getSrcStrides(),
                      dst = copy.getDstStrides();
    int64_t srcOff = copy.getSrcOffset(), dstOff = copy.getDstOffset();
    // Bounds of every access, from the furthest element.
    auto last = [&](int64_t base, ArrayRef<int64_t> stride) {
      int64_t e = base;
      for (int i = 0; i < 4; ++i)
        e += (shape[i] - 1) * stride[i];
      return e;
    };
    if ((uint64_t)(last(dstOff, dst) + 1) * dsize > out.bytes.size())
      return op.emitError("Tpu interpreter: dma record writes outside the result");
    if (from && (uint64_t)(last(srcOff, sst) + 1) * dsize > from->size())
      return op.emitError("Tpu interpreter: dma record reads outside its source");
    uint8_t pattern[4];
    for (int b = 0; b < 4; ++b)
      pattern[b] = uint8_t(copy.getBits() >> (8 * b));
    // As the cmodel's GDMA: NCHW order, memmove per row or element.
    for (int64_t n = 0; n < shape[0]; ++n)
      for (int64_t c = 0; c < shape[1]; ++c)
        for (int64_t h = 0; h < shape[2]; ++h) {
          uint8_t *to = out.bytes.data() + (dstOff + n * dst[0] + c * dst[1] + h * dst[2]) * dsize;
          if (!from) {
            for (int64_t w = 0; w < shape[3]; ++w)
              std::memcpy(to + w * dst[3] * dsize, pattern, dsize);
            continue;
          }
          const uint8_t *f = from->data() + (srcOff + n * sst[0] + c * sst[1] + h * sst[2]) * dsize;
          if (sst[3] == 1 && dst[3] == 1) {
            std::memmove(to, f, shape[3] * dsize);
            continue;
          }
          for (int64_t w = 0; w < shape[3]; ++w)
            std::memmove(to + w * dst[3] * dsize, f + w * sst[3] * dsize, dsize);
        }
  }
  return out;
}

FailureOr<RawTensor> Interpreter::runConcat(tpu::ConcatOp op) {
  RawTensor out{cast<RankedTensorType>(op.getType()), {}};
  out.bytes.resize(tpu::tensorBytes(out.type));
  uint64_t dsize = tpu::elementBytes(out.type);
  auto shape = out.type.getShape();
  int64_t axis = op.getAxis();
  uint64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i)
    inner *= shape[i];
  uint64_t offset = 0;
  for (Value in : op.getInputs()) {
    if (!sameStorage(in.getType(), out.type))
      return op.emitError("Tpu interpreter: concat inputs need the result's element type "
                          "(requantize them first)");
    uint64_t mid = cast<RankedTensorType>(in.getType()).getShape()[axis];
    const auto &bytes = get(in).bytes;
    for (uint64_t o = 0; o < outer; ++o)
      std::memcpy(out.bytes.data() + (o * shape[axis] + offset) * inner * dsize,
                  bytes.data() + o * mid * inner * dsize, mid * inner * dsize);
    offset += mid;
  }
  return out;
}

FailureOr<RawTensor> Interpreter::evaluate(Operation *op) {
  if (auto w = dyn_cast<top::WeightOp>(op)) {
    FailureOr<std::vector<uint8_t>> bytes = codegen::weightBytes(w);
    if (failed(bytes))
      return failure();
    return RawTensor{cast<RankedTensorType>(w.getType()), std::move(*bytes)};
  }
  if (op->hasTrait<tpu::RunsOnTiu>())
    return runTiu(op);
  if (auto dma = dyn_cast<tpu::DmaOp>(op))
    return runDma(dma);
  if (auto concat = dyn_cast<tpu::ConcatOp>(op))
    return runConcat(concat);
  if (auto reshape = dyn_cast<tpu::ReshapeOp>(op)) {
    RawTensor out{cast<RankedTensorType>(reshape.getType()), get(reshape.getInput()).bytes};
    if (out.bytes.size() != tpu::tensorBytes(out.type))
      return op->emitError("Tpu interpreter: reshape changes the byte size");
    return out;
  }
  if (auto fold = dyn_cast<tpu::FoldRowsOp>(op))
    return runFoldRows(fold);
  if (auto unfold = dyn_cast<tpu::UnfoldRowsOp>(op))
    return runUnfoldRows(unfold);

  if (auto strided = dyn_cast<tpu::StridedViewOp>(op)) {
    auto type = cast<RankedTensorType>(strided.getType());
    const std::vector<uint8_t> &in = get(strided.getInput()).bytes;
    uint64_t bytes = tpu::elementBytes(type);
    ArrayRef<int64_t> sizes = strided.getSizes(), strides = strided.getStrides();
    RawTensor out{type, std::vector<uint8_t>(tpu::tensorBytes(type))};
    SmallVector<int64_t> digit(sizes.size(), 0);
    for (int64_t f = 0; f < type.getNumElements(); ++f) {
      int64_t at = strided.getOffset();
      for (size_t k = 0; k < sizes.size(); ++k)
        at += digit[k] * strides[k];
      if ((at + 1) * bytes > in.size())
        return op->emitError("Tpu interpreter: strided view outside its input");
      std::copy_n(in.begin() + at * bytes, bytes, out.bytes.begin() + f * bytes);
      for (size_t k = sizes.size(); k-- > 0;)
        if (++digit[k] < sizes[k])
          break;
        else
          digit[k] = 0;
    }
    return out;
  }
  if (auto view = dyn_cast<tpu::ViewOp>(op)) {
    auto type = cast<RankedTensorType>(view.getType());
    const std::vector<uint8_t> &in = get(view.getInput()).bytes;
    uint64_t begin = view.getOffset() * tpu::elementBytes(type);
    uint64_t size = tpu::tensorBytes(type);
    if (begin + size > in.size())
      return op->emitError("Tpu interpreter: view outside its input");
    return RawTensor{type, std::vector<uint8_t>(in.begin() + begin, in.begin() + begin + size)};
  }
  return op->emitOpError("is not supported by the Tpu interpreter (it runs Tpu IR "
                         "before layer grouping)");
}

LogicalResult Interpreter::execute(Operation *op, std::map<std::string, RawTensor> *allValues) {
  if (isa<top::NoneOp>(op))
    return success();
  if (op->getNumResults() != 1 || !isa<RankedTensorType>(op->getResult(0).getType()) ||
      !cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape())
    return op->emitOpError("Tpu interpreter expects one statically shaped tensor result");
  FailureOr<RawTensor> result = evaluate(op);
  if (failed(result))
    return failure();
  if (allValues && !isa<top::WeightOp>(op))
    if (std::string name = opName(op); !name.empty())
      (*allValues)[name] = *result;
  values[op->getResult(0)] = std::move(*result);
  releaseDeadOperands(op);
  return success();
}

void Interpreter::substitute(Operation *op, const Tensor &ref) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (ArrayRef<int64_t>(ref.shape) != type.getShape())
    return;
  if (FailureOr<RawTensor> exact = fromF32(ref, type); succeeded(exact))
    values[op->getResult(0)] = std::move(*exact);
}

void Interpreter::releaseDeadOperands(Operation *op) {
  for (Value v : op->getOperands()) {
    bool dead = llvm::all_of(v.getUsers(), [&](Operation *user) {
      return user == op || (user->getBlock() == op->getBlock() && user->isBeforeInBlock(op));
    });
    if (dead)
      values.erase(v);
  }
}

void Interpreter::collectOutputs(func::FuncOp func, func::ReturnOp ret,
                                 std::map<std::string, RawTensor> &outputs) {
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    outputs[nameOr(func.getResultAttrOfType<StringAttr>(i, "kiln.name"), "out", i)] = get(v);
}

LogicalResult kiln::interp::runTpuRaw(func::FuncOp func, const TensorMap &inputs,
                                      std::map<std::string, RawTensor> &outputs,
                                      std::map<std::string, RawTensor> *allValues,
                                      const TensorMap *reference) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitOpError("expects a body of a single block");
  Interpreter interpreter;
  if (failed(interpreter.bindArguments(func, inputs)))
    return failure();
  // A layer lowered to several ops (conv, then requant) names each of them:
  // only the last one's result is the layer's output.
  llvm::DenseMap<Operation *, const Tensor *> exact;
  if (reference) {
    llvm::StringMap<Operation *> last;
    for (Operation &op : func.getBody().front())
      if (!isa<top::WeightOp, top::NoneOp>(op) && op.getNumResults() == 1)
        if (std::string name = opName(&op); !name.empty())
          last[name] = &op;
    for (const auto &[name, op] : last)
      if (auto it = reference->find(name.str()); it != reference->end())
        exact[op] = &it->second;
  }
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      interpreter.collectOutputs(func, ret, outputs);
      return success();
    }
    if (failed(interpreter.execute(&op, allValues)))
      return failure();
    if (auto it = exact.find(&op); it != exact.end())
      interpreter.substitute(&op, *it->second);
  }
  return func.emitOpError("has no func.return");
}

LogicalResult kiln::interp::runTpu(func::FuncOp func, const TensorMap &inputs,
                                   TensorMap &outputs, TensorMap *allValues,
                                   const TensorMap *reference) {
  std::map<std::string, RawTensor> rawOutputs, rawAll;
  if (failed(runTpuRaw(func, inputs, rawOutputs, allValues ? &rawAll : nullptr, reference)))
    return failure();
  for (auto &[name, t] : rawOutputs)
    outputs[name] = toF32(t);
  if (allValues)
    for (auto &[name, t] : rawAll)
      (*allValues)[name] = toF32(t);
  return success();
}
