// The INT8 sensitivity search of `kiln calibrate --search TARGET` and the
// per-layer damage report of `kiln calibrate --damage`.
//
// Every measurement lowers a clone of the annotated Top IR exactly as `kiln
// compile` does (lowerToTpuIR with the config's pipeline options plus the
// tried qtable entries), runs the Tpu interpreter on the samples and takes
// the mean cosine, over samples and net outputs, against the Top
// interpreter's f32 outputs. Ranking costs one lowering: each layer's own
// damage comes from one Tpu run fed the f32 values (runTpu's reference).
#include "Search.h"

#include "Commands.h"
#include "ConfigModel.h"
#include "Ranges.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
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

/// A float or integer element type as the qtable spells dtypes (f16, bf16, f32).
std::string dtypeName(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isF16())
    return "f16";
  if (element.isBF16())
    return "bf16";
  if (element.isF32())
    return "f32";
  std::string s;
  llvm::raw_string_ostream os(s);
  element.print(os);
  return s;
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

/// One named layer of the all-INT8 network, averaged over the samples.
struct LayerDamage {
  std::string name, kind, dtype; ///< ONNX name, Top op, the dtype it runs in
  double own = 0;     ///< cosine against f32 computed from f32-exact inputs
  double chained = 0; ///< cosine against f32 in the all-INT8 network
  double alone = 1;   ///< the net outputs' cosine against f32 with only it in INT8
  /// The layers that read its result (through reshapes): kept wider with it,
  /// or its result would still be rounded to INT8 for them.
  std::vector<std::string> readers;
};

/// How many samples measure each layer's damage at the net outputs: each
/// costs a partial f32 run per INT8 layer.
constexpr size_t kAloneSamples = 2;

class Searcher {
public:
  Searcher(const config::DeployConfig &cfg, ModuleOp top,
           const std::vector<interp::TensorMap> &samples, size_t heldOut)
      : cfg_(cfg), top_(top), samples_(samples), heldOut_(heldOut) {}

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

  /// Every named Top op, in program order, with the dtype the all-INT8
  /// lowering gives its result (convert-top-to-tpu keeps ops without an INT8
  /// form wider).
  std::optional<std::vector<LayerDamage>> layers() {
    plain_ = lower({}, "");
    if (!plain_)
      return std::nullopt;
    std::map<std::string, std::string> dtypes;
    plain_->walk([&](Operation *op) {
      if (std::string name = opName(op); !name.empty() && op->getNumResults() == 1) {
        Type type = op->getResult(0).getType();
        dtypes[name] = tpu::isInt8Type(type) ? "int8" : dtypeName(type);
      }
    });
    std::vector<LayerDamage> layers;
    std::set<std::string> seen;
    top_.walk([&](Operation *op) {
      if (!isa<top::TopDialect>(op->getDialect()) || isa<top::WeightOp, top::NoneOp>(op))
        return;
      std::string name = opName(op);
      auto dtype = dtypes.find(name);
      if (dtype == dtypes.end() || !seen.insert(name).second)
        return;
      LayerDamage layer;
      layer.name = name;
      layer.kind = op->getName().getStringRef().str();
      layer.dtype = dtype->second;
      SmallVector<Operation *> users(op->getUsers());
      while (!users.empty()) {
        Operation *user = users.pop_back_val();
        if (isa<top::ReshapeOp>(user))
          users.append(user->getUsers().begin(), user->getUsers().end());
        else if (std::string reader = opName(user); !reader.empty() && reader != name)
          layer.readers.push_back(reader);
      }
      layers.push_back(std::move(layer));
    });
    return layers;
  }

