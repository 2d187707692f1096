#include "residency.h"

#include "internal.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cmd_check.h"
#include "kiln/abi/cost.h"
#include "verify.h"

namespace fb = kiln::bmodel;

namespace kiln::rt {
namespace {

// A per-lane LMEM byte range [addr, end).
struct Span {
  uint32_t addr, end;
};

bool overlaps(Span a, Span b) { return a.addr < b.end && b.addr < a.end; }
bool contains(Span outer, Span inner) { return outer.addr <= inner.addr && inner.end <= outer.end; }

// The bytes of a lane an LMEM tensor touches, measured as kiln_lmem_fits does
// (a window of rows ends at its last row). Only for records that passed
// cmd_check.h, so the span ends inside the lane.
Span lmemSpan(uint64_t addr, uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t plane_h,
              uint32_t dsize) {
  uint64_t bytes;
  if (plane_h) {
    uint64_t planes = uint64_t{n} * ((uint64_t{c} + KILN_NPU_NUM - 1) / KILN_NPU_NUM);
    bytes = (planes - 1) * kiln_lmem_plane_stride(plane_h, w, dsize) + uint64_t{h} * w * dsize;
  } else {
    bytes = kiln_lmem_lane_bytes(n, c, h, w, dsize);
  }
  return Span{uint32_t(addr), uint32_t(addr + bytes)};
}

Span tiuOutSpan(const kiln_tiu_cmd &cmd) {
  const kiln_tiu_operand &o = cmd.out;
  return lmemSpan(o.addr, o.n, o.c, o.h, o.w, o.plane_h, kiln_dtype_bytes(o.dtype));
}

Span gdmaDstSpan(const kiln_gdma_cmd &cmd) {
  return lmemSpan(cmd.dst_addr, cmd.n, kiln_gdma_lmem_channels(&cmd), cmd.h, cmd.w, cmd.lmem_plane_h,
                  kiln_dtype_bytes(cmd.dtype));
}

// Allocations and records were checked to lie inside a lane.
Span allocSpan(const fb::LmemAlloc &a) { return Span{a.addr(), a.addr() + a.size()}; }
Span residentSpan(const fb::Residency &r) { return Span{r.lmem_addr(), r.lmem_addr() + r.lmem_size()}; }

bool lifetimesOverlap(uint32_t first0, uint32_t last0, uint32_t first1, uint32_t last1) {
  return first0 <= last1 && first1 <= last0;
}

// Calls f(span, is_gdma, index) for every LMEM range the group's commands
// write, until f returns false; returns whether every call returned true.
template <class F>
bool forEachLmemWrite(const fb::LayerGroup &g, const uint8_t *blob, F f) {
  const kiln_tiu_cmd *tiu = tiuRecords(blob, g);
  const kiln_gdma_cmd *gdma = gdmaRecords(blob, g);
  for (uint32_t i = 0; i < g.tiu_count(); ++i)
    if (!f(tiuOutSpan(tiu[i]), false, i))
      return false;
  for (uint32_t i = 0; i < g.gdma_count(); ++i)
    if (kiln_gdma_dst_is_lmem(gdma[i].dir) && !f(gdmaDstSpan(gdma[i]), true, i))
      return false;
  return true;
}

// The timestep whose TIU range holds command i, or kNoIndex.
uint32_t tiuStep(const fb::LayerGroup &g, uint32_t i) {
  const auto *steps = g.timesteps();
  for (uint32_t k = 0; steps && k < steps->size(); ++k)
    if (i >= steps->Get(k)->tiu_begin() && i < steps->Get(k)->tiu_end())
      return k;
  return kNoIndex;
}

// The GDMA records of the group's prologue (its first timestep, slice -1 and
// no compute), which load the held tensors once for every slice: [0, end).
uint32_t prologueEnd(const fb::LayerGroup &g) {
  const auto *steps = g.timesteps();
  if (!steps || steps->size() == 0)
    return 0;
  const fb::Timestep *p = steps->Get(0);
  if (p->slice() != -1 || p->gdma_begin() != 0 || p->tiu_begin() != p->tiu_end())
    return 0;
  return p->gdma_end(); // verified to be within the queue
}

// Group tables must describe what the commands do: the tracker evicts by them.
kiln_status checkWritesInsideAllocations(const fb::LayerGroup &g, uint32_t group,
                                         const uint8_t *blob, Detail *d) {
  const auto *allocs = g.lmem();
  if (!allocs) // no table: the tracker assumes the group overwrites all of LMEM
    return KILN_OK;
  bool bad_gdma = false;
  uint32_t bad = 0;
  bool ok = forEachLmemWrite(g, blob, [&](Span s, bool is_gdma, uint32_t i) {
    for (const fb::LmemAlloc *a : *allocs)
      if (contains(allocSpan(*a), s))
        return true;
    bad_gdma = is_gdma;
    bad = i;
    return false;
  });
  if (ok)
    return KILN_OK;
  return fail(d, KILN_ERR_OUT_OF_RANGE, bad_gdma ? KILN_OBJ_GDMA_CMD : KILN_OBJ_TIU_CMD, group,
              bad, "writes LMEM outside its group's allocations");
}

kiln_status checkRecord(const fb::Net &net, uint32_t index, const uint8_t *blob, Detail *d) {
  const fb::Residency &r = *net.residency()->Get(index);
  if (!net.groups() || r.group() >= net.groups()->size())
    KILN_FAIL(d, BAD_RESIDENCY, RESIDENCY, index, kNoIndex, "names no group of the net");
  if (r.first_step() > r.last_step())
    KILN_FAIL(d, BAD_RESIDENCY, RESIDENCY, index, kNoIndex, "first step after its last");
  const fb::LayerGroup &g = *net.groups()->Get(r.group());
  const auto *allocs = g.lmem();
  if (!allocs)
    KILN_FAIL(d, BAD_RESIDENCY, RESIDENCY, index, kNoIndex, "its group has no LMEM table");
  const Span rs = residentSpan(r);

  // It is one of the group's held allocations ...
  uint32_t own = allocs->size();
  for (uint32_t i = 0; i < allocs->size() && own == allocs->size(); ++i) {
    const fb::LmemAlloc &a = *allocs->Get(i);
    if (a.held() && a.addr() == r.lmem_addr() && a.size() == r.lmem_size())
      own = i;
  }
  if (own == allocs->size())
    KILN_FAIL(d, BAD_RESIDENCY, RESIDENCY, index, kNoIndex, "matches no held allocation");
  // ... that no other live allocation or resident tensor of the group shares ...
  for (uint32_t i = 0; i < allocs->size(); ++i) {
    const fb::LmemAlloc &a = *allocs->Get(i);
    if (i != own && overlaps(rs, allocSpan(a)) &&
        lifetimesOverlap(r.first_step(), r.last_step(), a.first_step(), a.last_step()))
      KILN_FAIL(d, BAD_RESIDENCY, RESIDENCY, index, i, "overlaps a live allocation");
  }
  for (uint32_t i = 0; i < net.residency()->size(); ++i) {
    const fb::Residency &o = *net.residency()->Get(i);
    if (i != index && o.group() == r.group() && overlaps(rs, residentSpan(o)) &&
        lifetimesOverlap(r.first_step(), r.last_step(), o.first_step(), o.last_step()))
      KILN_FAIL(d, BAD_RESIDENCY, RESIDENCY, index, i, "overlaps another residency record");
  }
  // ... and only the prologue's loads write (a filter formed on chip: only
  // TIU commands of one timestep): it holds the same bytes for every slice.
  const uint32_t prologue = prologueEnd(g);
  const kiln_gdma_cmd *gdma = gdmaRecords(blob, g);
  const bool formed = r.kind() == fb::ResidencyKind::FormedOnChip;
  uint32_t formingStep = kNoIndex;
  bool bad_gdma = false;
  uint32_t bad = 0;
  bool ok = forEachLmemWrite(g, blob, [&](Span s, bool is_gdma, uint32_t i) {
    bad_gdma = is_gdma;
    bad = i;
    if (!overlaps(s, rs))
      return true;
    if (formed) {
      uint32_t step = is_gdma ? kNoIndex : tiuStep(g, i);
      if (formingStep == kNoIndex)
        formingStep = step;
      return step != kNoIndex && step == formingStep;
    }
    return is_gdma && i < prologue && gdma[i].dir == KILN_GDMA_DDR_TO_LMEM && contains(rs, s);
  });
  if (ok)
    return KILN_OK;
  if (formed)
    return fail(d, KILN_ERR_BAD_RESIDENCY, KILN_OBJ_RESIDENCY, index, bad,
                bad_gdma ? "formed on chip but written by a GDMA command"
                         : "formed on chip by TIU commands of more than one timestep");
  return fail(d, KILN_ERR_BAD_RESIDENCY, KILN_OBJ_RESIDENCY, index, bad,
              bad_gdma ? "written by a GDMA command not a prologue load"
                       : "written by a TIU command");
}

// Does the load read only the coefficient region, which no command and no
// host call may write once the net is loaded?
bool readsCoefficients(const kiln_gdma_cmd &cmd, uint64_t coeff_size) {
  uint64_t end;
  return cmd.dir == KILN_GDMA_DDR_TO_LMEM &&
         kiln_gdma_ddr_end(&cmd, cmd.src_addr, cmd.src_stride, &end) && end <= coeff_size;
}

// Can this coefficient stay in LMEM after its group finishes? It must be the
// only allocation and resident tensor of its group on its range, at any step,
// and be filled by prologue loads of coefficients only.
bool staysResident(const fb::Net &net, const fb::LayerGroup &g, uint32_t group,
                   const fb::Residency &r, const kiln_gdma_cmd *gdma, uint32_t prologue) {
  const Span rs = residentSpan(r);
  if (r.kind() != fb::ResidencyKind::Coefficient || r.group() != group || rs.addr == rs.end)
    return false;
  uint32_t sharing = 0;
  for (const fb::LmemAlloc *a : *g.lmem())
    sharing += overlaps(rs, allocSpan(*a));
  for (const fb::Residency *o : *net.residency())
    sharing += o->group() == group && overlaps(rs, residentSpan(*o));
  if (sharing != 2) // its own allocation and itself
    return false;
  uint32_t loads = 0;
  for (uint32_t i = 0; i < prologue; ++i) {
    if (!kiln_gdma_dst_is_lmem(gdma[i].dir) || !overlaps(gdmaDstSpan(gdma[i]), rs))
      continue;
    if (!readsCoefficients(gdma[i], net.coeff_size()))
      return false;
    ++loads;
  }
  return loads != 0;
}

// The records of a group's warm queues, computed on the fly from its cold
// ones: GDMA record i is the i-th one the plan keeps, renumbered, and each TIU
// wait counts only the kept records.
struct WarmSource {
  const kiln_tiu_cmd *tiu;
  const kiln_gdma_cmd *gdma;
  const WarmPlan *plan;
  mutable kiln_tiu_cmd tiu_slot;
  mutable kiln_gdma_cmd gdma_slot;

