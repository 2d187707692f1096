#include "kiln/Dialect/Top/IR/TopOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kiln::top;

#include "kiln/Dialect/Top/IR/TopDialect.cpp.inc"
#include "kiln/Dialect/Top/IR/TopInterfaces.cpp.inc"

void TopDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/Top/IR/TopOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Top/IR/TopOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

OpFoldResult WeightOp::fold(FoldAdaptor) { return getValue(); }

std::vector<float> kiln::top::readWeight(WeightOp op) {
  Attribute value = op.getValue();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return {};
    ArrayRef<float> data = blob->getDataAs<float>();
    return std::vector<float>(data.begin(), data.end());
  }
  auto dense = cast<DenseElementsAttr>(value);
  if (dense.isSplat())
    return std::vector<float>(dense.getNumElements(),
                              dense.getSplatValue<float>());
  auto values = dense.getValues<float>();
  return std::vector<float>(values.begin(), values.end());
}

WeightOp kiln::top::createWeight(OpBuilder &b, Location loc,
                                 ArrayRef<int64_t> shape, ArrayRef<float> data,
                                 StringRef name) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  ArrayRef<char> bytes(reinterpret_cast<const char *>(data.data()),
                       data.size() * sizeof(float));
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(float));
  auto attr = DenseResourceElementsAttr::get(type, name, std::move(blob));
  return b.create<WeightOp>(loc, type, attr);
}

//===----------------------------------------------------------------------===//
// Shape inference
//===----------------------------------------------------------------------===//

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static void setResultShape(Value result, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(result.getType());
  result.setType(RankedTensorType::get(shape, type.getElementType()));
}

/// Output extent of a sliding window, as ONNX defines it.
static int64_t windowOut(int64_t in, int64_t k, int64_t s, int64_t d,
                         int64_t padBegin, int64_t padEnd, bool ceil) {
  int64_t span = in + padBegin + padEnd - d * (k - 1) - 1;
  int64_t out = ceil ? (span + s - 1) / s + 1 : span / s + 1;
  // With ceil_mode the last window must start inside the input or left pad.
  if (ceil && (out - 1) * s >= in + padBegin)
    --out;
  return out;
}

static LogicalResult inferWindow(Operation *op, Value input, Value output,
                                 int64_t channels, ArrayRef<int64_t> kernel,
                                 ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                                 ArrayRef<int64_t> dilations, bool ceil) {
  auto in = shapeOf(input);
  if (in.size() != 4 || kernel.size() != 2 || strides.size() != 2 ||
      pads.size() != 4 || dilations.size() != 2)
    return op->emitOpError("expects a 4-D NCHW input with 2-D window attributes");
  int64_t oh = windowOut(in[2], kernel[0], strides[0], dilations[0], pads[0],
                         pads[2], ceil);
  int64_t ow = windowOut(in[3], kernel[1], strides[1], dilations[1], pads[1],
                         pads[3], ceil);
  if (oh <= 0 || ow <= 0)
    return op->emitOpError("window is larger than the padded input");
  setResultShape(output, {in[0], channels, oh, ow});
  return success();
}

LogicalResult ConvOp::verify() {
  auto filter = shapeOf(getFilter());
  if (filter.size() != 4)
    return emitOpError("expects a 4-D filter [oc, ic/group, kh, kw]");
  int64_t group = static_cast<int64_t>(getGroup());
  if (group < 1 || filter[0] % group != 0)
    return emitOpError("output channels must divide into groups");
  auto in = shapeOf(getInput());
  if (in.size() == 4 && in[1] != filter[1] * group)
    return emitOpError("input channels ") << in[1] << " do not match filter "
                                          << filter[1] << " x group " << group;
  return success();
}

LogicalResult ConvOp::inferShapes() {
  return inferWindow(*this, getInput(), getOutput(), shapeOf(getFilter())[0],
                     getKernelShape(), getStrides(), getPads(), getDilations(),
                     false);
}

static LogicalResult inferPool(Operation *op, Value input, Value output,
                               ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> pads, bool ceil) {
  auto in = shapeOf(input);
  if (in.size() != 4)
    return op->emitOpError("expects a 4-D NCHW input");
  int64_t dil[2] = {1, 1};
  return inferWindow(op, input, output, in[1], kernel, strides, pads, dil, ceil);
}

