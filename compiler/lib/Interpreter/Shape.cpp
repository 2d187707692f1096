//===- Shape.cpp - Reference reshape, concat and data movement ------------===//

#include "Kernels.h"

#include <utility>

using namespace mlir;

namespace kiln::interp {

FailureOr<Tensor> runReshape(top::ReshapeOp op, const Tensor &input) {
  // ONNX Reshape: 0 copies the input's dimension, one -1 takes what is left.
  Tensor out{{}, input.data};
  int64_t known = 1, inferred = -1;
  for (auto [i, dim] : llvm::enumerate(op.getShape())) {
    int64_t d = dim == 0 && i < input.shape.size() ? input.shape[i] : dim;
    if (d == -1) {
      if (inferred >= 0)
        return op.emitOpError("at most one dimension may be -1");
      inferred = static_cast<int64_t>(i);
      d = 1;
    } else if (d < 0) {
      return op.emitOpError("invalid dimension ") << d;
    } else {
      known *= d;
    }
    out.shape.push_back(d);
  }
  int64_t total = input.numElements();
  if (inferred >= 0 && known > 0)
    out.shape[inferred] = total / known;
  if (out.numElements() != total)
    return op.emitOpError("cannot reshape [")
           << input.shape << "] to [" << op.getShape() << "]";
  return out;
}

FailureOr<Tensor> runConcat(top::ConcatOp op, ArrayRef<const Tensor *> inputs) {
  if (inputs.empty())
    return op.emitOpError("expects at least one input");
  const std::vector<int64_t> &first = inputs.front()->shape;
  int64_t rank = first.size();
  int64_t axis = op.getAxis();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return op.emitOpError("axis ") << op.getAxis() << " is out of range";

  Tensor out{first, {}};
  out.shape[axis] = 0;
  for (const Tensor *t : inputs) {
    bool same = static_cast<int64_t>(t->shape.size()) == rank;
    for (int64_t d = 0; same && d < rank; ++d)
      same = d == axis || t->shape[d] == first[d];
    if (!same)
      return op.emitOpError("input [") << t->shape << "] does not match ["
                                       << first << "] outside axis " << axis;
    out.shape[axis] += t->shape[axis];
  }

  // Row-major: each input contributes one contiguous run per outer index.
  int64_t outer = product(ArrayRef<int64_t>(first).take_front(axis));
  out.data.reserve(out.numElements());
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor *t : inputs) {
      int64_t run = product(ArrayRef<int64_t>(t->shape).drop_front(axis));
      auto begin = t->data.begin() + o * run;
      out.data.insert(out.data.end(), begin, begin + run);
    }
  return out;
}

FailureOr<Tensor> runTranspose(top::TransposeOp op, const Tensor &input) {
  ArrayRef<int64_t> perm = op.getPerm();
  size_t rank = input.shape.size();
  SmallVector<bool> seen(rank, false);
  if (perm.size() != rank || llvm::any_of(perm, [&](int64_t p) {
        return p < 0 || p >= (int64_t)rank || std::exchange(seen[p], true);
      }))
    return op.emitOpError("perm [") << perm << "] is not a permutation of "
                                    << "rank " << rank;
  SmallVector<int64_t> inStrides = rowMajorStrides(input.shape);
  Tensor out;
  for (int64_t p : perm)
    out.shape.push_back(input.shape[p]);
  out.data.reserve(input.data.size());
  // Output dimension i walks input dimension perm[i].
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index) {
    int64_t offset = 0;
    for (size_t i = 0; i < rank; ++i)
      offset += index[i] * inStrides[perm[i]];
    out.data.push_back(input.data[offset]);
  });
  return out;
}

FailureOr<Tensor> runSlice(top::SliceOp op, const Tensor &input) {
  ArrayRef<int64_t> starts = op.getStarts(), ends = op.getEnds(),
                    steps = op.getSteps();
  size_t rank = input.shape.size();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    return op.emitOpError("expects one start, end and step per dimension");
  Tensor out;
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = top::sliceExtent(starts[d], ends[d], steps[d]);
    // Every element taken must lie inside the input.
    int64_t last = starts[d] + (extent - 1) * steps[d];
    if (steps[d] == 0 ||
        (extent > 0 && (starts[d] < 0 || starts[d] >= input.shape[d] ||
                        last < 0 || last >= input.shape[d])))
      return op.emitOpError("dimension ")
             << d << " slices outside [0, " << input.shape[d] << ")";
    out.shape.push_back(extent);
  }
  SmallVector<int64_t> inStrides = rowMajorStrides(input.shape);
  out.data.reserve(out.numElements());
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset += (starts[d] + index[d] * steps[d]) * inStrides[d];
    out.data.push_back(input.data[offset]);
  });
  return out;
}

