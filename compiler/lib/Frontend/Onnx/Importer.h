//===- Importer.h - ONNX nodes to Top ops (internal) ------------*- C++ -*-===//
//
// The importer's state and the helpers its per-family files share
// (OnnxImporter.cpp: values, constants, folding, the module; ImportMath.cpp,
// ImportNN.cpp, ImportTensor.cpp, ImportConstant.cpp, ImportQuant.cpp: one
// function per ONNX operator).
//
// Every ONNX value is either computed (an SSA value of f32 Top ops) or a
// compile-time constant (TensorData: an initializer, a Constant, or the result
// of a node whose inputs are all constants). Integer tensors are always
// constants: they only describe shapes, indices and axes, and never become
// Top ops. Float constants become top.weight ops where a Top op reads them.
// The exception is QDQ models: top.quantize_linear results are i8/ui8 SSA
// values, and DequantizeLinear of an int8/uint8 initializer reads an i8/ui8
// top.weight (ImportQuant.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_FRONTEND_ONNX_IMPORTER_H
#define KILN_LIB_FRONTEND_ONNX_IMPORTER_H

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Frontend/Onnx/OnnxImporter.h"
#include "kiln/Frontend/Onnx/OnnxModel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <deque>
#include <string>

namespace kiln::onnx_frontend {

using OnnxAttr = Attribute;

/// "[1, 3, ?, 4]".
std::string shapeStr(llvm::ArrayRef<int64_t> shape);
/// An attribute value as it appears in "attribute 'X' = VALUE" messages.
std::string attrValueStr(const OnnxAttr &a);

/// a * b for element counts (a, b >= 0), saturating at kMaxElements + 1:
/// sizes come from the model and must not overflow.
int64_t mulCount(int64_t a, int64_t b);
/// The element count of `shape` (dimensions >= 0), saturating as mulCount.
int64_t elementCount(llvm::ArrayRef<int64_t> shape);

/// The numpy broadcast of `shapes`, or failure when they do not broadcast.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// Native evaluation of data movement on constants of any element type
/// (index arithmetic only, so integers stay exact).
namespace constfold {
/// For each element of a tensor of shape `out`, the flat index of the
/// element of `in` that broadcasting (numpy rules) reads there.
std::vector<int64_t> broadcastIndices(llvm::ArrayRef<int64_t> in,
                                      llvm::ArrayRef<int64_t> out);
/// `in` with `shape` (same element count).
TensorData reshape(const TensorData &in, llvm::ArrayRef<int64_t> shape);
TensorData transpose(const TensorData &in, llvm::ArrayRef<int64_t> perm);
/// A normalized slice (as top.slice takes it).
TensorData slice(const TensorData &in, llvm::ArrayRef<int64_t> starts,
                 llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> steps);
TensorData gather(const TensorData &in, int64_t axis,
                  llvm::ArrayRef<int64_t> indices,
                  llvm::ArrayRef<int64_t> indicesShape);
/// Broadcast to `shape` (numpy rules; `shape` is the full result shape).
TensorData expand(const TensorData &in, llvm::ArrayRef<int64_t> shape);
TensorData tile(const TensorData &in, llvm::ArrayRef<int64_t> repeats);
TensorData concat(llvm::ArrayRef<const TensorData *> inputs, int64_t axis);
} // namespace constfold

class Importer {
public:
  Importer(mlir::MLIRContext &ctx, llvm::StringRef path, const Model &model,
           const ImportOptions &options);

  mlir::OwningOpRef<mlir::ModuleOp> run();

  using NodeImporter = mlir::LogicalResult (Importer::*)(const Node &);
  /// The importer of a default-domain operator, or null if unsupported.
  static NodeImporter lookupImporter(llvm::StringRef opType);

private:
  //===--------------------------------------------------------------------===//
  // Diagnostics
  //===--------------------------------------------------------------------===//

