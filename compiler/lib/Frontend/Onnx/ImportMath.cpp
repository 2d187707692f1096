//===- ImportMath.cpp - Elementwise, activations, softmax, reductions -----===//

#include "Importer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;

namespace kiln::onnx_frontend {

//===----------------------------------------------------------------------===//
// Binary and variadic elementwise
//===----------------------------------------------------------------------===//

/// Integer arithmetic on constants (shape computations), exact in int64;
/// nullopt where the result is undefined or does not fit.
static std::optional<int64_t> intBinary(StringRef opType, int64_t a,
                                        int64_t b) {
  int64_t r;
  if (opType == "Add" || opType == "Sum")
    return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional(r);
  if (opType == "Sub")
    return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional(r);
  if (opType == "Mul")
    return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional(r);
  if (opType == "Div") {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
      return std::nullopt;
    return a / b; // truncates, as ONNX Runtime's integer Div
  }
  if (opType == "Max")
    return std::max(a, b);
  if (opType == "Min")
    return std::min(a, b);
  if (opType == "Pow" && b >= 0) {
    // -1, 0 and 1 in closed form: any other base overflows within 63 steps.
    if (a == 0 || a == 1)
      return b == 0 ? 1 : a;
    if (a == -1)
      return b % 2 ? -1 : 1;
    r = 1;
    for (int64_t i = 0; i < b; ++i)
      if (__builtin_mul_overflow(r, a, &r))
        return std::nullopt;
    return r;
  }
  return std::nullopt;
}

LogicalResult Importer::importBinary(const Node &node) {
  StringRef opType = node.opType;
  size_t count = node.inputs.size();
  bool variadic = opType == "Max" || opType == "Min" || opType == "Sum";
  if (count == 0 || (!variadic && count != 2))
    return nodeError(node) << "expects " << (variadic ? "one or more" : "two")
                           << " inputs, got " << count;
  if (count == 1)
    return alias(node, 0, 0);

  // Integer constants are shape arithmetic: fold them here, exactly.
  bool anyInt = llvm::any_of(llvm::seq<size_t>(0, count), [&](size_t i) {
    const TensorData *t = constant(node, i);
    return t && !t->isFloat();
  });
  if (allInputsConstant(node) && anyInt) {
    for (size_t i = 0; i < count; ++i)
      if (!hasInput(node, i) || !constant(node, i)->hasValues())
        return nodeError(node) << "input " << i << " is missing or not a "
                               << "number tensor";
    TensorData acc = *constant(node, 0);
    for (size_t i = 1; i < count; ++i) {
      const TensorData &rhs = *constant(node, i);
      FailureOr<SmallVector<int64_t>> shape =
          broadcastShapes({acc.shape, rhs.shape});
      if (failed(shape) || acc.isFloat() || rhs.isFloat())
        return nodeError(node) << "integer inputs do not broadcast or mix "
                               << "with float ones";
      if (failed(checkConstantShape(node, *shape)))
        return failure();
      std::vector<int64_t> pa = constfold::broadcastIndices(acc.shape, *shape);
      std::vector<int64_t> pb = constfold::broadcastIndices(rhs.shape, *shape);
      TensorData out;
      out.elemType = acc.elemType;
      out.shape.assign(shape->begin(), shape->end());
      for (size_t j = 0; j < pa.size(); ++j) {
        std::optional<int64_t> v =
            intBinary(opType, acc.i64[pa[j]], rhs.i64[pb[j]]);
        if (!v)
          return nodeError(node) << "cannot evaluate " << acc.i64[pa[j]]
                                 << " and " << rhs.i64[pb[j]] << " on integers";
        out.i64.push_back(*v);
      }
      acc = std::move(out);
    }
    return setConstant(node, 0, std::move(acc));
  }

  // Float: a chain of binary Top ops (constants fold as they are built).
  Value acc = operand(node, 0);
  if (!acc)
    return failure();
  for (size_t i = 1; i < count; ++i) {
    // Pow may take an integer exponent.
    Value rhs = operand(node, i, /*castInts=*/opType == "Pow");
    if (!rhs)
      return failure();
    // Before opset 7 a PRelu slope of C values is per channel (dimension 1),
    // not numpy-broadcast; the version converter leaves it as it was.
    auto x = cast<RankedTensorType>(acc.getType()).getShape();
    auto slope = cast<RankedTensorType>(rhs.getType());
    if (opType == "PRelu" && model.sourceOpset < 7 && x.size() > 2 &&
        slope.getNumElements() == x[1] && slope.getNumElements() != 1) {
      SmallVector<int64_t> perChannel(x.size() - 1, 1);
      perChannel[0] = x[1];
      rhs = reshape(node, subLoc(node, "slope"), rhs, perChannel);
      if (!rhs)
        return failure();
    }
    Location loc =
        i + 1 == count ? nodeLoc(node) : subLoc(node, std::to_string(i));
    if (opType == "Add" || opType == "Sum")
      acc = create<top::AddOp>(node, loc, acc, rhs);
    else if (opType == "Sub")
      acc = create<top::SubOp>(node, loc, acc, rhs);
    else if (opType == "Mul")
      acc = create<top::MulOp>(node, loc, acc, rhs);
    else if (opType == "Div")
      acc = create<top::DivOp>(node, loc, acc, rhs);
    else if (opType == "Pow")
      acc = create<top::PowOp>(node, loc, acc, rhs);
    else if (opType == "Max")
      acc = create<top::MaxOp>(node, loc, acc, rhs);
    else if (opType == "Min")
      acc = create<top::MinOp>(node, loc, acc, rhs);
    else
      acc = create<top::PReluOp>(node, loc, acc, rhs);
    if (!acc)
      return failure();
  }
  return setValue(node, 0, acc);
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

LogicalResult Importer::importUnary(const Node &node) {
  StringRef opType = node.opType;
  // Neg and Abs also appear in shape arithmetic.
  if (const TensorData *in = constant(node, 0);
      in && !in->isFloat() && (opType == "Neg" || opType == "Abs")) {
    TensorData out = *in;
    for (int64_t &v : out.i64)
      v = opType == "Neg" ? -v : std::abs(v);
    return setConstant(node, 0, std::move(out));
  }
  Value input = operand(node, 0);
  if (!input)
    return failure();
  if (opType == "Relu")
    return setValue(node, 0, create<top::ReluOp>(node, nodeLoc(node), input));

  using top::ActiveMode;
  double alpha = 0, beta = 0;
  ActiveMode mode = llvm::StringSwitch<ActiveMode>(opType)
                        .Case("LeakyRelu", ActiveMode::LeakyRelu)
                        .Case("Sigmoid", ActiveMode::Sigmoid)
                        .Case("Tanh", ActiveMode::Tanh)
                        .Case("HardSigmoid", ActiveMode::HardSigmoid)
                        .Case("HardSwish", ActiveMode::HardSwish)
                        .Case("Elu", ActiveMode::Elu)
                        .Case("Selu", ActiveMode::Selu)
                        .Case("Softplus", ActiveMode::Softplus)
                        .Case("Mish", ActiveMode::Mish)
                        .Case("Erf", ActiveMode::Erf)
                        .Case("Exp", ActiveMode::Exp)
                        .Case("Log", ActiveMode::Log)
                        .Case("Sqrt", ActiveMode::Sqrt)
                        .Case("Reciprocal", ActiveMode::Reciprocal)
                        .Case("Abs", ActiveMode::Abs)
                        .Default(ActiveMode::Neg);
  // Parameters with the ONNX defaults.
  switch (mode) {
  case ActiveMode::LeakyRelu:
    alpha = getFloat(node, "alpha", 0.01f);
    break;
  case ActiveMode::HardSigmoid:
    alpha = getFloat(node, "alpha", 0.2f);
    beta = getFloat(node, "beta", 0.5f);
    break;
  case ActiveMode::Elu:
    alpha = getFloat(node, "alpha", 1.0f);
    break;
  case ActiveMode::Selu:
    alpha = getFloat(node, "alpha", 1.67326319217681884765625f);
    beta = getFloat(node, "gamma", 1.05070102214813232421875f);
    break;
  default:
    break;
  }
  return setValue(node, 0,
                  active(node, nodeLoc(node), input, mode, alpha, beta));
}

LogicalResult Importer::importClip(const Node &node) {
  Value input = operand(node, 0);
  if (!input)
    return failure();
  // Opset 11+ takes the bounds as optional inputs, older opsets as
  // attributes; an absent bound does not clip.
  double bounds[2] = {-std::numeric_limits<double>::infinity(),
                      std::numeric_limits<double>::infinity()};
  const char *names[2] = {"min", "max"};
  for (int i = 0; i < 2; ++i) {
    bounds[i] = getFloat(node, names[i], bounds[i]);
    if (!hasInput(node, 1 + i))
      continue;
    FailureOr<SmallVector<float>> v = floatsInput(node, 1 + i, names[i]);
    if (failed(v))
      return failure();
    if (v->size() != 1)
      return nodeError(node) << "input '" << names[i] << "' must be a scalar";
    bounds[i] = v->front();
  }
  // Clip(0, +inf) is a ReLU, which fuses into its producer.
  if (bounds[0] == 0 && std::isinf(bounds[1]) && bounds[1] > 0)
    return setValue(node, 0, create<top::ReluOp>(node, nodeLoc(node), input));
  return setValue(node, 0,
                  active(node, nodeLoc(node), input, top::ActiveMode::Clip,
                         bounds[0], bounds[1]));
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

LogicalResult Importer::importSoftmax(const Node &node) {
  bool log = node.opType == "LogSoftmax";
  Value input = operand(node, 0);
  if (!input)
    return failure();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(input.getType()).getShape();
  int64_t rank = shape.size();
  // Opsets 11-12 default to axis 1 and normalize the input coerced to 2-D at
  // the axis; 13+ normalizes along the single axis (default -1).
  int64_t axis = getInt(node, "axis", opset() >= 13 ? -1 : 1);
  if (axis < -rank || axis >= rank || rank == 0)
    return unsupportedAttr(node, "axis", std::to_string(axis),
                           "(out of range for rank " + std::to_string(rank) +
                               ")");
  if (axis < 0)
    axis += rank;
  if (opset() >= 13 || axis == rank - 1)
    return setValue(node, 0,
                    create<top::SoftmaxOp>(node, nodeLoc(node), input,
                                           uint64_t(axis), log));
  int64_t outer = elementCount(shape.take_front(axis));
  int64_t inner = elementCount(shape.drop_front(axis));
  SmallVector<int64_t> shape2D = {outer, inner};
  Value flat = reshape(node, subLoc(node, "2d"), input, shape2D);
  if (!flat)
    return failure();
  Value soft = create<top::SoftmaxOp>(node, subLoc(node, "softmax"), flat,
                                      uint64_t(1), log);
  if (!soft)
    return failure();
  return setValue(node, 0,
                  create<top::ReshapeOp>(node, nodeLoc(node), soft,
                                         SmallVector<int64_t>(shape)));
}

LogicalResult Importer::importReduce(const Node &node) {
  using top::ReduceMode;
  ReduceMode mode = llvm::StringSwitch<ReduceMode>(node.opType)
                        .Case("ReduceSum", ReduceMode::Sum)
                        .Case("ReduceMean", ReduceMode::Mean)
                        .Case("ReduceMax", ReduceMode::Max)
                        .Case("ReduceMin", ReduceMode::Min)
                        .Case("ReduceL2", ReduceMode::L2)
                        .Default(ReduceMode::SumSquare);
  Value input = operand(node, 0);
  if (!input)
    return failure();
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  // ReduceSum takes its axes as an input from opset 13; the others keep the
  // attribute up to opset 17.
  SmallVector<int64_t> axes;
  if (node.opType == "ReduceSum" && opset() >= 13) {
    if (hasInput(node, 1)) {
      FailureOr<SmallVector<int64_t>> v = intsInput(node, 1, "axes");
      if (failed(v))
        return failure();
      axes = *v;
    }
  } else {
    axes = getInts(node, "axes", {});
  }
  if (axes.empty()) {
    if (getInt(node, "noop_with_empty_axes", 0) != 0)
      return alias(node, 0, 0);
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  for (int64_t &axis : axes) {
    if (axis < -rank || axis >= rank)
      return unsupportedAttr(node, "axes", shapeStr(axes),
                             "(out of range for rank " + std::to_string(rank) +
                                 ")");
    if (axis < 0)
      axis += rank;
  }
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return unsupportedAttr(node, "axes", shapeStr(axes), "(repeated axis)");
  if (rank == 0)
    return alias(node, 0, 0);
  bool keepdims = getInt(node, "keepdims", 1) != 0;
  return setValue(
      node, 0,
      create<top::ReduceOp>(node, nodeLoc(node), input, mode, axes, keepdims));
}

} // namespace kiln::onnx_frontend
