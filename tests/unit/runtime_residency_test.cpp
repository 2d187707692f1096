// The runtime's LMEM residency manager: held coefficients stay in LMEM
// across runs (warm queues without their loads) until a group whose
// allocations overlap them runs, in any net; inconsistent plans are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "bmodel_builder.h"
#include "cmodel_harness.h"
#include "kiln/abi/cost.h"
#include "kiln/rt/runtime.hpp"
#include "residency_models.h"

namespace kiln::test {
namespace {

using cmodel::Device;
using rt::Net;
using rt::Runtime;

constexpr uint32_t kTimeout = 1000000;

// relu((x + k1) * k2); a relu after it changes nothing.
std::vector<float> expected(const std::vector<float> &x) {
  std::vector<float> z(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float t = x[i] + k1()[i];
    z[i] = std::max(t * k2()[i], 0.0f);
  }
  return z;
}

class ResidencyTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_EQ(runtime.init(flaky.hal()), KILN_OK); }

  // Loads a net from `file`, which must outlive it.
  kiln_status load(Net &net, const std::vector<uint8_t> &file) {
    return net.load(runtime, file.data(), file.size());
  }

  // Sets x, runs, and returns the first output.
  std::vector<float> run(Net &net, const std::vector<float> &x, kiln_run_stats *stats) {
    EXPECT_EQ(net.setInput(0, x.data(), kBytes), KILN_OK);
    EXPECT_EQ(net.run(kTimeout, stats), KILN_OK) << dev.faultReason();
    std::vector<float> out(kShape.count());
    EXPECT_EQ(net.getOutput(0, out.data(), kBytes), KILN_OK);
    return out;
  }

  Device dev{16u << 20};
  FlakyHal flaky{dev.hal()};
  Runtime runtime;
};

// ---- warm runs -----------------------------------------------------------------

TEST_F(ResidencyTest, SecondRunSkipsResidentLoadsWithIdenticalOutputs) {
  const auto file = buildBmodel(model(mulAddNet()));
  Net net;
  ASSERT_EQ(load(net, file), KILN_OK);
  const auto x = randomFloats(kShape.count(), 5);

  kiln_run_stats cold, warm;
  const auto first = run(net, x, &cold);
  const auto cold_reads = dev.stats().ddr_read_bytes;
  const auto second = run(net, x, &warm);
  const auto warm_reads = dev.stats().ddr_read_bytes - cold_reads;

  EXPECT_EQ(first, expected(x));
  EXPECT_EQ(second, first);
  // Exact counts: the cold run loads k1, k2 and x; the warm one only x.
  EXPECT_EQ(cold.groups_run, 1u);
  EXPECT_EQ(cold.gdma_commands, 4u);
  EXPECT_EQ(cold.tiu_commands, 2u);
  EXPECT_EQ(cold.resident_loads_avoided, 0u);
  EXPECT_EQ(cold.resident_bytes_saved, 0u);
  EXPECT_EQ(warm.gdma_commands, 2u);
  EXPECT_EQ(warm.tiu_commands, 2u);
  EXPECT_EQ(warm.resident_loads_avoided, 2u);
  EXPECT_EQ(warm.resident_bytes_saved, 2 * kBytes);
  // The device agrees: it read exactly those bytes less.
  EXPECT_EQ(cold_reads - warm_reads, 2 * kBytes);
  EXPECT_EQ(dev.stats().gdma_commands, 6u);

  // Every later run stays warm, with new inputs too.
  const auto x2 = randomFloats(kShape.count(), 6);
  kiln_run_stats third;
  EXPECT_EQ(run(net, x2, &third), expected(x2));
  EXPECT_EQ(third.resident_loads_avoided, 2u);
}

