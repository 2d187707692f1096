//===- ImportTensor.cpp - Shape, layout and data movement operators -------===//
//
// Each operator resolves its ONNX attributes and inputs into the normalized
// form the Top op takes (non-negative axes, clamped slices, explicit shapes),
// then either evaluates it natively on a constant input (any element type) or
// emits the Top op.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_frontend {

/// Normalizes `axis` in [-rank, rank) to [0, rank); false when out of range.
static bool normalizeAxis(int64_t &axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return false;
  if (axis < 0)
    axis += rank;
  return true;
}

LogicalResult Importer::importReshape(const Node &node) {
  bool allowZero = getInt(node, "allowzero", 0) != 0;
  FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
  if (failed(in))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = intsInput(node, 1, "shape");
  if (failed(shape))
    return failure();
  // ONNX Reshape: 0 copies the input's dimension (unless allowzero), one -1
  // takes what is left.
  SmallVector<int64_t> resolved;
  int64_t known = 1, inferred = -1, total = elementCount(*in);
  for (auto [i, d] : llvm::enumerate(*shape)) {
    if (d == 0 && !allowZero && i < in->size())
      d = (*in)[i];
    if (d == -1 && inferred < 0) {
      inferred = i;
      resolved.push_back(1);
      continue;
    }
    // Empty tensors exist only as constants (a shape with no entries).
    if (d < 0 || (d == 0 && !constant(node, 0)))
      return nodeError(node)
             << "shape " << shapeStr(*shape) << " is not supported for input "
             << shapeStr(*in) << " (empty or invalid)";
    known = mulCount(known, d);
    resolved.push_back(d);
  }
  if (inferred >= 0 && known > 0)
    resolved[inferred] = total / known;
  if (total > kMaxElements || elementCount(resolved) != total)
    return nodeError(node) << "cannot reshape " << shapeStr(*in) << " to "
                           << shapeStr(*shape);
  if (const TensorData *data = constant(node, 0))
    return setConstant(node, 0, constfold::reshape(*data, resolved));
  Value input = operand(node, 0);
  if (!input)
    return failure();
  return setValue(node, 0,
                  create<top::ReshapeOp>(node, nodeLoc(node), input,
                                         allowZero ? resolved : *shape));
}

LogicalResult Importer::importFlatten(const Node &node) {
  FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
  if (failed(in))
    return failure();
  int64_t rank = in->size();
  int64_t axis = getInt(node, "axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return unsupportedAttr(
        node, "axis", std::to_string(getInt(node, "axis", 1)),
        "(out of range for rank " + std::to_string(rank) + ")");
  int64_t outer = elementCount(ArrayRef<int64_t>(*in).take_front(axis));
  int64_t inner = elementCount(ArrayRef<int64_t>(*in).drop_front(axis));
  if (const TensorData *data = constant(node, 0))
    return setConstant(node, 0, constfold::reshape(*data, {outer, inner}));
  Value input = operand(node, 0);
  if (!input)
    return failure();
  // Express the outer extent with reshape's 0 / -1 where possible so the op
  // follows a changed batch size.
  SmallVector<int64_t> shape = axis == 0   ? SmallVector<int64_t>{1, -1}
                               : axis == 1 ? SmallVector<int64_t>{0, -1}
                                           : SmallVector<int64_t>{outer, -1};
  return setValue(node, 0,
                  create<top::ReshapeOp>(node, nodeLoc(node), input, shape));
}