  // Kept records among cold ids 1..id (skipped loads are 0-based indices).
  uint32_t keptUpTo(uint32_t id) const {
    uint32_t skipped = 0;
    for (uint32_t k = 0; k < plan->count && plan->loads[k].gdma_index < id; ++k)
      ++skipped;
    return id - skipped;
  }
  uint32_t coldIndex(uint32_t warm_index) const {
    uint32_t cold = warm_index;
    for (uint32_t k = 0; k < plan->count && plan->loads[k].gdma_index <= cold; ++k)
      ++cold;
    return cold;
  }

  static const kiln_tiu_cmd *tiuAt(const void *p, uint32_t i) {
    const WarmSource &s = *static_cast<const WarmSource *>(p);
    s.tiu_slot = s.tiu[i];
    s.tiu_slot.wait_gdma_id = s.keptUpTo(s.tiu[i].wait_gdma_id);
    return &s.tiu_slot;
  }
  static const kiln_gdma_cmd *gdmaAt(const void *p, uint32_t i) {
    const WarmSource &s = *static_cast<const WarmSource *>(p);
    s.gdma_slot = s.gdma[s.coldIndex(i)];
    s.gdma_slot.cmd_id = i + 1;
    return &s.gdma_slot;
  }
};

// Writes count records from at() to device memory, a few at a time.
template <class Record, class At>
kiln_status writeRecords(const kiln_hal &hal, uint64_t addr, const void *src, uint32_t count,
                         At at) {
  constexpr uint32_t kBatch = 8;
  Record batch[kBatch];
  for (uint32_t done = 0; done < count;) {
    uint32_t n = count - done < kBatch ? count - done : kBatch;
    for (uint32_t k = 0; k < n; ++k)
      batch[k] = *at(src, done + k);
    kiln_status st = hal.write_mem(hal.ctx, addr + uint64_t{done} * sizeof(Record), batch,
                                   uint64_t{n} * sizeof(Record));
    if (st != KILN_OK)
      return st;
    done += n;
  }
  return KILN_OK;
}

bool sameRange(const ResidentRange &r, uint32_t load, uint32_t group, const WarmLoad &w) {
  return r.load == load && r.group == group && r.addr == w.addr && r.end == w.end;
}

} // namespace

// ---- load time -------------------------------------------------------------------

kiln_status checkResidencyPlan(const fb::Net &net, const uint8_t *blob, Detail *d) {
  kiln_status st;
  if (net.groups())
    for (uint32_t i = 0; i < net.groups()->size(); ++i)
      if ((st = checkWritesInsideAllocations(*net.groups()->Get(i), i, blob, d)) != KILN_OK)
        return st;
  if (net.residency())
    for (uint32_t i = 0; i < net.residency()->size(); ++i)
      if ((st = checkRecord(net, i, blob, d)) != KILN_OK)
        return st;
  return KILN_OK;
}

void planWarm(const fb::Net &net, uint32_t index, const uint8_t *blob, WarmPlan *out) {
  out->count = 0;
  out->bytes = 0;
  const fb::LayerGroup &g = *net.groups()->Get(index);
  const uint32_t prologue = prologueEnd(g);
  if (!g.lmem() || !net.residency() || prologue == 0)
    return;
  const kiln_gdma_cmd *gdma = gdmaRecords(blob, g);

  Span ranges[kMaxWarmLoads];
  uint32_t n_ranges = 0;
  for (const fb::Residency *r : *net.residency()) {
    if (!staysResident(net, g, index, *r, gdma, prologue))
      continue;
    if (n_ranges == kMaxWarmLoads)
      return; // too many to track: always cold
    ranges[n_ranges++] = residentSpan(*r);
  }
  for (uint32_t i = 0; i < prologue; ++i) {
    if (!kiln_gdma_dst_is_lmem(gdma[i].dir))
      continue;
    const Span s = gdmaDstSpan(gdma[i]);
    for (uint32_t k = 0; k < n_ranges; ++k) {
      if (!overlaps(s, ranges[k]))
        continue;
      if (out->count == kMaxWarmLoads) {
        out->count = 0;
        out->bytes = 0;
        return;
      }
      uint64_t bytes = kiln_sat_mul(kiln_gdma_elems(&gdma[i]), kiln_dtype_bytes(gdma[i].dtype));
      out->loads[out->count++] = WarmLoad{i, ranges[k].addr, ranges[k].end, bytes};
      out->bytes = kiln_sat_add(out->bytes, bytes);
      break; // resident ranges of a group do not overlap
    }
  }
}

uint32_t warmGdmaCount(const fb::LayerGroup &g, const WarmPlan &plan) {
  return g.gdma_count() - plan.count;
}
uint64_t warmTiuBytes(const fb::LayerGroup &g, const WarmPlan &plan) {
  return plan.count ? uint64_t{g.tiu_count()} * sizeof(kiln_tiu_cmd) : 0;
}
uint64_t warmGdmaBytes(const fb::LayerGroup &g, const WarmPlan &plan) {
  return plan.count ? uint64_t{warmGdmaCount(g, plan)} * sizeof(kiln_gdma_cmd) : 0;
}

kiln_status uploadWarmQueues(const kiln_hal &hal, const fb::LayerGroup &g, uint32_t group,
                             const uint8_t *blob, const WarmPlan &plan, uint64_t tiu_addr,
                             uint64_t gdma_addr, Detail *d) {
  WarmSource src{tiuRecords(blob, g), gdmaRecords(blob, g), &plan, {}, {}};
  kiln_queue_source q{&src, g.tiu_count(), warmGdmaCount(g, plan), &WarmSource::tiuAt,
                      &WarmSource::gdmaAt};
  // The records are the verified cold ones; only ids and waits change, so
  // they get the verifier's sync check again: ids in order, no deadlock.
  kiln_status st = scheduleSource(q, nullptr, nullptr);
  if (st != KILN_OK)
    return fail(d, st, KILN_OBJ_GROUP, group, kNoIndex, "warm queues would deadlock");
  st = writeRecords<kiln_tiu_cmd>(hal, tiu_addr, &src, q.n_tiu, &WarmSource::tiuAt);
  if (st == KILN_OK)
    st = writeRecords<kiln_gdma_cmd>(hal, gdma_addr, &src, q.n_gdma, &WarmSource::gdmaAt);
  if (st != KILN_OK)
    return fail(d, st, KILN_OBJ_HAL, group, kNoIndex, "writing warm queues failed");
  return KILN_OK;
}

// ---- run time ----------------------------------------------------------------------

void trackerReset(ResidencyTracker *t) { t->count = 0; }

uint32_t trackerNewLoad(ResidencyTracker *t) {
  // Ids repeat only after 2^32 loads: then forget every range (a net loaded
  // before the wrap and still loaded could share an id with a new one).
  if (++t->last_load == 0) {
    trackerReset(t);
    t->last_load = 1;
  }
  return t->last_load;
}

void trackerForgetLoad(ResidencyTracker *t, uint32_t load) {
  uint32_t keep = 0;
  for (uint32_t i = 0; i < t->count; ++i)
    if (t->ranges[i].load != load)
      t->ranges[keep++] = t->ranges[i];
  t->count = keep;
}

bool trackerHolds(const ResidencyTracker &t, uint32_t load, uint32_t group, const WarmPlan &plan) {
  for (uint32_t k = 0; k < plan.count; ++k) {
    bool found = false;
    for (uint32_t i = 0; i < t.count && !found; ++i)
      found = sameRange(t.ranges[i], load, group, plan.loads[k]);
    if (!found)
      return false;
  }
  return true;
}

void trackerRan(ResidencyTracker *t, uint32_t load, uint32_t group, const fb::LayerGroup &g,
                const WarmPlan &plan) {
  const auto *allocs = g.lmem();
  uint32_t keep = 0;
  for (uint32_t i = 0; i < t->count; ++i) {
    const ResidentRange &r = t->ranges[i];
    bool clobbered = !allocs || (r.load == load && r.group == group); // own ranges: re-added
    for (uint32_t k = 0; allocs && !clobbered && k < allocs->size(); ++k)
      clobbered = overlaps(Span{r.addr, r.end}, allocSpan(*allocs->Get(k)));
    if (!clobbered)
      t->ranges[keep++] = r;
  }
  t->count = keep;
  for (uint32_t k = 0; k < plan.count; ++k) {
    bool present = false;
    for (uint32_t i = 0; i < t->count && !present; ++i)
      present = sameRange(t->ranges[i], load, group, plan.loads[k]);
    if (present)
      continue;
    if (t->count == kMaxResidentRanges) { // forget the oldest
      for (uint32_t i = 1; i < t->count; ++i)
        t->ranges[i - 1] = t->ranges[i];
      --t->count;
    }
    t->ranges[t->count++] = ResidentRange{load, group, plan.loads[k].addr, plan.loads[k].end};
  }
}

} // namespace kiln::rt