  /// After layers(): fills each layer's own and chained cosine against f32
  /// on the first `count` search samples (the held-out one excluded), and
  /// each INT8 layer's `alone` on the first kAloneSamples of them. False
  /// after a diagnostic.
  bool damage(std::vector<LayerDamage> &layers, size_t count) {
    ModuleOp tpu = *plain_;
    struct Sums {
      double own = 0, chained = 0, alone = 0;
    };
    std::map<std::string, Sums> sums;
    count = std::min(count, searched());
    const size_t aloneSamples = std::min(kAloneSamples, count);
    for (size_t s = 0; s < count; ++s) {
      // The f32 run: kept whole where `alone` reruns parts of it.
      interp::TensorMap out, f32, chained, own;
      interp::TopRun run;
      if (s < aloneSamples) {
        if (failed(run.run(mainOf(top_), samples_[s])))
          return false;
        f32 = run.namedValues();
      } else if (failed(interp::runTop(mainOf(top_), samples_[s], out, &f32))) {
        return false;
      }
      if (failed(interp::runTpu(mainOf(tpu), samples_[s], out, &chained)) ||
          failed(interp::runTpu(mainOf(tpu), samples_[s], out, &own, &f32)))
        return false;
      for (const LayerDamage &l : layers) {
        auto ref = f32.find(l.name);
        if (ref == f32.end())
          continue;
        auto c = chained.find(l.name), o = own.find(l.name);
        Sums &sum = sums[l.name];
        sum.own += o == own.end() ? 1.0 : cosine(ref->second.data, o->second.data);
        sum.chained += c == chained.end() ? 1.0 : cosine(ref->second.data, c->second.data);
      }
      if (s >= aloneSamples)
        continue;
      // Each INT8 layer's own result in the f32 network: its damage as the
      // outputs see it.
      for (const LayerDamage &l : layers) {
        auto o = own.find(l.name);
        interp::TensorMap outputs;
        double alone = 1.0;
        if (l.dtype == "int8" && o != own.end() &&
            succeeded(run.rerunWith(l.name, o->second, outputs)))
          alone = cli::meanCosine(run.outputs(), outputs);
        sums[l.name].alone += alone;
      }
    }
    for (LayerDamage &l : layers) {
      auto it = sums.find(l.name);
      if (it == sums.end())
        continue;
      l.own = count ? it->second.own / double(count) : 1.0;
      l.chained = count ? it->second.chained / double(count) : 1.0;
      l.alone = aloneSamples ? it->second.alone / double(aloneSamples) : 1.0;
    }
    return true;
  }

  /// Mean cosine against f32 with `kept` in `dtype` over the search samples
  /// and, when there is one, on the held-out sample; nullopt after a
  /// diagnostic if lowering or the interpreter fails.
  struct Measured {
    double searched = 0, heldOut = 0;
  };
  std::optional<Measured> measure(const std::vector<std::string> &kept,
                                  const std::string &dtype) {
    OwningOpRef<ModuleOp> tpu = lower(kept, dtype);
    if (!tpu)
      return std::nullopt;
    Measured m;
    for (auto [begin, end, mean] : {std::tuple{size_t(0), searched(), &m.searched},
                                    std::tuple{searched(), samples_.size(), &m.heldOut}}) {
      double sum = 0;
      for (size_t s = begin; s < end; ++s) {
        interp::TensorMap out;
        if (failed(interp::runTpu(mainOf(*tpu), samples_[s], out)))
          return std::nullopt;
        sum += cli::meanCosine(reference_[s], out);
      }
      *mean = end > begin ? sum / double(end - begin) : 1.0;
    }
    ++runs_;
    return m;
  }
  size_t runs() const { return runs_; }
  size_t searched() const { return samples_.size() - heldOut_; }

private:
  /// A clone of the Top IR lowered with `kept` in `dtype`.
  OwningOpRef<ModuleOp> lower(const std::vector<std::string> &kept, const std::string &dtype) {
    PipelineOptions pipeline = cli::pipelineOptionsOf(cfg_);
    for (const std::string &name : kept)
      pipeline.qtable.push_back(name + "=" + dtype);
    OwningOpRef<ModuleOp> tpu = top_.clone();
    // The tried names are ops of the model: no "qtable names" warnings.
    ScopedDiagnosticHandler quiet(top_.getContext(), [](Diagnostic &d) {
      return success(d.getSeverity() == DiagnosticSeverity::Warning);
    });
    if (failed(cli::lowerToTpuIR(*tpu, pipeline)))
      return nullptr;
    return tpu;
  }

  const config::DeployConfig &cfg_;
  ModuleOp top_;
  const std::vector<interp::TensorMap> &samples_;
  size_t heldOut_;
  std::vector<interp::TensorMap> reference_;
  OwningOpRef<ModuleOp> plain_; ///< the all-INT8 lowering (layers())
  size_t runs_ = 0;
};

void printDamage(const std::vector<LayerDamage> &layers, size_t rows) {
  std::printf("  %-40s %-18s %-5s %10s %10s %10s\n", "layer", "op", "dtype", "own", "in net",
              "alone");
  for (size_t i = 0; i < layers.size() && i < rows; ++i)
    std::printf("  %-40s %-18s %-5s %10.6f %10.6f %10.6f\n", layers[i].name.c_str(),
                layers[i].kind.c_str(), layers[i].dtype.c_str(), layers[i].own,
                layers[i].chained, layers[i].alone);
}

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