LogicalResult Importer::importSqueeze(const Node &node) {
  FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
  if (failed(in))
    return failure();
  int64_t rank = in->size();
  // Axes are an attribute before opset 13 and an optional input from 13.
  SmallVector<int64_t> axes = getInts(node, "axes", {});
  if (opset() >= 13 && hasInput(node, 1)) {
    FailureOr<SmallVector<int64_t>> v = intsInput(node, 1, "axes");
    if (failed(v))
      return failure();
    axes = *v;
  }
  SmallVector<bool> drop(rank, false);
  for (int64_t axis : axes) {
    if (!normalizeAxis(axis, rank) || (*in)[axis] != 1)
      return unsupportedAttr(node, "axes", shapeStr(axes),
                             "(input " + shapeStr(*in) + ")");
    drop[axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!(axes.empty() ? (*in)[i] == 1 : drop[i]))
      shape.push_back((*in)[i]);
  if (const TensorData *data = constant(node, 0))
    return setConstant(node, 0, constfold::reshape(*data, shape));
  return setValue(node, 0,
                  reshape(node, nodeLoc(node), operand(node, 0), shape));
}

LogicalResult Importer::importUnsqueeze(const Node &node) {
  FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
  if (failed(in))
    return failure();
  SmallVector<int64_t> axes = getInts(node, "axes", {});
  if (opset() >= 13) {
    FailureOr<SmallVector<int64_t>> v = intsInput(node, 1, "axes");
    if (failed(v))
      return failure();
    axes = *v;
  }
  int64_t outRank = in->size() + axes.size();
  SmallVector<bool> inserted(outRank, false);
  for (int64_t axis : axes) {
    if (!normalizeAxis(axis, outRank) || inserted[axis])
      return unsupportedAttr(node, "axes", shapeStr(axes),
                             "(input " + shapeStr(*in) + ")");
    inserted[axis] = true;
  }
  SmallVector<int64_t> shape;
  auto next = in->begin();
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(inserted[i] ? 1 : *next++);
  if (const TensorData *data = constant(node, 0))
    return setConstant(node, 0, constfold::reshape(*data, shape));
  Value input = operand(node, 0);
  if (!input)
    return failure();
  return setValue(node, 0,
                  create<top::ReshapeOp>(node, nodeLoc(node), input, shape));
}

LogicalResult Importer::importTranspose(const Node &node) {
  FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
  if (failed(in))
    return failure();
  int64_t rank = in->size();
  // The default reverses the dimensions.
  SmallVector<int64_t> perm =
      getInts(node, "perm",
              llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank))));
  SmallVector<bool> seen(rank, false);
  for (int64_t &p : perm)
    if (!normalizeAxis(p, rank) || seen[p] || perm.size() != (size_t)rank)
      return unsupportedAttr(node, "perm", shapeStr(perm),
                             "(not a permutation of rank " +
                                 std::to_string(rank) + ")");
    else
      seen[p] = true;
  if (const TensorData *data = constant(node, 0))
    return setConstant(node, 0, constfold::transpose(*data, perm));
  if (llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
    return alias(node, 0, 0);
  Value input = operand(node, 0);
  if (!input)
    return failure();
  return setValue(node, 0,
                  create<top::TransposeOp>(node, nodeLoc(node), input, perm));
}

LogicalResult Importer::importConcat(const Node &node) {
  if (node.inputs.empty())
    return nodeError(node) << "has no inputs";
  FailureOr<SmallVector<int64_t>> first = inputShape(node, 0);
  if (failed(first))
    return failure();
  int64_t rank = first->size();
  int64_t axis = getInt(node, "axis", 0);
  if (!normalizeAxis(axis, rank))
    return unsupportedAttr(
        node, "axis", std::to_string(getInt(node, "axis", 0)),
        "(out of range for rank " + std::to_string(rank) + ")");
  if (allInputsConstant(node)) {
    SmallVector<const TensorData *> inputs;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const TensorData *t = constant(node, i);
      bool same = (int64_t)t->shape.size() == rank &&
                  t->isFloat() == constant(node, 0)->isFloat();
      for (int64_t d = 0; same && d < rank; ++d)
        same = d == axis || t->shape[d] == (*first)[d];
      if (!same)
        return nodeError(node)
               << "input " << shapeStr(t->shape) << " does not match "
               << shapeStr(*first) << " outside axis " << axis;
      inputs.push_back(t);
    }
    return setConstant(node, 0, constfold::concat(inputs, axis));
  }
  SmallVector<Value> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    // An empty constant (a zero-length shape piece) adds nothing.
    if (const TensorData *t = constant(node, i); t && t->numElements() == 0)
      continue;
    Value v = operand(node, i);
    if (!v)
      return failure();
    inputs.push_back(v);
  }
  if (inputs.size() == 1)
    return setValue(node, 0, inputs.front());
  return setValue(
      node, 0,
      create<top::ConcatOp>(node, nodeLoc(node), inputs, uint64_t(axis)));
}

//===----------------------------------------------------------------------===//
// Slicing and gathering
//===----------------------------------------------------------------------===//

