//===- LayerGroupPass.cpp - Form and slice layer groups -------------------===//

#include "kiln/Dialect/Tpu/Transforms/Passes.h"
#include "kiln/LayerGroup/GroupSearch.h"
#include "kiln/LayerGroup/Plan.h"
#include "kiln/LayerGroup/Prefetch.h"

#include "kiln/Codegen/TiuRecord.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace kiln::tpu {
#define GEN_PASS_DEF_TPULAYERGROUP
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

namespace {

/// The ops' TIU records (fillTiuRecord), each encoded once; nullopt if one
/// cannot be encoded, which code generation reports.
class RecordCache {
public:
  std::optional<std::vector<kiln_tiu_cmd>> of(ArrayRef<Operation *> ops) {
    std::vector<kiln_tiu_cmd> records;
    for (Operation *op : ops) {
      auto [it, inserted] = cache.try_emplace(op);
      if (inserted)
        it->second = codegen::tryTiuRecord(op);
      if (!it->second)
        return std::nullopt;
      records.push_back(*it->second);
    }
    return records;
  }

private:
  DenseMap<Operation *, std::optional<kiln_tiu_cmd>> cache;
};

/// Moves `ops` into a new tpu.group placed where the last of them was, with
/// loads for external operands and stores for escaping results, and records
/// its plan (slicing and LMEM layout). Returns the group's modelled cycles.
std::optional<uint64_t> materialize(ArrayRef<Operation *> ops, const lg::Plan &plan,
                                    RecordCache &records) {
  lg::GroupGraph g = lg::GroupGraph::fromOps(ops);
  lg::GroupSlicing slicing =
      lg::computeSlicing(g, plan.nSlices, plan.cSlices, plan.hSlices, plan.wSlices,
                         plan.taperedH);

  std::optional<std::vector<kiln_tiu_cmd>> recs = records.of(ops);
  lg::LaidOut laid = lg::chooseLayout(
      g, slicing, plan.buffers, plan.reuse,
      recs ? std::optional<ArrayRef<kiln_tiu_cmd>>(*recs) : std::nullopt);

  // Where the last of them in program order was (a group may run its ops in
  // another order): every operand is defined before it.
  Operation *last = *llvm::max_element(
      ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  OpBuilder b(last);
  SmallVector<Value> escaping;
  SmallVector<Type> resultTypes;
  for (const auto &val : g.vals)
    if (val.escaping) {
      escaping.push_back(val.value);
      resultTypes.push_back(val.value.getType());
    }
  auto group = b.create<tpu::GroupOp>(
      last->getLoc(), resultTypes,
      lg::toAttr(b.getContext(), g, slicing, plan.buffers, laid.place));
  Block *body = new Block();
  group.getBody().push_back(body);
  OpBuilder inner = OpBuilder::atBlockBegin(body);

  for (auto [v, val] : llvm::enumerate(g.vals)) {
    if (!val.external)
      continue;
    auto load = inner.create<tpu::LoadOp>(val.value.getLoc(), val.value.getType(), val.value,
                                          IntegerAttr());
    val.value.replaceUsesWithIf(load.getOutput(), [&](OpOperand &use) {
      return llvm::is_contained(ops, use.getOwner());
    });
  }
  for (const auto &node : g.nodes)
    node.op->moveBefore(body, body->end());
  // A filter formed in the group reaches its conv through a view inside it
  // (the LMEM bytes of its producer); users in later groups keep reading the
  // original view of the stored value.
  for (const auto &node : g.nodes)
    for (OpOperand &use : node.op->getOpOperands()) {
      Operation *view = use.get().getDefiningOp();
      if (!lg::isFilterView(view) || view->getParentRegion() == &group.getBody())
        continue;
      Value formed = view->getOperand(0);
      if (formed.getDefiningOp()->getBlock() != body)
        continue;
      OpBuilder at(node.op);
      use.set(at.clone(*view)->getResult(0));
      if (view->use_empty())
        view->erase();
    }
  inner.setInsertionPointToEnd(body);
  SmallVector<Value> stored;
  for (Value v : escaping)
    stored.push_back(inner.create<tpu::StoreOp>(v.getLoc(), v.getType(), v));
  inner.create<tpu::YieldOp>(group.getLoc(), stored);
  for (auto [v, result] : llvm::zip(escaping, group.getResults()))
    v.replaceUsesWithIf(result, [&](OpOperand &use) {
      return use.getOwner()->getParentOp() != group.getOperation() &&
             use.getOwner()->getBlock() != body;
    });
  // Views of its results that later groups read follow the group.
  for (Value result : group.getResults())
    for (Operation *user : llvm::make_early_inc_range(result.getUsers()))
      if (lg::isFilterView(user) && user->isBeforeInBlock(group))
        user->moveAfter(group);
  return laid.cycles;
}

/// Materializes `groups` of `func` and plans prefetches; the modelled cycles
/// of its groups (nullopt if one is not costed).
std::optional<uint64_t> materializeAll(func::FuncOp func, ArrayRef<lg::GroupChoice> groups,
                                       RecordCache &records, unsigned maxPrefetchGroups) {
  std::optional<uint64_t> total = 0;
  for (const lg::GroupChoice &group : groups) {
    std::optional<uint64_t> cycles = materialize(group.ops, group.plan, records);
    total = total && cycles ? std::optional<uint64_t>(*total + *cycles) : std::nullopt;
  }
  if (maxPrefetchGroups > 0) {
    SmallVector<Operation *> materialized;
    for (auto group : func.getBody().front().getOps<tpu::GroupOp>())
      materialized.push_back(group);
    auto recordsOf = [&](ArrayRef<Operation *> ops) { return records.of(ops); };
    uint64_t saved = lg::planPrefetch(materialized, maxPrefetchGroups, recordsOf);
    if (total)
      *total -= saved;
  }
  return total;
}

struct LayerGroupPass : public tpu::impl::TpuLayerGroupBase<LayerGroupPass> {
  using TpuLayerGroupBase::TpuLayerGroupBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    RecordCache records;
    auto recordsOf = [&](ArrayRef<Operation *> ops) { return records.of(ops); };
    lg::GroupSplits groups;
    for (ArrayRef<Operation *> run : lg::tiuRuns(func.getBody().front())) {
      FailureOr<lg::GroupSplits> found =
          lg::searchGroups(run, enabled ? maxGroupOps : 1, recordsOf);
      if (failed(found))
        return signalPassFailure();
      groups.fixed.insert(groups.fixed.end(), found->fixed.begin(), found->fixed.end());
      groups.reuse.insert(groups.reuse.end(), found->reuse.begin(), found->reuse.end());
    }
    // Both splits, each with its prefetches and with and without tapered
    // slices; the net keeps the fastest (on a tie: without reuse, without
    // tapering).
    unsigned prefetch = enabled ? maxPrefetchGroups : 0;
    std::vector<std::vector<lg::GroupChoice>> nets;
    for (bool reuse : {false, true}) {
      std::vector<lg::GroupChoice> &split = reuse ? groups.reuse : groups.fixed;
      split = lg::withBestOrder(split, reuse, recordsOf);
      nets.push_back(split);
      if (auto tapered = lg::withTaper(split, reuse, recordsOf))
        nets.push_back(std::move(*tapered));
    }
    func::FuncOp best;
    std::optional<uint64_t> bestCycles;
    for (std::vector<lg::GroupChoice> &net : nets) {
      IRMapping map;
      func::FuncOp candidate = func.clone(map);
      for (lg::GroupChoice &group : net)
        for (Operation *&op : group.ops)
          op = map.lookup(op);
      // Its own cache: an erased candidate's ops may share addresses with
      // the next one's.
      RecordCache candidateRecords;
      std::optional<uint64_t> cycles =
          materializeAll(candidate, net, candidateRecords, prefetch);
      if (!best || (cycles && (!bestCycles || *cycles < *bestCycles))) {
        if (best)
          best.erase();
        best = candidate;
        bestCycles = cycles;
      } else {
        candidate.erase();
      }
    }
    func.getBody().takeBody(best.getBody());
    best.erase();
  }
};
} // namespace

std::unique_ptr<Pass> tpu::createLayerGroupPass() {
  return std::make_unique<LayerGroupPass>();
}

std::unique_ptr<Pass> tpu::createLayerGroupPass(unsigned maxGroupOps,
                                                bool enabled) {
  tpu::TpuLayerGroupOptions options;
  options.maxGroupOps = maxGroupOps;
  options.enabled = enabled;
  return std::make_unique<LayerGroupPass>(options);
}
