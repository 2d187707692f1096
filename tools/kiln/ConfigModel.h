// A config's model through the compiler, as `kiln compile`, `kiln calibrate`
// and calibrate --search (which measures the IR compile would build) all take
// it: the importer's options, the import, the pipeline options, and the
// Top -> Tpu IR steps.
#ifndef KILN_TOOLS_KILN_CONFIGMODEL_H
#define KILN_TOOLS_KILN_CONFIGMODEL_H

#include "kiln/Config/Config.h"
#include "kiln/Frontend/Onnx/OnnxImporter.h"
#include "kiln/Support/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln::cli {
/// The importer's options from a config (input shapes, random ops).
ImportOptions importOptionsOf(const config::DeployConfig &cfg);

/// The config's model imported to Top IR in `ctx` (with the Top, Tpu and
/// func dialects loaded); null after the importer's diagnostics.
mlir::OwningOpRef<mlir::ModuleOp> importConfigModel(mlir::MLIRContext &ctx,
                                                    const config::DeployConfig &cfg);

/// The pipeline options of a config: precision, qtable, layer groups.
PipelineOptions pipelineOptionsOf(const config::DeployConfig &cfg);

/// Annotated Top IR to the Tpu IR the Tpu interpreter runs, in place: the
/// precision pipeline and Tpu lowering (no layer groups), with IR checks.
mlir::LogicalResult lowerToTpuIR(mlir::ModuleOp module, const PipelineOptions &pipeline);
} // namespace kiln::cli

#endif
