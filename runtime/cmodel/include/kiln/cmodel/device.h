// kiln cmodel: a software BM1684X behind the same HAL as the board driver.
//
// The device has DDR, 64 lanes of LMEM, the TIU and GDMA engines and the
// register file of kiln/abi/regs.h. Ringing the doorbell runs a submission
// synchronously: the records are fetched from DDR and timed by the shared
// two-queue schedule (kiln/abi/cost.h), which gives the cycles, the stats and
// the trace. Then the engines run them, so that a command sees every effect
// of the commands it waits for: with one thread (KILN_CMODEL_THREADS=1) one
// by one in start order; with more, the TIU queue on the caller and the GDMA
// queue on a pool thread, each command once the other engine has completed
// the id it waits for (parallel.h, schedule.cpp). Commands that may overlap
// then touch no common LMEM byte (checked per submission; a submission where
// they would runs in start order), so the bits never depend on timing. A bad
// record never crashes the model: the device faults and stops, both engines
// before any command after the first fault in start order, so the stats,
// registers and trace of a fault do not depend on timing either.
//
// A device built for KILN_ISA_BM1684X runs BM1684X's own command streams
// instead (kiln_submit_desc with isa BM1684X): one by one in an order their
// sync ids allow (bm1684x_stream.h), on kiln's model of the chip's commands
// (kiln/chip/bm1684x.h). No cycle model charges those commands yet: their
// submissions count commands, not cycles, and are not traced.
#ifndef KILN_CMODEL_DEVICE_H
#define KILN_CMODEL_DEVICE_H

#include <stdint.h>

#include <string>
#include <vector>

#include "kiln/abi/cost.h"
#include "kiln/abi/regs.h"
#include "kiln/rt/kiln_board.h"
#include "kiln/rt/kiln_rt.h"

namespace kiln::cmodel {

// Accumulated over submissions until resetStats().
struct Stats {
  uint64_t cycles = 0; // modelled cycles of completed submissions
  uint64_t tiu_busy_cycles = 0;
  uint64_t gdma_busy_cycles = 0;
  uint64_t ddr_read_bytes = 0; // GDMA payload bytes, without command fetches
  uint64_t ddr_write_bytes = 0;
  uint64_t tiu_commands = 0; // commands executed
  uint64_t gdma_commands = 0;
  uint64_t submissions = 0;
  uint64_t soft_resets = 0; // CTRL_SOFT_RESET writes
};

// One command as it ran: submission (Stats::submissions before it was rung),
// engine, index in its queue, start cycle (on the device's clock: the cycles
// of the submissions before it plus its start within its own) and cycles.
struct TraceEvent {
  uint64_t submission;
  kiln_engine engine;
  uint32_t index;
  uint64_t start, cycles;
};

class Device {
public:
  // Device address of DDR byte 0. Not zero, so that a DDR offset passed
  // where an address belongs does not go unnoticed.
  static constexpr uint64_t kDdrBase = 0x100000000ull;

  explicit Device(uint64_t ddr_bytes, kiln_isa isa = KILN_ISA_KILN);
  // The HAL and the schedule callbacks point at the device: it stays put.
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  uint32_t read_reg(uint32_t offset) const;
  void write_reg(uint32_t offset, uint32_t value);

  // A HAL bound to this device: memory access is direct, submit/wait/reset
  // go through the registers as a board driver would.
  kiln_hal hal();

  // What the board driver (kiln_board.h) needs to run on this device: the
  // register file as callbacks, all of DDR as the mapped window at kDdrBase,
  // and a steady clock in microseconds.
  kiln_board_io boardIo();

  // Test hooks for the recovery paths. Each arms one event for the
  // submission `after` doorbells from now (0: the next one) and is cleared
  // by a soft reset. A fault ends that submission in FAULT with ERROR =
  // status without running it. A hang leaves STATUS at BUSY until a soft
  // reset; the doorbell still returns at once, so nothing blocks.
  void injectFault(kiln_status status, uint32_t after = 0);
  void injectHang(uint32_t after = 0);

  // A BM1684X submission, run at once like a doorbell: STATUS, ERROR, the
  // done ids and the stats as for records. (The register map of regs.h
  // carries only kiln's record queues, so the HAL hands it over directly.)
  void runStreams(const kiln_submit_desc &desc);
  kiln_isa isa() const { return isa_; }

  // Appends every command that runs to *sink until called with nullptr.
  void traceInto(std::vector<TraceEvent> *sink) { trace_ = sink; }

  // With strict sync (KILN_CMODEL_STRICT_SYNC=1 in the environment), a
  // submission faults before it runs when two commands that its sync ids let
  // run together touch the same LMEM bytes, one writing them; without it,
  // such a submission runs in start order on one thread. Tests use it to hold
  // the compiler to the sync ids.
  void setStrictSync(bool strict) { strict_sync_ = strict; }

  const Stats &stats() const { return stats_; }
  void resetStats() { stats_ = Stats{}; }
  // Why the last submission faulted; empty if it did not. Kept across a soft
  // reset, which a runtime issues right after a failed wait.
  const std::string &faultReason() const { return fault_reason_; }

  // DDR byte i is at device address kDdrBase + i.
  std::vector<uint8_t> &ddr() { return ddr_; }
  // KILN_LMEM_BYTES_PER_LANE bytes of lane `lane` (< KILN_NPU_NUM).
  uint8_t *lmem(uint32_t lane) { return lmem_.data() + uint64_t{lane} * KILN_LMEM_BYTES_PER_LANE; }

private:
  struct Submission;

  uint32_t &reg(uint32_t offset) { return regs_[offset / 4]; }
  uint64_t reg64(uint32_t lo_offset) const;
  void softReset();
  void ring();
  kiln_status execute(Submission &sub);
  kiln_status fault(std::string why);
  bool inDdr(uint64_t addr, uint64_t size) const;
  uint8_t *ddrAt(uint64_t addr) { return ddr_.data() + (addr - kDdrBase); }
  template <class Record>
  bool fetch(uint64_t addr, uint32_t count, std::vector<Record> *out);

  static kiln_status onStart(void *user, kiln_engine engine, uint32_t index, uint64_t start,
                             uint64_t cycles);

  void finish(kiln_status st);

  kiln_isa isa_;
  std::vector<uint8_t> ddr_;
  std::vector<uint8_t> lmem_;
  uint32_t regs_[KILN_REG_SPACE_BYTES / 4] = {};
  Stats stats_;
  std::vector<TraceEvent> *trace_ = nullptr;
  bool strict_sync_ = false;
  std::string fault_reason_;
  // Armed test events: doorbells to let pass first (-1 when not armed).
  int64_t fault_in_ = -1, hang_in_ = -1;
  kiln_status injected_fault_ = KILN_ERR_DEVICE_FAULT;
};

} // namespace kiln::cmodel

#endif
