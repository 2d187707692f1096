// Small bmodels for the residency manager's tests and the fuzzer's seeds:
//   mulAddNet()        one group, z = relu((x + k1) * k2); k1 and k2 are held
//                      coefficients with Residency records
//   twoGroupNet(base)  the mul-add, then out = relu(z) with buffers at base
//   reluNet(base)      one group, out = relu(x) with buffers at base
// x and z/out are [1, 3, 4, 5] f32; each net has one input x.
#ifndef KILN_TESTS_RESIDENCY_MODELS_H
#define KILN_TESTS_RESIDENCY_MODELS_H

#include <stdint.h>

#include <vector>

#include "bmodel_builder.h"
#include "cmodel_harness.h"

namespace kiln::test {

inline const Shape kShape{1, 3, 4, 5};
constexpr uint64_t kBytes = 60 * 4;
constexpr uint32_t kLane = 128; // per-lane bytes of a [1, 3, 4, 5] f32 tensor
constexpr uint64_t kCoeffSize = 4096, kNeuronSize = 12288;
constexpr uint64_t kK1 = 0, kK2 = 1024;                 // coefficients
constexpr uint64_t kX = 4096, kZ = 8192, kOut = 12288;  // neuron region
// LMEM of the mul-add group.
constexpr uint32_t kLK1 = 0, kLK2 = 128, kLX = 256, kLT = 384, kLZ = 512;

const std::vector<float> &k1();
const std::vector<float> &k2();

TensorSpec tensor(const char *name, uint64_t offset);
LmemSpec alloc(const char *name, uint32_t addr, bool held = false);
ResidencySpec resident(const char *name, uint32_t addr, uint32_t group = 0);
GroupSpec mulAddGroup();
GroupSpec reluGroup(uint64_t from, uint64_t to, uint32_t base);
NetSpec mulAddNet();
NetSpec twoGroupNet(uint32_t relu_base);
NetSpec reluNet(uint32_t base);
ModelSpec model(const NetSpec &net);

} // namespace kiln::test

#endif
