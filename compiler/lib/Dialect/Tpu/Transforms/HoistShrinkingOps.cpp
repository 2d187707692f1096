//===- HoistShrinkingOps.cpp - Reductions next to what they read ----------===//
//
// A layer group is a contiguous range of ops, so a value whose readers sit
// far apart in program order goes through DDR. Exporters often list an op
// long after its operand was made: PP-LCNet computes each stage's output
// projection (`outs.k`, a 1 x 1 conv to a few channels) after the whole
// backbone, and an FPN neck runs its 3 x 3 convs over the merged maps only
// after all the merges. Each such operand is a full-resolution map that is
// stored when made and loaded again by its late reader.
//
// When an op is the last reader of operands larger than its result, moving
// it right after the latest of its operands lets the group search keep them
// in LMEM; its smaller result makes the DDR trip instead. The move is made
// only where it shortens operands that could not otherwise stay in one group
// (their readers more than `max-group-ops` ops apart) and the bytes that then
// stay on chip outweigh the bytes of a result that could have stayed.
// Operands keep their producers, so every op computes what it did.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/Transforms/Passes.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"

namespace kiln::tpu {
#define GEN_PASS_DEF_TPUHOISTSHRINKINGOPS
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

namespace {

bool isConstant(Operation *op) { return op && isa<top::WeightOp, top::NoneOp>(op); }

struct HoistShrinkingOps : public tpu::impl::TpuHoistShrinkingOpsBase<HoistShrinkingOps> {
  using TpuHoistShrinkingOpsBase::TpuHoistShrinkingOpsBase;

  void runOnOperation() override {
    Block &block = getOperation().getBody().front();
    SmallVector<Operation *> candidates;
    for (Operation &op : block)
      if (op.hasTrait<tpu::RunsOnTiu>() && op.getNumRegions() == 0 && op.getNumResults() == 1)
        candidates.push_back(&op);
    for (Operation *op : candidates)
      hoist(block, op);
  }

  /// Program positions of the block's ops, constants not counted.
  static DenseMap<Operation *, int64_t> positions(Block &block) {
    DenseMap<Operation *, int64_t> pos;
    int64_t next = 0;
    for (Operation &op : block)
      pos[&op] = isConstant(&op) ? next : next++;
    return pos;
  }

  void hoist(Block &block, Operation *op) {
    // The latest producer of an activation operand: the op goes right after.
    Operation *anchor = nullptr;
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (isConstant(def))
        continue;
      if (!def || def->getBlock() != &block)
        return;
      if (!anchor || anchor->isBeforeInBlock(def))
        anchor = def;
    }
    if (!anchor)
      return;
    // Already right after it (constants between do not count): most ops.
    Operation *prev = op->getPrevNode();
    while (prev && prev != anchor && isConstant(prev))
      prev = prev->getPrevNode();
    if (prev == anchor)
      return;
    DenseMap<Operation *, int64_t> pos = positions(block);
    int64_t from = pos[op], to = pos[anchor] + 1;
    auto lastUse = [&](Value v, Operation *except) {
      int64_t last = -1;
      for (Operation *user : v.getUsers())
        if (user != except && user->getBlock() == &block)
          last = std::max(last, pos[user]);
        else if (user != except)
          last = std::numeric_limits<int64_t>::max(); // read outside the block
      return last;
    };
    int64_t window = maxGroupOps;
    // Bytes that can stay in LMEM once the op reads them right after they
    // are made: operands it reads last whose readers end up within a group.
    uint64_t kept = 0;
    SmallPtrSet<Value, 4> seen;
    for (Value v : op->getOperands()) {
      if (isConstant(v.getDefiningOp()) || !seen.insert(v).second)
        continue;
      int64_t others = lastUse(v, op);
      if (others > from)
        continue; // a later reader keeps it alive anyway
      int64_t made = pos[v.getDefiningOp()];
      if (from - made > window && std::max(others, to) - made <= window)
        kept += tpu::tensorBytes(v);
    }
    // The result's readers move away from it.
    Value result = op->getResult(0);
    int64_t lastReader = -1;
    for (Operation *user : result.getUsers()) {
      if (user->getBlock() != &block)
        return;
      lastReader = std::max(lastReader, pos[user]);
    }
    uint64_t spilled = lastReader - from <= window && lastReader - to > window
                           ? tpu::tensorBytes(result)
                           : 0;
    if (kept <= spilled)
      return;
    op->moveAfter(anchor);
    // Constants it reads that were defined after the anchor move along.
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); isConstant(def) && op->isBeforeInBlock(def))
        def->moveBefore(op);
  }
};
} // namespace
