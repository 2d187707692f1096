/* kiln firmware ABI: BM1684X chip facts. The single source for the compiler's
 * planner and cost model, the runtime verifier and the cmodel. */
#ifndef KILN_ABI_CHIP_H
#define KILN_ABI_CHIP_H

#include <stdint.h>

#define KILN_CHIP_ID_BM1684X 0x1686u
#define KILN_CHIP_NAME "bm1684x"

/* Local memory: channel c of a tensor lives on lane c % KILN_NPU_NUM. */
#define KILN_NPU_NUM 64u
#define KILN_LMEM_BYTES_PER_LANE (256u * 1024u)
#define KILN_LMEM_BANKS 16u
#define KILN_LMEM_BANK_BYTES (KILN_LMEM_BYTES_PER_LANE / KILN_LMEM_BANKS)

/* Execution unit width per lane; an h*w plane in LMEM starts on an EU
 * boundary, so plane strides are aligned up to this many bytes. */
#define KILN_EU_BYTES 64u

/* DDR tensors are aligned to this many bytes. */
#define KILN_DDR_ALIGN 4096u

/* Clocks (MHz). */
#define KILN_TIU_MHZ 1000u
#define KILN_GDMA_MHZ 1000u

/* Conv/matmul MACs per TIU cycle (peak). */
#define KILN_MACS_PER_CYCLE_INT8 16384u
#define KILN_MACS_PER_CYCLE_F16 8192u
#define KILN_MACS_PER_CYCLE_F32 1024u

/* Conv cost model tiling (DESIGN.md section 4): pixels and input channels
 * consumed per cycle per lane. */
#define KILN_CONV_PIX_F32 16u
#define KILN_CONV_ICP_F32 1u
#define KILN_CONV_PIX_F16 4u
#define KILN_CONV_ICP_F16 32u
#define KILN_CONV_PIX_INT8 4u
#define KILN_CONV_ICP_INT8 64u

/* GDMA bandwidth in milli-bytes per GDMA cycle (GiB/s at 1 GHz). */
#define KILN_GDMA_MBPC_DDR_TO_LMEM 62277u /* 58 GiB/s */
#define KILN_GDMA_MBPC_LMEM_TO_DDR 47245u /* 44 GiB/s */
#define KILN_GDMA_MBPC_DDR_TO_DDR 30065u  /* 28 GiB/s */
#define KILN_GDMA_MBPC_LMEM_TO_LMEM 62277u
/* Each contiguous run of a transfer is rounded up to this many bytes. */
#define KILN_GDMA_BURST_BYTES 64u

/* Fixed per-command overheads in cycles. */
#define KILN_TIU_CMD_OVERHEAD 32u
#define KILN_GDMA_CMD_LATENCY 128u

/* Element types, shared by commands and the bmodel. */
typedef enum kiln_dtype {
  KILN_DTYPE_F32 = 0,
  KILN_DTYPE_F16 = 1,
  KILN_DTYPE_BF16 = 2,
  KILN_DTYPE_INT8 = 3,
  KILN_DTYPE_UINT8 = 4,
  KILN_DTYPE_INT16 = 5,
  KILN_DTYPE_INT32 = 6,
  KILN_DTYPE_COUNT = 7
} kiln_dtype;

static inline uint32_t kiln_dtype_bytes(uint32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32: case KILN_DTYPE_INT32: return 4u;
  case KILN_DTYPE_F16: case KILN_DTYPE_BF16: case KILN_DTYPE_INT16: return 2u;
  case KILN_DTYPE_INT8: case KILN_DTYPE_UINT8: return 1u;
  default: return 0u;
  }
}

/* Elements the EU processes per lane per cycle for a dtype. */
static inline uint32_t kiln_eu_elems(uint32_t dtype) {
  uint32_t b = kiln_dtype_bytes(dtype);
  return b ? KILN_EU_BYTES / b : 0u;
}

/* LMEM layout of an [n, c, h, w] tensor starting on lane 0 at per-lane byte
 * offset addr: element (n, c, h, w) is on lane c % 64 at
 *   addr + (n * ceil(C/64) + c / 64) * plane_stride + (h * W + w) * dsize,
 * with plane_stride = align_up(H * W * dsize, KILN_EU_BYTES). */
static inline uint64_t kiln_lmem_plane_stride(uint32_t h, uint32_t w,
                                              uint32_t dsize) {
  uint64_t bytes = (uint64_t)h * w * dsize;
  return (bytes + KILN_EU_BYTES - 1u) / KILN_EU_BYTES * KILN_EU_BYTES;
}
static inline uint64_t kiln_lmem_lane_bytes(uint32_t n, uint32_t c, uint32_t h,
                                            uint32_t w, uint32_t dsize) {
  uint64_t groups = ((uint64_t)c + KILN_NPU_NUM - 1u) / KILN_NPU_NUM;
  return (uint64_t)n * groups * kiln_lmem_plane_stride(h, w, dsize);
}

#endif
