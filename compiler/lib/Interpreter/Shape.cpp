//===- Shape.cpp - Reference reshape and concat ---------------------------===//

#include "Kernels.h"

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

} // namespace kiln::interp
