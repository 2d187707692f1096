#ifndef KILN_DIALECT_TPU_IR_TPUOPS_H
#define KILN_DIALECT_TPU_IR_TPUOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Quant/QuantOps.h"
#include "mlir/Dialect/Quant/QuantTypes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/Dialect/Top/IR/TopAttrs.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLExtras.h"

#include <array>
#include <optional>

namespace kiln::tpu {
/// The input rows along H that a window op's output row y reads: rows
/// y * stride - padTop + k * dilation for k in [0, kernel). Transposed (a
/// deconv): input row i feeds output rows i * stride + k * dilation - padTop.
/// Along W (getWWindow) the same with columns, padTop the left pad.
struct HWindow {
  int64_t kernel, stride, dilation, padTop;
  bool transposed = false;
};

/// The part of an [n, c, h, w] value a layer-group slice holds or stores
/// (#tpu.value_plan): per dimension an offset and a size. All sizes are 0
/// for a slice that does not touch the value.
struct SliceRange {
  std::array<int64_t, 4> offsets{}, sizes{};
  bool empty() const {
    return llvm::any_of(sizes, [](int64_t size) { return size <= 0; });
  }
  bool operator==(const SliceRange &o) const {
    return offsets == o.offsets && sizes == o.sizes;
  }
};
llvm::hash_code hash_value(const SliceRange &range);
/// `(n+len, c+len, h+len, w+len)`: per dimension its offset, then its size.
mlir::AsmPrinter &operator<<(mlir::AsmPrinter &printer, const SliceRange &range);

/// Whether two LMEM buffers of a layer group are live at the same position,
/// given as [first, last] positions on the layout's cycle of `period`
/// positions (`last` may pass the period: a store one slice later); a
/// `whole` buffer (an invariant value's) is live throughout.
bool liveTogether(int64_t aFirst, int64_t aLast, bool aWhole, int64_t bFirst, int64_t bLast,
                  bool bWhole, int64_t period);

// The traits of TpuInterfaces.td; they carry no methods.
template <typename ConcreteType>
class RunsOnTiu : public mlir::OpTrait::TraitBase<ConcreteType, RunsOnTiu> {};
template <typename ConcreteType>
class Pointwise : public mlir::OpTrait::TraitBase<ConcreteType, Pointwise> {};
template <typename ConcreteType>
class HasFilter : public mlir::OpTrait::TraitBase<ConcreteType, HasFilter> {};
template <typename ConcreteType>
class DdrView : public mlir::OpTrait::TraitBase<ConcreteType, DdrView> {};
} // namespace kiln::tpu

#include "kiln/Dialect/Tpu/IR/TpuDialect.h.inc"
#include "kiln/Dialect/Tpu/IR/TpuInterfaces.h.inc"
#include "kiln/Dialect/Tpu/IR/TpuEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Tpu/IR/TpuAttrs.h.inc"

#define GET_OP_CLASSES
#include "kiln/Dialect/Tpu/IR/TpuOps.h.inc"

namespace kiln::tpu {
/// The DDR value whose bytes a view-like op's result is (DdrView), or null.
inline mlir::Value viewSource(mlir::Operation *op) {
  if (op && op->hasTrait<DdrView>())
    return op->getOperand(0);
  return {};
}

/// The multiply-accumulates of a conv or deconv as the model states it (a
/// row-folded one's `tpu.model_macs`: its zero taps are no model work), 0
/// for other ops. The roofline counts these.
uint64_t modelMacs(mlir::Operation *op);

/// The value whose op computed v's bytes: v with reshapes and views undone.
inline mlir::Value producedValue(mlir::Value v) {
  while (mlir::Value source = viewSource(v.getDefiningOp()))
    v = source;
  return v;
}
} // namespace kiln::tpu

#endif
