// The INT8 sensitivity search of `kiln calibrate --search TARGET`.
//
// Every measurement lowers a clone of the annotated Top IR exactly as `kiln
// compile` does (lowerToTpuIR with the config's pipeline options plus the
// tried qtable entries), runs the Tpu interpreter on the samples and takes
// the mean cosine, over samples and net outputs, against the Top
// interpreter's f32 outputs.
#include "Search.h"

#include "Commands.h"
#include "ConfigModel.h"
#include "Ranges.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Interpreter/TpuInterpreter.h"
#include "kiln/Support/IRChecks.h"
#include "kiln/host/compare.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

using namespace mlir;
using namespace kiln;

namespace {

func::FuncOp mainOf(ModuleOp module) { return module.lookupSymbol<func::FuncOp>("main"); }

/// kiln compare's cosine; 0 for tensors of different sizes.
double cosine(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() ? host::similarity(a.data(), b.data(), a.size()).cosine : 0.0;
}

/// YAML double-quoted scalar.
std::string quoted(const std::string &s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      q += '\\';
    q += c;
  }
  return q + "\"";
}

class Searcher {
public:
  Searcher(const config::DeployConfig &cfg, ModuleOp top,
           const std::vector<interp::TensorMap> &samples)
      : cfg_(cfg), top_(top), samples_(samples) {}

  /// The f32 outputs of every sample.
  bool reference() {
    for (const interp::TensorMap &in : samples_) {
      interp::TensorMap out;
      if (failed(interp::runTop(mainOf(top_), in, out)))
        return false;
      reference_.push_back(std::move(out));
    }
    return true;
  }

  /// The ONNX names of the ops top-assign-precision makes INT8, in program
  /// order.
  std::optional<std::vector<std::string>> int8Layers() {
    OwningOpRef<ModuleOp> clone = top_.clone();
    PassManager pm(top_.getContext());
    addIRChecks(pm);
    addPrecisionPipeline(pm, cli::pipelineOptionsOf(cfg_));
    if (failed(pm.run(*clone)))
      return std::nullopt;
    std::vector<std::string> names;
    std::set<std::string> seen;
    clone->walk([&](Operation *op) {
      if (!isa<top::TopDialect>(op->getDialect()) || isa<top::WeightOp, top::NoneOp>(op))
        return;
      std::string name = opName(op);
      if (top::runDtype(op) == top::DType::INT8 && !name.empty() && seen.insert(name).second)
        names.push_back(name);
    });
    return names;
  }

  /// Mean cosine against f32 with `kept` in `dtype`; nullopt after a
  /// diagnostic if lowering or the interpreter fails.
  std::optional<double> measure(const std::vector<std::string> &kept, const std::string &dtype) {
    PipelineOptions pipeline = cli::pipelineOptionsOf(cfg_);
    for (const std::string &name : kept)
      pipeline.qtable.push_back(name + "=" + dtype);
    OwningOpRef<ModuleOp> tpu = top_.clone();
    {
      // The tried names are ops of the model: no "qtable names" warnings.
      ScopedDiagnosticHandler quiet(top_.getContext(), [](Diagnostic &d) {
        return success(d.getSeverity() == DiagnosticSeverity::Warning);
      });
      if (failed(cli::lowerToTpuIR(*tpu, pipeline)))
        return std::nullopt;
    }
    double sum = 0;
    size_t count = 0;
    for (size_t s = 0; s < samples_.size(); ++s) {
      interp::TensorMap out;
      if (failed(interp::runTpu(mainOf(*tpu), samples_[s], out)))
        return std::nullopt;
      for (const auto &[name, ref] : reference_[s]) {
        auto it = out.find(name);
        sum += it == out.end() ? 0.0 : cosine(ref.data, it->second.data);
        ++count;
      }
    }
    ++runs_;
    return count ? sum / double(count) : 1.0;
  }
  size_t runs() const { return runs_; }

private:
  const config::DeployConfig &cfg_;
  ModuleOp top_;
  const std::vector<interp::TensorMap> &samples_;
  std::vector<interp::TensorMap> reference_;
  size_t runs_ = 0;
};

