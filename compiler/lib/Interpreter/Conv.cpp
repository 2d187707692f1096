//===- Conv.cpp - Reference 2-D convolution and transposed convolution ----===//

#include "Kernels.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Parallel.h"

#include <algorithm>

#include <algorithm>
#include <vector>

using namespace mlir;

namespace kiln::interp {

int64_t windowOutput(int64_t in, int64_t kernel, int64_t stride,
                     int64_t dilation, int64_t padBegin, int64_t padEnd,
                     bool ceilMode) {
  // As top's shape inference (TopOps.cpp): a negative span still gives one
  // output with ceil_mode when the window starts inside.
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1;
  int64_t out = (ceilMode ? llvm::divideCeilSigned(span, stride)
                          : llvm::divideFloorSigned(span, stride)) + 1;
  if (ceilMode && out > 0 && (out - 1) * stride >= in + padBegin)
    --out;
  return std::max<int64_t>(out, 0);
}

FailureOr<Tensor> runConv(top::ConvOp op, const Tensor &input,
                          const Tensor &filter, const Tensor *bias) {
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                    pads = op.getPads(), dilations = op.getDilations();
  if (input.shape.size() != 4 || filter.shape.size() != 4)
    return op.emitOpError("expects a 4-D input and a 4-D filter");
  if (strides.size() != 2 || pads.size() != 4 || dilations.size() != 2)
    return op.emitOpError("expects 2 strides, 4 pads and 2 dilations");
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return op.emitOpError("strides and dilations must be positive");
  int64_t n = input.shape[0], ic = input.shape[1], ih = input.shape[2],
          iw = input.shape[3];
  int64_t oc = filter.shape[0], icg = filter.shape[1], kh = filter.shape[2],
          kw = filter.shape[3];
  int64_t group = op.getGroup();
  if (group < 1 || oc % group != 0 || icg * group != ic)
    return op.emitOpError("input [")
           << input.shape << "] does not match filter [" << filter.shape
           << "] with group " << group;
  // The filter may be computed, so its shape is only known now.
  if (!kernel.empty() &&
      (kernel.size() != 2 || kernel[0] != kh || kernel[1] != kw))
    return op.emitOpError("kernel_shape [")
           << kernel << "] does not match filter [" << filter.shape << "]";
  if (bias && bias->numElements() != oc)
    return op.emitOpError("bias has ")
           << bias->numElements() << " elements, expected " << oc;

  int64_t oh = windowOutput(ih, kh, strides[0], dilations[0], pads[0], pads[2],
                            /*ceilMode=*/false);
  int64_t ow = windowOutput(iw, kw, strides[1], dilations[1], pads[1], pads[3],
                            /*ceilMode=*/false);
  if (oh <= 0 || ow <= 0)
    return op.emitOpError("window is larger than the padded input");

  Tensor out{{n, oc, oh, ow}, {}};
  out.data.resize(out.numElements());
  int64_t ocg = oc / group;
  // Each output accumulates bias + sum over (c, ky, kx) in that order, in
  // double; a row of outputs at a time so the inner loop vectorizes. Taps
  // that fall on padding are never visited. Output channels are independent,
  // so they run on LLVM's thread pool with the same bits, up to four of one
  // group at a time: each input row loaded serves all of them.
  const int64_t sx = strides[1], dx = dilations[1], px = pads[1];
  const bool doRelu = op.getDoRelu();
  constexpr int64_t kBlock = 4;
  const int64_t blocksPerGroup = (ocg + kBlock - 1) / kBlock;
  llvm::parallelFor(0, n * group * blocksPerGroup, [&](size_t job) {
    int64_t b = job / (group * blocksPerGroup);
    int64_t g = job / blocksPerGroup % group;
    int64_t first = g * ocg + job % blocksPerGroup * kBlock;
    int64_t count = std::min(kBlock, (g + 1) * ocg - first);
    int64_t firstIc = g * icg;
    std::vector<double> rows(kBlock * ow);
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t j = 0; j < count; ++j)
        std::fill(&rows[j * ow], &rows[(j + 1) * ow], bias ? double(bias->data[first + j]) : 0.0);
      for (int64_t c = 0; c < icg; ++c)
        for (int64_t ky = 0; ky < kh; ++ky) {
          int64_t iy = y * strides[0] - pads[0] + ky * dilations[0];
          if (iy < 0 || iy >= ih)
            continue;
          const float *in = &input.data[((b * ic + firstIc + c) * ih + iy) * iw];
          for (int64_t kx = 0; kx < kw; ++kx) {
            // Outputs x whose input x * sx + off lies in [0, iw).
            int64_t off = kx * dx - px;
            int64_t lo = off >= 0 ? 0 : (-off + sx - 1) / sx;
            int64_t hi = iw - 1 - off < 0 ? 0 : std::min(ow, (iw - 1 - off) / sx + 1);
            double w[kBlock] = {};
            for (int64_t j = 0; j < count; ++j)
              w[j] = filter.data[(((first + j) * icg + c) * kh + ky) * kw + kx];
            if (count == kBlock) {
              double *r0 = &rows[0], *r1 = &rows[ow], *r2 = &rows[2 * ow], *r3 = &rows[3 * ow];
              for (int64_t x = lo; x < hi; ++x) {
                double v = in[x * sx + off];
                r0[x] += v * w[0];
                r1[x] += v * w[1];
                r2[x] += v * w[2];
                r3[x] += v * w[3];
              }
            } else {
              for (int64_t j = 0; j < count; ++j)
                for (int64_t x = lo; x < hi; ++x)
                  rows[j * ow + x] += double(in[x * sx + off]) * w[j];
            }
          }
        }
      for (int64_t j = 0; j < count; ++j) {
        float *dst = out.data.data() + ((b * oc + first + j) * oh + y) * ow;
        for (int64_t x = 0; x < ow; ++x) {
          float r = float(rows[j * ow + x]);
          dst[x] = doRelu ? relu(r) : r;
        }
      }
    }
  });
  return out;
}

