//===- GroupCodegen.cpp - One layer group to TIU/GDMA queues --------------===//
//
// Reads a tpu.group's plan (#tpu.group_plan: its slicing and LMEM placement,
// which it never recomputes) and emits its queues with the layer-group
// scheduler (kiln/LayerGroup/Schedule.h, which documents the command order
// and sync), plus the group's slice, LMEM and residency tables.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "kiln/Codegen/TiuRecord.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/DmaProgram.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/Schedule.h"
#include "kiln/abi/chip.h"

#include <cstring>

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;
using lg::GroupGraph;
using lg::GroupSlicing;
using lg::Slice;

namespace {

struct GroupEmitter {
  tpu::GroupOp group;
  GroupGraph g;
  GroupSlicing s;
  int64_t buffers;
  GroupCode code;
  lg::Placement place;
  std::vector<bool> held;
  std::vector<Operation *> loads;

  GroupEmitter(tpu::GroupOp group) : group(group) {
    lg::MaterializedGroup m =
        lg::readGroup(group, [](Value v) { return codegen::ddrAddrOf(v); });
    g = std::move(m.g);
    s = std::move(m.s);
    buffers = m.buffers;
    place = std::move(m.place);
    loads = std::move(m.loads);
    held = s.invariant;
  }

  uint8_t dtype(int v) const { return tpu::dtypeOrF32(g.vals[v].value); }

  LogicalResult run(ArrayRef<Prefetched> prefetch, std::vector<Resident> &residents) {
    code.nSlices = s.nSlices;
    code.cSlices = s.cSlices;
    code.hSlices = s.hSlices;
    code.wSlices = s.wSlices;
    std::vector<kiln_tiu_cmd> records;
    for (const auto &node : g.nodes) {
      code.ops.push_back(nameOf(node.op));
      records.emplace_back();
      if (failed(fillTiuRecord(node.op, records.back())))
        return failure();
    }
    std::vector<kiln_gdma_cmd> prefetchLoads;
    for (const Prefetched &p : prefetch)
      prefetchLoads.push_back(p.load);
    FailureOr<lg::GroupQueues> q =
        lg::scheduleGroup(g, s, buffers, place, records, prefetchLoads);
    if (failed(q))
      return failure();
    code.tiu = std::move(q->tiu);
    code.gdma = std::move(q->gdma);
    // Slice tables list the values in order, so a value is its table's index.
    for (int n : q->tiuNode)
      code.tiuOps.push_back(n);
    size_t prefetched = 0;
    for (int v : q->gdmaValue) {
      code.gdmaTensors.push_back(v < 0 ? GroupCode::kNoTensor : v);
      // Prefetch loads follow the group's own, in the order given.
      code.gdmaIcAlign.push_back(v >= 0 ? g.vals[v].icAlign : prefetch[prefetched++].icAlign);
    }
    for (const lg::Step &step : q->steps)
      code.timesteps.push_back(
          {step.slice, step.tiuBegin, step.tiuEnd, step.gdmaBegin, step.gdmaEnd});
    describeTables(q->slices, residents);
    // A later group's coefficient lives in LMEM from this group on.
    for (const Prefetched &p : prefetch)
      code.lmem.push_back({p.tensor, (uint32_t)p.load.dst_addr, p.laneBytes, 0, 0,
                           (uint32_t)code.timesteps.size() - 1, true});
    code.cycles = modelCycles(code);
    return success();
  }

  /// The first timestep whose TIU commands compute value v.
  uint32_t formingStep(int v) const {
    for (size_t t = 0; t < code.timesteps.size(); ++t)
      for (uint32_t i = code.timesteps[t].tiuBegin; i < code.timesteps[t].tiuEnd; ++i)
        if (g.nodes[code.tiuOps[i]].result == v)
          return t;
    return 0;
  }

