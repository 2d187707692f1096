#include "kiln/host/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::host {

Similarity similarity(const float *a, const float *b, size_t n) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double dot = 0, normA2 = 0, normB2 = 0, diff2 = 0, mean2 = 0, maxAbs = 0;
  for (size_t i = 0; i < n; ++i) {
    const double x = a[i], y = b[i];
    if (!std::isfinite(x) || !std::isfinite(y))
      return {0.0, 0.0, kInf};
    const double d = x - y, m = (x + y) / 2;
    dot += x * y;
    normA2 += x * x;
    normB2 += y * y;
    diff2 += d * d;
    mean2 += m * m;
    maxAbs = std::max(maxAbs, std::fabs(d));
  }
  Similarity s;
  s.max_abs = maxAbs;
  if (normA2 == 0 && normB2 == 0)
    s.cosine = 1;
  else if (normA2 == 0 || normB2 == 0)
    s.cosine = 0;
  else // rounding can push |cos| past 1
    s.cosine =
        std::clamp(dot / (std::sqrt(normA2) * std::sqrt(normB2)), -1.0, 1.0);
  if (diff2 == 0)
    s.euclidean = 1;
  else if (mean2 == 0)
    s.euclidean = -kInf;
  else
    s.euclidean = 1 - std::sqrt(diff2) / std::sqrt(mean2);
  return s;
}

namespace {

const Array *findByName(const std::vector<Array> &arrays,
                        const std::string &name) {
  for (const Array &a : arrays)
    if (a.name == name)
      return &a;
  return nullptr;
}

CompareRow failedRow(const std::string &name, std::string problem) {
  CompareRow row;
  row.name = name;
  row.sim = {0.0, 0.0, std::numeric_limits<double>::infinity()};
  row.problem = std::move(problem);
  return row;
}

} // namespace

std::vector<CompareRow> compareArrays(const std::vector<Array> &a,
                                      const std::vector<Array> &b,
                                      double minCos, double minEuclid) {
  std::vector<CompareRow> rows;
  for (const Array &x : a) {
    const Array *y = findByName(b, x.name);
    if (!y) {
      rows.push_back(failedRow(x.name, "missing in the second set"));
      continue;
    }
    if (x.shape != y->shape) {
      rows.push_back(failedRow(x.name, "shape " + shapeString(x.shape) +
                                           " vs " + shapeString(y->shape)));
      continue;
    }
    const std::vector<float> fx = x.toF32(), fy = y->toF32();
    if (fx.size() != x.numElements() || fy.size() != y->numElements()) {
      rows.push_back(failedRow(x.name, "data is shorter than its shape"));
      continue;
    }
    CompareRow row;
    row.name = x.name;
    row.sim = similarity(fx.data(), fy.data(), fx.size());
    row.pass = row.sim.cosine >= minCos && row.sim.euclidean >= minEuclid;
    rows.push_back(std::move(row));
  }
  for (const Array &y : b)
    if (!findByName(a, y.name))
      rows.push_back(failedRow(y.name, "missing in the first set"));
  return rows;
}

} // namespace kiln::host
