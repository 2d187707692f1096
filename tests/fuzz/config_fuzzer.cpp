//===- config_fuzzer.cpp - Fuzz the YAML deployment-config loader ---------===//
//
// libFuzzer harness over loadConfig, the first thing `kiln compile`,
// `kiln calibrate` and `kiln batch` do: the input's bytes are written as a
// config file and loaded. The config sits in a private directory laid out
// like the checkout, so the example configs (configs/examples, with their
// model directories renamed to `net` by sanitizers.sh) find their model,
// reference, calibration samples and a qtable file and get past those
// checks. Built with -fsanitize=fuzzer,address,undefined by the compiler's
// sanitizer build (tests/fuzz/sanitizers.sh); with replay_main.cpp it
// replays a corpus anywhere else.
//
// Any config may be refused, but only as "FILE:LINE:COL: error: MESSAGE" on
// one line of printable text, FILE being the config or its qtable file. The
// harness aborts (a crash to libFuzzer) on anything else, and on a config
// accepted with values the loader promises to reject.
//
//===----------------------------------------------------------------------===//
#include "fuzz_files.h"
#include "kiln/Config/Config.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using namespace kiln::config;

namespace {

namespace fs = std::filesystem;

/// The scratch checkout: configs/examples/fuzz.yaml (the input),
/// configs/examples/qtable.yaml, build/models/net/{model.onnx, reference.npz,
/// calib/a.npz}. Removed at exit.
struct Scratch {
  fs::path root;
  std::string config, qtable;
  Scratch() {
    root = kiln::fuzz::makeScratchDir("kiln_config_fuzz.XXXXXX");
    fs::path examples = root / "configs" / "examples", net = root / "build" / "models" / "net";
    fs::create_directories(examples);
    fs::create_directories(net / "calib");
    for (const char *file : {"model.onnx", "reference.npz", "calib/a.npz"})
      std::ofstream(net / file) << "x";
    config = (examples / "fuzz.yaml").string();
    qtable = (examples / "qtable.yaml").string();
    std::ofstream(qtable) << "conv1: f16\n'/blocks/0/Add': bf16\nfc: f32\n";
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

[[noreturn]] void bug(const char *what, const std::string &detail) {
  std::fprintf(stderr, "config_fuzzer: %s\n  %s\n", what, detail.c_str());
  std::abort();
}

/// Whether s[begin, end) is a positive decimal number without leading zeros.
bool positiveNumber(const std::string &s, size_t begin, size_t end) {
  if (begin >= end || s[begin] == '0')
    return false;
  for (size_t i = begin; i < end; ++i)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

/// "FILE:LINE:COL: error: MESSAGE" on one printable line, FILE a file the
/// loader read (the config, or a qtable file it names).
void checkError(const std::string &error) {
  for (unsigned char c : error)
    if (c < 0x20 || c == 0x7f)
      bug("the error holds a control character (not one printable line)", error);
  size_t tail = error.find(": error: ");
  if (tail == std::string::npos || tail + 9 == error.size())
    bug("the error is not FILE:LINE:COL: error: MESSAGE", error);
  size_t colon2 = error.rfind(':', tail - 1);
  size_t colon1 = colon2 == 0 || colon2 == std::string::npos ? std::string::npos
                                                             : error.rfind(':', colon2 - 1);
  if (colon1 == std::string::npos || !positiveNumber(error, colon1 + 1, colon2) ||
      !positiveNumber(error, colon2 + 1, tail))
    bug("the error is not FILE:LINE:COL: error: MESSAGE", error);
  std::error_code ec;
  if (!fs::is_regular_file(error.substr(0, colon1), ec))
    bug("the error names no file the loader read", error);
}

void checkConfig(const DeployConfig &c) {
  if (c.model.empty() || c.output.empty())
    bug("accepted without a model or an output", c.model + " " + c.output);
  if (c.name.empty() || c.name.find('/') != std::string::npos)
    bug("accepted a bad name", c.name);
  for (const InputOverride &in : c.inputs) {
    if (in.shapes.empty())
      bug("accepted an input without a shape", in.name);
    for (const auto &shape : in.shapes) {
      if (shape.size() != in.shapes.front().size())
        bug("accepted shapes of different ranks", in.name);
      for (int64_t d : shape)
        if (d < 1)
          bug("accepted a shape dimension below 1", in.name);
    }
  }
  for (size_t s = 0, n = stageCount(c); s < n; ++s)
    for (const InputOverride &in : stageConfig(c, s).inputs)
      if (in.shapes.size() != 1)
        bug("a stage's config has other than one shape per input", in.name);
  if (!(c.calibration.percentile > 0 && c.calibration.percentile <= 100))
    bug("accepted a percentile outside (0, 100]", std::to_string(c.calibration.percentile));
  if (c.verify.enabled && (c.verify.reference.empty() || !(c.verify.min_cosine >= -1) ||
                           !(c.verify.min_cosine <= 1) || !(c.verify.min_euclidean <= 1)))
    bug("accepted a bad verify", c.verify.reference);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Scratch scratch;
  kiln::fuzz::writeInput(scratch.config, data, size);
  DeployConfig config;
  std::string error = loadConfig(scratch.config, config);
  if (error.empty())
    checkConfig(config);
  else
    checkError(error);
  return 0;
}