  /// A conv/deconv filter computed in this group (through a filter view): a
  /// dynamic weight formed on chip, resident from the step that forms it
  /// (or formed again for each channel slice, with its output channels).
  std::optional<Resident> formedFilter(int v, const std::string &name, uint32_t size,
                                       uint32_t lastStep) const {
    if (g.vals[v].external)
      return std::nullopt;
    Resident r;
    for (const auto &node : g.nodes)
      if (node.op->hasTrait<tpu::HasFilter>() && node.operands.size() > 1 &&
          node.operands[1] == v) {
        r.consumers.push_back(nameOf(node.op));
        auto type = cast<RankedTensorType>(node.op->getOperand(1).getType());
        r.shape.assign(type.getShape().begin(), type.getShape().end());
      }
    if (r.consumers.empty())
      return std::nullopt;
    // The ops that form it: its producer and what that computes from, back
    // to the group's loads.
    std::vector<bool> forms(g.vals.size());
    forms[v] = true;
    for (size_t n = g.nodes.size(); n-- > 0;)
      if (forms[g.nodes[n].result])
        for (int operand : g.nodes[n].operands)
          if (operand >= 0 && !g.vals[operand].external)
            forms[operand] = true;
    for (const auto &node : g.nodes)
      if (forms[node.result])
        r.producers.push_back(nameOf(node.op));
    r.tensor = name;
    r.dynamic = r.formedOnChip = true;
    r.overSlices = held[v];
    r.producer = name;
    r.lmemAddr = place.lmem[v][0];
    r.lmemSize = size;
    r.dtype = dtype(v);
    r.group = code.id;
    r.firstStep = formingStep(v);
    r.lastStep = lastStep;
    return r;
  }

  void describeTables(const std::vector<int> &slices,
                      std::vector<Resident> &residents) {
    uint32_t lastStep = code.timesteps.size() - 1;
    for (auto [v, val] : llvm::enumerate(g.vals)) {
      std::string name = nameOf(val.external
                                    ? val.value.getDefiningOp<tpu::LoadOp>().getInput()
                                    : val.value);
      SliceTable table;
      table.tensor = name;
      for (int slice : slices) {
        Slice r = s.hold[v][slice];
        table.nIdx.push_back(r.n.idx);
        table.nLen.push_back(r.n.len);
        table.cIdx.push_back(r.c.idx);
        table.cLen.push_back(r.c.len);
        table.hIdx.push_back(r.h.idx);
        table.hLen.push_back(r.h.len);
        table.wIdx.push_back(r.w.idx);
        table.wLen.push_back(r.w.len);
      }
      code.slices.push_back(table);
      uint32_t size = s.laneBytes(g, v);
      int copies = held[v] || buffers == 1 ? 1 : 2;
      for (int b = 0; b < copies; ++b)
        code.lmem.push_back({name, place.lmem[v][b], size, (uint8_t)b, 0, lastStep, held[v]});
      if (std::optional<Resident> formed = formedFilter(v, name, size, lastStep)) {
        residents.push_back(*formed);
        continue;
      }
      // Filters and biases are resident across slices; other held inputs are
      // merely unsliced.
      if (!held[v] || !val.wholeOnly)
        continue;
      Resident r;
      r.tensor = name;
      Value source = val.value.getDefiningOp<tpu::LoadOp>().getInput();
      r.dynamic = !source.getDefiningOp<top::WeightOp>();
      // Reshapes and views only alias: the producer is the op that computed the data.
      Value produced = tpu::producedValue(source);
      r.producer = r.dynamic && produced.getDefiningOp() ? nameOf(produced) : "";
      for (Operation *user : val.value.getUsers())
        r.consumers.push_back(nameOf(user));
      auto type = cast<RankedTensorType>(source.getType());
      r.shape.assign(type.getShape().begin(), type.getShape().end());
      r.ddrOffset = place.ddr[v];
      r.lmemAddr = place.lmem[v][0];
      r.lmemSize = size;
      r.dtype = dtype(v);
      r.group = code.id;
      r.firstStep = 0;
      r.lastStep = lastStep;
      residents.push_back(r);
    }
  }
};
} // namespace

