// Where the Top IR's value ranges (kiln.calib, docs/precision.md) come from:
// a calibration table, calibrating on the config's samples first, or, for
// float modes without a table, one observed interpreter run.
#ifndef KILN_TOOLS_KILN_RANGES_H
#define KILN_TOOLS_KILN_RANGES_H

#include "kiln/Config/Config.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Support/Pipeline.h"
#include "kiln/Support/Precision.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {
/// Interprets the Top IR `module` (after addTopPipeline) on every sample and
/// writes the calibration table to `table`, with a progress bar on stderr and
/// a summary line on stdout (calibrate.cpp). The first `keep` samples' inputs
/// go to `kept`. Returns 0, else the exit code after a diagnostic.
int calibrate(const config::DeployConfig &cfg, mlir::ModuleOp module,
              const std::vector<std::string> &samples, const std::string &table,
              size_t keep = 0, std::vector<interp::TensorMap> *kept = nullptr);

/// Min/max of every Top value (and net input) over observationInputs, by
/// ONNX name, so the F16 overflow policy sees real magnitudes without a
/// calibration table. Warns and returns an empty map without inputs; fails
/// (after a diagnostic) if the interpreter does.
std::optional<std::map<std::string, Range>> observeRanges(const config::DeployConfig &cfg,
                                                          mlir::ModuleOp module);

/// Calibrated ranges onto the Top IR (after addTopPipeline): from the
/// calibration table, or, for float modes without one, from one interpreter
/// run. INT8 needs a table unless the model brings its own quantization
/// (QDQ); without one, it calibrates first on the config's samples. Returns
/// 0, else the exit code after a diagnostic.
int annotateModule(const config::DeployConfig &cfg, mlir::ModuleOp module,
                   const PipelineOptions &pipeline);
} // namespace kiln::cli

#endif
