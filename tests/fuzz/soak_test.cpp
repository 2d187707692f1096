// Endurance: many consecutive inferences of small models on the cmodel, with
// bitwise identical outputs every time (the sanitizer build adds: no leak).
//   runtime_soak [--iterations N] [--warm] PATH [[--warm] PATH...]
// Inputs alternate between two patterns, each compared with its first
// result. The residency manager must reach a steady state: every run after
// the second avoids the same loads as the second; --warm before a model
// demands that this number is not zero (its coefficients stay in LMEM).
// Without models it soaks the builder-made one of residency_models.h.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <string>
#include <vector>

#include "kiln/cmodel/device.h"
#include "kiln/rt/runtime.hpp"
#include "residency_models.h"
#include "run_harness.h"

namespace {

struct Model {
  std::string name;
  std::vector<uint8_t> bytes;
  bool expect_warm;
};

std::vector<uint8_t> pattern(uint64_t bytes, uint32_t seed) {
  std::vector<uint8_t> data(bytes);
  uint32_t x = seed;
  for (size_t i = 0; i + 4 <= data.size(); i += 4) {
    x = x * 1664525u + 1013904223u;
    float v = float(int32_t(x >> 8) - (1 << 23)) / float(1 << 23);
    memcpy(&data[i], &v, 4);
  }
  return data;
}

bool soak(const Model &m, uint32_t iterations) {
  kiln::cmodel::Device dev(16u << 20);
  kiln::rt::Runtime runtime;
  kiln::rt::Net net;
  kiln::fuzz::AlignedFile file(m.bytes.data(), m.bytes.size());
  kiln_status st = runtime.init(dev.hal());
  if (st == KILN_OK)
    st = net.load(runtime, file.data(), file.size());
  if (st != KILN_OK) {
    fprintf(stderr, "%s: cannot load: %s\n", m.name.c_str(), kiln_status_str(st));
    return false;
  }
  std::vector<std::vector<uint8_t>> inputs[2];
  for (int k = 0; k < 2; ++k)
    for (uint32_t i = 0; i < net.inputCount(); ++i) {
      kiln_tensor_info info;
      net.inputInfo(i, &info);
      inputs[k].push_back(pattern(info.bytes, 7 + 100 * k + i));
    }
  std::vector<uint8_t> want[2], got;
  uint64_t steady = 0, avoided = 0, saved = 0;
  auto start = std::chrono::steady_clock::now();
  for (uint32_t it = 0; it < iterations; ++it) {
    const int k = it % 2;
    for (uint32_t i = 0; i < net.inputCount(); ++i)
      net.setInput(i, inputs[k][i].data(), inputs[k][i].size());
    kiln_run_stats stats{};
    st = net.run(1000000, &stats);
    if (st != KILN_OK) {
      fprintf(stderr, "%s: run %u: %s (%s)\n", m.name.c_str(), it, kiln_status_str(st),
              dev.faultReason().c_str());
      return false;
    }
    got.clear();
    for (uint32_t i = 0; i < net.outputCount(); ++i) {
      kiln_tensor_info info;
      net.outputInfo(i, &info);
      size_t at = got.size();
      got.resize(at + info.bytes);
      net.getOutput(i, got.data() + at, info.bytes);
    }
    if (it < 2)
      want[k] = got;
    else if (got != want[k]) {
      fprintf(stderr, "%s: run %u: outputs differ from run %d\n", m.name.c_str(), it, k);
      return false;
    }
    if (it == 1)
      steady = stats.resident_loads_avoided;
    else if (it > 1 && stats.resident_loads_avoided != steady) {
      fprintf(stderr, "%s: run %u avoided %llu loads, run 1 %llu\n", m.name.c_str(), it,
              (unsigned long long)stats.resident_loads_avoided, (unsigned long long)steady);
      return false;
    }
    avoided += stats.resident_loads_avoided;
    saved += stats.resident_bytes_saved;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  printf("%s: %u inferences in %.2f s, outputs identical, %llu resident loads avoided "
         "(%llu per run), %llu DDR bytes saved\n",
         m.name.c_str(), iterations, s, (unsigned long long)avoided,
         (unsigned long long)steady, (unsigned long long)saved);
  if (m.expect_warm && steady == 0) {
    fprintf(stderr, "%s: expected its coefficients to stay resident\n", m.name.c_str());
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  uint32_t iterations = 10000;
  bool warm = false;
  std::vector<Model> models;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--iterations" && i + 1 < argc) {
      iterations = uint32_t(strtoul(argv[++i], nullptr, 10));
    } else if (arg == "--warm") {
      warm = true;
    } else {
      for (const std::string &path : kiln::fuzz::bmodelFiles({arg}))
        models.push_back({path, kiln::fuzz::readFile(path), warm});
      warm = false;
    }
  }
  if (models.empty()) {
    printf("no compiled bmodels given: soaking the builder-made one\n");
    using namespace kiln::test;
    models.push_back({"mul_add", buildBmodel(model(mulAddNet())), true});
  }
  bool ok = true;
  for (const Model &m : models)
    ok = soak(m, iterations) && ok;
  return ok ? 0 : 1;
}
