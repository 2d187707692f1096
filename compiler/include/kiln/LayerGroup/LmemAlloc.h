//===- LmemAlloc.h - A layer group's LMEM layout ----------------*- C++ -*-===//
//
// Places a sliced group's values in a lane's LMEM. Held and invariant values
// take one buffer for the whole group, sliced values `buffers` (ping and
// pong: slice k uses buffer k % buffers).
//
// The lifetime layouts reuse space. Per slice the scheduler (Schedule.h)
// emits the slice's loads, its ops in order, then the stores of slice
// k - (buffers - 1); a step has P = ops + 2 positions and slice k's instance
// of a value lives from its write (its load, or its op) to its last access
// (its last reader, or its store, buffers - 1 steps later). Two buffers may
// share bytes when no instances of theirs are live at the same position:
// then every access of the earlier occupant is emitted before the write of
// the later one, and the scheduler makes that write wait for the last of
// them in the other queue, so commands that may run together never share
// bytes (the cmodel's race check) and the cost model sees the wait.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYERGROUP_LMEMALLOC_H
#define KILN_LAYERGROUP_LMEMALLOC_H

#include "kiln/LayerGroup/Slicing.h"

#include <optional>

namespace kiln::lg {

/// How values are laid out in LMEM.
enum class Layout {
  Packed,      ///< one after another in value order
  BankAligned, ///< the same, each buffer starting on a new bank
  Split,       ///< loaded values from the top down, computed ones from the bottom
               ///< up: loads write other banks than the TIU's results
  Lifetime,    ///< space of dead buffers reused, lowest free offset first
  LifetimeSplit, ///< reused, loaded values from the top down
  LifetimeBanks, ///< reused, each buffer where it shares the fewest banks with
                 ///< live buffers the other engine touches (held loads meet
                 ///< the TIU's first ops in the prologue)
  LifetimePipelined, ///< the same, a slice's loads kept apart from the slice
                     ///< before (ping-pong), so they run while it computes
};

/// Where a group's values are: LMEM per-lane offsets of each value's two
/// buffers (the same offset twice when it has one), and the DDR offsets of
/// the values it loads or stores (0 when only costing).
struct Placement {
  std::vector<std::array<uint32_t, 2>> lmem;
  std::vector<uint64_t> ddr;
  /// Per value (empty: none): loaded by an earlier group (prefetch_groups).
  std::vector<bool> preloaded;
  /// The layout that placed them: whose lifetimes (below) it kept apart.
  Layout layout = Layout::Packed;
};

/// Positions of a slice's step: its loads, each op in order, its stores.
inline int64_t stepPositions(const GroupGraph &g) { return g.nodes.size() + 2; }

/// The positions a value's ping buffer is live at, [first, last], on the
/// cycle of stepPositions * buffers positions the lifetime layouts reason
/// about (the pong buffer one step later). Invariant values are live
/// throughout: [0, period - 1].
struct Lifetime {
  int64_t first = 0, last = 0;
};
std::vector<Lifetime> lifetimes(const GroupGraph &g, const GroupSlicing &s, int64_t buffers,
                                Layout layout);

/// The layout, or nullopt if it does not fit LMEM (Packed always fits a plan
/// that lmemLaneBytes accepts, Lifetime one that fitsLmem accepts).
std::optional<Placement> placeInLmem(const GroupGraph &g, const GroupSlicing &s,
                                     int64_t buffers, Layout layout = Layout::Packed);

/// Whether some layout fits: the packed total, or else the lifetime peak.
bool fitsLmem(const GroupGraph &g, const GroupSlicing &s, int64_t buffers);

/// The smallest layout that fits: Packed, else Lifetime.
std::optional<Placement> placeSmallest(const GroupGraph &g, const GroupSlicing &s,
                                       int64_t buffers);

} // namespace kiln::lg

#endif
