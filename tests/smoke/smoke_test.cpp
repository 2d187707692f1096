// Board smoke tests: the example bmodels through the C API and the board
// driver's HAL only (board_target.h): each matches its PyTorch reference,
// two nets alternate in one runtime, inputs change on every call, and the
// runtime recovers from an injected device fault and times out on an
// injected hang. In CI the driver runs on the cmodel's register file; with
// KILN_SMOKE_BOARD=<board file> on a board (the fault and hang tests need
// the cmodel's injection and are skipped there).
//
// The models come from the manifest prepare_models.sh writes
// (KILN_SMOKE_MANIFEST): one line per example, "name bmodel input.npz
// reference.npz", or "name FAILED log" for one that did not compile.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "board_target.h"
#include "kiln/abi/regs.h"
#include "kiln/cmodel/device.h"
#include "kiln/host/compare.h"
#include "kiln/host/npz.h"
#include "kiln/rt/kiln_rt.h"

namespace kiln::smoke {
namespace {

using Tensors = std::vector<std::vector<float>>;

constexpr uint32_t kTimeoutUs = 600u * 1000u * 1000u; // cmodel runs are slow
constexpr double kMinCosine = 0.99999, kMinEuclidean = 0.999; // as e2e

// Narrower dtypes against PyTorch's F32: the acceptance bounds of
// docs/precision.md (QDQ models carry their own quantization even in f32).
std::pair<double, double> toleranceFor(const std::string &config) {
  // NAME_DTYPE_bm1684x is NAME_DTYPE on the chip's own commands.
  const std::string isa = "_bm1684x";
  std::string name = config;
  if (name.size() > isa.size() && name.compare(name.size() - isa.size(), isa.size(), isa) == 0)
    name.resize(name.size() - isa.size());
  auto endsWith = [&](const std::string &suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (endsWith("_int8"))
    return {0.99, 0.8};
  if (endsWith("_f16") || endsWith("_bf16") || name.find("qdq") != std::string::npos)
    return {0.999, 0.9};
  return {kMinCosine, kMinEuclidean};
}

struct Model {
  std::string name, bmodel_path, input_path, reference_path;
  std::vector<uint8_t> bmodel; // vector storage is 16-byte aligned
  std::vector<host::Array> inputs, reference;
  kiln_memory_requirements memory{};
};

struct Manifest {
  std::vector<Model> models;
  std::vector<std::string> failed; // examples that did not compile, with their log
};

Manifest loadManifest(std::string *error) {
  const char *path = std::getenv("KILN_SMOKE_MANIFEST");
  std::ifstream in(path ? path : "");
  if (!in) {
    *error = std::string("cannot read the manifest KILN_SMOKE_MANIFEST=") + (path ? path : "");
    return {};
  }
  Manifest manifest;
  std::vector<Model> &models = manifest.models;
  for (std::string line; std::getline(in, line);) {
    Model m;
    if (!(std::istringstream(line) >> m.name >> m.bmodel_path >> m.input_path))
      continue;
    if (m.bmodel_path == "FAILED") {
      std::ifstream log(m.input_path);
      std::stringstream text;
      text << log.rdbuf();
      manifest.failed.push_back(m.name + " (" + m.input_path + "):\n" + text.str());
      continue;
    }
    if (!(std::istringstream(line) >> m.name >> m.bmodel_path >> m.input_path >> m.reference_path))
      continue;
    std::string err;
    if ((err = host::readFile(m.bmodel_path, m.bmodel)).empty() &&
        (err = host::readNpz(m.input_path, m.inputs)).empty())
      err = host::readNpz(m.reference_path, m.reference);
    if (!err.empty()) {
      *error = err;
      return {};
    }
    kiln_status st = kiln_bmodel_query_memory(m.bmodel.data(), m.bmodel.size(), 0, &m.memory);
    if (st != KILN_OK) {
      *error = m.bmodel_path + ": " + kiln_status_str(st);
      return {};
    }
    models.push_back(std::move(m));
  }
  if (models.empty())
    *error = std::string(path) + " lists no usable models";
  return manifest;
}

// Loaded once per process; every test needs at least one model.
const Manifest &manifest() {
  static std::string error;
  static const Manifest all = loadManifest(&error);
  EXPECT_FALSE(all.models.empty()) << error;
  return all;
}
const std::vector<Model> &models() { return manifest().models; }

// The models by device memory, smallest first: the tests that run a model
// many times take the small ones (device memory tracks a model's size).
std::vector<const Model *> bySize() {
  std::vector<const Model *> out;
  for (const Model &m : models())
    out.push_back(&m);
  std::stable_sort(out.begin(), out.end(), [](const Model *a, const Model *b) {
    return a->memory.device_bytes < b->memory.device_bytes;
  });
  return out;
}

// The model's inputs in the net's order, as f32 (every example is f32).
Tensors netInputs(const kiln_net *net, const Model &m) {
  Tensors out;
  for (uint32_t i = 0; i < kiln_net_input_count(net); ++i) {
    kiln_tensor_info info;
    EXPECT_EQ(kiln_net_input_info(net, i, &info), KILN_OK);
    const host::Array *found = nullptr;
    for (const auto &a : m.inputs)
      if (a.name == info.name)
        found = &a;
    EXPECT_NE(found, nullptr) << m.input_path << " lacks input " << info.name;
    out.push_back(found ? found->toF32() : std::vector<float>());
  }
  return out;
}

// Deterministically different inputs for call `k` (k = 0: unchanged).
Tensors perturbed(const Tensors &inputs, uint32_t k) {
  Tensors out = inputs;
  uint32_t state = 0x9e3779b9u * (k + 1);
  for (auto &t : out)
    for (float &v : t) {
      state = state * 1664525u + 1013904223u;
      float noise = float(state >> 8) / float(1u << 24) - 0.5f; // [-0.5, 0.5)
      v = k ? v * (1.0f + 0.1f * float(k)) + 0.2f * noise : v;
    }
  return out;
}

// A runtime on a target, with caller-owned storage as firmware would have.
class Session {
public:
  // DDR for the given nets; a board brings its own window.
  bool open(uint64_t ddr_bytes) {
    std::string error;
    target_ = makeTarget(ddr_bytes, &error);
    if (!target_) {
      ADD_FAILURE() << error;
      return false;
    }
    rt_storage_.resize(kiln_runtime_storage_size() / 16 + 1);
    kiln_status st =
        kiln_runtime_init(rt_storage_.data(), rt_storage_.size() * 16, &target_->hal(), &rt_);
    EXPECT_EQ(st, KILN_OK) << kiln_status_str(st);
    return st == KILN_OK;
  }
  ~Session() {
    for (size_t i = nets_.size(); i-- > 0;) // unload in reverse order
      EXPECT_EQ(kiln_net_unload(nets_[i]), KILN_OK);
  }

  kiln_net *load(const Model &m) {
    net_storage_.emplace_back(kiln_net_storage_size() / 16 + 1);
    kiln_net *net = nullptr;
    kiln_status st = kiln_net_load(rt_, m.bmodel.data(), m.bmodel.size(), 0,
                                   net_storage_.back().data(), net_storage_.back().size() * 16,
                                   &net);
    EXPECT_EQ(st, KILN_OK) << m.name << ": " << kiln_status_str(st);
    if (st != KILN_OK)
      return nullptr;
    nets_.push_back(net);
    return net;
  }

  cmodel::Device *device() { return target_->device(); }
  std::string faultReason() {
    return device() ? " (" + device()->faultReason() + ")" : std::string();
  }

private:
  struct alignas(16) Block {
    unsigned char bytes[16];
  };
  std::unique_ptr<Target> target_;
  std::vector<Block> rt_storage_;
  std::vector<std::vector<Block>> net_storage_;
  kiln_runtime *rt_ = nullptr;
  std::vector<kiln_net *> nets_;
};

kiln_status setInputs(kiln_net *net, const Tensors &inputs) {
  for (uint32_t i = 0; i < inputs.size(); ++i)
    if (kiln_status st = kiln_net_set_input(net, i, inputs[i].data(), inputs[i].size() * 4);
        st != KILN_OK)
      return st;
  return KILN_OK;
}

Tensors getOutputs(const kiln_net *net) {
  Tensors out;
  for (uint32_t i = 0; i < kiln_net_output_count(net); ++i) {
    kiln_tensor_info info;
    EXPECT_EQ(kiln_net_output_info(net, i, &info), KILN_OK);
    out.emplace_back(info.bytes / 4);
    EXPECT_EQ(kiln_net_get_output(net, i, out.back().data(), info.bytes), KILN_OK);
  }
  return out;
}

// One inference; outputs empty if it failed.
Tensors infer(Session &s, kiln_net *net, const Tensors &inputs, kiln_run_stats *stats = nullptr) {
  EXPECT_EQ(setInputs(net, inputs), KILN_OK);
  kiln_status st = kiln_net_run(net, kTimeoutUs, stats);
  EXPECT_EQ(st, KILN_OK) << kiln_status_str(st) << s.faultReason();
  return st == KILN_OK ? getOutputs(net) : Tensors();
}

struct RunResult {
  Tensors inputs, outputs;
};

// A fresh target and runtime, the net loaded alone and run once on the
// example's inputs perturbed by k. No other session may be open: on a board
// it would share (and reset) the same device.
RunResult freshRun(const Model &m, uint32_t k) {
  Session s;
  RunResult run;
  if (!s.open(m.memory.device_bytes))
    return run;
  if (kiln_net *net = s.load(m)) {
    run.inputs = perturbed(netInputs(net, m), k);
    run.outputs = infer(s, net, run.inputs);
  }
  return run;
}

// ---- tests -----------------------------------------------------------------------

TEST(Smoke, EveryExampleMatchesItsReference) {
  for (const std::string &failed : manifest().failed)
    ADD_FAILURE() << "example did not compile: " << failed;
  for (const Model &m : models()) {
    SCOPED_TRACE(m.name);
    // Exactly the device memory the bmodel asks for.
    Session s;
    ASSERT_TRUE(s.open(m.memory.device_bytes));
    kiln_net *net = s.load(m);
    ASSERT_NE(net, nullptr);
    // `kiln inspect` (prepare_models.sh saved it next to the bmodel) prints
    // the same figure, which was just enough to load the net.
    std::string inspect_path = m.bmodel_path.substr(0, m.bmodel_path.rfind('.')) + ".inspect.txt";
    std::ifstream inspect(inspect_path);
    std::stringstream text;
    text << inspect.rdbuf();
    EXPECT_NE(text.str().find("  device memory: " + std::to_string(m.memory.device_bytes) +
                              " bytes (commands " + std::to_string(m.memory.command_bytes)),
              std::string::npos)
        << inspect_path << ":\n" << text.str().substr(0, 400);

    kiln_run_stats stats{};
    Tensors outputs = infer(s, net, netInputs(net, m), &stats);
    ASSERT_EQ(outputs.size(), kiln_net_output_count(net));
    EXPECT_GT(stats.groups_run, 0u);
    EXPECT_GT(stats.tiu_commands, 0u);

    std::vector<host::Array> got;
    for (uint32_t i = 0; i < outputs.size(); ++i) {
      kiln_tensor_info info;
      ASSERT_EQ(kiln_net_output_info(net, i, &info), KILN_OK);
      got.push_back(host::Array::fromF32(
          info.name, std::vector<int64_t>(info.shape, info.shape + info.ndim), outputs[i].data()));
    }
    auto [minCos, minEuclid] = toleranceFor(m.name);
    auto rows = host::compareArrays(got, m.reference, minCos, minEuclid);
    ASSERT_EQ(rows.size(), m.reference.size()) << "every reference output is produced";
    for (const auto &row : rows)
      EXPECT_TRUE(row.pass) << row.name << ": cosine " << row.sim.cosine << ", euclidean "
                            << row.sim.euclidean << " " << row.problem;
  }
}

// Two nets in one runtime (two examples, or the same one twice), run
// alternately with different inputs: each matches its own fresh run exactly.
TEST(Smoke, TwoNetsAlternate) {
  const auto sorted = bySize();
  ASSERT_FALSE(sorted.empty());
  const Model &a = *sorted[0], &b = *sorted[sorted.size() > 1 ? 1 : 0];
  const RunResult ra = freshRun(a, 0), rb = freshRun(b, 1);
  ASSERT_FALSE(ra.outputs.empty() || rb.outputs.empty());
  ASSERT_NE(ra.outputs, rb.outputs) << "the two nets must be told apart by their outputs";
  Session s;
  ASSERT_TRUE(s.open(a.memory.device_bytes + b.memory.device_bytes));
  kiln_net *na = s.load(a), *nb = s.load(b);
  ASSERT_TRUE(na && nb);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    EXPECT_EQ(infer(s, na, ra.inputs), ra.outputs);
    EXPECT_EQ(infer(s, nb, rb.inputs), rb.outputs);
  }
}

// New inputs on every call of one loaded net: the outputs change and equal
// a fresh single run's, so nothing of the previous call leaks into the next.
TEST(Smoke, InputsChangeEveryCall) {
  ASSERT_FALSE(models().empty());
  const Model &m = *bySize()[0];
  std::vector<RunResult> fresh;
  for (uint32_t k = 1; k <= 3; ++k)
    fresh.push_back(freshRun(m, k));
  Session s;
  ASSERT_TRUE(s.open(m.memory.device_bytes));
  kiln_net *net = s.load(m);
  ASSERT_NE(net, nullptr);
  Tensors previous;
  for (const RunResult &want : fresh) {
    SCOPED_TRACE("call " + std::to_string(&want - fresh.data() + 1));
    ASSERT_FALSE(want.outputs.empty());
    Tensors out = infer(s, net, want.inputs);
    EXPECT_NE(out, previous);
    EXPECT_EQ(out, want.outputs);
    previous = std::move(out);
  }
}

// A device fault halfway through a run: the run reports it and stops, the
// runtime resets the device, and the next run is correct.
TEST(Smoke, RecoversFromAnInjectedFault) {
  ASSERT_FALSE(models().empty());
  const Model &m = *bySize()[0];
  Session s;
  ASSERT_TRUE(s.open(m.memory.device_bytes));
  if (!s.device())
    GTEST_SKIP() << "fault injection needs the cmodel";
  kiln_net *net = s.load(m);
  ASSERT_NE(net, nullptr);
  const Tensors inputs = netInputs(net, m);
  kiln_run_stats stats{};
  const Tensors want = infer(s, net, inputs, &stats);
  ASSERT_FALSE(want.empty());
  const uint32_t at = stats.groups_run / 2;

  // Other inputs for the faulting run, so stale activations would show.
  ASSERT_EQ(setInputs(net, perturbed(inputs, 2)), KILN_OK);
  uint64_t resets = s.device()->stats().soft_resets;
  s.device()->injectFault(KILN_ERR_DEVICE_FAULT, at);
  EXPECT_EQ(kiln_net_run(net, kTimeoutUs, &stats), KILN_ERR_DEVICE_FAULT);
  EXPECT_EQ(stats.groups_run, at);
  EXPECT_EQ(s.device()->stats().soft_resets, resets + 1);
  EXPECT_EQ(s.device()->read_reg(KILN_REG_STATUS), KILN_STATUS_IDLE);

  EXPECT_EQ(infer(s, net, inputs), want);
}

// A hang halfway through a run: the run returns TIMEOUT once the timeout
// passes, the device is reset, and the next run is correct.
TEST(Smoke, TimesOutOnAnInjectedHang) {
  ASSERT_FALSE(models().empty());
  const Model &m = *bySize()[0];
  Session s;
  ASSERT_TRUE(s.open(m.memory.device_bytes));
  if (!s.device())
    GTEST_SKIP() << "hang injection needs the cmodel";
  kiln_net *net = s.load(m);
  ASSERT_NE(net, nullptr);
  const Tensors inputs = netInputs(net, m);
  kiln_run_stats stats{};
  auto t0 = std::chrono::steady_clock::now();
  const Tensors want = infer(s, net, inputs, &stats);
  auto full_run = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(want.empty());
  const uint32_t at = stats.groups_run / 2;

  constexpr uint32_t kHangTimeoutUs = 200000;
  ASSERT_EQ(setInputs(net, perturbed(inputs, 3)), KILN_OK);
  uint64_t resets = s.device()->stats().soft_resets;
  s.device()->injectHang(at);
  t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(kiln_net_run(net, kHangTimeoutUs, &stats), KILN_ERR_TIMEOUT);
  auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(stats.groups_run, at);
  // The hung group waited out its timeout, and not much more: the groups
  // before it take at most a full run's time (twice that, plus 2 s, for a
  // loaded machine).
  const auto timeout = std::chrono::microseconds(kHangTimeoutUs);
  EXPECT_GE(elapsed, timeout);
  EXPECT_LT(elapsed, 2 * full_run + timeout + std::chrono::seconds(2));
  EXPECT_EQ(s.device()->stats().soft_resets, resets + 1);
  EXPECT_EQ(s.device()->read_reg(KILN_REG_STATUS), KILN_STATUS_IDLE);

  EXPECT_EQ(infer(s, net, inputs), want);
}

} // namespace
} // namespace kiln::smoke
