//===- CalibrationTable.h - Activation ranges for quantization --*- C++ -*-===//
//
// The calibration table `kiln calibrate` writes and `kiln compile` reads
// (docs/precision.md, "Calibration table"), and the statistics behind it:
// per-tensor min/max, a histogram of |x|, and the minmax, KL and percentile
// thresholds. Plain C++17 (no LLVM, no MLIR), so tools and tests can link it
// alone.
//
// Table format (text, one tensor per line, numbers printed with %.9g):
//
//     # kiln calibration table v2
//     # model: <path>  samples: <count>  method: minmax|kl|percentile|mse|auto
//     # tensor threshold min max method
//     <onnx tensor name> <threshold> <min> <max> <method>
//     #!mean <count> <mean 0> ... <mean count-1> <onnx tensor name>
//
// Lines starting with '#' and blank lines are comments, except that the first
// non-blank line must be the "# kiln calibration table v1|v2" header and
// that v2's "#!mean" lines carry a tensor's per-channel means (axis 1; for
// the tensors convs read: INT8 bias correction), after its range line. The
// method is what gave that tensor its threshold (v1 tables have no such
// column). The name is everything before the last four (v1: three) fields,
// or after the means, so it may hold inner spaces.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CALIBRATION_CALIBRATIONTABLE_H
#define KILN_CALIBRATION_CALIBRATIONTABLE_H

#include "kiln/Config/Config.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::calib {

/// The calibrated range of one tensor. `threshold` is the symmetric clipping
/// range (>= 0); `min` and `max` are the extremes seen over all samples (for
/// asymmetric quantization).
struct TensorRange {
  double threshold = 0;
  double min = 0;
  double max = 0;
  /// The method that gave `threshold` (minmax, kl, percentile, mse); empty
  /// when the table does not say (v1).
  std::string method;
  /// The mean of each channel (axis 1) over the samples, for the tensors
  /// whose means were collected (Calibrator::observe); else empty.
  std::vector<double> channelMeans;
};

/// One table line, in the order the network computes the tensors.
struct NamedRange {
  std::string name;
  TensorRange range;
};

/// What the table's second header line records.
struct TableInfo {
  std::string model;
  size_t samples = 0;
  config::CalibMethod method = config::CalibMethod::MinMax;
};

/// Reads the table at `path` into `out` (tensor name -> range, replacing its
/// contents). Returns "" on success, else "PATH:LINE: error: MESSAGE" (or
/// "PATH: error: MESSAGE" when the file cannot be read); `out` is then empty.
std::string readCalibrationTable(const std::string &path,
                                 std::map<std::string, TensorRange> &out);

/// As readCalibrationTable, on the text of a table; `path` only names it in
/// messages.
std::string parseCalibrationTable(const std::string &text,
                                  const std::string &path,
                                  std::map<std::string, TensorRange> &out);

/// The table text: the three header lines, then one line per tensor in the
/// given order. Names must be unique, non-empty, one line, not start with '#'.
std::string formatCalibrationTable(const std::vector<NamedRange> &tensors,
                                   const TableInfo &info, std::string &error);

/// Writes the table to `path`. Returns "" on success, else a message naming
/// the file (or the offending tensor name).
std::string writeCalibrationTable(const std::string &path,
                                  const std::vector<NamedRange> &tensors,
                                  const TableInfo &info);

// --- threshold algorithms -----------------------------------------------
//
// `hist` counts |x| in equal bins over [0, binWidth * hist.size()); bin i
// holds |x| in [i * binWidth, (i + 1) * binWidth), the largest value in the
// last bin.

/// max(|min|, |max|).
double minmaxThreshold(double min, double max);

/// The KL-divergence-optimal threshold (TensorRT's entropy calibration, as
/// TPU-MLIR and MXNet implement it): for each candidate i in [levels,
/// hist.size()], P = hist[0, i) with the counts beyond i added to its last
/// bin, Q = hist[0, i) merged into `levels` levels and spread back over the
/// bins that were non-zero; both smoothed (eps = 1e-4) and normalised. The
/// result is i * binWidth for the i that minimises KL(P || Q). With fewer
/// bins than levels, or no finite divergence, the full range.
double klThreshold(const std::vector<uint64_t> &hist, double binWidth,
                   int levels = 128);