/// Annotates `top` and makes the searcher with its f32 reference; 0 or the
/// exit code after a diagnostic.
int prepare(const config::DeployConfig &cfg, ModuleOp top, Searcher &searcher) {
  if (int rc = cli::annotateModule(cfg, top, cli::pipelineOptionsOf(cfg)); rc != 0)
    return rc;
  if (!searcher.reference())
    return cli::fail("search: the Top interpreter failed on a calibration sample");
  return 0;
}

/// The INT8 layers, most damaging at the outputs (lowest `alone`) first,
/// then by their own damage.
std::vector<LayerDamage> byDamage(const std::vector<LayerDamage> &layers) {
  std::vector<LayerDamage> int8;
  for (const LayerDamage &l : layers)
    if (l.dtype == "int8")
      int8.push_back(l);
  std::stable_sort(int8.begin(), int8.end(), [](const LayerDamage &a, const LayerDamage &b) {
    return a.alone != b.alone ? a.alone < b.alone : a.own < b.own;
  });
  return int8;
}

/// The qtable names that keep `units` (indices into `ranked`) wider: each
/// layer and the INT8 layers that read it, in ranking order, once.
std::vector<std::string> namesOf(const std::vector<LayerDamage> &ranked,
                                 const std::vector<size_t> &units) {
  std::set<std::string> int8, seen;
  for (const LayerDamage &l : ranked)
    int8.insert(l.name);
  std::vector<std::string> names;
  for (size_t i : units) {
    if (seen.insert(ranked[i].name).second)
      names.push_back(ranked[i].name);
    for (const std::string &reader : ranked[i].readers)
      if (int8.count(reader) && seen.insert(reader).second)
        names.push_back(reader);
  }
  return names;
}

} // namespace

double cli::meanCosine(const interp::TensorMap &ref, const interp::TensorMap &got) {
  double sum = 0;
  for (const auto &[name, r] : ref) {
    auto it = got.find(name);
    sum += it == got.end() ? 0.0 : cosine(r.data, it->second.data);
  }
  return ref.empty() ? 1.0 : sum / double(ref.size());
}

int cli::damageReport(const config::DeployConfig &cfg, ModuleOp top,
                      const std::vector<interp::TensorMap> &samples) {
  Searcher searcher(cfg, top, samples, 0);
  if (int rc = prepare(cfg, top, searcher); rc != 0)
    return rc;
  std::optional<std::vector<LayerDamage>> layers = searcher.layers();
  if (!layers || !searcher.damage(*layers, samples.size()))
    return 1;
  std::printf("INT8 damage of %s per layer, mean over %zu input%s: cosine against the f32 "
              "interpreter of the layer computed from f32 inputs (own), of the layer in the "
              "all-INT8 network (in net: its own damage and what it inherits), and of the "
              "net outputs with only this layer in INT8 (alone, over %zu input%s)\n",
              cfg.name.c_str(), samples.size(), samples.size() == 1 ? "" : "s",
              std::min(kAloneSamples, samples.size()),
              std::min(kAloneSamples, samples.size()) == 1 ? "" : "s");
  printDamage(*layers, layers->size());
  std::vector<LayerDamage> ranked = byDamage(*layers);
  std::printf("most damaging INT8 layers (alone), %zu of %zu:\n",
              std::min<size_t>(ranked.size(), 10), ranked.size());
  printDamage(ranked, 10);
  return 0;
}

