//===- NetCodegen.cpp - Net-level code generation -------------------------===//

#include "Internal.h"

#include "kiln/Codegen/TiuRecord.h"
#include "kiln/Dialect/Tpu/Analysis/DdrLiveness.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/Slicing.h"
#include "kiln/LayerGroup/StridedLoad.h"
#include "kiln/Support/Names.h"
#include "kiln/Support/Precision.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::codegen;

std::string codegen::nameOf(Operation *op) {
  return opName(op, op->getName().getStringRef());
}

std::string codegen::nameOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name"))
      return name.str();
    return "arg" + std::to_string(arg.getArgNumber());
  }
  Operation *def = v.getDefiningOp();
  // A group's result is the value its body stores.
  if (auto group = dyn_cast<tpu::GroupOp>(def)) {
    auto yield = cast<tpu::YieldOp>(group.getBody().front().getTerminator());
    Value stored = yield.getOperand(cast<OpResult>(v).getResultNumber());
    return nameOf(stored.getDefiningOp<tpu::StoreOp>().getInput());
  }
  return nameOf(def);
}

uint64_t codegen::ddrAddrOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), "tpu.ddr_addr")
        .getInt();
  }
  auto addrs = v.getDefiningOp()->getAttrOfType<ArrayAttr>("ddr_addr");
  return cast<IntegerAttr>(addrs[cast<OpResult>(v).getResultNumber()]).getInt();
}

uint64_t codegen::elementsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

uint64_t codegen::modelCycles(const GroupCode &code) {
  kiln_queue_timing timing{};
  if (kiln_schedule_queues(code.tiu.data(), code.tiu.size(), code.gdma.data(),
                           code.gdma.size(), nullptr, nullptr, &timing) != KILN_OK)
    return 0;
  return timing.total_cycles;
}

uint64_t NetCode::modelledCycles() const {
  uint64_t total = 0;
  for (const auto &g : groups)
    total += g.cycles;
  return total;
}

static TensorDesc describe(Value v, std::string name, const tpu::DdrLiveness &live) {
  auto type = cast<RankedTensorType>(v.getType());
  TensorDesc d;
  d.buffer = live.bufferOf(v);
  d.firstGroup = live.firstStep(v);
  d.lastGroup = live.lastStep(v);
  d.name = std::move(name);
  d.dtype = tpu::dtypeOrF32(type);
  d.shape.assign(type.getShape().begin(), type.getShape().end());
  d.ddrOffset = ddrAddrOf(v);
  d.size = tpu::tensorBytes(type);
  tpu::QuantParams q = tpu::quantParamsOf(type);
  d.scale = q.scale;
  d.zeroPoint = q.zeroPoint;
  return d;
}

/// Whether a byte-moving op's inputs hold their values as its result does.
/// A group result whose stored value holds row-folded channel blocks
/// (tpu.folded_rows): in DDR it is either an intermediate of a folded chain
/// or interleaved into an unfold_rows result.
static bool isFoldedRows(Value result) {
  auto group = result.getDefiningOp<tpu::GroupOp>();
  if (!group)
    return false;
  auto yield = cast<tpu::YieldOp>(group.getBody().front().getTerminator());
  Value stored = yield.getOperand(cast<OpResult>(result).getResultNumber());
  if (auto store = stored.getDefiningOp<tpu::StoreOp>())
    stored = store.getInput();
  Operation *def = stored.getDefiningOp();
  return def && def->hasAttr(tpu::TpuDialect::foldedRowsAttrName());
}

static bool movesSameStorage(Operation *op) {
  Type out = op->getResult(0).getType();
  tpu::QuantParams qo = tpu::quantParamsOf(out);
  for (Value in : op->getOperands()) {
    tpu::QuantParams qi = tpu::quantParamsOf(in.getType());
    if (tpu::dtypeOf(in.getType()) != tpu::dtypeOf(out) || qi.scale != qo.scale ||
        qi.zeroPoint != qo.zeroPoint)
      return false;
  }
  return true;
}


