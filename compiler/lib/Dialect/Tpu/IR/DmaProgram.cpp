//===- DmaProgram.cpp - Build tpu.dma copy lists --------------------------===//

#include "kiln/Dialect/Tpu/IR/DmaProgram.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"

#include "kiln/abi/chip.h"

#include <cstring>

using namespace kiln;
using llvm::ArrayRef;
using llvm::SmallVector;
using namespace kiln::tpu;

SmallVector<int64_t> tpu::contiguousStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

void DmaProgram::copy(int64_t src, int64_t srcOff, int64_t dstOff,
                      ArrayRef<int64_t> shape, ArrayRef<int64_t> srcStrides,
                      ArrayRef<int64_t> dstStrides) {
  emit(src, srcOff, dstOff, shape, srcStrides, dstStrides, 0);
}

void DmaProgram::fill(int64_t dstOff, ArrayRef<int64_t> shape,
                      ArrayRef<int64_t> dstStrides, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  SmallVector<int64_t> zeros(shape.size(), 0);
  emit(DmaCopyAttr::kFill, 0, dstOff, shape, zeros, dstStrides, bits);
}

void DmaProgram::fillBits(int64_t dstOff, ArrayRef<int64_t> shape,
                          ArrayRef<int64_t> dstStrides, uint32_t bits) {
  SmallVector<int64_t> zeros(shape.size(), 0);
  emit(DmaCopyAttr::kFill, 0, dstOff, shape, zeros, dstStrides, bits);
}

void DmaProgram::transpose(ArrayRef<int64_t> inShape, ArrayRef<int64_t> perm) {
  auto inStrides = contiguousStrides(inShape);
  SmallVector<int64_t> shape, src;
  for (int64_t p : perm) {
    shape.push_back(inShape[p]);
    src.push_back(inStrides[p]);
  }
  copy(0, 0, 0, shape, src, contiguousStrides(shape));
}

void DmaProgram::broadcast(ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape) {
  SmallVector<int64_t> padded(outShape.size() - inShape.size(), 1);
  padded.append(inShape.begin(), inShape.end());
  auto inStrides = contiguousStrides(padded);
  SmallVector<int64_t> src;
  for (size_t i = 0; i < outShape.size(); ++i)
    src.push_back(padded[i] == outShape[i] ? inStrides[i] : 0);
  copy(0, 0, 0, outShape, src, contiguousStrides(outShape));
}

void DmaProgram::emit(int64_t src, int64_t srcOff, int64_t dstOff,
                      ArrayRef<int64_t> shape, ArrayRef<int64_t> srcStrides,
                      ArrayRef<int64_t> dstStrides, uint32_t fillBits) {
  // Drop unit dimensions, then merge neighbours contiguous on both sides.
  SmallVector<int64_t> d, ss, ds;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0)
      return;
    if (shape[i] == 1)
      continue;
    if (!d.empty() && ss.back() == srcStrides[i] * shape[i] &&
        ds.back() == dstStrides[i] * shape[i]) {
      d.back() *= shape[i];
      ss.back() = srcStrides[i];
      ds.back() = dstStrides[i];
      continue;
    }
    d.push_back(shape[i]);
    ss.push_back(srcStrides[i]);
    ds.push_back(dstStrides[i]);
  }
  while (d.size() < 4) {
    d.insert(d.begin(), 1);
    ss.insert(ss.begin(), 0);
    ds.insert(ds.begin(), 0);
  }
  if (d.size() > 4) {
    // Unroll the outermost dimension.
    for (int64_t i = 0; i < d[0]; ++i)
      emit(src, srcOff + i * ss[0], dstOff + i * ds[0], ArrayRef(d).drop_front(),
           ArrayRef(ss).drop_front(), ArrayRef(ds).drop_front(), fillBits);
    return;
  }
  copies_.push_back(DmaCopyAttr::get(ctx_, src, srcOff, dstOff, d, ss, ds, fillBits));
}

kiln_gdma_cmd tpu::dmaCommand(DmaCopyAttr copy, uint8_t dtype, uint64_t srcBase,
                              uint64_t dstBase) {
  uint32_t bytes = kiln_dtype_bytes(dtype);
  kiln_gdma_cmd c{};
  c.dir = KILN_GDMA_DDR_TO_DDR;
  c.dtype = dtype;
  if (copy.isFill()) {
    c.flags = KILN_GDMA_FLAG_FILL;
    c.src_addr = copy.getBits();
  } else {
    c.src_addr = srcBase + copy.getSrcOffset() * bytes;
  }
  c.dst_addr = dstBase + copy.getDstOffset() * bytes;
  ArrayRef<int64_t> shape = copy.getShape();
  c.n = shape[0];
  c.c = shape[1];
  c.h = shape[2];
  c.w = shape[3];
  for (int i = 0; i < 4; ++i) {
    c.src_stride[i] = copy.getSrcStrides()[i];
    c.dst_stride[i] = copy.getDstStrides()[i];
  }
  return c;
}
