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

/// The view's reading of its input.
StridedReading readingOf(tpu::StridedViewOp view);

/// The GDMA loads (ids and waits unset) of rows `rows` of an LMEM value of
/// [n, c, h, w] shape `shape`, held as `holding` at LMEM offset `base`, read
/// through `reading` from DDR address `ddr`; with `toLmem` false the stores
/// that write those rows there through the same strides. nullopt when the
/// shape's W is not one stride of the reading (or its dimensions do not split
/// its runs).
std::optional<std::vector<kiln_gdma_cmd>>
stridedTransfer(const StridedReading &reading, const std::array<int64_t, 4> &shape,
                uint8_t dtype, uint32_t dsize, uint64_t ddr, uint32_t base, Slice holding,
                Slice rows, bool toLmem = true);

/// Cycles of the transfers of a whole [n, c, h, w] value through `reading`
/// (cost.h), or nullopt as stridedTransfer.
std::optional<uint64_t> stridedTransferCycles(const StridedReading &reading,
                                              const std::array<int64_t, 4> &shape,
                                              uint8_t dtype, uint32_t dsize,
                                              bool toLmem = true);

/// The input element each result element of `dma` copies, if it is one
/// strided copy of every input element onto its whole result (a transpose)
/// of at most 2^20 elements (they are enumerated).
std::optional<std::vector<int64_t>> permutedAddresses(tpu::DmaOp dma);

/// The write a tpu.dma marked in_place gives its input's producer: input
/// element f goes to the result element the copy moves it to. nullopt
/// unless the dma is one permuting copy.
std::optional<StridedReading> scatterOf(tpu::DmaOp dma);

/// The in-place tpu.dma whose result the escaping value `v` is stored into
/// (through reshapes), or null.
tpu::DmaOp scatteringDma(mlir::Value v);

} // namespace kiln::lg

#endif