// The warm queue really leaves the loads out: with the coefficients in DDR
// overwritten behind the runtime's back, a warm run still computes with the
// resident copies, and after a flush the cold run picks up the new bytes.
TEST_F(ResidencyTest, WarmRunsUseTheResidentCopy) {
  const auto file = buildBmodel(model(mulAddNet()));
  Net net;
  ASSERT_EQ(load(net, file), KILN_OK);
  const auto x = randomFloats(kShape.count(), 7);
  kiln_run_stats stats;
  const auto want = run(net, x, &stats);

  // Find the window from the input's device copy: x sits at kX in it.
  auto &ddr = dev.ddr();
  uint64_t window_offset = 0;
  for (uint64_t off = 0; off + kX + kBytes <= ddr.size(); off += 4096)
    if (std::memcmp(ddr.data() + off + kX, x.data(), kBytes) == 0) {
      window_offset = off;
      break;
    }
  ASSERT_NE(window_offset, 0u);
  std::vector<float> ones(kShape.count(), 1.0f);
  std::memcpy(ddr.data() + window_offset + kK1, ones.data(), kBytes);
  std::memcpy(ddr.data() + window_offset + kK2, ones.data(), kBytes);

  EXPECT_EQ(run(net, x, &stats), want);
  EXPECT_EQ(stats.resident_loads_avoided, 2u);

  ASSERT_EQ(kiln_runtime_flush_residency(runtime.handle()), KILN_OK);
  const auto reloaded = run(net, x, &stats);
  EXPECT_EQ(stats.resident_loads_avoided, 0u);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(reloaded[i], std::max(x[i] + 1.0f, 0.0f)) << i;
  EXPECT_EQ(kiln_runtime_flush_residency(nullptr), KILN_ERR_INVALID_ARGUMENT);
}

// ---- eviction --------------------------------------------------------------------

TEST_F(ResidencyTest, TwoGroupsWhoseLmemOverlapsReloadEveryRun) {
  const auto file = buildBmodel(model(twoGroupNet(0))); // relu buffers on k1 and k2
  Net net;
  ASSERT_EQ(load(net, file), KILN_OK);
  const auto x = randomFloats(kShape.count(), 8);
  for (int i = 0; i < 3; ++i) {
    kiln_run_stats stats;
    EXPECT_EQ(run(net, x, &stats), expected(x)) << "run " << i;
    EXPECT_EQ(stats.groups_run, 2u);
    EXPECT_EQ(stats.resident_loads_avoided, 0u) << "run " << i;
    EXPECT_EQ(stats.gdma_commands, 6u);
  }
}

TEST_F(ResidencyTest, TwoGroupsApartKeepTheirCoefficients) {
  const auto file = buildBmodel(model(twoGroupNet(1024)));
  Net net;
  ASSERT_EQ(load(net, file), KILN_OK);
  const auto x = randomFloats(kShape.count(), 9);
  kiln_run_stats cold, warm;
  const auto first = run(net, x, &cold);
  EXPECT_EQ(first, expected(x));
  EXPECT_EQ(run(net, x, &warm), first);
  EXPECT_EQ(cold.resident_loads_avoided, 0u);
  EXPECT_EQ(warm.resident_loads_avoided, 2u);
  EXPECT_EQ(warm.resident_bytes_saved, 2 * kBytes);
  EXPECT_EQ(warm.gdma_commands, 4u);
}

// Another net's group that writes over the resident range evicts it; one
// that stays clear of it does not.
TEST_F(ResidencyTest, OtherNetsEvictWhatTheyOverwrite) {
  const auto a_file = buildBmodel(model(mulAddNet()));
  const auto clobber_file = buildBmodel(model(reluNet(0)));
  const auto apart_file = buildBmodel(model(reluNet(2048)));
  Net a, clobber, apart;
  ASSERT_EQ(load(a, a_file), KILN_OK);
  ASSERT_EQ(load(clobber, clobber_file), KILN_OK);
  ASSERT_EQ(load(apart, apart_file), KILN_OK);
  const auto x = randomFloats(kShape.count(), 10);
  const auto want = expected(x);
  const auto u = randomFloats(kShape.count(), 20); // what the relu net leaves in LMEM

  kiln_run_stats stats;
  EXPECT_EQ(run(a, x, &stats), want);
  EXPECT_EQ(run(apart, u, &stats).size(), x.size());
  EXPECT_EQ(run(a, x, &stats), want);
  EXPECT_EQ(stats.resident_loads_avoided, 2u);

  EXPECT_EQ(run(clobber, u, &stats).size(), x.size()); // u now sits on k1 in LMEM
  EXPECT_EQ(run(a, x, &stats), want);
  EXPECT_EQ(stats.resident_loads_avoided, 0u);
  EXPECT_EQ(run(a, x, &stats), want);
  EXPECT_EQ(stats.resident_loads_avoided, 2u);

  // Unloading forgets a net's ranges; a net loaded in its place starts cold.
  ASSERT_EQ(apart.unload(), KILN_OK);
  ASSERT_EQ(clobber.unload(), KILN_OK);
  ASSERT_EQ(a.unload(), KILN_OK);
  ASSERT_EQ(load(a, a_file), KILN_OK);
  EXPECT_EQ(run(a, x, &stats), want);
  EXPECT_EQ(stats.resident_loads_avoided, 0u);
}

