//===- ImportConstant.cpp - Constants, shape arithmetic and aliases -------===//
//
// Operators that produce compile-time constants (Constant, Shape,
// ConstantOfShape, Range, Equal, Where and Cast of constants) or rename a
// value (Identity, Dropout, Cast between float types), Where with a constant
// condition, and the native evaluation of data movement on constants that the
// other files share.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_frontend {

//===----------------------------------------------------------------------===//
// Native data movement on constants
//===----------------------------------------------------------------------===//

namespace {
SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// The flat input index of every output element, row-major, where
/// `source(index, d)` maps output index `index[d]` to the input's dimension
/// `d` index.
std::vector<int64_t>
sourceIndices(ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape,
              function_ref<int64_t(ArrayRef<int64_t>, size_t)> source) {
  SmallVector<int64_t> inStrides = rowMajorStrides(inShape);
  int64_t count = elementCount(outShape);
  std::vector<int64_t> result;
  result.reserve(count);
  SmallVector<int64_t> index(outShape.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < inShape.size(); ++d)
      offset += source(index, d) * inStrides[d];
    result.push_back(offset);
    for (size_t d = outShape.size(); d-- > 0;) {
      if (++index[d] < outShape[d])
        break;
      index[d] = 0;
    }
  }
  return result;
}

/// A tensor of `in`'s element type and `shape` whose element i is in's
/// element `source[i]`.
TensorData remap(const TensorData &in, ArrayRef<int64_t> shape,
                 ArrayRef<int64_t> source) {
  TensorData out;
  out.elemType = in.elemType;
  out.shape.assign(shape.begin(), shape.end());
  for (int64_t s : source) {
    if (in.isFloat())
      out.f32.push_back(in.f32[s]);
    else
      out.i64.push_back(in.i64[s]);
  }
  return out;
}
} // namespace

std::vector<int64_t> constfold::broadcastIndices(ArrayRef<int64_t> in,
                                                 ArrayRef<int64_t> out) {
  size_t lead = out.size() - in.size();
  return sourceIndices(in, out, [&](ArrayRef<int64_t> index, size_t d) {
    return in[d] == 1 ? 0 : index[d + lead];
  });
}

TensorData constfold::reshape(const TensorData &in, ArrayRef<int64_t> shape) {
  TensorData out = in;
  out.shape.assign(shape.begin(), shape.end());
  return out;
}

TensorData constfold::transpose(const TensorData &in, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(in.shape[p]);
  // Output dimension i walks input dimension perm[i].
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return remap(
      in, shape,
      sourceIndices(in.shape, shape, [&](ArrayRef<int64_t> index, size_t d) {
        return index[inverse[d]];
      }));
}

TensorData constfold::slice(const TensorData &in, ArrayRef<int64_t> starts,
                            ArrayRef<int64_t> ends, ArrayRef<int64_t> steps) {
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < in.shape.size(); ++d)
    shape.push_back(top::sliceExtent(starts[d], ends[d], steps[d]));
  return remap(
      in, shape,
      sourceIndices(in.shape, shape, [&](ArrayRef<int64_t> index, size_t d) {
        return starts[d] + index[d] * steps[d];
      }));
}

TensorData constfold::gather(const TensorData &in, int64_t axis,
                             ArrayRef<int64_t> indices,
                             ArrayRef<int64_t> indicesShape) {
  int64_t outer = elementCount(ArrayRef<int64_t>(in.shape).take_front(axis));
  int64_t inner = elementCount(ArrayRef<int64_t>(in.shape).drop_front(axis + 1));
  SmallVector<int64_t> shape(in.shape.begin(), in.shape.begin() + axis);
  shape.append(indicesShape.begin(), indicesShape.end());
  shape.append(in.shape.begin() + axis + 1, in.shape.end());
  std::vector<int64_t> source;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : indices)
      for (int64_t i = 0; i < inner; ++i)
        source.push_back((o * in.shape[axis] + index) * inner + i);
  return remap(in, shape, source);
}

TensorData constfold::expand(const TensorData &in, ArrayRef<int64_t> shape) {
  return remap(in, shape, broadcastIndices(in.shape, shape));
}

TensorData constfold::tile(const TensorData &in, ArrayRef<int64_t> repeats) {
  SmallVector<int64_t> shape;
  for (auto [d, r] : llvm::zip(in.shape, repeats))
    shape.push_back(d * r);
  return remap(
      in, shape,
      sourceIndices(in.shape, shape, [&](ArrayRef<int64_t> index, size_t d) {
        return index[d] % in.shape[d];
      }));
}