int cli::searchPrecision(const config::DeployConfig &cfg, ModuleOp top,
                         const std::vector<interp::TensorMap> &samples,
                         const SearchOptions &options) {
  const auto start = std::chrono::steady_clock::now();
  const size_t heldOut = samples.size() > options.samples ? 1 : 0;
  Searcher searcher(cfg, top, samples, heldOut);
  if (int rc = prepare(cfg, top, searcher); rc != 0)
    return rc;
  std::optional<std::vector<LayerDamage>> layers = searcher.layers();
  if (!layers)
    return 1;
  std::optional<Searcher::Measured> plain = searcher.measure({}, options.keepDtype);
  if (!plain)
    return 1;
  const size_t int8Count = byDamage(*layers).size();
  std::printf("search: all int8 (%zu int8 layers): mean cosine %.6f against f32 over %zu "
              "samples, target %.6g\n",
              int8Count, plain->searched, searcher.searched(), options.target);
  std::fflush(stdout);

  Searcher::Measured current = *plain;
  std::vector<std::string> kept;
  if (current.searched < options.target) {
    // Ranking needs `alone`, measured on the first samples only.
    if (!searcher.damage(*layers, kAloneSamples))
      return 1;
    std::vector<LayerDamage> ranked = byDamage(*layers);
    std::printf("search: most damaging INT8 layers (alone: the outputs' cosine with only it "
                "in INT8), %zu of %zu:\n",
                std::min<size_t>(ranked.size(), 10), ranked.size());
    printDamage(ranked, 10);
    // The k most damaging layers (with their readers) kept wider for k = 1,
    // 2, 4, ... until the target is met, then the least such k by
    // bisection: about 2 log2(n) runs. (INT8 errors of different layers
    // partly cancel, so a longer head is not always better: the head that
    // meets the target is the answer, not each step.)
    auto tryHead = [&](size_t k) -> std::optional<Searcher::Measured> {
      std::vector<size_t> units(k);
      for (size_t i = 0; i < k; ++i)
        units[i] = i;
      std::vector<std::string> names = namesOf(ranked, units);
      std::optional<Searcher::Measured> m = searcher.measure(names, options.keepDtype);
      if (m)
        std::printf("  ranks 1-%zu: %zu layers in %s with their readers, cosine %.6f%s\n", k,
                    names.size(), options.keepDtype.c_str(), m->searched,
                    m->searched >= options.target ? ": target met" : "");
      std::fflush(stdout);
      return m;
    };
    size_t failing = 0, meeting = 0, bestCount = 0;
    Searcher::Measured best = current;
    for (size_t k = 1; k <= ranked.size(); k = std::min(2 * k, ranked.size())) {
      std::optional<Searcher::Measured> m = tryHead(k);
      if (!m)
        return 1;
      if (m->searched > best.searched) {
        best = *m;
        bestCount = k;
      }
      if (m->searched >= options.target) {
        meeting = k;
        break;
      }
      failing = k;
      if (k == ranked.size())
        break;
    }
    while (meeting && meeting - failing > 1) {
      const size_t mid = (failing + meeting) / 2;
      std::optional<Searcher::Measured> m = tryHead(mid);
      if (!m)
        return 1;
      if (m->searched >= options.target) {
        meeting = mid;
        best = *m;
      } else {
        failing = mid;
      }
    }
    std::vector<size_t> units(meeting ? meeting : bestCount);
    for (size_t i = 0; i < units.size(); ++i)
      units[i] = i;
    current = best;
    // A short list loses the layers the others make unnecessary.
    constexpr size_t kPruneAtMost = 12;
    if (meeting && units.size() > 1 && units.size() <= kPruneAtMost)
      for (size_t i = units.size(); i-- > 0 && units.size() > 1;) {
        std::vector<size_t> tried = units;
        tried.erase(tried.begin() + i);
        std::optional<Searcher::Measured> m =
            searcher.measure(namesOf(ranked, tried), options.keepDtype);
        if (!m)
          return 1;
        if (m->searched < options.target)
          continue;
        std::printf("  without %s: cosine %.6f, still met: not kept\n",
                    ranked[units[i]].name.c_str(), m->searched);
        units = std::move(tried);
        current = *m;
      }
    kept = namesOf(ranked, units);
  }
  if (auto err = writeQtable(options.output, cfg, options, searcher.searched(), plain->searched,
                             current.searched, kept);
      !err.empty())
    return fail(err);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool met = current.searched >= options.target;
  std::printf("search: %s: mean cosine %.6f -> %.6f with %zu of %zu layers in %s "
              "(%zu runs, %.1f s) -> %s\n",
              met ? "target met" : "target NOT met", plain->searched, current.searched,
              kept.size(), int8Count, options.keepDtype.c_str(), searcher.runs(), seconds,
              options.output.c_str());
  if (heldOut)
    std::printf("  held out of the search (calibration sample %zu): cosine %.6f (all int8) -> "
                "%.6f\n",
                samples.size(), plain->heldOut, current.heldOut);
  std::printf("  use it: add `qtable_file: %s` to %s\n",
              relativeToConfig(options.output, cfg.config_path).c_str(), cfg.config_path.c_str());
  return met ? 0 : 1;
}
