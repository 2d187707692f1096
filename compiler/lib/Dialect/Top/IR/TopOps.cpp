#include "kiln/Dialect/Top/IR/TopOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace kiln::top;

#include "kiln/Dialect/Top/IR/TopDialect.cpp.inc"
#include "kiln/Dialect/Top/IR/TopEnums.cpp.inc"
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
    if (auto intType = dyn_cast<IntegerType>(resource.getElementType());
        intType && intType.getWidth() == 8) {
      ArrayRef<char> bytes = blob->getData();
      std::vector<float> out;
      out.reserve(bytes.size());
      for (char c : bytes)
        out.push_back(intType.isUnsigned() ? (float)(uint8_t)c
                                           : (float)(int8_t)c);
      return out;
    }
    ArrayRef<float> data = blob->getDataAs<float>();
    return std::vector<float>(data.begin(), data.end());
  }
  auto dense = cast<DenseElementsAttr>(value);
  // Integer data (an INT8 weight of a QDQ model): the values as floats.
  if (auto intType = dyn_cast<IntegerType>(dense.getElementType())) {
    std::vector<float> out;
    out.reserve(dense.getNumElements());
    for (const APInt &v : dense.getValues<APInt>())
      out.push_back(intType.isUnsigned() ? (float)v.getZExtValue()
                                         : (float)v.getSExtValue());
    return out;
  }
  if (dense.isSplat())
    return std::vector<float>(dense.getNumElements(),
                              dense.getSplatValue<float>());
  auto values = dense.getValues<float>();
  return std::vector<float>(values.begin(), values.end());
}

std::string kiln::top::resourceKey(StringRef name) {
  // Keys print unquoted, so names like "onnx::Conv_12" or "/a/b:0" would not
  // parse back.
  std::string key;
  for (char c : name)
    key += llvm::isAlnum(c) || c == '_' || c == '.' || c == '$' ? c : '_';
  if (key.empty() || llvm::isDigit(key.front()) || key.front() == '.' ||
      key.front() == '$')
    key.insert(key.begin(), '_');
  return key;
}

WeightOp kiln::top::createWeight(OpBuilder &b, Location loc,
                                 ArrayRef<int64_t> shape, ArrayRef<float> data,
                                 StringRef name) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  // MLIR memcpy's from the data even when it is empty: never from null.
  static const float kNoData = 0;
  ArrayRef<char> bytes(
      reinterpret_cast<const char *>(data.empty() ? &kNoData : data.data()),
      data.size() * sizeof(float));
  auto blob =
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(float));
  auto attr =
      DenseResourceElementsAttr::get(type, resourceKey(name), std::move(blob));
  return b.create<WeightOp>(loc, type, attr);
}

WeightOp kiln::top::createInt8Weight(OpBuilder &b, Location loc,
                                     ArrayRef<int64_t> shape,
                                     ArrayRef<int64_t> data, bool isUnsigned,
                                     StringRef name) {
  auto elem = IntegerType::get(b.getContext(), 8,
                               isUnsigned ? IntegerType::Unsigned
                                          : IntegerType::Signless);
  auto type = RankedTensorType::get(shape, elem);
  std::vector<char> bytes;
  bytes.reserve(data.size());
  for (int64_t v : data)
    bytes.push_back(static_cast<char>(static_cast<uint8_t>(v)));
  static const char kNoData = 0;
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(bytes.empty() ? &kNoData : bytes.data(), bytes.size()), 1);
  auto attr =
      DenseResourceElementsAttr::get(type, resourceKey(name), std::move(blob));
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
  // floor/ceil of span / s also for a negative span: with ceil_mode a window
  // larger than the padded input still gives one output when it starts
  // inside (ONNX and PyTorch: ceil(-1 / 2) + 1 = 1).
  int64_t span = in + padBegin + padEnd - d * (k - 1) - 1;
  int64_t out = (ceil ? llvm::divideCeilSigned(span, s) : llvm::divideFloorSigned(span, s)) + 1;
  // With ceil_mode the last window must start inside the input or left pad.
  if (ceil && out > 0 && (out - 1) * s >= in + padBegin)
    --out;
  return out;
}

