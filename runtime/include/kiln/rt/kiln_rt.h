/* kiln runtime: C API for firmware.
 *
 * Freestanding: no heap, no exceptions, no global state. The caller provides
 * every buffer (runtime and net storage, the bmodel bytes, which must stay
 * alive while a net is loaded) and a HAL that reaches the device. Failures
 * return a kiln_status; the _ex calls also say which object failed and why
 * (kiln_error_detail below). */
#ifndef KILN_RT_H
#define KILN_RT_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/abi/chip.h"
#include "kiln/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The command set a device runs (ABI 1.7). KILN: kiln's records
 * (commands.h). BM1684X: the chip's own TIU and GDMA streams
 * (bm1684x_stream.h), which a bmodel compiled with `isa: bm1684x` carries
 * besides the records. */
typedef enum kiln_isa { KILN_ISA_KILN = 0, KILN_ISA_BM1684X = 1 } kiln_isa;

/* One submission: a layer group's two command queues, already in device
 * memory, and the DDR window (net base and size) their addresses are relative to.
 * With isa BM1684X (ABI 1.7) the queues are the group's two streams, the
 * counts include their end commands, tiu_bytes/gdma_bytes are the padded
 * stream sizes, and the GDMA addresses are already relocated into the window. */
typedef struct kiln_submit_desc {
  uint64_t ddr_base;
  uint64_t ddr_size;
  uint64_t tiu_queue_addr;
  uint64_t gdma_queue_addr;
  uint32_t tiu_count;
  uint32_t gdma_count;
  uint32_t isa; /* kiln_isa: the HAL's */
  uint32_t reserved;
  uint64_t tiu_bytes;
  uint64_t gdma_bytes;
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
  /* The command set the device runs (kiln_isa, ABI 1.7; 0: kiln's records).
   * A BM1684X HAL loads only bmodels that carry the chip's streams. */
  uint32_t isa;
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
  /* Lifetime (bmodel format 1.1, else -1 and the group count): the value is
   * there from the end of group first_group (-1: before the run) until group
   * last_group has run (the group count: after the run too). */
  int32_t first_group;
  int32_t last_group;
} kiln_tensor_info;

/* Commands are those submitted: a group whose held coefficients are still
 * in LMEM from an earlier submission runs without their loads. */
typedef struct kiln_run_stats {
  uint32_t groups_run;
  uint64_t tiu_commands;
  uint64_t gdma_commands;
  uint64_t resident_loads_avoided; /* GDMA loads left out: the data was resident */
  uint64_t resident_bytes_saved;   /* DDR bytes those loads would have read */
} kiln_run_stats;

/* ---- why a call failed ------------------------------------------------------
 *
 * A kiln_status says what kind of thing was wrong; a kiln_error_detail says
 * which object of the bmodel (or of the call) it was and why, without a heap:
 * the record holds indices and a pointer to a short static string.
 *
 * The entry points that can fail on what a bmodel holds or on the device
 * have an _ex form taking an optional `kiln_error_detail *out_detail` (NULL:
 * not wanted): kiln_net_load_ex, kiln_bmodel_query_memory_ex and
 * kiln_net_run_ex. On failure *out_detail is filled, with status equal to the
 * returned status; on success it is left alone. The detail goes to the caller
 * of the call that failed rather than into the runtime object so that it is
 * there for calls without a runtime (kiln_bmodel_query_memory_ex), for a
 * runtime handle that was itself the bad argument, and for nets loaded and
 * run from different tasks, with no state to reset.
 *
 * Every failure of those calls is also passed to kiln_pal_error_hook (once,
 * as the call returns, whether or not the caller asked for a detail). The
 * core defines it weak and empty; a board defines its own to log failures
 * from code that only uses the plain forms. The hook must not call back into
 * the runtime. */

/* KILN_NO_INDEX: the field does not apply to this object kind. */
#define KILN_NO_INDEX 0xffffffffu

