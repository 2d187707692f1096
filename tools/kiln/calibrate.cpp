// kiln calibrate CONFIG.yaml [-o TABLE] [--samples N]
// kiln calibrate CONFIG.yaml --search TARGET_COSINE [-o QTABLE.yaml]
//   [--search-samples N] [--keep-dtype f16|bf16]
//
// Imports the config's model, runs the Top pipeline (so the tensor names are
// the ones lowering sees) and interprets it on every calibration sample,
// collecting each tensor's range: the net inputs and every op result. minmax
// takes one pass over the samples; kl and percentile take two (ranges, then
// histograms of |x| over [0, absmax], see CalibrationTable.h). Writes the
// table of docs/precision.md. With --search, the table goes where the config
// says (compile reads it there), and the sensitivity search (Search.h) writes
// a qtable file: -o names it (default <config dir>/out/<name>.qtable.yaml).
#include "Commands.h"
#include "Precision.h"
#include "Search.h"

#include "kiln/Calibration/CalibrationTable.h"
#include "kiln/Config/Config.h"
#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"
#include "kiln/Frontend/Onnx/OnnxImporter.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Support/IRChecks.h"
#include "kiln/Support/Pipeline.h"
#include "kiln/host/npz.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace kiln;
using namespace kiln::cli;

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// `calibrate [########........] 8/16 samples`: in place on a terminal, one
/// line per step otherwise.
class Progress {
public:
  Progress(size_t total, unsigned passes)
      : total_(total), passes_(passes), tty_(isatty(fileno(stderr))) {}

  void update(size_t done, unsigned pass) {
    constexpr size_t kWidth = 24;
    const size_t filled = total_ ? done * kWidth / total_ : kWidth;
    std::string bar(filled, '#');
    bar.append(kWidth - filled, '.');
    std::string what = passes_ == 1 ? ""
                       : pass == 0  ? " (pass 1/2: ranges)"
                                    : " (pass 2/2: histograms)";
    std::fprintf(stderr, "%scalibrate [%s] %zu/%zu samples%s%s",
                 tty_ ? "\r" : "", bar.c_str(), done, total_, what.c_str(),
                 tty_ ? "\x1b[K" : "\n");
    std::fflush(stderr);
  }
  bool interactive() const { return tty_; }
  void finish() {
    if (tty_)
      std::fputc('\n', stderr);
  }

private:
  size_t total_;
  unsigned passes_;
  bool tty_;
};

struct NetInput {
  std::string name;
  std::vector<int64_t> shape;
};

} // namespace