static LogicalResult inferWindow(Operation *op, Value input, Value output,
                                 int64_t channels, ArrayRef<int64_t> kernel,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> pads,
                                 ArrayRef<int64_t> dilations, bool ceil) {
  auto in = shapeOf(input);
  if (in.size() != 4 || kernel.size() != 2 || strides.size() != 2 ||
      pads.size() != 4 || dilations.size() != 2)
    return op->emitOpError(
        "expects a 4-D NCHW input with 2-D window attributes");
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
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> pads, bool ceil) {
  auto in = shapeOf(input);
  if (in.size() != 4)
    return op->emitOpError("expects a 4-D NCHW input");
  int64_t dil[2] = {1, 1};
  return inferWindow(op, input, output, in[1], kernel, strides, pads, dil,
                     ceil);
}

LogicalResult MaxPoolOp::inferShapes() {
  return inferPool(*this, getInput(), getOutput(), getKernelShape(),
                   getStrides(), getPads(), getCeilMode());
}

LogicalResult AvgPoolOp::inferShapes() {
  return inferPool(*this, getInput(), getOutput(), getKernelShape(),
                   getStrides(), getPads(), getCeilMode());
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

LogicalResult ReluOp::inferShapes() {
  return inferSame(getInput(), getOutput());
}
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
LogicalResult SubOp::inferShapes() {
  return inferBroadcast(*this, getLhs(), getRhs(), getOutput());
}
LogicalResult DivOp::inferShapes() {
  return inferBroadcast(*this, getLhs(), getRhs(), getOutput());
}
LogicalResult PowOp::inferShapes() {
  return inferBroadcast(*this, getLhs(), getRhs(), getOutput());
}
LogicalResult MaxOp::inferShapes() {
  return inferBroadcast(*this, getLhs(), getRhs(), getOutput());
}
LogicalResult MinOp::inferShapes() {
  return inferBroadcast(*this, getLhs(), getRhs(), getOutput());
}
LogicalResult PReluOp::inferShapes() {
  return inferBroadcast(*this, getLhs(), getRhs(), getOutput());
}

LogicalResult ActiveOp::inferShapes() {
  return inferSame(getInput(), getOutput());
}

/// `axis` in [-rank, rank) as a non-negative index, or failure.
static FailureOr<int64_t> normalizeAxis(Operation *op, int64_t axis,
                                        int64_t rank) {
  if (axis < -rank || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult SoftmaxOp::inferShapes() {
  if (failed(normalizeAxis(*this, getAxis(), shapeOf(getInput()).size())))
    return failure();
  return inferSame(getInput(), getOutput());
}

LogicalResult ReduceOp::inferShapes() {
  auto in = shapeOf(getInput());
  ArrayRef<int64_t> axes = getAxes();
  if (axes.empty())
    return emitOpError("expects at least one axis");
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= (int64_t)in.size())
      return emitOpError("axis ")
             << axis << " is out of range for rank " << in.size();
    if (i > 0 && axis <= axes[i - 1])
      return emitOpError("axes must be sorted and unique");
  }
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(in)) {
    if (!llvm::is_contained(axes, (int64_t)i))
      out.push_back(d);
    else if (getKeepdims())
      out.push_back(1);
  }
  setResultShape(getOutput(), out);
  return success();
}

LogicalResult TransposeOp::inferShapes() {
  auto in = shapeOf(getInput());
  ArrayRef<int64_t> perm = getPerm();
  if (perm.size() != in.size())
    return emitOpError("perm has ")
           << perm.size() << " entries for rank " << in.size();
  SmallVector<bool> seen(in.size(), false);
  SmallVector<int64_t> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || seen[p])
      return emitOpError("perm is not a permutation");
    seen[p] = true;
    out.push_back(in[p]);
  }
  setResultShape(getOutput(), out);
  return success();
}