LogicalResult MaxPoolOp::inferShapes() {
  return inferPool(*this, getInput(), getOutput(), getKernelShape(), getStrides(),
                   getPads(), getCeilMode());
}

LogicalResult AvgPoolOp::inferShapes() {
  return inferPool(*this, getInput(), getOutput(), getKernelShape(), getStrides(),
                   getPads(), getCeilMode());
}

LogicalResult GlobalAvgPoolOp::inferShapes() {
  auto in = shapeOf(getInput());
  if (in.size() != 4)
    return emitOpError("expects a 4-D NCHW input");
  setResultShape(getOutput(), {in[0], in[1], 1, 1});
  return success();
}

static LogicalResult inferSame(Value input, Value output) {
  setResultShape(output, shapeOf(input));
  return success();
}

LogicalResult ReluOp::inferShapes() { return inferSame(getInput(), getOutput()); }
LogicalResult BatchNormOp::inferShapes() {
  return inferSame(getInput(), getOutput());
}

/// Multidirectional broadcasting (numpy rules).
static LogicalResult inferBroadcast(Operation *op, Value lhs, Value rhs,
                                    Value output) {
  auto a = shapeOf(lhs), b = shapeOf(rhs);
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    size_t offA = rank - a.size(), offB = rank - b.size();
    int64_t da = i < offA ? 1 : a[i - offA];
    int64_t db = i < offB ? 1 : b[i - offB];
    if (da != db && da != 1 && db != 1)
      return op->emitOpError("operands do not broadcast: dimension ")
             << i << " is " << da << " and " << db;
    out[i] = da == 1 ? db : da;
  }
  setResultShape(output, out);
  return success();
}

LogicalResult AddOp::inferShapes() {
  return inferBroadcast(*this, getLhs(), getRhs(), getOutput());
}
LogicalResult MulOp::inferShapes() {
  return inferBroadcast(*this, getLhs(), getRhs(), getOutput());
}

LogicalResult MatMulOp::inferShapes() {
  auto a = shapeOf(getInput()), b = shapeOf(getRight());
  if (a.size() < 2 || b.size() != 2)
    return emitOpError("expects input [.., m, k] and a 2-D right operand");
  int64_t k = getRightTranspose() ? b[1] : b[0];
  int64_t n = getRightTranspose() ? b[0] : b[1];
  if (a.back() != k)
    return emitOpError("inner dimensions differ: ") << a.back() << " vs " << k;
  SmallVector<int64_t> out(a.begin(), a.end());
  out.back() = n;
  setResultShape(getOutput(), out);
  return success();
}

LogicalResult ReshapeOp::inferShapes() {
  auto in = shapeOf(getInput());
  int64_t total = 1;
  for (int64_t d : in)
    total *= d;
  SmallVector<int64_t> out;
  int64_t known = 1, inferred = -1;
  for (auto [i, dim] : llvm::enumerate(getShape())) {
    int64_t d = dim;
    if (d == 0 && i < in.size())
      d = in[i];
    if (d == -1) {
      if (inferred >= 0)
        return emitOpError("at most one dimension may be -1");
      inferred = (int64_t)i;
      out.push_back(1);
      continue;
    }
    out.push_back(d);
    known *= d;
  }
  if (inferred >= 0 && known > 0)
    out[inferred] = total / known;
  int64_t outTotal = 1;
  for (int64_t d : out)
    outTotal *= d;
  if (outTotal != total)
    return emitOpError("cannot reshape ") << total << " elements to "
                                          << outTotal;
  setResultShape(getOutput(), out);
  return success();
}

LogicalResult ConcatOp::inferShapes() {
  auto first = shapeOf(getInputs().front());
  int64_t rank = first.size();
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return emitOpError("axis out of range");
  SmallVector<int64_t> out(first.begin(), first.end());
  out[axis] = 0;
  for (Value v : getInputs()) {
    auto s = shapeOf(v);
    if ((int64_t)s.size() != rank)
      return emitOpError("inputs differ in rank");
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis && s[i] != first[i])
        return emitOpError("inputs differ in dimension ") << i;
    out[axis] += s[axis];
  }
  setResultShape(getOutput(), out);
  return success();
}
