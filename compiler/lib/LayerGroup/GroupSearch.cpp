//===- GroupSearch.cpp - Which ops form each layer group ------------------===//

#include "kiln/LayerGroup/GroupSearch.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::lg;

/// A filter, bias or table computed in the same group would be in activation
/// layout; it must reach its op through DDR, where the load lays it out as
/// the TIU reads it. So `op` cannot join a group holding `producer`.
static bool readsWholeOperandFrom(Operation *op, Operation *producer) {
  for (OpOperand &use : op->getOpOperands())
    if (isWholeOperand(op, use.getOperandNumber()) && use.get().getDefiningOp() == producer)
      return true;
  return false;
}

static PlanChoice planOf(ArrayRef<Operation *> ops, RecordsOf recordsOf, bool reuse,
                         bool taper = false) {
  std::optional<std::vector<kiln_tiu_cmd>> records = recordsOf(ops);
  return choosePlans(GroupGraph::fromOps(ops),
                     records ? std::optional<ArrayRef<kiln_tiu_cmd>>(*records) : std::nullopt,
                     reuse, taper);
}

FailureOr<GroupSplits> lg::searchGroups(ArrayRef<Operation *> run, unsigned maxGroupOps,
                                        RecordsOf recordsOf, bool reuse) {
  size_t m = run.size();
  constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  // Per kind (fixed, reuse; PlanChoice): best[j], cycles of the best split
  // of run[0, j); from[j], where its last group starts.
  std::vector<uint64_t> best[2];
  std::vector<size_t> from[2];
  std::vector<CostedPlan> plan[2];
  for (int kind : {0, 1}) {
    best[kind].assign(m + 1, kNone);
    best[kind][0] = 0;
    from[kind].assign(m + 1, 0);
    plan[kind].resize(m + 1);
  }
  for (size_t j = 1; j <= m; ++j) {
    size_t lowest = j > maxGroupOps ? j - std::max(1u, maxGroupOps) : 0;
    for (size_t i = j; i-- > lowest;) {
      ArrayRef<Operation *> ops = run.slice(i, j - i);
      // A conflict with the op added on the left stays in every larger group.
      bool conflict = false;
      for (size_t k = i + 1; k < j && !conflict; ++k)
        conflict = readsWholeOperandFrom(run[k], run[i]);
      if (conflict)
        break;
      if (best[0][i] == kNone && best[1][i] == kNone)
        continue;
      PlanChoice p = planOf(ops, recordsOf, reuse);
      if (!p.reuse) {
        if (j - i == 1) {
          // Ops reading whole rows keep W whole: a value whose last
          // dimension alone overflows a lane (a reduction over one long
          // row) cannot be placed.
          Operation *op = run[i];
          auto type = cast<RankedTensorType>(op->getResult(0).getType());
          op->emitError("does not fit local memory even when sliced along N, C, H and W "
                        "where it allows (rows of ")
              << type.getShape().back() << " elements)";
          return failure();
        }
        continue;
      }
      // An op that fits only with reuse is its own group either way.
      if (!p.fixed && j - i == 1)
        p.fixed = p.reuse;
      for (int kind : {0, 1}) {
        const std::optional<CostedPlan> &c = kind ? p.reuse : p.fixed;
        if (c && best[kind][i] != kNone && best[kind][i] + c->cycles < best[kind][j]) {
          best[kind][j] = best[kind][i] + c->cycles;
          from[kind][j] = i;
          plan[kind][j] = *c;
        }
      }
    }
  }
  GroupSplits splits;
  for (int kind : {0, 1}) {
    std::vector<GroupChoice> &groups = kind ? splits.reuse : splits.fixed;
    for (size_t j = m; j > 0; j = from[kind][j]) {
      GroupChoice g;
      g.ops.assign(run.begin() + from[kind][j], run.begin() + j);
      g.plan = plan[kind][j].plan;
      g.cycles = plan[kind][j].cycles;
      groups.push_back(std::move(g));
    }
    std::reverse(groups.begin(), groups.end());
  }
  return splits;
}