FailureOr<Tensor> runDeconv(top::DeconvOp op, const Tensor &input,
                            const Tensor &filter, const Tensor *bias) {
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                    pads = op.getPads(), dilations = op.getDilations(),
                    outPad = op.getOutputPadding();
  if (input.shape.size() != 4 || filter.shape.size() != 4)
    return op.emitOpError("expects a 4-D input and a 4-D filter");
  if (strides.size() != 2 || pads.size() != 4 || dilations.size() != 2 ||
      outPad.size() != 2)
    return op.emitOpError("expects 2 strides, 4 pads, 2 dilations and 2 "
                          "output paddings");
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return op.emitOpError("strides and dilations must be positive");
  int64_t n = input.shape[0], ic = input.shape[1], ih = input.shape[2],
          iw = input.shape[3];
  int64_t kh = filter.shape[2], kw = filter.shape[3];
  int64_t group = op.getGroup();
  bool reordered = op.getFilterReordered();
  // [ic, oc/group, kh, kw] as ONNX stores it, [oc, ic/group, kh, kw] once
  // reordered; the filter may be computed, so this is checked now.
  int64_t oc = reordered ? filter.shape[0] : filter.shape[1] * group;
  int64_t filterIc = reordered ? filter.shape[1] * group : filter.shape[0];
  if (group < 1 || filterIc != ic || ic % group || oc % group)
    return op.emitOpError("input [")
           << input.shape << "] does not match filter [" << filter.shape
           << "] with group " << group
           << (reordered ? " (reordered)" : " (ONNX layout)");
  if (!kernel.empty() &&
      (kernel.size() != 2 || kernel[0] != kh || kernel[1] != kw))
    return op.emitOpError("kernel_shape [")
           << kernel << "] does not match filter [" << filter.shape << "]";
  if (bias && bias->numElements() != oc)
    return op.emitOpError("bias has ")
           << bias->numElements() << " elements, expected " << oc;
  int64_t oh = (ih - 1) * strides[0] - pads[0] - pads[2] +
               dilations[0] * (kh - 1) + 1 + outPad[0];
  int64_t ow = (iw - 1) * strides[1] - pads[1] - pads[3] +
               dilations[1] * (kw - 1) + 1 + outPad[1];
  if (oh <= 0 || ow <= 0)
    return op.emitOpError("window attributes give no output");

  int64_t icg = ic / group, ocg = oc / group;
  auto tap = [&](int64_t c, int64_t o, int64_t ky, int64_t kx) {
    int64_t index = reordered ? ((o * icg + c % icg) * kh + ky) * kw + kx
                              : ((c * ocg + o % ocg) * kh + ky) * kw + kx;
    return double(filter.data[index]);
  };
  // Scatter form: input (iy, ix) times tap (ky, kx) adds to output
  // (iy * stride + ky * dilation - pad_begin), when that is inside. Each
  // output adds its products in (c, iy, ix) order; a row of inputs at a time
  // (an input reaches an output through one tap at most, so taking kx from
  // the last keeps ix ascending for every output).
  // An output row is kept as its W stride's phases, x = j * sx + p at
  // p * phaseW + j, so a tap adds a row of inputs to consecutive
  // accumulators (the loop vectorizes) in the same order.
  // Output channels are independent: LLVM's thread pool, the same bits.
  const int64_t sx = strides[1], dx = dilations[1], px = pads[1];
  const int64_t phaseW = (ow + sx - 1) / sx, rowW = phaseW * sx;
  std::vector<double> acc(n * oc * oh * rowW, 0.0);
  llvm::parallelFor(0, n * oc, [&](size_t job) {
    int64_t b = job / oc, o = job % oc;
    {
      const int64_t g = o / ocg;
      for (int64_t c = g * icg; c < (g + 1) * icg; ++c)
        for (int64_t iy = 0; iy < ih; ++iy) {
          const float *in = &input.data[((b * ic + c) * ih + iy) * iw];
          for (int64_t ky = 0; ky < kh; ++ky) {
            int64_t y = iy * strides[0] + ky * dilations[0] - pads[0];
            if (y < 0 || y >= oh)
              continue;
            double *row = &acc[((b * oc + o) * oh + y) * rowW];
            for (int64_t kx = kw - 1; kx >= 0; --kx) {
              // Inputs ix whose output ix * sx + off lies in [0, ow).
              int64_t off = kx * dx - px;
              int64_t lo = off >= 0 ? 0 : (-off + sx - 1) / sx;
              int64_t hi = ow - 1 - off < 0 ? 0 : std::min(iw, (ow - 1 - off) / sx + 1);
              if (lo >= hi)
                continue;
              // Output ix * sx + off is phase p, column ix + shift.
              int64_t shift = llvm::divideFloorSigned(off, sx), p = off - shift * sx;
              double *dst = row + p * phaseW + shift;
              const double w = tap(c, o, ky, kx);
              for (int64_t ix = lo; ix < hi; ++ix)
                dst[ix] += double(in[ix]) * w;
            }
          }
        }
    }
  });
  Tensor out{{n, oc, oh, ow}, {}};
  out.data.resize(out.numElements());
  const bool doRelu = op.getDoRelu();
  for (int64_t r = 0; r < n * oc * oh; ++r) {
    const double *row = &acc[r * rowW];
    double add = bias ? bias->data[(r / oh) % oc] : 0.0;
    for (int64_t x = 0; x < ow; ++x) {
      float v = float(row[x % sx * phaseW + x / sx] + add);
      out.data[r * ow + x] = doRelu ? relu(v) : v;
    }
  }
  return out;
}

} // namespace kiln::interp
