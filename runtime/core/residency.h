// LMEM residency: which held tensors (filters, biases, dynamic weights) stay
// in a lane's local memory between submissions, and the "warm" queues that
// leave out the loads of tensors that are still there.
//
// At load, checkResidencyPlan() holds a net's Residency records against its
// groups' LmemAlloc tables and commands, and refuses a plan whose resident
// ranges overlap other live allocations. A group's held coefficient can stay
// resident across submissions when its only writers are prologue loads from
// the read-only coefficient region and no other allocation of the group
// overlaps it; planWarm() lists those loads. The group then gets a warm queue
// pair next to its cold one: the same records without those loads, GDMA ids
// renumbered and TIU waits moved down (checked by kiln_schedule_source before
// it is written). At run, the tracker remembers which ranges hold what: a
// group's range survives until a group whose allocations overlap it runs, in
// any net. Dynamic weights are computed per inference and never skipped.
//
// Freestanding, no heap: plans live on the caller's stack and the tracker in
// the runtime object.
#ifndef KILN_RT_CORE_RESIDENCY_H
#define KILN_RT_CORE_RESIDENCY_H

#include <stdint.h>

#include "bmodel_fb.h"
#include "kiln/abi/commands.h"
#include "kiln/abi/status.h"
#include "kiln/rt/kiln_rt.h"

namespace kiln::rt {

// LMEM ranges the tracker remembers; when full, the oldest are forgotten
// (which only costs a reload).
constexpr uint32_t kMaxResidentRanges = 64;
// Loads one warm queue may leave out; a group with more always runs cold.
constexpr uint32_t kMaxWarmLoads = 32;

// A per-lane LMEM range [addr, end) filled by group `group` of the net
// loaded as `load`.
struct ResidentRange {
  uint32_t load;
  uint32_t group;
  uint32_t addr;
  uint32_t end;
};

struct ResidencyTracker {
  ResidentRange ranges[kMaxResidentRanges];
  uint32_t count;
  uint32_t last_load; // load ids are handed out in order
};

// One prologue load a warm submission leaves out.
struct WarmLoad {
  uint32_t gdma_index; // 0-based, in the cold GDMA queue
  uint32_t addr, end;  // the resident range it fills
  uint64_t bytes;      // the DDR bytes it would read
};

// A group's warm variant: count == 0 means the group always runs cold.
struct WarmPlan {
  uint32_t count;
  uint64_t bytes;
  WarmLoad loads[kMaxWarmLoads]; // ascending gdma_index
};

// ---- load time (on a verified net) ------------------------------------------

// KILN_ERR_BAD_RESIDENCY if a Residency record names no held allocation of
// its group, overlaps another live allocation or record of the group, or is
// written by anything but its prologue loads; KILN_ERR_OUT_OF_RANGE if a
// group with an LmemAlloc table writes LMEM outside its allocations (the
// tables are what the tracker evicts by, so they must be true).
// *detail names the record (RESIDENCY, sub_index the allocation, record or
// command it conflicts with) or the command (TIU_CMD, GDMA_CMD).
kiln_status checkResidencyPlan(const kiln::bmodel::Net &net, const uint8_t *blob,
                               kiln_error_detail *detail);

// The loads a warm submission of group `index` leaves out. Deterministic in
// the (immutable) bmodel, so load and run compute the same plan.
void planWarm(const kiln::bmodel::Net &net, uint32_t index, const uint8_t *blob, WarmPlan *out);

uint64_t warmTiuBytes(const kiln::bmodel::LayerGroup &g, const WarmPlan &plan);
uint64_t warmGdmaBytes(const kiln::bmodel::LayerGroup &g, const WarmPlan &plan);
uint32_t warmGdmaCount(const kiln::bmodel::LayerGroup &g, const WarmPlan &plan);

// Derives the warm queues from the group's records, schedules them with
// kiln_schedule_source (KILN_ERR_BAD_SYNC if they could deadlock) and writes
// them to device memory at tiu_addr and gdma_addr (group: its index, for
// *detail).
kiln_status uploadWarmQueues(const kiln_hal &hal, const kiln::bmodel::LayerGroup &g,
                             uint32_t group, const uint8_t *blob, const WarmPlan &plan,
                             uint64_t tiu_addr, uint64_t gdma_addr, kiln_error_detail *detail);

// ---- run time -------------------------------------------------------------------

void trackerReset(ResidencyTracker *t);
// A fresh id for a net being loaded.
uint32_t trackerNewLoad(ResidencyTracker *t);
void trackerForgetLoad(ResidencyTracker *t, uint32_t load);
// Does LMEM still hold every range the plan's loads fill?
bool trackerHolds(const ResidencyTracker &t, uint32_t load, uint32_t group, const WarmPlan &plan);
// After group `group` of `load` ran: its allocations overwrote every other
// range they overlap, and its plan's ranges now hold its coefficients.
void trackerRan(ResidencyTracker *t, uint32_t load, uint32_t group,
                const kiln::bmodel::LayerGroup &g, const WarmPlan &plan);

} // namespace kiln::rt

#endif
