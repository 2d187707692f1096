//===- GroupSearch.cpp - Which ops form each layer group ------------------===//

#include "kiln/LayerGroup/GroupSearch.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "mlir/IR/BuiltinTypes.h"

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

static std::optional<CostedPlan> planOf(ArrayRef<Operation *> ops, RecordsOf recordsOf) {
  std::optional<std::vector<kiln_tiu_cmd>> records = recordsOf(ops);
  return choosePlan(GroupGraph::fromOps(ops),
                    records ? std::optional<ArrayRef<kiln_tiu_cmd>>(*records) : std::nullopt);
}

FailureOr<std::vector<GroupChoice>> lg::searchGroups(ArrayRef<Operation *> run,
                                                     unsigned maxGroupOps, RecordsOf recordsOf) {
  size_t m = run.size();
  constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  // best[j]: cycles of the best split of run[0, j); from[j]: where its last
  // group starts.
  std::vector<uint64_t> best(m + 1, kNone);
  std::vector<size_t> from(m + 1, 0);
  std::vector<CostedPlan> plan(m + 1);
  best[0] = 0;
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
      if (best[i] == kNone)
        continue;
      std::optional<CostedPlan> p = planOf(ops, recordsOf);
      if (!p) {
        if (j - i == 1) {
          // Rows are never split: a value whose last dimension alone
          // overflows a lane (a reduction over one long row) cannot be placed.
          Operation *op = run[i];
          auto type = cast<RankedTensorType>(op->getResult(0).getType());
          op->emitError("does not fit local memory even when sliced along N, C and H (rows of ")
              << type.getShape().back()
              << " elements; slicing along W is not supported yet)";
          return failure();
        }
        continue;
      }
      if (best[i] + p->cycles < best[j]) {
        best[j] = best[i] + p->cycles;
        from[j] = i;
        plan[j] = *p;
      }
    }
  }
  std::vector<GroupChoice> groups;
  for (size_t j = m; j > 0; j = from[j]) {
    GroupChoice g;
    g.ops.assign(run.begin() + from[j], run.begin() + j);
    g.plan = plan[j].plan;
    g.cycles = plan[j].cycles;
    groups.push_back(std::move(g));
  }
  std::reverse(groups.begin(), groups.end());
  return groups;
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
    else if (!runs.back().empty())
      runs.emplace_back();
  }
  if (runs.back().empty())
    runs.pop_back();
  return runs;
}
