//===- OnnxImporter.cpp - ONNX model to Top dialect
//------------------------===//
//
// Walks the nodes that KilnOnnxProto loaded (already checked, upgraded and
// shape-inferred by libonnx) in topological order and emits one or a few Top
// ops per node. Every Top op runs its own shape inference as soon as it is
// created, so result types never depend on ONNX having inferred them.
//
//===----------------------------------------------------------------------===//
#include "kiln/Frontend/Onnx/OnnxImporter.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Frontend/Onnx/OnnxModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>

using namespace mlir;
using OnnxAttr = kiln::onnx_frontend::Attribute;
using kiln::onnx_frontend::Model;
using kiln::onnx_frontend::Node;
using kiln::onnx_frontend::TensorData;
using kiln::onnx_frontend::ValueInfo;

namespace top = kiln::top;
namespace onnxf = kiln::onnx_frontend;

namespace {

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

/// An attribute value as it appears in "attribute 'X' = VALUE" messages.
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
    os << shapeStr(a.ints);
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

/// A dense-resource key for tensor `name`. Keys print unquoted, so they must
/// be bare identifiers: ONNX names like "onnx::Conv_12" or "/a/b:0" would
/// not parse back. The NameLoc keeps the original name.
std::string resourceKey(StringRef name) {
  std::string key;
  for (char c : name)
    key += llvm::isAlnum(c) || c == '_' || c == '.' || c == '$' ? c : '_';
  if (key.empty() || llvm::isDigit(key.front()) || key.front() == '.' ||
      key.front() == '$')
    key.insert(key.begin(), '_');
  return key;
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Explicit [begin, end] pads for ONNX auto_pad SAME_UPPER/SAME_LOWER: the
/// output covers ceil(in / stride) windows and the odd pad goes at the end
/// (UPPER) or the beginning (LOWER).
std::pair<int64_t, int64_t> samePads(int64_t in, int64_t kernel, int64_t stride,
                                     int64_t dilation, bool upper) {
  int64_t out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>(0, (out - 1) * stride +
                                           (kernel - 1) * dilation + 1 - in);
  int64_t small = total / 2, large = total - small;
  return upper ? std::make_pair(small, large) : std::make_pair(large, small);
}

class Importer {
public:
  Importer(MLIRContext &ctx, StringRef path, const Model &model)
      : ctx(ctx), path(path.str()), model(model), builder(&ctx),
        constBuilder(&ctx) {}

  OwningOpRef<ModuleOp> run();

private:
  using NodeImporter = LogicalResult (Importer::*)(const Node &);

  Location fileLoc() { return FileLineColLoc::get(&ctx, path, 0, 0); }
  Location nameLoc(StringRef name) {
    return NameLoc::get(StringAttr::get(&ctx, name));
  }
  Location nodeLoc(const Node &node) {
    for (const std::string &out : node.outputs)
      if (!out.empty())
        return nameLoc(out);
    return nameLoc(node.name);
  }
  /// "node 'NAME' (OPTYPE)", as diagnostics refer to a node.
  static std::string describe(const Node &node);
  InFlightDiagnostic nodeError(const Node &node);
  /// "attribute 'ATTR' = VALUE is not supported[ <why>]".
  LogicalResult unsupportedAttr(const Node &node, const OnnxAttr &a,
                                StringRef why = {});

  // Attribute access with ONNX defaults.
  int64_t getInt(const Node &node, StringRef name, int64_t dflt);
  float getFloat(const Node &node, StringRef name, float dflt);
  SmallVector<int64_t> getInts(const Node &node, StringRef name,
                               ArrayRef<int64_t> dflt);

  bool hasInput(const Node &node, size_t i) {
    return i < node.inputs.size() && !node.inputs[i].empty();
  }
  bool hasOutput(const Node &node, size_t i) {
    return i < node.outputs.size() && !node.outputs[i].empty();
  }

  /// The constant (initializer or Constant output) called `name`, or null.
  const TensorData *lookupConstant(StringRef name) const {
    return constants.lookup(name);
  }
  /// Input `i` of `node` as an SSA value; constants become top.weight ops
  /// (once each). Emits an error and returns null on failure.
  Value operand(const Node &node, size_t i);
  /// A top.weight for float constant `data`, cached per tensor.
  Value weight(const TensorData &data, StringRef name);
  /// A fresh top.weight holding data that the importer derived.
  Value derivedWeight(ArrayRef<int64_t> shape, ArrayRef<float> data,
                      StringRef name);
  Value none();
  /// A builder inserting after the weights at the top of the body.
  OpBuilder &constantBuilder();

  /// The result type ONNX inferred for `name`, or a placeholder that the op's
  /// inferShapes() replaces.
  Type guessType(StringRef name);
  /// Verifies a Top op created for `node` and runs its shape inference.
  LogicalResult inferShapes(const Node &node, Operation *op);
  /// inferShapes(), then binds the op's result to the node's first output.
  LogicalResult finish(const Node &node, Operation *op);

  LogicalResult importNode(const Node &node);
  LogicalResult importConv(const Node &node);
  LogicalResult importRelu(const Node &node);
  LogicalResult importAdd(const Node &node);
  LogicalResult importMul(const Node &node);
  LogicalResult importMaxPool(const Node &node);
  LogicalResult importAveragePool(const Node &node);
  LogicalResult importGlobalAveragePool(const Node &node);
  LogicalResult importGemm(const Node &node);
  LogicalResult importMatMul(const Node &node);
  LogicalResult importBatchNorm(const Node &node);
  LogicalResult importReshape(const Node &node);
  LogicalResult importFlatten(const Node &node);
  LogicalResult importConcat(const Node &node);
  LogicalResult importConstant(const Node &node);
  LogicalResult importIdentity(const Node &node);
  LogicalResult importDropout(const Node &node);

  /// Shared by MaxPool and AveragePool: window attributes with auto_pad
  /// resolved to explicit pads.
  LogicalResult poolWindow(const Node &node, Value input,
                           SmallVector<int64_t> &kernel,
                           SmallVector<int64_t> &strides,
                           SmallVector<int64_t> &pads);
  LogicalResult resolveAutoPad(const Node &node, ArrayRef<int64_t> inShape,
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> dilations,
                               SmallVector<int64_t> &pads);

  static NodeImporter lookupImporter(StringRef opType);

  MLIRContext &ctx;
  std::string path;
  const Model &model;
  OpBuilder builder;
  /// Weights and the shared top.none go at the top of the body, in order of
  /// first use.
  OpBuilder constBuilder;
  Block *entryBlock = nullptr;
  Operation *lastConstant = nullptr;
  Value noneValue;

  llvm::StringMap<Value> values;
  llvm::StringMap<const TensorData *> constants;
  /// Constants built from Constant's value_float(s)/value_int(s).
  std::deque<TensorData> ownedConstants;
  llvm::DenseMap<const TensorData *, Value> weights;
};

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
  InFlightDiagnostic diag = nodeError(node);
  diag << "attribute '" << a.name << "' = " << attrValueStr(a)
       << " is not supported";
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

SmallVector<int64_t> Importer::getInts(const Node &node, StringRef name,
                                       ArrayRef<int64_t> dflt) {
  const OnnxAttr *a = node.attr(name.str());
  if (a && a->kind == OnnxAttr::Ints)
    return SmallVector<int64_t>(a->ints.begin(), a->ints.end());
  return SmallVector<int64_t>(dflt.begin(), dflt.end());
}

Value Importer::operand(const Node &node, size_t i) {
  if (!hasInput(node, i)) {
    nodeError(node) << "input " << i << " is missing";
    return {};
  }
  StringRef name = node.inputs[i];
  if (Value v = values.lookup(name))
    return v;
  if (const TensorData *data = lookupConstant(name)) {
    if (!data->isFloat() || (int64_t)data->f32.size() != data->numElements()) {
      nodeError(node) << "constant '" << name << "' has element type "
                      << onnxf::elemTypeName(data->elemType)
                      << "; kiln computes on float tensors only";
      return {};
    }
    return weight(*data, name);
  }
  nodeError(node) << "input '" << name << "' is not produced by any node kiln "
                  << "imported";
  return {};
}

Value Importer::weight(const TensorData &data, StringRef name) {
  if (Value v = weights.lookup(&data))
    return v;
  Value v = derivedWeight(data.shape, data.f32, name);
  weights[&data] = v;
  return v;
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

Value Importer::derivedWeight(ArrayRef<int64_t> shape, ArrayRef<float> data,
                              StringRef name) {
  auto op = top::createWeight(constantBuilder(), nameLoc(name), shape, data,
                              resourceKey(name));
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

Type Importer::guessType(StringRef name) {
  Type f32 = Float32Type::get(&ctx);
  auto it = model.valueInfo.find(name.str());
  if (it != model.valueInfo.end() && it->second.known)
    return RankedTensorType::get(it->second.shape, f32);
  return RankedTensorType::get({}, f32);
}

LogicalResult Importer::inferShapes(const Node &node, Operation *op) {
  // Op-level diagnostics name the Top op; add which ONNX node it came from.
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diag.attachNote() << "while importing " << describe(node);
    return failure(); // let the caller's handler report it
  });
  if (failed(mlir::verify(op, /*verifyRecursively=*/false)))
    return failure();
  if (auto shaped = dyn_cast<top::ShapeInference>(op))
    return shaped.inferShapes();
  return success();
}

LogicalResult Importer::finish(const Node &node, Operation *op) {
  if (failed(inferShapes(node, op)))
    return failure();
  StringRef name = node.outputs.front();
  Value result = op->getResult(0);
  // A disagreement with ONNX's own inference means one side is wrong; keep
  // kiln's (the Top op is what runs) but say so.
  auto it = model.valueInfo.find(name.str());
  if (it != model.valueInfo.end() && it->second.known &&
      ArrayRef<int64_t>(it->second.shape) != shapeOf(result))
    emitWarning(op->getLoc())
        << "kiln infers shape " << shapeStr(shapeOf(result)) << " for '" << name
        << "', ONNX shape inference " << shapeStr(it->second.shape);
  values[name] = result;
  return success();
}

//===----------------------------------------------------------------------===//
// Window attributes
//===----------------------------------------------------------------------===//

LogicalResult Importer::resolveAutoPad(const Node &node,
                                       ArrayRef<int64_t> inShape,
                                       ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> dilations,
                                       SmallVector<int64_t> &pads) {
  const OnnxAttr *autoPad = node.attr("auto_pad");
  StringRef mode = autoPad ? StringRef(autoPad->s) : "NOTSET";
  if (mode == "NOTSET")
    return success();
  if (mode == "VALID") {
    pads.assign(4, 0);
    return success();
  }
  if (mode != "SAME_UPPER" && mode != "SAME_LOWER")
    return unsupportedAttr(node, *autoPad);
  bool upper = mode == "SAME_UPPER";
  auto [padTop, padBottom] =
      samePads(inShape[2], kernel[0], strides[0], dilations[0], upper);
  auto [padLeft, padRight] =
      samePads(inShape[3], kernel[1], strides[1], dilations[1], upper);
  pads = {padTop, padLeft, padBottom, padRight};
  return success();
}

LogicalResult Importer::poolWindow(const Node &node, Value input,
                                   SmallVector<int64_t> &kernel,
                                   SmallVector<int64_t> &strides,
                                   SmallVector<int64_t> &pads) {
  kernel = getInts(node, "kernel_shape", {});
  if (shapeOf(input).size() != 4 || kernel.size() != 2)
    return nodeError(node) << "only 2-D pooling of a 4-D NCHW input is "
                           << "supported, got input "
                           << shapeStr(shapeOf(input)) << " and kernel_shape "
                           << shapeStr(kernel);
  if (const OnnxAttr *d = node.attr("dilations"))
    if (llvm::any_of(d->ints, [](int64_t v) { return v != 1; }))
      return unsupportedAttr(node, *d);
  strides = getInts(node, "strides", {1, 1});
  pads = getInts(node, "pads", {0, 0, 0, 0});
  if (strides.size() != 2 || pads.size() != 4)
    return nodeError(node) << "expects 2 strides and 4 pads";
  int64_t dilations[2] = {1, 1};
  return resolveAutoPad(node, shapeOf(input), kernel, strides, dilations, pads);
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult Importer::importConv(const Node &node) {
  Value input = operand(node, 0);
  if (!input)
    return failure();
  Value filter = operand(node, 1);
  if (!filter)
    return failure();
  Value bias = hasInput(node, 2) ? operand(node, 2) : none();
  if (!bias)
    return failure();
  ArrayRef<int64_t> in = shapeOf(input), w = shapeOf(filter);
  if (in.size() != 4 || w.size() != 4)
    return nodeError(node) << "only 2-D convolution is supported (input "
                           << shapeStr(in) << ", filter " << shapeStr(w) << ")";
  SmallVector<int64_t> kernel = getInts(node, "kernel_shape", {w[2], w[3]});
  if (ArrayRef<int64_t>(kernel) != w.drop_front(2))
    return nodeError(node) << "kernel_shape " << shapeStr(kernel)
                           << " does not match the filter " << shapeStr(w);
  SmallVector<int64_t> strides = getInts(node, "strides", {1, 1});
  SmallVector<int64_t> dilations = getInts(node, "dilations", {1, 1});
  SmallVector<int64_t> pads = getInts(node, "pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
    return nodeError(node) << "expects 2 strides, 2 dilations and 4 pads";
  if (failed(resolveAutoPad(node, in, kernel, strides, dilations, pads)))
    return failure();
  int64_t group = getInt(node, "group", 1);
  auto op = builder.create<top::ConvOp>(
      nodeLoc(node), guessType(node.outputs[0]), input, filter, bias, kernel,
      strides, pads, dilations, group);
  return finish(node, op);
}

LogicalResult Importer::importRelu(const Node &node) {
  Value input = operand(node, 0);
  if (!input)
    return failure();
  auto op = builder.create<top::ReluOp>(nodeLoc(node),
                                        guessType(node.outputs[0]), input);
  return finish(node, op);
}

LogicalResult Importer::importAdd(const Node &node) {
  Value lhs = operand(node, 0), rhs = lhs ? operand(node, 1) : Value();
  if (!rhs)
    return failure();
  auto op = builder.create<top::AddOp>(nodeLoc(node),
                                       guessType(node.outputs[0]), lhs, rhs);
  return finish(node, op);
}

LogicalResult Importer::importMul(const Node &node) {
  Value lhs = operand(node, 0), rhs = lhs ? operand(node, 1) : Value();
  if (!rhs)
    return failure();
  auto op = builder.create<top::MulOp>(nodeLoc(node),
                                       guessType(node.outputs[0]), lhs, rhs);
  return finish(node, op);
}

LogicalResult Importer::importMaxPool(const Node &node) {
  if (const OnnxAttr *order = node.attr("storage_order"))
    if (order->i != 0)
      return unsupportedAttr(node, *order);
  if (hasOutput(node, 1))
    return nodeError(node) << "the Indices output is not supported";
  Value input = operand(node, 0);
  if (!input)
    return failure();
  SmallVector<int64_t> kernel, strides, pads;
  if (failed(poolWindow(node, input, kernel, strides, pads)))
    return failure();
  auto op = builder.create<top::MaxPoolOp>(
      nodeLoc(node), guessType(node.outputs[0]), input, kernel, strides, pads,
      getInt(node, "ceil_mode", 0) != 0);
  return finish(node, op);
}

LogicalResult Importer::importAveragePool(const Node &node) {
  Value input = operand(node, 0);
  if (!input)
    return failure();
  SmallVector<int64_t> kernel, strides, pads;
  if (failed(poolWindow(node, input, kernel, strides, pads)))
    return failure();
  auto op = builder.create<top::AvgPoolOp>(
      nodeLoc(node), guessType(node.outputs[0]), input, kernel, strides, pads,
      getInt(node, "ceil_mode", 0) != 0,
      getInt(node, "count_include_pad", 0) != 0);
  return finish(node, op);
}

LogicalResult Importer::importGlobalAveragePool(const Node &node) {
  Value input = operand(node, 0);
  if (!input)
    return failure();
  if (shapeOf(input).size() != 4)
    return nodeError(node) << "only a 4-D NCHW input is supported, got "
                           << shapeStr(shapeOf(input));
  auto op = builder.create<top::GlobalAvgPoolOp>(
      nodeLoc(node), guessType(node.outputs[0]), input);
  return finish(node, op);
}

LogicalResult Importer::importGemm(const Node &node) {
  if (const OnnxAttr *transA = node.attr("transA"))
    if (transA->i != 0)
      return unsupportedAttr(node, *transA);
  bool transB = getInt(node, "transB", 0) != 0;
  float alpha = getFloat(node, "alpha", 1.0f);
  float beta = getFloat(node, "beta", 1.0f);
  StringRef outName = node.outputs[0];

  Value a = operand(node, 0);
  if (!a)
    return failure();
  if (shapeOf(a).size() != 2)
    return nodeError(node) << "A must be 2-D, got " << shapeStr(shapeOf(a));

  // alpha scales B; it can only be folded when B is a constant.
  Value b;
  const TensorData *bData = lookupConstant(node.inputs[1]);
  if (alpha != 1.0f) {
    if (!bData || !bData->isFloat())
      return unsupportedAttr(node, *node.attr("alpha"),
                             "unless B is a float constant");
    SmallVector<float> scaled(bData->f32.begin(), bData->f32.end());
    for (float &v : scaled)
      v *= alpha;
    b = derivedWeight(bData->shape, scaled, node.inputs[1]);
  } else {
    b = operand(node, 1);
  }
  if (!b)
    return failure();
  ArrayRef<int64_t> bShape = shapeOf(b);
  if (bShape.size() != 2)
    return nodeError(node) << "B must be 2-D, got " << shapeStr(bShape);
  int64_t n = transB ? bShape[0] : bShape[1];

  // beta scales C. A constant C that is one row (or a scalar) becomes the
  // matmul's [N] bias; anything else is added after the product.
  Value bias, addend;
  if (hasInput(node, 2) && beta != 0.0f) {
    StringRef cName = node.inputs[2];
    const TensorData *c = lookupConstant(cName);
    if (c && c->isFloat()) {
      ArrayRef<int64_t> cShape = c->shape;
      bool isRow =
          c->numElements() == n &&
          (cShape.size() == 1 || (cShape.size() == 2 && cShape[0] == 1));
      bool isScalar = c->numElements() == 1;
      if (isRow && cShape.size() == 1 && beta == 1.0f) {
        bias = weight(*c, cName);
      } else if (isRow || isScalar) {
        SmallVector<float> data =
            isRow ? SmallVector<float>(c->f32.begin(), c->f32.end())
                  : SmallVector<float>(n, c->f32.front());
        for (float &v : data)
          v *= beta;
        bias = derivedWeight({n}, data, cName);
      } else {
        SmallVector<float> data(c->f32.begin(), c->f32.end());
        for (float &v : data)
          v *= beta;
        addend = beta == 1.0f ? weight(*c, cName)
                              : derivedWeight(cShape, data, cName);
      }
    } else {
      if (beta != 1.0f)
        return unsupportedAttr(node, *node.attr("beta"),
                               "unless C is a float constant");
      addend = operand(node, 2);
      if (!addend)
        return failure();
    }
  }

  if (!bias)
    bias = none();
  // With an addend the matmul is an intermediate: give it its own name so
  // per-layer comparisons do not see two ops called `outName`.
  if (!addend) {
    auto matmul = builder.create<top::MatMulOp>(
        nodeLoc(node), guessType(outName), a, b, bias, transB);
    return finish(node, matmul);
  }
  auto matmul = builder.create<top::MatMulOp>(
      nameLoc((outName + "_matmul").str()), guessType(""), a, b, bias, transB);
  if (failed(inferShapes(node, matmul)))
    return failure();
  auto add = builder.create<top::AddOp>(nodeLoc(node), guessType(outName),
                                        matmul.getOutput(), addend);
  return finish(node, add);
}

LogicalResult Importer::importMatMul(const Node &node) {
  Value lhs = operand(node, 0), rhs = lhs ? operand(node, 1) : Value();
  if (!rhs)
    return failure();
  if (shapeOf(lhs).size() < 2 || shapeOf(rhs).size() != 2)
    return nodeError(node) << "only an [.., M, K] x [K, N] product is "
                           << "supported, got " << shapeStr(shapeOf(lhs))
                           << " x " << shapeStr(shapeOf(rhs));
  auto op = builder.create<top::MatMulOp>(
      nodeLoc(node), guessType(node.outputs[0]), lhs, rhs, none());
  return finish(node, op);
}

LogicalResult Importer::importBatchNorm(const Node &node) {
  if (const OnnxAttr *training = node.attr("training_mode"))
    if (training->i != 0)
      return unsupportedAttr(node, *training);
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (hasOutput(node, i))
      return nodeError(node) << "output '" << node.outputs[i]
                             << "' is not supported (inference only has Y)";
  SmallVector<Value, 5> operands;
  for (size_t i = 0; i < 5; ++i) {
    Value v = operand(node, i);
    if (!v)
      return failure();
    operands.push_back(v);
  }
  double epsilon = getFloat(node, "epsilon", 1e-5f);
  auto op = builder.create<top::BatchNormOp>(
      nodeLoc(node), guessType(node.outputs[0]), operands[0], operands[1],
      operands[2], operands[3], operands[4], builder.getF64FloatAttr(epsilon));
  return finish(node, op);
}

LogicalResult Importer::importReshape(const Node &node) {
  if (const OnnxAttr *allowZero = node.attr("allowzero"))
    if (allowZero->i != 0)
      return unsupportedAttr(node, *allowZero);
  Value input = operand(node, 0);
  if (!input)
    return failure();
  const TensorData *shape =
      hasInput(node, 1) ? lookupConstant(node.inputs[1]) : nullptr;
  if (!shape || shape->elemType != onnxf::kInt64 || shape->shape.size() != 1)
    return nodeError(node) << "the shape operand must be a 1-D int64 "
                           << "constant (initializer or Constant)";
  // Keep ONNX's 0 and -1 entries: they stay right if shapes are re-inferred.
  auto op = builder.create<top::ReshapeOp>(
      nodeLoc(node), guessType(node.outputs[0]), input, shape->i64);
  return finish(node, op);
}

LogicalResult Importer::importFlatten(const Node &node) {
  Value input = operand(node, 0);
  if (!input)
    return failure();
  ArrayRef<int64_t> in = shapeOf(input);
  int64_t rank = in.size();
  int64_t axis = getInt(node, "axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return nodeError(node) << "axis " << getInt(node, "axis", 1)
                           << " is out of range for rank " << rank;
  // Express the outer extent with reshape's 0 / -1 where possible so the op
  // follows a changed batch size.
  SmallVector<int64_t> shape;
  if (axis == 0) {
    shape = {1, -1};
  } else if (axis == 1) {
    shape = {0, -1};
  } else {
    int64_t outer = 1;
    for (int64_t d : in.take_front(axis))
      outer *= d;
    shape = {outer, -1};
  }
  auto op = builder.create<top::ReshapeOp>(
      nodeLoc(node), guessType(node.outputs[0]), input, shape);
  return finish(node, op);
}

LogicalResult Importer::importConcat(const Node &node) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    Value v = operand(node, i);
    if (!v)
      return failure();
    inputs.push_back(v);
  }
  if (inputs.empty())
    return nodeError(node) << "has no inputs";
  int64_t rank = shapeOf(inputs.front()).size();
  int64_t axis = getInt(node, "axis", 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return nodeError(node) << "axis " << getInt(node, "axis", 0)
                           << " is out of range for rank " << rank;
  auto op = builder.create<top::ConcatOp>(
      nodeLoc(node), guessType(node.outputs[0]), inputs, axis);
  return finish(node, op);
}

LogicalResult Importer::importConstant(const Node &node) {
  // Constants are materialized lazily (operand()), so shape tensors that only
  // feed Reshape never become weights.
  const TensorData *data = nullptr;
  for (const OnnxAttr &a : node.attrs) {
    if (a.name == "value" && a.kind == OnnxAttr::Tensor) {
      data = &a.t;
      continue;
    }
    TensorData t;
    t.name = node.outputs[0];
    if (a.name == "value_float") {
      t.elemType = onnxf::kFloat;
      t.f32 = {a.f};
    } else if (a.name == "value_floats") {
      t.elemType = onnxf::kFloat;
      t.shape = {static_cast<int64_t>(a.floats.size())};
      t.f32 = a.floats;
    } else if (a.name == "value_int") {
      t.elemType = onnxf::kInt64;
      t.i64 = {a.i};
    } else if (a.name == "value_ints") {
      t.elemType = onnxf::kInt64;
      t.shape = {static_cast<int64_t>(a.ints.size())};
      t.i64 = a.ints;
    } else {
      return nodeError(node) << "attribute '" << a.name << "' is not supported";
    }
    ownedConstants.push_back(std::move(t));
    data = &ownedConstants.back();
  }
  if (!data)
    return nodeError(node) << "has no value";
  constants[node.outputs[0]] = data;
  return success();
}

LogicalResult Importer::importIdentity(const Node &node) {
  StringRef in = node.inputs[0], out = node.outputs[0];
  if (const TensorData *data = lookupConstant(in)) {
    constants[out] = data;
    return success();
  }
  Value v = operand(node, 0);
  if (!v)
    return failure();
  values[out] = v;
  return success();
}

LogicalResult Importer::importDropout(const Node &node) {
  if (hasOutput(node, 1))
    return nodeError(node) << "the mask output is not supported";
  // Opset 12+ takes training_mode as an input; only a constant false is an
  // inference-mode Dropout.
  if (hasInput(node, 2)) {
    const TensorData *training = lookupConstant(node.inputs[2]);
    if (!training || training->i64.size() != 1 || training->i64[0] != 0)
      return nodeError(node) << "training_mode must be a constant false";
  }
  return importIdentity(node);
}

Importer::NodeImporter Importer::lookupImporter(StringRef opType) {
  return llvm::StringSwitch<NodeImporter>(opType)
      .Case("Conv", &Importer::importConv)
      .Case("Relu", &Importer::importRelu)
      .Case("Add", &Importer::importAdd)
      .Case("Mul", &Importer::importMul)
      .Case("MaxPool", &Importer::importMaxPool)
      .Case("AveragePool", &Importer::importAveragePool)
      .Case("GlobalAveragePool", &Importer::importGlobalAveragePool)
      .Case("Gemm", &Importer::importGemm)
      .Case("MatMul", &Importer::importMatMul)
      .Case("BatchNormalization", &Importer::importBatchNorm)
      .Case("Reshape", &Importer::importReshape)
      .Case("Flatten", &Importer::importFlatten)
      .Case("Concat", &Importer::importConcat)
      .Case("Constant", &Importer::importConstant)
      .Case("Identity", &Importer::importIdentity)
      .Case("Dropout", &Importer::importDropout)
      .Default(nullptr);
}

LogicalResult Importer::importNode(const Node &node) {
  NodeImporter importer =
      node.domain.empty() ? lookupImporter(node.opType) : nullptr;
  if (!importer)
    return nodeError(node) << "unsupported operator";
  if (!hasOutput(node, 0))
    return nodeError(node) << "has no output";
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
    }
  }
  if (unsupported)
    return {};

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  (*module)->setAttr("kiln.source", StringAttr::get(&ctx, path));

  Type f32 = Float32Type::get(&ctx);
  SmallVector<Type> argTypes;
  for (const ValueInfo &input : model.inputs) {
    if (input.elemType != onnxf::kFloat) {
      emitError(fileLoc()) << "graph input '" << input.name
                           << "' has element type "
                           << onnxf::elemTypeName(input.elemType)
                           << "; kiln takes float inputs only";
      return {};
    }
    if (!input.known) {
      emitError(fileLoc()) << "graph input '" << input.name << "' has shape "
                           << shapeStr(input.shape)
                           << " with unknown dimensions; give its static "
                           << "shape in the deployment config's `inputs`";
      return {};
    }
    argTypes.push_back(RankedTensorType::get(input.shape, f32));
  }

  auto func = func::FuncOp::create(fileLoc(), "main",
                                   FunctionType::get(&ctx, argTypes, {}));
  module->push_back(func);
  Block *entry = func.addEntryBlock();
  for (auto [i, input] : llvm::enumerate(model.inputs)) {
    BlockArgument arg = entry->getArgument(i);
    arg.setLoc(nameLoc(input.name));
    func.setArgAttr(i, "kiln.name", StringAttr::get(&ctx, input.name));
    values[input.name] = arg;
  }
  builder.setInsertionPointToEnd(entry);
  entryBlock = entry;

  for (const auto &[name, data] : model.initializers)
    constants[name] = &data;
  for (const Node &node : model.nodes)
    if (failed(importNode(node)))
      return {};

  SmallVector<Value> results;
  for (const ValueInfo &output : model.outputs) {
    Value v = values.lookup(output.name);
    if (!v)
      if (const TensorData *data = lookupConstant(output.name))
        v = data->isFloat() ? weight(*data, output.name) : Value();
    if (!v) {
      emitError(fileLoc()) << "graph output '" << output.name
                           << "' is not a float tensor kiln computes";
      return {};
    }
    results.push_back(v);
  }
  builder.create<func::ReturnOp>(fileLoc(), results);
  func.setType(
      FunctionType::get(&ctx, argTypes, ValueRange(results).getTypes()));
  for (auto [i, output] : llvm::enumerate(model.outputs))
    func.setResultAttr(i, "kiln.name", StringAttr::get(&ctx, output.name));

  if (failed(mlir::verify(*module)))
    return {};
  return module;
}

} // namespace

OwningOpRef<ModuleOp> kiln::importOnnx(MLIRContext &ctx, StringRef path,
                                       const ImportOptions &opts) {
  ctx.loadDialect<top::TopDialect, func::FuncDialect>();
  Model model;
  std::string error = onnxf::loadModel(path.str(), opts.inputShapes, model);
  if (!error.empty()) {
    // loadModel prefixes "<path>: error: "; the location already says both.
    StringRef message(error);
    message.consume_front((path + ": error: ").str());
    emitError(FileLineColLoc::get(&ctx, path, 0, 0)) << message;
    return {};
  }
  return Importer(ctx, path, model).run();
}