/* What the detail's index and sub_index name. */
typedef enum kiln_object_kind {
  KILN_OBJ_NONE = 0,        /* nothing more specific */
  KILN_OBJ_ARGUMENT = 1,    /* an argument of the call itself */
  KILN_OBJ_HEADER = 2,      /* the file header and its layout */
  KILN_OBJ_FLATBUFFER = 3,  /* the FlatBuffer as a whole */
  KILN_OBJ_CHIP = 4,        /* the chip and ABI the file was built for */
  KILN_OBJ_NET = 5,         /* the net itself: its regions and blob ranges */
  KILN_OBJ_INPUT = 6,       /* index: the net's input */
  KILN_OBJ_OUTPUT = 7,      /* index: the net's output */
  KILN_OBJ_TENSOR = 8,      /* index: in the net's list of all DDR tensors */
  KILN_OBJ_DYNAMIC_WEIGHT = 9, /* index: the dynamic weight */
  KILN_OBJ_RESIDENCY = 10,  /* index: the residency record; sub_index: the
                               allocation, record or command it conflicts with */
  KILN_OBJ_BUFFER = 11,     /* index: the DDR buffer of the activation plan;
                               sub_index: a buffer live at once on the same bytes */
  KILN_OBJ_GROUP = 12,      /* index: the layer group */
  KILN_OBJ_TIU_CMD = 13,    /* index: the group; sub_index: the TIU command (0-based;
                             * of its BM1684X stream when the reason is about one) */
  KILN_OBJ_GDMA_CMD = 14,   /* index: the group; sub_index: the GDMA command (likewise) */
  KILN_OBJ_TIMESTEP = 15,   /* index: the group; sub_index: the timestep */
  KILN_OBJ_LMEM_ALLOC = 16, /* index: the group; sub_index: the LMEM allocation */
  KILN_OBJ_DEVICE_MEMORY = 17, /* the HAL's DDR window */
  KILN_OBJ_HAL = 18         /* a HAL call failed; index: the group, if any */
} kiln_object_kind;

typedef struct kiln_error_detail {
  kiln_status status;   /* what the call returned */
  uint32_t object_kind; /* kiln_object_kind */
  uint32_t net;         /* the net of the file, or KILN_NO_INDEX */
  uint32_t index;       /* see kiln_object_kind, or KILN_NO_INDEX */
  uint32_t sub_index;   /* see kiln_object_kind, or KILN_NO_INDEX */
  const char *reason;   /* static, never NULL in a filled detail */
  uint32_t stage;       /* the stage of the net (0 when it has one) */
} kiln_error_detail;

/* A short name of an object kind ("GDMA command", "input", ...). */
const char *kiln_object_kind_str(uint32_t kind);

/* Called with every failure of the _ex calls and their plain forms. Weak in
 * the core (does nothing); define it to log. */
void kiln_pal_error_hook(const kiln_error_detail *detail);

typedef struct kiln_runtime kiln_runtime;
typedef struct kiln_net kiln_net;

/* Storage the caller provides, aligned to 16 bytes. */
size_t kiln_runtime_storage_size(void);
size_t kiln_net_storage_size(void);

kiln_status kiln_runtime_init(void *storage, size_t storage_size,
                              const kiln_hal *hal, kiln_runtime **out_rt);

/* The runtime remembers which coefficients each group left in LMEM, so the
 * next run of that group can skip loading them. Call this after anything
 * other than the runtime used the device, to make every group load again. */
kiln_status kiln_runtime_flush_residency(kiln_runtime *rt);

/* Verifies the bmodel completely, reserves device memory and uploads its
 * command buffers and coefficients. net_index selects one of the file's nets. */
kiln_status kiln_net_load(kiln_runtime *rt, const void *bmodel, size_t size,
                          uint32_t net_index, void *storage, size_t storage_size,
                          kiln_net **out_net);
/* kiln_net_load that says which record of the file was refused and why. */
kiln_status kiln_net_load_ex(kiln_runtime *rt, const void *bmodel, size_t size,
                             uint32_t net_index, void *storage, size_t storage_size,
                             kiln_net **out_net, kiln_error_detail *out_detail);
/* Releases the net's device memory (the most recently loaded net first). */
kiln_status kiln_net_unload(kiln_net *net);

