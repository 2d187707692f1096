//===- AddressAssign.cpp - The DDR plan: coefficients and activations -----===//
//
// Activations share the neuron region by liveness, as TFLite Micro's greedy
// planner does (Pisarchyk & Lee 2020, "greedy by size"): buffers in
// decreasing size, each at the lowest aligned offset that no buffer live at
// the same time occupies. Inputs and outputs come first, each with bytes of
// its own for the whole run.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/Transforms/Passes.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/Analysis/DdrLiveness.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/Slicing.h"
#include "kiln/abi/chip.h"
#include "mlir/IR/Builders.h"

namespace kiln::tpu {
#define GEN_PASS_DEF_TPUADDRESSASSIGN
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

namespace {

uint64_t alignDdr(uint64_t v) {
  return (v + KILN_DDR_ALIGN - 1) / KILN_DDR_ALIGN * KILN_DDR_ALIGN;
}

/// The IC-parallel block every reader of w (through its loads) takes it in
/// as a BM1684X conv filter (lg::chipFilterIcAlign), or 0 when some reader
/// does not or w is no [oc, ic, kh, kw] filter.
uint32_t chipFilterBlock(top::WeightOp w) {
  uint32_t block = 0;
  bool other = false;
  auto visit = [&](OpOperand &use) {
    const uint32_t b = lg::chipFilterIcAlign(use.getOwner(), use.getOperandNumber());
    if (b <= 1 || (block && b != block))
      other = true;
    block = b;
  };
  for (OpOperand &use : w->getUses()) {
    if (auto load = dyn_cast<tpu::LoadOp>(use.getOwner()))
      for (OpOperand &u : load->getUses())
        visit(u);
    else
      visit(use);
  }
  return !other && cast<RankedTensorType>(w.getType()).getRank() == 4 ? block : 0;
}

struct Interval {
  int64_t first, last;
  bool overlaps(const Interval &o) const { return first <= o.last && o.first <= last; }
};

/// Offsets (from 0) for buffers of the given aligned sizes and lifetimes:
/// greedy by size. Returns the bytes used.
uint64_t placeGreedy(ArrayRef<uint64_t> sizes, ArrayRef<Interval> lives,
                     SmallVectorImpl<uint64_t> &offsets) {
  SmallVector<unsigned> byDecreasingSize(sizes.size());
  for (unsigned i = 0; i < sizes.size(); ++i)
    byDecreasingSize[i] = i;
  llvm::stable_sort(byDecreasingSize, [&](unsigned a, unsigned b) {
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    return lives[a].first < lives[b].first;
  });
  offsets.assign(sizes.size(), 0);
  SmallVector<unsigned> placed;
  uint64_t used = 0;
  for (unsigned i : byDecreasingSize) {
    SmallVector<unsigned> conflicts;
    for (unsigned p : placed)
      if (lives[p].overlaps(lives[i]))
        conflicts.push_back(p);
    llvm::sort(conflicts, [&](unsigned a, unsigned b) { return offsets[a] < offsets[b]; });
    uint64_t at = 0;
    for (unsigned c : conflicts) {
      if (at + sizes[i] <= offsets[c])
        break;
      at = std::max(at, offsets[c] + sizes[c]);
    }
    offsets[i] = at;
    used = std::max(used, at + sizes[i]);
    placed.push_back(i);
  }
  return used;
}

/// The most bytes of buffers live at one step.
uint64_t livePeak(ArrayRef<uint64_t> sizes, ArrayRef<Interval> lives, int64_t steps) {
  uint64_t peak = 0;
  for (int64_t s = tpu::DdrLiveness::kBeforeRun; s <= steps; ++s) {
    uint64_t live = 0;
    for (size_t i = 0; i < sizes.size(); ++i)
      if (lives[i].first <= s && s <= lives[i].last)
        live += sizes[i];
    peak = std::max(peak, live);
  }
  return peak;
}

struct AddressAssignPass
    : public tpu::impl::TpuAddressAssignBase<AddressAssignPass> {
  using TpuAddressAssignBase::TpuAddressAssignBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    auto funcs = module.getOps<func::FuncOp>();
    if (std::distance(funcs.begin(), funcs.end()) != 1) {
      module.emitError("expects exactly one function");
      return signalPassFailure();
    }
    func::FuncOp func = *funcs.begin();
    // Coefficients first: the runtime uploads that region once per load.
    uint64_t coeff = 0;
    llvm::DenseMap<Value, uint64_t> addr;
    func.walk([&](top::WeightOp w) {
      w->setAttr("ddr_addr", b.getI64ArrayAttr({(int64_t)coeff}));
      addr[w] = coeff;
      coeff = alignDdr(coeff + tpu::tensorBytes(w.getOutput()));
      // isa: bm1684x: a conv filter the chip reads in its IC-parallel layout
      // gets a second copy laid out so (codegen writes it), which its loads
      // read whole instead of gathering kiln's layout element by element.
      if (const uint32_t cube = chipFilterBlock(w)) {
        auto shape = cast<RankedTensorType>(w.getType()).getShape();
        const uint64_t oc = shape[0], ic = shape[1], taps = shape[2] * shape[3];
        w->setAttr(lg::kChipFilterAttr, b.getI64ArrayAttr({(int64_t)coeff, (int64_t)cube}));
        coeff = alignDdr(coeff + oc * ((ic + cube - 1) / cube * cube) * taps *
                                     tpu::elementBytes(w.getType()));
      }
    });
    const uint64_t neuronBase = alignDdr(coeff);

    llvm::DenseSet<Value> placedInConcat;
    for (auto concat : func.getOps<tpu::ConcatOp>())
      if (tpu::claimConcatInPlace(concat, placedInConcat))
        concat.setInPlace(true);
    FailureOr<tpu::DdrLiveness> live = tpu::DdrLiveness::compute(func, keepTensors);
    if (failed(live))
      return signalPassFailure();

    // Inputs and outputs, then the rest shared by liveness.
    uint64_t cursor = neuronBase;
    SmallVector<unsigned> shared;
    SmallVector<uint64_t> sizes;
    SmallVector<Interval> lives, allLives;
    SmallVector<uint64_t> allSizes;
    for (auto [i, buf] : llvm::enumerate(live->buffers())) {
      allSizes.push_back(alignDdr(buf.bytes));
      allLives.push_back({buf.first, buf.last});
      if (buf.pinned) {
        addr[buf.root] = cursor;
        cursor += alignDdr(buf.bytes);
        continue;
      }
      shared.push_back(i);
      sizes.push_back(alignDdr(buf.bytes));
      Interval life{buf.first, buf.last};
      // Kept tensors stay readable after the run: all of them live throughout.
      if (keepTensors)
        life = {tpu::DdrLiveness::kBeforeRun, live->stepCount()};
      lives.push_back(life);
    }
    SmallVector<uint64_t> offsets;
    uint64_t sharedBytes = placeGreedy(sizes, lives, offsets);
    for (auto [k, i] : llvm::enumerate(shared))
      addr[live->buffers()[i].root] = cursor + offsets[k];
    cursor += sharedBytes;

    auto addressOf = [&](Value v) {
      return (int64_t)(addr.lookup(live->rootOf(v)) + live->offsetInRoot(v));
    };
    for (BlockArgument arg : func.getArguments())
      func.setArgAttr(arg.getArgNumber(), "tpu.ddr_addr", b.getI64IntegerAttr(addressOf(arg)));
    for (Operation &op : func.getBody().front()) {
      if (isa<top::WeightOp, top::NoneOp, func::ReturnOp>(op))
        continue;
      SmallVector<int64_t> addrs;
      for (Value r : op.getResults())
        addrs.push_back(addressOf(r));
      op.setAttr("ddr_addr", b.getI64ArrayAttr(addrs));
    }
    if (keepTensors) // codegen describes the same plan
      module->setAttr("tpu.keep_tensors", b.getUnitAttr());
    module->setAttr("tpu.coeff_size", b.getI64IntegerAttr(neuronBase));
    module->setAttr("tpu.neuron_size", b.getI64IntegerAttr(cursor - neuronBase));
    module->setAttr("tpu.activation_peak",
                    b.getI64IntegerAttr(livePeak(allSizes, allLives, live->stepCount())));
  }
};
} // namespace

std::unique_ptr<Pass> tpu::createAddressAssignPass() {
  return std::make_unique<AddressAssignPass>();
}

std::unique_ptr<Pass> tpu::createAddressAssignPass(bool keepTensors) {
  TpuAddressAssignOptions options;
  options.keepTensors = keepTensors;
  return std::make_unique<AddressAssignPass>(options);
}
