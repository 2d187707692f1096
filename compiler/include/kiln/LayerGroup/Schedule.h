//===- Schedule.h - A layer group's two command queues ----------*- C++ -*-===//
//
// Turns a sliced group into its TIU and GDMA queues with sync ids. The same
// function serves the group search (to cost a candidate with the chip's
// scheduler, firmware-abi cost.h) and code generation (to emit it), so the
// plan chosen is the plan that runs.
//
// Order and dependences (each command waits only for what it needs):
//  - GDMA: the prologue holds the group's held loads and the first slice's
//    loads, ordered by the first op that reads them, so the TIU starts on the
//    first op while the coefficients of later ops still load. Then per slice
//    k >= 1 its loads, followed by the stores of slice k - (buffers - 1),
//    each in the order their producers run.
//  - A TIU command waits for the loads of the operands it reads in its
//    slice, and for the last GDMA command that touched the bytes it writes
//    (the store of the previous value in its buffer, or of a dead value
//    whose space a lifetime layout reuses).
//  - A load waits for the last TIU command that touched the bytes it writes;
//    a store waits for the command that produced its rows.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYERGROUP_SCHEDULE_H
#define KILN_LAYERGROUP_SCHEDULE_H

#include "kiln/LayerGroup/LmemAlloc.h"
#include "kiln/LayerGroup/Slicing.h"
#include "kiln/abi/commands.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <optional>
#include <vector>

namespace kiln::lg {

/// The record operand op operand `i` feeds (in0, in1, in2), null past in2.
inline kiln_tiu_operand *tiuOperandSlot(kiln_tiu_cmd &cmd, unsigned i) {
  kiln_tiu_operand *slots[] = {&cmd.in0, &cmd.in1, &cmd.in2};
  return i < 3 ? slots[i] : nullptr;
}

/// A placement and its modelled cycles (nullopt: not costed).
struct LaidOut {
  Placement place;
  std::optional<uint64_t> cycles;
};

/// The layout with the fewest modelled cycles (bank conflicts between the
/// TIU and the GDMA are what differ): of Packed, BankAligned and Split, with
/// `reuse` of the lifetime layouts too. Without records (or where only a
/// lifetime layout fits) the smallest that fits.
LaidOut chooseLayout(const GroupGraph &g, const GroupSlicing &s, int64_t buffers, bool reuse,
                     std::optional<llvm::ArrayRef<kiln_tiu_cmd>> records);

/// A span of the queues: the prologue (slice -1) or one slice, or the drain.
struct Step {
  int32_t slice = -1;
  uint32_t tiuBegin = 0, tiuEnd = 0, gdmaBegin = 0, gdmaEnd = 0;
};

struct GroupQueues {
  std::vector<kiln_tiu_cmd> tiu;
  std::vector<kiln_gdma_cmd> gdma;
  std::vector<Step> steps;
  std::vector<int> slices; ///< the non-empty slices, in the order they run
  std::vector<int> tiuNode;   ///< per TIU command, the node it runs
  std::vector<int> gdmaValue; ///< per GDMA command, the value it moves (-1: prefetch)
};

/// The queues of group `g` sliced as `s` with `buffers` buffers per sliced
/// value. `records[n]` is node n's record for the whole op (fillTiuRecord).
/// `prefetch` are loads of later groups' coefficients this group issues
/// right after its prologue, waiting for nothing. Fails (with a diagnostic at
/// the op) if a slice does not match its conv window.
mlir::FailureOr<GroupQueues> scheduleGroup(const GroupGraph &g, const GroupSlicing &s,
                                           int64_t buffers, const Placement &place,
                                           llvm::ArrayRef<kiln_tiu_cmd> records,
                                           llvm::ArrayRef<kiln_gdma_cmd> prefetch = {});

/// The load of held value v whole to LMEM lmemAddr from DDR ddrAddr.
kiln_gdma_cmd wholeLoad(const GroupGraph &g, const GroupSlicing &s, int v, uint32_t lmemAddr,
                        uint64_t ddrAddr);

/// A tpu.group as the scheduler sees it: its graph, and the slicing and
/// placement its plan records (Plan.h; DDR addresses from `ddrAddrOf`, 0
/// before they are assigned).
struct MaterializedGroup {
  GroupGraph g;
  GroupSlicing s;
  int64_t buffers = 1;
  Placement place;
  /// The tpu.load of each external value (null for others).
  std::vector<mlir::Operation *> loads;
};
MaterializedGroup readGroup(mlir::Operation *group,
                            llvm::function_ref<uint64_t(mlir::Value)> ddrAddrOf);

/// Modelled cycles of the queues (kiln_schedule_queues); 0 if they deadlock.
uint64_t modelledCycles(const GroupQueues &q);

/// Modelled cycles of the group as scheduleGroup would emit it, or nullopt
/// if it cannot be scheduled.
std::optional<uint64_t> modelGroup(const GroupGraph &g, const GroupSlicing &s, int64_t buffers,
                                   const Placement &place,
                                   llvm::ArrayRef<kiln_tiu_cmd> records,
                                   llvm::ArrayRef<kiln_gdma_cmd> prefetch = {});

/// A plan and its modelled cycles.
struct CostedPlan {
  Plan plan;
  uint64_t cycles = 0;
};

/// The fastest plans of `g` without and with LMEM reuse.
struct PlanChoice {
  std::optional<CostedPlan> fixed; ///< every value its bytes for the whole group
  std::optional<CostedPlan> reuse; ///< the lifetime layouts too, so maybe fewer slices
};

/// The fastest slicings of `g` that fit LMEM: N x C x H x W slices with one
/// or two buffers, each candidate costed in its smallest layout, the three
/// fastest then in every layout. More slices pipeline loads, compute and
/// stores but repeat halo rows and command overheads; the candidates run from
/// the fewest slices that fit (with and without reuse) to a few times more.
/// W slices are tried on wide maps of few rows and where nothing else fits.
/// Without records (an op the code generator cannot encode, which it will
/// report) the fewest slices that fit, uncosted. Empty if nothing fits.
/// Without `reuse` only the fixed plan is searched (and given as both).
/// With `taper`, the fastest plans of three H slices or more are costed with
/// tapered slices too.
PlanChoice choosePlans(const GroupGraph &g, std::optional<llvm::ArrayRef<kiln_tiu_cmd>> records,
                       bool reuse = true, bool taper = false);

} // namespace kiln::lg

#endif
