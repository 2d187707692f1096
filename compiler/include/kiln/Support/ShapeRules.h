#ifndef KILN_SUPPORT_SHAPERULES_H
#define KILN_SUPPORT_SHAPERULES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstdint>
#include <optional>

// Shape arithmetic shared by Top shape inference and the Top and Tpu
// verifiers, so each rule is written once.

namespace kiln {

/// Output extent of a sliding window, as ONNX defines it.
inline int64_t windowOut(int64_t in, int64_t k, int64_t s, int64_t d,
                         int64_t padBegin, int64_t padEnd, bool ceil) {
  // floor/ceil of span / s also for a negative span: with ceil_mode a window
  // larger than the padded input still gives one output when it starts
  // inside (ONNX and PyTorch: ceil(-1 / 2) + 1 = 1).
  int64_t span = in + padBegin + padEnd - d * (k - 1) - 1;
  int64_t out = (ceil ? llvm::divideCeilSigned(span, s) : llvm::divideFloorSigned(span, s)) + 1;
  // With ceil_mode the last window must start inside the input or left pad.
  if (ceil && out > 0 && (out - 1) * s >= in + padBegin)
    --out;
  return out;
}

/// Output extent of a transposed convolution before output_padding.
inline int64_t deconvOut(int64_t in, int64_t k, int64_t s, int64_t d,
                         int64_t padBegin, int64_t padEnd) {
  return (in - 1) * s - padBegin - padEnd + d * (k - 1) + 1;
}

/// The window attributes of a 2-D conv/pool: `kernel`, `strides` and
/// `dilations` 2 positive entries, `pads` 4 non-negative ones. Returns the
/// problem, or nullopt when they are well formed.
inline std::optional<const char *>
checkWindowAttrs(llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> strides,
                 llvm::ArrayRef<int64_t> pads, llvm::ArrayRef<int64_t> dilations) {
  auto positive = [](llvm::ArrayRef<int64_t> a) {
    return llvm::all_of(a, [](int64_t v) { return v >= 1; });
  };
  if (kernel.size() != 2 || !positive(kernel))
    return "kernel_shape must have 2 positive entries";
  if (strides.size() != 2 || !positive(strides))
    return "strides must have 2 positive entries";
  if (dilations.size() != 2 || !positive(dilations))
    return "dilations must have 2 positive entries";
  if (pads.size() != 4 || llvm::any_of(pads, [](int64_t v) { return v < 0; }))
    return "pads must have 4 non-negative entries [top, left, bottom, right]";
  return std::nullopt;
}

/// Multidirectional (numpy) broadcasting of `a` and `b`; on a mismatch,
/// nullopt and the (result) dimension in `badDim`.
inline std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                size_t &badDim) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    size_t offA = rank - a.size(), offB = rank - b.size();
    int64_t da = i < offA ? 1 : a[i - offA];
    int64_t db = i < offB ? 1 : b[i - offB];
    if (da != db && da != 1 && db != 1) {
      badDim = i;
      return std::nullopt;
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

} // namespace kiln

#endif
