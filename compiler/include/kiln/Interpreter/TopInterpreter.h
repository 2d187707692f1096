//===- TopInterpreter.h - Reference interpreter for Top IR ------*- C++ -*-===//
//
// Runs a function of Top ops on the host in float32. This is the reference
// the Tpu interpreter, the cmodel and PyTorch are held against, so every
// kernel is the plain textbook loop, chosen to be obviously right.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_INTERPRETER_TOPINTERPRETER_H
#define KILN_INTERPRETER_TOPINTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::interp {

/// A dense row-major float32 tensor.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;

  /// The number of elements `shape` describes.
  int64_t numElements() const;
};

using TensorMap = std::map<std::string, Tensor>;

/// Runs `func` (Top ops and func.return) on `inputs`, keyed by each argument's
/// `kiln.name` attribute (fallback "arg<i>"), and fills `outputs`, keyed by
/// each result's `kiln.name` attribute (fallback "out<i>"). If `allValues` is
/// non-null, also records the result of every computing op (not weights)
/// keyed by the name of its NameLoc, for per-layer comparison. Emits a
/// diagnostic at the offending op and fails on a missing input, a shape
/// mismatch or an unknown op.
mlir::LogicalResult runTop(mlir::func::FuncOp func, const TensorMap &inputs,
                           TensorMap &outputs, TensorMap *allValues = nullptr);

/// One run of a function that keeps every value (weights included), so
/// that the outputs can be recomputed with one op's result replaced: only
/// the ops that depend on it run again. kiln calibrate --search measures
/// each layer's INT8 damage at the net outputs this way.
class TopRun {
public:
  /// Runs `func` on `inputs` as runTop does; fails after a diagnostic.
  mlir::LogicalResult run(mlir::func::FuncOp func, const TensorMap &inputs);
  /// The outputs with the result of the last op named `name` replaced by
  /// `value`. Fails (no diagnostic) if no op has that name or `value`'s
  /// shape is not that op's; after a diagnostic if an op fails.
  mlir::LogicalResult rerunWith(const std::string &name, const Tensor &value,
                                TensorMap &outputs);
  const TensorMap &outputs() const { return outputs_; }
  /// Every op's result but weights by its name, as runTop's allValues.
  TensorMap namedValues() const;

private:
  mlir::func::FuncOp func_;
  llvm::DenseMap<mlir::Value, Tensor> values_;
  TensorMap outputs_;
};

/// Evaluates one Top op (a top.weight reads its data) on `operands`, one per
/// operand in order, null for a top.none operand. Shapes come from the data,
/// not from the op's types. Emits a diagnostic at the op and fails on
/// inconsistent operands or an op the interpreter does not know. Constant
/// folding uses it, so folded values are exactly what the reference computes.
mlir::FailureOr<Tensor> evaluateOp(mlir::Operation *op,
                                   llvm::ArrayRef<const Tensor *> operands);

/// Whether `op` has operands and each is a top.weight or a top.none (an
/// absent optional operand): its result is a constant to fold.
bool readsOnlyWeights(mlir::Operation *op);

/// The value of an op that readsOnlyWeights, by evaluateOp on its weights'
/// data: what constant folding (at import and in top-fold-constants) turns
/// into a weight.
mlir::FailureOr<Tensor> evaluateOnWeights(mlir::Operation *op);

} // namespace kiln::interp

#endif // KILN_INTERPRETER_TOPINTERPRETER_H
