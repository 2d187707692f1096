//===- Schedule.cpp - A layer group's two command queues ------------------===//

#include "kiln/LayerGroup/Schedule.h"
#include "kiln/LayerGroup/Plan.h"
#include "kiln/LayerGroup/StridedLoad.h"

#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"

#include <cstring>
#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::lg;

namespace {

struct Scheduler {
  const GroupGraph &g;
  const GroupSlicing &s;
  int64_t buffers;
  const Placement &place;
  ArrayRef<kiln_tiu_cmd> records;
  GroupQueues q;
  std::vector<bool> held;

  /// 1-based command ids, 0 for none. Per slice ordinal and value: its load
  /// and the command that produced it.
  std::vector<std::vector<uint32_t>> loaded, produced;
  /// Per buffer (value * 2 + buffer): the buffers sharing LMEM bytes with it
  /// (itself included), and the last TIU and GDMA command that touched it.
  /// A write waits for the other engine's last touch of every one of them.
  std::vector<SmallVector<int, 4>> sharing;
  std::vector<uint32_t> lastTiu, lastGdma;
  std::vector<uint32_t> heldLoad;
  /// Per invariant value: the command that computed it (0: not yet).
  std::vector<uint32_t> computedOnce;

  Scheduler(const GroupGraph &g, const GroupSlicing &s, int64_t buffers,
            const Placement &place, ArrayRef<kiln_tiu_cmd> records)
      : g(g), s(s), buffers(buffers), place(place), records(records) {
    held.resize(g.vals.size());
    for (size_t v = 0; v < g.vals.size(); ++v)
      held[v] = s.invariant[v];
    heldLoad.assign(g.vals.size(), 0);
    computedOnce.assign(g.vals.size(), 0);
    size_t nb = 2 * g.vals.size();
    lastTiu.assign(nb, 0);
    lastGdma.assign(nb, 0);
    sharing.resize(nb);
    std::vector<std::array<uint64_t, 2>> range(nb, {0, 0});
    for (size_t v = 0; v < g.vals.size(); ++v) {
      uint64_t bytes = s.laneBytes(g, v);
      for (int b = 0; b < (held[v] || buffers == 1 ? 1 : 2); ++b)
        range[2 * v + b] = {place.lmem[v][b], place.lmem[v][b] + bytes};
    }
    // By start: a buffer shares bytes with those starting before it ends.
    std::vector<int> byStart;
    for (size_t i = 0; i < nb; ++i) {
      sharing[i].push_back(i);
      if (range[i][1] > range[i][0])
        byStart.push_back(i);
    }
    llvm::sort(byStart, [&](int a, int b) { return range[a][0] < range[b][0]; });
    for (size_t x = 0; x < byStart.size(); ++x)
      for (size_t y = x + 1; y < byStart.size() && range[byStart[y]][0] < range[byStart[x]][1];
           ++y) {
        sharing[byStart[x]].push_back(byStart[y]);
        sharing[byStart[y]].push_back(byStart[x]);
      }
  }

  int bufferIndex(int v, size_t ordinal) const { return 2 * v + bufferOf(v, ordinal); }
  /// The last command of `last` (one engine's) that touched bytes of buffer i.
  uint32_t lastTouch(const std::vector<uint32_t> &last, int i) const {
    uint32_t id = 0;
    for (int j : sharing[i])
      id = std::max(id, last[j]);
    return id;
  }

  int bufferOf(int v, size_t ordinal) const { return held[v] ? 0 : ordinal % buffers; }

  uint32_t bufferAddr(int v, size_t ordinal) const {
    return held[v] ? place.lmem[v][0] : place.lmem[v][ordinal % buffers];
  }
  const std::array<int64_t, 4> &shape(int v) const { return g.vals[v].lmemShape; }
  uint32_t dsize(int v) const { return g.vals[v].dsize; }

