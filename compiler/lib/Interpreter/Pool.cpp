//===- Pool.cpp - Reference max, average and global pooling ---------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::interp {

namespace {
/// The geometry of a 2-D pooling window over an NCHW input.
struct PoolGeometry {
  int64_t n, c, ih, iw, oh, ow;
  int64_t kh, kw, sh, sw;
  int64_t padTop, padLeft, padBottom, padRight;
};
} // namespace

template <typename PoolOp>
static FailureOr<PoolGeometry> poolGeometry(PoolOp op, const Tensor &input) {
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                    pads = op.getPads();
  if (input.shape.size() != 4)
    return op.emitOpError("expects a 4-D NCHW input");
  if (kernel.size() != 2 || strides.size() != 2 || pads.size() != 4)
    return op.emitOpError("expects a 2-D kernel, 2 strides and 4 pads");
  if (llvm::any_of(kernel, [](int64_t k) { return k < 1; }) ||
      llvm::any_of(strides, [](int64_t s) { return s < 1; }))
    return op.emitOpError("kernel and strides must be positive");
  PoolGeometry g;
  g.n = input.shape[0];
  g.c = input.shape[1];
  g.ih = input.shape[2];
  g.iw = input.shape[3];
  g.kh = kernel[0];
  g.kw = kernel[1];
  g.sh = strides[0];
  g.sw = strides[1];
  g.padTop = pads[0];
  g.padLeft = pads[1];
  g.padBottom = pads[2];
  g.padRight = pads[3];
  g.oh = windowOutput(g.ih, g.kh, g.sh, 1, g.padTop, g.padBottom,
                      op.getCeilMode());
  g.ow = windowOutput(g.iw, g.kw, g.sw, 1, g.padLeft, g.padRight,
                      op.getCeilMode());
  if (g.oh <= 0 || g.ow <= 0)
    return op.emitOpError("window is larger than the padded input");
  return g;
}

/// Calls `window(plane, y0, x0)` for every output element, where `plane` is
/// the input's (n, c) plane and (y0, x0) the window's top-left corner in
/// input coordinates (negative inside the top/left padding).
template <typename WindowFn>
static Tensor poolEach(const PoolGeometry &g, const Tensor &input,
                       WindowFn window) {
  Tensor out{{g.n, g.c, g.oh, g.ow}, {}};
  out.data.reserve(out.numElements());
  for (int64_t p = 0; p < g.n * g.c; ++p) {
    const float *plane = input.data.data() + p * g.ih * g.iw;
    for (int64_t y = 0; y < g.oh; ++y)
      for (int64_t x = 0; x < g.ow; ++x)
        out.data.push_back(
            window(plane, y * g.sh - g.padTop, x * g.sw - g.padLeft));
  }
  return out;
}

FailureOr<Tensor> runMaxPool(top::MaxPoolOp op, const Tensor &input) {
  FailureOr<PoolGeometry> geometry = poolGeometry(op, input);
  if (failed(geometry))
    return failure();
  const PoolGeometry &g = *geometry;
  return poolEach(g, input, [&](const float *plane, int64_t y0, int64_t x0) {
    // Padding never wins: only elements inside the input are compared.
    int64_t yBegin = std::max<int64_t>(y0, 0), yEnd = std::min(y0 + g.kh, g.ih);
    int64_t xBegin = std::max<int64_t>(x0, 0), xEnd = std::min(x0 + g.kw, g.iw);
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t y = yBegin; y < yEnd; ++y)
      for (int64_t x = xBegin; x < xEnd; ++x) {
        float v = plane[y * g.iw + x];
        if (v > m || std::isnan(v)) // NaN sticks, as in PyTorch
          m = v;
      }
    return m;
  });
}

FailureOr<Tensor> runAvgPool(top::AvgPoolOp op, const Tensor &input) {
  FailureOr<PoolGeometry> geometry = poolGeometry(op, input);
  if (failed(geometry))
    return failure();
  const PoolGeometry &g = *geometry;
  bool includePad = op.getCountIncludePad();
  return poolEach(g, input, [&](const float *plane, int64_t y0, int64_t x0) {
    int64_t yBegin = std::max<int64_t>(y0, 0), yEnd = std::min(y0 + g.kh, g.ih);
    int64_t xBegin = std::max<int64_t>(x0, 0), xEnd = std::min(x0 + g.kw, g.iw);
    double sum = 0;
    for (int64_t y = yBegin; y < yEnd; ++y)
      for (int64_t x = xBegin; x < xEnd; ++x)
        sum += plane[y * g.iw + x];
    // Pads count when asked, but the part of a ceil_mode window that hangs
    // past the end padding never does.
    int64_t count = includePad
                        ? (std::min(y0 + g.kh, g.ih + g.padBottom) - y0) *
                              (std::min(x0 + g.kw, g.iw + g.padRight) - x0)
                        : (yEnd - yBegin) * (xEnd - xBegin);
    return count > 0 ? float(sum / count) : 0.0f;
  });
}

FailureOr<Tensor> runGlobalAvgPool(top::GlobalAvgPoolOp op,
                                   const Tensor &input) {
  if (input.shape.size() < 3)
    return op.emitOpError("expects an [N, C, spatial...] input");
  Tensor out{{input.shape[0], input.shape[1]}, {}};
  out.shape.resize(input.shape.size(), 1);
  int64_t planes = input.shape[0] * input.shape[1];
  int64_t size = product(ArrayRef<int64_t>(input.shape).drop_front(2));
  out.data.reserve(planes);
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < size; ++i)
      sum += input.data[p * size + i];
    out.data.push_back(size > 0 ? float(sum / size) : 0.0f);
  }
  return out;
}

FailureOr<Tensor> runGlobalMaxPool(top::GlobalMaxPoolOp op,
                                   const Tensor &input) {
  if (input.shape.size() < 3)
    return op.emitOpError("expects an [N, C, spatial...] input");
  Tensor out{{input.shape[0], input.shape[1]}, {}};
  out.shape.resize(input.shape.size(), 1);
  int64_t planes = input.shape[0] * input.shape[1];
  int64_t size = product(ArrayRef<int64_t>(input.shape).drop_front(2));
  out.data.reserve(planes);
  for (int64_t p = 0; p < planes; ++p) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < size; ++i) {
      float v = input.data[p * size + i];
      if (v > m || std::isnan(v))
        m = v;
    }
    out.data.push_back(m);
  }
  return out;
}

} // namespace kiln::interp
