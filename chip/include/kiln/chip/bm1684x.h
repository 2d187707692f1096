// kiln chip: an open model of BM1684X's own commands.
//
// Runs the chip's TIU and GDMA commands (the formats of kiln/abi/bm1684x.h)
// on the chip's memories, computing what Sophgo's simulator computes: the
// oracle tests (tests/oracle) run random commands of every modelled class on
// both and compare the bytes. A command of a class or kind not modelled yet
// faults with a message saying so; docs/DESIGN.md lists what is modelled.
#ifndef KILN_CHIP_BM1684X_H
#define KILN_CHIP_BM1684X_H

#include <stddef.h>
#include <stdint.h>

namespace kiln::chip::bm1684x {

// The memories commands address. LMEM is KILN_NPU_NUM lanes of
// KILN_LMEM_BYTES_PER_LANE, lane-major; ddr[0] is DDR address
// KILN_BM_DDR_BASE; smem[0] is static-memory address KILN_BM_SMEM_BASE.
struct Memories {
  uint8_t *lmem = nullptr;
  uint8_t *ddr = nullptr;
  uint64_t ddrBytes = 0;
  uint8_t *smem = nullptr;
  uint64_t smemBytes = 0;
};

// Each runs one command of `bytes` bytes (its class's size) and returns
// nullptr, or why the command faults: a class or kind the model does not
// cover, a field out of range, or an access outside its memory (then
// nothing has been written).
const char *runTiu(const uint8_t *cmd, size_t bytes, const Memories &mem);
const char *runGdma(const uint8_t *cmd, size_t bytes, const Memories &mem);

// The modelled time of one group's two streams (kiln/abi/bm1684x_cost.h
// charges each command): each engine runs its commands in order, a command
// starting when its engine is free and the other engine has completed the
// command it waits for. DDR bytes are those the copies read and write, and
// the same in whole bursts (what cost.h's bus counts).
struct StreamTiming {
  uint64_t cycles = 0, tiuBusy = 0, gdmaBusy = 0;
  uint64_t ddrReadBytes = 0, ddrWriteBytes = 0, ddrBusBytes = 0;
};
// nullptr, or why the streams cannot run (a command of no form kiln runs, a
// wait that is never met).
const char *timeStreams(const uint8_t *tiu, size_t tiuBytes, const uint8_t *gdma,
                        size_t gdmaBytes, StreamTiming *out);

} // namespace kiln::chip::bm1684x

#endif