int64_t kiln::top::sliceExtent(int64_t start, int64_t end, int64_t step) {
  int64_t span = step > 0 ? end - start : start - end;
  int64_t stride = step > 0 ? step : -step;
  return span <= 0 ? 0 : (span + stride - 1) / stride;
}

LogicalResult SliceOp::inferShapes() {
  auto in = shapeOf(getInput());
  ArrayRef<int64_t> starts = getStarts(), ends = getEnds(), steps = getSteps();
  if (starts.size() != in.size() || ends.size() != in.size() ||
      steps.size() != in.size())
    return emitOpError("expects one start, end and step per dimension");
  SmallVector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t start = starts[i], end = ends[i], step = steps[i];
    // The normalized form the importer produces (see the op description).
    bool valid =
        step > 0   ? start >= 0 && start <= in[i] && end >= 0 && end <= in[i]
        : step < 0 ? start >= 0 && start < in[i] && end >= -1 && end < in[i]
                   : false;
    if (!valid)
      return emitOpError("dimension ")
             << i << ": start " << start << ", end " << end << ", step " << step
             << " are not normalized for extent " << in[i];
    out.push_back(sliceExtent(start, end, step));
    if (out.back() == 0)
      return emitOpError("dimension ") << i << " of the result is empty";
  }
  setResultShape(getOutput(), out);
  return success();
}

LogicalResult GatherOp::inferShapes() {
  auto in = shapeOf(getInput());
  int64_t axis = getAxis();
  if (axis < 0 || axis >= (int64_t)in.size())
    return emitOpError("axis ")
           << axis << " is out of range for rank " << in.size();
  ArrayRef<int64_t> indices = getIndices(), indicesShape = getIndicesShape();
  int64_t count = 1;
  for (int64_t d : indicesShape)
    count *= d;
  if (count != (int64_t)indices.size() || indices.empty())
    return emitOpError("expects ")
           << count << " indices for indices_shape, got " << indices.size();
  for (int64_t index : indices)
    if (index < 0 || index >= in[axis])
      return emitOpError("index ")
             << index << " is out of range for extent " << in[axis];
  SmallVector<int64_t> out(in.begin(), in.begin() + axis);
  out.append(indicesShape.begin(), indicesShape.end());
  out.append(in.begin() + axis + 1, in.end());
  setResultShape(getOutput(), out);
  return success();
}

LogicalResult ExpandOp::inferShapes() {
  auto in = shapeOf(getInput());
  ArrayRef<int64_t> repeats = getRepeats();
  SmallVector<int64_t> out;
  if (!repeats.empty()) {
    if (repeats.size() != in.size())
      return emitOpError("expects one repeat per dimension");
    for (auto [d, r] : llvm::zip(in, repeats)) {
      if (r < 1)
        return emitOpError("repeats must be positive");
      out.push_back(d * r);
    }
  } else {
    ArrayRef<int64_t> shape = getShape();
    size_t rank = std::max(in.size(), shape.size());
    for (size_t i = 0; i < rank; ++i) {
      size_t offIn = rank - in.size(), offShape = rank - shape.size();
      int64_t a = i < offIn ? 1 : in[i - offIn];
      int64_t b = i < offShape ? 1 : shape[i - offShape];
      if (b < 1 || (a != b && a != 1 && b != 1))
        return emitOpError("cannot broadcast dimension ")
               << i << " of extent " << a << " to " << b;
      out.push_back(a == 1 ? b : a);
    }
  }
  setResultShape(getOutput(), out);
  return success();
}

LogicalResult PadOp::inferShapes() {
  auto in = shapeOf(getInput());
  ArrayRef<int64_t> pads = getPads();
  size_t rank = in.size();
  if (pads.size() != 2 * rank)
    return emitOpError("expects ") << 2 * rank << " pads, got " << pads.size();
  SmallVector<int64_t> out;
  for (size_t i = 0; i < rank; ++i) {
    int64_t begin = pads[i], end = pads[i + rank];
    if (begin < 0 || end < 0)
      return emitOpError("pads must be non-negative");
    // Reflection mirrors without repeating the edge, once.
    if (getMode() == PadMode::Reflect && (begin >= in[i] || end >= in[i]))
      return emitOpError("reflect pads of dimension ")
             << i << " must be smaller than its extent " << in[i];
    out.push_back(in[i] + begin + end);
  }
  setResultShape(getOutput(), out);
  return success();
}

