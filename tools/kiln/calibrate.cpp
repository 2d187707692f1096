// kiln calibrate CONFIG.yaml [-o TABLE] [--samples N]
// kiln calibrate CONFIG.yaml --search TARGET_COSINE [-o QTABLE.yaml]
//   [--search-samples N] [--keep-dtype f16|bf16]
// kiln calibrate CONFIG.yaml --damage[=INPUT.npz] [--search-samples N]
//
// Imports the config's model, runs the Top pipeline (so the tensor names are
// the ones lowering sees) and interprets it on every calibration sample,
// collecting each tensor's range: the net inputs and every op result. minmax
// takes one pass over the samples; the others take two (ranges, then
// histograms of |x| over [0, absmax], see CalibrationTable.h); auto then
// chooses each tensor's threshold (ThresholdChoice.h). Writes the table of
// docs/precision.md. With --search, the table goes where the config
// says (compile reads it there), and the sensitivity search (Search.h) writes
// a qtable file: -o names it (default <config dir>/out/<name>.qtable.yaml).
// With --damage, after the table, the per-layer INT8 damage report on the
// given input (default: the first --search-samples samples).
#include "Commands.h"
#include "ConfigFiles.h"
#include "ConfigModel.h"
#include "Ranges.h"
#include "Search.h"
#include "ThresholdChoice.h"

#include "kiln/Calibration/CalibrationTable.h"
#include "kiln/Config/Config.h"
#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"
#include "kiln/Frontend/Onnx/OnnxImporter.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Support/IRChecks.h"
#include "kiln/Support/Names.h"
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
#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::cli;

llvm::cl::SubCommand kiln::cli::calibrateCommand(
    "calibrate", "Compute an INT8 calibration table from a config's calibration samples");

namespace {

/// `calibrate [########........] 8/16 samples`: redrawn in place on a
/// terminal; a log or a pipe gets only the final line.
class Progress {
public:
  Progress(size_t total, unsigned passes)
      : total_(total), passes_(passes), tty_(isatty(fileno(stderr))) {}

  void update(size_t done, unsigned pass) {
    if (!tty_)
      return;
    std::string what = passes_ == 1 ? ""
                       : pass == 0  ? " (pass 1/2: ranges)"
                                    : " (pass 2/2: histograms)";
    std::fprintf(stderr, "\r%s%s\x1b[K", line(done).c_str(), what.c_str());
    std::fflush(stderr);
  }
  /// Ends the bar; `done`: all samples went through every pass.
  void finish(bool done) {
    if (tty_)
      std::fputc('\n', stderr);
    else if (done)
      std::fprintf(stderr, "%s%s\n", line(total_).c_str(),
                   passes_ == 1 ? "" : " (2 passes: ranges, histograms)");
  }

private:
  std::string line(size_t done) const {
    constexpr size_t kWidth = 24;
    const size_t filled = total_ ? done * kWidth / total_ : kWidth;
    return "calibrate [" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] " +
           std::to_string(done) + "/" + std::to_string(total_) + " samples";
  }

  size_t total_;
  unsigned passes_;
  bool tty_;
};

struct NetInput {
  std::string name;
  std::vector<int64_t> shape;
};

namespace cl = llvm::cl;
cl::opt<std::string> configPath(cl::Positional, cl::Required, cl::desc("<CONFIG.yaml>"),
                                cl::sub(cli::calibrateCommand), cl::cat(cli::options()));
cl::opt<std::string> output("output",
                            cl::desc("The table to write (default: the config's "
                                     "calibration.table, else <config dir>/out/<name>.calib); "
                                     "with --search, the qtable file"),
                            cl::value_desc("FILE"), cl::sub(cli::calibrateCommand),
                            cl::cat(cli::options()));
// Aliases are hidden by default; -o is the usual spelling.
cl::alias outputShort("o", cl::desc("Alias for --output"), cl::aliasopt(output), cl::NotHidden);
cl::opt<unsigned> maxSamples("samples", cl::desc("Calibrate on the first N samples only"),
                             cl::value_desc("N"), cl::sub(cli::calibrateCommand),
                             cl::cat(cli::options()));
