//===- AssignPrecision.cpp - The dtype each Top op runs in ----------------===//
//
// The config's `quantize` is the default; `qtable` overrides by ONNX name;
// in f16 an op whose calibrated range would overflow stays f32 (the StyleGAN2
// demodulation: a sum of squared filter values). Lowering reads kiln.dtype.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Support/Precision.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPASSIGNPRECISION
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln;
using kiln::top::DType;

namespace {
/// The largest calibrated magnitude among an op's result and operands, and
/// which of them it is ("result" or "input N").
std::pair<double, std::string> largestMagnitude(Operation *op) {
  double largest = 0;
  std::string what;
  if (auto r = calibratedRange(op)) {
    largest = r->absMax();
    what = "result";
    // ReduceL2 lowers to a sum of squares and a square root: the sum it
    // stores on the way is the result squared.
    if (auto reduce = dyn_cast<top::ReduceOp>(op);
        reduce && reduce.getMode() == top::ReduceMode::L2) {
      largest *= largest;
      what = "sum of squares (result squared)";
    }
  }
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    Operation *def = v.getDefiningOp();
    if (!def || isa<top::WeightOp>(def))
      continue;
    if (auto r = calibratedRange(def); r && r->absMax() > largest) {
      largest = r->absMax();
      what = "input " + std::to_string(i);
    }
  }
  return {largest, what};
}

/// ReduceL2 and ReduceSumSquare: lowered as a square, then a sum.
bool isSquareReduce(Operation *op) {
  auto reduce = dyn_cast<top::ReduceOp>(op);
  return reduce && (reduce.getMode() == top::ReduceMode::L2 ||
                    reduce.getMode() == top::ReduceMode::SumSquare);
}

struct AssignPrecisionPass
    : public top::impl::TopAssignPrecisionBase<AssignPrecisionPass> {
  using TopAssignPrecisionBase::TopAssignPrecisionBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<DType> modeDtype = top::symbolizeDType(mode);
    if (!modeDtype) {
      func.emitError("top-assign-precision: unknown mode '") << mode << "'";
      return signalPassFailure();
    }
    llvm::StringMap<DType> overrides;
    for (const std::string &entry : qtable) {
      auto [name, dtypeName] = StringRef(entry).rsplit('=');
      std::optional<DType> dtype = top::symbolizeDType(dtypeName);
      if (name.empty() || !dtype) {
        func.emitError("top-assign-precision: bad qtable entry '") << entry
                                                                    << "' (want name=dtype)";
        return signalPassFailure();
      }
      overrides[name] = *dtype;
    }

    Builder b(&getContext());
    llvm::StringMap<bool> used;
    llvm::StringSet<> reportedNorms;
    func.walk([&](Operation *op) {
      if (!isa<top::TopDialect>(op->getDialect()) || isa<top::WeightOp, top::NoneOp>(op))
        return;
      std::string name = kiln::opName(op);
      DType dtype = *modeDtype;
      std::string reason;
      if (auto it = overrides.find(name); it != overrides.end()) {
        dtype = it->second;
        used[name] = true;
        reason = "qtable";
      } else if (auto norm = op->getAttrOfType<ArrayAttr>(kNormAttr);
                 *modeDtype == DType::INT8 && norm && norm.size() == 2) {
        // Inner ops of a normalization (kNormAttr): INT8 rounds `centered`
        // on a nearly constant channel to a few levels that rstd then
        // multiplies; a softmax's sum loses the exponentials INT8 rounds to 0.
        dtype = DType::F16;
        std::string node = cast<StringAttr>(norm[0]).str();
        reason = "inner op of normalization '" + node + "': " +
                 cast<StringAttr>(norm[1]).str();
        op->setAttr(kReasonAttr, b.getStringAttr(reason));
        top::setRunDtype(op, dtype);
        // One report line per normalization, not one per op of it.
        if (reportedNorms.insert(node).second)
          appendReport(func, kPrecisionReportAttr, node + " (inner ops of the normalization): f16 (" +
                                          cast<StringAttr>(norm[1]).str() + ")");
        return;
      } else if (*modeDtype == DType::F16 || (*modeDtype == DType::INT8 && isSquareReduce(op))) {
        // The op must neither produce nor read a value f16 cannot hold. In
        // int8, a sum of squares has no INT8 form (its inner square has no
        // range of its own) and runs in F16, so the same check applies.
        auto [largest, what] = largestMagnitude(op);
        if (largest > f16Limit) {
          dtype = DType::F32;
          reason = llvm::formatv("{0} reaches |x| = {1:g} > f16 limit {2:g}", what, largest,
                                 f16Limit.getValue());
        }
      }
      top::setRunDtype(op, dtype);
      if (!reason.empty()) {
        op->setAttr(kReasonAttr, b.getStringAttr(reason));
        appendReport(func, kPrecisionReportAttr,
                     name + ": " + top::stringifyDType(dtype).str() + " (" + reason + ")");
      }
    });
    for (auto &entry : overrides)
      if (!used.count(entry.getKey()))
        func.emitWarning("qtable names '") << entry.getKey() << "', which is no op of the model";
  }
};
} // namespace
