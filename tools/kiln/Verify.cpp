#include "Verify.h"

#include "NetIo.h"
#include "ConfigFiles.h"

#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Interpreter/TpuInterpreter.h"
#include "kiln/Support/Names.h"
#include "kiln/cmodel/device.h"
#include "kiln/host/compare.h"
#include "kiln/host/npz.h"
#include "kiln/rt/runtime.hpp"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>

using namespace mlir;
using namespace kiln;

namespace {
struct Tolerance {
  double cosine, euclidean;
};

/// How close the Tpu interpreter must stay to the Top interpreter: the cost
/// of the dtype. The cmodel runs the Tpu interpreter's own kernels, so only
/// rounding-free agreement passes there.
Tolerance quantizationTolerance(const std::string &dtype) {
  if (dtype == "int8")
    return {0.99, 0.80};
  if (dtype == "f16" || dtype == "bf16")
    return {0.999, 0.95};
  return {0.99999, 0.999};
}
constexpr Tolerance kCmodelTolerance{0.99999, 0.9999};
/// The cmodel running BM1684X's own commands computes what the chip computes
/// (a conv's f16 products summed in blocks, depthwise and pooling sums in
/// f16), the Tpu interpreter kiln's kernels: until those are the chip's
/// (docs/DESIGN.md 4.1) the two differ as a narrower dtype differs.
Tolerance chipCommandsTolerance(const std::string &dtype) {
  return quantizationTolerance(dtype == "f32" ? "f32" : dtype);
}

/// A level's values: the net outputs, and every named value in program order.
struct Level {
  std::string name;
  std::vector<host::Array> outputs;
  std::vector<host::Array> layers;
};

std::vector<host::Array> toArrays(const interp::TensorMap &map) {
  std::vector<host::Array> arrays;
  for (const auto &[name, t] : map)
    arrays.push_back(host::Array::fromF32(name, t.shape, t.data.data()));
  return arrays;
}

/// Names of an IR's values in program order (the order layers are judged in).
std::vector<std::string> programOrder(ModuleOp module) {
  std::vector<std::string> names;
  module.walk([&](Operation *op) {
    if (std::string name = opName(op); !name.empty())
      names.push_back(name);
  });
  return names;
}

std::vector<host::Array> layersInOrder(const interp::TensorMap &all,
                                       const std::vector<std::string> &order) {
  std::vector<host::Array> arrays;
  std::set<std::string> seen;
  for (const std::string &name : order)
    if (auto it = all.find(name); it != all.end() && seen.insert(name).second)
      arrays.push_back(host::Array::fromF32(name, it->second.shape, it->second.data.data()));
  return arrays;
}

bool printRows(const std::string &level, const std::string &against,
               const std::vector<host::CompareRow> &rows) {
  bool pass = true;
  for (const auto &row : rows) {
    pass = pass && row.pass;
    std::printf("  %-16s vs %-16s %-24s %11.8f %11.8f  %s%s\n", level.c_str(), against.c_str(),
                row.name.c_str(), row.sim.cosine, row.sim.euclidean, row.pass ? "PASS" : "FAIL",
                row.problem.empty() ? "" : (" (" + row.problem + ")").c_str());
  }
  return pass;
}

/// Layer by layer in `order`; prints the first divergent layer (all layers
/// with `all`). Returns whether one diverged.
bool compareLayers(const Level &a, const Level &b, Tolerance tol, bool all) {
  std::map<std::string, const host::Array *> other;
  for (const auto &x : b.layers)
    other[x.name] = &x;
  std::vector<host::Array> left, right;
  for (const auto &x : a.layers)
    if (auto it = other.find(x.name); it != other.end() && it->second->shape == x.shape) {
      left.push_back(x);
      right.push_back(*it->second);
    }
  auto rows = host::compareArrays(left, right, tol.cosine, tol.euclidean);
  const host::CompareRow *first = nullptr;
  for (const auto &row : rows) {
    if (!row.problem.empty())
      continue;
    if (all)
      std::printf("    %-48s %11.8f %11.8f  %s\n", row.name.c_str(), row.sim.cosine,
                  row.sim.euclidean, row.pass ? "PASS" : "FAIL");
    if (!row.pass && !first)
      first = &row;
  }
  if (first)
    std::printf("  first divergent layer (%s vs %s, %zu layers compared): %s cosine %.8f "
                "euclidean %.8f max_abs %.4g\n",
                a.name.c_str(), b.name.c_str(), rows.size(), first->name.c_str(),
                first->sim.cosine, first->sim.euclidean, first->sim.max_abs);
  else
    std::printf("  %s vs %s: all %zu common layers within tolerance\n", a.name.c_str(),
                b.name.c_str(), rows.size());
  return first != nullptr;
}

func::FuncOp mainFunc(ModuleOp module) {
  func::FuncOp found;
  module.walk([&](func::FuncOp f) {
    if (!found)
      found = f;
  });
  return found;
}
} // namespace

