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
  size_t samples = 8;        ///< how many samples it measures on; one more is held out
};

/// From `top` (Top IR after addTopPipeline, unannotated) and the config with
/// its calibration table written: measures the all-INT8 network against f32
/// on the first options.samples of `samples`, ranks the INT8 layers by their
/// damage at the outputs (damageReport's `alone`), keeps the k most damaging
/// with the INT8 layers that read them in options.keepDtype for k = 1, 2, 4,
/// ... until the target is met, bisects
/// for the least such k, drops kept layers the rest make unnecessary, and
/// writes the qtable file. A sample beyond options.samples is held out and
/// reported. Returns 0 when the target is met, 1 when it is not (the file is
/// written either way), 2 on an input error.
int searchPrecision(const config::DeployConfig &cfg, mlir::ModuleOp top,
                    const std::vector<interp::TensorMap> &samples, const SearchOptions &options);

/// The mean cosine of `got`'s tensors against `ref`'s of the same names (0
/// for a missing one or one of another size): the search's measure.
double meanCosine(const interp::TensorMap &ref, const interp::TensorMap &got);

/// From `top` and the config as for searchPrecision: prints every layer's
/// INT8 damage on `samples` (its cosine against f32 from f32 inputs, and in
/// the all-INT8 network) and the most damaged INT8 layers. 0, or the exit
/// code after a diagnostic.
int damageReport(const config::DeployConfig &cfg, mlir::ModuleOp top,
                 const std::vector<interp::TensorMap> &samples);
} // namespace kiln::cli

#endif