uint32_t kiln_net_input_count(const kiln_net *net);
uint32_t kiln_net_output_count(const kiln_net *net);
/* Every DDR tensor the bmodel describes (inputs and outputs included). */
uint32_t kiln_net_tensor_count(const kiln_net *net);
kiln_status kiln_net_input_info(const kiln_net *net, uint32_t index, kiln_tensor_info *out_info);
kiln_status kiln_net_output_info(const kiln_net *net, uint32_t index, kiln_tensor_info *out_info);
kiln_status kiln_net_tensor_info(const kiln_net *net, uint32_t index, kiln_tensor_info *out_info);

/* Stages: a net compiled for several input shapes has one stage per shape
 * set, over one copy of its coefficients (bmodel format 1.6). Stage 0 is
 * selected at load; the tensor info, inputs, outputs and runs below are
 * those of the selected stage. Selecting another stage keeps the loaded
 * queues and coefficients; what LMEM held for the last stage is not reused. */
uint32_t kiln_net_stage_count(const kiln_net *net);
uint32_t kiln_net_stage(const kiln_net *net);
kiln_status kiln_net_select_stage(kiln_net *net, uint32_t stage);
/* Selects the stage whose inputs have exactly these shapes: shapes[i] holds
 * input i's dims, as many as its rank (may be NULL for a scalar). KILN_ERR_NOT_FOUND if no stage has
 * them (kiln_net_select_stage and the input info list the stages). */
kiln_status kiln_net_select_stage_for(kiln_net *net, const int64_t *const *shapes,
                                      uint32_t input_count);

kiln_status kiln_net_set_input(kiln_net *net, uint32_t index, const void *data, size_t bytes);
kiln_status kiln_net_run(kiln_net *net, uint32_t timeout_us, kiln_run_stats *out_stats);
/* Called after group `group` of a run completes, before the next starts. A
 * net whose bmodel plans its activations (format 1.1) reuses DDR: tensor t
 * holds its value only between the end of group t.first_group and its last
 * reader, so per-layer dumps read each tensor from this hook. */
typedef void (*kiln_group_done_fn)(void *user, uint32_t group);
/* kiln_net_run with on_group (may be NULL) called after every group. */
kiln_status kiln_net_run_observed(kiln_net *net, uint32_t timeout_us, kiln_group_done_fn on_group,
                                  void *user, kiln_run_stats *out_stats);
/* kiln_net_run_observed that says which group failed (out_detail may be NULL). */
kiln_status kiln_net_run_ex(kiln_net *net, uint32_t timeout_us, kiln_group_done_fn on_group,
                            void *user, kiln_run_stats *out_stats,
                            kiln_error_detail *out_detail);
kiln_status kiln_net_get_output(const kiln_net *net, uint32_t index, void *dst, size_t bytes);
/* Reads any described DDR tensor after a run (per-layer comparison). */
kiln_status kiln_net_read_tensor(const kiln_net *net, uint32_t index, void *dst, size_t bytes);

const char *kiln_status_str(kiln_status status);

/* The memory a net of a bmodel needs, for sizing buffers before loading it. */
typedef struct kiln_memory_requirements {
  /* Device DDR taken from the HAL's window: command queues, then the
   * coefficient and neuron regions, each section 4 KiB aligned; the total is
   * rounded up to 4 KiB so that nets stack. With a HAL window starting on a
   * 4 KiB boundary, nets fit if the window holds the sum of their totals. */
  uint64_t device_bytes;
  uint64_t command_bytes; /* queue section, 4 KiB aligned */
  uint64_t coeff_bytes;   /* coefficient region */
  uint64_t neuron_bytes;  /* activations, inputs and outputs */
  /* Host storage: kiln_runtime_storage_size() once, kiln_net_storage_size()
   * per loaded net, both 16-byte aligned; the bmodel bytes stay alive too. */
  size_t runtime_storage_bytes;
  size_t net_storage_bytes;
} kiln_memory_requirements;

/* Verifies the bmodel like kiln_net_load (bmodel 8-byte aligned) and reports
 * what net net_index needs, without touching any device. */
kiln_status kiln_bmodel_query_memory(const void *bmodel, size_t size, uint32_t net_index,
                                     kiln_memory_requirements *out_req);
kiln_status kiln_bmodel_query_memory_ex(const void *bmodel, size_t size, uint32_t net_index,
                                        kiln_memory_requirements *out_req,
                                        kiln_error_detail *out_detail);

#ifdef __cplusplus
}
#endif

#endif
