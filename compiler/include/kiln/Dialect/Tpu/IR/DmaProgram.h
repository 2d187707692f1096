//===- DmaProgram.h - Build tpu.dma copy lists ------------------*- C++ -*-===//
//
// Data movement ops become lists of strided GDMA copies. A copy is described
// in N-D (any rank); adjacent dimensions that are contiguous on both sides
// are merged and what remains above 4-D is unrolled into several copies.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_TPU_IR_DMAPROGRAM_H
#define KILN_DIALECT_TPU_IR_DMAPROGRAM_H

#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/abi/commands.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace kiln::tpu {

class DmaProgram {
public:
  explicit DmaProgram(mlir::MLIRContext *ctx) : ctx_(ctx) {}

  /// Copies shape elements: element i goes from srcOff + Σ i_k * srcStrides[k]
  /// to dstOff + Σ i_k * dstStrides[k] (offsets and strides in elements).
  void copy(int64_t src, int64_t srcOff, int64_t dstOff,
            llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> srcStrides,
            llvm::ArrayRef<int64_t> dstStrides);
  /// Sets every addressed destination element to `value`.
  void fill(int64_t dstOff, llvm::ArrayRef<int64_t> shape,
            llvm::ArrayRef<int64_t> dstStrides, float value);
  /// The same with the value already encoded in the result's dtype (after
  /// tpu-apply-precision; bits in the low bytes).
  void fillBits(int64_t dstOff, llvm::ArrayRef<int64_t> shape,
                llvm::ArrayRef<int64_t> dstStrides, uint32_t bits);

  /// The whole of source 0 ([inShape]) permuted: output dim i is input dim
  /// perm[i].
  void transpose(llvm::ArrayRef<int64_t> inShape, llvm::ArrayRef<int64_t> perm);
  /// Source 0 broadcast (numpy rules, size-1 dimensions repeat) to outShape.
  void broadcast(llvm::ArrayRef<int64_t> inShape, llvm::ArrayRef<int64_t> outShape);

  /// The program as tpu.dma's `program`.
  mlir::ArrayAttr attr() const { return mlir::ArrayAttr::get(ctx_, copies_); }

private:
  void emit(int64_t src, int64_t srcOff, int64_t dstOff,
            llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> srcStrides,
            llvm::ArrayRef<int64_t> dstStrides, uint32_t fillBits);
  mlir::MLIRContext *ctx_;
  llvm::SmallVector<mlir::Attribute> copies_;
};

/// Row-major strides of a shape.
llvm::SmallVector<int64_t> contiguousStrides(llvm::ArrayRef<int64_t> shape);

/// The DDR-to-DDR GDMA record of one copy moving `dtype` elements; srcBase
/// is the DDR address of its source (the result's own for `self`, unused for
/// a fill) and dstBase the result's.
kiln_gdma_cmd dmaCommand(DmaCopyAttr copy, uint8_t dtype, uint64_t srcBase, uint64_t dstBase);

} // namespace kiln::tpu

#endif
