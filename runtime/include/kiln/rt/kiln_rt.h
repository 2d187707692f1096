/* kiln runtime: C API for firmware.
 *
 * Freestanding: no heap, no exceptions, no global state. The caller provides
 * every buffer (runtime and net storage, the bmodel bytes, which must stay
 * alive while a net is loaded) and a HAL that reaches the device. */
#ifndef KILN_RT_H
#define KILN_RT_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/abi/chip.h"
#include "kiln/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One submission: a layer group's two command queues, already in device
 * memory, and the DDR window (net base and size) their addresses are relative to. */
typedef struct kiln_submit_desc {
  uint64_t ddr_base;
  uint64_t ddr_size;
  uint64_t tiu_queue_addr;
  uint64_t gdma_queue_addr;
  uint32_t tiu_count;
  uint32_t gdma_count;
} kiln_submit_desc;

/* The hardware abstraction the runtime drives. Device addresses are in
 * [mem_base, mem_base + mem_size), the DDR the runtime may use. */
typedef struct kiln_hal {
  void *ctx;
  uint64_t mem_base;
  uint64_t mem_size;
  kiln_status (*write_mem)(void *ctx, uint64_t addr, const void *src, uint64_t size);
  kiln_status (*read_mem)(void *ctx, uint64_t addr, void *dst, uint64_t size);
  kiln_status (*submit)(void *ctx, const kiln_submit_desc *desc);
  /* Blocks until the submission completes, faults, or timeout_us passes. */
  kiln_status (*wait)(void *ctx, uint32_t timeout_us);
  kiln_status (*reset)(void *ctx);
} kiln_hal;

#define KILN_MAX_DIMS 8

typedef struct kiln_tensor_info {
  const char *name; /* NUL-terminated, points into the bmodel */
  uint32_t dtype;   /* kiln_dtype */
  uint32_t ndim;
  int64_t shape[KILN_MAX_DIMS];
  uint64_t bytes;
  uint64_t ddr_offset; /* from the net's DDR base */
  float scale;
  int32_t zero_point;
} kiln_tensor_info;

typedef struct kiln_run_stats {
  uint32_t groups_run;
  uint64_t tiu_commands;
  uint64_t gdma_commands;
  uint64_t resident_loads_avoided; /* filled by the residency manager */
} kiln_run_stats;

typedef struct kiln_runtime kiln_runtime;
typedef struct kiln_net kiln_net;

/* Storage the caller provides, aligned to 16 bytes. */
size_t kiln_runtime_storage_size(void);
size_t kiln_net_storage_size(void);

kiln_status kiln_runtime_init(void *storage, size_t storage_size,
                              const kiln_hal *hal, kiln_runtime **out_rt);

/* Verifies the bmodel completely, reserves device memory and uploads its
 * command buffers and coefficients. net_index selects one of the file's nets. */
kiln_status kiln_net_load(kiln_runtime *rt, const void *bmodel, size_t size,
                          uint32_t net_index, void *storage, size_t storage_size,
                          kiln_net **out_net);
/* Releases the net's device memory (the most recently loaded net first). */
kiln_status kiln_net_unload(kiln_net *net);

uint32_t kiln_net_input_count(const kiln_net *net);
uint32_t kiln_net_output_count(const kiln_net *net);
/* Every DDR tensor the bmodel describes (inputs and outputs included). */
uint32_t kiln_net_tensor_count(const kiln_net *net);
kiln_status kiln_net_input_info(const kiln_net *net, uint32_t index, kiln_tensor_info *out_info);
kiln_status kiln_net_output_info(const kiln_net *net, uint32_t index, kiln_tensor_info *out_info);
kiln_status kiln_net_tensor_info(const kiln_net *net, uint32_t index, kiln_tensor_info *out_info);

kiln_status kiln_net_set_input(kiln_net *net, uint32_t index, const void *data, size_t bytes);
kiln_status kiln_net_run(kiln_net *net, uint32_t timeout_us, kiln_run_stats *out_stats);
kiln_status kiln_net_get_output(const kiln_net *net, uint32_t index, void *dst, size_t bytes);
/* Reads any described DDR tensor after a run (per-layer comparison). */
kiln_status kiln_net_read_tensor(const kiln_net *net, uint32_t index, void *dst, size_t bytes);

const char *kiln_status_str(kiln_status status);

#ifdef __cplusplus
}
#endif

#endif
