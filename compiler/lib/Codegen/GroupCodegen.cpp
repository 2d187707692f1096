//===- GroupCodegen.cpp - One layer group to TIU/GDMA queues --------------===//
//
// Slices run in order. GDMA queue: held loads (prologue), then per slice k its
// loads followed by the stores of slice k - (buffers - 1), so with two buffers
// the loads of slice k+1 overlap the compute of slice k. Sync:
//  - a load of slice k waits for the TIU to finish slice k - buffers (the
//    previous user of its buffer);
//  - the first TIU command of slice k waits for its loads and for the stores
//    of slice k - buffers (which read the buffers it overwrites);
//  - a store of slice k waits for the TIU to finish slice k.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "kiln/Codegen/TiuRecord.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/Slicing.h"
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
  // Per value: LMEM addresses of the two buffers, and whether it is held.
  std::vector<std::array<uint32_t, 2>> lmem;
  std::vector<bool> held;
  std::vector<uint64_t> ddr;
  // Per node: the record of the whole op (fillTiuRecord); slices place it.
  std::vector<kiln_tiu_cmd> records;

  GroupEmitter(tpu::GroupOp group)
      : group(group), buffers(group.getBuffers()) {
    SmallVector<Operation *> ops;
    for (Operation &op : group.getBody().front())
      if (!isa<tpu::LoadOp, tpu::StoreOp, tpu::YieldOp>(op))
        ops.push_back(&op);
    g = GroupGraph::fromOps(ops);
    s = lg::computeSlicing(g, group.getNSlices(), group.getHSlices());
    lmem.resize(g.vals.size());
    held.resize(g.vals.size());
    ddr.resize(g.vals.size());
    for (auto [v, val] : llvm::enumerate(g.vals)) {
      Operation *def = val.value.getDefiningOp();
      lmem[v] = {(uint32_t)def->getAttrOfType<IntegerAttr>("lmem_addr").getInt(),
                 (uint32_t)def->getAttrOfType<IntegerAttr>("lmem_pong").getInt()};
      held[v] = val.external && s.isHeld(v);
      if (auto load = dyn_cast<tpu::LoadOp>(def))
        ddr[v] = ddrAddrOf(load.getInput());
    }
    auto yield = cast<tpu::YieldOp>(group.getBody().front().getTerminator());
    for (auto [i, stored] : llvm::enumerate(yield.getOperands())) {
      Value v = stored.getDefiningOp<tpu::StoreOp>().getInput();
      ddr[g.valOf(v)] = ddrAddrOf(group.getResult(i));
    }
  }

  uint32_t bufferAddr(int v, size_t ordinal) const {
    return held[v] ? lmem[v][0] : lmem[v][ordinal % buffers];
  }

  const std::array<int64_t, 4> &shape(int v) const { return g.vals[v].lmemShape; }

  uint32_t dsize(int v) const { return g.vals[v].dsize; }
  uint8_t dtype(int v) const { return tpu::dtypeOrF32(g.vals[v].value); }

  /// LMEM address of rows `rows` of value v, which holds `holding` at `base`.
  uint32_t rowsAddr(int v, uint32_t base, Slice holding, Slice rows) const {
    auto &sh = shape(v);
    uint64_t cgroups = (sh[1] + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
    uint64_t plane = kiln_lmem_plane_stride(holding.h.len, sh[3], dsize(v));
    return base + (rows.n.idx - holding.n.idx) * cgroups * plane +
           (rows.h.idx - holding.h.idx) * sh[3] * dsize(v);
  }

  /// Places a record operand (dtype and flags already filled) on rows `rows`
  /// of value v, which holds `holding` in LMEM at `base`.
  void place(kiln_tiu_operand &o, int v, uint32_t base, Slice holding, Slice rows) const {
    auto &sh = shape(v);
    o.addr = rowsAddr(v, base, holding, rows);
    o.n = rows.n.len;
    o.c = sh[1];
    o.h = rows.h.len;
    o.w = sh[3];
    o.plane_h = holding.h.len;
  }

  kiln_gdma_cmd transfer(int v, uint32_t lmemAddr, Slice holding, Slice rows,
                         bool toLmem) {
    auto &sh = shape(v);
    kiln_gdma_cmd c{};
    c.cmd_id = code.gdma.size() + 1;
    c.dir = toLmem ? KILN_GDMA_DDR_TO_LMEM : KILN_GDMA_LMEM_TO_DDR;
    c.dtype = dtype(v);
    c.n = rows.n.len;
    c.c = sh[1];
    c.h = rows.h.len;
    c.w = sh[3];
    uint32_t window = rowsAddr(v, lmemAddr, holding, rows);
    uint64_t ddrAddr =
        ddr[v] + ((rows.n.idx * sh[1] * sh[2]) + rows.h.idx * 1) * sh[3] * dsize(v);
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

  LogicalResult emitNode(size_t n, int slice, size_t ordinal) {
    const auto &node = g.nodes[n];
    Slice out = s.hold[node.result][slice];
    if (out.empty())
      return success();
    const auto &reads = s.reads[n][slice];
    kiln_tiu_cmd c = records[n];
    c.cmd_id = code.tiu.size() + 1;
    place(c.out, node.result, bufferAddr(node.result, ordinal), out, out);
    c.out.plane_h = 0;
    for (auto [i, v] : llvm::enumerate(node.operands))
      if (v >= 0)
        place(*tiuOperandSlot(c, i), v, bufferAddr(v, ordinal), s.hold[v][slice],
              reads[i].rows);
    // The slice's own pads: rows outside its loaded input are padding.
    Operation *op = node.op;
    if (isa<tpu::Conv2DOp, tpu::Pool2DOp, tpu::Deconv2DOp>(op)) {
      c.pad_top = reads[0].padTop;
      if (!isa<tpu::Deconv2DOp>(op))
        c.pad_bottom = reads[0].padBottom;
    }
    if (isa<tpu::Conv2DOp>(op)) {
      int64_t span = c.in0.h + c.pad_top + c.pad_bottom - c.dil_h * (c.kh - 1) - 1;
      if (span < 0 || span / c.stride_h + 1 != c.out.h)
        return op->emitError("internal error: slice rows do not match the conv window");
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
    code.tiu.push_back(c);
    return success();
  }

  void emitStores(int slice, uint32_t ordinal, uint32_t tiuEnd) {
    for (size_t v = 0; v < g.vals.size(); ++v) {
      Slice rows = s.store[v][slice];
      if (!g.vals[v].escaping || rows.empty())
        continue;
      kiln_gdma_cmd c = transfer(v, bufferAddr(v, ordinal), s.hold[v][slice], rows, false);
      c.wait_tiu_id = tiuEnd;
      code.gdma.push_back(c);
    }
  }

  LogicalResult run(std::vector<Resident> &residents) {
    auto &vals = g.vals;
    code.nSlices = s.nSlices;
    code.hSlices = s.hSlices;
    for (const auto &node : g.nodes) {
      code.ops.push_back(nameOf(node.op));
      records.emplace_back();
      if (failed(fillTiuRecord(node.op, records.back())))
        return failure();
    }

    // Prologue: values held for the whole group are loaded once.
    Timestep prologue;
    prologue.gdmaBegin = code.gdma.size();
    for (size_t v = 0; v < vals.size(); ++v) {
      if (!held[v])
        continue;
      Slice rows;
      for (const Slice &r : s.hold[v])
        if (!r.empty())
          rows = r;
      code.gdma.push_back(transfer(v, lmem[v][0], rows, rows, true));
    }
    prologue.gdmaEnd = code.gdma.size();
    uint32_t prologueEnd = code.gdma.size();
    code.timesteps.push_back(prologue);

    std::vector<int> slices;
    for (int slice = 0; slice < s.sliceCount(); ++slice)
      if (!s.sliceEmpty(slice))
        slices.push_back(slice);
    std::vector<uint32_t> tiuEnd(slices.size()), lastStore(slices.size(), 0);

    for (size_t k = 0; k < slices.size(); ++k) {
      int slice = slices[k];
      Timestep step;
      step.slice = slice;
      step.gdmaBegin = code.gdma.size();
      uint32_t loadWait = k >= (size_t)buffers ? tiuEnd[k - buffers] : 0;
      for (size_t v = 0; v < vals.size(); ++v) {
        Slice rows = s.hold[v][slice];
        if (!vals[v].external || held[v] || rows.empty())
          continue;
        kiln_gdma_cmd c = transfer(v, bufferAddr(v, k), rows, rows, true);
        c.wait_tiu_id = loadWait;
        code.gdma.push_back(c);
      }
      uint32_t tiuWait = std::max<uint32_t>(code.gdma.size(), prologueEnd);
      if (k >= (size_t)buffers)
        tiuWait = std::max(tiuWait, lastStore[k - buffers]);

      step.tiuBegin = code.tiu.size();
      for (size_t n = 0; n < g.nodes.size(); ++n)
        if (failed(emitNode(n, slice, k)))
          return failure();
      if (code.tiu.size() > step.tiuBegin)
        code.tiu[step.tiuBegin].wait_gdma_id = tiuWait;
      step.tiuEnd = code.tiu.size();
      tiuEnd[k] = code.tiu.size();

      if (k + 1 >= (size_t)buffers) {
        size_t j = k + 1 - buffers;
        emitStores(slices[j], j, tiuEnd[j]);
        lastStore[j] = code.gdma.size();
      }
      step.gdmaEnd = code.gdma.size();
      code.timesteps.push_back(step);
    }
    // Drain: stores not yet issued.
    Timestep drain;
    drain.slice = slices.empty() ? -1 : slices.back();
    drain.tiuBegin = drain.tiuEnd = code.tiu.size();
    drain.gdmaBegin = code.gdma.size();
    for (size_t j = slices.size() + 1 > (size_t)buffers ? slices.size() + 1 - buffers : 0;
         j < slices.size(); ++j) {
      emitStores(slices[j], j, tiuEnd[j]);
      lastStore[j] = code.gdma.size();
    }
    drain.gdmaEnd = code.gdma.size();
    if (drain.gdmaEnd > drain.gdmaBegin)
      code.timesteps.push_back(drain);

    describeTables(slices, residents);
    code.cycles = modelCycles(code);
    return success();
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
        table.cIdx.push_back(0);
        table.cLen.push_back(shape(v)[1]);
        table.hIdx.push_back(r.h.idx);
        table.hLen.push_back(r.h.len);
        table.wIdx.push_back(0);
        table.wLen.push_back(shape(v)[3]);
      }
      code.slices.push_back(table);
      uint32_t size = s.laneBytes(g, v);
      int copies = held[v] || buffers == 1 ? 1 : 2;
      for (int b = 0; b < copies; ++b)
        code.lmem.push_back({name, lmem[v][b], size, (uint8_t)b, 0, lastStep, held[v]});
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
      r.ddrOffset = ddr[v];
      r.lmemAddr = lmem[v][0];
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
                                            std::vector<Resident> &residents) {
  GroupEmitter emitter(group);
  emitter.code.id = id;
  if (failed(emitter.run(residents)))
    return failure();
  return std::move(emitter.code);
}

GroupCode codegen::generateDma(tpu::DmaOp dma, uint32_t id) {
  GroupCode code;
  code.id = id;
  code.ops.push_back(nameOf(dma.getOperation()));
  uint64_t dst = ddrAddrOf(dma.getOutput());
  uint8_t dtype = tpu::dtypeOrF32(dma.getOutput());
  uint32_t bytes = kiln_dtype_bytes(dtype);
  auto program = dma.getProgram();
  for (size_t r = 0; r + tpu::DmaOp::kDmaRecord <= program.size();
       r += tpu::DmaOp::kDmaRecord) {
    ArrayRef<int64_t> rec = program.slice(r, tpu::DmaOp::kDmaRecord);
    kiln_gdma_cmd c{};
    c.cmd_id = code.gdma.size() + 1;
    c.dir = KILN_GDMA_DDR_TO_DDR;
    c.dtype = dtype;
    int64_t src = rec[0];
    uint64_t srcBase = src >= 0 ? ddrAddrOf(dma.getInputs()[src]) : dst;
    if (src == -1) {
      c.flags = KILN_GDMA_FLAG_FILL;
      c.src_addr = (uint32_t)rec[15];
    } else {
      c.src_addr = srcBase + rec[1] * bytes;
    }
    c.dst_addr = dst + rec[2] * bytes;
    c.n = rec[3];
    c.c = rec[4];
    c.h = rec[5];
    c.w = rec[6];
    for (int i = 0; i < 4; ++i) {
      c.src_stride[i] = rec[7 + i];
      c.dst_stride[i] = rec[11 + i];
    }
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
