//===- Prefetch.cpp - Coefficients loaded while earlier groups compute ----===//

#include "kiln/LayerGroup/Prefetch.h"
#include "kiln/LayerGroup/Plan.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/abi/chip.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::lg;

namespace {

/// Free places costed for a prefetched coefficient in each host.
constexpr size_t kPlacesCosted = 6;

/// A per-lane LMEM range [lo, hi).
struct Span {
  uint64_t lo, hi;
};

struct GroupState {
  MaterializedGroup m;
  std::vector<kiln_tiu_cmd> records;
  std::vector<kiln_gdma_cmd> prefetch;
  std::vector<Span> used; ///< its allocations and the prefetches passing over it
  uint64_t cycles = 0;

  std::optional<uint64_t> model() const {
    return modelGroup(m.g, m.s, m.buffers, m.place, records, prefetch);
  }

  Span spanOf(int v) const {
    uint64_t bytes = m.s.laneBytes(m.g, v);
    return {m.place.lmem[v][0], m.place.lmem[v][0] + bytes};
  }
};

/// EU-aligned starts of `bytes` free of every range in `taken`, highest
/// first: in each free gap, its highest and its lowest start.
std::vector<uint64_t> freeStarts(std::vector<Span> taken, uint64_t bytes) {
  std::sort(taken.begin(), taken.end(), [](Span a, Span b) { return a.lo < b.lo; });
  std::vector<Span> merged;
  for (const Span &s : taken) {
    if (s.hi <= s.lo)
      continue;
    if (!merged.empty() && s.lo <= merged.back().hi)
      merged.back().hi = std::max(merged.back().hi, s.hi);
    else
      merged.push_back(s);
  }
  std::vector<uint64_t> starts;
  uint64_t top = KILN_LMEM_BYTES_PER_LANE;
  for (size_t k = merged.size() + 1; k-- > 0;) {
    uint64_t floor = k == 0 ? 0 : merged[k - 1].hi;
    uint64_t lowest = (floor + KILN_EU_BYTES - 1) / KILN_EU_BYTES * KILN_EU_BYTES;
    if (top >= lowest + bytes) {
      uint64_t highest = (top - bytes) / KILN_EU_BYTES * KILN_EU_BYTES;
      starts.push_back(highest);
      if (lowest != highest)
        starts.push_back(lowest);
    }
    if (k > 0)
      top = merged[k - 1].lo;
  }
  return starts;
}

/// Whether value v of the group is a coefficient it holds for every slice.
bool isHeldCoefficient(const MaterializedGroup &m, int v) {
  auto load = dyn_cast_or_null<tpu::LoadOp>(m.loads[v]);
  return load && m.s.invariant[v] && !load.getPrefetchGroups() && m.g.vals[v].wholeOnly &&
         load.getInput().getDefiningOp<top::WeightOp>();
}

} // namespace

uint64_t lg::planPrefetch(ArrayRef<Operation *> groups, unsigned maxDistance,
                          RecordsOf recordsOf) {
  std::vector<GroupState> state(groups.size());
  for (auto [i, op] : llvm::enumerate(groups)) {
    GroupState &st = state[i];
    st.m = readGroup(op, [](Value) { return uint64_t{0}; });
    SmallVector<Operation *> ops;
    for (const auto &node : st.m.g.nodes)
      ops.push_back(node.op);
    std::optional<std::vector<kiln_tiu_cmd>> records = recordsOf(ops);
    std::optional<uint64_t> cycles;
    if (records) {
      st.records = std::move(*records);
      cycles = st.model();
    }
    if (!cycles)
      return 0; // not costable: keep every load where it is
    st.cycles = *cycles;
    for (size_t v = 0; v < st.m.g.vals.size(); ++v) {
      Span span = st.spanOf(v);
      st.used.push_back(span);
      if (st.m.place.lmem[v][1] != st.m.place.lmem[v][0])
        st.used.push_back({st.m.place.lmem[v][1], st.m.place.lmem[v][1] + (span.hi - span.lo)});
    }
  }

  uint64_t saved = 0;
  for (size_t j = 1; j < groups.size(); ++j) {
    GroupState &reader = state[j];
    // Coefficients in the order the group's ops read them.
    std::vector<int> order;
    for (const auto &node : reader.m.g.nodes)
      for (int v : node.operands)
        if (v >= 0 && !llvm::is_contained(order, v) && isHeldCoefficient(reader.m, v))
          order.push_back(v);
    for (int v : order) {
      Span own = reader.spanOf(v);
      uint64_t bytes = own.hi - own.lo;
      // The reader without this load.
      GroupState without = reader;
      without.m.place.preloaded[v] = true;
      std::optional<uint64_t> readerCycles = without.model();
      if (!readerCycles)
        continue;
      std::vector<Span> taken;
      for (const Span &s : reader.used)
        if (s.lo != own.lo || s.hi != own.hi)
          taken.push_back(s);
      int64_t bestGain = 0;
      size_t bestHost = 0;
      uint64_t bestAddr = 0, bestHostCycles = 0;
      for (size_t d = 1; d <= maxDistance && d <= j; ++d) {
        GroupState &host = state[j - d];
        taken.insert(taken.end(), host.used.begin(), host.used.end());
        std::vector<uint64_t> starts = freeStarts(taken, bytes);
        if (starts.empty())
          break; // farther hosts only add ranges
        // Where the load shares no bank with the commands the host's TIU
        // runs beside it, it costs no conflict: a few free places are
        // costed, highest first.
        starts.resize(std::min<size_t>(starts.size(), kPlacesCosted));
        for (uint64_t at : starts) {
          host.prefetch.push_back(wholeLoad(reader.m.g, reader.m.s, v, at, 0));
          std::optional<uint64_t> hostCycles = host.model();
          host.prefetch.pop_back();
          if (!hostCycles)
            continue;
          int64_t gain = (int64_t)(reader.cycles + host.cycles) -
                         (int64_t)(*readerCycles + *hostCycles);
          if (gain > bestGain) {
            bestGain = gain;
            bestHost = j - d;
            bestAddr = at;
            bestHostCycles = *hostCycles;
          }
        }
      }
      if (bestGain <= 0)
        continue;
      // Commit: the host loads it, the groups up to the reader keep its range.
      GroupState &host = state[bestHost];
      host.prefetch.push_back(wholeLoad(reader.m.g, reader.m.s, v, bestAddr, 0));
      host.cycles = bestHostCycles;
      Span moved{bestAddr, bestAddr + bytes};
      for (size_t k = bestHost; k < j; ++k)
        state[k].used.push_back(moved);
      for (Span &s : reader.used)
        if (s.lo == own.lo && s.hi == own.hi)
          s = moved;
      reader.m.place.preloaded[v] = true;
      reader.m.place.lmem[v] = {(uint32_t)bestAddr, (uint32_t)bestAddr};
      reader.cycles = *readerCycles;
      saved += bestGain;
      auto load = cast<tpu::LoadOp>(reader.m.loads[v]);
      Builder b(load);
      load.setPrefetchGroupsAttr(b.getI64IntegerAttr(j - bestHost));
      auto group = cast<tpu::GroupOp>(groups[j]);
      group.setPlanAttr(withValueAt(group.getPlan(), v, bestAddr));
    }
  }
  return saved;
}