// A net without LmemAlloc tables may write anywhere in LMEM.
TEST_F(ResidencyTest, GroupsWithoutTablesEvictEverything) {
  NetSpec untabled = reluNet(4096);
  untabled.groups[0].lmem.reset();
  const auto a_file = buildBmodel(model(mulAddNet()));
  const auto b_file = buildBmodel(model(untabled));
  Net a, b;
  ASSERT_EQ(load(a, a_file), KILN_OK);
  ASSERT_EQ(load(b, b_file), KILN_OK);
  const auto x = randomFloats(kShape.count(), 13);
  kiln_run_stats stats;
  run(a, x, &stats);
  run(b, x, &stats);
  EXPECT_EQ(run(a, x, &stats), expected(x));
  EXPECT_EQ(stats.resident_loads_avoided, 0u);
}

// A failed run leaves LMEM unknown: the next run is cold.
TEST_F(ResidencyTest, AFailedRunForgetsEverything) {
  const auto file = buildBmodel(model(mulAddNet()));
  Net net;
  ASSERT_EQ(load(net, file), KILN_OK);
  const auto x = randomFloats(kShape.count(), 14);
  kiln_run_stats stats;
  run(net, x, &stats);
  flaky.fail_next_wait = true;
  EXPECT_EQ(net.run(kTimeout, &stats), KILN_ERR_TIMEOUT);
  EXPECT_EQ(stats.resident_loads_avoided, 0u); // the failed group does not count
  EXPECT_EQ(run(net, x, &stats), expected(x));
  EXPECT_EQ(stats.resident_loads_avoided, 0u);
  EXPECT_EQ(run(net, x, &stats), expected(x));
  EXPECT_EQ(stats.resident_loads_avoided, 2u);
}

// ---- what is never skipped -----------------------------------------------------

// Dynamic weights are computed per inference: with k2 as a dynamic weight
// read from the neuron region, only k1 stays resident, and a new k2 is used.
TEST_F(ResidencyTest, DynamicWeightsAreReloadedEveryRun) {
  NetSpec net = mulAddNet();
  constexpr uint64_t kW = kOut; // the dynamic filter, an input here
  net.inputs.push_back(tensor("w", kW));
  net.groups[0].gdma[1].src_addr = kW;
  net.residency[1].dynamic = true;
  const auto file = buildBmodel(model(net));
  Net n;
  ASSERT_EQ(load(n, file), KILN_OK);
  const auto x = randomFloats(kShape.count(), 15);
  for (int i = 0; i < 3; ++i) {
    const auto w = randomFloats(kShape.count(), 100 + i);
    ASSERT_EQ(n.setInput(1, w.data(), kBytes), KILN_OK);
    kiln_run_stats stats;
    const auto z = run(n, x, &stats);
    for (size_t j = 0; j < x.size(); ++j)
      ASSERT_EQ(z[j], std::max((x[j] + k1()[j]) * w[j], 0.0f)) << "run " << i;
    EXPECT_EQ(stats.resident_loads_avoided, i == 0 ? 0u : 1u);
    EXPECT_EQ(stats.resident_bytes_saved, i == 0 ? 0u : kBytes);
  }
}

// A "coefficient" loaded from the neuron region could change between runs.
TEST_F(ResidencyTest, CoefficientsLoadedFromWritableMemoryAreNotSkipped) {
  NetSpec net = mulAddNet();
  net.groups[0].gdma[0].src_addr = kOut;
  const auto file = buildBmodel(model(net));
  Net n;
  ASSERT_EQ(load(n, file), KILN_OK);
  const auto x = randomFloats(kShape.count(), 16);
  kiln_run_stats stats;
  run(n, x, &stats);
  run(n, x, &stats);
  EXPECT_EQ(stats.resident_loads_avoided, 1u); // k2 only
}

