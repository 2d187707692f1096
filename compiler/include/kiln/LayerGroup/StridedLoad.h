//===- StridedLoad.h - Loads that read a tensor through strides -*- C++ -*-===//
//
// A tpu.strided_view (a transpose its consumers read in place) reaches LMEM
// by GDMA loads whose DDR side carries the view's strides. The LMEM value's
// [n, c, h, w] dimensions are matched to the view's (size, stride) runs; a
// dimension made of several runs is loaded in pieces along its outer runs
// (channel pieces with lane-offset loads, each within a lane group). W must
// be one run, unless whole planes are loaded: a plane's h * w elements are
// contiguous in its lane, so any two runs can be its rows and columns.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYERGROUP_STRIDEDLOAD_H
#define KILN_LAYERGROUP_STRIDEDLOAD_H

#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/LayerGroup/Slicing.h"
#include "kiln/abi/commands.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <optional>
#include <vector>

namespace kiln::lg {

/// Element f (row-major) of a tensor read at offset + sum_k digit_k(f) *
/// strides[k], the digits of f in the mixed radix `sizes` (outermost first).
struct StridedReading {
  int64_t offset = 0;
  llvm::SmallVector<int64_t, 6> sizes, strides;

  /// The plain row-major reading of `elements` elements.
  static StridedReading dense(int64_t elements);
  /// Fits a reading to the element addresses of a tensor, or nullopt when
  /// no (non-negative) strides describe them.
  static std::optional<StridedReading> fit(llvm::ArrayRef<int64_t> addresses);
};

/// The view's reading of its input.
StridedReading readingOf(tpu::StridedViewOp view);

/// The GDMA loads (ids and waits unset) of rows `rows` of an LMEM value of
/// [n, c, h, w] shape `shape`, held as `holding` at LMEM offset `base`, read
/// through `reading` from DDR address `ddr`. nullopt when the shape's W is
/// not one stride of the reading (or its dimensions do not split its runs).
std::optional<std::vector<kiln_gdma_cmd>>
stridedLoad(const StridedReading &reading, const std::array<int64_t, 4> &shape,
            uint8_t dtype, uint32_t dsize, uint64_t ddr, uint32_t base, Slice holding,
            Slice rows);

/// Cycles of the loads of a whole [n, c, h, w] value through `reading`
/// (cost.h), or nullopt as stridedLoad.
std::optional<uint64_t> stridedLoadCycles(const StridedReading &reading,
                                          const std::array<int64_t, 4> &shape,
                                          uint8_t dtype, uint32_t dsize);

} // namespace kiln::lg

#endif