  /// "node 'NAME' (OPTYPE)", as diagnostics refer to a node.
  static std::string describe(const Node &node);
  mlir::InFlightDiagnostic nodeError(const Node &node);
  /// "attribute 'ATTR' = VALUE is not supported[ <why>]".
  mlir::LogicalResult unsupportedAttr(const Node &node, const OnnxAttr &a,
                                      llvm::StringRef why = {});
  /// The same message for a value that is not a stored attribute: a default,
  /// or a derived one (a 3-D conv's kernel_shape, a Resize input's value).
  mlir::LogicalResult unsupportedAttr(const Node &node, llvm::StringRef name,
                                      llvm::StringRef value,
                                      llvm::StringRef why = {});

  //===--------------------------------------------------------------------===//
  // Attributes with ONNX defaults
  //===--------------------------------------------------------------------===//

  int64_t getInt(const Node &node, llvm::StringRef name, int64_t dflt);
  float getFloat(const Node &node, llvm::StringRef name, float dflt);
  std::string getString(const Node &node, llvm::StringRef name,
                        llvm::StringRef dflt);
  llvm::SmallVector<int64_t> getInts(const Node &node, llvm::StringRef name,
                                     llvm::ArrayRef<int64_t> dflt);
  int64_t opset() const { return model.opset; }

  //===--------------------------------------------------------------------===//
  // Inputs
  //===--------------------------------------------------------------------===//

  bool hasInput(const Node &node, size_t i) const {
    return i < node.inputs.size() && !node.inputs[i].empty();
  }
  bool hasOutput(const Node &node, size_t i) const {
    return i < node.outputs.size() && !node.outputs[i].empty();
  }
  /// Input `i` if it is a compile-time constant, else null.
  const TensorData *constant(const Node &node, size_t i) const {
    return hasInput(node, i) ? constants.lookup(node.inputs[i]) : nullptr;
  }
  /// Whether every present input is a constant (and there is one).
  bool allInputsConstant(const Node &node) const;
  /// The static shape of input `i`, constant or computed; emits an error and
  /// returns failure if the input is missing or unknown.
  mlir::FailureOr<llvm::SmallVector<int64_t>> inputShape(const Node &node,
                                                         size_t i);
  /// Input `i` as an f32 SSA value: computed values as they are, float
  /// constants as top.weight ops (one per tensor). With `castInts`, integer
  /// constants are converted (Pow's exponent); otherwise they are an error.
  mlir::Value operand(const Node &node, size_t i, bool castInts = false);
  /// Input `i` as a constant list of integers (shapes, axes, pads); `what`
  /// names it in the error when it is missing, computed or not integer.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  intsInput(const Node &node, size_t i, llvm::StringRef what);
  /// Input `i` as a constant list of floats (scales, clip bounds).
  mlir::FailureOr<llvm::SmallVector<float>>
  floatsInput(const Node &node, size_t i, llvm::StringRef what);

  //===--------------------------------------------------------------------===//
  // Outputs
  //===--------------------------------------------------------------------===//

  /// Binds output `i` to a constant (folded at import).
  mlir::LogicalResult setConstant(const Node &node, size_t i, TensorData data);
  /// Fails with a diagnostic unless a constant of `shape` may be computed at
  /// import: no negative dimension, at most kMaxFoldedElements or no more
  /// elements than the node's largest input.
  mlir::LogicalResult checkConstantShape(const Node &node,
                                         llvm::ArrayRef<int64_t> shape);
  /// Binds output `i` to a computed value (or, when the value folded to a
  /// top.weight, to that constant). Warns when ONNX inferred another shape.
  mlir::LogicalResult setValue(const Node &node, size_t i, mlir::Value v);
  /// Output `i` is input `j` under another name (Identity, Dropout, no-ops).
  mlir::LogicalResult alias(const Node &node, size_t i, size_t j);

  //===--------------------------------------------------------------------===//
  // Building Top ops
  //===--------------------------------------------------------------------===//

