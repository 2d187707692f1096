// cmodel internals: the TIU and GDMA engines, one record at a time.
#ifndef KILN_CMODEL_ENGINES_H
#define KILN_CMODEL_ENGINES_H

#include <stdint.h>

#include "kiln/abi/chip.h"
#include "kiln/abi/commands.h"

namespace kiln::cmodel {

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
// written then). runTiu is runTiuRecord (kiln/cmodel/tiu_kernels.h) on the
// chip's LMEM.
const char *runTiu(const kiln_tiu_cmd &cmd, uint8_t *lmem);
const char *runGdma(const kiln_gdma_cmd &cmd, const DdrWindow &ddr, uint8_t *lmem,
                    GdmaTraffic *traffic);

} // namespace kiln::cmodel

#endif