// An allocation that reuses the range later in the group (not live at the
// same time) is allowed, but the coefficient cannot outlive the group.
TEST_F(ResidencyTest, RangesReusedLaterInTheGroupStayCold) {
  NetSpec net = mulAddNet();
  net.residency[0].last_step = 0;
  auto &allocs = *net.groups[0].lmem;
  allocs[0].last_step = 0;
  LmemSpec later = alloc("later", kLK1);
  later.first_step = 1;
  allocs.push_back(later);
  const auto file = buildBmodel(model(net));
  Net n;
  ASSERT_EQ(load(n, file), KILN_OK);
  const auto x = randomFloats(kShape.count(), 17);
  kiln_run_stats stats;
  run(n, x, &stats);
  EXPECT_EQ(run(n, x, &stats), expected(x));
  EXPECT_EQ(stats.resident_loads_avoided, 1u); // k2 only
}

// ---- refused plans -----------------------------------------------------------------

class ResidencyPlanTest : public ResidencyTest {
protected:
  kiln_status loadEdited(const std::function<void(NetSpec &)> &edit) {
    NetSpec net = mulAddNet();
    edit(net);
    const auto file = buildBmodel(model(net));
    Net n;
    return load(n, file);
  }
};

TEST_F(ResidencyPlanTest, TheUneditedPlanLoads) {
  EXPECT_EQ(loadEdited([](NetSpec &) {}), KILN_OK);
}

TEST_F(ResidencyPlanTest, OverlappingALiveAllocationIsRefused) {
  // k1's resident range reaches into x's buffer.
  EXPECT_EQ(loadEdited([](NetSpec &n) {
              (*n.groups[0].lmem)[0].size = 2 * kLane + 64;
              n.residency[0].lmem_size = 2 * kLane + 64;
            }),
            KILN_ERR_BAD_RESIDENCY);
  // Another buffer of the group on k2, live at the same step.
  EXPECT_EQ(loadEdited([](NetSpec &n) { n.groups[0].lmem->push_back(alloc("s", kLK2 + 64)); }),
            KILN_ERR_BAD_RESIDENCY);
  // Moving x's buffer without its load is a different error: the load
  // writes outside the group's allocations.
  EXPECT_EQ(loadEdited([](NetSpec &n) { (*n.groups[0].lmem)[2].addr = kLK2 + 64; }),
            KILN_ERR_OUT_OF_RANGE);
}

TEST_F(ResidencyPlanTest, OverlappingResidentRecordsAreRefused) {
  EXPECT_EQ(loadEdited([](NetSpec &n) { n.residency.push_back(resident("k1b", kLK1)); }),
            KILN_ERR_BAD_RESIDENCY);
}

TEST_F(ResidencyPlanTest, RecordsMustNameAHeldAllocationOfTheirGroup) {
  EXPECT_EQ(loadEdited([](NetSpec &n) { n.residency[0].group = 1; }), KILN_ERR_BAD_RESIDENCY);
  EXPECT_EQ(loadEdited([](NetSpec &n) { n.residency[0].lmem_addr = kLK1 + 64; }),
            KILN_ERR_BAD_RESIDENCY);
  EXPECT_EQ(loadEdited([](NetSpec &n) { (*n.groups[0].lmem)[1].held = false; }),
            KILN_ERR_BAD_RESIDENCY);
  EXPECT_EQ(loadEdited([](NetSpec &n) { n.groups[0].lmem.reset(); }), KILN_ERR_BAD_RESIDENCY);
  EXPECT_EQ(loadEdited([](NetSpec &n) {
              n.residency[0].first_step = 2;
              n.residency[0].last_step = 1;
            }),
            KILN_ERR_BAD_RESIDENCY);
}