FailureOr<NetCode> codegen::generateNet(ModuleOp module, StringRef name) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  auto coeffSize = module->getAttrOfType<IntegerAttr>("tpu.coeff_size");
  auto neuronSize = module->getAttrOfType<IntegerAttr>("tpu.neuron_size");
  if (!func || !coeffSize || !neuronSize) {
    module.emitError("codegen expects @main after tpu-address-assign");
    return failure();
  }
  FailureOr<tpu::DdrLiveness> live =
      tpu::DdrLiveness::compute(func, module->hasAttr("tpu.keep_tensors"));
  if (failed(live))
    return failure();
  NetCode net;
  net.name = name.str();
  net.coeffSize = coeffSize.getInt();
  net.neuronSize = neuronSize.getInt();
  if (auto peak = module->getAttrOfType<IntegerAttr>("tpu.activation_peak"))
    net.activationPeak = peak.getInt();
  for (const tpu::DdrLiveness::Buffer &b : live->buffers())
    net.buffers.push_back({ddrAddrOf(b.root), b.bytes, (int32_t)b.first, (int32_t)b.last});
  net.coeff.assign(net.coeffSize, 0);
  for (llvm::StringRef report : {kRewriteReportAttr, kPrecisionReportAttr})
    for (std::string &line : readReport(module, report))
      net.decisions.push_back(std::move(line));

  bool badWeight = false;
  func.walk([&](top::WeightOp w) {
    FailureOr<std::vector<uint8_t>> data = weightBytes(w);
    if (failed(data)) {
      badWeight = true;
      return;
    }
    uint64_t at = ddrAddrOf(w.getOutput());
    if (at + data->size() > net.coeff.size()) {
      w.emitError("codegen: weight lies outside the coefficient region");
      badWeight = true;
      return;
    }
    std::memcpy(net.coeff.data() + at, data->data(), data->size());
    if (auto chip = w->getAttrOfType<ArrayAttr>(lg::kChipFilterAttr)) {
      // The copy the chip's loads read: per output channel, blocks of
      // `block` input channels, each block's taps in turn with its channels
      // innermost, the channels past ic zero.
      auto shape = cast<RankedTensorType>(w.getType()).getShape();
      ChipFilterCopy f;
      f.kilnOffset = at;
      f.chipOffset = cast<IntegerAttr>(chip[0]).getInt();
      f.block = cast<IntegerAttr>(chip[1]).getInt();
      f.oc = shape[0], f.ic = shape[1], f.taps = shape[2] * shape[3];
      f.bytes = tpu::elementBytes(w.getType());
      const uint64_t icPadded = (f.ic + f.block - 1) / f.block * f.block;
      if (data->size() != uint64_t{f.oc} * f.ic * f.taps * f.bytes ||
          f.chipOffset + f.oc * icPadded * f.taps * f.bytes > net.coeff.size()) {
        w.emitError("codegen: a chip-layout filter copy that does not fit");
        badWeight = true;
        return;
      }
      for (uint64_t o = 0; o < f.oc; ++o)
        for (uint64_t i = 0; i < f.ic; ++i)
          for (uint64_t t = 0; t < f.taps; ++t)
            std::memcpy(net.coeff.data() + f.chipOffset +
                            ((o * icPadded + i / f.block * f.block) * f.taps + t * f.block +
                             i % f.block) * f.bytes,
                        data->data() + ((o * f.ic + i) * f.taps + t) * f.bytes, f.bytes);
      net.chipFilters.push_back(f);
    }
    // A folded filter's zero taps and repeated blocks are no model bytes.
    auto modelBytes = w->getAttrOfType<IntegerAttr>(tpu::TpuDialect::modelBytesAttrName());
    net.minDdrBytes += modelBytes ? uint64_t(modelBytes.getInt()) : data->size();
  });
  if (badWeight)
    return failure();
  func.walk([&](Operation *op) { net.macs += tpu::modelMacs(op); });

  for (BlockArgument arg : func.getArguments()) {
    net.inputs.push_back(describe(arg, nameOf(arg), *live));
    net.tensors.push_back(net.inputs.back());
    net.minDdrBytes += net.inputs.back().size;
  }
  SmallVector<tpu::GroupOp> layerGroups(func.getBody().front().getOps<tpu::GroupOp>());
  for (auto [j, group] : llvm::enumerate(layerGroups))
    for (Operation &op : group.getBody().front())
      if (auto load = dyn_cast<tpu::LoadOp>(op);
          load && load.getPrefetchGroups() && *load.getPrefetchGroups() > j) {
        load.emitError("codegen: prefetched by a layer group before the first");
        return failure();
      }
  std::vector<std::vector<Prefetched>> hosted = prefetchesByHost(layerGroups);
  size_t layerGroup = 0;
  for (Operation &op : func.getBody().front()) {
    if (auto group = dyn_cast<tpu::GroupOp>(op)) {
      auto code = generateGroup(group, net.groups.size(), hosted[layerGroup++], net.residents);
      if (failed(code))
        return failure();
      net.groups.push_back(std::move(*code));
    } else if (isa<tpu::ConcatOp, tpu::DmaOp>(op) && !movesSameStorage(&op)) {
      op.emitError("codegen: copies bytes, so every input needs the result's dtype and "
                   "quantization (requantize with tpu.cast first)");
      return failure();
    } else if (auto concat = dyn_cast<tpu::ConcatOp>(op); concat && !concat.getInPlace()) {
      net.groups.push_back(generateConcat(concat, net.groups.size()));
    } else if (auto dma = dyn_cast<tpu::DmaOp>(op); dma && !dma.getInPlace()) {
      net.groups.push_back(generateDma(dma, net.groups.size()));
    } else if (op.hasTrait<tpu::DdrView>() ||
               isa<tpu::ConcatOp, tpu::DmaOp, tpu::UnfoldRowsOp, top::WeightOp, top::NoneOp,
                   func::ReturnOp>(op)) {
      // Reshapes, views and in-place concats and dmas alias memory; folded
      // rows and strided views are read by their group's loads, unfolded
      // rows written by its stores; weights are
      // in the coefficient blob.
    } else {
      op.emitError("codegen cannot encode this op");
      return failure();
    }
    if (isa<tpu::GroupOp, tpu::ConcatOp, tpu::DmaOp, tpu::ReshapeOp, tpu::ViewOp,
            tpu::UnfoldRowsOp>(op))
      for (Value r : op.getResults()) {
        // Folded rows are no model tensor (the unfold's result is); a result
        // stored transposed into an in-place dma's memory has no bytes in its
        // own layout.
        if (isFoldedRows(r) || lg::scatteringDma(r))
          continue;
        net.tensors.push_back(describe(r, nameOf(r), *live));
      }
  }
  if ((int64_t)net.groups.size() != live->stepCount()) {
    func.emitError("codegen: ") << net.groups.size() << " groups but the activation plan has "
                                << live->stepCount() << " steps";
    return failure();
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    std::string outName = "output" + std::to_string(i);
    if (auto attr = func.getResultAttrOfType<StringAttr>(i, "kiln.name"))
      outName = attr.str();
    net.outputs.push_back(describe(v, outName, *live));
    net.minDdrBytes += net.outputs.back().size;
  }
  return net;
}
