//===- Plan.h - A layer group's decision as a tpu.group attribute -*- C++ -*-===//
//
// The layer-group pass records each group's slicing, slice order and LMEM
// layout on its tpu.group as a #tpu.group_plan; code generation (and the
// prefetch planner) read the plan back instead of slicing again. The plan's
// values are in GroupGraph's order, which GroupOp::getPlannedValues gives
// for a materialized group.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYERGROUP_PLAN_H
#define KILN_LAYERGROUP_PLAN_H

#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/LayerGroup/LmemAlloc.h"

namespace kiln::lg {

/// The one conversion between a slice part and the attribute's range, [n,
/// c, h, w] (all empty for a slice that does not touch the value).
tpu::SliceRange toAttr(const Slice &slice);
Slice fromAttr(const tpu::SliceRange &range);

/// The plan of group `g` sliced as `s`, with `buffers` buffers per sliced
/// value placed as `place`.
tpu::GroupPlanAttr toAttr(mlir::MLIRContext *ctx, const GroupGraph &g, const GroupSlicing &s,
                          int64_t buffers, const Placement &place);

/// The slicing a plan records for `g` (its values in the plan's order): the
/// parts, stores, invariance, sizes and slice order as written, each node's
/// reads derived from the rows its result holds (readsOf).
GroupSlicing slicingOf(const GroupGraph &g, tpu::GroupPlanAttr plan);

/// The plan with value v's one buffer moved to `lmemAddr` (a prefetched
/// coefficient).
tpu::GroupPlanAttr withValueAt(tpu::GroupPlanAttr plan, int v, uint32_t lmemAddr);

} // namespace kiln::lg

#endif
