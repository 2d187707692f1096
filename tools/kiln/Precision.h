// What `kiln compile` and `kiln calibrate` share: import options, the
// calibration table's place, the ranges one interpreter run observes when
// there is no table, the pipeline options of a config, and the Top -> Tpu IR
// steps (calibrate --search measures the IR compile would build).
#ifndef KILN_TOOLS_KILN_PRECISION_H
#define KILN_TOOLS_KILN_PRECISION_H

#include "kiln/Config/Config.h"
#include "kiln/Frontend/Onnx/OnnxImporter.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Support/Pipeline.h"
#include "kiln/Support/Precision.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {
/// calibration.table, else <config dir>/out/<name>.calib (where `kiln
/// calibrate` writes by default).
std::string calibrationTablePath(const config::DeployConfig &cfg);

/// The importer's options from a config (input shapes, random ops).
ImportOptions importOptionsOf(const config::DeployConfig &cfg);

/// The config's model imported to Top IR in `ctx` (with the Top, Tpu and
/// func dialects loaded); null after the importer's diagnostics.
mlir::OwningOpRef<mlir::ModuleOp> importConfigModel(mlir::MLIRContext &ctx,
                                                    const config::DeployConfig &cfg);

/// The files a glob matches, sorted.
std::vector<std::string> globSorted(const std::string &pattern);

/// The config's calibration samples, sorted, the first `most` of them (0:
/// all). Returns an error message, empty on success.
std::string calibrationSamples(const config::DeployConfig &cfg, size_t most,
                               std::vector<std::string> &samples);

/// Interprets the Top IR `module` (after addTopPipeline) on every sample and
/// writes the calibration table to `table`, with a progress bar on stderr and
/// a summary line on stdout (calibrate.cpp). The first `keep` samples' inputs
/// go to `kept`. Returns 0, else the exit code after a diagnostic.
int calibrate(const config::DeployConfig &cfg, mlir::ModuleOp module,
              const std::vector<std::string> &samples, const std::string &table,
              size_t keep = 0, std::vector<interp::TensorMap> *kept = nullptr);

/// The verify reference's inputs: input_with_noise.npz (models whose random
/// ops became inputs) or input.npz beside it; "" if neither exists.
std::string verifyInputPath(const config::DeployConfig &cfg);

/// Inputs to observe ranges with: the first calibration samples, else the
/// verify reference's inputs (input.npz beside it). Empty if neither exists.
std::vector<std::string> observationInputs(const config::DeployConfig &cfg, size_t most);

/// Min/max of every Top value (and net input) over observationInputs, by
/// ONNX name, so the F16 overflow policy sees real magnitudes without a
/// calibration table. Warns and returns an empty map without inputs; fails
/// (after a diagnostic) if the interpreter does.
std::optional<std::map<std::string, Range>> observeRanges(const config::DeployConfig &cfg,
                                                          mlir::ModuleOp module);
/// The pipeline options of a config: precision, qtable, layer groups.
PipelineOptions pipelineOptionsOf(const config::DeployConfig &cfg);

/// Calibrated ranges onto the Top IR (after addTopPipeline): from the
/// calibration table, or, for float modes without one, from one interpreter
/// run. INT8 needs a table unless the model brings its own quantization
/// (QDQ); without one, it calibrates first on the config's samples. Returns
/// 0, else the exit code after a diagnostic.
int annotateModule(const config::DeployConfig &cfg, mlir::ModuleOp module,
                   const PipelineOptions &pipeline);

/// Annotated Top IR to the Tpu IR the Tpu interpreter runs, in place: the
/// precision pipeline and Tpu lowering (no layer groups), with IR checks.
mlir::LogicalResult lowerToTpuIR(mlir::ModuleOp module, const PipelineOptions &pipeline);
} // namespace kiln::cli

#endif
