//===- Elementwise.cpp - Reference unary, broadcast binary and batchnorm
//---===//

#include "Kernels.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

#include <cmath>

using namespace mlir;

namespace kiln::interp {

Tensor runRelu(const Tensor &input) {
  Tensor out{input.shape, input.data};
  for (float &v : out.data)
    v = relu(v);
  return out;
}

/// Row-major strides of `shape` aligned to the last `rank` dimensions, with
/// stride 0 along broadcast (size-1 or missing) dimensions.
static llvm::SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> shape,
                                                   size_t rank) {
  llvm::SmallVector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t dim = shape.size() - 1 - i;
    if (shape[dim] != 1)
      strides[rank - 1 - i] = stride;
    stride *= shape[dim];
  }
  return strides;
}

FailureOr<Tensor> runBroadcast(Operation *op, const Tensor &lhs,
                               const Tensor &rhs,
                               llvm::function_ref<float(float, float)> fn) {
  size_t rank = std::max(lhs.shape.size(), rhs.shape.size());
  Tensor out{std::vector<int64_t>(rank), {}};
  for (size_t i = 0; i < rank; ++i) {
    size_t offL = rank - lhs.shape.size(), offR = rank - rhs.shape.size();
    int64_t l = i < offL ? 1 : lhs.shape[i - offL];
    int64_t r = i < offR ? 1 : rhs.shape[i - offR];
    if (l != r && l != 1 && r != 1)
      return op->emitOpError("operands [")
             << lhs.shape << "] and [" << rhs.shape << "] do not broadcast";
    out.shape[i] = l == 1 ? r : l;
  }
  llvm::SmallVector<int64_t> strideL = broadcastStrides(lhs.shape, rank);
  llvm::SmallVector<int64_t> strideR = broadcastStrides(rhs.shape, rank);

  int64_t count = out.numElements();
  out.data.reserve(count);
  llvm::SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offL = 0, offR = 0;
    for (size_t d = 0; d < rank; ++d) {
      offL += index[d] * strideL[d];
      offR += index[d] * strideR[d];
    }
    out.data.push_back(fn(lhs.data[offL], rhs.data[offR]));
    // Advance the multi-index like an odometer, last dimension fastest.
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out.shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// The scalar function of a Top binary op. Max and min let NaN through, as
/// numpy's maximum and minimum do.
static float (*binaryFunction(Operation *op))(float, float) {
  return llvm::TypeSwitch<Operation *, float (*)(float, float)>(op)
      .Case([](top::AddOp) { return [](float a, float b) { return a + b; }; })
      .Case([](top::SubOp) { return [](float a, float b) { return a - b; }; })
      .Case([](top::MulOp) { return [](float a, float b) { return a * b; }; })
      .Case([](top::DivOp) { return [](float a, float b) { return a / b; }; })
      .Case([](top::PowOp) {
        return [](float a, float b) { return float(std::pow(double(a), b)); };
      })
      .Case([](top::MaxOp) {
        return [](float a, float b) {
          return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
        };
      })
      .Case([](top::MinOp) {
        return [](float a, float b) {
          return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
        };
      })
      .Case([](top::PReluOp) {
        return [](float x, float slope) { return x < 0 ? x * slope : x; };
      })
      .Default([](Operation *) { return nullptr; });
}

FailureOr<Tensor> runBinary(Operation *op, const Tensor &lhs,
                            const Tensor &rhs) {
  float (*fn)(float, float) = binaryFunction(op);
  if (!fn)
    return op->emitOpError("is not a binary op");
  FailureOr<Tensor> out = runBroadcast(op, lhs, rhs, fn);
  auto doRelu = op->getAttrOfType<BoolAttr>("do_relu");
  if (succeeded(out) && doRelu && doRelu.getValue())
    for (float &v : out->data)
      v = relu(v);
  return out;
}

/// One unary function of top.active, evaluated in double.
static double activate(top::ActiveMode mode, double x, double a, double b) {
  using top::ActiveMode;
  switch (mode) {
  case ActiveMode::Relu:
    return x < 0 ? 0.0 : x;
  case ActiveMode::LeakyRelu:
    return x < 0 ? a * x : x;
  case ActiveMode::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  case ActiveMode::Tanh:
    return std::tanh(x);
  case ActiveMode::Exp:
    return std::exp(x);
  case ActiveMode::Log:
    return std::log(x);
  case ActiveMode::Sqrt:
    return std::sqrt(x);
  case ActiveMode::Rsqrt:
    return 1.0 / std::sqrt(x);
  case ActiveMode::Reciprocal:
    return 1.0 / x;
  case ActiveMode::Abs:
    return std::fabs(x);
  case ActiveMode::Neg:
    return -x;
  case ActiveMode::Erf:
    return std::erf(x);
  case ActiveMode::Elu:
    return x > 0 ? x : a * std::expm1(x);
  case ActiveMode::Selu:
    return b * (x > 0 ? x : a * std::expm1(x));
  case ActiveMode::Softplus:
    // log(1 + e^x) without overflowing e^x for large x.
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  case ActiveMode::HardSigmoid:
    return std::max(0.0, std::min(1.0, a * x + b));
  case ActiveMode::HardSwish:
    return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
  case ActiveMode::Clip:
    // Written so a NaN input stays NaN.
    return x < a ? a : (x > b ? b : x);
  case ActiveMode::Square:
    return x * x;
  case ActiveMode::Gelu:
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  case ActiveMode::Scale:
    return a * x + b;
  case ActiveMode::Silu:
    return x / (1.0 + std::exp(-x));
  case ActiveMode::Mish:
    return x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
  }
  llvm_unreachable("unknown active mode");
}

FailureOr<Tensor> runActive(top::ActiveOp op, const Tensor &input) {
  double a = op.getAlpha().convertToDouble(),
         b = op.getBeta().convertToDouble();
  Tensor out{input.shape, {}};
  out.data.reserve(input.data.size());
  const top::ActiveMode mode = op.getMode();
  for (float x : input.data)
    out.data.push_back(float(activate(mode, x, a, b)));
  return out;
}

FailureOr<Tensor> runBatchNorm(top::BatchNormOp op, const Tensor &input,
                               const Tensor &scale, const Tensor &bias,
                               const Tensor &mean, const Tensor &variance) {
  if (input.shape.size() < 2)
    return op.emitOpError("expects an [N, C, ...] input");
  int64_t channels = input.shape[1];
  for (const Tensor *param : {&scale, &bias, &mean, &variance})
    if (param->numElements() != channels)
      return op.emitOpError("parameters must have ")
             << channels << " elements, one per channel";
  int64_t planeSize = product(ArrayRef<int64_t>(input.shape).drop_front(2));
  double epsilon = op.getEpsilon().convertToDouble();
  Tensor out{input.shape, {}};
  out.data.reserve(input.data.size());
  for (int64_t i = 0, e = input.numElements(); i < e; ++i) {
    int64_t c = (i / planeSize) % channels;
    double normalized = (double(input.data[i]) - mean.data[c]) /
                        std::sqrt(double(variance.data[c]) + epsilon);
    out.data.push_back(float(normalized * scale.data[c] + bias.data[c]));
  }
  return out;
}

} // namespace kiln::interp
