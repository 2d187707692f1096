//===- AddressAssign.cpp - DDR offsets for every tensor -------------------===//

#include "kiln/Dialect/Tpu/Transforms/Passes.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
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

uint64_t bytesOf(Value v) { return tpu::tensorBytes(v.getType()); }

struct AddressAssignPass
    : public tpu::impl::TpuAddressAssignBase<AddressAssignPass> {
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
    func.walk([&](top::WeightOp w) {
      w->setAttr("ddr_addr", b.getI64ArrayAttr({(int64_t)coeff}));
      coeff = alignDdr(coeff + bytesOf(w.getOutput()));
    });
    uint64_t neuronBase = alignDdr(coeff), cursor = neuronBase;
    auto place = [&](Value v) {
      uint64_t at = cursor;
      cursor = alignDdr(cursor + bytesOf(v));
      return (int64_t)at;
    };
    for (BlockArgument arg : func.getArguments())
      func.setArgAttr(arg.getArgNumber(), "tpu.ddr_addr",
                      b.getI64IntegerAttr(place(arg)));
    // Every activation keeps its own memory: per-layer dumps can read any of
    // them after a run.
    for (Operation &op : func.getBody().front()) {
      if (isa<top::WeightOp, top::NoneOp, func::ReturnOp>(op))
        continue;
      SmallVector<int64_t> addrs;
      if (auto reshape = dyn_cast<tpu::ReshapeOp>(op)) {
        addrs.push_back(addressOf(reshape.getInput()));
      } else {
        for (Value r : op.getResults())
          addrs.push_back(place(r));
      }
      op.setAttr("ddr_addr", b.getI64ArrayAttr(addrs));
    }
    module->setAttr("tpu.coeff_size", b.getI64IntegerAttr(neuronBase));
    module->setAttr("tpu.neuron_size",
                    b.getI64IntegerAttr(cursor - neuronBase));
  }

  static int64_t addressOf(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
      return func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), "tpu.ddr_addr")
          .getInt();
    }
    auto addrs = v.getDefiningOp()->getAttrOfType<ArrayAttr>("ddr_addr");
    return cast<IntegerAttr>(addrs[cast<OpResult>(v).getResultNumber()]).getInt();
  }
};
} // namespace

std::unique_ptr<Pass> tpu::createAddressAssignPass() {
  return std::make_unique<AddressAssignPass>();
}