  mlir::Location nameLoc(llvm::StringRef name) {
    return mlir::NameLoc::get(mlir::StringAttr::get(&ctx, name));
  }
  /// NameLoc of output `i` (the op producing it carries the ONNX name).
  mlir::Location nodeLoc(const Node &node, size_t i = 0);
  /// NameLoc "<output 0>_<suffix>" for the helper ops of a decomposition, so
  /// per-layer comparisons never see two ops with the ONNX output's name.
  mlir::Location subLoc(const Node &node, llvm::StringRef suffix);

  /// Creates a Top op with a placeholder result type, then completes it.
  template <typename OpTy, typename... Args>
  mlir::Value create(const Node &node, mlir::Location loc, Args &&...args) {
    auto op = builder.create<OpTy>(loc, placeholderType(),
                                   std::forward<Args>(args)...);
    return complete(node, op);
  }
  /// Verifies `op`, runs its shape inference and, when every operand is a
  /// weight, folds it into a weight with the Top interpreter. Returns the
  /// resulting value, or null after an error naming the node.
  mlir::Value complete(const Node &node, mlir::Operation *op);
  mlir::Type placeholderType();

  mlir::Value none();
  /// A top.weight for float constant `data`, cached per tensor.
  mlir::Value weight(const TensorData &data, llvm::StringRef name);
  /// A fresh top.weight holding data the importer derived.
  mlir::Value derivedWeight(llvm::ArrayRef<int64_t> shape,
                            llvm::ArrayRef<float> data, llvm::StringRef name);
  /// top.reshape of `v` to `shape`, skipped when it already has that shape.
  mlir::Value reshape(const Node &node, mlir::Location loc, mlir::Value v,
                      llvm::ArrayRef<int64_t> shape);
  /// top.active `mode` of `v`.
  mlir::Value active(const Node &node, mlir::Location loc, mlir::Value v,
                     top::ActiveMode mode, double alpha = 0, double beta = 0);
  /// A builder inserting after the weights at the top of the body.
  mlir::OpBuilder &constantBuilder();
  /// Keeps the constant for as long as the importer runs; returns it.
  const TensorData *own(TensorData data);

  //===--------------------------------------------------------------------===//
  // Operators (one per ONNX op type, grouped by file)
  //===--------------------------------------------------------------------===//

  mlir::LogicalResult importNode(const Node &node);
  /// Conv/ConvTranspose inputs X, W and bias (top.none when absent).
  mlir::LogicalResult convOperands(const Node &node, mlir::Value &input,
                                   mlir::Value &filter, mlir::Value &bias);
  /// Input 0 if it is a 4-D NCHW tensor; else an error and null.
  mlir::Value nchwInput(const Node &node);

  // ImportRandom.cpp
  static bool isRandomOp(llvm::StringRef opType);
  /// The compile error for a random op under `random_ops: reject`.
  void rejectRandom(const Node &node);
  mlir::LogicalResult importRandom(const Node &node);

  // ImportMath.cpp
  mlir::LogicalResult importBinary(const Node &node);
  mlir::LogicalResult importUnary(const Node &node);
  mlir::LogicalResult importClip(const Node &node);
  mlir::LogicalResult importSoftmax(const Node &node);
  mlir::LogicalResult importReduce(const Node &node);

  // ImportNN.cpp
  mlir::LogicalResult importConv(const Node &node);
  mlir::LogicalResult importConvTranspose(const Node &node);
  mlir::LogicalResult importPool(const Node &node);
  mlir::LogicalResult importGlobalPool(const Node &node);
  mlir::LogicalResult importGemm(const Node &node);
  mlir::LogicalResult importMatMul(const Node &node);
  mlir::LogicalResult importBatchNorm(const Node &node);
  mlir::LogicalResult importInstanceNorm(const Node &node);