TensorData constfold::concat(ArrayRef<const TensorData *> inputs,
                             int64_t axis) {
  const TensorData &first = *inputs.front();
  TensorData out;
  out.elemType = first.elemType;
  out.shape = first.shape;
  out.shape[axis] = 0;
  for (const TensorData *t : inputs)
    out.shape[axis] += t->shape[axis];
  // Row-major: each input contributes one contiguous run per outer index.
  int64_t outer = elementCount(ArrayRef<int64_t>(first.shape).take_front(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (const TensorData *t : inputs) {
      int64_t run = elementCount(ArrayRef<int64_t>(t->shape).drop_front(axis));
      if (out.isFloat())
        out.f32.insert(out.f32.end(), t->f32.begin() + o * run,
                       t->f32.begin() + (o + 1) * run);
      else
        out.i64.insert(out.i64.end(), t->i64.begin() + o * run,
                       t->i64.begin() + (o + 1) * run);
    }
  return out;
}

//===----------------------------------------------------------------------===//
// Constant producers
//===----------------------------------------------------------------------===//

LogicalResult Importer::importConstant(const Node &node) {
  // Materialized lazily (operand()), so shape tensors that only feed shape
  // arithmetic never become weights.
  TensorData t;
  bool found = false;
  for (const OnnxAttr &a : node.attrs) {
    found = true;
    if (a.name == "value" && a.kind == OnnxAttr::Tensor) {
      // Strings and other types kiln keeps no data for.
      if ((int64_t)(a.t.f32.size() + a.t.i64.size()) != a.t.numElements())
        return unsupportedAttr(node, a,
                               std::string("(element type ") +
                                   elemTypeName(a.t.elemType) + ")");
      t = a.t;
    } else if (a.name == "value_float") {
      t.elemType = kFloat;
      t.f32 = {a.f};
    } else if (a.name == "value_floats") {
      t.elemType = kFloat;
      t.shape = {static_cast<int64_t>(a.floats.size())};
      t.f32 = a.floats;
    } else if (a.name == "value_int") {
      t.elemType = kInt64;
      t.i64 = {a.i};
    } else if (a.name == "value_ints") {
      t.elemType = kInt64;
      t.shape = {static_cast<int64_t>(a.ints.size())};
      t.i64 = a.ints;
    } else {
      return unsupportedAttr(node, a);
    }
  }
  if (!found)
    return nodeError(node) << "has no value";
  return setConstant(node, 0, std::move(t));
}

LogicalResult Importer::importConstantOfShape(const Node &node) {
  FailureOr<SmallVector<int64_t>> shape = intsInput(node, 0, "input");
  if (failed(shape) || failed(checkConstantShape(node, *shape)))
    return failure();
  TensorData t;
  t.shape.assign(shape->begin(), shape->end());
  t.elemType = kFloat;
  float f = 0;
  int64_t i = 0;
  if (const OnnxAttr *value = node.attr("value")) {
    if (value->kind != OnnxAttr::Tensor || value->t.numElements() != 1 ||
        !value->t.hasValues())
      return unsupportedAttr(node, *value, "(expects one number)");
    t.elemType = value->t.elemType;
    if (value->t.isFloat())
      f = value->t.f32.at(0);
    else if (!value->t.i64.empty())
      i = value->t.i64[0];
    else
      return unsupportedAttr(node, *value);
  }
  int64_t count = t.numElements();
  if (t.isFloat())
    t.f32.assign(count, f);
  else
    t.i64.assign(count, i);
  return setConstant(node, 0, std::move(t));
}

LogicalResult Importer::importShape(const Node &node) {
  // Every shape is static once imported, so Shape is always a constant.
  FailureOr<SmallVector<int64_t>> shape = inputShape(node, 0);
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  auto clampIndex = [&](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
  };
  int64_t start = clampIndex(getInt(node, "start", 0));
  int64_t end = clampIndex(getInt(node, "end", rank));
  TensorData t;
  t.elemType = kInt64;
  for (int64_t i = start; i < end; ++i)
    t.i64.push_back((*shape)[i]);
  t.shape = {static_cast<int64_t>(t.i64.size())};
  return setConstant(node, 0, std::move(t));
}

LogicalResult Importer::importRange(const Node &node) {
  if (!allInputsConstant(node))
    return nodeError(node) << "start, limit and delta must be constants";
  const TensorData *start = constant(node, 0), *limit = constant(node, 1),
                   *delta = constant(node, 2);
  for (const TensorData *t : {start, limit, delta})
    if (!t || t->numElements() != 1 || !t->hasValues())
      return nodeError(node) << "start, limit and delta must be scalars";
  if (start->isFloat() != limit->isFloat() ||
      start->isFloat() != delta->isFloat())
    return nodeError(node) << "start, limit and delta must have one type";
  // The element count first, so that a huge or endless range is refused
  // before anything is allocated; for integers exactly, in uint64.
  if (delta->isFloat() ? delta->f32[0] == 0 : delta->i64[0] == 0)
    return nodeError(node) << "delta is 0";
  double n;
  if (start->isFloat()) {
    double s = start->f32[0], l = limit->f32[0], d = delta->f32[0];
    n = std::ceil((l - s) / d);
    n = n < 0 ? 0 : n; // NaN stays NaN, refused below
  } else {
    int64_t s = start->i64[0], l = limit->i64[0], d = delta->i64[0];
    uint64_t span = d > 0 ? uint64_t(l) - uint64_t(s) : uint64_t(s) - uint64_t(l);
    uint64_t step = d > 0 ? uint64_t(d) : uint64_t(0) - uint64_t(d);
    bool empty = d > 0 ? l <= s : l >= s;
    n = empty ? 0 : double(span / step + (span % step != 0));
  }
  if (!(n <= double(kMaxFoldedElements)))
    return nodeError(node) << "the range would hold more than the 2^25 "
                           << "elements kiln computes at import";
  TensorData t;
  t.elemType = start->elemType;
  t.shape = {int64_t(n)};
  for (int64_t i = 0; i < t.shape[0]; ++i) {
    if (start->isFloat()) {
      t.f32.push_back(float(start->f32[0] + i * double(delta->f32[0])));
    } else {
      // Every element lies between start and limit; wrapping arithmetic
      // reaches it without overflowing on the way.
      t.i64.push_back(int64_t(uint64_t(start->i64[0]) +
                              uint64_t(i) * uint64_t(delta->i64[0])));
    }
  }
  return setConstant(node, 0, std::move(t));
}

/// Which element of `t` each element of a broadcast result of `shape` reads.
static std::vector<int64_t> positions(const TensorData &t,
                                      ArrayRef<int64_t> shape) {
  return constfold::broadcastIndices(t.shape, shape);
}

LogicalResult Importer::importWhere(const Node &node) {
  const TensorData *cond = constant(node, 0);
  if (!hasInput(node, 0))
    return nodeError(node) << "input 'condition' is missing";
  if (!cond)
    return nodeError(node) << "input 'condition' ('" << node.inputs[0]
                           << "') must be a constant; it is computed";
  if (cond->isFloat() || !cond->hasValues())
    return nodeError(node) << "input 'condition' must be boolean";
  SmallVector<SmallVector<int64_t>, 3> shapes;
  for (size_t i = 0; i < 3; ++i) {
    FailureOr<SmallVector<int64_t>> shape = inputShape(node, i);
    if (failed(shape))
      return failure();
    shapes.push_back(*shape);
  }
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes({shapes[0], shapes[1], shapes[2]});
  if (failed(shape))
    return nodeError(node) << "inputs " << shapeStr(shapes[0]) << ", "
                           << shapeStr(shapes[1]) << " and "
                           << shapeStr(shapes[2]) << " do not broadcast";
  // The selection is computed here, even for computed branches.
  if (failed(checkConstantShape(node, *shape)))
    return failure();
  std::vector<int64_t> pc = positions(*cond, *shape);

  if (allInputsConstant(node)) {
    const TensorData *x = constant(node, 1), *y = constant(node, 2);
    if (x->isFloat() != y->isFloat() || !x->hasValues() || !y->hasValues())
      return nodeError(node) << "X and Y differ in type";
    std::vector<int64_t> px = positions(*x, *shape), py = positions(*y, *shape);
    TensorData t;
    t.elemType = x->elemType;
    t.shape.assign(shape->begin(), shape->end());
    for (size_t i = 0; i < pc.size(); ++i) {
      bool c = cond->i64[pc[i]] != 0;
      if (x->isFloat())
        t.f32.push_back(c ? x->f32[px[i]] : y->f32[py[i]]);
      else
        t.i64.push_back(c ? x->i64[px[i]] : y->i64[py[i]]);
    }
    return setConstant(node, 0, std::move(t));
  }

  // A computed branch (masked_fill and the like): the selection is data
  // movement, so it is exact whatever the values. Both branches broadcast
  // to the result and flattened side by side; element i gathers from X
  // (index i) or Y (index N + i).
  int64_t count = 1;
  for (int64_t d : *shape)
    count *= d;
  SmallVector<Value, 2> flat;
  for (size_t i = 1; i < 3; ++i) {
    Value v = operand(node, i);
    if (v && shapes[i] != *shape)
      v = create<top::ExpandOp>(node,
                                subLoc(node, i == 1 ? "x_full" : "y_full"), v,
                                *shape, ArrayRef<int64_t>{});
    v = reshape(node, subLoc(node, i == 1 ? "x_flat" : "y_flat"), v, {count});
    if (!v)
      return failure();
    flat.push_back(v);
  }
  Value both =
      create<top::ConcatOp>(node, subLoc(node, "both"), flat, uint64_t(0));
  if (!both)
    return failure();
  SmallVector<int64_t> indices;
  for (int64_t i = 0; i < count; ++i)
    indices.push_back(cond->i64[pc[i]] != 0 ? i : count + i);
  return setValue(node, 0,
                  create<top::GatherOp>(node, nodeLoc(node), both, uint64_t(0),
                                        indices, *shape));
}

LogicalResult Importer::importEqual(const Node &node) {
  if (!allInputsConstant(node))
    return nodeError(node) << "only constant inputs are supported";
  const TensorData *a = constant(node, 0), *b = constant(node, 1);
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes({a->shape, b->shape});
  if (failed(shape) || a->isFloat() != b->isFloat())
    return nodeError(node) << "inputs do not broadcast or differ in type";
  std::vector<int64_t> pa = positions(*a, *shape), pb = positions(*b, *shape);
  TensorData t;
  t.elemType = kBool;
  t.shape.assign(shape->begin(), shape->end());
  for (size_t i = 0; i < pa.size(); ++i)
    t.i64.push_back(a->isFloat() ? a->f32[pa[i]] == b->f32[pb[i]]
                                 : a->i64[pa[i]] == b->i64[pb[i]]);
  return setConstant(node, 0, std::move(t));
}

/// `v` wrapped into integer type `type` (two's complement, as C casts do).
static int64_t wrapInt(int64_t v, int32_t type) {
  switch (type) {
  case kInt8:
    return int8_t(v);
  case kUInt8:
    return uint8_t(v);
  case kInt16:
    return int16_t(v);
  case kUInt16:
    return uint16_t(v);
  case kInt32:
    return int32_t(v);
  case kUInt32:
    return uint32_t(v);
  case kBool:
    return v != 0;
  default:
    return v;
  }
}

LogicalResult Importer::importCast(const Node &node) {
  const OnnxAttr *to = node.attr("to");
  if (!to || to->kind != OnnxAttr::Int)
    return nodeError(node) << "has no 'to' attribute";
  int32_t type = to->i;
  const TensorData *in = constant(node, 0);
  if (!in) {
    // Computed values are f32; between float types Cast changes nothing
    // kiln represents.
    if (isFloatElemType(type))
      return alias(node, 0, 0);
    return unsupportedAttr(node, *to,
                           std::string("(cast to ") + elemTypeName(type) +
                               " of a computed tensor)");
  }
  if (type == kString || elemTypeName(type) == std::string("unsupported"))
    return unsupportedAttr(node, *to);
  if ((int64_t)(in->f32.size() + in->i64.size()) != in->numElements())
    return nodeError(node) << "input '" << node.inputs[0] << "' of type "
                           << elemTypeName(in->elemType) << " is not supported";
  TensorData t;
  t.elemType = type;
  t.shape = in->shape;
  if (isFloatElemType(type)) {
    if (in->isFloat())
      t.f32 = in->f32;
    else
      t.f32.assign(in->i64.begin(), in->i64.end());
  } else if (in->isFloat()) {
    // Float to integer truncates toward zero; to bool tests for non-zero.
    for (float f : in->f32)
      t.i64.push_back(type == kBool ? f != 0
                                    : wrapInt(int64_t(std::trunc(f)), type));
  } else {
    for (int64_t v : in->i64)
      t.i64.push_back(wrapInt(v, type));
  }
  return setConstant(node, 0, std::move(t));
}

LogicalResult Importer::importIdentity(const Node &node) {
  return alias(node, 0, 0);
}

LogicalResult Importer::importDropout(const Node &node) {
  if (hasOutput(node, 1))
    return nodeError(node) << "the mask output is not supported";
  // Opset 12+ takes training_mode as an input; only a constant false is an
  // inference-mode Dropout.
  if (hasInput(node, 2)) {
    const TensorData *training = constant(node, 2);
    if (!training || training->i64.size() != 1 || training->i64[0] != 0)
      return nodeError(node) << "training_mode must be a constant false";
  }
  return alias(node, 0, 0);
}

} // namespace kiln::onnx_frontend