cl::opt<double> searchTarget("search",
                             cl::desc("Then search which layers to keep in a wider dtype "
                                      "until the mean cosine against f32 reaches TARGET"),
                             cl::value_desc("TARGET"), cl::sub(cli::calibrateCommand),
                             cl::cat(cli::options()));
cl::opt<unsigned> searchSamples("search-samples",
                                cl::desc("How many samples the search measures on"),
                                cl::value_desc("N"), cl::init(8),
                                cl::sub(cli::calibrateCommand), cl::cat(cli::options()));
cl::opt<std::string> damage("damage",
                           cl::desc("Then print each layer's INT8 damage (its own, and in the "
                                    "network) on INPUT (default: the first --search-samples "
                                    "samples)"),
                           cl::value_desc("INPUT.npz"), cl::ValueOptional,
                           cl::sub(cli::calibrateCommand), cl::cat(cli::options()));
cl::opt<std::string> keepDtype("keep-dtype",
                               cl::desc("The dtype the search keeps layers in: f16 or bf16"),
                               cl::value_desc("DTYPE"), cl::init("f16"),
                               cl::sub(cli::calibrateCommand), cl::cat(cli::options()));

/// How many samples calibration.method auto measures its choices on: each
/// costs a partial f32 run per tensor and candidate.
constexpr size_t kAutoSamples = 2;

} // namespace

int cli::calibrate(const config::DeployConfig &cfg, ModuleOp module,
                   const std::vector<std::string> &samples, const std::string &table,
                   size_t keep, std::vector<interp::TensorMap> *kept) {
  const auto start = std::chrono::steady_clock::now();
  auto func = module.lookupSymbol<func::FuncOp>("main");
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
                host::shapeString(found->shape) + ", the model input needs " +
                host::shapeString(in.shape);
        return false;
      }
      inputs[in.name] = interp::Tensor{found->shape, found->toF32()};
    }
    return true;
  };

  // The tensors convs read: their channel means go in the table (INT8 bias
  // correction, docs/precision.md).
  std::set<std::string> convInputs;
  func.walk([&](top::ConvOp conv) {
    Value in = conv->getOperand(0);
    if (auto arg = dyn_cast<BlockArgument>(in))
      convInputs.insert(netInputs[arg.getArgNumber()].name);
    else if (std::string name = opName(in.getDefiningOp()); !name.empty())
      convInputs.insert(name);
  });
  // Feeds one tensor to the calibrator, by channel when a conv reads it.
  auto observe = [&](calib::Calibrator &c, unsigned pass, const std::string &name,
                     const interp::Tensor &t) {
    size_t channels = 0, inner = 1;
    if (t.shape.size() >= 2 && convInputs.count(name)) {
      channels = size_t(t.shape[1]);
      for (size_t d = 2; d < t.shape.size(); ++d)
        inner *= size_t(t.shape[d]);
    }
    c.observe(pass, name, t.data.data(), t.data.size(), channels, inner);
  };

  const config::Calibration &calibration = cfg.calibration;
  calib::Calibrator calibrator(calibration.method, calibration.percentile);
  const unsigned passes = calibrator.passes();
  const bool autoMethod = calibration.method == config::CalibMethod::Auto;
  std::vector<interp::TensorMap> autoInputs; // what auto measures its choices on
  Progress progress(samples.size(), passes);
  for (unsigned pass = 0; pass < passes; ++pass) {
    progress.update(0, pass);
    for (size_t s = 0; s < samples.size(); ++s) {
      interp::TensorMap inputs, outputs, values;
      std::string error;
      if (!readSample(samples[s], inputs, error)) {
        progress.finish(false);
        return fail(error);
      }
      if (failed(interp::runTop(func, inputs, outputs, &values))) {
        progress.finish(false);
        return fail("the Top interpreter failed on sample " + samples[s]);
      }
      if (kept && pass == 0 && s < keep)
        kept->push_back(inputs);
      if (autoMethod && pass == 0 && s < kAutoSamples)
        autoInputs.push_back(inputs);
      for (const NetInput &in : netInputs)
        observe(calibrator, pass, in.name, inputs.at(in.name));
      // `values` is keyed by name: follow the function body so the table
      // lists the tensors in the order the network computes them.
      func.walk([&](Operation *op) {
        std::string name = opName(op);
        if (name.empty())
          return;
        auto it = values.find(name);
        if (it == values.end())
          return;
        observe(calibrator, pass, it->first, it->second);
        values.erase(it);
      });
      for (const auto &[name, t] : values)
        observe(calibrator, pass, name, t);
      progress.update(s + 1, pass);
    }
  }
  progress.finish(true);

  std::vector<calib::NamedRange> ranges = calibrator.finish();
  if (autoMethod && !chooseThresholds(func, calibrator, autoInputs, ranges))
    return fail("the Top interpreter failed while choosing thresholds");
  calib::TableInfo info;
  info.model = cfg.model;
  info.samples = samples.size();
  info.method = calibration.method;
  if (auto dir = llvm::sys::path::parent_path(table); !dir.empty())
    llvm::sys::fs::create_directories(dir);
  if (auto err = calib::writeCalibrationTable(table, ranges, info); !err.empty())
    return fail(err);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  std::printf("calibrated %s: %zu tensors, %zu samples, method %s -> %s "
              "(%.1f s)\n",
              cfg.name.c_str(), ranges.size(), samples.size(),
              config::toString(calibration.method), table.c_str(), seconds);
  std::fflush(stdout);
  return 0;
}

