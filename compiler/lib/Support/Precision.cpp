#include "kiln/Support/Precision.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

double kiln::Range::absMax() const { return std::max(std::fabs(min), std::fabs(max)); }

std::optional<kiln::Range> kiln::calibratedRange(Operation *op) {
  auto attr = op->getAttrOfType<DenseF64ArrayAttr>(kCalibAttr);
  if (!attr || attr.size() != 3)
    return std::nullopt;
  return Range{attr[0], attr[1], attr[2]};
}

namespace {
/// Sets `attr` to attrOf(value) on every argument and single-result op whose
/// name `byName` holds; how many.
template <typename T, typename AttrOf>
size_t annotateByName(func::FuncOp func, const std::map<std::string, T> &byName, StringRef attr,
                      AttrOf attrOf) {
  size_t count = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, "kiln.name"))
      if (auto it = byName.find(name.str()); it != byName.end()) {
        func.setArgAttr(i, attr, attrOf(it->second));
        ++count;
      }
  func.walk([&](Operation *op) {
    if (op->getNumResults() != 1)
      return;
    if (auto it = byName.find(kiln::opName(op)); it != byName.end()) {
      op->setAttr(attr, attrOf(it->second));
      ++count;
    }
  });
  return count;
}
} // namespace

size_t kiln::annotateRanges(func::FuncOp func, const std::map<std::string, Range> &ranges) {
  Builder b(func.getContext());
  return annotateByName(func, ranges, kCalibAttr, [&](const Range &r) {
    return b.getDenseF64ArrayAttr({r.threshold, r.min, r.max});
  });
}

size_t kiln::annotateChannelMeans(func::FuncOp func,
                                  const std::map<std::string, std::vector<double>> &means) {
  Builder b(func.getContext());
  return annotateByName(func, means, kChannelMeanAttr,
                        [&](const std::vector<double> &m) { return b.getDenseF64ArrayAttr(m); });
}

void kiln::appendReport(Operation *anyOp, StringRef attr, const std::string &line) {
  auto module = anyOp->getParentOfType<ModuleOp>();
  if (!module)
    return;
  Builder b(module.getContext());
  SmallVector<Attribute> lines;
  if (auto old = module->getAttrOfType<ArrayAttr>(attr))
    lines.append(old.begin(), old.end());
  lines.push_back(b.getStringAttr(line));
  module->setAttr(attr, b.getArrayAttr(lines));
}

std::vector<std::string> kiln::readReport(ModuleOp module, StringRef attr) {
  std::vector<std::string> lines;
  if (auto array = module->getAttrOfType<ArrayAttr>(attr))
    for (Attribute a : array)
      lines.push_back(cast<StringAttr>(a).str());
  return lines;
}

kiln::Multiplier kiln::requantMultiplier(double ratio) {
  if (!(ratio > 0))
    return {0, 0};
  int exp = 0;
  double frac = std::frexp(ratio, &exp); // ratio = frac * 2^exp, frac in [0.5, 1)
  int64_t m = std::llround(frac * 2147483648.0);
  if (m == 2147483648LL) {
    m /= 2;
    ++exp;
  }
  int64_t shift = 31 - exp;
  if (shift < 0)
    return {INT32_MAX, 0};
  if (shift > 63)
    return {0, 0};
  return {m, shift};
}
