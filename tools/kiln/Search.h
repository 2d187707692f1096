// kiln calibrate --search: the INT8 sensitivity search (docs/precision.md,
// "Sensitivity search").
#ifndef KILN_TOOLS_KILN_SEARCH_H
#define KILN_TOOLS_KILN_SEARCH_H

#include "kiln/Config/Config.h"
#include "kiln/Interpreter/TopInterpreter.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace kiln::cli {
struct SearchOptions {
  double target = 0.99;      ///< mean cosine against f32 to reach
  std::string keepDtype = "f16"; ///< what a kept layer runs in
  std::string output;        ///< the qtable file to write
};

/// From `top` (Top IR after addTopPipeline, unannotated) and the config with
/// its calibration table written: measures the all-INT8 network against f32
/// on `samples`, each INT8 layer's gain when kept in options.keepDtype, keeps
/// layers greedily until the target is met, and writes the qtable file.
/// Returns 0 when the target is met, 1 when it is not (the file is written
/// either way), 2 on an input error.
int searchPrecision(const config::DeployConfig &cfg, mlir::ModuleOp top,
                    const std::vector<interp::TensorMap> &samples, const SearchOptions &options);
} // namespace kiln::cli

#endif