int cli::verifyLevels(const config::DeployConfig &cfg, ModuleOp topIR, ModuleOp tpuIR,
                      const std::vector<uint8_t> &bmodel, const VerifyOptions &options) {
  std::string in = verifyInputPath(cfg);
  if (in.empty()) {
    std::fprintf(stderr, "kiln: error: verify: no input.npz beside %s to run the levels on\n",
                 cfg.verify.reference.c_str());
    return 1;
  }
  std::vector<host::Array> inputs, reference;
  for (auto [path, arrays] : {std::pair{in, &inputs}, std::pair{cfg.verify.reference, &reference}})
    if (auto err = host::readNpz(path, *arrays); !err.empty()) {
      std::fprintf(stderr, "kiln: error: %s\n", err.c_str());
      return 1;
    }
  interp::TensorMap feeds;
  for (const auto &a : inputs)
    feeds[a.name] = interp::Tensor{a.shape, a.toF32()};

  Level ref{"reference", reference, {}};
  Level top{"top", {}, {}}, tpu{"tpu", {}, {}}, chip{"cmodel", {}, {}};
  interp::TensorMap outs, all;
  if (failed(interp::runTop(mainFunc(topIR), feeds, outs, &all)))
    return 1;
  top.outputs = toArrays(outs);
  top.layers = layersInOrder(all, programOrder(topIR));
  outs.clear();
  all.clear();
  if (failed(interp::runTpu(mainFunc(tpuIR), feeds, outs, &all)))
    return 1;
  tpu.outputs = toArrays(outs);
  tpu.layers = layersInOrder(all, programOrder(tpuIR));

  std::string error;
  // A bmodel with BM1684X streams runs them, on kiln's model of the chip's commands.
  const uint64_t ddrBytes = deviceBytesFor(bmodel, error); // verifies the file
  std::unique_ptr<cmodel::Device> device =
      ddrBytes ? deviceFor(bmodel, ddrBytes, error, isaOf(bmodel)) : nullptr;
  if (!device) {
    std::fprintf(stderr, "kiln: error: verify: %s\n", error.c_str());
    return 1;
  }
  rt::Runtime runtime;
  rt::Net net;
  if (kiln_status st = runtime.init(device->hal()); st != KILN_OK) {
    std::fprintf(stderr, "kiln: error: verify: runtime init: %s\n", kiln_status_str(st));
    return 1;
  }
  kiln_error_detail detail{};
  if (kiln_status st = net.load(runtime, bmodel.data(), bmodel.size(), 0, &detail);
      st != KILN_OK) {
    std::fprintf(stderr, "kiln: error: verify: cannot load the bmodel: %s\n",
                 describeError(detail).c_str());
    return 1;
  }
  if (auto err = setInputs(net.handle(), inputs, in); !err.empty()) {
    std::fprintf(stderr, "kiln: error: verify: %s\n", err.c_str());
    return 1;
  }
  std::vector<host::Array> layers;
  if (kiln_status st = runNet(net.handle(), 600u * 1000u * 1000u, nullptr, &layers, &detail);
      st != KILN_OK) {
    std::fprintf(stderr, "kiln: error: verify: cmodel run failed: %s (%s)\n",
                 describeError(detail).c_str(), device->faultReason().c_str());
    return 1;
  }
  chip.outputs = readOutputs(net.handle());
  for (host::Array &a : layers) {
    a.name = a.name.substr(std::strlen("tensor:"));
    chip.layers.push_back(std::move(a));
  }

  const Tolerance userTol{cfg.verify.min_cosine, cfg.verify.min_euclidean};
  const Tolerance quantTol = quantizationTolerance(options.dtype);
  struct Step {
    const Level &level, &against;
    Tolerance tol;
  };
  const bool chipCommands = device->isa() == KILN_ISA_BM1684X;
  const Step steps[] = {
      {top, ref, userTol},
      {tpu, top, quantTol},
      {chip, tpu, chipCommands ? chipCommandsTolerance(options.dtype) : kCmodelTolerance}};
  std::printf("verify (%s, input %s%s):\n", options.dtype.c_str(), in.c_str(),
              chipCommands ? ", the cmodel running BM1684X's commands" : "");
  std::printf("  %-16s    %-16s %-24s %11s %11s\n", "level", "against", "tensor", "cosine",
              "euclidean");
  int failedStep = -1;
  for (int i = 0; i < 3; ++i) {
    const Step &s = steps[i];
    auto rows = host::compareArrays(s.level.outputs, s.against.outputs, s.tol.cosine,
                                    s.tol.euclidean);
    if (!printRows(s.level.name, s.against.name, rows) && failedStep < 0)
      failedStep = i;
  }
  if (options.compareAll) {
    for (int i = 1; i < 3; ++i) {
      std::printf("  layers, %s vs %s:\n", steps[i].level.name.c_str(),
                  steps[i].against.name.c_str());
      compareLayers(steps[i].against, steps[i].level, steps[i].tol, true);
    }
  } else if (failedStep > 0) {
    compareLayers(steps[failedStep].against, steps[failedStep].level, steps[failedStep].tol,
                  false);
  }
  if (failedStep >= 0) {
    std::printf("verify: FAIL at the %s level%s\n", steps[failedStep].level.name.c_str(),
                options.compareAll ? "" : " (--compare-all prints every layer)");
    return 1;
  }
  std::printf("verify: PASS at every level\n");
  return 0;
}