  // ImportTensor.cpp
  mlir::LogicalResult importReshape(const Node &node);
  mlir::LogicalResult importFlatten(const Node &node);
  mlir::LogicalResult importSqueeze(const Node &node);
  mlir::LogicalResult importUnsqueeze(const Node &node);
  mlir::LogicalResult importTranspose(const Node &node);
  mlir::LogicalResult importConcat(const Node &node);
  mlir::LogicalResult importSplit(const Node &node);
  mlir::LogicalResult importSlice(const Node &node);
  mlir::LogicalResult importGather(const Node &node);
  mlir::LogicalResult importExpand(const Node &node);
  mlir::LogicalResult importTile(const Node &node);
  mlir::LogicalResult importPad(const Node &node);
  mlir::LogicalResult importResize(const Node &node);
  mlir::LogicalResult importUpsample(const Node &node);

  // ImportConstant.cpp
  mlir::LogicalResult importConstant(const Node &node);
  mlir::LogicalResult importConstantOfShape(const Node &node);
  mlir::LogicalResult importShape(const Node &node);
  mlir::LogicalResult importRange(const Node &node);
  mlir::LogicalResult importWhere(const Node &node);
  mlir::LogicalResult importEqual(const Node &node);
  mlir::LogicalResult importCast(const Node &node);
  mlir::LogicalResult importIdentity(const Node &node);
  mlir::LogicalResult importDropout(const Node &node);

  // ImportQuant.cpp
  mlir::LogicalResult importQuantizeLinear(const Node &node);
  mlir::LogicalResult importDequantizeLinear(const Node &node);

  //===--------------------------------------------------------------------===//
  // Shared pieces of several operators
  //===--------------------------------------------------------------------===//

  /// A 1-D or 2-D sliding window's attributes, as 2-D (a 1-D window is
  /// H = 1), with auto_pad resolved to pads [top, left, bottom, right].
  struct Window {
    llvm::SmallVector<int64_t> kernel, strides, dilations, pads;
  };
  /// Reads kernel_shape (default `kernelDflt`), strides, dilations, pads and
  /// auto_pad for spatial input shape `spatial` (1 or 2 entries).
  mlir::FailureOr<Window> readWindow(const Node &node,
                                     llvm::ArrayRef<int64_t> spatial,
                                     llvm::ArrayRef<int64_t> kernelDflt);
  /// Slices of `input` along `axis` into pieces of `sizes` (Split).
  mlir::LogicalResult splitInto(const Node &node, size_t inputIndex,
                                int64_t axis, llvm::ArrayRef<int64_t> sizes);
  /// The normalized top.slice of ONNX Slice's starts/ends/axes/steps.
  mlir::LogicalResult normalizeSlice(const Node &node,
                                     llvm::ArrayRef<int64_t> shape,
                                     llvm::SmallVector<int64_t> &starts,
                                     llvm::SmallVector<int64_t> &ends,
                                     llvm::SmallVector<int64_t> &steps);
  /// Resize with every attribute resolved.
  mlir::LogicalResult emitResize(const Node &node, mlir::Value input,
                                 top::ResizeMode mode,
                                 llvm::ArrayRef<int64_t> outHW,
                                 llvm::ArrayRef<double> scales,
                                 top::ResizeCoordMode coordMode,
                                 top::ResizeNearestMode nearestMode);

  mlir::MLIRContext &ctx;
  std::string path;
  const Model &model;
  const ImportOptions &options;
  mlir::OpBuilder builder;
  /// Weights and the shared top.none go at the top of the body, in order of
  /// first use.
  mlir::OpBuilder constBuilder;
  mlir::Block *entryBlock = nullptr;
  mlir::Operation *lastConstant = nullptr;
  mlir::Value noneValue;

  llvm::StringMap<mlir::Value> values;
  llvm::StringMap<const TensorData *> constants;
  /// Constants the importer made (Constant attributes, folded results).
  std::deque<TensorData> ownedConstants;
  llvm::DenseMap<const TensorData *, mlir::Value> weights;
  /// Model inputs added for random ops (`random_ops: input`): argument index
  /// and the name they take.
  llvm::SmallVector<std::pair<unsigned, std::string>> randomInputs;
};

} // namespace kiln::onnx_frontend

#endif // KILN_LIB_FRONTEND_ONNX_IMPORTER_H