int kiln::cli::calibrateMain(const Args &args) {
  std::string configPath, output;
  long maxSamples = -1;
  bool search = false;
  SearchOptions searchOptions;
  long searchSamples = 8;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "-o" || args[i] == "--output") && i + 1 < args.size()) {
      output = args[++i];
    } else if (args[i] == "--search" && i + 1 < args.size()) {
      const std::string &t = args[++i];
      char *end = nullptr;
      searchOptions.target = std::strtod(t.c_str(), &end);
      if (t.empty() || *end || !(searchOptions.target > 0 && searchOptions.target <= 1))
        return fail("calibrate: --search expects a target cosine in (0, 1], got '" + t + "'");
      search = true;
    } else if (args[i] == "--search-samples" && i + 1 < args.size()) {
      const std::string &t = args[++i];
      char *end = nullptr;
      searchSamples = std::strtol(t.c_str(), &end, 10);
      if (t.empty() || *end || searchSamples < 1)
        return fail("calibrate: --search-samples expects a positive count, got '" + t + "'");
    } else if (args[i] == "--keep-dtype" && i + 1 < args.size()) {
      searchOptions.keepDtype = args[++i];
      if (searchOptions.keepDtype != "f16" && searchOptions.keepDtype != "bf16")
        return fail("calibrate: --keep-dtype expects f16 or bf16, got '" +
                    searchOptions.keepDtype + "'");
    } else if (args[i] == "--samples" && i + 1 < args.size()) {
      const std::string &t = args[++i];
      char *end = nullptr;
      maxSamples = std::strtol(t.c_str(), &end, 10);
      if (t.empty() || *end || maxSamples < 1)
        return fail("calibrate: --samples expects a positive count, got '" +
                    t + "'");
    } else if (!args[i].empty() && args[i][0] == '-') {
      return fail("calibrate: unknown option '" + args[i] + "'");
    } else if (configPath.empty()) {
      configPath = args[i];
    } else {
      return fail("calibrate expects one config file, got '" + configPath +
                  "' and '" + args[i] + "'");
    }
  }
  if (configPath.empty())
    return fail("calibrate expects a config file: kiln calibrate CONFIG.yaml "
                "[-o TABLE] [--samples N] | --search TARGET_COSINE [-o QTABLE.yaml]");
  const auto start = std::chrono::steady_clock::now();

  config::DeployConfig cfg;
  if (auto err = config::loadConfig(configPath, cfg); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 2;
  }
  if (search && cfg.quantize != config::DType::INT8)
    return fail("calibrate --search: " + configPath + " has quantize: " +
                config::toString(cfg.quantize) + "; the search is for quantize: int8");
  const config::Calibration &calibration = cfg.calibration;
  if (calibration.samples.empty())
    return fail(configPath + ": no calibration samples: add 'calibration: "
                             "{samples: path/*.npz}' to the config");
  std::vector<std::string> samples = globSorted(calibration.samples);
  if (samples.empty())
    return fail("no calibration samples match '" + calibration.samples + "'");
  if (maxSamples > 0) {
    if (size_t(maxSamples) > samples.size())
      return fail("--samples " + std::to_string(maxSamples) + " but only " +
                  std::to_string(samples.size()) + " files match '" +
                  calibration.samples + "'");
    samples.resize(size_t(maxSamples));
  }
  if (search) {
    searchOptions.output = output;
    if (searchOptions.output.empty()) {
      llvm::SmallString<256> path(llvm::sys::path::parent_path(cfg.config_path));
      llvm::sys::path::append(path, "out", cfg.name + ".qtable.yaml");
      searchOptions.output = std::string(path.str());
    }
    output.clear();
  }
  if (output.empty())
    output = calibrationTablePath(cfg);
  // The samples the search measures on (the first ones).
  std::vector<interp::TensorMap> searchInputs;

  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect, top::TopDialect, tpu::TpuDialect>();
  ImportOptions importOpts = importOptionsOf(cfg);
  OwningOpRef<ModuleOp> module = importOnnx(ctx, cfg.model, importOpts);
  if (!module)
    return 1;
  PassManager pm(&ctx);
  addIRChecks(pm);
  addTopPipeline(pm, pipelineOptionsOf(cfg));
  if (failed(pm.run(*module)))
    return 1;
  auto func = module->lookupSymbol<func::FuncOp>("main");
  if (!func)
    return fail(cfg.model + ": the imported module has no @main function");

  std::vector<NetInput> netInputs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    NetInput in;
    auto name = func.getArgAttrOfType<StringAttr>(i, "kiln.name");
    in.name = name ? name.str() : "arg" + std::to_string(i);
    if (auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType()))
      in.shape.assign(type.getShape().begin(), type.getShape().end());
    netInputs.push_back(std::move(in));
  }

  // Reads one sample's net inputs, checking names and shapes.
  auto readSample = [&](const std::string &path, interp::TensorMap &inputs,
                        std::string &error) {
    std::vector<host::Array> arrays;
    if (auto err = host::readNpz(path, arrays); !err.empty()) {
      error = err;
      return false;
    }
    for (const NetInput &in : netInputs) {
      const host::Array *found = nullptr;
      for (const host::Array &a : arrays)
        if (a.name == in.name)
          found = &a;
      if (!found) {
        std::string have;
        for (const host::Array &a : arrays)
          have += (have.empty() ? "'" : ", '") + a.name + "'";
        error = path + ": no array named '" + in.name +
                "' for the model input '" + in.name + "' (the file has " +
                (have.empty() ? "no arrays" : have) + ")";
        return false;
      }
      if (found->shape != in.shape) {
        error = path + ": array '" + in.name + "' has shape " +
                shapeString(found->shape) + ", the model input needs " +
                shapeString(in.shape);
        return false;
      }
      inputs[in.name] = interp::Tensor{found->shape, found->toF32()};
    }
    return true;
  };

  calib::Calibrator calibrator(calibration.method, calibration.percentile);
  const unsigned passes = calibrator.passes();
  Progress progress(samples.size(), passes);
  for (unsigned pass = 0; pass < passes; ++pass) {
    if (progress.interactive())
      progress.update(0, pass);
    for (size_t s = 0; s < samples.size(); ++s) {
      interp::TensorMap inputs, outputs, values;
      std::string error;
      if (!readSample(samples[s], inputs, error)) {
        progress.finish();
        return fail(error);
      }
      if (failed(interp::runTop(func, inputs, outputs, &values))) {
        progress.finish();
        return fail("the Top interpreter failed on sample " + samples[s]);
      }
      if (search && pass == 0 && s < size_t(searchSamples))
        searchInputs.push_back(inputs);
      for (const NetInput &in : netInputs) {
        const interp::Tensor &t = inputs.at(in.name);
        calibrator.observe(pass, in.name, t.data.data(), t.data.size());
      }
      // `values` is keyed by name: follow the function body so the table
      // lists the tensors in the order the network computes them.
      func.walk([&](Operation *op) {
        auto loc = op->getLoc()->findInstanceOf<NameLoc>();
        if (!loc)
          return;
        auto it = values.find(loc.getName().str());
        if (it == values.end())
          return;
        calibrator.observe(pass, it->first, it->second.data.data(),
                           it->second.data.size());
        values.erase(it);
      });
      for (const auto &[name, t] : values)
        calibrator.observe(pass, name, t.data.data(), t.data.size());
      progress.update(s + 1, pass);
    }
  }
  progress.finish();

  std::vector<calib::NamedRange> table = calibrator.finish();
  calib::TableInfo info;
  info.model = cfg.model;
  info.samples = samples.size();
  info.method = calibration.method;
  if (auto dir = llvm::sys::path::parent_path(output); !dir.empty())
    llvm::sys::fs::create_directories(dir);
  if (auto err = calib::writeCalibrationTable(output, table, info);
      !err.empty())
    return fail(err);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  std::printf("calibrated %s: %zu tensors, %zu samples, method %s -> %s "
              "(%.1f s)\n",
              cfg.name.c_str(), table.size(), samples.size(),
              config::toString(calibration.method), output.c_str(), seconds);
  if (!search)
    return 0;
  std::fflush(stdout);
  cfg.calibration.table = output;
  return searchPrecision(cfg, *module, searchInputs, searchOptions);
}
