#include "kiln/Dialect/Top/Transforms/Passes.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPFUSERELU
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {
struct FuseReluPass : public kiln::top::impl::TopFuseReluBase<FuseReluPass> {
  void runOnOperation() override {
    getOperation().walk([](ReluOp relu) {
      Operation *producer = relu.getInput().getDefiningOp();
      if (!producer || !producer->hasOneUse() ||
          !isa<ConvOp, DeconvOp, MatMulOp, AddOp, SubOp, MulOp, DivOp, PowOp,
               MaxOp, MinOp, PReluOp>(producer))
        return;
      producer->setAttr("do_relu", BoolAttr::get(relu.getContext(), true));
      // The fused op now produces the ReLU's value: keep the later name.
      producer->setLoc(relu.getLoc());
      relu.getOutput().replaceAllUsesWith(relu.getInput());
      relu.erase();
    });
  }
};
} // namespace

std::unique_ptr<Pass> kiln::top::createFuseReluPass() {
  return std::make_unique<FuseReluPass>();
}
