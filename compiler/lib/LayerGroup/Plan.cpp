//===- Plan.cpp - A layer group's decision as a tpu.group attribute -------===//

#include "kiln/LayerGroup/Plan.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::lg;

tpu::SliceRange lg::toAttr(const Slice &slice) {
  tpu::SliceRange range;
  Range dims[4] = {slice.n, slice.c, slice.h, slice.w};
  for (int d = 0; d < 4; ++d) {
    range.offsets[d] = dims[d].idx;
    range.sizes[d] = dims[d].len;
  }
  return range;
}

Slice lg::fromAttr(const tpu::SliceRange &range) {
  auto dim = [&](int d) { return Range{range.offsets[d], range.sizes[d]}; };
  return {dim(0), dim(1), dim(2), dim(3)};
}

tpu::GroupPlanAttr lg::toAttr(MLIRContext *ctx, const GroupGraph &g, const GroupSlicing &s,
                              int64_t buffers, const Placement &place) {
  std::vector<Lifetime> live = lifetimes(g, s, buffers, place.layout);
  SmallVector<tpu::ValuePlanAttr> values;
  for (auto [v, val] : llvm::enumerate(g.vals)) {
    SmallVector<tpu::SliceRange> hold, store;
    for (const Slice &part : s.hold[v])
      hold.push_back(toAttr(part));
    if (val.escaping)
      for (const Slice &part : s.store[v])
        store.push_back(toAttr(part));
    auto [ping, pong] = place.lmem[v];
    uint32_t bytes = s.laneBytes(g, v);
    values.push_back(tpu::ValuePlanAttr::get(
        ctx, val.lmemShape, s.invariant[v], ping, pong, bytes, live[v].first, live[v].last,
        tpu::ValuePlanAttr::banksOf(ping, pong, bytes), hold, store));
  }
  SmallVector<int64_t> order(s.order.begin(), s.order.end());
  return tpu::GroupPlanAttr::get(ctx, {s.nSlices, s.cSlices, s.hSlices, s.wSlices}, buffers,
                                 order, values);
}

GroupSlicing lg::slicingOf(const GroupGraph &g, tpu::GroupPlanAttr plan) {
  GroupSlicing s;
  ArrayRef<int64_t> slices = plan.getSlices();
  s.nSlices = slices[0];
  s.cSlices = slices[1];
  s.hSlices = slices[2];
  s.wSlices = slices[3];
  int64_t count = plan.getSliceCount();
  s.order.assign(plan.getOrder().begin(), plan.getOrder().end());
  for (tpu::ValuePlanAttr value : plan.getValues()) {
    auto &hold = s.hold.emplace_back();
    for (const tpu::SliceRange &range : value.getHold())
      hold.push_back(fromAttr(range));
    // Values that do not escape store nothing.
    auto &store = s.store.emplace_back(count);
    for (auto [k, range] : llvm::enumerate(value.getStore()))
      store[k] = fromAttr(range);
    s.invariant.push_back(value.getInvariant());
    s.lane.push_back(value.getBytes());
  }
  s.reads.assign(g.nodes.size(), {});
  for (auto [n, node] : llvm::enumerate(g.nodes))
    for (int64_t k = 0; k < count; ++k)
      s.reads[n].push_back(readsOf(g, node, s.hold[node.result][k]));
  return s;
}

tpu::GroupPlanAttr lg::withValueAt(tpu::GroupPlanAttr plan, int v, uint32_t lmemAddr) {
  SmallVector<tpu::ValuePlanAttr> values(plan.getValues());
  tpu::ValuePlanAttr old = values[v];
  values[v] = tpu::ValuePlanAttr::get(
      plan.getContext(), old.getShape(), old.getInvariant(), lmemAddr, lmemAddr, old.getBytes(),
      old.getLiveFirst(), old.getLiveLast(),
      tpu::ValuePlanAttr::banksOf(lmemAddr, lmemAddr, old.getBytes()), old.getHold(),
      old.getStore());
  return tpu::GroupPlanAttr::get(plan.getContext(), plan.getSlices(), plan.getBuffers(),
                                 plan.getOrder(), values);
}
