//===- TestPasses.cpp - kiln-opt's test-only passes -----------------------===//
//
// Passes that misbehave on purpose, registered only in kiln-opt: the lit test
// tests/lit/Support/ir-checks.mlir checks how kiln reports them
// (kiln/Support/IRChecks.h).
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
/// -kiln-test-break-ir: finds the first op of the function body that uses an
/// op before it, then (mode=dominance) moves it to the top of the body,
/// above its operand's definition, and succeeds: invalid IR; (mode=fail)
/// fails with an error on it, as a pass rejecting the model does; or
/// (mode=silent) fails without a diagnostic.
struct TestBreakIRPass : PassWrapper<TestBreakIRPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestBreakIRPass)

  TestBreakIRPass() = default;
  TestBreakIRPass(const TestBreakIRPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "kiln-test-break-ir"; }
  StringRef getDescription() const final {
    return "Test only: leave invalid IR or fail, for kiln's internal-error report";
  }

  Option<std::string> mode{*this, "mode",
                           llvm::cl::desc("dominance | fail | silent"),
                           llvm::cl::init("dominance")};

  void runOnOperation() override {
    Block &body = getOperation().getBody().front();
    for (Operation &op : body) {
      bool usesEarlierOp = llvm::any_of(op.getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && def->getBlock() == &body;
      });
      if (!usesEarlierOp)
        continue;
      if (mode == "fail") {
        op.emitError("kiln-test-break-ir: this op is not supported");
        return signalPassFailure();
      }
      if (mode == "silent")
        return signalPassFailure();
      op.moveBefore(&body.front());
      return;
    }
  }
};
} // namespace

void kiln::registerTestPasses() { PassRegistration<TestBreakIRPass>(); }