LogicalResult Importer::splitInto(const Node &node, size_t inputIndex,
                                  int64_t axis, ArrayRef<int64_t> sizes) {
  FailureOr<SmallVector<int64_t>> in = inputShape(node, inputIndex);
  if (failed(in))
    return failure();
  const TensorData *data = constant(node, inputIndex);
  Value input = data ? Value() : operand(node, inputIndex);
  if (!data && !input)
    return failure();
  int64_t offset = 0;
  for (auto [i, size] : llvm::enumerate(sizes)) {
    SmallVector<int64_t> starts(in->size(), 0), ends(*in), steps(in->size(), 1);
    starts[axis] = offset;
    ends[axis] = offset += size;
    if (data) {
      if (failed(setConstant(node, i,
                             constfold::slice(*data, starts, ends, steps))))
        return failure();
      continue;
    }
    if (!hasOutput(node, i))
      continue;
    if (sizes.size() == 1) {
      if (failed(setValue(node, i, input)))
        return failure();
      continue;
    }
    if (size == 0)
      return nodeError(node) << "output " << i << " would be empty";
    if (failed(setValue(node, i,
                        create<top::SliceOp>(node, nodeLoc(node, i), input,
                                             starts, ends, steps))))
      return failure();
  }
  return success();
}

LogicalResult Importer::importSplit(const Node &node) {
  FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
  if (failed(in))
    return failure();
  int64_t axis = getInt(node, "axis", 0);
  if (!normalizeAxis(axis, in->size()))
    return unsupportedAttr(node, "axis",
                           std::to_string(getInt(node, "axis", 0)),
                           "(out of range for input " + shapeStr(*in) + ")");
  // Sizes: the 'split' attribute before opset 13, an optional input from
  // 13; without either, equal parts, one per output.
  SmallVector<int64_t> sizes = getInts(node, "split", {});
  if (opset() >= 13 && hasInput(node, 1)) {
    FailureOr<SmallVector<int64_t>> v = intsInput(node, 1, "split");
    if (failed(v))
      return failure();
    sizes = *v;
  }
  int64_t extent = (*in)[axis], parts = node.outputs.size();
  if (sizes.empty()) {
    if (extent % parts != 0)
      return nodeError(node) << "extent " << extent << " does not split into "
                             << parts << " equal parts";
    sizes.assign(parts, extent / parts);
  }
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s < 0 ? extent + 1 : s;
  if ((int64_t)sizes.size() != parts || total != extent)
    return unsupportedAttr(node, "split", shapeStr(sizes),
                           "(for extent " + std::to_string(extent) + " and " +
                               std::to_string(parts) + " outputs)");
  return splitInto(node, 0, axis, sizes);
}

LogicalResult Importer::normalizeSlice(const Node &node,
                                       ArrayRef<int64_t> shape,
                                       SmallVector<int64_t> &starts,
                                       SmallVector<int64_t> &ends,
                                       SmallVector<int64_t> &steps) {
  int64_t rank = shape.size();
  FailureOr<SmallVector<int64_t>> s = intsInput(node, 1, "starts");
  if (failed(s))
    return failure();
  FailureOr<SmallVector<int64_t>> e = intsInput(node, 2, "ends");
  if (failed(e))
    return failure();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, s->size()));
  SmallVector<int64_t> step(s->size(), 1);
  if (hasInput(node, 3)) {
    FailureOr<SmallVector<int64_t>> v = intsInput(node, 3, "axes");
    if (failed(v))
      return failure();
    axes = *v;
  }
  if (hasInput(node, 4)) {
    FailureOr<SmallVector<int64_t>> v = intsInput(node, 4, "steps");
    if (failed(v))
      return failure();
    step = *v;
  }
  if (e->size() != s->size() || axes.size() != s->size() ||
      step.size() != s->size())
    return nodeError(node) << "starts, ends, axes and steps differ in length";
  starts.assign(rank, 0);
  ends.assign(shape.begin(), shape.end());
  steps.assign(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t axis = axes[k];
    if (!normalizeAxis(axis, rank) || seen[axis])
      return nodeError(node)
             << "axes " << shapeStr(axes)
             << " are out of range or repeated for rank " << rank;
    seen[axis] = true;
    if (step[k] == 0)
      return nodeError(node) << "steps must not be 0";
    // Negative indices count from the end; then starts and ends clamp into
    // the dimension ([0, dim] forwards, [-1, dim - 1] backwards).
    int64_t dim = shape[axis], start = (*s)[k], end = (*e)[k];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (step[k] > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    starts[axis] = start;
    ends[axis] = end;
    steps[axis] = step[k];
  }
  return success();
}

