//===- Calibrator.cpp - Activation statistics and thresholds --------------===//
#include "kiln/Calibration/CalibrationTable.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::calib {

double minmaxThreshold(double min, double max) {
  return std::max(std::fabs(min), std::fabs(max));
}

double klDivergence(const std::vector<double> &p,
                    const std::vector<double> &q) {
  double sumP = 0, sumQ = 0;
  for (double v : p)
    sumP += v;
  for (double v : q)
    sumQ += v;
  if (sumP <= 0 || sumQ <= 0 || p.size() != q.size())
    return std::numeric_limits<double>::infinity();
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double pi = p[i] / sumP, qi = q[i] / sumQ;
    if (pi == 0)
      continue;
    if (qi == 0)
      return std::numeric_limits<double>::infinity();
    kl += pi * std::log(pi / qi);
  }
  return kl;
}

namespace {

/// MXNet's _smooth_distribution: moves eps of mass onto every zero bin,
/// taken evenly from the non-zero ones. False when every bin is zero or the
/// non-zero bins cannot give that much.
bool smooth(std::vector<double> &d, double eps = 1e-4) {
  size_t zeros = 0;
  for (double v : d)
    zeros += v == 0;
  const size_t nonZeros = d.size() - zeros;
  if (nonZeros == 0)
    return false;
  const double eps1 = eps * double(zeros) / double(nonZeros);
  if (eps1 >= 1.0)
    return false;
  for (double &v : d)
    v += v == 0 ? eps : -eps1;
  return true;
}

} // namespace

double klThreshold(const std::vector<uint64_t> &hist, double binWidth,
                   int levels) {
  const size_t bins = hist.size();
  const double full = binWidth * double(bins);
  if (levels <= 0 || bins < size_t(levels))
    return full;
  // Counts beyond each candidate, from the top down.
  std::vector<double> above(bins + 1, 0.0);
  for (size_t i = bins; i-- > 0;)
    above[i] = above[i + 1] + double(hist[i]);
  if (above[0] == 0)
    return full;

  double bestKl = std::numeric_limits<double>::infinity();
  size_t best = bins;
  std::vector<double> p, q;
  for (size_t i = size_t(levels); i <= bins; ++i) {
    // Reference: the first i bins, the clipped outliers in the last one.
    p.assign(hist.begin(), hist.begin() + i);
    p[i - 1] += above[i];
    // Candidate: the first i bins merged into `levels` levels (the last
    // level takes the remainder), each level's count spread evenly over the
    // bins of it that were non-zero.
    q.assign(i, 0.0);
    const size_t merged = i / size_t(levels);
    for (size_t j = 0; j < size_t(levels); ++j) {
      const size_t start = j * merged;
      const size_t stop = j + 1 == size_t(levels) ? i : start + merged;
      double count = 0;
      size_t nonZero = 0;
      for (size_t k = start; k < stop; ++k) {
        count += double(hist[k]);
        nonZero += hist[k] != 0;
      }
      if (nonZero == 0)
        continue;
      for (size_t k = start; k < stop; ++k)
        if (hist[k] != 0)
          q[k] = count / double(nonZero);
    }
    // The reference's last bin may have gained outliers where hist was 0.
    for (size_t k = 0; k < i; ++k)
      if (p[k] == 0)
        q[k] = 0;
    if (!smooth(p) || !smooth(q))
      continue;
    const double kl = klDivergence(p, q);
    if (kl < bestKl) {
      bestKl = kl;
      best = i;
    }
  }
  return double(best) * binWidth;
}

double mseThreshold(const std::vector<uint64_t> &hist, double binWidth, int levels) {
  const size_t bins = hist.size();
  const double full = binWidth * double(bins);
  if (levels <= 0 || bins < size_t(levels))
    return full;
  double total = 0;
  for (uint64_t c : hist)
    total += double(c);
  if (total == 0)
    return full;
  // Suffix sums of c, c*m and c*m^2 (m: a bin's centre) give each
  // candidate's clipping error sum(c * (m - t)^2) in constant time.
  std::vector<double> c0(bins + 1, 0.0), c1(bins + 1, 0.0), c2(bins + 1, 0.0);
  for (size_t k = bins; k-- > 0;) {
    const double c = double(hist[k]), m = (double(k) + 0.5) * binWidth;
    c0[k] = c0[k + 1] + c;
    c1[k] = c1[k + 1] + c * m;
    c2[k] = c2[k + 1] + c * m * m;
  }
  double bestError = std::numeric_limits<double>::infinity();
  size_t best = bins;
  for (size_t i = size_t(levels); i <= bins; ++i) {
    const double t = double(i) * binWidth, step = t / double(levels);
    const double clipped = std::max(0.0, c2[i] - 2.0 * t * c1[i] + t * t * c0[i]);
    const double error = (total - c0[i]) * step * step / 12.0 + clipped;
    if (error < bestError) {
      bestError = error;
      best = i;
    }
  }
  return double(best) * binWidth;
}

double percentileThreshold(const std::vector<uint64_t> &hist, double binWidth,
                           double percentile) {
  double total = 0;
  for (uint64_t c : hist)
    total += double(c);
  const double full = binWidth * double(hist.size());
  if (total == 0 || percentile >= 100)
    return full;
  const double target = total * std::max(percentile, 0.0) / 100.0;
  double cumulative = 0;
  for (size_t i = 0; i < hist.size(); ++i) {
    const double next = cumulative + double(hist[i]);
    if (hist[i] != 0 && next >= target) {
      const double fraction = (target - cumulative) / double(hist[i]);
      return (double(i) + std::clamp(fraction, 0.0, 1.0)) * binWidth;
    }
    cumulative = next;
  }
  return full;
}

