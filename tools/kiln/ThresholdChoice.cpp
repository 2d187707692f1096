// calibration.method auto. A tensor's threshold trades rounding (a larger
// range, coarser steps) against clipping (its outliers cut); which costs
// more depends on what the network does with the tensor afterwards, so the
// choice is measured where it matters: at the net outputs, with the rest of
// the network in f32 (TopRun::rerunWith recomputes only the ops after it).
#include "ThresholdChoice.h"

#include "Commands.h"
#include "Search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

using namespace mlir;
using namespace kiln;

namespace {

/// `t` rounded to INT8 with scale threshold / 127 and back.
interp::Tensor fakeQuantized(const interp::Tensor &t, double threshold) {
  interp::Tensor q = t;
  if (!(threshold > 0))
    return q;
  const double scale = threshold / 127.0;
  for (float &v : q.data)
    v = float(std::clamp(std::nearbyint(double(v) / scale), -128.0, 127.0) * scale);
  return q;
}

} // namespace

bool cli::chooseThresholds(func::FuncOp func, const calib::Calibrator &calibrator,
                           const std::vector<interp::TensorMap> &samples,
                           std::vector<calib::NamedRange> &ranges) {
  const auto start = std::chrono::steady_clock::now();
  // Per tensor, the candidates and their summed cosines over the samples.
  std::map<std::string, std::vector<calib::Candidate>> candidates;
  std::map<std::string, std::vector<double>> sums;
  for (const calib::NamedRange &r : ranges)
    if (auto c = calibrator.candidates(r.name); c.size() > 1)
      candidates[r.name] = std::move(c);
  std::set<std::string> unmeasured;
  size_t measured = 0;
  for (const interp::TensorMap &sample : samples) {
    interp::TopRun run;
    if (failed(run.run(func, sample)))
      return false;
    const interp::TensorMap values = run.namedValues();
    for (const auto &[name, choices] : candidates) {
      auto value = values.find(name);
      if (value == values.end() || unmeasured.count(name))
        continue; // a net input: no op to rerun from
      std::vector<double> &sum = sums[name];
      sum.resize(choices.size());
      for (size_t i = 0; i < choices.size(); ++i) {
        interp::TensorMap outputs;
        if (failed(run.rerunWith(name, fakeQuantized(value->second, choices[i].threshold),
                                 outputs))) {
          // Two ops of one name (the value is not the rerun op's), or an
          // op failed after a diagnostic: the tensor keeps minmax.
          unmeasured.insert(name);
          sums.erase(name);
          break;
        }
        sum[i] += cli::meanCosine(run.outputs(), outputs);
        ++measured;
      }
    }
  }
  std::map<std::string, size_t> counts;
  for (calib::NamedRange &r : ranges) {
    auto sum = sums.find(r.name);
    if (sum != sums.end()) {
      const std::vector<double> &s = sum->second;
      const size_t best = size_t(std::max_element(s.begin(), s.end()) - s.begin());
      const calib::Candidate &chosen = candidates.at(r.name)[best];
      r.range.threshold = chosen.threshold;
      r.range.method = config::toString(chosen.method);
    }
    ++counts[r.range.method];
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("auto thresholds: %zu of %zu tensors measured (%zu reruns on %zu samples, "
              "%.1f s):",
              sums.size(), ranges.size(), measured, samples.size(), seconds);
  for (const char *m : {"minmax", "percentile", "mse", "kl"})
    if (counts.count(m))
      std::printf(" %s %zu", m, counts[m]);
  std::printf("\n");
  std::fflush(stdout);
  return true;
}
