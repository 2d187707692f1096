//===- Precision.h - Precision annotations shared by the passes -*- C++ -*-===//
//
// The discardable attributes of docs/precision.md and helpers to read and
// write them. Top passes set them, lowering carries them to Tpu ops,
// tpu-apply-precision turns them into types.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SUPPORT_PRECISION_H
#define KILN_SUPPORT_PRECISION_H

#include "kiln/Support/Names.h" // opName: annotations are keyed by ONNX name

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

inline constexpr llvm::StringLiteral kDTypeAttr = "kiln.dtype"; // #top.dtype (top::runDtype)
inline constexpr llvm::StringLiteral kCalibAttr = "kiln.calib";     // [threshold, min, max]
inline constexpr llvm::StringLiteral kQParamsAttr = "kiln.qparams"; // [scale, zero point]
inline constexpr llvm::StringLiteral kReasonAttr = "kiln.reason";
inline constexpr llvm::StringLiteral kFinalAttr = "kiln.final";
/// On an op (an arg attribute on an argument) whose result a conv reads:
/// each channel's mean over the calibration samples (the table's "#!mean"
/// lines), for INT8 bias correction in tpu-apply-precision.
inline constexpr llvm::StringLiteral kChannelMeanAttr = "kiln.channel_mean";
/// On the inner ops of a decomposed normalization (InstanceNormalization's
/// mean, centered, variance, rstd, normalized; Softmax's exp, sum, log-sum):
/// [the node's name, why INT8 fails there]. Under `quantize: int8` they run
/// in F16 (top-assign-precision), one report line per node.
inline constexpr llvm::StringLiteral kNormAttr = "kiln.norm";

/// Marks op as an inner op of normalization `node` (kNormAttr). Inline: the
/// importer uses it without linking the precision library.
inline void markNormalization(mlir::Operation *op, llvm::StringRef node, llvm::StringRef why) {
  mlir::MLIRContext *ctx = op->getContext();
  op->setAttr(kNormAttr, mlir::ArrayAttr::get(ctx, {mlir::StringAttr::get(ctx, node),
                                                    mlir::StringAttr::get(ctx, why)}));
}
/// The module's decision reports: what the precision policy decided and
/// why, and which graph rewrites were applied where (e.g. modulated convs).
inline constexpr llvm::StringLiteral kPrecisionReportAttr = "kiln.precision_report";
inline constexpr llvm::StringLiteral kRewriteReportAttr = "kiln.rewrite_report";

/// A tensor's calibrated range.
struct Range {
  double threshold = 0, min = 0, max = 0;
  double absMax() const;
};

/// `kiln.calib` of an op, if set.
std::optional<Range> calibratedRange(mlir::Operation *op);

/// Sets `kiln.calib` on every op (and `kiln.calib` arg attribute on every
/// argument) whose ONNX name `ranges` holds. Returns how many were set.
size_t annotateRanges(mlir::func::FuncOp func, const std::map<std::string, Range> &ranges);

/// Sets kChannelMeanAttr as annotateRanges sets kiln.calib.
size_t annotateChannelMeans(mlir::func::FuncOp func,
                            const std::map<std::string, std::vector<double>> &means);

/// A real ratio as an INT8 requantization multiplier and right shift:
/// m / 2^shift ≈ ratio, m in [2^30, 2^31) (docs/precision.md). Ratios below
/// 2^-32 give m = 0; ratios of 2^31 and more saturate.
struct Multiplier {
  int64_t m = 0, shift = 0;
};
Multiplier requantMultiplier(double ratio);

/// Appends a line to report `attr` (kPrecisionReportAttr or
/// kRewriteReportAttr) of the module holding `anyOp`; readReport returns its
/// lines in order.
void appendReport(mlir::Operation *anyOp, llvm::StringRef attr, const std::string &line);
std::vector<std::string> readReport(mlir::ModuleOp module, llvm::StringRef attr);

} // namespace kiln

#endif
