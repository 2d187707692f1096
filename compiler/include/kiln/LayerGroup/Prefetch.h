//===- Prefetch.h - Coefficients loaded while earlier groups compute -*- C++ -*-===//
//
// Within a group, a coefficient loads while the ops before its first reader
// compute; the group's first ops still wait for theirs, and a group whose
// weights outweigh its compute (the late stages of a ResNet in INT8) keeps
// the TIU idle. Across groups, an earlier group can load them: its GDMA queue
// takes the load right after its own prologue, so it runs while that group
// computes, into LMEM that no group from there on touches until the reader.
//
// For each group in order and each of its held coefficients in the order its
// ops read them, every earlier group up to `maxDistance` back is tried as the
// host: the coefficient moves to an LMEM range that the host, the groups
// between and its own group leave free (a few are costed, highest first:
// the host's TIU commands running beside the load may share a 16 KiB bank
// with one and not another), and the move is kept where the chip's
// scheduler models the host plus the reader fastest and faster than before
// (other groups do not change). The decision is recorded on the reader's
// tpu.load (prefetch_groups) and in its group's plan (the moved buffer).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYERGROUP_PREFETCH_H
#define KILN_LAYERGROUP_PREFETCH_H

#include "kiln/LayerGroup/GroupSearch.h"

namespace kiln::lg {

/// `groups` are the function's tpu.group ops in program order (other steps
/// between them only copy DDR). Returns the modelled cycles saved.
uint64_t planPrefetch(llvm::ArrayRef<mlir::Operation *> groups, unsigned maxDistance,
                      RecordsOf recordsOf);

} // namespace kiln::lg

#endif