/// The threshold T that minimises the expected squared error of symmetric
/// quantization to `levels` steps of T / levels over the histogram of |x|:
/// a bin below T costs its count x step^2 / 12 (rounding), one above costs
/// its count x (its centre - T)^2 (clipping). Candidates are the bin edges
/// from `levels` bins up; the full range when nothing was counted.
double mseThreshold(const std::vector<uint64_t> &hist, double binWidth, int levels = 127);

/// The `percentile` (in (0, 100]) of |x|: the value below which that share
/// of the counts lies, interpolated linearly inside its bin.
double percentileThreshold(const std::vector<uint64_t> &hist, double binWidth,
                           double percentile);

/// KL(P || Q) of two distributions given as non-negative weights (each
/// normalised to sum 1 first); +inf where Q is 0 and P is not.
double klDivergence(const std::vector<double> &p, const std::vector<double> &q);

// --- statistics over samples --------------------------------------------

/// A threshold one method gives a tensor (Calibrator::candidates).
struct Candidate {
  config::CalibMethod method;
  double threshold;
};

/// Collects the statistics of every tensor over the calibration samples.
///
/// minmax needs one pass over the samples (min and max). kl and percentile
/// need two: pass 0 finds each tensor's min and max, pass 1 fills a histogram
/// of |x| with `bins` bins over [0, max(|min|, |max|)], so every sample lands
/// in the same bins with the full resolution (no re-binning). The caller
/// feeds every sample's tensors in each pass:
///
///     for (unsigned pass = 0; pass < c.passes(); ++pass)
///       for (each sample) for (each tensor) c.observe(pass, name, data, n);
///     std::vector<NamedRange> table = c.finish();
///
/// NaN and infinite values are left out of every statistic. A KL threshold
/// needs a populated histogram: a tensor with fewer than 4 * `bins` values
/// over all samples (a classifier's logits, a pooled vector) keeps
/// max(|min|, |max|) instead, as the divergence of a sparse histogram is noise.
class Calibrator {
public:
  explicit Calibrator(config::CalibMethod method, double percentile = 99.99,
                      int bins = 2048, int levels = 128);

  unsigned passes() const;
  config::CalibMethod method() const { return method_; }

  /// Records `n` values of tensor `name`. In pass 1 only tensors seen in
  /// pass 0 count (the others are ignored). With `channels` > 0, `data` is
  /// [outer, channels, inner] and pass 0 also sums each channel, for
  /// finish()'s channelMeans.
  void observe(unsigned pass, const std::string &name, const float *data,
               size_t n, size_t channels = 0, size_t inner = 0);

  /// The ranges, in the order the tensors were first observed. A tensor that
  /// never held a finite value gets an all-zero range. Under auto every
  /// threshold is minmax's until the caller picks among candidates().
  std::vector<NamedRange> finish() const;

  /// The thresholds minmax, percentile, mse and kl give `name` after pass 1,
  /// in that order, leaving out a method whose threshold is within 0.1 % of
  /// one before it (and kl on a sparse histogram): the choices auto has.
  std::vector<Candidate> candidates(const std::string &name) const;

  /// The histogram of `name` after pass 1 (empty before, or for minmax), and
  /// its bin width; for tests and diagnostics.
  const std::vector<uint64_t> &histogram(const std::string &name) const;
  double binWidth(const std::string &name) const;

private:
  struct Stats {
    double min = 0, max = 0;
    bool seen = false;
    std::vector<uint64_t> hist;
    double binWidth = 0;
    std::vector<double> channelSums; ///< finite values only
    std::vector<uint64_t> channelCounts;
  };
  /// The threshold `method` gives `s` and the method that really gave it
  /// (minmax where the histogram cannot serve).
  Candidate threshold(const Stats &s, config::CalibMethod method) const;
  config::CalibMethod method_;
  double percentile_;
  int bins_, levels_;
  std::vector<std::string> order_;
  std::map<std::string, Stats> stats_;
};

} // namespace kiln::calib

#endif // KILN_CALIBRATION_CALIBRATIONTABLE_H