TEST_F(ResidencyPlanTest, OnlyPrologueLoadsMayWriteAResidentRange) {
  // The add writes its result over k1.
  EXPECT_EQ(loadEdited([](NetSpec &n) { n.groups[0].tiu[0].out.addr = kLK1; }),
            KILN_ERR_BAD_RESIDENCY);
  // The load of k2 happens in the slice, not the prologue.
  EXPECT_EQ(loadEdited([](NetSpec &n) {
              n.groups[0].timesteps[0].gdma_end = 1;
              n.groups[0].timesteps[1].gdma_begin = 1;
            }),
            KILN_ERR_BAD_RESIDENCY);
  // Without a prologue timestep no load is a prologue load.
  EXPECT_EQ(loadEdited([](NetSpec &n) { n.groups[0].timesteps.clear(); }),
            KILN_ERR_BAD_RESIDENCY);
}

// A filter formed on chip (format 1.4) is written by the TIU commands of one
// timestep and by no GDMA command: here t, which the add computes.
TEST_F(ResidencyPlanTest, AFilterFormedOnChipIsWrittenByOneTimestepsTiu) {
  auto formed = [](NetSpec &n) {
    (*n.groups[0].lmem)[3].held = true;
    ResidencySpec t = resident("t", kLT);
    t.dynamic = t.formed = true;
    n.residency.push_back(t);
  };
  EXPECT_EQ(loadEdited(formed), KILN_OK);
  // x's load lands on it.
  EXPECT_EQ(loadEdited([&](NetSpec &n) {
              formed(n);
              n.groups[0].gdma[2].dst_addr = kLT;
            }),
            KILN_ERR_BAD_RESIDENCY);
  // The mul writes it again, in a later timestep.
  EXPECT_EQ(loadEdited([&](NetSpec &n) {
              formed(n);
              n.groups[0].tiu[1].out.addr = kLT;
              n.groups[0].timesteps = {TimestepSpec{-1, 0, 0, 0, 2}, TimestepSpec{0, 0, 1, 2, 3},
                                       TimestepSpec{0, 1, 2, 3, 4}};
            }),
            KILN_ERR_BAD_RESIDENCY);
  // A coefficient record there is refused: the TIU writes it.
  EXPECT_EQ(loadEdited([&](NetSpec &n) {
              formed(n);
              n.residency.back().dynamic = n.residency.back().formed = false;
            }),
            KILN_ERR_BAD_RESIDENCY);
}

TEST_F(ResidencyPlanTest, WritesOutsideTheGroupsAllocationsAreRefused) {
  EXPECT_EQ(loadEdited([](NetSpec &n) { n.groups[0].tiu[1].out.addr = 8192; }),
            KILN_ERR_OUT_OF_RANGE);
  // Also in nets without any residency records.
  NetSpec relu = reluNet(0);
  relu.groups[0].gdma[0].dst_addr = 4096;
  const auto file = buildBmodel(model(relu));
  Net n;
  EXPECT_EQ(load(n, file), KILN_ERR_OUT_OF_RANGE);
}

// What a refused plan reports: the record (or command) and the conflict.
class ResidencyDetailTest : public ResidencyTest {
protected:
  kiln_error_detail refusal(const std::function<void(NetSpec &)> &edit, NetSpec net = mulAddNet()) {
    edit(net);
    const auto file = buildBmodel(model(net));
    Net n;
    kiln_error_detail d{};
    EXPECT_NE(n.load(runtime, file.data(), file.size(), 0, &d), KILN_OK);
    EXPECT_NE(d.reason, nullptr);
    return d;
  }
};

void expectDetail(const kiln_error_detail &d, kiln_status status, kiln_object_kind kind,
                  uint32_t index, uint32_t sub_index, const char *word) {
  const std::string reason = d.reason ? d.reason : "";
  EXPECT_EQ(d.status, status) << reason;
  EXPECT_EQ(d.object_kind, uint32_t(kind)) << reason;
  EXPECT_EQ(d.net, 0u) << reason;
  EXPECT_EQ(d.index, index) << reason;
  EXPECT_EQ(d.sub_index, sub_index) << reason;
  EXPECT_NE(reason.find(word), std::string::npos) << reason;
}

constexpr uint32_t kNo = KILN_NO_INDEX;