LogicalResult Importer::importSlice(const Node &node) {
  FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
  if (failed(in))
    return failure();
  SmallVector<int64_t> starts, ends, steps;
  if (failed(normalizeSlice(node, *in, starts, ends, steps)))
    return failure();
  if (const TensorData *data = constant(node, 0))
    return setConstant(node, 0, constfold::slice(*data, starts, ends, steps));
  bool identity = true, empty = false;
  for (size_t d = 0; d < in->size(); ++d) {
    int64_t extent = top::sliceExtent(starts[d], ends[d], steps[d]);
    identity &= steps[d] == 1 && extent == (*in)[d];
    empty |= extent == 0;
  }
  if (empty)
    return nodeError(node) << "the result is empty, which is not supported";
  if (identity)
    return alias(node, 0, 0);
  Value input = operand(node, 0);
  if (!input)
    return failure();
  return setValue(
      node, 0,
      create<top::SliceOp>(node, nodeLoc(node), input, starts, ends, steps));
}

LogicalResult Importer::importGather(const Node &node) {
  FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
  if (failed(in))
    return failure();
  int64_t axis = getInt(node, "axis", 0);
  if (!normalizeAxis(axis, in->size()))
    return unsupportedAttr(node, "axis",
                           std::to_string(getInt(node, "axis", 0)),
                           "(out of range for input " + shapeStr(*in) + ")");
  FailureOr<SmallVector<int64_t>> indices = intsInput(node, 1, "indices");
  if (failed(indices))
    return failure();
  ArrayRef<int64_t> indicesShape = constant(node, 1)->shape;
  int64_t extent = (*in)[axis];
  for (int64_t &index : *indices) {
    if (index < -extent || index >= extent)
      return nodeError(node) << "index " << index << " is out of range for "
                             << "extent " << extent;
    if (index < 0)
      index += extent;
  }
  if (const TensorData *data = constant(node, 0)) {
    SmallVector<int64_t> shape(ArrayRef<int64_t>(*in).take_front(axis));
    llvm::append_range(shape, indicesShape);
    llvm::append_range(shape, ArrayRef<int64_t>(*in).drop_front(axis + 1));
    if (failed(checkConstantShape(node, shape)))
      return failure();
    return setConstant(node, 0,
                       constfold::gather(*data, axis, *indices, indicesShape));
  }
  if (indices->empty())
    return nodeError(node) << "the result is empty, which is not supported";
  Value input = operand(node, 0);
  if (!input)
    return failure();
  return setValue(node, 0,
                  create<top::GatherOp>(node, nodeLoc(node), input,
                                        uint64_t(axis), *indices,
                                        indicesShape));
}

LogicalResult Importer::importExpand(const Node &node) {
  FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
  if (failed(in))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = intsInput(node, 1, "shape");
  if (failed(shape))
    return failure();
  FailureOr<SmallVector<int64_t>> out = broadcastShapes({*in, *shape});
  if (failed(out) || elementCount(*out) > kMaxElements)
    return nodeError(node) << "cannot expand " << shapeStr(*in) << " to "
                           << shapeStr(*shape);
  if (const TensorData *data = constant(node, 0)) {
    if (failed(checkConstantShape(node, *out)))
      return failure();
    return setConstant(node, 0, constfold::expand(*data, *out));
  }
  if (*out == *in)
    return alias(node, 0, 0);
  Value input = operand(node, 0);
  if (!input)
    return failure();
  return setValue(node, 0,
                  create<top::ExpandOp>(node, nodeLoc(node), input, *shape,
                                        ArrayRef<int64_t>{}));
}

LogicalResult Importer::importTile(const Node &node) {
  FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
  if (failed(in))
    return failure();
  FailureOr<SmallVector<int64_t>> repeats = intsInput(node, 1, "repeats");
  if (failed(repeats))
    return failure();
  if (repeats->size() != in->size() ||
      llvm::any_of(*repeats, [](int64_t r) { return r < 1; }))
    return nodeError(node) << "repeats " << shapeStr(*repeats)
                           << " must be positive, one per dimension of "
                           << shapeStr(*in);
  SmallVector<int64_t> shape;
  for (auto [d, r] : llvm::zip(*in, *repeats))
    shape.push_back(mulCount(d, r));
  if (elementCount(shape) > kMaxElements)
    return nodeError(node) << "repeats " << shapeStr(*repeats)
                           << " make a tensor too large to compile";
  if (const TensorData *data = constant(node, 0)) {
    if (failed(checkConstantShape(node, shape)))
      return failure();
    return setConstant(node, 0, constfold::tile(*data, *repeats));
  }
  if (llvm::all_of(*repeats, [](int64_t r) { return r == 1; }))
    return alias(node, 0, 0);
  Value input = operand(node, 0);
  if (!input)
    return failure();
  return setValue(
      node, 0,
      create<top::ExpandOp>(node, nodeLoc(node), input, shape, *repeats));
}

