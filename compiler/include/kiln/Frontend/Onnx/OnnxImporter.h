//===- OnnxImporter.h - ONNX model to Top dialect ---------------*- C++ -*-===//
//
// Imports an ONNX model as a module with one `func.func @main` of Top ops.
// Graph input/output names are kept as `kiln.name` argument/result attributes;
// the op producing an ONNX value is located at NameLoc(<its name>), helper ops
// of a decomposition at NameLoc(<node's first output>_<role>), and every
// weight at NameLoc(<initializer name>), so diagnostics and per-layer
// comparisons speak the model's names. Every all-constant subgraph is
// evaluated at import (integer shape arithmetic natively, float ops with the
// Top interpreter), so only computations on the inputs remain.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_ONNX_ONNXIMPORTER_H
#define KILN_FRONTEND_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace kiln {

/// What to do with operators that draw random numbers at run time
/// (RandomNormal, RandomNormalLike, RandomUniform, RandomUniformLike).
enum class RandomOps {
  Reject, ///< a compile error that says how to choose one of the others
  Const,  ///< freeze one seeded sample into a weight at compile time
  Input,  ///< make each random tensor a model input, named by its output
};

struct ImportOptions {
  /// Graph input name -> full static shape, replacing the model's own
  /// (possibly symbolic) input shape before ONNX shape inference runs.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  RandomOps randomOps = RandomOps::Reject;
  /// Seed of `RandomOps::Const` samples (a node's own `seed` wins).
  uint64_t randomSeed = 0;
};

/// Loads the ONNX model at `path` and converts it to the Top dialect. Loads
/// the Top and func dialects into `ctx`. On failure returns null after
/// emitting diagnostics on `ctx`: file-level problems at
/// FileLineColLoc(path, 0, 0), node-level problems at the node's location.
mlir::OwningOpRef<mlir::ModuleOp> importOnnx(mlir::MLIRContext &ctx,
                                             llvm::StringRef path,
                                             const ImportOptions &opts);

} // namespace kiln

#endif // KILN_FRONTEND_ONNX_ONNXIMPORTER_H