TEST_F(ResidencyDetailTest, NamesTheRecordAndWhatItConflictsWith) {
  expectDetail(refusal([](NetSpec &n) { n.residency[1].lmem_addr = KILN_LMEM_BYTES_PER_LANE; }),
               KILN_ERR_OUT_OF_RANGE, KILN_OBJ_RESIDENCY, 1, kNo, "outside the lane");
  expectDetail(refusal([](NetSpec &n) { n.residency[0].group = 1; }), KILN_ERR_BAD_RESIDENCY,
               KILN_OBJ_RESIDENCY, 0, kNo, "no group");
  expectDetail(refusal([](NetSpec &n) {
                 n.residency[1].first_step = 2;
                 n.residency[1].last_step = 1;
               }),
               KILN_ERR_BAD_RESIDENCY, KILN_OBJ_RESIDENCY, 1, kNo, "first step");
  expectDetail(refusal([](NetSpec &n) { n.groups[0].lmem.reset(); }), KILN_ERR_BAD_RESIDENCY,
               KILN_OBJ_RESIDENCY, 0, kNo, "no LMEM table");
  expectDetail(refusal([](NetSpec &n) { n.residency[0].lmem_addr = kLK1 + 64; }),
               KILN_ERR_BAD_RESIDENCY, KILN_OBJ_RESIDENCY, 0, kNo, "no held allocation");
  // Allocation 5, live at the same step, on k2's range.
  expectDetail(refusal([](NetSpec &n) { n.groups[0].lmem->push_back(alloc("s", kLK2 + 64)); }),
               KILN_ERR_BAD_RESIDENCY, KILN_OBJ_RESIDENCY, 1, 5, "live allocation");
  expectDetail(refusal([](NetSpec &n) { n.residency.push_back(resident("k1b", kLK1)); }),
               KILN_ERR_BAD_RESIDENCY, KILN_OBJ_RESIDENCY, 0, 2, "another residency record");
  // TIU command 0 (the add) writes over k1; GDMA command 1 loads k2 outside
  // the prologue.
  expectDetail(refusal([](NetSpec &n) { n.groups[0].tiu[0].out.addr = kLK1; }),
               KILN_ERR_BAD_RESIDENCY, KILN_OBJ_RESIDENCY, 0, 0, "TIU command");
  expectDetail(refusal([](NetSpec &n) {
                 n.groups[0].timesteps[0].gdma_end = 1;
                 n.groups[0].timesteps[1].gdma_begin = 1;
               }),
               KILN_ERR_BAD_RESIDENCY, KILN_OBJ_RESIDENCY, 1, 1, "not a prologue load");
}

TEST_F(ResidencyDetailTest, NamesTheCommandWritingOutsideItsAllocations) {
  expectDetail(refusal([](NetSpec &n) { n.groups[0].tiu[1].out.addr = 8192; }),
               KILN_ERR_OUT_OF_RANGE, KILN_OBJ_TIU_CMD, 0, 1, "outside its group's allocations");
  expectDetail(refusal([](NetSpec &n) { n.groups[0].gdma[0].dst_addr = 4096; }, reluNet(0)),
               KILN_ERR_OUT_OF_RANGE, KILN_OBJ_GDMA_CMD, 0, 0, "outside its group's allocations");
}

// ---- the warm queues in device memory ----------------------------------------------

// Warm queues take device memory next to the cold ones: a net with a warm
// plan needs more, and a net whose plan cannot be warm needs none extra.
TEST_F(ResidencyTest, WarmQueuesAreReservedAtLoad) {
  auto needs = [](const NetSpec &spec) {
    const auto file = buildBmodel(model(spec));
    kiln_memory_requirements req{};
    EXPECT_EQ(kiln_bmodel_query_memory(file.data(), file.size(), 0, &req), KILN_OK);
    // Exactly that much device memory is enough.
    Device dev(req.device_bytes);
    Runtime rt;
    EXPECT_EQ(rt.init(dev.hal()), KILN_OK);
    Net net;
    EXPECT_EQ(net.load(rt, file.data(), file.size()), KILN_OK);
    return req.command_bytes;
  };
  NetSpec cold = mulAddNet();
  cold.residency.clear();
  EXPECT_EQ(needs(cold), 4096u);
  EXPECT_EQ(needs(mulAddNet()), 4096u); // 640 + 448 bytes of queues
  // 41 groups, every one with a warm plan: each needs its cold TIU and GDMA
  // queues (256 + 384 bytes) and warm ones without the two loads (256 + 192).
  NetSpec many = mulAddNet();
  for (uint32_t i = 1; i <= 40; ++i) {
    many.groups.push_back(many.groups[0]);
    many.residency.push_back(resident("k1", kLK1, i));
    many.residency.push_back(resident("k2", kLK2, i));
  }
  EXPECT_EQ(needs(many), (41u * (640 + 448) + 4095) / 4096 * 4096);
}