  /// LMEM address of rows `rows` of value v, which holds `holding` at `base`.
  /// Channel parts start on lane groups, so rows.c.idx - holding.c.idx is a
  /// multiple of 64; rows span the columns held (GroupSlicing::columnsMatch).
  uint32_t rowsAddr(int v, uint32_t base, Slice holding, Slice rows) const {
    assert(rows.w == holding.w && "a window of columns has no row stride");
    int64_t width = holding.w.len;
    uint64_t cgroups = (holding.c.len + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
    uint64_t plane = kiln_lmem_plane_stride(holding.h.len, width, dsize(v));
    return base +
           ((rows.n.idx - holding.n.idx) * cgroups +
            (rows.c.idx - holding.c.idx) / KILN_NPU_NUM) * plane +
           (rows.h.idx - holding.h.idx) * width * dsize(v);
  }

  /// Places a record operand (dtype and flags already filled) on rows `rows`
  /// of value v, which holds `holding` in LMEM at `base`.
  void placeOperand(kiln_tiu_operand &o, int v, uint32_t base, Slice holding,
                    Slice rows) const {
    o.addr = rowsAddr(v, base, holding, rows);
    o.n = rows.n.len;
    o.c = rows.c.len;
    o.h = rows.h.len;
    o.w = rows.w.len;
    o.plane_h = holding.h.len;
  }

  kiln_gdma_cmd transfer(int v, uint32_t lmemAddr, Slice holding, Slice rows,
                         bool toLmem) const {
    auto &sh = shape(v);
    kiln_gdma_cmd c{};
    c.cmd_id = q.gdma.size() + 1;
    c.dir = toLmem ? KILN_GDMA_DDR_TO_LMEM : KILN_GDMA_LMEM_TO_DDR;
    c.dtype = tpu::dtypeOrF32(g.vals[v].value);
    c.n = rows.n.len;
    c.c = rows.c.len;
    c.h = rows.h.len;
    c.w = rows.w.len;
    uint32_t window = rowsAddr(v, lmemAddr, holding, rows);
    // A part of the columns keeps the whole tensor's row stride in DDR: runs
    // of rows.w.len elements, which cost.h charges as such (bursts).
    uint64_t ddrAddr =
        place.ddr[v] +
        (((rows.n.idx * sh[1] + rows.c.idx) * sh[2] + rows.h.idx) * sh[3] + rows.w.idx) *
            dsize(v);
    uint32_t strides[4] = {(uint32_t)(sh[1] * sh[2] * sh[3]),
                           (uint32_t)(sh[2] * sh[3]), (uint32_t)sh[3], 1};
    c.lmem_plane_h = holding.h.len;
    if (toLmem) {
      c.src_addr = ddrAddr;
      c.dst_addr = window;
      std::memcpy(c.src_stride, strides, sizeof(strides));
    } else {
      c.src_addr = window;
      c.dst_addr = ddrAddr;
      std::memcpy(c.dst_stride, strides, sizeof(strides));
    }
    return c;
  }

  /// The rows a held value holds in every slice that uses it.
  Slice heldRows(int v) const {
    for (const Slice &r : s.hold[v])
      if (!r.empty())
        return r;
    return {};
  }

  /// Loads value v for slice ordinal k (held values: once, k unused).
  LogicalResult emitLoad(int v, size_t k) {
    Slice rows = held[v] ? heldRows(v) : s.hold[v][q.slices[k]];
    std::vector<kiln_gdma_cmd> cmds;
    if (g.vals[v].foldRows) {
      cmds = foldedRowsLoad(v, bufferAddr(v, k), rows);
    } else if (auto view = dyn_cast_or_null<tpu::StridedViewOp>(g.vals[v].stridedView)) {
      auto loads = stridedTransfer(readingOf(view), shape(v), tpu::dtypeOrF32(g.vals[v].value),
                                   dsize(v), place.ddr[v], bufferAddr(v, k), rows, rows);
      if (!loads)
        return view.emitError("internal error: its layer group cannot load it through its "
                              "strides");
      cmds = std::move(*loads);
    } else
      cmds.push_back(transfer(v, bufferAddr(v, k), rows, rows, true));
    for (kiln_gdma_cmd &c : cmds) {
      c.cmd_id = q.gdma.size() + 1;
      // The bytes' previous values must have been read.
      c.wait_tiu_id = lastTouch(lastTiu, bufferIndex(v, k));
      q.gdma.push_back(c);
      q.gdmaValue.push_back(v);
    }
    lastGdma[bufferIndex(v, k)] = q.gdma.size();
    (held[v] ? heldLoad[v] : loaded[k][v]) = q.gdma.size();
    return success();
  }

  /// Rows `rows` of a tpu.fold_rows result v into LMEM at `base`: per kernel
  /// row ky, the input rows its output rows read go to lanes
  /// [ky * C, ky * C + C) (lane-offset loads); rows outside the input are
  /// filled with zero. place.ddr[v] is the input's address (fold_rows is a
  /// view in the DDR plan).
  std::vector<kiln_gdma_cmd> foldedRowsLoad(int v, uint32_t base, Slice rows) const {
    auto fold = cast<tpu::FoldRowsOp>(g.vals[v].foldRows);
    auto in = cast<RankedTensorType>(fold.getInput().getType()).getShape();
    int64_t c = in[1], h = in[2], w = in[3];
    Type element = cast<RankedTensorType>(fold.getType()).getElementType();
    uint32_t zero = tpu::isQuantType(element) ? uint8_t(tpu::quantParamsOf(element).zeroPoint) : 0;
    std::vector<kiln_gdma_cmd> cmds;
    auto block = [&](int64_t ky, int64_t y, int64_t len) {
      kiln_gdma_cmd cmd{};
      cmd.dir = KILN_GDMA_DDR_TO_LMEM;
      cmd.dtype = tpu::dtypeOrF32(g.vals[v].value);
      cmd.n = rows.n.len;
      cmd.c = c;
      cmd.h = len;
      cmd.w = w;
      cmd.lmem_plane_h = rows.h.len;
      cmd.lmem_lane = ky * c;
      cmd.dst_addr = rowsAddr(v, base, rows, Slice{rows.n, rows.c, {y, len}, rows.w});
      return cmd;
    };
    for (int64_t ky = 0; ky < int64_t(fold.getKernelH()); ++ky) {
      // Rows [lo, hi) of the slice read input rows; the others are padding.
      int64_t lo = rows.h.idx, hi = rows.h.end();
      while (lo < hi && fold.sourceRow(lo, ky) < 0)
        ++lo;
      while (hi > lo && fold.sourceRow(hi - 1, ky) >= h)
        --hi;
      auto fill = [&](int64_t y, int64_t len) {
        if (len <= 0)
          return;
        kiln_gdma_cmd cmd = block(ky, y, len);
        cmd.flags = KILN_GDMA_FLAG_FILL;
        cmd.src_addr = zero;
        cmds.push_back(cmd);
      };
      fill(rows.h.idx, lo - rows.h.idx);
      if (hi > lo) {
        kiln_gdma_cmd cmd = block(ky, lo, hi - lo);
        cmd.src_addr =
            place.ddr[v] + ((rows.n.idx * c) * h + fold.sourceRow(lo, ky)) * w * dsize(v);
        uint32_t strides[4] = {(uint32_t)(c * h * w), (uint32_t)(h * w),
                               (uint32_t)(fold.getStrideH() * w), 1};
        std::memcpy(cmd.src_stride, strides, sizeof(strides));
        cmds.push_back(cmd);
      }
      fill(hi, rows.h.end() - hi);
    }
    return cmds;
  }

  /// Rows `rows` of value v, held at `base`, into the memory of the
  /// tpu.unfold_rows it feeds: lanes [r * C, r * C + C) go to rows r, r + R,
  /// ... of the unfolded tensor (lane-offset stores, runs of W elements).
  /// place.ddr[v] is the unfolded tensor's address.
  std::vector<kiln_gdma_cmd> unfoldedRowsStore(int v, uint32_t base, Slice holding,
                                               Slice rows) const {
    auto unfold = cast<tpu::UnfoldRowsOp>(g.vals[v].unfoldRows);
    auto out = cast<RankedTensorType>(unfold.getType()).getShape();
    int64_t c = out[1], h = out[2], w = out[3], folds = unfold.getRows();
    std::vector<kiln_gdma_cmd> cmds;
    for (int64_t r = 0; r < folds; ++r) {
      kiln_gdma_cmd cmd{};
      cmd.dir = KILN_GDMA_LMEM_TO_DDR;
      cmd.dtype = tpu::dtypeOrF32(g.vals[v].value);
      cmd.n = rows.n.len;
      cmd.c = c;
      cmd.h = rows.h.len;
      cmd.w = w;
      cmd.lmem_plane_h = holding.h.len;
      cmd.lmem_lane = r * c;
      cmd.src_addr = rowsAddr(v, base, holding, rows);
      cmd.dst_addr =
          place.ddr[v] + ((rows.n.idx * c) * h + rows.h.idx * folds + r) * w * dsize(v);
      uint32_t strides[4] = {(uint32_t)(c * h * w), (uint32_t)(h * w), (uint32_t)(folds * w), 1};
      std::memcpy(cmd.dst_stride, strides, sizeof(strides));
      cmds.push_back(cmd);
    }
    return cmds;
  }

  /// Held values are loaded once, in the prologue.
  bool needsLoad(int v, size_t k) const {
    if (!g.vals[v].external || (!place.preloaded.empty() && place.preloaded[v]))
      return false;
    return held[v] ? k == 0 && !heldRows(v).empty() : !s.hold[v][q.slices[k]].empty();
  }

  LogicalResult emitNode(size_t n, size_t k) {
    int slice = q.slices[k];
    const auto &node = g.nodes[n];
    Slice out = s.hold[node.result][slice];
    if (out.empty())
      return success();
    // An invariant value is computed once and kept.
    if (s.invariant[node.result] && computedOnce[node.result]) {
      produced[k][node.result] = computedOnce[node.result];
      return success();
    }
    const auto &reads = s.reads[n][slice];
    kiln_tiu_cmd c = records[n];
    c.cmd_id = q.tiu.size() + 1;
    placeOperand(c.out, node.result, bufferAddr(node.result, k), out, out);
    c.out.plane_h = 0;
    // A depthwise conv on a part of the channels has that many groups.
    if (c.op == KILN_TIU_CONV && c.groups > 1 && c.groups == shape(node.result)[1])
      c.groups = out.c.len;
    uint32_t wait = 0;
    for (auto [i, v] : llvm::enumerate(node.operands)) {
      if (v < 0)
        continue;
      placeOperand(*tiuOperandSlot(c, i), v, bufferAddr(v, k), s.hold[v][slice],
                   reads[i].rows);
      if (g.vals[v].external)
        wait = std::max(wait, held[v] ? heldLoad[v] : loaded[k][v]);
    }
    // The bytes it writes must have been stored from (or their load done).
    c.wait_gdma_id = std::max(wait, lastTouch(lastGdma, bufferIndex(node.result, k)));

    // The slice's own pads: rows outside its loaded input are padding.
    Operation *op = node.op;
    auto sliceable = dyn_cast<tpu::SliceableOp>(op);
    if (std::optional<tpu::HWindow> window = sliceable ? sliceable.getHWindow() : std::nullopt) {
      c.pad_top = reads[0].padTop;
      if (!window->transposed)
        c.pad_bottom = reads[0].padBottom;
    }
    // Likewise columns outside the slice's input when it computes a part of
    // the output's (all of them keep the op's own pads).
    if (out.w.len < shape(node.result)[3] && sliceable && sliceable.getWWindow()) {
      c.pad_left = reads[0].padLeft;
      c.pad_right = reads[0].padRight;
    }
    if (isa<tpu::Conv2DOp>(op)) {
      auto fits = [](int64_t in, int64_t padBefore, int64_t padAfter, int64_t kernel,
                     int64_t dilation, int64_t stride, int64_t out) {
        int64_t span = in + padBefore + padAfter - dilation * (kernel - 1) - 1;
        return span >= 0 && span / stride + 1 == out;
      };
      if (!fits(c.in0.h, c.pad_top, c.pad_bottom, c.kh, c.dil_h, c.stride_h, c.out.h) ||
          !fits(c.in0.w, c.pad_left, c.pad_right, c.kw, c.dil_w, c.stride_w, c.out.w))
        return op->emitError("internal error: slice rows or columns do not match the conv window");
    } else if (isa<tpu::ResizeOp>(op)) {
      int64_t fullIn = shape(node.operands[0])[2], fullOut = shape(node.result)[2];
      // A window of the source rows also when the output is whole: a
      // downscale reads only the rows its output rows map to (resizeRows).
      if (out.h.len != fullOut || reads[0].rows.h.len != fullIn) {
        c.aux[0] = fullIn;
        c.aux[1] = fullOut;
        c.aux[2] = out.h.idx;
        c.aux[3] = reads[0].rows.h.idx;
      }
    }
    q.tiu.push_back(c);
    q.tiuNode.push_back(n);
    uint32_t id = q.tiu.size();
    produced[k][node.result] = id;
    if (s.invariant[node.result])
      computedOnce[node.result] = id;
    lastTiu[bufferIndex(node.result, k)] = id;
    for (int v : node.operands)
      if (v >= 0)
        lastTiu[bufferIndex(v, k)] = id;
    return success();
  }

  LogicalResult emitStores(size_t k) {
    int slice = q.slices[k];
    for (const auto &node : g.nodes) {
      int v = node.result;
      Slice rows = s.store[v][slice];
      if (!g.vals[v].escaping || rows.empty())
        continue;
      std::vector<kiln_gdma_cmd> cmds;
      if (g.vals[v].unfoldRows) {
        cmds = unfoldedRowsStore(v, bufferAddr(v, k), s.hold[v][slice], rows);
      } else if (g.vals[v].scatter) {
        auto stores = stridedTransfer(*g.vals[v].scatter, shape(v),
                                      tpu::dtypeOrF32(g.vals[v].value), dsize(v), place.ddr[v],
                                      bufferAddr(v, k), s.hold[v][slice], rows, false);
        if (!stores)
          return g.vals[v].value.getDefiningOp()->emitError(
              "internal error: its layer group cannot store it through its transpose's strides");
        cmds = std::move(*stores);
      } else {
        cmds.push_back(transfer(v, bufferAddr(v, k), s.hold[v][slice], rows, false));
      }
      for (kiln_gdma_cmd &c : cmds) {
        c.cmd_id = q.gdma.size() + 1;
        c.wait_tiu_id = produced[k][v];
        q.gdma.push_back(c);
        q.gdmaValue.push_back(v);
      }
      lastGdma[bufferIndex(v, k)] = q.gdma.size();
    }
    return success();
  }

  LogicalResult run(ArrayRef<kiln_gdma_cmd> prefetch) {
    if (!s.columnsMatch && !g.nodes.empty())
      return g.nodes.front().op->emitError(
          "internal error: its layer group reads a value at other columns than it holds");
    q.slices = s.order;
    size_t count = q.slices.size(), nv = g.vals.size();
    loaded.assign(count, std::vector<uint32_t>(nv));
    produced.assign(count, std::vector<uint32_t>(nv));

    // Prologue: held values and the first slice's inputs, in the order the
    // ops read them.
    Step prologue;
    if (count > 0) {
      std::vector<bool> seen(nv);
      for (const auto &node : g.nodes)
        for (int v : node.operands)
          if (v >= 0 && !seen[v] && needsLoad(v, 0)) {
            seen[v] = true;
            if (failed(emitLoad(v, 0)))
              return failure();
          }
    }
    for (kiln_gdma_cmd c : prefetch) {
      c.cmd_id = q.gdma.size() + 1;
      c.wait_tiu_id = 0;
      q.gdma.push_back(c);
      q.gdmaValue.push_back(-1);
    }
    prologue.gdmaEnd = q.gdma.size();
    q.steps.push_back(prologue);

    for (size_t k = 0; k < count; ++k) {
      Step step;
      step.slice = q.slices[k];
      step.gdmaBegin = q.gdma.size();
      if (k > 0)
        for (size_t v = 0; v < nv; ++v)
          if (!held[v] && needsLoad(v, k) && failed(emitLoad(v, k)))
            return failure();
      step.tiuBegin = q.tiu.size();
      for (size_t n = 0; n < g.nodes.size(); ++n)
        if (failed(emitNode(n, k)))
          return failure();
      step.tiuEnd = q.tiu.size();
      if (k + 1 >= (size_t)buffers && failed(emitStores(k + 1 - buffers)))
        return failure();
      step.gdmaEnd = q.gdma.size();
      q.steps.push_back(step);
    }
    // Drain: stores not yet issued.
    Step drain;
    drain.slice = count ? q.slices.back() : -1;
    drain.tiuBegin = drain.tiuEnd = q.tiu.size();
    drain.gdmaBegin = q.gdma.size();
    for (size_t j = count + 1 > (size_t)buffers ? count + 1 - buffers : 0; j < count; ++j)
      if (failed(emitStores(j)))
        return failure();
    drain.gdmaEnd = q.gdma.size();
    if (drain.gdmaEnd > drain.gdmaBegin)
      q.steps.push_back(drain);
    return success();
  }
};
} // namespace

FailureOr<GroupQueues> lg::scheduleGroup(const GroupGraph &g, const GroupSlicing &s,
                                         int64_t buffers, const Placement &place,
                                         ArrayRef<kiln_tiu_cmd> records,
                                         ArrayRef<kiln_gdma_cmd> prefetch) {
  Scheduler scheduler(g, s, buffers, place, records);
  if (failed(scheduler.run(prefetch)))
    return failure();
  return std::move(scheduler.q);
}

kiln_gdma_cmd lg::wholeLoad(const GroupGraph &g, const GroupSlicing &s, int v,
                            uint32_t lmemAddr, uint64_t ddrAddr) {
  Placement place;
  place.lmem.assign(g.vals.size(), {0, 0});
  place.ddr.assign(g.vals.size(), 0);
  place.ddr[v] = ddrAddr;
  Scheduler scheduler(g, s, 1, place, {});
  Slice rows = scheduler.heldRows(v);
  return scheduler.transfer(v, lmemAddr, rows, rows, true);
}

MaterializedGroup lg::readGroup(Operation *op, function_ref<uint64_t(Value)> ddrAddrOf) {
  auto group = cast<tpu::GroupOp>(op);
  tpu::GroupPlanAttr plan = group.getPlan();
  MaterializedGroup m;
  SmallVector<Operation *> ops;
  for (Operation &inner : group.getBody().front())
    if (!isa<tpu::LoadOp, tpu::StoreOp, tpu::YieldOp>(inner))
      ops.push_back(&inner);
  m.g = GroupGraph::fromOps(ops);
  // getPlannedValues walks the body as fromOps does; the verifier checks
  // the plan has one entry per value.
  assert(llvm::equal(group.getPlannedValues(),
                     llvm::map_range(m.g.vals, [](const GroupGraph::Val &v) { return v.value; })) &&
         "the plan's values are the group graph's");
  m.buffers = plan.getBuffers();
  size_t nv = m.g.vals.size();
  m.place.lmem.resize(nv);
  m.place.ddr.assign(nv, 0);
  m.place.preloaded.assign(nv, false);
  m.loads.assign(nv, nullptr);
  for (auto [v, val] : llvm::enumerate(m.g.vals)) {
    tpu::ValuePlanAttr planned = plan.getValues()[v];
    llvm::copy(planned.getShape(), val.lmemShape.begin()); // as the slicing laid it out
    m.place.lmem[v] = {planned.getPing(), planned.getPong()};
    if (auto load = val.value.getDefiningOp<tpu::LoadOp>()) {
      m.place.ddr[v] = ddrAddrOf(load.getInput());
      m.place.preloaded[v] = load.getPrefetchGroups().has_value();
      m.loads[v] = load;
    }
  }
  m.s = slicingOf(m.g, plan);
  auto yield = cast<tpu::YieldOp>(group.getBody().front().getTerminator());
  for (auto [i, stored] : llvm::enumerate(yield.getOperands())) {
    Value v = stored.getDefiningOp<tpu::StoreOp>().getInput();
    m.place.ddr[m.g.valOf(v)] = ddrAddrOf(group.getResult(i));
    if (tpu::DmaOp dma = scatteringDma(group.getResult(i)))
      m.g.vals[m.g.valOf(v)].scatter = scatterOf(dma);
  }
  return m;
}

uint64_t lg::modelledCycles(const GroupQueues &q) {
  kiln_queue_timing timing{};
  if (kiln_schedule_queues(q.tiu.data(), q.tiu.size(), q.gdma.data(), q.gdma.size(), nullptr,
                           nullptr, &timing) != KILN_OK)
    return 0;
  return timing.total_cycles;
}

std::optional<uint64_t> lg::modelGroup(const GroupGraph &g, const GroupSlicing &s,
                                       int64_t buffers, const Placement &place,
                                       ArrayRef<kiln_tiu_cmd> records,
                                       ArrayRef<kiln_gdma_cmd> prefetch) {
  FailureOr<GroupQueues> q = scheduleGroup(g, s, buffers, place, records, prefetch);
  if (failed(q))
    return std::nullopt;
  uint64_t cycles = modelledCycles(*q);
  if (cycles == 0 && !(q->tiu.empty() && q->gdma.empty()))
    return std::nullopt; // the queues deadlock
  return cycles;
}

constexpr Layout kFixedLayouts[] = {Layout::Packed, Layout::BankAligned, Layout::Split};
constexpr Layout kLifetimeLayouts[] = {Layout::Lifetime, Layout::LifetimeSplit,
                                       Layout::LifetimeBanks, Layout::LifetimePipelined};

/// The fastest of `layouts`, and its cycles.
static std::optional<std::pair<Placement, uint64_t>>
fastestLayout(const GroupGraph &g, const GroupSlicing &s, int64_t buffers,
              ArrayRef<kiln_tiu_cmd> records, ArrayRef<Layout> layouts) {
  std::optional<std::pair<Placement, uint64_t>> best;
  llvm::SmallVector<std::vector<std::array<uint32_t, 2>>, 4> seen;
  for (Layout layout : layouts) {
    std::optional<Placement> place = placeInLmem(g, s, buffers, layout);
    // Layouts often coincide (nothing to take from the top, no bank to avoid).
    if (!place || llvm::is_contained(seen, place->lmem))
      continue;
    seen.push_back(place->lmem);
    std::optional<uint64_t> cycles = modelGroup(g, s, buffers, *place, records);
    if (cycles && (!best || *cycles < best->second))
      best.emplace(std::move(*place), *cycles);
  }
  return best;
}

LaidOut lg::chooseLayout(const GroupGraph &g, const GroupSlicing &s, int64_t buffers,
                         bool reuse, std::optional<ArrayRef<kiln_tiu_cmd>> records) {
  if (records) {
    auto fastest = fastestLayout(g, s, buffers, *records, kFixedLayouts);
    if (reuse || !fastest)
      if (auto relaid = fastestLayout(g, s, buffers, *records, kLifetimeLayouts))
        if (!fastest || relaid->second < fastest->second)
          fastest = std::move(relaid);
    if (fastest)
      return {std::move(fastest->first), fastest->second};
  }
  return {*placeSmallest(g, s, buffers), std::nullopt};
}

PlanChoice lg::choosePlans(const GroupGraph &g, std::optional<ArrayRef<kiln_tiu_cmd>> records,
                           bool reuse, bool taper) {
  int64_t maxN = 1, maxH = 1, maxC = maxChannelSlices(g), maxW = maxWidthSlices(g);
  for (const auto &val : g.vals)
    if (val.escaping) {
      maxN = std::max(maxN, val.lmemShape[0]);
      maxH = std::max(maxH, val.lmemShape[2]);
    }
  // W slices are tried on wide maps where H slices run out (a few rows) or
  // repeat the most halo rows (a window over few rows), and where nothing
  // else fits.
  bool rowHalo = llvm::any_of(g.nodes, [](const GroupGraph::Node &node) {
    auto sliceable = dyn_cast<tpu::SliceableOp>(node.op);
    std::optional<tpu::HWindow> window = sliceable ? sliceable.getHWindow() : std::nullopt;
    return window && window->kernel > 1;
  });
  bool wideFewRows =
      maxW >= std::max<int64_t>(64, 8 * maxH) && (maxH <= 4 || (rowHalo && maxH <= 16));
  maxH = std::min<int64_t>(maxH, 256);
  PlanChoice best;
  // Per kind (fixed, reuse): the fastest plans in their smallest layout,
  // which the other layouts may reorder (bank conflicts they avoid).
  constexpr size_t kRelaid = 3;
  llvm::SmallVector<CostedPlan, kRelaid + 1> fastest[2];
  auto keep = [&](llvm::SmallVectorImpl<CostedPlan> &list, const CostedPlan &costed) {
    list.insert(llvm::upper_bound(list, costed,
                                  [](const CostedPlan &a, const CostedPlan &b) {
                                    return a.cycles < b.cycles;
                                  }),
                costed);
    if (list.size() > kRelaid)
      list.pop_back();
  };
  // Whether N x C x H x W slices fit with one buffer: bit 0 without reuse,
  // bit 1 with (tried only while `tryReuse`).
  auto fits = [&](int64_t n, int64_t c, int64_t h, int64_t w, bool tryReuse) {
    GroupSlicing s = computeSlicing(g, n, c, h, w);
    if (!s.columnsMatch)
      return 0u;
    if (lmemLaneBytes(g, s, 1) <= KILN_LMEM_BYTES_PER_LANE)
      return 3u;
    return tryReuse && fitsLmem(g, s, 1) ? 2u : 0u;
  };
  // The fewest H slices that fit with N x C x W slices, without and with
  // reuse (0: none).
  auto fewestH = [&](int64_t n, int64_t c, int64_t w) {
    std::array<int64_t, 2> fewest = {0, 0};
    for (int64_t h = 1; h <= maxH && !fewest[0]; ++h) {
      unsigned fit = fits(n, c, h, w, reuse && !fewest[1]);
      if ((fit & 2) && !fewest[1])
        fewest[1] = h;
      if (fit & 1)
        fewest[0] = h;
    }
    return fewest;
  };
  // Costs N x C x H x W slices with each buffer count that fits; `fixed`: a
  // candidate of the plans without reuse too. Returns the fewest cycles.
  auto consider = [&](int64_t n, int64_t c, int64_t h, int64_t w, bool fixed) {
    uint64_t fewestCycles = std::numeric_limits<uint64_t>::max();
    GroupSlicing s = computeSlicing(g, n, c, h, w);
    for (int64_t buffers : {2, 1}) {
      // One slice gains nothing from a second buffer.
      if (n * c * h * w == 1 && buffers == 2)
        continue;
      bool packed = lmemLaneBytes(g, s, buffers) <= KILN_LMEM_BYTES_PER_LANE;
      std::optional<Placement> place = placeSmallest(g, s, buffers);
      std::optional<uint64_t> cycles =
          place ? modelGroup(g, s, buffers, *place, *records) : std::nullopt;
      if (!cycles)
        continue;
      fewestCycles = std::min(fewestCycles, *cycles);
      if (packed && fixed)
        keep(fastest[0], {Plan{n, c, h, w, buffers, false}, *cycles});
      if (reuse)
        keep(fastest[1], {Plan{n, c, h, w, buffers, true}, *cycles});
    }
    return fewestCycles;
  };
  // C slice counts to try: each up to 8, then roughly geometric, so wide
  // layers (2048 channels, 32 lane groups) cost 12 candidates, not 32.
  llvm::SmallVector<int64_t, 16> cCounts;
  for (int64_t c = 1; c <= maxC; c = c < 8 ? c + 1 : c * 3 / 2)
    cCounts.push_back(c);
  if (cCounts.back() != maxC)
    cCounts.push_back(maxC);
  // W slice counts: geometric from 2, parts of at least 32 columns (shorter
  // DMA runs and more commands only cost) and at most 256 parts.
  llvm::SmallVector<int64_t, 16> wCounts;
  for (int64_t w = 2; w <= std::min<int64_t>(maxW / 32, 256); w = std::max(w + 1, w * 3 / 2))
    wCounts.push_back(w);
  std::optional<Plan> uncosted;
  for (int64_t n = 1; n <= maxN && !uncosted; ++n) {
    for (int64_t c : cCounts) {
      std::array<int64_t, 2> fewest = fewestH(n, c, 1);
      if (fewest[1] && !records) {
        uncosted = Plan{n, c, fewest[1], 1, 1, true};
        break;
      }
      // Then a few more: more slices pipeline loads, compute and stores but
      // repeat halo rows and overheads.
      auto more = [&](int64_t f) {
        llvm::SmallVector<int64_t, 8> hs;
        for (int64_t h : {f, f + 1, f + 2, f + 4, f + 8, 2 * f, 3 * f, 4 * f})
          if (f && h <= maxH && !llvm::is_contained(hs, h))
            hs.push_back(h);
        return hs;
      };
      llvm::SmallVector<int64_t, 8> fixedHs = more(fewest[0]);
      for (int64_t h : fixedHs)
        consider(n, c, h, 1, true);
      for (int64_t h : reuse ? more(fewest[1]) : llvm::SmallVector<int64_t, 8>())
        if (!llvm::is_contained(fixedHs, h))
          consider(n, c, h, 1, false);
      // W slices: alone on a wide map of few rows (the search time of every
      // N x C x W combination does not pay), with C and N slices only where
      // nothing else fits; from the fewest that fit on, until two counts in
      // a row are no faster than the best before them.
      bool widthAlone = wideFewRows && n == 1 && c == 1;
      if (wCounts.empty() || (!widthAlone && fewest[1]))
        continue;
      std::optional<uint64_t> widthBest;
      int slower = 0;
      for (int64_t w : wCounts) {
        std::array<int64_t, 2> fewestW = fewestH(n, c, w);
        if (!fewestW[1])
          continue;
        if (!records) {
          uncosted = Plan{n, c, fewestW[1], w, 1, true};
          break;
        }
        uint64_t cycles = std::numeric_limits<uint64_t>::max();
        llvm::SmallVector<int64_t, 4> tried;
        for (auto [f, fixed] : {std::pair{fewestW[0], true}, std::pair{fewestW[1], false}})
          for (int64_t h : {f, f + 1, 2 * f})
            if (f && h <= maxH && !llvm::is_contained(tried, h)) {
              tried.push_back(h);
              cycles = std::min(cycles, consider(n, c, h, w, fixed));
            }
        if (widthBest && cycles >= *widthBest) {
          if (++slower == 2)
            break;
          continue;
        }
        widthBest = cycles;
        slower = 0;
      }
      if (uncosted)
        break;
    }
    // A few batch slices pipeline as well as more; beyond that they only
    // cost search time.
    if (!fastest[0].empty() && n >= 4)
      break;
  }
  if (uncosted)
    return {CostedPlan{*uncosted, 1}, CostedPlan{*uncosted, 1}};
  // Every layout of the fastest: the fixed ones once per plan, the lifetime
  // ones for the plans that may reuse.
  llvm::SmallVector<std::pair<Plan, uint64_t>, kRelaid> fixedCycles;
  auto samePlan = [](const Plan &a, const Plan &b) {
    return a.nSlices == b.nSlices && a.cSlices == b.cSlices && a.hSlices == b.hSlices &&
           a.wSlices == b.wSlices && a.buffers == b.buffers && a.taperedH == b.taperedH;
  };
  // Each of them also with tapered H slices, if they fit.
  for (int kind : {0, 1})
    for (size_t i = 0, e = fastest[kind].size(); i < e; ++i) {
      Plan plan = fastest[kind][i].plan;
      if (!taper || plan.hSlices < 3)
        continue;
      plan.taperedH = true;
      GroupSlicing s =
          computeSlicing(g, plan.nSlices, plan.cSlices, plan.hSlices, plan.wSlices, true);
      bool fits = kind == 1 ? fitsLmem(g, s, plan.buffers)
                            : lmemLaneBytes(g, s, plan.buffers) <= KILN_LMEM_BYTES_PER_LANE;
      if (fits)
        fastest[kind].push_back({plan, std::numeric_limits<uint64_t>::max()});
    }
  for (int kind : {0, 1})
    for (CostedPlan &p : fastest[kind]) {
      GroupSlicing s =
          computeSlicing(g, p.plan.nSlices, p.plan.cSlices, p.plan.hSlices, p.plan.wSlices,
                         p.plan.taperedH);
      auto cached = llvm::find_if(fixedCycles, [&](auto &f) { return samePlan(f.first, p.plan); });
      if (cached != fixedCycles.end()) {
        p.cycles = std::min(p.cycles, cached->second);
      } else if (auto relaid = fastestLayout(g, s, p.plan.buffers, *records, kFixedLayouts)) {
        p.cycles = std::min(p.cycles, relaid->second);
        fixedCycles.push_back({p.plan, p.cycles});
      }
      if (kind == 1)
        if (auto relaid = fastestLayout(g, s, p.plan.buffers, *records, kLifetimeLayouts))
          p.cycles = std::min(p.cycles, relaid->second);
      std::optional<CostedPlan> &b = kind ? best.reuse : best.fixed;
      if (!b || p.cycles < b->cycles)
        b = p;
    }
  if (!reuse)
    best.reuse = best.fixed;
  return best;
}
