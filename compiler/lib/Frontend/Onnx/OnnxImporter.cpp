//===- OnnxImporter.cpp - ONNX model to Top dialect -----------------------===//
//
// Walks the nodes that KilnOnnxProto loaded (already checked, upgraded and
// shape-inferred by libonnx) in topological order and emits one or a few Top
// ops per node. Every Top op runs its own shape inference as soon as it is
// created, so result types never depend on ONNX having inferred them.
//
// Constants fold as they are imported: integer tensors (shapes, indices) are
// evaluated here, and a float Top op whose operands are all weights is
// evaluated with the Top interpreter, so Shape -> Gather -> Concat -> Reshape
// chains and weight preprocessing never reach the chip.
//
//===----------------------------------------------------------------------===//
#include "kiln/Frontend/Onnx/OnnxImporter.h"

#include "Importer.h"

#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Support/Names.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_frontend {

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (d < 0)
      os << '?';
    else
      os << d;
  });
  os << ']';
  return s;
}

std::string attrValueStr(const OnnxAttr &a) {
  std::string s;
  llvm::raw_string_ostream os(s);
  switch (a.kind) {
  case OnnxAttr::Int:
    os << a.i;
    break;
  case OnnxAttr::Float:
    os << llvm::format("%g", a.f);
    break;
  case OnnxAttr::String:
    os << '"' << a.s << '"';
    break;
  case OnnxAttr::Ints:
    os << '[';
    llvm::interleaveComma(a.ints, os);
    os << ']';
    break;
  case OnnxAttr::Floats:
    os << '[';
    llvm::interleaveComma(a.floats, os,
                          [&](float f) { os << llvm::format("%g", f); });
    os << ']';
    break;
  case OnnxAttr::Tensor:
    os << "<tensor " << shapeStr(a.t.shape) << '>';
    break;
  case OnnxAttr::Other:
    os << "<unsupported kind>";
    break;
  }
  return s;
}

int64_t mulCount(int64_t a, int64_t b) {
  constexpr int64_t kOver = kMaxElements + 1;
  if (a == 0 || b == 0)
    return 0;
  return a > kOver / b ? kOver : std::min(a * b, kOver);
}

int64_t elementCount(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n = mulCount(n, d);
  return n;
}

FailureOr<SmallVector<int64_t>>
broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> out(rank, 1);
  for (ArrayRef<int64_t> s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[rank - s.size() + i];
      if (s[i] != o && s[i] != 1 && o != 1)
        return failure();
      if (s[i] != 1)
        o = s[i];
    }
  return out;
}

//===----------------------------------------------------------------------===//
// Diagnostics and attributes
//===----------------------------------------------------------------------===//

Importer::Importer(MLIRContext &ctx, StringRef path, const Model &model,
                   const ImportOptions &options)
    : ctx(ctx), path(path.str()), model(model), options(options), builder(&ctx),
      constBuilder(&ctx) {}

std::string Importer::describe(const Node &node) {
  // Unnamed nodes are common in hand-built models; their output names them.
  StringRef name = node.name;
  if (name.empty() && !node.outputs.empty())
    name = node.outputs.front();
  std::string opType =
      node.domain.empty() ? node.opType : node.domain + ":" + node.opType;
  return ("node '" + name + "' (" + opType + ")").str();
}

InFlightDiagnostic Importer::nodeError(const Node &node) {
  return emitError(nodeLoc(node)) << describe(node) << ": ";
}

LogicalResult Importer::unsupportedAttr(const Node &node, const OnnxAttr &a,
                                        StringRef why) {
  return unsupportedAttr(node, a.name, attrValueStr(a), why);
}

LogicalResult Importer::unsupportedAttr(const Node &node, StringRef name,
                                        StringRef value, StringRef why) {
  InFlightDiagnostic diag = nodeError(node);
  diag << "attribute '" << name << "' = " << value << " is not supported";
  if (!why.empty())
    diag << " " << why;
  return diag;
}

int64_t Importer::getInt(const Node &node, StringRef name, int64_t dflt) {
  const OnnxAttr *a = node.attr(name.str());
  return a && a->kind == OnnxAttr::Int ? a->i : dflt;
}

float Importer::getFloat(const Node &node, StringRef name, float dflt) {
  const OnnxAttr *a = node.attr(name.str());
  return a && a->kind == OnnxAttr::Float ? a->f : dflt;
}

std::string Importer::getString(const Node &node, StringRef name,
                                StringRef dflt) {
  const OnnxAttr *a = node.attr(name.str());
  return a && a->kind == OnnxAttr::String ? a->s : dflt.str();
}

