//===- Reduce.cpp - Reference reductions and softmax ----------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::interp {

FailureOr<Tensor> runReduce(top::ReduceOp op, const Tensor &input) {
  int64_t rank = input.shape.size();
  ArrayRef<int64_t> axes = op.getAxes();
  SmallVector<bool> reduced(rank, false);
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return op.emitOpError("axis ") << axis << " is out of range";
    reduced[axis] = true;
  }
  // Accumulate with the reduced axes collapsed to extent 1, then drop them
  // from the shape unless keepdims.
  std::vector<int64_t> kept(input.shape);
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      kept[d] = 1;
  SmallVector<int64_t> keptStrides = rowMajorStrides(kept);
  int64_t outCount = product(kept);

  using top::ReduceMode;
  ReduceMode mode = op.getMode();
  double init =
      mode == ReduceMode::Max   ? -std::numeric_limits<double>::infinity()
      : mode == ReduceMode::Min ? std::numeric_limits<double>::infinity()
                                : 0.0;
  std::vector<double> acc(outCount, init);
  int64_t flat = 0;
  forEachIndex(input.shape, [&](ArrayRef<int64_t> index) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        o += index[d] * keptStrides[d];
    double x = input.data[flat++];
    double &a = acc[o];
    switch (mode) {
    case ReduceMode::Sum:
    case ReduceMode::Mean:
      a += x;
      break;
    case ReduceMode::L2:
    case ReduceMode::SumSquare:
      a += x * x;
      break;
    case ReduceMode::Max:
      a = std::isnan(x) || x > a ? x : a; // NaN sticks
      break;
    case ReduceMode::Min:
      a = std::isnan(x) || x < a ? x : a;
      break;
    }
  });

  int64_t count = input.numElements() / std::max<int64_t>(outCount, 1);
  Tensor out;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[d] || op.getKeepdims())
      out.shape.push_back(kept[d]);
  out.data.reserve(outCount);
  for (double a : acc) {
    if (mode == ReduceMode::Mean)
      a /= double(count);
    else if (mode == ReduceMode::L2)
      a = std::sqrt(a);
    out.data.push_back(float(a));
  }
  return out;
}

FailureOr<Tensor> runSoftmax(top::SoftmaxOp op, const Tensor &input) {
  int64_t rank = input.shape.size();
  int64_t axis = op.getAxis();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return op.emitOpError("axis ") << op.getAxis() << " is out of range";
  // [outer, extent, inner] around the axis.
  int64_t extent = input.shape[axis];
  int64_t inner = product(ArrayRef<int64_t>(input.shape).drop_front(axis + 1));
  int64_t outer = product(ArrayRef<int64_t>(input.shape).take_front(axis));
  Tensor out{input.shape, std::vector<float>(input.data.size())};
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * extent + k) * inner + i; };
      // Subtracting the maximum keeps exp() finite.
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < extent; ++k)
        max = std::max<double>(max, input.data[at(k)]);
      double sum = 0;
      for (int64_t k = 0; k < extent; ++k)
        sum += std::exp(input.data[at(k)] - max);
      for (int64_t k = 0; k < extent; ++k) {
        double shifted = input.data[at(k)] - max;
        out.data[at(k)] = float(op.getLog() ? shifted - std::log(sum)
                                            : std::exp(shifted) / sum);
      }
    }
  return out;
}

} // namespace kiln::interp
