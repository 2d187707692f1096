// chip.h against Sophgo's simulator: the facts the simulator reports (lanes,
// lane size, banks, EU width and IC parallelism per dtype) are chip.h's.
// Where they disagree the simulator is right and chip.h changes.
#include <gtest/gtest.h>

#include "kiln/abi/chip.h"
#include "kiln/sophgo_sim/simulator.h"
#include "sim_or_skip.h"

namespace {

using kiln::sophgo_sim::SophgoSim;


// The TPU-kernel data_type_t code of a kiln dtype (prec << 1 | signed).
int dataTypeCode(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32: return 5;
  case KILN_DTYPE_F16: return 3;
  case KILN_DTYPE_BF16: return 11;
  case KILN_DTYPE_INT8: return 1;
  case KILN_DTYPE_UINT8: return 0;
  case KILN_DTYPE_INT16: return 7;
  case KILN_DTYPE_INT32: return 9;
  default: return -1;
  }
}

TEST(ChipFacts, LocalMemoryMatchesTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  EXPECT_EQ(static_cast<uint32_t>(sim->npuNum()), KILN_NPU_NUM);
  EXPECT_EQ(static_cast<uint32_t>(sim->lmemBytesPerNpu()), KILN_LMEM_BYTES_PER_LANE);
  EXPECT_EQ(static_cast<uint32_t>(sim->bankNum()), KILN_LMEM_BANKS);
}

TEST(ChipFacts, EuWidthMatchesTheSimulatorForEveryDtype) {
  KILN_SIM_OR_SKIP(sim);
  for (int d = 0; d < KILN_DTYPE_COUNT; ++d) {
    auto dtype = static_cast<kiln_dtype>(d);
    EXPECT_EQ(static_cast<uint32_t>(sim->euNum(dataTypeCode(dtype))), kiln_eu_elems(dtype))
        << "dtype " << d;
  }
}

// The conv cost model's input channels per cycle are the MAC array's IC
// parallelism, which is also the interleave of conv filters in LMEM.
TEST(ChipFacts, ConvInputChannelParallelismMatchesTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  EXPECT_EQ(static_cast<uint32_t>(sim->icParallel(dataTypeCode(KILN_DTYPE_F32))),
            KILN_CONV_ICP_F32);
  EXPECT_EQ(static_cast<uint32_t>(sim->icParallel(dataTypeCode(KILN_DTYPE_F16))),
            KILN_CONV_ICP_F16);
  EXPECT_EQ(static_cast<uint32_t>(sim->icParallel(dataTypeCode(KILN_DTYPE_BF16))),
            KILN_CONV_ICP_F16);
  EXPECT_EQ(static_cast<uint32_t>(sim->icParallel(dataTypeCode(KILN_DTYPE_INT8))),
            KILN_CONV_ICP_INT8);
}

} // namespace
