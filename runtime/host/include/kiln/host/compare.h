// Similarity of two tensors, as `kiln compare` and the tests judge outputs.
#ifndef KILN_HOST_COMPARE_H
#define KILN_HOST_COMPARE_H

#include <cstddef>
#include <string>
#include <vector>

#include "kiln/host/npz.h"

namespace kiln::host {

struct Similarity {
  double cosine = 0; // a·b / (‖a‖‖b‖); 1 when both are all zero
  double euclidean = 0; // 1 − ‖a−b‖ / ‖(a+b)/2‖; 1 when both are all zero,
                        // −inf when a = −b ≠ 0
  double max_abs = 0; // max |a−b|
};

// Any NaN or Inf in a or b is a failure: cosine = euclidean = 0, max_abs =
// +inf.
Similarity similarity(const float *a, const float *b, size_t n);

struct CompareRow {
  std::string name;
  Similarity sim;
  bool pass = false;
  std::string problem; // set when the tensors could not be compared
};

// Matches tensors by name: rows follow a's order, then tensors only in b.
// A tensor missing on one side or with a different shape is a failing row
// with `problem` set; dtypes may differ (values are compared as f32).
std::vector<CompareRow> compareArrays(const std::vector<Array> &a,
                                      const std::vector<Array> &b,
                                      double minCos, double minEuclid);

} // namespace kiln::host

#endif // KILN_HOST_COMPARE_H
