// A submission's two queues on the TIU and GDMA engines: in start order on
// one thread, or concurrently as the sync ids allow (engines.h).
#include <algorithm>
#include <atomic>

#include "kiln/chip/engines.h"
#include "parallel.h"

namespace kiln::chip {
namespace {

// The per-lane LMEM bytes [lo, hi) a command reads or writes: the hull of an
// operand's planes (kiln_lmem_end), in every lane it uses.
struct LmemUse {
  uint64_t lo, hi;
  bool write;
};

struct LmemUses {
  LmemUse use[4];
  int count = 0;
  void add(uint64_t lo, uint64_t hi, bool write) {
    if (hi > lo)
      use[count++] = {lo, hi, write};
  }
  bool clash(const LmemUses &o) const {
    for (int i = 0; i < count; ++i)
      for (int j = 0; j < o.count; ++j)
        if ((use[i].write || o.use[j].write) && use[i].lo < o.use[j].hi &&
            o.use[j].lo < use[i].hi)
          return true;
    return false;
  }
};

LmemUses tiuUses(const kiln_tiu_cmd &cmd) {
  LmemUses u;
  const kiln_tiu_operand *ops[4] = {&cmd.out, &cmd.in0, &cmd.in1, &cmd.in2};
  for (int i = 0; i < 4; ++i) {
    const kiln_tiu_operand &o = *ops[i];
    if ((o.flags & KILN_OPND_USED) && !(o.flags & KILN_OPND_CONST))
      u.add(o.addr, kiln_lmem_end(o.addr, o.n, o.c, o.h, o.w, o.plane_h, kiln_dtype_bytes(o.dtype)),
            i == 0);
  }
  return u;
}

LmemUses gdmaUses(const kiln_gdma_cmd &cmd) {
  LmemUses u;
  const uint32_t dsize = kiln_dtype_bytes(cmd.dtype);
  auto side = [&](uint64_t addr, bool write) {
    u.add(addr, kiln_lmem_end(addr, cmd.n, kiln_gdma_lmem_channels(&cmd), cmd.h, cmd.w, cmd.lmem_plane_h, dsize), write);
  };
  if (kiln_gdma_src_is_lmem(cmd.dir) && !(cmd.flags & KILN_GDMA_FLAG_FILL))
    side(cmd.src_addr, false);
  if (kiln_gdma_dst_is_lmem(cmd.dir))
    side(cmd.dst_addr, true);
  return u;
}

} // namespace

// TIU i (id i + 1) runs after GDMA j (id j + 1) when it or an earlier TIU
// command waits for an id >= j + 1, and before it when GDMA j or an earlier
// GDMA command waits for an id >= i + 1 (each engine runs its queue in
// order). The prefix maxima of the wait ids grow, so the GDMA commands that
// may overlap TIU i are one range that moves forward with i.
bool findLmemRace(const kiln_tiu_cmd *tiu, uint32_t n_tiu, const kiln_gdma_cmd *gdma,
                  uint32_t n_gdma, uint32_t *tiu_index, uint32_t *gdma_index) {
  std::vector<uint32_t> gdma_waits(n_gdma); // prefix maxima of the GDMA wait ids
  std::vector<LmemUses> gdma_uses(n_gdma);
  for (uint32_t j = 0, m = 0; j < n_gdma; ++j) {
    gdma_waits[j] = m = std::max(m, gdma[j].wait_tiu_id);
    gdma_uses[j] = gdmaUses(gdma[j]);
  }
  uint32_t after = 0, end = 0; // TIU i may overlap GDMA [after, end)
  for (uint32_t i = 0; i < n_tiu; ++i) {
    after = std::max(after, tiu[i].wait_gdma_id);
    while (end < n_gdma && gdma_waits[end] <= i)
      ++end;
    if (after >= end)
      continue;
    const LmemUses uses = tiuUses(tiu[i]);
    for (uint32_t j = after; j < end; ++j)
      if (uses.clash(gdma_uses[j])) {
        *tiu_index = i;
        *gdma_index = j;
        return true;
      }
  }
  return false;
}

namespace {

// The engines of one concurrent run. Each runs its part of the order in its
// queue's order, a command once the other engine has completed the id it
// waits for. A fault at order position p stops both engines before any
// command after p, but not before one before p: every command before the
// first fault in start order runs, and that fault is the one reported, at
// any timing.
class Engines {
public:
  Engines(const kiln_tiu_cmd *tiu, const kiln_gdma_cmd *gdma, const std::vector<Scheduled> &order,
          const DdrWindow &ddr, uint8_t *lmem, std::vector<GdmaTraffic> &traffic)
      : tiu_(tiu), gdma_(gdma), ddr_(ddr), lmem_(lmem), traffic_(traffic),
        fault_at_(order.size()) {
    for (size_t k = 0; k < order.size(); ++k)
      (order[k].engine == KILN_ENGINE_TIU ? tiu_pos_ : gdma_pos_).push_back(k);
  }

