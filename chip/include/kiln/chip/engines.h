// kiln chip: the TIU and GDMA engines, one record at a time, and a
// submission's two queues run on them. The cmodel device (runtime/cmodel)
// runs every submission through these.
#ifndef KILN_CHIP_ENGINES_H
#define KILN_CHIP_ENGINES_H

#include <stdint.h>

#include <cstddef>
#include <vector>

#include "kiln/abi/chip.h"
#include "kiln/abi/commands.h"
#include "kiln/abi/cost.h"

namespace kiln::chip {

// Offsets into the whole LMEM array (lane-major, lane_bytes per lane: the
// chip's KILN_LMEM_BYTES_PER_LANE on the device, more in the compiler's
// interpreter) of the elements of an [N, C, H, W] tensor laid out as in
// chip.h, or of a window of rows of it: plane_rows is the rows its planes hold.
class LmemLayout {
public:
  LmemLayout(uint64_t addr, uint32_t c, uint32_t plane_rows, uint32_t w, uint32_t dsize,
             uint64_t lane_bytes = KILN_LMEM_BYTES_PER_LANE)
      : addr_(addr), w_(w), dsize_(dsize), plane_(kiln_lmem_plane_stride(plane_rows, w, dsize)),
        c_groups_((uint64_t{c} + KILN_NPU_NUM - 1) / KILN_NPU_NUM), lane_bytes_(lane_bytes) {}
  uint64_t offset(uint64_t n, uint64_t c, uint64_t h, uint64_t w) const {
    return c % KILN_NPU_NUM * lane_bytes_ + addr_ +
           (n * c_groups_ + c / KILN_NPU_NUM) * plane_ + (h * w_ + w) * dsize_;
  }

private:
  uint64_t addr_, w_, dsize_, plane_, c_groups_, lane_bytes_;
};

// Calls f(n, c, h) for every row of an [n, c, h, w] block (a TIU operand, a
// GDMA record), in NCHW order.
template <class Block, class F>
void forEachRow(const Block &b, F f) {
  for (uint32_t n = 0; n < b.n; ++n)
    for (uint32_t c = 0; c < b.c; ++c)
      for (uint32_t h = 0; h < b.h; ++h)
        f(n, c, h);
}

// The part of DDR a submission may touch (the net's window), already checked
// to lie inside the device's DDR.
struct DdrWindow {
  uint8_t *base;
  uint64_t size;
};

struct GdmaTraffic {
  uint64_t ddr_read_bytes = 0;
  uint64_t ddr_write_bytes = 0;
};

// Each returns nullptr on success, or why the device faults (nothing has been
// written then). runTiu is runTiuRecord (kiln/chip/tiu_kernels.h) on the
// chip's LMEM.
const char *runTiu(const kiln_tiu_cmd &cmd, uint8_t *lmem);
const char *runGdma(const kiln_gdma_cmd &cmd, const DdrWindow &ddr, uint8_t *lmem,
                    GdmaTraffic *traffic);

// One command of a submission's schedule (kiln_schedule_source_timed), in
// start order: engine, index in its queue, start cycle and modelled cycles.
struct Scheduled {
  kiln_engine engine;
  uint32_t index;
  uint64_t start, cycles;
};

// Whether some TIU and GDMA commands among the first n_tiu and n_gdma, which
// the sync ids let run at the same time, touch common LMEM bytes of a lane,
// one of them writing: the first such pair (by TIU index, then GDMA index)
// goes to *tiu_index and *gdma_index. Costs O(n_tiu + n_gdma + the pairs
// that may overlap).
bool findLmemRace(const kiln_tiu_cmd *tiu, uint32_t n_tiu, const kiln_gdma_cmd *gdma,
                  uint32_t n_gdma, uint32_t *tiu_index, uint32_t *gdma_index);

// What runSchedule did. Every command before order[stop] completed (stop is
// order.size() when all did); order[stop] faulted for `why`. Commands after
// it may have run too (concurrently): their effects are unspecified.
struct ScheduleRun {
  size_t stop = 0;
  const char *why = nullptr;
  GdmaTraffic traffic; // of the GDMA commands before order[stop]
};

// Runs the commands of `order` (a prefix of each queue, closed under the sync
// ids as every prefix of a start order is). Sequentially in that order, or
// with `concurrent` the TIU queue on the calling thread and the GDMA queue on
// a pool thread (parallel.h), each command once the other engine has
// completed the id it waits for; the caller has checked with findLmemRace
// that such commands touch no common memory, so both give the same bits.
ScheduleRun runSchedule(const kiln_tiu_cmd *tiu, const kiln_gdma_cmd *gdma,
                        const std::vector<Scheduled> &order, const DdrWindow &ddr,
                        uint8_t *lmem, bool concurrent);

} // namespace kiln::chip

#endif
