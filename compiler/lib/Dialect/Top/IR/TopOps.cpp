#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Support/Precision.h"
#include "kiln/Support/ShapeRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace kiln::top;
using kiln::windowOut;

#include "kiln/Dialect/Top/IR/TopDialect.cpp.inc"
#include "kiln/Dialect/Top/IR/TopEnums.cpp.inc"
#include "kiln/Dialect/Top/IR/TopInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Top/IR/TopAttrs.cpp.inc"

void TopDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/Top/IR/TopOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kiln/Dialect/Top/IR/TopAttrs.cpp.inc"
      >();
}

std::optional<DType> kiln::top::runDtype(Operation *op) {
  if (auto dtype = op->getAttrOfType<DTypeAttr>(kDTypeAttr))
    return dtype.getValue();
  return std::nullopt;
}

void kiln::top::setRunDtype(Operation *op, DType dtype) {
  op->setAttr(kDTypeAttr, DTypeAttr::get(op->getContext(), dtype));
}

LogicalResult kiln::top::verifyRunDtype(Operation *op) {
  Attribute dtype = op->getAttr(kDTypeAttr);
  if (dtype && !isa<DTypeAttr>(dtype))
    return op->emitOpError("'") << kDTypeAttr << "' must be a #top.dtype, not " << dtype;
  return success();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Top/IR/TopOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

OpFoldResult WeightOp::fold(FoldAdaptor) { return getValue(); }

bool kiln::top::readFilterAndBias(ConvOp conv, std::vector<float> &filter,
                                  std::vector<float> &bias) {
  auto filterOp = conv.getFilter().getDefiningOp<WeightOp>();
  if (!filterOp)
    return false;
  int64_t oc = cast<RankedTensorType>(filterOp.getType()).getDimSize(0);
  filter = readWeight(filterOp);
  bias.assign(oc, 0.0f);
  if (isa<NoneType>(conv.getBias().getType()))
    return true;
  auto biasOp = conv.getBias().getDefiningOp<WeightOp>();
  if (!biasOp)
    return false;
  bias = readWeight(biasOp);
  return (int64_t)bias.size() == oc;
}

void kiln::top::eraseUnusedWeights(Operation *root) {
  root->walk([](WeightOp w) {
    if (w->use_empty())
      w.erase();
  });
}

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

using ShapeOr = FailureOr<SmallVector<int64_t>>;

/// The window ops' result shape [n, channels, oh, ow]; checks the window
/// attributes (kiln::checkWindowAttrs) and that the window fits the padded
/// input.
static ShapeOr inferWindow(Operation *op, Value input, int64_t channels,
                           ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                           bool ceil) {
  auto in = shapeOf(input);
  if (in.size() != 4)
    return op->emitOpError("expects a 4-D NCHW input, got rank ") << in.size();
  if (auto problem = kiln::checkWindowAttrs(kernel, strides, pads, dilations))
    return op->emitOpError(*problem);
  int64_t oh = windowOut(in[2], kernel[0], strides[0], dilations[0], pads[0],
                         pads[2], ceil);
  int64_t ow = windowOut(in[3], kernel[1], strides[1], dilations[1], pads[1],
                         pads[3], ceil);
  if (oh <= 0 || ow <= 0)
    return op->emitOpError("window is larger than the padded input");
  return SmallVector<int64_t>{in[0], channels, oh, ow};
}

ShapeOr ConvOp::resultShape() {
  return inferWindow(*this, getInput(), shapeOf(getFilter())[0],
                     getKernelShape(), getStrides(), getPads(), getDilations(),
                     false);
}

static ShapeOr inferPool(Operation *op, Value input, ArrayRef<int64_t> kernel,
                         ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                         bool ceil) {
  auto in = shapeOf(input);
  if (in.size() != 4)
    return op->emitOpError("expects a 4-D NCHW input, got rank ") << in.size();
  int64_t dil[2] = {1, 1};
  return inferWindow(op, input, in[1], kernel, strides, pads, dil, ceil);
}

ShapeOr MaxPoolOp::resultShape() {
  return inferPool(*this, getInput(), getKernelShape(), getStrides(), getPads(),
                   getCeilMode());
}

ShapeOr AvgPoolOp::resultShape() {
  return inferPool(*this, getInput(), getKernelShape(), getStrides(), getPads(),
                   getCeilMode());
}

/// [n, c, 1, 1] of a 4-D NCHW input.
static ShapeOr inferGlobalPool(Operation *op, Value input) {
  auto in = shapeOf(input);
  if (in.size() != 4)
    return op->emitOpError("expects a 4-D NCHW input, got rank ") << in.size();
  return SmallVector<int64_t>{in[0], in[1], 1, 1};
}

ShapeOr GlobalAvgPoolOp::resultShape() {
  return inferGlobalPool(*this, getInput());
}

static ShapeOr inferSame(Value input) {
  return SmallVector<int64_t>(shapeOf(input));
}

ShapeOr ReluOp::resultShape() { return inferSame(getInput()); }
ShapeOr BatchNormOp::resultShape() { return inferSame(getInput()); }

/// Multidirectional broadcasting (numpy rules).
static ShapeOr inferBroadcast(Operation *op, Value lhs, Value rhs) {
  size_t bad = 0;
  auto out = kiln::broadcastShapes(shapeOf(lhs), shapeOf(rhs), bad);
  if (!out) {
    auto a = shapeOf(lhs), b = shapeOf(rhs);
    size_t rank = std::max(a.size(), b.size());
    return op->emitOpError("operands do not broadcast: dimension ")
           << bad << " is " << a[bad - (rank - a.size())] << " and "
           << b[bad - (rank - b.size())];
  }
  return *out;
}

ShapeOr AddOp::resultShape() {
  return inferBroadcast(*this, getLhs(), getRhs());
}
ShapeOr MulOp::resultShape() {
  return inferBroadcast(*this, getLhs(), getRhs());
}
ShapeOr SubOp::resultShape() {
  return inferBroadcast(*this, getLhs(), getRhs());
}
ShapeOr DivOp::resultShape() {
  return inferBroadcast(*this, getLhs(), getRhs());
}
ShapeOr PowOp::resultShape() {
  return inferBroadcast(*this, getLhs(), getRhs());
}
ShapeOr MaxOp::resultShape() {
  return inferBroadcast(*this, getLhs(), getRhs());
}
ShapeOr MinOp::resultShape() {
  return inferBroadcast(*this, getLhs(), getRhs());
}
ShapeOr PReluOp::resultShape() {
  return inferBroadcast(*this, getLhs(), getRhs());
}

ShapeOr ActiveOp::resultShape() {
  return inferSame(getInput());
}

/// `axis` in [-rank, rank) as a non-negative index, or failure.
static FailureOr<int64_t> normalizeAxis(Operation *op, int64_t axis,
                                        int64_t rank) {
  if (axis < -rank || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

ShapeOr SoftmaxOp::resultShape() {
  if (failed(normalizeAxis(*this, getAxis(), shapeOf(getInput()).size())))
    return failure();
  return inferSame(getInput());
}

ShapeOr ReduceOp::resultShape() {
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
  return out;
}

ShapeOr TransposeOp::resultShape() {
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
  return out;
}

int64_t kiln::top::sliceExtent(int64_t start, int64_t end, int64_t step) {
  int64_t span = step > 0 ? end - start : start - end;
  int64_t stride = step > 0 ? step : -step;
  return span <= 0 ? 0 : (span + stride - 1) / stride;
}

ShapeOr SliceOp::resultShape() {
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
  return out;
}

ShapeOr GatherOp::resultShape() {
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
  return out;
}

ShapeOr ExpandOp::resultShape() {
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
  return out;
}

ShapeOr PadOp::resultShape() {
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
  return out;
}

ShapeOr ResizeOp::resultShape() {
  auto in = shapeOf(getInput());
  ArrayRef<int64_t> outHW = getOutHw();
  ArrayRef<double> scales = getScales();
  if (in.size() != 4)
    return emitOpError("expects a 4-D NCHW input");
  if (outHW.size() != 2 || outHW[0] < 1 || outHW[1] < 1)
    return emitOpError("expects a positive out_hw of 2 entries");
  if (scales.size() != 2 || !(scales[0] > 0) || !(scales[1] > 0))
    return emitOpError("expects 2 positive scales");
  return SmallVector<int64_t>{in[0], in[1], outHW[0], outHW[1]};
}

ShapeOr DeconvOp::resultShape() {
  auto in = shapeOf(getInput()), filter = shapeOf(getFilter());
  ArrayRef<int64_t> kernel = getKernelShape(), strides = getStrides(),
                    pads = getPads(), dilations = getDilations(),
                    outPad = getOutputPadding();
  if (in.size() != 4 || filter.size() != 4)
    return emitOpError("expects a 4-D NCHW input and a 4-D filter");
  if (auto problem = kiln::checkWindowAttrs(kernel, strides, pads, dilations))
    return emitOpError(*problem);
  if (outPad.size() != 2 || outPad[0] < 0 || outPad[1] < 0)
    return emitOpError("output_padding must have 2 non-negative entries");
  if (kernel != filter.drop_front(2))
    return emitOpError("kernel_shape [")
           << kernel << "] does not match the filter's [" << filter.drop_front(2) << "]";
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
    out[i] = kiln::deconvOut(in[2 + i], kernel[i], strides[i], dilations[i], pads[i],
                             pads[i + 2]) +
             outPad[i];
    if (out[i] <= 0)
      return emitOpError("window attributes give no output");
  }
  return SmallVector<int64_t>{in[0], oc, out[0], out[1]};
}

ShapeOr GlobalMaxPoolOp::resultShape() {
  return inferGlobalPool(*this, getInput());
}

ShapeOr MatMulOp::resultShape() {
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
  size_t bad = 0;
  auto batch = kiln::broadcastShapes(a.drop_back(2), b.drop_back(2), bad);
  if (!batch)
    return emitOpError("batch dimension ") << bad << " does not broadcast";
  SmallVector<int64_t> out = *batch;
  out.append({a[a.size() - 2], n});
  return out;
}

ShapeOr ReshapeOp::resultShape() {
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
  return out;
}

ShapeOr ConcatOp::resultShape() {
  if (getInputs().empty())
    return emitOpError("expects at least one input");
  auto first = shapeOf(getInputs().front());
  int64_t rank = first.size();
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << getAxis() << " is out of range for rank " << rank;
  SmallVector<int64_t> out(first.begin(), first.end());
  out[axis] = 0;
  for (Value v : getInputs()) {
    auto s = shapeOf(v);
    if ((int64_t)s.size() != rank)
      return emitOpError("inputs differ in rank: ") << s.size() << " and " << rank;
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis && s[i] != first[i])
        return emitOpError("inputs differ in dimension ")
               << i << ": " << s[i] << " and " << first[i];
    out[axis] += s[axis];
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//
//
// Result types are not checked against resultShape(): the importer creates
// ops with a placeholder result and top-shape-infer recomputes results, so a
// Top result shape is only right after inference. Everything the operands
// and attributes must satisfy is checked.

/// The checks every Top op makes: its operands and attributes give a result
/// shape.
template <typename OpT> static LogicalResult verifyShape(OpT op) {
  return success(succeeded(op.resultShape()));
}

/// An optional bias (none, or `count` elements).
static LogicalResult verifyBias(Operation *op, Value bias, int64_t count) {
  auto type = dyn_cast<RankedTensorType>(bias.getType());
  if (type && type.hasStaticShape() && type.getNumElements() != count)
    return op->emitOpError("bias has ")
           << type.getNumElements() << " elements, expects " << count;
  return success();
}

/// Operands that must share an element type.
static LogicalResult verifySameElementType(Operation *op, ValueRange values) {
  for (Value v : values)
    if (getElementTypeOrSelf(v) != getElementTypeOrSelf(values.front()))
      return op->emitOpError("operands must have one element type: ")
             << getElementTypeOrSelf(values.front()) << " and "
             << getElementTypeOrSelf(v);
  return success();
}

/// Only the shape: after tpu-apply-precision an INT8 weight's result is a
/// !quant.uniform over its i8 value.
LogicalResult WeightOp::verify() {
  auto value = cast<ShapedType>(getValue().getType());
  if (value.getShape() != getType().getShape())
    return emitOpError("value of shape [")
           << value.getShape() << "] does not match the result's [" << getType().getShape() << "]";
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
  if (getKernelShape() != filter.drop_front(2))
    return emitOpError("kernel_shape [")
           << getKernelShape() << "] does not match the filter's ["
           << filter.drop_front(2) << "]";
  if (failed(verifyBias(*this, getBias(), filter[0])))
    return failure();
  return verifyShape(*this);
}

LogicalResult DeconvOp::verify() {
  if (failed(verifyShape(*this)))
    return failure();
  auto filter = shapeOf(getFilter());
  int64_t oc = getFilterReordered() ? filter[0] : filter[1] * getGroup();
  return verifyBias(*this, getBias(), oc);
}

LogicalResult BatchNormOp::verify() {
  auto in = shapeOf(getInput());
  if (in.size() < 2)
    return emitOpError("expects an [N, C, ..] input, got rank ") << in.size();
  const char *names[] = {"scale", "bias", "mean", "variance"};
  Value params[] = {getScale(), getBias(), getMean(), getVariance()};
  for (auto [name, v] : llvm::zip(names, params)) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.hasStaticShape() && type.getNumElements() != in[1])
      return emitOpError() << name << " has " << type.getNumElements()
                           << " elements for " << in[1] << " channels";
  }
  return verifyShape(*this);
}

/// A binary elementwise op: operands of one element type (pow's exponent
/// may differ) that broadcast.
template <typename OpT> static LogicalResult verifyBinary(OpT op) {
  if (!std::is_same_v<OpT, PowOp> &&
      failed(verifySameElementType(op, {op.getLhs(), op.getRhs()})))
    return failure();
  return verifyShape(op);
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }
LogicalResult PowOp::verify() { return verifyBinary(*this); }
LogicalResult MaxOp::verify() { return verifyBinary(*this); }
LogicalResult MinOp::verify() { return verifyBinary(*this); }
LogicalResult PReluOp::verify() { return verifyBinary(*this); }

LogicalResult MatMulOp::verify() {
  auto shape = resultShape();
  if (failed(shape))
    return failure();
  return verifyBias(*this, getBias(), shape->back());
}

LogicalResult ConcatOp::verify() {
  if (failed(verifySameElementType(*this, getInputs())))
    return failure();
  return verifyShape(*this);
}

LogicalResult ReluOp::verify() { return verifyShape(*this); }
LogicalResult ActiveOp::verify() { return verifyShape(*this); }
LogicalResult SoftmaxOp::verify() { return verifyShape(*this); }
LogicalResult ReduceOp::verify() { return verifyShape(*this); }
LogicalResult TransposeOp::verify() { return verifyShape(*this); }
LogicalResult SliceOp::verify() { return verifyShape(*this); }
LogicalResult GatherOp::verify() { return verifyShape(*this); }
LogicalResult ExpandOp::verify() { return verifyShape(*this); }
LogicalResult PadOp::verify() { return verifyShape(*this); }
LogicalResult ResizeOp::verify() { return verifyShape(*this); }
LogicalResult GlobalMaxPoolOp::verify() { return verifyShape(*this); }
LogicalResult GlobalAvgPoolOp::verify() { return verifyShape(*this); }
LogicalResult MaxPoolOp::verify() { return verifyShape(*this); }
LogicalResult AvgPoolOp::verify() { return verifyShape(*this); }
LogicalResult ReshapeOp::verify() { return verifyShape(*this); }

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

ShapeOr QuantizeLinearOp::resultShape() {
  return inferSame(getInput());
}

ShapeOr DequantizeLinearOp::resultShape() {
  return inferSame(getInput());
}
