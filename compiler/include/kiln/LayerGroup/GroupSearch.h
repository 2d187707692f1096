//===- GroupSearch.h - Which ops form each layer group ----------*- C++ -*-===//
//
// Splits a run of TIU ops (program order, nothing that reads DDR between
// them) into layer groups that minimise the summed modelled cycles: dynamic
// programming over the run, as TPU-MLIR's default grouping does, where a
// candidate group [i, j) costs the cycles of its fastest plan (choosePlans, so
// the chip's own scheduler with pipeline fill and drain). A group keeps its
// internal values (a residual branch's skip included) in LMEM, so joining
// ops saves their DDR round trips; splitting frees LMEM for fewer slices and
// larger double buffers. Each op's best group is found among the groups of at
// most `maxGroupOps` ops ending there.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYERGROUP_GROUPSEARCH_H
#define KILN_LAYERGROUP_GROUPSEARCH_H

#include "kiln/LayerGroup/Schedule.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace kiln::lg {

struct GroupChoice {
  llvm::SmallVector<mlir::Operation *> ops;
  Plan plan;
  uint64_t cycles = 0;
};

/// The TIU records of the ops in order, or nullopt if one cannot be encoded
/// (then candidates are not costed: the fewest groups that fit win).
using RecordsOf =
    llvm::function_ref<std::optional<std::vector<kiln_tiu_cmd>>(llvm::ArrayRef<mlir::Operation *>)>;

/// The best split of a run with each kind of plan (PlanChoice): LMEM reuse
/// makes groups fit that did not, but a group's cycles alone do not show
/// what prefetching coefficients across groups gains, so the layer-group
/// pass materializes both and keeps the faster.
struct GroupSplits {
  std::vector<GroupChoice> fixed, reuse;
};

/// The groups of `run`, in order. Fails with an error at the first op that
/// does not fit LMEM even alone. Without `reuse` only the fixed split is
/// searched (and given as both).
mlir::FailureOr<GroupSplits> searchGroups(llvm::ArrayRef<mlir::Operation *> run,
                                          unsigned maxGroupOps, RecordsOf recordsOf,
                                          bool reuse = true);

/// `split` with each group's fastest plan when tapered H slices are costed
/// too (the `reuse` kind, or the fixed one), or nullopt if no group tapers.
/// The search leaves tapering out: a group's own cycles miss what tapering
/// shares with prefetching coefficients across groups (both shorten its
/// fill, and tapering's larger middle slices leave less LMEM to prefetch
/// into), so the layer-group pass costs each split's net both ways.
std::optional<std::vector<GroupChoice>> withTaper(llvm::ArrayRef<GroupChoice> split, bool reuse,
                                                  RecordsOf recordsOf);

/// `split` with each group's ops in the order, of the few costed, whose
/// fastest plan models the fewest cycles (the `reuse` kind, or the fixed
/// one). Program order runs a group's independent branches as the exporter
/// listed them; a slice's stores wait for their producers, so a branch that
/// ends in a store (a segmentation net's auxiliary head) is better run
/// before the main chain: its store then overlaps the chain's compute, and
/// the group's drain is the main result's store alone. The orders costed run
/// one sink's (an op no other op of the group reads) ancestors first, each
/// set in program order.
std::vector<GroupChoice> withBestOrder(llvm::ArrayRef<GroupChoice> split, bool reuse,
                                       RecordsOf recordsOf);

/// The runs of TIU ops in `block` that searchGroups splits, in program
/// order. Reshapes, concats, DMA ops, unfold_rows and the return read or
/// write DDR, so what they consume must be stored first: they end a run. A
/// filter view of a value computed in the run stays in it (a filter formed
/// in LMEM may join its conv's group); a view of memory written before the
/// run reads nothing the run writes, so it does not end the run.
std::vector<llvm::SmallVector<mlir::Operation *>> tiuRuns(mlir::Block &block);

} // namespace kiln::lg

#endif
