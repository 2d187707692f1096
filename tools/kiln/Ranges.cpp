#include "Ranges.h"

#include "Commands.h"
#include "ConfigFiles.h"

#include "kiln/Calibration/CalibrationTable.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/host/npz.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace kiln;

std::optional<std::map<std::string, Range>>
cli::observeRanges(const config::DeployConfig &cfg, ModuleOp module) {
  std::map<std::string, Range> ranges;
  std::vector<std::string> files = observationInputs(cfg, 4);
  if (files.empty()) {
    std::fprintf(stderr,
                 "kiln: warning: no calibration samples or verify input to observe ranges "
                 "with; the f16 overflow policy sees none\n");
    return ranges;
  }
  auto observe = [&](const std::string &name, const std::vector<float> &data) {
    auto [it, fresh] = ranges.try_emplace(name);
    Range &r = it->second;
    for (float x : data) {
      if (!std::isfinite(x))
        continue;
      if (fresh) {
        r.min = r.max = x;
        fresh = false;
      }
      r.min = std::min<double>(r.min, x);
      r.max = std::max<double>(r.max, x);
    }
    r.threshold = r.absMax();
  };
  for (const std::string &file : files) {
    std::vector<host::Array> arrays;
    if (auto err = host::readNpz(file, arrays); !err.empty()) {
      std::fprintf(stderr, "kiln: error: %s\n", err.c_str());
      return std::nullopt;
    }
    interp::TensorMap inputs, outputs, all;
    for (const host::Array &a : arrays) {
      interp::Tensor t;
      t.shape = a.shape;
      t.data = a.toF32();
      observe(a.name, t.data);
      inputs[a.name] = std::move(t);
    }
    bool ok = true;
    module.walk([&](func::FuncOp func) {
      ok = ok && succeeded(interp::runTop(func, inputs, outputs, &all));
    });
    if (!ok)
      return std::nullopt;
    for (const auto &[name, t] : all)
      observe(name, t.data);
  }
  return ranges;
}

static bool hasQdq(ModuleOp module) {
  bool found = false;
  module.walk([&](top::QuantizeLinearOp) { found = true; });
  return found;
}

int cli::annotateModule(const config::DeployConfig &cfg, ModuleOp module,
                        const PipelineOptions &pipeline) {
  std::string table = calibrationTablePath(cfg);
  const bool needTable = pipeline.precision == "int8" && !hasQdq(module);
  if (needTable && !llvm::sys::fs::exists(table) && !cfg.calibration.samples.empty()) {
    std::vector<std::string> samples;
    if (auto err = calibrationSamples(cfg, 0, samples); !err.empty())
      return fail(err);
    std::printf("no calibration table %s yet: calibrating on the config's %zu samples first "
                "(kiln calibrate)\n",
                table.c_str(), samples.size());
    std::fflush(stdout);
    if (int rc = calibrate(cfg, module, samples, table); rc != 0)
      return rc;
  }
  std::map<std::string, Range> ranges;
  std::map<std::string, std::vector<double>> means;
  if (llvm::sys::fs::exists(table)) {
    std::map<std::string, calib::TensorRange> read;
    if (auto err = calib::readCalibrationTable(table, read); !err.empty()) {
      std::fprintf(stderr, "%s\n", err.c_str());
      return 2;
    }
    for (const auto &[name, r] : read) {
      ranges[name] = Range{r.threshold, r.min, r.max};
      if (!r.channelMeans.empty())
        means[name] = r.channelMeans;
    }
  } else if (needTable) {
    return fail(cfg.config_path + ": quantize: int8 needs a calibration table and " + table +
                " does not exist; name calibration samples in the config "
                "('calibration: {samples: path/*.npz}') and compile calibrates first");
  } else if (pipeline.precision != "int8") {
    auto observed = observeRanges(cfg, module);
    if (!observed)
      return 1;
    ranges = std::move(*observed);
  }
  module.walk([&](func::FuncOp func) {
    kiln::annotateRanges(func, ranges);
    kiln::annotateChannelMeans(func, means);
  });
  return 0;
}
