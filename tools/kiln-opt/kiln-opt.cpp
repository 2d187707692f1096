// mlir-opt with kiln's dialects and passes, for lit tests. Its pass manager
// reports invalid IR after a pass as kiln compile does (kiln/Support/IRChecks.h).
#include "TestPasses.h"

#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"
#include "kiln/Support/IRChecks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, kiln::top::TopDialect,
                  kiln::tpu::TpuDialect, mlir::quant::QuantizationDialect>();
  kiln::top::registerTopPasses();
  kiln::tpu::registerTpuPasses();
  kiln::registerTestPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  auto [input, output] =
      mlir::registerAndParseCLIOptions(argc, argv, "kiln optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  config.setPassPipelineSetupFn([cl = config](mlir::PassManager &pm) {
    kiln::addIRChecks(pm);
    return cl.setupPassPipeline(pm);
  });
  std::string error;
  auto in = mlir::openInputFile(input, &error);
  if (!in) {
    llvm::errs() << error << "\n";
    return 1;
  }
  auto out = mlir::openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(out->os(), std::move(in), registry, config)))
    return 1;
  out->keep();
  return 0;
}
