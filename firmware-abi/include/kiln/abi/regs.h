/* kiln firmware ABI: device register map (32-bit registers, byte offsets).
 *
 * Protocol: the host writes the net's DDR window (DDR_BASE, DDR_SIZE), the
 * device addresses of a group's two command queues and their record counts,
 * then writes 1 to DOORBELL. The device sets STATUS to BUSY, runs both queues,
 * and ends in DONE or FAULT (ERROR holds a kiln_status). TIU_DONE_ID and
 * GDMA_DONE_ID report progress. Writing CTRL_SOFT_RESET returns to IDLE. */
#ifndef KILN_ABI_REGS_H
#define KILN_ABI_REGS_H

#include <stdint.h>

#define KILN_REG_CHIP_ID 0x000u     /* RO: KILN_CHIP_ID_* */
#define KILN_REG_ABI_VERSION 0x004u /* RO: major << 16 | minor */
#define KILN_REG_CTRL 0x008u        /* WO: KILN_CTRL_* */
#define KILN_REG_STATUS 0x00cu      /* RO: KILN_STATUS_* */
#define KILN_REG_ERROR 0x010u       /* RO: kiln_status of the last fault */
#define KILN_REG_IRQ_STATUS 0x014u  /* RW1C: bit 0 done, bit 1 fault */
#define KILN_REG_IRQ_MASK 0x018u
#define KILN_REG_DDR_BASE_LO 0x020u
#define KILN_REG_DDR_BASE_HI 0x024u
#define KILN_REG_DDR_SIZE_LO 0x028u
#define KILN_REG_DDR_SIZE_HI 0x02cu
#define KILN_REG_TIU_QUEUE_LO 0x030u /* device address of the TIU records */
#define KILN_REG_TIU_QUEUE_HI 0x034u
#define KILN_REG_TIU_COUNT 0x038u
#define KILN_REG_GDMA_QUEUE_LO 0x040u
#define KILN_REG_GDMA_QUEUE_HI 0x044u
#define KILN_REG_GDMA_COUNT 0x048u
#define KILN_REG_DOORBELL 0x050u
#define KILN_REG_TIU_DONE_ID 0x060u
#define KILN_REG_GDMA_DONE_ID 0x064u
#define KILN_REG_CYCLES_LO 0x070u /* modelled cycles of the last submission */
#define KILN_REG_CYCLES_HI 0x074u
#define KILN_REG_SPACE_BYTES 0x100u

#define KILN_CTRL_SOFT_RESET 0x1u

#define KILN_STATUS_IDLE 0u
#define KILN_STATUS_BUSY 1u
#define KILN_STATUS_DONE 2u
#define KILN_STATUS_FAULT 3u

#endif