int kiln::cli::calibrateMain() {
  const bool search = searchTarget.getNumOccurrences() > 0;
  if (search && !(searchTarget > 0 && searchTarget <= 1)) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", double(searchTarget));
    return fail(std::string("calibrate: --search expects a target cosine in (0, 1], got ") + got);
  }
  if (searchSamples < 1)
    return fail("calibrate: --search-samples expects a positive count");
  if (keepDtype != "f16" && keepDtype != "bf16")
    return fail("calibrate: --keep-dtype expects f16 or bf16, got '" + keepDtype + "'");
  if (maxSamples.getNumOccurrences() && maxSamples < 1)
    return fail("calibrate: --samples expects a positive count");

  config::DeployConfig cfg;
  if (auto err = config::loadConfig(configPath, cfg); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 2;
  }
  const bool report = damage.getNumOccurrences() > 0;
  if (search && report)
    return fail("calibrate: --search and --damage are separate runs");
  if ((search || report) && cfg.quantize != config::DType::INT8)
    return fail(std::string("calibrate ") + (search ? "--search" : "--damage") + ": " +
                configPath + " has quantize: " + config::toString(cfg.quantize) +
                "; it is for quantize: int8");
  std::vector<std::string> samples;
  if (auto err = calibrationSamples(cfg, maxSamples, samples); !err.empty())
    return fail(err);
  std::string table = output;
  SearchOptions searchOptions;
  if (search) {
    searchOptions.target = searchTarget;
    searchOptions.keepDtype = keepDtype;
    searchOptions.output = output;
    searchOptions.samples = searchSamples;
    if (searchOptions.output.empty()) {
      llvm::SmallString<256> path(llvm::sys::path::parent_path(cfg.config_path));
      llvm::sys::path::append(path, "out", cfg.name + ".qtable.yaml");
      searchOptions.output = std::string(path.str());
    }
    table.clear();
  }
  if (table.empty())
    table = calibrationTablePath(cfg);

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = importConfigModel(ctx, cfg);
  if (!module)
    return 1;
  PassManager pm(&ctx);
  addIRChecks(pm);
  addTopPipeline(pm, pipelineOptionsOf(cfg));
  if (failed(pm.run(*module)))
    return 1;
  // The samples the search measures on (the first ones) and the one it
  // holds out; the damage report's.
  std::vector<interp::TensorMap> searchInputs;
  const size_t keep = search ? searchSamples + 1 : report && damage.empty() ? searchSamples : 0;
  if (int rc = calibrate(cfg, *module, samples, table, keep, &searchInputs))
    return rc;
  cfg.calibration.table = table;
  if (search)
    return searchPrecision(cfg, *module, searchInputs, searchOptions);
  if (!report)
    return 0;
  if (!damage.empty()) {
    std::vector<host::Array> arrays;
    if (auto err = host::readNpz(damage, arrays); !err.empty())
      return fail(err);
    interp::TensorMap input;
    for (const host::Array &a : arrays)
      input[a.name] = interp::Tensor{a.shape, a.toF32()};
    searchInputs = {std::move(input)};
  }
  return damageReport(cfg, *module, searchInputs);
}