SmallVector<int64_t> Importer::getInts(const Node &node, StringRef name,
                                       ArrayRef<int64_t> dflt) {
  const OnnxAttr *a = node.attr(name.str());
  if (a && a->kind == OnnxAttr::Ints)
    return SmallVector<int64_t>(a->ints.begin(), a->ints.end());
  return SmallVector<int64_t>(dflt.begin(), dflt.end());
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

bool Importer::allInputsConstant(const Node &node) const {
  bool any = false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!hasInput(node, i))
      continue;
    if (!constant(node, i))
      return false;
    any = true;
  }
  return any;
}

FailureOr<SmallVector<int64_t>> Importer::inputShape(const Node &node,
                                                     size_t i) {
  if (!hasInput(node, i))
    return nodeError(node) << "input " << i << " is missing";
  if (const TensorData *data = constant(node, i))
    return SmallVector<int64_t>(data->shape.begin(), data->shape.end());
  if (Value v = values.lookup(node.inputs[i]))
    return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
  return nodeError(node) << "input '" << node.inputs[i]
                         << "' is not produced by any node kiln imported";
}

Value Importer::operand(const Node &node, size_t i, bool castInts) {
  if (!hasInput(node, i)) {
    nodeError(node) << "input " << i << " is missing";
    return {};
  }
  StringRef name = node.inputs[i];
  if (Value v = values.lookup(name))
    return v;
  if (const TensorData *data = constants.lookup(name)) {
    if (data->isFloat() && (int64_t)data->f32.size() == data->numElements())
      return weight(*data, name);
    if (castInts && (int64_t)data->i64.size() == data->numElements()) {
      SmallVector<float> converted(data->i64.begin(), data->i64.end());
      return derivedWeight(data->shape, converted, name);
    }
    nodeError(node) << "constant '" << name << "' has element type "
                    << elemTypeName(data->elemType)
                    << "; kiln computes on float tensors only";
    return {};
  }
  nodeError(node) << "input '" << name << "' is not produced by any node kiln "
                  << "imported";
  return {};
}

FailureOr<SmallVector<int64_t>> Importer::intsInput(const Node &node, size_t i,
                                                    StringRef what) {
  if (!hasInput(node, i))
    return nodeError(node) << "input '" << what << "' is missing";
  const TensorData *data = constant(node, i);
  if (!data)
    return nodeError(node) << "input '" << what << "' ('" << node.inputs[i]
                           << "') must be a constant; it is computed";
  if (data->isFloat() || (int64_t)data->i64.size() != data->numElements())
    return nodeError(node) << "input '" << what << "' must be an integer "
                           << "tensor, got " << elemTypeName(data->elemType);
  return SmallVector<int64_t>(data->i64.begin(), data->i64.end());
}

FailureOr<SmallVector<float>> Importer::floatsInput(const Node &node, size_t i,
                                                    StringRef what) {
  if (!hasInput(node, i))
    return nodeError(node) << "input '" << what << "' is missing";
  const TensorData *data = constant(node, i);
  if (!data)
    return nodeError(node) << "input '" << what << "' ('" << node.inputs[i]
                           << "') must be a constant; it is computed";
  if (!data->isFloat())
    return SmallVector<float>(data->i64.begin(), data->i64.end());
  return SmallVector<float>(data->f32.begin(), data->f32.end());
}

//===----------------------------------------------------------------------===//
// Outputs
//===----------------------------------------------------------------------===//

const TensorData *Importer::own(TensorData data) {
  ownedConstants.push_back(std::move(data));
  return &ownedConstants.back();
}

LogicalResult Importer::setConstant(const Node &node, size_t i,
                                    TensorData data) {
  if (!hasOutput(node, i))
    return success();
  data.name = node.outputs[i];
  constants[node.outputs[i]] = own(std::move(data));
  return success();
}

LogicalResult Importer::checkConstantShape(const Node &node,
                                           ArrayRef<int64_t> shape) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return nodeError(node) << "shape " << shapeStr(shape)
                           << " has a negative dimension";
  int64_t count = elementCount(shape);
  if (count <= kMaxFoldedElements)
    return success();
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!hasInput(node, i))
      continue;
    int64_t input = 0;
    if (const TensorData *data = constant(node, i))
      input = elementCount(data->shape);
    else if (Value v = values.lookup(node.inputs[i]))
      input = elementCount(cast<ShapedType>(v.getType()).getShape());
    if (count <= input)
      return success();
  }
  return nodeError(node) << "its constant result " << shapeStr(shape)
                         << " would hold more elements than its inputs and "
                         << "the 2^25 kiln computes at import";
}