//===----------------------------------------------------------------------===//
// Pad and Resize
//===----------------------------------------------------------------------===//

LogicalResult Importer::importPad(const Node &node) {
  std::string modeName = getString(node, "mode", "constant");
  top::PadMode mode;
  if (modeName == "constant")
    mode = top::PadMode::Constant;
  else if (modeName == "reflect")
    mode = top::PadMode::Reflect;
  else if (modeName == "edge")
    mode = top::PadMode::Edge;
  else
    return unsupportedAttr(node, *node.attr("mode"));
  Value input = operand(node, 0);
  if (!input)
    return failure();
  auto in = cast<RankedTensorType>(input.getType()).getShape();
  int64_t rank = in.size();
  // Pads and the fill value are inputs from opset 11 (attributes before,
  // and older models are converted up to 11).
  FailureOr<SmallVector<int64_t>> pads = intsInput(node, 1, "pads");
  if (failed(pads))
    return failure();
  if ((int64_t)pads->size() != 2 * rank)
    return nodeError(node) << "expects " << 2 * rank << " pads for input "
                           << shapeStr(in) << ", got " << shapeStr(*pads);
  double value = 0;
  if (hasInput(node, 2)) {
    FailureOr<SmallVector<float>> v = floatsInput(node, 2, "constant_value");
    if (failed(v))
      return failure();
    if (v->size() != 1)
      return nodeError(node) << "constant_value must be a scalar";
    value = v->front();
  }
  // Negative pads crop: pad the positive parts, then slice the rest away.
  SmallVector<int64_t> grow, starts(rank), ends(rank), steps(rank, 1);
  bool crop = false;
  for (int64_t p : *pads)
    grow.push_back(std::max<int64_t>(p, 0));
  for (int64_t d = 0; d < rank; ++d) {
    int64_t begin = (*pads)[d], end = (*pads)[d + rank];
    starts[d] = begin < 0 ? -begin : 0;
    ends[d] = in[d] + grow[d] + grow[d + rank] - (end < 0 ? -end : 0);
    crop |= begin < 0 || end < 0;
    if (ends[d] <= starts[d])
      return nodeError(node) << "pads " << shapeStr(*pads)
                             << " leave nothing of dimension " << d;
  }
  Value result = input;
  if (llvm::any_of(grow, [](int64_t p) { return p > 0; }))
    result =
        create<top::PadOp>(node, crop ? subLoc(node, "pad") : nodeLoc(node),
                           input, grow, mode, APFloat(value));
  if (result && crop)
    result =
        create<top::SliceOp>(node, nodeLoc(node), result, starts, ends, steps);
  return setValue(node, 0, result);
}

LogicalResult Importer::emitResize(const Node &node, Value input,
                                   top::ResizeMode mode,
                                   ArrayRef<int64_t> outHW,
                                   ArrayRef<double> scales,
                                   top::ResizeCoordMode coordMode,
                                   top::ResizeNearestMode nearestMode) {
  return setValue(node, 0,
                  create<top::ResizeOp>(node, nodeLoc(node), input, mode, outHW,
                                        scales, coordMode, nearestMode));
}

/// Reads Resize/Upsample scales or sizes for a 4-D input: only H and W may
/// change. Fills the output H, W and the scales the model gives.
static LogicalResult
resolveResizeSizes(ArrayRef<int64_t> in, ArrayRef<float> scales,
                   ArrayRef<int64_t> sizes, SmallVector<int64_t> &outHW,
                   SmallVector<double> &hwScales, std::string &why) {
  if (!sizes.empty()) {
    if (sizes.size() != 4 || sizes[0] != in[0] || sizes[1] != in[1]) {
      why = "sizes " + shapeStr(sizes) + " change N or C of input " +
            shapeStr(in);
      return failure();
    }
    for (int i = 0; i < 2; ++i) {
      outHW.push_back(sizes[2 + i]);
      hwScales.push_back(double(sizes[2 + i]) / in[2 + i]);
    }
    return success();
  }
  if (scales.size() != 4 || scales[0] != 1 || scales[1] != 1) {
    std::string s = "[";
    for (size_t i = 0; i < scales.size(); ++i)
      s += (i ? ", " : "") + std::to_string(scales[i]);
    why = "scales " + s + "] must keep N and C (1) of a 4-D input";
    return failure();
  }
  for (int i = 0; i < 2; ++i) {
    // ONNX: output = floor(input * scale).
    outHW.push_back(int64_t(std::floor(in[2 + i] * double(scales[2 + i]))));
    hwScales.push_back(scales[2 + i]);
  }
  return success();
}

