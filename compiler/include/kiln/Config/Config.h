//===- Config.h - YAML deployment config ------------------------*- C++ -*-===//
//
// The deployment config (docs/DESIGN.md section 9) loaded into a typed struct.
// Plain C++17 over libyaml: no LLVM, so tools and tests can use it alone.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONFIG_CONFIG_H
#define KILN_CONFIG_CONFIG_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::config {

enum class DType { F32, F16, BF16, INT8 };
enum class RandomOps { Reject, Const, Input };
// isa: the command set the bmodel carries. Kiln is kiln's own records (what
// the runtime and cmodel run today); Bm1684x adds, per layer group, the
// chip's own TIU and GDMA streams (docs/DESIGN.md section 4.1).
enum class Isa { Kiln, Bm1684x };
// container: the file format the bmodel is written in. Kiln is kiln's own
// (schemas/bmodel.fbs); Sophgo is the container libbmrt loads on boards
// (schemas/sophgo_bmodel.fbs), which needs isa: bm1684x and is its default.
enum class Container { Kiln, Sophgo };
// calibration.method: how a tensor's INT8 threshold is found. Auto chooses
// one of the others per tensor by its effect at the net outputs
// (docs/precision.md, "Calibration table").
enum class CalibMethod { MinMax, KL, Percentile, Mse, Auto };
// optimize.modulated_conv: StyleGAN2-style computed filters (docs/DESIGN.md
// section 9).
enum class ModulatedConv { Auto, Rewrite, Keep };

// An input's shapes: `shape: [...]` gives one for every stage; `shapes:
// [[...], ...]` one per stage (a net compiled for several input shapes,
// docs/DESIGN.md section 9).
struct InputOverride {
  std::string name;
  std::vector<std::vector<int64_t>> shapes;
};

struct Calibration {
  std::string samples; // glob, resolved relative to the config
  CalibMethod method = CalibMethod::MinMax;
  double percentile = 99.99;
  std::string table;       // calibration table path, resolved relative to the
                           // config; empty if not given (`kiln calibrate`
                           // then writes <config dir>/out/<name>.calib)
  bool asymmetric = false; // int8 activations with a zero point (min/max)
  bool bias_correction = true; // int8 conv biases corrected for filter rounding
};

struct Verify {
  bool enabled = false; // true when the config has a `verify` key
  std::string reference;
  double min_cosine = 0.99;
  double min_euclidean = 0.90;
};

struct DeployConfig {
  std::string config_path; // as passed to loadConfig
  std::string model;
  std::string name;
  std::string chip = "bm1684x";
  Isa isa = Isa::Kiln;
  std::optional<Container> container; // unset: containerOf() picks by isa
  std::vector<InputOverride> inputs; // in config order
  DType quantize = DType::F32;
  // The inline `qtable` merged over the entries of `qtable_file` (a YAML
  // mapping op name -> dtype; the inline entry wins on a conflict).
  std::map<std::string, DType> qtable;
  std::string qtable_file; // resolved relative to the config; empty if none
  Calibration calibration;
  RandomOps random_ops = RandomOps::Reject;
  uint64_t random_seed = 0;
  bool layer_group_enabled = true;
  ModulatedConv modulated_conv = ModulatedConv::Auto;
  // debug.keep_tensors: every activation gets DDR of its own, so all of them
  // stay readable after a run (kiln_net_read_tensor on a board). The default
  // plan shares DDR by liveness.
  bool keep_tensors = false;
  Verify verify;
  std::string output;
};

// Loads and checks a config. Paths in it (model, output, verify.reference,
// calibration.samples, calibration.table, qtable_file) are resolved relative to the config file's directory;
// `name` defaults to the model file's stem and `output` to
// <config dir>/out/<name>.bmodel. Returns an empty string on success, else
// "FILE:LINE:COL: error: MESSAGE" with the 1-based position of the offending
// key or value.
std::string loadConfig(const std::string &path, DeployConfig &out);

const char *toString(DType dtype);             // f32 | f16 | bf16 | int8
const char *toString(RandomOps randomOps);     // reject | const | input
const char *toString(CalibMethod calibMethod); // minmax | kl | percentile | mse | auto
const char *toString(ModulatedConv mode);      // auto | rewrite | keep
const char *toString(Isa isa);                 // kiln | bm1684x
const char *toString(Container container);     // kiln | sophgo
/// The container the config asks for, or its isa's default.
Container containerOf(const DeployConfig &config);
/// How many stages (sets of input shapes) the inputs ask for: the length of
/// their `shapes:` lists (loadConfig checks that they agree), else 1.
size_t stageCount(const DeployConfig &config);
/// The config of one stage: every input has that stage's shape only.
DeployConfig stageConfig(const DeployConfig &config, size_t stage);

} // namespace kiln::config

#endif // KILN_CONFIG_CONFIG_H