LogicalResult Importer::setValue(const Node &node, size_t i, Value v) {
  if (!v)
    return failure();
  if (!hasOutput(node, i))
    return success();
  StringRef name = node.outputs[i];
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  // A disagreement with ONNX's own inference means one side is wrong; keep
  // kiln's (the Top op is what runs) but say so.
  auto it = model.valueInfo.find(name.str());
  if (it != model.valueInfo.end() && it->second.known &&
      ArrayRef<int64_t>(it->second.shape) != shape)
    emitWarning(v.getLoc())
        << "kiln infers shape " << shapeStr(shape) << " for '" << name
        << "', ONNX shape inference " << shapeStr(it->second.shape);
  // A folded result is a constant like any other: later nodes may need its
  // values (Clip bounds, Resize scales), and it keeps its weight.
  if (auto w = v.getDefiningOp<top::WeightOp>()) {
    TensorData data;
    data.name = name.str();
    data.elemType = kFloat;
    data.shape.assign(shape.begin(), shape.end());
    data.f32 = top::readWeight(w);
    const TensorData *owned = own(std::move(data));
    constants[name] = owned;
    weights[owned] = v;
    return success();
  }
  values[name] = v;
  return success();
}

LogicalResult Importer::alias(const Node &node, size_t i, size_t j) {
  if (!hasOutput(node, i))
    return success();
  if (const TensorData *data = constant(node, j)) {
    constants[node.outputs[i]] = data;
    return success();
  }
  Value v = operand(node, j);
  if (!v)
    return failure();
  values[node.outputs[i]] = v;
  return success();
}

//===----------------------------------------------------------------------===//
// Building Top ops
//===----------------------------------------------------------------------===//

Location Importer::nodeLoc(const Node &node, size_t i) {
  if (hasOutput(node, i))
    return nameLoc(node.outputs[i]);
  for (const std::string &out : node.outputs)
    if (!out.empty())
      return nameLoc(out);
  return nameLoc(node.name);
}

Location Importer::subLoc(const Node &node, StringRef suffix) {
  std::string base = node.outputs.empty() ? node.name : node.outputs.front();
  return nameLoc(base + "_" + suffix.str());
}

Type Importer::placeholderType() {
  return RankedTensorType::get({}, Float32Type::get(&ctx));
}

OpBuilder &Importer::constantBuilder() {
  // Recomputed each time: an "after the last op" insertion point is the
  // block's end sentinel and would not stay in front of later compute ops.
  if (lastConstant)
    constBuilder.setInsertionPointAfter(lastConstant);
  else
    constBuilder.setInsertionPointToStart(entryBlock);
  return constBuilder;
}

Value Importer::weight(const TensorData &data, StringRef name) {
  if (Value v = weights.lookup(&data))
    return v;
  Value v = derivedWeight(data.shape, data.f32, name);
  weights[&data] = v;
  return v;
}

Value Importer::derivedWeight(ArrayRef<int64_t> shape, ArrayRef<float> data,
                              StringRef name) {
  auto op =
      top::createWeight(constantBuilder(), nameLoc(name), shape, data, name);
  lastConstant = op;
  return op.getOutput();
}

Value Importer::none() {
  if (!noneValue) {
    auto op = constantBuilder().create<top::NoneOp>(UnknownLoc::get(&ctx),
                                                    NoneType::get(&ctx));
    lastConstant = op;
    noneValue = op.getOutput();
  }
  return noneValue;
}

Value Importer::complete(const Node &node, Operation *op) {
  // Op-level diagnostics name the Top op; add which ONNX node it came from.
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diag.attachNote() << "while importing " << describe(node);
    return failure(); // let the caller's handler report it
  });
  if (failed(mlir::verify(op, /*verifyRecursively=*/false)))
    return {};
  if (auto shaped = dyn_cast<top::ShapeInference>(op))
    if (failed(shaped.inferShapes()))
      return {};
  if (!interp::readsOnlyWeights(op))
    return op->getResult(0);
  for (Type type : op->getResultTypes())
    if (auto shaped = dyn_cast<ShapedType>(type))
      if (failed(checkConstantShape(node, shaped.getShape())))
        return {};

  // All operands are known: run the reference kernel now.
  FailureOr<interp::Tensor> result = interp::evaluateOnWeights(op);
  if (failed(result))
    return {};
  Value folded = derivedWeight(result->shape, result->data, kiln::opName(op, "folded"));
  op->erase();
  return folded;
}

