#include "kiln/Dialect/Top/Transforms/Passes.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPSHAPEINFER
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;

namespace {
struct ShapeInferPass
    : public kiln::top::impl::TopShapeInferBase<ShapeInferPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    WalkResult result = func.walk([](kiln::top::ShapeInference op) {
      return failed(op.inferShapes()) ? WalkResult::interrupt()
                                      : WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    auto *terminator = func.getBody().back().getTerminator();
    func.setType(FunctionType::get(func.getContext(),
                                   func.getBody().getArgumentTypes(),
                                   terminator->getOperandTypes()));
  }
};
} // namespace

std::unique_ptr<Pass> kiln::top::createShapeInferPass() {
  return std::make_unique<ShapeInferPass>();
}