std::optional<std::vector<GroupChoice>> lg::withTaper(ArrayRef<GroupChoice> split, bool reuse,
                                                      RecordsOf recordsOf) {
  std::vector<GroupChoice> tapered(split.begin(), split.end());
  bool any = false;
  for (GroupChoice &group : tapered) {
    if (group.plan.hSlices < 3)
      continue;
    // Without records the plan is uncosted and never tapered.
    PlanChoice p = planOf(group.ops, recordsOf, reuse, /*taper=*/true);
    const std::optional<CostedPlan> &c = reuse ? p.reuse : p.fixed;
    if (!c || !c->plan.taperedH || c->cycles >= group.cycles)
      continue;
    group.plan = c->plan;
    group.cycles = c->cycles;
    any = true;
  }
  if (!any)
    return std::nullopt;
  return tapered;
}

/// Topological orders of `ops` (a group in program order) other than theirs:
/// per sink, its ancestors in the group first, then the other ops.
static std::vector<SmallVector<Operation *>> sinkFirstOrders(ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  // The member computing v (read directly or through a filter view).
  auto producer = [&](Value v) -> Operation * {
    Operation *def = v.getDefiningOp();
    if (isFilterView(def))
      def = def->getOperand(0).getDefiningOp();
    return def && members.contains(def) ? def : nullptr;
  };
  llvm::SmallPtrSet<Operation *, 16> read;
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (Operation *p = producer(operand))
        read.insert(p);
  std::vector<SmallVector<Operation *>> orders;
  if (ops.size() - read.size() < 2)
    return orders; // one sink: every op is its ancestor
  for (Operation *sink : ops) {
    if (read.contains(sink))
      continue;
    llvm::SmallPtrSet<Operation *, 16> cone;
    SmallVector<Operation *> work{sink};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!cone.insert(op).second)
        continue;
      for (Value operand : op->getOperands())
        if (Operation *p = producer(operand))
          work.push_back(p);
    }
    SmallVector<Operation *> order;
    for (bool inCone : {true, false})
      for (Operation *op : ops)
        if (cone.contains(op) == inCone)
          order.push_back(op);
    if (!llvm::equal(order, ops))
      orders.push_back(std::move(order));
  }
  return orders;
}

std::vector<GroupChoice> lg::withBestOrder(ArrayRef<GroupChoice> split, bool reuse,
                                           RecordsOf recordsOf) {
  std::vector<GroupChoice> ordered(split.begin(), split.end());
  for (GroupChoice &group : ordered)
    for (SmallVector<Operation *> &order : sinkFirstOrders(group.ops)) {
      PlanChoice p = planOf(order, recordsOf, reuse);
      const std::optional<CostedPlan> &c = reuse ? p.reuse : p.fixed;
      if (!c || c->cycles >= group.cycles)
        continue;
      group.ops = std::move(order);
      group.plan = c->plan;
      group.cycles = c->cycles;
    }
  return ordered;
}

std::vector<SmallVector<Operation *>> lg::tiuRuns(Block &block) {
  std::vector<SmallVector<Operation *>> runs(1);
  for (Operation &op : block) {
    if (isa<top::WeightOp, top::NoneOp>(op))
      continue;
    if (op.hasTrait<tpu::RunsOnTiu>())
      runs.back().push_back(&op);
    else if (isFilterView(&op) &&
             llvm::is_contained(runs.back(), op.getOperand(0).getDefiningOp()))
      continue;
    else if (op.hasTrait<tpu::DdrView>() &&
             !llvm::is_contained(runs.back(),
                                 tpu::producedValue(op.getResult(0)).getDefiningOp()))
      continue; // a view of memory written before the run: its readers' loads read it
    else if (!runs.back().empty())
      runs.emplace_back();
  }
  if (runs.back().empty())
    runs.pop_back();
  return runs;
}