FailureOr<GroupCode> codegen::generateGroup(tpu::GroupOp group, uint32_t id,
                                            ArrayRef<Prefetched> prefetch,
                                            std::vector<Resident> &residents) {
  GroupEmitter emitter(group);
  emitter.code.id = id;
  if (failed(emitter.run(prefetch, residents)))
    return failure();
  return std::move(emitter.code);
}

GroupCode codegen::generateDma(tpu::DmaOp dma, uint32_t id) {
  GroupCode code;
  code.id = id;
  code.ops.push_back(nameOf(dma.getOperation()));
  uint64_t dst = ddrAddrOf(dma.getOutput());
  uint8_t dtype = tpu::dtypeOrF32(dma.getOutput());
  for (tpu::DmaCopyAttr copy : dma.getCopies()) {
    int64_t src = copy.getSrc();
    uint64_t srcBase = src >= 0 ? ddrAddrOf(dma.getInputs()[src]) : dst;
    kiln_gdma_cmd c = tpu::dmaCommand(copy, dtype, srcBase, dst);
    c.cmd_id = code.gdma.size() + 1;
    code.gdma.push_back(c);
  }
  code.timesteps.push_back({0, 0, 0, 0, (uint32_t)code.gdma.size()});
  code.cycles = modelCycles(code);
  return code;
}

GroupCode codegen::generateConcat(tpu::ConcatOp concat, uint32_t id) {
  GroupCode code;
  code.id = id;
  code.ops.push_back(nameOf(concat.getOperation()));
  auto outShape = cast<RankedTensorType>(concat.getType()).getShape();
  int64_t axis = concat.getAxis();
  uint64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= outShape[i];
  for (size_t i = axis + 1; i < outShape.size(); ++i)
    inner *= outShape[i];
  uint64_t dst = ddrAddrOf(concat.getOutput()), offset = 0;
  uint8_t dtype = tpu::dtypeOrF32(concat.getOutput());
  uint32_t bytes = kiln_dtype_bytes(dtype);
  for (Value in : concat.getInputs()) {
    uint64_t mid = cast<RankedTensorType>(in.getType()).getShape()[axis];
    kiln_gdma_cmd c{};
    c.cmd_id = code.gdma.size() + 1;
    c.dir = KILN_GDMA_DDR_TO_DDR;
    c.dtype = dtype;
    c.n = outer;
    c.c = 1;
    c.h = mid;
    c.w = inner;
    c.src_addr = ddrAddrOf(in);
    c.dst_addr = dst + offset * inner * bytes;
    uint32_t src[4] = {(uint32_t)(mid * inner), (uint32_t)(mid * inner), (uint32_t)inner, 1};
    uint32_t dstS[4] = {(uint32_t)(outShape[axis] * inner),
                        (uint32_t)(outShape[axis] * inner), (uint32_t)inner, 1};
    std::memcpy(c.src_stride, src, sizeof(src));
    std::memcpy(c.dst_stride, dstS, sizeof(dstS));
    code.gdma.push_back(c);
    offset += mid;
  }
  code.timesteps.push_back({0, 0, 0, 0, (uint32_t)code.gdma.size()});
  code.cycles = modelCycles(code);
  return code;
}

std::vector<std::vector<Prefetched>> codegen::prefetchesByHost(ArrayRef<tpu::GroupOp> groups) {
  std::vector<std::vector<Prefetched>> hosted(groups.size());
  for (auto [j, group] : llvm::enumerate(groups)) {
    lg::MaterializedGroup m = lg::readGroup(group, [](Value v) { return ddrAddrOf(v); });
    for (auto [v, op] : llvm::enumerate(m.loads)) {
      auto load = dyn_cast_or_null<tpu::LoadOp>(op);
      if (!load || !load.getPrefetchGroups())
        continue;
      size_t host = j - *load.getPrefetchGroups();
      hosted[host].push_back({nameOf(load.getInput()),
                              lg::wholeLoad(m.g, m.s, v, m.place.lmem[v][0], m.place.ddr[v]),
                              (uint32_t)m.s.laneBytes(m.g, v), m.g.vals[v].icAlign});
    }
  }
  return hosted;
}
