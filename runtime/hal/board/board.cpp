// The register-level board driver: kiln_hal over kiln/abi/regs.h.
// Freestanding like the core: no heap, no exceptions, no libstdc++.
#include "kiln/rt/kiln_board.h"

#include "kiln/abi/chip.h"
#include "kiln/abi/regs.h"
#include "kiln/abi/version.h"

namespace {

constexpr uint32_t kBoardTag = 0x4b42524du; // "KBRM": catches an uninitialised board
constexpr uint32_t kIrqDone = 0x1u;
constexpr uint32_t kIrqFault = 0x2u;

kiln_board *boardOf(void *ctx) {
  kiln_board *b = static_cast<kiln_board *>(ctx);
  return b && b->tag == kBoardTag ? b : nullptr;
}

uint32_t readReg(const kiln_board_io &io, uint32_t offset) {
  return io.read_reg(io.reg_ctx, offset);
}
void writeReg(const kiln_board_io &io, uint32_t offset, uint32_t value) {
  io.write_reg(io.reg_ctx, offset, value);
}
void writeReg64(const kiln_board_io &io, uint32_t lo_offset, uint64_t value) {
  writeReg(io, lo_offset, static_cast<uint32_t>(value));
  writeReg(io, lo_offset + 4, static_cast<uint32_t>(value >> 32));
}

// Elapsed time in unsigned arithmetic, so a clock that wraps still works.
bool expired(const kiln_board_io &io, uint64_t start, uint64_t timeout_us) {
  return io.now_us(io.clock_ctx) - start >= timeout_us;
}

// The CPU address of device range [addr, addr + size), or nullptr if it
// leaves the mapped window (or does not fit a size_t on a 32-bit core).
unsigned char *cpuSpan(const kiln_board_io &io, uint64_t addr, uint64_t size) {
  if (addr < io.mem_base)
    return nullptr;
  uint64_t offset = addr - io.mem_base;
  if (offset > io.mem_size || size > io.mem_size - offset || size > static_cast<size_t>(-1))
    return nullptr;
  return static_cast<unsigned char *>(io.mem) + offset;
}

// ERROR holds a kiln_status; anything else (0, a bus reading all ones) is a
// plain device fault, and never becomes an out-of-range enum value.
kiln_status faultStatus(uint32_t error) {
  if (error >= KILN_ERR_INVALID_ARGUMENT && error <= KILN_ERR_HAL)
    return static_cast<kiln_status>(error);
  return KILN_ERR_DEVICE_FAULT;
}

kiln_status resetDevice(kiln_board &b) {
  writeReg(b.io, KILN_REG_CTRL, KILN_CTRL_SOFT_RESET);
  b.submitted = 0;
  uint64_t start = b.io.now_us(b.io.clock_ctx);
  while (readReg(b.io, KILN_REG_STATUS) != KILN_STATUS_IDLE)
    if (expired(b.io, start, KILN_BOARD_RESET_TIMEOUT_US))
      return KILN_ERR_TIMEOUT;
  writeReg(b.io, KILN_REG_IRQ_STATUS, kIrqDone | kIrqFault);
  return KILN_OK;
}

// ---- HAL entry points ----------------------------------------------------------

kiln_status halWriteMem(void *ctx, uint64_t addr, const void *src, uint64_t size) {
  kiln_board *b = boardOf(ctx);
  unsigned char *dst = b ? cpuSpan(b->io, addr, size) : nullptr;
  if (!dst || (size && !src))
    return KILN_ERR_INVALID_ARGUMENT;
  if (size) {
    __builtin_memcpy(dst, src, static_cast<size_t>(size));
    if (b->io.sync_for_device)
      b->io.sync_for_device(b->io.reg_ctx, dst, size);
  }
  return KILN_OK;
}

kiln_status halReadMem(void *ctx, uint64_t addr, void *dst, uint64_t size) {
  kiln_board *b = boardOf(ctx);
  const unsigned char *src = b ? cpuSpan(b->io, addr, size) : nullptr;
  if (!src || (size && !dst))
    return KILN_ERR_INVALID_ARGUMENT;
  if (size) {
    if (b->io.sync_for_cpu)
      b->io.sync_for_cpu(b->io.reg_ctx, src, size);
    __builtin_memcpy(dst, src, static_cast<size_t>(size));
  }
  return KILN_OK;
}

kiln_status halSubmit(void *ctx, const kiln_submit_desc *desc) {
  kiln_board *b = boardOf(ctx);
  if (!b || !desc)
    return KILN_ERR_INVALID_ARGUMENT;
  // regs.h's queues are kiln's records; the HAL it fills says so (isa 0).
  if (desc->isa != KILN_ISA_KILN)
    return KILN_ERR_UNSUPPORTED;
  // The device ignores a doorbell while BUSY; a second submit would be lost.
  if (b->submitted || readReg(b->io, KILN_REG_STATUS) == KILN_STATUS_BUSY)
    return KILN_ERR_BAD_STATE;
  const kiln_board_io &io = b->io;
  writeReg64(io, KILN_REG_DDR_BASE_LO, desc->ddr_base);
  writeReg64(io, KILN_REG_DDR_SIZE_LO, desc->ddr_size);
  writeReg64(io, KILN_REG_TIU_QUEUE_LO, desc->tiu_queue_addr);
  writeReg(io, KILN_REG_TIU_COUNT, desc->tiu_count);
  writeReg64(io, KILN_REG_GDMA_QUEUE_LO, desc->gdma_queue_addr);
  writeReg(io, KILN_REG_GDMA_COUNT, desc->gdma_count);
  // Stale completion bits would otherwise be taken for this submission's.
  writeReg(io, KILN_REG_IRQ_STATUS, kIrqDone | kIrqFault);
  writeReg(io, KILN_REG_DOORBELL, 1u);
  b->submitted = 1;
  return KILN_OK;
}

kiln_status halWait(void *ctx, uint32_t timeout_us) {
  kiln_board *b = boardOf(ctx);
  if (!b)
    return KILN_ERR_INVALID_ARGUMENT;
  if (!b->submitted)
    return KILN_ERR_BAD_STATE;
  const kiln_board_io &io = b->io;
  uint64_t start = io.now_us(io.clock_ctx);
  for (;;) {
    uint32_t status = readReg(io, KILN_REG_STATUS);
    if (status == KILN_STATUS_DONE) {
      writeReg(io, KILN_REG_IRQ_STATUS, kIrqDone);
      b->submitted = 0;
      return KILN_OK;
    }
    if (status == KILN_STATUS_FAULT) {
      kiln_status st = faultStatus(readReg(io, KILN_REG_ERROR));
      writeReg(io, KILN_REG_IRQ_STATUS, kIrqFault);
      b->submitted = 0;
      return st;
    }
    // BUSY, or IDLE before the device has taken the doorbell: keep polling.
    // The submission stays outstanding after a timeout until reset().
    if (expired(io, start, timeout_us))
      return KILN_ERR_TIMEOUT;
  }
}

kiln_status halReset(void *ctx) {
  kiln_board *b = boardOf(ctx);
  return b ? resetDevice(*b) : KILN_ERR_INVALID_ARGUMENT;
}

// ---- MMIO ------------------------------------------------------------------------

// Like Linux's writel/readl: device stores are ordered after earlier stores
// to normal memory (command records, inputs), and loads of device memory
// before later normal loads (outputs read after STATUS says DONE).
inline void ioWriteBarrier() {
#if defined(__aarch64__)
  __asm__ volatile("dmb oshst" ::: "memory");
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}
inline void ioReadBarrier() {
#if defined(__aarch64__)
  __asm__ volatile("dmb oshld" ::: "memory");
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

// The driver only passes the aligned offsets of regs.h.
uint32_t mmioRead(void *ctx, uint32_t offset) {
  uint32_t value = static_cast<volatile uint32_t *>(ctx)[offset / 4];
  ioReadBarrier();
  return value;
}
void mmioWrite(void *ctx, uint32_t offset, uint32_t value) {
  ioWriteBarrier();
  static_cast<volatile uint32_t *>(ctx)[offset / 4] = value;
}

bool ioIsUsable(const kiln_board_io *io) {
  uint64_t end;
  return io && io->read_reg && io->write_reg && io->now_us && (io->mem || !io->mem_size) &&
         !__builtin_add_overflow(io->mem_base, io->mem_size, &end);
}

} // namespace

extern "C" {

kiln_status kiln_board_init(kiln_board *board, const kiln_board_io *io, kiln_hal *out_hal) {
  if (!board || !out_hal || !ioIsUsable(io))
    return KILN_ERR_INVALID_ARGUMENT;
  if (readReg(*io, KILN_REG_CHIP_ID) != KILN_CHIP_ID_BM1684X)
    return KILN_ERR_CHIP_MISMATCH;
  // Minor versions only add what older firmware may ignore.
  if (readReg(*io, KILN_REG_ABI_VERSION) >> 16 != KILN_ABI_VERSION_MAJOR)
    return KILN_ERR_ABI_MISMATCH;
  board->io = *io;
  board->submitted = 0;
  board->tag = kBoardTag;
  // Whatever ran before (a previous boot, a crashed firmware) is discarded.
  kiln_status st = resetDevice(*board);
  if (st != KILN_OK) {
    board->tag = 0;
    return st;
  }
  kiln_hal hal{};
  hal.ctx = board;
  hal.mem_base = io->mem_base;
  hal.mem_size = io->mem_size;
  hal.write_mem = halWriteMem;
  hal.read_mem = halReadMem;
  hal.submit = halSubmit;
  hal.wait = halWait;
  hal.reset = halReset;
  *out_hal = hal;
  return KILN_OK;
}

void kiln_board_mmio_io(volatile uint32_t *regs, void *mem, uint64_t mem_base, uint64_t mem_size,
                        uint64_t (*now_us)(void *clock_ctx), void *clock_ctx,
                        kiln_board_io *out_io) {
  if (!out_io)
    return;
  kiln_board_io io{};
  io.reg_ctx = const_cast<uint32_t *>(regs); // volatile again in mmioRead/mmioWrite
  io.read_reg = mmioRead;
  io.write_reg = mmioWrite;
  io.clock_ctx = clock_ctx;
  io.now_us = now_us;
  io.mem_base = mem_base;
  io.mem_size = mem_size;
  io.mem = mem;
  *out_io = io;
}

} // extern "C"