std::string writeQtable(const std::string &path, const config::DeployConfig &cfg,
                        const cli::SearchOptions &options, size_t samples, double before,
                        double after, const std::vector<std::string> &kept) {
  if (auto dir = llvm::sys::path::parent_path(path); !dir.empty())
    llvm::sys::fs::create_directories(dir);
  std::ofstream out(path);
  if (!out)
    return "cannot write the qtable file '" + path + "'";
  char line[256];
  std::snprintf(line, sizeof line,
                "# kiln calibrate --search %.6g: %zu samples, mean cosine against f32 "
                "%.6f (all int8) -> %.6f\n",
                options.target, samples, before, after);
  out << "# qtable of " << cfg.name << " (model " << cfg.model << ")\n" << line;
  out << "# include it with `qtable_file: PATH` in the config (an inline qtable wins)\n";
  if (kept.empty())
    out << "{}\n";
  for (const std::string &name : kept)
    out << quoted(name) << ": " << options.keepDtype << "\n";
  out.close();
  if (!out)
    return "cannot write the qtable file '" + path + "'";
  return "";
}

/// `path` as the config would name it: relative to the config's directory.
std::string relativeToConfig(const std::string &path, const std::string &configPath) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(configPath).parent_path(), ec);
  fs::path rel = fs::absolute(path, ec).lexically_relative(dir);
  return rel.empty() ? path : rel.string();
}

} // namespace

int cli::searchPrecision(const config::DeployConfig &cfg, ModuleOp top,
                         const std::vector<interp::TensorMap> &samples,
                         const SearchOptions &options) {
  const auto start = std::chrono::steady_clock::now();
  PipelineOptions pipeline = pipelineOptionsOf(cfg);
  if (int rc = annotateModule(cfg, top, pipeline); rc != 0)
    return rc;
  Searcher searcher(cfg, top, samples);
  if (!searcher.reference())
    return fail("search: the Top interpreter failed on a calibration sample");
  std::optional<std::vector<std::string>> layers = searcher.int8Layers();
  if (!layers)
    return 1;
  std::optional<double> plain = searcher.measure({}, options.keepDtype);
  if (!plain)
    return 1;
  std::printf("search: all int8 (%zu int8 layers): mean cosine %.6f against f32 over %zu "
              "samples, target %.6g\n",
              layers->size(), *plain, samples.size(), options.target);
  std::fflush(stdout);

  double current = *plain;
  std::vector<std::string> kept;
  if (current < options.target) {
    // Each layer alone in the wider dtype: its INT8 damage.
    struct Gain {
      std::string name;
      double cosine;
    };
    std::vector<Gain> gains;
    for (const std::string &name : *layers) {
      std::optional<double> c = searcher.measure({name}, options.keepDtype);
      if (!c)
        return 1;
      gains.push_back({name, *c});
    }
    std::stable_sort(gains.begin(), gains.end(),
                     [](const Gain &a, const Gain &b) { return a.cosine > b.cosine; });
    std::printf("search: each layer alone in %s (best %zu of %zu):\n", options.keepDtype.c_str(),
                std::min<size_t>(gains.size(), 5), gains.size());
    for (size_t i = 0; i < gains.size() && i < 5; ++i)
      std::printf("  %-48s %.6f (%+.6f)\n", gains[i].name.c_str(), gains[i].cosine,
                  gains[i].cosine - *plain);
    // Greedy, best single gain first: a layer stays if the network with it
    // and those kept before measures better.
    for (const Gain &g : gains) {
      if (current >= options.target || g.cosine <= *plain)
        break;
      std::vector<std::string> tried = kept;
      tried.push_back(g.name);
      std::optional<double> c = searcher.measure(tried, options.keepDtype);
      if (!c)
        return 1;
      if (*c <= current) {
        std::printf("  %s in %s: no gain with the layers kept (%.6f), not kept\n",
                    g.name.c_str(), options.keepDtype.c_str(), *c);
        continue;
      }
      std::printf("keep %s in %s: cosine %.6f -> %.6f\n", g.name.c_str(),
                  options.keepDtype.c_str(), current, *c);
      std::fflush(stdout);
      kept = std::move(tried);
      current = *c;
    }
  }
  if (auto err = writeQtable(options.output, cfg, options, samples.size(), *plain, current, kept);
      !err.empty())
    return fail(err);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool met = current >= options.target;
  std::printf("search: %s: mean cosine %.6f -> %.6f with %zu of %zu layers in %s "
              "(%zu runs, %.1f s) -> %s\n",
              met ? "target met" : "target NOT met", *plain, current, kept.size(),
              layers->size(), options.keepDtype.c_str(), searcher.runs(), seconds,
              options.output.c_str());
  std::printf("  use it: add `qtable_file: %s` to %s\n",
              relativeToConfig(options.output, cfg.config_path).c_str(), cfg.config_path.c_str());
  return met ? 0 : 1;
}
