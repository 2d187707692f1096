//===- Resize.cpp - Reference ONNX Resize over H and W --------------------===//
//
// Each output coordinate maps to a source coordinate with the model's
// coordinate_transformation_mode, then nearest picks one element (rounded by
// nearest_mode) and linear blends the two neighbours with the source clamped
// into the input, as ONNX Runtime does.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;

namespace kiln::interp {

using Coord = top::ResizeCoordMode;
using Nearest = top::ResizeNearestMode;

static double sourceCoord(int64_t o, int64_t in, int64_t out, double scale,
                          Coord coord) {
  switch (coord) {
  case Coord::HalfPixel:
    return (o + 0.5) / scale - 0.5;
  case Coord::Asymmetric:
    return o / scale;
  case Coord::AlignCorners:
    // ONNX's resized length is in * scale, not always the integer out.
    (void)out;
    return in * scale > 1 ? double(o) * (in - 1) / (in * scale - 1) : 0.0;
  case Coord::PytorchHalfPixel:
    break;
  }
  return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
}

static int64_t nearestIndex(double x, int64_t in, Nearest mode) {
  double floor = std::floor(x);
  bool half = x - floor == 0.5;
  double picked = mode == Nearest::Floor  ? floor
                  : mode == Nearest::Ceil ? std::ceil(x)
                  : half ? (mode == Nearest::RoundPreferFloor ? floor : floor + 1)
                         : std::round(x);
  return std::clamp<int64_t>(int64_t(picked), 0, in - 1);
}

namespace {
/// Where output coordinate o reads along one axis: two taps and the weight
/// of the second (nearest uses the first tap only).
struct Taps {
  int64_t first, second;
  double weight;
};
} // namespace

/// Nearest when the scale is exactly out / in (the model gave sizes): the
/// source coordinate as the exact fraction num / den of the integer lengths,
/// so a tie is a tie (the cmodel's KILN_RESIZE_EXACT_* path, commands.h).
static int64_t exactNearestIndex(int64_t o, int64_t in, int64_t out,
                                 Coord coord, Nearest mode) {
  int64_t num, den;
  if (coord == Coord::Asymmetric) {
    num = o * in, den = out;
  } else if (coord == Coord::AlignCorners || (coord == Coord::PytorchHalfPixel && out <= 1)) {
    num = out > 1 && coord == Coord::AlignCorners ? o * (in - 1) : 0;
    den = out > 1 && coord == Coord::AlignCorners ? out - 1 : 1;
  } else {
    num = (2 * o + 1) * in - out, den = 2 * out;
  }
  int64_t f = num / den, rem = num % den;
  if (rem < 0)
    f -= 1, rem += den;
  bool up = mode == Nearest::RoundPreferCeil ? 2 * rem >= den
            : mode == Nearest::Floor         ? false
            : mode == Nearest::Ceil          ? rem > 0
                                             : 2 * rem > den;
  return std::clamp<int64_t>(f + (up ? 1 : 0), 0, in - 1);
}

static std::vector<Taps> axisTaps(int64_t in, int64_t out, double scale,
                                  top::ResizeOp op) {
  std::vector<Taps> taps;
  bool exact = scale == double(out) / double(in);
  for (int64_t o = 0; o < out; ++o) {
    if (exact && op.getMode() == top::ResizeMode::Nearest) {
      int64_t i = exactNearestIndex(o, in, out, op.getCoordMode(),
                                    op.getNearestMode());
      taps.push_back({i, i, 0.0});
      continue;
    }
    double x = sourceCoord(o, in, out, scale, op.getCoordMode());
    if (op.getMode() == top::ResizeMode::Nearest) {
      int64_t i = nearestIndex(x, in, op.getNearestMode());
      taps.push_back({i, i, 0.0});
      continue;
    }
    x = std::clamp(x, 0.0, double(in - 1));
    int64_t first = int64_t(std::floor(x));
    taps.push_back({first, std::min(first + 1, in - 1), x - first});
  }
  return taps;
}

FailureOr<Tensor> runResize(top::ResizeOp op, const Tensor &input) {
  ArrayRef<int64_t> outHW = op.getOutHw();
  ArrayRef<double> scales = op.getScales();
  if (input.shape.size() != 4 || outHW.size() != 2 || scales.size() != 2)
    return op.emitOpError("expects a 4-D input, out_hw and 2 scales");
  int64_t planes = input.shape[0] * input.shape[1];
  int64_t ih = input.shape[2], iw = input.shape[3], oh = outHW[0],
          ow = outHW[1];
  std::vector<Taps> rows = axisTaps(ih, oh, scales[0], op);
  std::vector<Taps> cols = axisTaps(iw, ow, scales[1], op);
  Tensor out{{input.shape[0], input.shape[1], oh, ow}, {}};
  out.data.reserve(out.numElements());
  for (int64_t p = 0; p < planes; ++p) {
    const float *plane = input.data.data() + p * ih * iw;
    for (const Taps &r : rows)
      for (const Taps &c : cols) {
        auto at = [&](int64_t y, int64_t x) {
          return double(plane[y * iw + x]);
        };
        double top = at(r.first, c.first) * (1 - c.weight) +
                     at(r.first, c.second) * c.weight;
        double bottom = at(r.second, c.first) * (1 - c.weight) +
                        at(r.second, c.second) * c.weight;
        out.data.push_back(float(top * (1 - r.weight) + bottom * r.weight));
      }
  }
  return out;
}

} // namespace kiln::interp