LogicalResult ResizeOp::inferShapes() {
  auto in = shapeOf(getInput());
  ArrayRef<int64_t> outHW = getOutHw();
  ArrayRef<double> scales = getScales();
  if (in.size() != 4)
    return emitOpError("expects a 4-D NCHW input");
  if (outHW.size() != 2 || outHW[0] < 1 || outHW[1] < 1)
    return emitOpError("expects a positive out_hw of 2 entries");
  if (scales.size() != 2 || !(scales[0] > 0) || !(scales[1] > 0))
    return emitOpError("expects 2 positive scales");
  int64_t coord = getCoordMode(), nearest = getNearestMode();
  if (coord < 0 || coord > 3 || nearest < 0 || nearest > 3)
    return emitOpError("coord_mode and nearest_mode must be in [0, 3]");
  setResultShape(getOutput(), {in[0], in[1], outHW[0], outHW[1]});
  return success();
}

LogicalResult DeconvOp::inferShapes() {
  auto in = shapeOf(getInput()), filter = shapeOf(getFilter());
  ArrayRef<int64_t> kernel = getKernelShape(), strides = getStrides(),
                    pads = getPads(), dilations = getDilations(),
                    outPad = getOutputPadding();
  if (in.size() != 4 || filter.size() != 4)
    return emitOpError("expects a 4-D NCHW input and a 4-D filter");
  if (kernel.size() != 2 || strides.size() != 2 || pads.size() != 4 ||
      dilations.size() != 2 || outPad.size() != 2)
    return emitOpError("expects 2-D window attributes and 4 pads");
  if (kernel != filter.drop_front(2))
    return emitOpError("kernel_shape does not match the filter");
  int64_t group = getGroup();
  if (group < 1)
    return emitOpError("group must be positive");
  // [ic, oc/group, kh, kw] as ONNX stores it; [oc, ic/group, kh, kw] once
  // reordered for the chip.
  int64_t ic = getFilterReordered() ? filter[1] * group : filter[0];
  int64_t oc = getFilterReordered() ? filter[0] : filter[1] * group;
  if (in[1] != ic || ic % group != 0 || oc % group != 0)
    return emitOpError("input channels ") << in[1] << " do not match filter ["
                                          << filter << "] with group " << group;
  int64_t out[2];
  for (int i = 0; i < 2; ++i) {
    out[i] = (in[2 + i] - 1) * strides[i] - pads[i] - pads[i + 2] +
             dilations[i] * (kernel[i] - 1) + 1 + outPad[i];
    if (strides[i] < 1 || dilations[i] < 1 || outPad[i] < 0 || out[i] <= 0)
      return emitOpError("window attributes give no output");
  }
  setResultShape(getOutput(), {in[0], oc, out[0], out[1]});
  return success();
}

LogicalResult GlobalMaxPoolOp::inferShapes() {
  auto in = shapeOf(getInput());
  if (in.size() != 4)
    return emitOpError("expects a 4-D NCHW input");
  setResultShape(getOutput(), {in[0], in[1], 1, 1});
  return success();
}

