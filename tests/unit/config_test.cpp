// The YAML deployment config: a full config, defaults, and every error with
// its exact file:line:col.
#include "kiln/Config/Config.h"

#include "temp_dir_test.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace kiln::config;

namespace {

class ConfigTest : public kiln::test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    fs::create_directories(dir_ / "models");
    fs::create_directories(dir_ / "calib");
    touch("models/net.onnx");
    touch("ref.npz");
    touch("calib/a.npz");
    touch("calib/b.npz");
  }
  void touch(const std::string &name) { std::ofstream(dir_ / name) << "x"; }

  std::string configPath() const { return (dir_ / "deploy.yaml").string(); }

  // Writes `yaml` as deploy.yaml and loads it.
  std::string load(const std::string &yaml, DeployConfig &config) {
    std::ofstream(configPath()) << yaml;
    return loadConfig(configPath(), config);
  }
  std::string loadError(const std::string &yaml) {
    DeployConfig config;
    return load(yaml, config);
  }
  // The expected message for an error at line:col of deploy.yaml.
  std::string at(int line, int col, const std::string &message) const {
    return configPath() + ":" + std::to_string(line) + ":" +
           std::to_string(col) + ": error: " + message;
  }
};

TEST_F(ConfigTest, LoadsFullConfig) {
  DeployConfig c;
  ASSERT_EQ(load(R"(# every key
model: models/net.onnx
name: draggan_g64
chip: bm1684x
isa: bm1684x
container: kiln
inputs:
  ws: {shape: [1, 10, 512]}
  noise:
    shape: [1, 1, 64, 64]
quantize: int8
qtable: {conv1: f16, "head/gemm": f32}
calibration: {samples: calib/*.npz, method: percentile, percentile: 99.9}
random_ops: const
random_seed: 18446744073709551615
layer_group: {enabled: false}
optimize: {modulated_conv: keep}
debug: {keep_tensors: true}
verify: {reference: ref.npz, tolerance: [0.98, 0.85]}
output: out/g.bmodel
)",
                 c),
            "");
  EXPECT_EQ(c.config_path, configPath());
  EXPECT_EQ(c.model, path("models/net.onnx"));
  EXPECT_EQ(c.name, "draggan_g64");
  EXPECT_EQ(c.chip, "bm1684x");
  EXPECT_EQ(c.isa, Isa::Bm1684x);
  EXPECT_EQ(c.container, Container::Kiln);
  EXPECT_EQ(containerOf(c), Container::Kiln);
  ASSERT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(c.inputs[0].name, "ws");
  EXPECT_EQ(c.inputs[0].shapes, (std::vector<std::vector<int64_t>>{{1, 10, 512}}));
  EXPECT_EQ(c.inputs[1].name, "noise");
  EXPECT_EQ(c.inputs[1].shapes, (std::vector<std::vector<int64_t>>{{1, 1, 64, 64}}));
  EXPECT_EQ(c.quantize, DType::INT8);
  EXPECT_EQ(c.qtable, (std::map<std::string, DType>{
                          {"conv1", DType::F16}, {"head/gemm", DType::F32}}));
  EXPECT_EQ(c.calibration.samples, path("calib/*.npz"));
  EXPECT_EQ(c.calibration.method, CalibMethod::Percentile);
  EXPECT_DOUBLE_EQ(c.calibration.percentile, 99.9);
  EXPECT_EQ(c.random_ops, RandomOps::Const);
  EXPECT_EQ(c.random_seed, 18446744073709551615ull);
  EXPECT_FALSE(c.layer_group_enabled);
  EXPECT_EQ(c.modulated_conv, ModulatedConv::Keep);
  EXPECT_TRUE(c.keep_tensors);
  EXPECT_TRUE(c.verify.enabled);
  EXPECT_EQ(c.verify.reference, path("ref.npz"));
  EXPECT_DOUBLE_EQ(c.verify.min_cosine, 0.98);
  EXPECT_DOUBLE_EQ(c.verify.min_euclidean, 0.85);
  EXPECT_EQ(c.output, path("out/g.bmodel"));
}

// isa: bm1684x writes Sophgo's container unless the config says otherwise.
TEST_F(ConfigTest, ContainerDefaultsByIsa) {
  DeployConfig c;
  ASSERT_EQ(load("model: models/net.onnx\nisa: bm1684x\n", c), "");
  EXPECT_FALSE(c.container);
  EXPECT_EQ(containerOf(c), Container::Sophgo);
  ASSERT_EQ(load("model: models/net.onnx\nisa: bm1684x\ncontainer: sophgo\n", c), "");
  EXPECT_EQ(containerOf(c), Container::Sophgo);
}

// `shapes:` lists one shape per stage; an input with one `shape:` has it in
// every stage.
TEST_F(ConfigTest, InputShapesPerStage) {
  DeployConfig c;
  ASSERT_EQ(load("model: models/net.onnx\ninputs:\n"
                 "  x: {shapes: [[1, 3, 48, 320], [1, 3, 48, 640], [4, 3, 48, 320]]}\n"
                 "  lens: {shape: [1]}\n",
                 c),
            "");
  ASSERT_EQ(stageCount(c), 3u);
  DeployConfig third = stageConfig(c, 2);
  EXPECT_EQ(third.inputs[0].shapes, (std::vector<std::vector<int64_t>>{{4, 3, 48, 320}}));
  EXPECT_EQ(third.inputs[1].shapes, (std::vector<std::vector<int64_t>>{{1}}));
  EXPECT_EQ(stageCount(third), 1u);
  ASSERT_EQ(load("model: models/net.onnx\n", c), "");
  EXPECT_EQ(stageCount(c), 1u);
}

TEST_F(ConfigTest, InputShapesErrors) {
  EXPECT_EQ(loadError("model: models/net.onnx\ninputs:\n  x: {shape: [1], shapes: [[2]]}\n"),
            at(3, 19, "input 'x' has both 'shape' and 'shapes' (one or the other)"));
  EXPECT_EQ(loadError("model: models/net.onnx\ninputs:\n  x: {shapes: []}\n"),
            at(3, 15, "expected a list of shapes such as [[1, 3, 48, 320], [1, 3, 48, 640]] "
                      "for 'shapes', got a list"));
  EXPECT_EQ(loadError("model: models/net.onnx\ninputs:\n  x: {shapes: [[1, 2], [3]]}\n"),
            at(3, 24, "every shape of one input needs the same rank"));
  EXPECT_EQ(loadError("model: models/net.onnx\ninputs:\n  x: {shapes: [[1], [2]]}\n"
                      "  y: {shapes: [[1], [2], [3]]}\n"),
            at(4, 7, "input 'y' lists 3 shapes but input 'x' lists 2 (one per stage)"));
  EXPECT_EQ(loadError("model: models/net.onnx\ninputs:\n  x: {shapes: [[1], [2], [1]]}\n"),
            at(3, 7, "stage 2 repeats the input shapes of an earlier stage"));
}

TEST_F(ConfigTest, AppliesDefaults) {
  DeployConfig c;
  ASSERT_EQ(load("model: models/net.onnx\n", c), "");
  EXPECT_EQ(c.name, "net");
  EXPECT_EQ(c.chip, "bm1684x");
  EXPECT_EQ(c.isa, Isa::Kiln);
  EXPECT_FALSE(c.container);
  EXPECT_EQ(containerOf(c), Container::Kiln);
  EXPECT_TRUE(c.inputs.empty());
  EXPECT_EQ(c.quantize, DType::F32);
  EXPECT_TRUE(c.qtable.empty());
  EXPECT_EQ(c.calibration.samples, "");
  EXPECT_EQ(c.calibration.method, CalibMethod::MinMax);
  EXPECT_DOUBLE_EQ(c.calibration.percentile, 99.99);
  EXPECT_EQ(c.random_ops, RandomOps::Reject);
  EXPECT_EQ(c.random_seed, 0u);
  EXPECT_TRUE(c.layer_group_enabled);
  EXPECT_EQ(c.modulated_conv, ModulatedConv::Auto);
  EXPECT_FALSE(c.keep_tensors);
  EXPECT_FALSE(c.verify.enabled);
  EXPECT_DOUBLE_EQ(c.verify.min_cosine, 0.99);
  EXPECT_DOUBLE_EQ(c.verify.min_euclidean, 0.90);
  EXPECT_EQ(c.output, path("out/net.bmodel"));
}

TEST_F(ConfigTest, ResolvesPathsAgainstTheConfigDirectory) {
  fs::create_directories(dir_ / "configs/examples");
  const std::string config = path("configs/examples/m.yaml");
  std::ofstream(config) << "model: ../../models/net.onnx\nname: m\n"
                           "verify: {reference: ../../ref.npz}\n"
                           "output: /tmp/abs.bmodel\n";
  DeployConfig c;
  ASSERT_EQ(loadConfig(config, c), "");
  EXPECT_EQ(c.model, path("models/net.onnx"));
  EXPECT_EQ(c.verify.reference, path("ref.npz"));
  EXPECT_EQ(c.output, "/tmp/abs.bmodel");
  EXPECT_EQ(c.verify.min_cosine, 0.99);

  std::ofstream(config) << "model: ../../models/net.onnx\n";
  ASSERT_EQ(loadConfig(config, c), "");
  EXPECT_EQ(c.output, path("configs/examples/out/net.bmodel"));
}

TEST_F(ConfigTest, AcceptsEmptyOptionalMaps) {
  DeployConfig c;
  EXPECT_EQ(load("model: models/net.onnx\nqtable: {}\ninputs:\n", c), "");
}

TEST_F(ConfigTest, MissingConfigFile) {
  const std::string missing = path("nope.yaml");
  DeployConfig c;
  EXPECT_EQ(loadConfig(missing, c),
            missing +
                ": error: cannot open config file: No such file or directory");
}

TEST_F(ConfigTest, UnknownKeys) {
  EXPECT_EQ(loadError("model: models/net.onnx\nquantise: f16\n"),
            at(2, 1, "unknown key 'quantise' (did you mean 'quantize'?)"));
  EXPECT_EQ(loadError("model: models/net.onnx\nbatch: 4\n"),
            at(2, 1,
               "unknown key 'batch' (expected one of: model, name, chip, "
               "isa, container, inputs, quantize, "
               "qtable, qtable_file, calibration, random_ops, random_seed, "
               "layer_group, optimize, "
               "debug, verify, output)"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\ncalibration: {samples: calib/*.npz, "
                "methd: kl}\n"),
      at(2, 37,
         "unknown key 'methd' in 'calibration' (did you mean 'method'?)"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\ninputs:\n  x:\n    shpe: [1]\n"),
      at(4, 5, "unknown key 'shpe' in 'inputs.x' (did you mean 'shape'?)"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\nlayer_group: {enable: true}\n"),
      at(2, 15,
         "unknown key 'enable' in 'layer_group' (did you mean 'enabled'?)"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\nverify: {reference: ref.npz, "
                "tolerence: [1, 1]}\n"),
      at(2, 30,
         "unknown key 'tolerence' in 'verify' (did you mean 'tolerance'?)"));
}

TEST_F(ConfigTest, WrongTypes) {
  EXPECT_EQ(
      loadError("model: models/net.onnx\ninputs:\n  x: {shape: 1x3x224x224}\n"),
      at(3, 14, "expected a list of integers for 'shape', got '1x3x224x224'"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\ninputs:\n  x: {shape: [1, \"3\"]}\n"),
      at(3, 18, "expected an integer for a 'shape' dimension, got '3'"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\ninputs:\n  x: {shape: [1, 0]}\n"),
      at(3, 18, "shape dimensions must be positive"));
  EXPECT_EQ(loadError("model: models/net.onnx\ninputs:\n  x: [1, 3]\n"),
            at(3, 6,
               "expected a mapping such as {shape: [1, 3, 224, 224]} for input "
               "'x', got a list"));
  EXPECT_EQ(loadError("model: models/net.onnx\ninputs:\n  x: {}\n"),
            at(3, 3, "input 'x' needs a 'shape' or 'shapes'"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\nlayer_group: {enabled: yes}\n"),
      at(2, 24, "expected true or false for 'layer_group.enabled', got 'yes'"));
  EXPECT_EQ(loadError("model: models/net.onnx\ndebug: {keep_tensor: true}\n"),
            at(2, 9, "unknown key 'keep_tensor' in 'debug' (did you mean 'keep_tensors'?)"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\noptimize: {modulated_conv: always}\n"),
      at(2, 28, "invalid value 'always' for 'optimize.modulated_conv' (allowed: "
                "auto, rewrite, keep)"));
  EXPECT_EQ(loadError("model: models/net.onnx\noptimize: {modulated: keep}\n"),
            at(2, 12, "unknown key 'modulated' in 'optimize' (expected one of: "
                      "modulated_conv)"));
  EXPECT_EQ(loadError("model: models/net.onnx\nlayer_group: true\n"),
            at(2, 14, "expected a mapping for 'layer_group', got 'true'"));
  EXPECT_EQ(loadError("model: [a, b]\n"),
            at(1, 8, "expected a string for 'model', got a list"));
  EXPECT_EQ(loadError("model:\n"),
            at(1, 7, "expected a string for 'model', got nothing"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\nrandom_seed: -1\n"),
      at(2, 14, "expected a non-negative integer for 'random_seed', got '-1'"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\nrandom_seed: 18446744073709551616\n"),
      at(2, 14, "integer out of range for 'random_seed'"));
  EXPECT_EQ(loadError("model: models/net.onnx\ncalibration: {samples: "
                      "calib/*.npz, percentile: high}\n"),
            at(2, 49, "expected a number for 'percentile', got 'high'"));
  EXPECT_EQ(loadError("model: models/net.onnx\ncalibration: {samples: "
                      "calib/*.npz, percentile: 0}\n"),
            at(2, 49, "'percentile' must be in (0, 100]"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\nverify: {reference: ref.npz, "
                "tolerance: 0.99}\n"),
      at(2, 41,
         "expected [min_cosine, min_euclidean] for 'tolerance', got '0.99'"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\nverify: {reference: ref.npz, "
                "tolerance: [0.99, x]}\n"),
      at(2, 48, "expected a number for the euclidean tolerance, got 'x'"));
  EXPECT_EQ(loadError("model: models/net.onnx\nverify: {reference: ref.npz, "
                      "tolerance: [2, 0.9]}\n"),
            at(2, 42, "the cosine tolerance must be in [-1, 1]"));
  EXPECT_EQ(loadError("model: models/net.onnx\nname: a/b\n"),
            at(2, 7, "'name' must be a non-empty file name without '/'"));
  EXPECT_EQ(loadError("- model: models/net.onnx\n"),
            at(1, 1, "the config must be a mapping, not a list"));
  EXPECT_EQ(loadError("model: models/net.onnx\n[a]: 1\n"),
            at(2, 1, "keys must be strings, not a list"));
}

TEST_F(ConfigTest, BadEnumValues) {
  EXPECT_EQ(loadError("model: models/net.onnx\nquantize: int4\n"),
            at(2, 11,
               "invalid value 'int4' for 'quantize' (allowed: f32, f16, bf16, "
               "int8)"));
  EXPECT_EQ(loadError("model: models/net.onnx\nqtable:\n  conv1: fp16\n"),
            at(3, 10,
               "invalid value 'fp16' for 'qtable.conv1' (allowed: f32, f16, "
               "bf16, int8)"));
  EXPECT_EQ(loadError("model: models/net.onnx\nrandom_ops: freeze\n"),
            at(2, 13,
               "invalid value 'freeze' for 'random_ops' (allowed: reject, "
               "const, input)"));
  EXPECT_EQ(loadError("model: models/net.onnx\nisa: bm1686\n"),
            at(2, 6, "invalid value 'bm1686' for 'isa' (allowed: kiln, bm1684x)"));
  EXPECT_EQ(loadError("model: models/net.onnx\ncontainer: tpu-mlir\n"),
            at(2, 12, "invalid value 'tpu-mlir' for 'container' (allowed: kiln, sophgo)"));
  // Sophgo's container carries the chip's own commands only.
  EXPECT_EQ(loadError("model: models/net.onnx\ncontainer: sophgo\n"),
            at(2, 12, "'container: sophgo' needs 'isa: bm1684x': Sophgo's container carries "
                      "the chip's own commands"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\ncalibration: {method: entropy}\n"),
      at(2, 23,
         "invalid value 'entropy' for 'method' (allowed: minmax, kl, "
         "percentile, mse, auto)"));
}

TEST_F(ConfigTest, DuplicateKeys) {
  EXPECT_EQ(loadError("model: models/net.onnx\nname: a\nname: b\n"),
            at(3, 1, "duplicate key 'name'"));
  EXPECT_EQ(loadError("model: models/net.onnx\nqtable: {c: f16, c: f32}\n"),
            at(2, 18, "duplicate key 'c'"));
}

TEST_F(ConfigTest, MissingFiles) {
  EXPECT_EQ(loadError("name: x\n"), at(1, 1, "missing required key 'model'"));
  EXPECT_EQ(loadError("name: x\nmodel:   models/gone.onnx\n"),
            at(2, 10,
               "cannot open model file '" + path("models/gone.onnx") +
                   "': No such file or directory"));
  EXPECT_EQ(loadError("model: models\n"),
            at(1, 8,
               "cannot open model file '" + path("models") +
                   "': not a regular file"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\nverify:\n  reference: gone.npz\n"),
      at(3, 14,
         "cannot open reference file '" + path("gone.npz") +
             "': No such file or directory"));
  EXPECT_EQ(
      loadError("model: models/net.onnx\nverify: {tolerance: [0.9, 0.8]}\n"),
      at(2, 1, "'verify' needs a 'reference'"));
  EXPECT_EQ(
      loadError(
          "model: models/net.onnx\ncalibration: {samples: nothing/*.npz}\n"),
      at(2, 24,
         "no calibration samples match '" + path("nothing/*.npz") + "'"));
}

TEST_F(ConfigTest, QtableFile) {
  // Entries from the file, the inline qtable winning on a conflict.
  std::ofstream(path("q.yaml")) << "# kiln calibrate --search\n\"/a/Conv_output_0\": f16\nb: bf16\n";
  DeployConfig c;
  EXPECT_EQ(load("model: models/net.onnx\nqtable: {b: f32, c: int8}\n"
                 "qtable_file: q.yaml\n",
                 c),
            "");
  EXPECT_EQ(c.qtable_file, path("q.yaml"));
  EXPECT_EQ(c.qtable, (std::map<std::string, DType>{
                          {"/a/Conv_output_0", DType::F16},
                          {"b", DType::F32},
                          {"c", DType::INT8}}));
  // An empty file is an empty table.
  std::ofstream(path("empty.yaml")) << "";
  EXPECT_EQ(load("model: models/net.onnx\nqtable_file: empty.yaml\n", c), "");
  EXPECT_TRUE(c.qtable.empty());
}

TEST_F(ConfigTest, QtableFileErrors) {
  EXPECT_EQ(loadError("model: models/net.onnx\nqtable_file: gone.yaml\n"),
            at(2, 14,
               "cannot open qtable file '" + path("gone.yaml") +
                   "': No such file or directory"));
  // Errors inside the file name the file, line and column.
  std::ofstream(path("q.yaml")) << "a: f16\nb:   fp16\n";
  EXPECT_EQ(loadError("model: models/net.onnx\nqtable_file: q.yaml\n"),
            path("q.yaml") +
                ":2:6: error: invalid value 'fp16' for 'qtable.b' (allowed: "
                "f32, f16, bf16, int8)");
  std::ofstream(path("list.yaml")) << "- a\n- b\n";
  EXPECT_EQ(loadError("model: models/net.onnx\nqtable_file: list.yaml\n"),
            path("list.yaml") +
                ":1:1: error: expected a mapping for 'qtable', got a list");
  std::ofstream(path("bad.yaml")) << "a: {\n";
  EXPECT_NE(loadError("model: models/net.onnx\nqtable_file: bad.yaml\n")
                .find(path("bad.yaml") + ":"),
            std::string::npos);
}

TEST_F(ConfigTest, UnsupportedChip) {
  EXPECT_EQ(loadError("model: models/net.onnx\nchip: bm1688\n"),
            at(2, 7, "unsupported chip 'bm1688' (supported: bm1684x)"));
}

TEST_F(ConfigTest, YamlSyntaxErrors) {
  EXPECT_EQ(loadError("model: models/net.onnx\nqtable: {a: f16\nname: x\n"),
            at(3, 5,
               "did not find expected ',' or '}' (while parsing a flow mapping "
               "at 2:9)"));
  EXPECT_EQ(loadError("model: models/net.onnx\n  name: x\n"),
            at(2, 7, "mapping values are not allowed in this context"));
  EXPECT_EQ(loadError("model: models/net.onnx\n\tname: x\n"),
            at(2, 1,
               "found a tab character that violates indentation (while "
               "scanning a plain scalar at 1:8)"));
  EXPECT_EQ(loadError(""),
            at(1, 1, "empty config: expected a mapping with 'model'"));
  EXPECT_EQ(loadError("model: models/net.onnx\n---\nname: x\n"),
            at(3, 1, "a config holds a single YAML document"));
}

// Found by tests/fuzz/config_fuzzer.cpp: text from the config goes into
// errors escaped, so an error stays one line of printable text.
TEST_F(ConfigTest, ErrorsEscapeControlCharacters) {
  EXPECT_EQ(loadError("\"bad\\nkey\\x1b[31m\": 1\nmodel: models/net.onnx\n"),
            at(1, 1,
               "unknown key 'bad\\nkey\\x1b[31m' (expected one of: model, name, "
               "chip, isa, container, inputs, quantize, qtable, qtable_file, calibration, "
               "random_ops, random_seed, layer_group, optimize, debug, verify, "
               "output)"));
  // A long value is cut at 60 bytes.
  EXPECT_EQ(loadError("|\n  a literal block\n  where a mapping belongs\n"),
            at(1, 1,
               "the config must be a mapping, not 'a literal block\\nwhere a "
               "mapping belongs\\n'"));
  EXPECT_EQ(loadError("model: models/net.onnx\nname: [" + std::string(100, 'x') + "]\n"),
            at(2, 7, "expected a string for 'name', got a list"));
  EXPECT_EQ(loadError("model: models/net.onnx\nquantize: " + std::string(100, 'x') + "\n"),
            at(2, 11, "invalid value '" + std::string(60, 'x') +
                          "...' for 'quantize' (allowed: f32, f16, bf16, int8)"));
}

} // namespace
