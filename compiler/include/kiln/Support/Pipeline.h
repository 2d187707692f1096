//===- Pipeline.h - The compile pipeline from Top IR to addresses -*- C++ -*-===//
#ifndef KILN_SUPPORT_PIPELINE_H
#define KILN_SUPPORT_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

// The pass managers these fill get kiln::addIRChecks (kiln/Support/IRChecks.h)
// so that a pass leaving invalid IR is reported as an internal error.
namespace kiln {
struct PipelineOptions {
  bool layerGroups = true;   ///< false: every op is its own group
  unsigned maxGroupOps = 16;
  std::string precision = "f32";  ///< f32 | f16 | bf16 | int8 (config `quantize`)
  std::vector<std::string> qtable; ///< "onnx name=dtype" overrides
  bool asymmetric = false;         ///< INT8 activations with zero points
  bool biasCorrection = true;      ///< INT8 conv biases corrected for filter rounding
  bool keepTensors = false; ///< every activation its own DDR (config debug.keep_tensors)
  /// auto | rewrite | keep (config optimize.modulated_conv)
  std::string modulatedConv = "auto";
  /// Weights that do not depend on the input shape: no row folds (they
  /// rewrite a conv's filter when the cost model says the shape gains), so
  /// that the stages of a net compiled for several shapes share one copy.
  bool shapeIndependentWeights = false;

  bool isF32() const { return precision == "f32" && qtable.empty(); }
};

/// Top canonicalization: shape inference, constant folding, fusions,
/// decompositions. Calibration and verification run the Top IR it leaves, so
/// their tensor names are the ones lowering sees.
void addTopPipeline(mlir::PassManager &pm, const PipelineOptions &options);

/// QDQ folding (INT8: absorbing activation QDQ pairs) and the dtype of every
/// op (top-assign-precision); run after calibrated ranges are annotated.
void addPrecisionPipeline(mlir::PassManager &pm, const PipelineOptions &options);

/// Lowering to Tpu with the precision applied, without layer groups: the IR
/// the Tpu interpreter runs.
void addTpuLoweringPipeline(mlir::PassManager &pm, const PipelineOptions &options);

/// Layer groups and DDR addresses on lowered Tpu IR.
void addTpuBackendPipeline(mlir::PassManager &pm, const PipelineOptions &options);

/// Lowering to Tpu, layer groups and DDR addresses.
void addTpuPipeline(mlir::PassManager &pm, const PipelineOptions &options);

/// Top canonicalization, lowering to Tpu, layer groups and DDR addresses:
/// everything codegen needs.
void addCompilePipeline(mlir::PassManager &pm, const PipelineOptions &options);
} // namespace kiln

#endif