LogicalResult MatMulOp::inferShapes() {
  auto a = shapeOf(getInput()), b = shapeOf(getRight());
  if (a.size() < 2 || b.size() < 2)
    return emitOpError("expects operands [.., m, k] and [.., k, n]");
  if (getRightTranspose() && b.size() != 2)
    return emitOpError("right_transpose needs a 2-D right operand");
  int64_t k = getRightTranspose() ? b[1] : b[b.size() - 2];
  int64_t n = getRightTranspose() ? b[0] : b.back();
  if (a.back() != k)
    return emitOpError("inner dimensions differ: ") << a.back() << " vs " << k;
  // The batch dimensions broadcast (numpy matmul).
  auto batchA = a.drop_back(2), batchB = b.drop_back(2);
  size_t rank = std::max(batchA.size(), batchB.size());
  SmallVector<int64_t> out;
  for (size_t i = 0; i < rank; ++i) {
    size_t offA = rank - batchA.size(), offB = rank - batchB.size();
    int64_t da = i < offA ? 1 : batchA[i - offA];
    int64_t db = i < offB ? 1 : batchB[i - offB];
    if (da != db && da != 1 && db != 1)
      return emitOpError("batch dimensions do not broadcast: ")
             << da << " vs " << db;
    out.push_back(da == 1 ? db : da);
  }
  out.append({a[a.size() - 2], n});
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
    return emitOpError("cannot reshape ")
           << total << " elements to " << outTotal;
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

//===----------------------------------------------------------------------===//
// QuantizeLinear / DequantizeLinear
//===----------------------------------------------------------------------===//

float kiln::top::quantizeValue(float x, double scale, int64_t zeroPoint,
                               bool isUnsigned) {
  float lo = isUnsigned ? 0.0f : -128.0f, hi = isUnsigned ? 255.0f : 127.0f;
  // std::nearbyint rounds half to even in the default rounding mode.
  float q = std::nearbyint(x / static_cast<float>(scale)) +
            static_cast<float>(zeroPoint);
  if (std::isnan(q))
    return static_cast<float>(zeroPoint);
  return std::min(hi, std::max(lo, q));
}

float kiln::top::dequantizeValue(float q, double scale, int64_t zeroPoint) {
  return (q - static_cast<float>(zeroPoint)) * static_cast<float>(scale);
}

int64_t kiln::top::quantChannel(ArrayRef<int64_t> shape, int64_t axis,
                                size_t numScales, int64_t flatIndex) {
  if (numScales <= 1)
    return 0;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  return (flatIndex / inner) % shape[axis];
}

static LogicalResult verifyQuantParams(Operation *op, Value input,
                                       ArrayRef<double> scale,
                                       ArrayRef<int64_t> zeroPoint,
                                       int64_t axis, Type intType) {
  if (scale.empty() || scale.size() != zeroPoint.size())
    return op->emitOpError("expects as many zero points as scales (")
           << scale.size() << " scales, " << zeroPoint.size()
           << " zero points)";
  for (double s : scale)
    if (!(s > 0) || !std::isfinite(s))
      return op->emitOpError("scales must be positive and finite");
  auto in = shapeOf(input);
  if (scale.size() > 1) {
    if (axis < 0 || axis >= (int64_t)in.size())
      return op->emitOpError("axis ")
             << axis << " is out of range for rank " << in.size();
    if (in[axis] != (int64_t)scale.size())
      return op->emitOpError("expects ")
             << in[axis] << " per-axis scales, got " << scale.size();
  }
  auto it = dyn_cast<IntegerType>(intType);
  if (!it || it.getWidth() != 8)
    return op->emitOpError("expects an 8-bit integer quantized type, got ")
           << intType;
  int64_t lo = it.isUnsigned() ? 0 : -128, hi = it.isUnsigned() ? 255 : 127;
  for (int64_t z : zeroPoint)
    if (z < lo || z > hi)
      return op->emitOpError("zero point ")
             << z << " is out of range for " << intType;
  return success();
}

LogicalResult QuantizeLinearOp::verify() {
  return verifyQuantParams(*this, getInput(), getScale(), getZeroPoint(),
                           getAxis(),
                           getOutput().getType().getElementType());
}

LogicalResult DequantizeLinearOp::verify() {
  return verifyQuantParams(*this, getInput(), getScale(), getZeroPoint(),
                           getAxis(),
                           getInput().getType().getElementType());
}

LogicalResult QuantizeLinearOp::inferShapes() {
  return inferSame(getInput(), getOutput());
}

LogicalResult DequantizeLinearOp::inferShapes() {
  return inferSame(getInput(), getOutput());
}