// ---- the scheduler behind accessors (kiln/abi/cost.h) --------------------------

// A queue pair seen through accessors that leave out GDMA record `skip`
// (0-based) and renumber the rest, as the warm queues do; waits unchanged.
struct SkippingSource {
  const std::vector<kiln_tiu_cmd> *tiu;
  const std::vector<kiln_gdma_cmd> *gdma;
  uint32_t skip;
  mutable kiln_gdma_cmd slot;

  static const kiln_tiu_cmd *tiuAt(const void *p, uint32_t i) {
    return &(*static_cast<const SkippingSource *>(p)->tiu)[i];
  }
  static const kiln_gdma_cmd *gdmaAt(const void *p, uint32_t i) {
    const auto &s = *static_cast<const SkippingSource *>(p);
    s.slot = (*s.gdma)[i < s.skip ? i : i + 1];
    s.slot.cmd_id = i + 1;
    return &s.slot;
  }
  kiln_queue_source source() const {
    return kiln_queue_source{this, uint32_t(tiu->size()), uint32_t(gdma->size() - 1), &tiuAt,
                             &gdmaAt};
  }
};

kiln_status recordStart(void *user, kiln_engine engine, uint32_t index) {
  static_cast<std::vector<std::pair<int, uint32_t>> *>(user)->push_back({engine, index});
  return KILN_OK;
}

TEST(ScheduleSource, AgreesWithTheArraySchedulerAndChecksDerivedQueues) {
  GroupSpec g = mulAddGroup();
  // Through plain accessors: the same order and timing as the arrays.
  kiln_queue_arrays arrays{g.tiu.data(), g.gdma.data()};
  kiln_queue_source plain{&arrays, 2, 4, &kiln_array_tiu_at, &kiln_array_gdma_at};
  std::vector<std::pair<int, uint32_t>> a, b;
  kiln_queue_timing ta{}, tb{};
  ASSERT_EQ(kiln_schedule_queues(g.tiu.data(), 2, g.gdma.data(), 4, recordStart, &a, &ta),
            KILN_OK);
  ASSERT_EQ(kiln_schedule_source(&plain, recordStart, &b, &tb), KILN_OK);
  EXPECT_EQ(a, b);
  EXPECT_EQ(ta.total_cycles, tb.total_cycles);
  EXPECT_EQ(ta.gdma_busy, tb.gdma_busy);

  // Leaving out k1's load without moving the add's wait (3) down: the add
  // would wait for the store, which waits for the mul after the add.
  SkippingSource skip_k1{&g.tiu, &g.gdma, 0, {}};
  kiln_queue_source q = skip_k1.source();
  EXPECT_EQ(kiln_schedule_source(&q, nullptr, nullptr, nullptr), KILN_ERR_BAD_SYNC);
  g.tiu[0].wait_gdma_id = 2; // x's load is now the second record
  EXPECT_EQ(kiln_schedule_source(&q, nullptr, nullptr, nullptr), KILN_OK);
  // A renumbering that leaves a gap is caught as well.
  g.gdma[3].cmd_id = 9;
  EXPECT_EQ(kiln_check_source_sync_ids(&q), KILN_OK); // the accessor renumbers
  kiln_queue_source raw{&arrays, 2, 4, &kiln_array_tiu_at, &kiln_array_gdma_at};
  arrays.gdma = g.gdma.data();
  EXPECT_EQ(kiln_check_source_sync_ids(&raw), KILN_ERR_BAD_SYNC);
}

} // namespace
} // namespace kiln::test