/// Input 0 of a resize, which must be a 4-D NCHW tensor; null after an error.
Value Importer::nchwInput(const Node &node) {
  Value input = operand(node, 0);
  if (!input)
    return input;
  auto in = cast<RankedTensorType>(input.getType()).getShape();
  if (in.size() != 4) {
    nodeError(node) << "only a 4-D NCHW input is supported, got "
                    << shapeStr(in);
    return Value();
  }
  return input;
}

LogicalResult Importer::importResize(const Node &node) {
  std::string modeName = getString(node, "mode", "nearest");
  if (modeName != "nearest" && modeName != "linear")
    return unsupportedAttr(node, "mode", '"' + modeName + '"');
  top::ResizeMode mode =
      modeName == "linear" ? top::ResizeMode::Linear : top::ResizeMode::Nearest;
  std::string coordName =
      getString(node, "coordinate_transformation_mode", "half_pixel");
  // The enums' names are ONNX's.
  std::optional<top::ResizeCoordMode> coordMode =
      top::symbolizeResizeCoordMode(coordName);
  if (!coordMode)
    return unsupportedAttr(node, "coordinate_transformation_mode",
                           '"' + coordName + '"');
  std::string nearestName =
      getString(node, "nearest_mode", "round_prefer_floor");
  std::optional<top::ResizeNearestMode> nearestMode =
      top::symbolizeResizeNearestMode(nearestName);
  if (!nearestMode)
    return unsupportedAttr(node, "nearest_mode", '"' + nearestName + '"');

  Value input = nchwInput(node);
  if (!input)
    return failure();
  auto in = cast<RankedTensorType>(input.getType()).getShape();
  // Inputs: X, roi (tf_crop_and_resize only), scales, sizes; an empty
  // tensor or name means absent.
  SmallVector<float> scales;
  SmallVector<int64_t> sizes;
  if (const TensorData *s = constant(node, 2); s && s->numElements() > 0) {
    FailureOr<SmallVector<float>> v = floatsInput(node, 2, "scales");
    if (failed(v))
      return failure();
    scales = *v;
  } else if (hasInput(node, 2) && !constant(node, 2)) {
    return nodeError(node) << "input 'scales' must be a constant; it is "
                           << "computed";
  }
  if (scales.empty()) {
    FailureOr<SmallVector<int64_t>> v = intsInput(node, 3, "sizes");
    if (failed(v))
      return failure();
    sizes = *v;
  }
  SmallVector<int64_t> outHW;
  SmallVector<double> hwScales;
  std::string why;
  if (failed(resolveResizeSizes(in, scales, sizes, outHW, hwScales, why)))
    return nodeError(node) << why;
  return emitResize(node, input, mode, outHW, hwScales, *coordMode, *nearestMode);
}

LogicalResult Importer::importUpsample(const Node &node) {
  // Upsample (opsets 7-9) is Resize with asymmetric coordinates and, for
  // nearest, the floor of the source coordinate.
  std::string modeName = getString(node, "mode", "nearest");
  if (modeName != "nearest" && modeName != "linear" && modeName != "bilinear")
    return unsupportedAttr(node, "mode", '"' + modeName + '"');
  Value input = nchwInput(node);
  if (!input)
    return failure();
  auto in = cast<RankedTensorType>(input.getType()).getShape();
  SmallVector<float> scales;
  if (const OnnxAttr *a = node.attr("scales")) {
    scales.assign(a->floats.begin(), a->floats.end());
  } else {
    FailureOr<SmallVector<float>> v = floatsInput(node, 1, "scales");
    if (failed(v))
      return failure();
    scales = *v;
  }
  SmallVector<int64_t> outHW;
  SmallVector<double> hwScales;
  std::string why;
  if (failed(resolveResizeSizes(in, scales, {}, outHW, hwScales, why)))
    return nodeError(node) << why;
  return emitResize(node, input,
                    modeName == "nearest" ? top::ResizeMode::Nearest
                                          : top::ResizeMode::Linear,
                    outHW, hwScales, top::ResizeCoordMode::Asymmetric,
                    top::ResizeNearestMode::Floor);
}

} // namespace kiln::onnx_frontend
