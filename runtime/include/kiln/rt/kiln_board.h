/* kiln board driver: a kiln_hal over the device registers of kiln/abi/regs.h.
 *
 * Freestanding like the runtime core: no heap, no global state. The caller
 * provides the storage (a kiln_board), and a kiln_board_io that reaches the
 * hardware: 32-bit register access, a CPU mapping of the device DDR window the
 * runtime may use, and a microsecond clock for timeouts. On a board the
 * registers are MMIO (kiln_board_mmio_io); the cmodel provides callbacks so
 * the same driver runs in CI (kiln::cmodel::Device::boardIo()).
 *
 * Protocol (regs.h): submit programs the DDR window, both queues' addresses
 * and counts, clears IRQ_STATUS and rings DOORBELL; wait polls STATUS until
 * DONE or FAULT (returning ERROR) or the timeout passes (KILN_ERR_TIMEOUT);
 * reset writes CTRL_SOFT_RESET and polls until STATUS is IDLE. */
#ifndef KILN_RT_BOARD_H
#define KILN_RT_BOARD_H

#include <stdint.h>

#include "kiln/rt/kiln_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How long reset waits for the device to return to IDLE. */
#define KILN_BOARD_RESET_TIMEOUT_US 10000u

typedef struct kiln_board_io {
  /* Register access at byte offsets of regs.h; reg_ctx is passed through. */
  void *reg_ctx;
  uint32_t (*read_reg)(void *reg_ctx, uint32_t offset);
  void (*write_reg)(void *reg_ctx, uint32_t offset, uint32_t value);

  /* A monotonic microsecond clock; clock_ctx is passed through. */
  void *clock_ctx;
  uint64_t (*now_us)(void *clock_ctx);

  /* Device addresses [mem_base, mem_base + mem_size) are CPU-visible at mem. */
  uint64_t mem_base;
  uint64_t mem_size;
  void *mem;

  /* Optional cache maintenance for a cached mapping of mem (NULL when the
   * mapping is coherent or uncached): clean after the CPU wrote device
   * memory, invalidate before the CPU reads what the device wrote. */
  void (*sync_for_device)(void *reg_ctx, const void *cpu_addr, uint64_t size);
  void (*sync_for_cpu)(void *reg_ctx, const void *cpu_addr, uint64_t size);
} kiln_board_io;

/* Driver state; the caller allocates it and keeps it alive (and in place)
 * while the HAL is in use. The fields are private. */
typedef struct kiln_board {
  kiln_board_io io;
  uint32_t submitted; /* a submission awaits its wait() */
  uint32_t tag;
} kiln_board;

/* Checks io, CHIP_ID (KILN_ERR_CHIP_MISMATCH) and the ABI major version
 * (KILN_ERR_ABI_MISMATCH), soft-resets the device and fills *out_hal with a
 * HAL whose ctx is board. */
kiln_status kiln_board_init(kiln_board *board, const kiln_board_io *io, kiln_hal *out_hal);

/* An io for memory-mapped registers at regs (KILN_REG_SPACE_BYTES long),
 * accessed as single 32-bit volatile loads and stores with the ordering a
 * doorbell needs. The rest of *out_io is set from the arguments; the cache
 * callbacks are left NULL. */
void kiln_board_mmio_io(volatile uint32_t *regs, void *mem, uint64_t mem_base, uint64_t mem_size,
                        uint64_t (*now_us)(void *clock_ctx), void *clock_ctx,
                        kiln_board_io *out_io);

#ifdef __cplusplus
}
#endif

#endif
