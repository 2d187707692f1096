// calibration.method auto: each tensor's INT8 threshold chosen by its effect
// at the net outputs (docs/precision.md, "Calibration table").
#ifndef KILN_TOOLS_KILN_THRESHOLDCHOICE_H
#define KILN_TOOLS_KILN_THRESHOLDCHOICE_H

#include "kiln/Calibration/CalibrationTable.h"
#include "kiln/Interpreter/TopInterpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

namespace kiln::cli {

/// For every tensor of `ranges` with more than one of `calibrator`'s
/// candidates: runs `func` in f32 on each of `samples` with only that tensor
/// rounded to INT8 at each candidate threshold (symmetric, scale T / 127, as
/// lowering quantizes it) and keeps the candidate whose mean cosine of the
/// net outputs against f32 is highest (ties go to the earlier candidate:
/// minmax, percentile, mse, kl). Net inputs keep minmax. Prints how many
/// tensors each method got. False after a diagnostic.
bool chooseThresholds(mlir::func::FuncOp func, const calib::Calibrator &calibrator,
                      const std::vector<interp::TensorMap> &samples,
                      std::vector<calib::NamedRange> &ranges);

} // namespace kiln::cli

#endif
