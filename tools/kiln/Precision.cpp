#include "Precision.h"

#include "Commands.h"

#include "kiln/Calibration/CalibrationTable.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Support/IRChecks.h"
#include "kiln/host/npz.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "mlir/Pass/PassManager.h"

#include <glob.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace kiln;

std::string cli::calibrationTablePath(const config::DeployConfig &cfg) {
  if (!cfg.calibration.table.empty())
    return cfg.calibration.table;
  llvm::SmallString<256> path(llvm::sys::path::parent_path(cfg.config_path));
  llvm::sys::path::append(path, "out", cfg.name + ".calib");
  return std::string(path.str());
}

OwningOpRef<ModuleOp> cli::importConfigModel(MLIRContext &ctx,
                                             const config::DeployConfig &cfg) {
  ctx.loadDialect<func::FuncDialect, top::TopDialect, tpu::TpuDialect>();
  return importOnnx(ctx, cfg.model, importOptionsOf(cfg));
}

ImportOptions cli::importOptionsOf(const config::DeployConfig &cfg) {
  ImportOptions options;
  for (const auto &in : cfg.inputs)
    options.inputShapes[in.name] = in.shape;
  options.randomSeed = cfg.random_seed;
  switch (cfg.random_ops) {
  case config::RandomOps::Reject: options.randomOps = RandomOps::Reject; break;
  case config::RandomOps::Const: options.randomOps = RandomOps::Const; break;
  case config::RandomOps::Input: options.randomOps = RandomOps::Input; break;
  }
  return options;
}

std::vector<std::string> cli::globSorted(const std::string &pattern) {
  std::vector<std::string> files;
  glob_t matches{};
  if (glob(pattern.c_str(), 0, nullptr, &matches) == 0)
    for (size_t i = 0; i < matches.gl_pathc; ++i)
      files.push_back(matches.gl_pathv[i]); // glob sorts without GLOB_NOSORT
  globfree(&matches);
  return files;
}

std::string cli::verifyInputPath(const config::DeployConfig &cfg) {
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(cfg.verify.reference));
  for (const char *file : {"input_with_noise.npz", "input.npz"}) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    if (llvm::sys::fs::exists(path))
      return std::string(path.str());
  }
  return "";
}

std::vector<std::string> cli::observationInputs(const config::DeployConfig &cfg, size_t most) {
  std::vector<std::string> files;
  if (!cfg.calibration.samples.empty())
    files = globSorted(cfg.calibration.samples);
  if (files.empty() && cfg.verify.enabled)
    if (std::string input = verifyInputPath(cfg); !input.empty())
      files.push_back(input);
  if (files.size() > most)
    files.resize(most);
  return files;
}

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

PipelineOptions cli::pipelineOptionsOf(const config::DeployConfig &cfg) {
  PipelineOptions p;
  p.layerGroups = cfg.layer_group_enabled;
  p.precision = config::toString(cfg.quantize);
  for (const auto &[name, dtype] : cfg.qtable)
    p.qtable.push_back(name + "=" + config::toString(dtype));
  p.asymmetric = cfg.calibration.asymmetric;
  p.keepTensors = cfg.keep_tensors;
  p.modulatedConv = config::toString(cfg.modulated_conv);
  return p;
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
  if (llvm::sys::fs::exists(table)) {
    std::map<std::string, calib::TensorRange> read;
    if (auto err = calib::readCalibrationTable(table, read); !err.empty()) {
      std::fprintf(stderr, "%s\n", err.c_str());
      return 2;
    }
    for (const auto &[name, r] : read)
      ranges[name] = Range{r.threshold, r.min, r.max};
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
  module.walk([&](func::FuncOp func) { kiln::annotateRanges(func, ranges); });
  return 0;
}

LogicalResult cli::lowerToTpuIR(ModuleOp module, const PipelineOptions &pipeline) {
  PassManager lower(module.getContext());
  addIRChecks(lower);
  addPrecisionPipeline(lower, pipeline);
  addTpuLoweringPipeline(lower, pipeline);
  return lower.run(module);
}