Value Importer::reshape(const Node &node, Location loc, Value v,
                        ArrayRef<int64_t> shape) {
  if (!v || cast<RankedTensorType>(v.getType()).getShape() == shape)
    return v;
  return create<top::ReshapeOp>(node, loc, v, shape);
}

Value Importer::active(const Node &node, Location loc, Value v,
                       top::ActiveMode mode, double alpha, double beta) {
  if (!v)
    return v;
  return create<top::ActiveOp>(node, loc, v, mode, APFloat(alpha),
                               APFloat(beta));
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

Importer::NodeImporter Importer::lookupImporter(StringRef opType) {
  return llvm::StringSwitch<NodeImporter>(opType)
      // ImportMath.cpp
      .Cases("Add", "Sub", "Mul", "Div", "Pow", &Importer::importBinary)
      .Cases("Max", "Min", "Sum", "PRelu", &Importer::importBinary)
      .Cases("Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid",
             &Importer::importUnary)
      .Cases("HardSwish", "Elu", "Selu", "Softplus", "Erf",
             &Importer::importUnary)
      .Cases("Exp", "Log", "Sqrt", "Reciprocal", "Abs", &Importer::importUnary)
      .Cases("Neg", "Mish", &Importer::importUnary)
      .Case("Clip", &Importer::importClip)
      .Cases("Softmax", "LogSoftmax", &Importer::importSoftmax)
      .Cases("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
             &Importer::importReduce)
      .Cases("ReduceL2", "ReduceSumSquare", &Importer::importReduce)
      // ImportNN.cpp
      .Case("Conv", &Importer::importConv)
      .Case("ConvTranspose", &Importer::importConvTranspose)
      .Cases("MaxPool", "AveragePool", &Importer::importPool)
      .Cases("GlobalAveragePool", "GlobalMaxPool", &Importer::importGlobalPool)
      .Case("Gemm", &Importer::importGemm)
      .Case("MatMul", &Importer::importMatMul)
      .Case("BatchNormalization", &Importer::importBatchNorm)
      .Case("InstanceNormalization", &Importer::importInstanceNorm)
      // ImportTensor.cpp
      .Case("Reshape", &Importer::importReshape)
      .Case("Flatten", &Importer::importFlatten)
      .Case("Squeeze", &Importer::importSqueeze)
      .Case("Unsqueeze", &Importer::importUnsqueeze)
      .Case("Transpose", &Importer::importTranspose)
      .Case("Concat", &Importer::importConcat)
      .Case("Split", &Importer::importSplit)
      .Case("Slice", &Importer::importSlice)
      .Case("Gather", &Importer::importGather)
      .Case("Expand", &Importer::importExpand)
      .Case("Tile", &Importer::importTile)
      .Case("Pad", &Importer::importPad)
      .Case("Resize", &Importer::importResize)
      .Case("Upsample", &Importer::importUpsample)
      // ImportConstant.cpp
      .Case("Constant", &Importer::importConstant)
      .Case("ConstantOfShape", &Importer::importConstantOfShape)
      .Case("Shape", &Importer::importShape)
      .Case("Range", &Importer::importRange)
      .Case("Where", &Importer::importWhere)
      .Case("Equal", &Importer::importEqual)
      .Case("Cast", &Importer::importCast)
      .Case("Identity", &Importer::importIdentity)
      .Case("Dropout", &Importer::importDropout)
      // ImportQuant.cpp
      .Case("QuantizeLinear", &Importer::importQuantizeLinear)
      .Case("DequantizeLinear", &Importer::importDequantizeLinear)
      // ImportRandom.cpp
      .Cases("RandomNormal", "RandomNormalLike", "RandomUniform",
             "RandomUniformLike", &Importer::importRandom)
      .Default(nullptr);
}

LogicalResult Importer::importNode(const Node &node) {
  NodeImporter importer =
      node.domain.empty() ? lookupImporter(node.opType) : nullptr;
  if (!importer)
    return nodeError(node) << "unsupported operator";
  if (!hasOutput(node, 0))
    return nodeError(node) << "has no output";
  builder.setInsertionPointToEnd(entryBlock);
  return (this->*importer)(node);
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Importer::run() {
  // Report every unsupported operator type up front (once per type), so a
  // model's whole coverage gap shows in one run.
  bool unsupported = false;
  llvm::StringSet<> reported;
  for (const Node &node : model.nodes) {
    if (!node.domain.empty() || !lookupImporter(node.opType)) {
      if (reported.insert(node.domain + ":" + node.opType).second)
        nodeError(node) << "unsupported operator";
      unsupported = true;
    } else if (isRandomOp(node.opType) &&
               options.randomOps == RandomOps::Reject) {
      rejectRandom(node);
      unsupported = true;
    }
  }
  if (unsupported)
    return {};

  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  (*module)->setAttr("kiln.source", StringAttr::get(&ctx, path));

  Type f32 = Float32Type::get(&ctx);
  SmallVector<Type> argTypes;
  for (const ValueInfo &input : model.inputs) {
    if (input.elemType != kFloat) {
      emitError(fileLoc) << "graph input '" << input.name
                         << "' has element type "
                         << elemTypeName(input.elemType)
                         << "; kiln takes float inputs only";
      return {};
    }
    if (!input.known) {
      emitError(fileLoc) << "graph input '" << input.name << "' has shape "
                         << shapeStr(input.shape)
                         << " with unknown dimensions; give its static "
                         << "shape in the deployment config's `inputs`";
      return {};
    }
    if (elementCount(input.shape) > kMaxElements) {
      emitError(fileLoc) << "graph input '" << input.name << "' has shape "
                         << shapeStr(input.shape)
                         << ", more than kiln supports (2^40 elements)";
      return {};
    }
    argTypes.push_back(RankedTensorType::get(input.shape, f32));
  }

  auto func = func::FuncOp::create(fileLoc, "main",
                                   FunctionType::get(&ctx, argTypes, {}));
  module->push_back(func);
  entryBlock = func.addEntryBlock();
  for (auto [i, input] : llvm::enumerate(model.inputs)) {
    BlockArgument arg = entryBlock->getArgument(i);
    arg.setLoc(nameLoc(input.name));
    func.setArgAttr(i, "kiln.name", StringAttr::get(&ctx, input.name));
    values[input.name] = arg;
  }

  for (const auto &[name, data] : model.initializers)
    constants[name] = &data;
  for (const Node &node : model.nodes)
    if (failed(importNode(node)))
      return {};

  builder.setInsertionPointToEnd(entryBlock);
  SmallVector<Value> results;
  for (const ValueInfo &output : model.outputs) {
    Value v = values.lookup(output.name);
    if (!v)
      if (const TensorData *data = constants.lookup(output.name))
        v = data->isFloat() ? weight(*data, output.name) : Value();
    if (!v) {
      emitError(fileLoc) << "graph output '" << output.name
                         << "' is not a float tensor kiln computes";
      return {};
    }
    results.push_back(v);
  }
  builder.create<func::ReturnOp>(fileLoc, results);
  // Random ops may have added inputs after the graph's own.
  func.setType(FunctionType::get(&ctx, entryBlock->getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  for (const auto &[index, name] : randomInputs)
    func.setArgAttr(index, "kiln.name", StringAttr::get(&ctx, name));
  for (auto [i, output] : llvm::enumerate(model.outputs))
    func.setResultAttr(i, "kiln.name", StringAttr::get(&ctx, output.name));

  // Weights that only fed folded or fused ops (and an unused top.none) are
  // dead.
  for (Operation &op : llvm::make_early_inc_range(*entryBlock))
    if (isa<top::WeightOp, top::NoneOp>(op) && op.use_empty())
      op.erase();

  if (failed(mlir::verify(*module)))
    return {};
  return module;
}

} // namespace kiln::onnx_frontend

OwningOpRef<ModuleOp> kiln::importOnnx(MLIRContext &ctx, StringRef path,
                                       const ImportOptions &opts) {
  ctx.loadDialect<top::TopDialect, func::FuncDialect>();
  onnx_frontend::Model model;
  // Operators it cannot import are reported by Importer::run, before libonnx
  // converts or infers anything about them.
  std::string error = onnx_frontend::loadModel(
      path.str(), opts.inputShapes, model, [](const std::string &opType) {
        return onnx_frontend::Importer::lookupImporter(opType) != nullptr;
      });
  if (!error.empty()) {
    // loadModel prefixes "<path>: error: "; the location already says both.
    StringRef message(error);
    message.consume_front((path + ": error: ").str());
    emitError(FileLineColLoc::get(&ctx, path, 0, 0)) << message;
    return {};
  }
  return onnx_frontend::Importer(ctx, path, model, opts).run();
}