  bool run() {
    return runBeside(
        [this] {
          loop(tiu_pos_, tiu_done_, gdma_done_, tiu_fault_,
               [this](uint32_t i) { return tiu_[i].wait_gdma_id; },
               [this](uint32_t i) { return runTiu(tiu_[i], lmem_); });
        },
        [this] {
          loop(gdma_pos_, gdma_done_, tiu_done_, gdma_fault_,
               [this](uint32_t j) { return gdma_[j].wait_tiu_id; },
               [this](uint32_t j) { return runGdma(gdma_[j], ddr_, lmem_, &traffic_[j]); });
        });
  }
  // The first fault in start order (stop == order.size(): none).
  size_t stop() const { return fault_at_.load(); }
  const char *why() const { return tiu_fault_.pos == stop() ? tiu_fault_.why : gdma_fault_.why; }

private:
  struct Fault {
    size_t pos = SIZE_MAX;
    const char *why = nullptr;
  };

  template <class WaitId, class Run>
  void loop(const std::vector<size_t> &pos, std::atomic<uint32_t> &done,
            const std::atomic<uint32_t> &other, Fault &fault, WaitId waitId, Run run) {
    for (uint32_t i = 0; i < pos.size(); ++i) {
      const uint32_t wait = waitId(i);
      auto ready = [&] { return other.load() >= wait || fault_at_.load() < pos[i]; };
      if (!ready())
        waitUntil(ready);
      if (fault_at_.load() < pos[i])
        return;
      if (const char *why = run(i)) {
        fault = {pos[i], why};
        for (size_t at = fault_at_.load(); pos[i] < at;)
          fault_at_.compare_exchange_weak(at, pos[i]);
        notifyProgress();
        return;
      }
      done.store(i + 1);
      notifyProgress();
    }
  }

  const kiln_tiu_cmd *tiu_;
  const kiln_gdma_cmd *gdma_;
  const DdrWindow &ddr_;
  uint8_t *lmem_;
  std::vector<GdmaTraffic> &traffic_;
  std::vector<size_t> tiu_pos_, gdma_pos_; // order positions of each queue's commands
  std::atomic<uint32_t> tiu_done_{0}, gdma_done_{0};
  std::atomic<size_t> fault_at_;
  Fault tiu_fault_, gdma_fault_;
};

} // namespace

ScheduleRun runSchedule(const kiln_tiu_cmd *tiu, const kiln_gdma_cmd *gdma,
                        const std::vector<Scheduled> &order, const DdrWindow &ddr,
                        uint8_t *lmem, bool concurrent) {
  ScheduleRun r;
  size_t n_gdma = 0;
  for (const Scheduled &s : order)
    n_gdma += s.engine == KILN_ENGINE_GDMA;
  std::vector<GdmaTraffic> traffic(n_gdma);
  Engines engines(tiu, gdma, order, ddr, lmem, traffic);
  if (concurrent && engines.run()) {
    r.stop = engines.stop();
    r.why = engines.why();
  } else {
    for (r.stop = 0; r.stop < order.size(); ++r.stop) {
      const Scheduled &s = order[r.stop];
      r.why = s.engine == KILN_ENGINE_TIU ? runTiu(tiu[s.index], lmem)
                                          : runGdma(gdma[s.index], ddr, lmem, &traffic[s.index]);
      if (r.why)
        break;
    }
  }
  for (size_t k = 0; k < r.stop; ++k)
    if (order[k].engine == KILN_ENGINE_GDMA) {
      r.traffic.ddr_read_bytes += traffic[order[k].index].ddr_read_bytes;
      r.traffic.ddr_write_bytes += traffic[order[k].index].ddr_write_bytes;
    }
  return r;
}

} // namespace kiln::chip