Calibrator::Calibrator(config::CalibMethod method, double percentile, int bins,
                       int levels)
    : method_(method), percentile_(percentile), bins_(std::max(bins, 1)),
      levels_(levels) {}

unsigned Calibrator::passes() const {
  return method_ == config::CalibMethod::MinMax ? 1 : 2;
}

void Calibrator::observe(unsigned pass, const std::string &name,
                         const float *data, size_t n, size_t channels, size_t inner) {
  if (pass == 0) {
    auto [it, inserted] = stats_.try_emplace(name);
    if (inserted)
      order_.push_back(name);
    Stats &s = it->second;
    if (channels > 0 && inner > 0 && n % (channels * inner) == 0) {
      if (s.channelSums.empty()) {
        s.channelSums.resize(channels);
        s.channelCounts.resize(channels);
      }
      if (s.channelSums.size() == channels)
        for (size_t i = 0; i < n; ++i)
          if (std::isfinite(data[i])) {
            const size_t c = i / inner % channels;
            s.channelSums[c] += double(data[i]);
            ++s.channelCounts[c];
          }
    }
    for (size_t i = 0; i < n; ++i) {
      const float v = data[i];
      if (!std::isfinite(v))
        continue;
      if (!s.seen) {
        s.min = s.max = v;
        s.seen = true;
      } else {
        s.min = std::min(s.min, double(v));
        s.max = std::max(s.max, double(v));
      }
    }
    return;
  }
  auto it = stats_.find(name);
  if (it == stats_.end() || !it->second.seen)
    return;
  Stats &s = it->second;
  if (s.hist.empty()) {
    s.hist.assign(size_t(bins_), 0);
    const double absmax = minmaxThreshold(s.min, s.max);
    s.binWidth = absmax / bins_;
  }
  if (s.binWidth == 0) { // an all-zero tensor: everything in bin 0
    for (size_t i = 0; i < n; ++i)
      s.hist[0] += std::isfinite(data[i]);
    return;
  }
  const double inv = 1.0 / s.binWidth;
  const size_t last = size_t(bins_) - 1;
  for (size_t i = 0; i < n; ++i) {
    const float v = data[i];
    if (!std::isfinite(v))
      continue;
    const double b = std::fabs(double(v)) * inv;
    s.hist[b >= double(last) ? last : size_t(b)] += 1;
  }
}

Candidate Calibrator::threshold(const Stats &s, config::CalibMethod method) const {
  const double absmax = minmaxThreshold(s.min, s.max);
  Candidate c{config::CalibMethod::MinMax, absmax};
  if (s.hist.empty() || !(s.binWidth > 0))
    return c;
  uint64_t count = 0;
  for (uint64_t n : s.hist)
    count += n;
  if (method == config::CalibMethod::KL && count >= 4 * uint64_t(bins_))
    c = {method, klThreshold(s.hist, s.binWidth, levels_)};
  else if (method == config::CalibMethod::Mse)
    c = {method, mseThreshold(s.hist, s.binWidth)};
  else if (method == config::CalibMethod::Percentile)
    c = {method, percentileThreshold(s.hist, s.binWidth, percentile_)};
  // bins * width may round a hair above the true absmax.
  c.threshold = std::min(c.threshold, absmax);
  return c;
}

std::vector<NamedRange> Calibrator::finish() const {
  std::vector<NamedRange> out;
  out.reserve(order_.size());
  for (const std::string &name : order_) {
    const Stats &s = stats_.at(name);
    NamedRange r{name, {}};
    r.range.method = config::toString(config::CalibMethod::MinMax);
    if (s.seen) {
      r.range.min = s.min;
      r.range.max = s.max;
      const Candidate c = threshold(s, method_);
      r.range.threshold = c.threshold;
      r.range.method = config::toString(c.method);
      for (size_t ch = 0; ch < s.channelSums.size(); ++ch)
        r.range.channelMeans.push_back(
            s.channelCounts[ch] ? s.channelSums[ch] / double(s.channelCounts[ch]) : 0.0);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Candidate> Calibrator::candidates(const std::string &name) const {
  std::vector<Candidate> out;
  auto it = stats_.find(name);
  if (it == stats_.end() || !it->second.seen)
    return out;
  for (config::CalibMethod m : {config::CalibMethod::MinMax, config::CalibMethod::Percentile,
                                config::CalibMethod::Mse, config::CalibMethod::KL}) {
    const Candidate c = threshold(it->second, m);
    if (c.method != m)
      continue;
    bool distinct = true;
    for (const Candidate &before : out)
      distinct &= std::fabs(c.threshold - before.threshold) > 1e-3 * before.threshold;
    if (distinct)
      out.push_back(c);
  }
  return out;
}

const std::vector<uint64_t> &
Calibrator::histogram(const std::string &name) const {
  static const std::vector<uint64_t> kEmpty;
  auto it = stats_.find(name);
  return it == stats_.end() ? kEmpty : it->second.hist;
}

double Calibrator::binWidth(const std::string &name) const {
  auto it = stats_.find(name);
  return it == stats_.end() ? 0 : it->second.binWidth;
}

} // namespace kiln::calib