FailureOr<Tensor> runGather(top::GatherOp op, const Tensor &input) {
  int64_t axis = op.getAxis();
  if (axis < 0 || axis >= (int64_t)input.shape.size())
    return op.emitOpError("axis ") << axis << " is out of range";
  ArrayRef<int64_t> indices = op.getIndices();
  int64_t extent = input.shape[axis];
  if (llvm::any_of(indices, [&](int64_t i) { return i < 0 || i >= extent; }))
    return op.emitOpError("an index is out of range for extent ") << extent;
  // [outer, extent, inner] -> [outer, indices, inner].
  int64_t outer = product(ArrayRef<int64_t>(input.shape).take_front(axis));
  int64_t inner = product(ArrayRef<int64_t>(input.shape).drop_front(axis + 1));
  Tensor out;
  out.shape.assign(input.shape.begin(), input.shape.begin() + axis);
  out.shape.insert(out.shape.end(), op.getIndicesShape().begin(),
                   op.getIndicesShape().end());
  out.shape.insert(out.shape.end(), input.shape.begin() + axis + 1,
                   input.shape.end());
  if (out.numElements() != outer * (int64_t)indices.size() * inner)
    return op.emitOpError("indices_shape does not match the indices");
  out.data.reserve(out.numElements());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : indices) {
      auto begin = input.data.begin() + (o * extent + index) * inner;
      out.data.insert(out.data.end(), begin, begin + inner);
    }
  return out;
}

FailureOr<Tensor> runExpand(top::ExpandOp op, const Tensor &input) {
  size_t inRank = input.shape.size();
  SmallVector<int64_t> inStrides = rowMajorStrides(input.shape);
  Tensor out;
  if (!op.getRepeats().empty()) {
    // Tile: output index i along a dimension reads input index i % extent.
    ArrayRef<int64_t> repeats = op.getRepeats();
    if (repeats.size() != inRank)
      return op.emitOpError("expects one repeat per dimension");
    for (size_t d = 0; d < inRank; ++d)
      out.shape.push_back(input.shape[d] * repeats[d]);
    out.data.reserve(out.numElements());
    forEachIndex(out.shape, [&](ArrayRef<int64_t> index) {
      int64_t offset = 0;
      for (size_t d = 0; d < inRank; ++d)
        offset += (index[d] % input.shape[d]) * inStrides[d];
      out.data.push_back(input.data[offset]);
    });
    return out;
  }
  // Broadcast (numpy rules, aligned at the last dimension).
  ArrayRef<int64_t> shape = op.getShape();
  size_t rank = std::max(inRank, shape.size());
  for (size_t i = 0; i < rank; ++i) {
    size_t offIn = rank - inRank, offShape = rank - shape.size();
    int64_t a = i < offIn ? 1 : input.shape[i - offIn];
    int64_t b = i < offShape ? 1 : shape[i - offShape];
    if (a != b && a != 1 && b != 1)
      return op.emitOpError("cannot broadcast [")
             << input.shape << "] to [" << shape << "]";
    out.shape.push_back(a == 1 ? b : a);
  }
  out.data.reserve(out.numElements());
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index) {
    int64_t offset = 0;
    for (size_t d = 0; d < inRank; ++d) {
      size_t o = d + rank - inRank;
      if (input.shape[d] != 1)
        offset += index[o] * inStrides[d];
    }
    out.data.push_back(input.data[offset]);
  });
  return out;
}

FailureOr<Tensor> runPad(top::PadOp op, const Tensor &input) {
  ArrayRef<int64_t> pads = op.getPads();
  size_t rank = input.shape.size();
  if (pads.size() != 2 * rank ||
      llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return op.emitOpError("expects ") << 2 * rank << " non-negative pads";
  top::PadMode mode = op.getMode();
  for (size_t d = 0; d < rank; ++d)
    if (mode == top::PadMode::Reflect &&
        (pads[d] >= input.shape[d] || pads[d + rank] >= input.shape[d]))
      return op.emitOpError("reflect pads must be smaller than the extent");
  Tensor out;
  for (size_t d = 0; d < rank; ++d)
    out.shape.push_back(input.shape[d] + pads[d] + pads[d + rank]);
  SmallVector<int64_t> inStrides = rowMajorStrides(input.shape);
  float value = float(op.getValue().convertToDouble());
  out.data.reserve(out.numElements());
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t i = index[d] - pads[d], n = input.shape[d];
      if (i < 0 || i >= n) {
        if (mode == top::PadMode::Constant) {
          offset = -1;
          break;
        }
        // Reflect mirrors around the edge element; edge repeats it.
        if (mode == top::PadMode::Reflect)
          i = i < 0 ? -i : 2 * (n - 1) - i;
        else
          i = i < 0 ? 0 : n - 1;
      }
      offset += i * inStrides[d];
    }
    out.data.push_back(offset < 0 ? value : input.data[offset]);
  });
  return out;
}

} // namespace kiln::interp
