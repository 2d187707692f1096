/* kiln firmware ABI: BM1684X command streams (C99, freestanding).
 *
 * A layer group's work for the chip is two streams, one per engine, of the
 * commands of bm1684x.h packed back to back: the TIU stream ends with SYSID
 * (eu KILN_BM_SYS_END), the GDMA stream with the sys end, and each is
 * zero-padded to KILN_BM_STREAM_ALIGN bytes. Ids count from 1 per engine;
 * a command waits until the other engine has completed the id in its
 * cmd_id_dep (0: no wait). GDMA DDR addresses in a bmodel are compiled
 * addresses, KILN_BM_DDR_BASE + the offset from the net's DDR base; a
 * runtime relocates them to where it placed the net (as libbmrt does).
 *
 * This header walks streams in an order that honours the sync ids (what a
 * device model or an in-order executor runs), checks a stream before any
 * command of it runs (what a runtime verifier needs: classes kiln emits,
 * ids, waits, and GDMA accesses inside the net's DDR window and LMEM), and
 * relocates a GDMA command. */
#ifndef KILN_ABI_BM1684X_STREAM_H
#define KILN_ABI_BM1684X_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/abi/bm1684x.h"
#include "kiln/abi/chip.h"

#define KILN_BM_ENGINE_TIU 0u
#define KILN_BM_ENGINE_GDMA 1u

/* ---- Commands in a stream ------------------------------------------------- */

/* The class of the command at stream[at] of a `size`-byte stream of
 * `engine`, and its size in *bytes; NONE (and *bytes 0) when fewer than its
 * bytes remain or it is not a form kiln runs (long TIU, LAR, SEG, GDMA forms
 * other than tensor copies and the end). */
static inline kiln_bm_class kiln_bm_stream_cmd(const uint8_t *stream, uint64_t size, uint64_t at,
                                               uint32_t engine, uint32_t *bytes) {
  kiln_bm_class c;
  *bytes = 0u;
  if (at > size || size - at < 16u) return KILN_BM_CLASS_NONE;
  c = engine == KILN_BM_ENGINE_TIU ? kiln_bm_tiu_class(stream + at) : kiln_bm_gdma_class(stream + at);
  if (c == KILN_BM_CLASS_NONE || c == KILN_BM_CLASS_TIU_LONG ||
      (engine == KILN_BM_ENGINE_GDMA && c != KILN_BM_CLASS_DMA_TENSOR && c != KILN_BM_CLASS_DMA_SYS) ||
      size - at < kiln_bm_class_bytes(c))
    return KILN_BM_CLASS_NONE;
  *bytes = kiln_bm_class_bytes(c);
  return c;
}

static inline int kiln_bm_is_end(const uint8_t *cmd, kiln_bm_class c) {
  return c == KILN_BM_CLASS_DMA_SYS ||
         (c == KILN_BM_CLASS_SYSID && kiln_bm_get(cmd, 45u, 5u) == KILN_BM_SYS_END);
}

/* A command's id and the other engine's id it waits for. */
static inline uint32_t kiln_bm_cmd_id(const uint8_t *cmd, uint32_t engine) {
  return (uint32_t)(engine == KILN_BM_ENGINE_TIU ? kiln_bm_get(cmd, 1u, 20u) : kiln_bm_get(cmd, 9u, 20u));
}
static inline uint32_t kiln_bm_cmd_dep(const uint8_t *cmd, uint32_t engine) {
  return (uint32_t)(engine == KILN_BM_ENGINE_TIU ? kiln_bm_get(cmd, 21u, 20u) : kiln_bm_get(cmd, 64u, 20u));
}

/* ---- Walking two streams in sync order ------------------------------------ */

typedef struct kiln_bm_walk {
  const uint8_t *stream[2]; /* by engine */
  uint64_t size[2];
  uint64_t at[2];    /* next command's offset */
  uint32_t done[2];  /* id of the last command taken */
  uint32_t ended[2]; /* the end command was reached */
} kiln_bm_walk;

static inline void kiln_bm_walk_init(kiln_bm_walk *w, const uint8_t *tiu, uint64_t tiu_size,
                                     const uint8_t *gdma, uint64_t gdma_size) {
  uint32_t e;
  w->stream[0] = tiu, w->size[0] = tiu_size, w->stream[1] = gdma, w->size[1] = gdma_size;
  for (e = 0; e < 2u; ++e) w->at[e] = 0u, w->done[e] = 0u, w->ended[e] = 0u;
}

#define KILN_BM_WALK_END 2
#define KILN_BM_WALK_STUCK (-1) /* a wait that cannot be met */
#define KILN_BM_WALK_BAD (-2)   /* not a whole command of a form kiln runs */

/* Takes the next command in an order the sync ids allow (a TIU command
 * whenever it may start, else a GDMA command) and returns its engine, with
 * *cmd, *bytes and *cls set; the caller runs it before the next call, which
 * counts it as completed. The end commands are not returned: each stream
 * ends there. Returns KILN_BM_WALK_END when both have ended. */
static inline int kiln_bm_walk_next(kiln_bm_walk *w, const uint8_t **cmd, uint32_t *bytes,
                                    kiln_bm_class *cls) {
  uint32_t e;
  for (e = 0; e < 2u; ++e) {
    const uint8_t *c;
    kiln_bm_class k;
    if (w->ended[e]) continue;
    k = kiln_bm_stream_cmd(w->stream[e], w->size[e], w->at[e], e, bytes);
    if (k == KILN_BM_CLASS_NONE) return KILN_BM_WALK_BAD;
    c = w->stream[e] + w->at[e];
    if (kiln_bm_is_end(c, k)) {
      w->ended[e] = 1u;
      return kiln_bm_walk_next(w, cmd, bytes, cls);
    }
    if (kiln_bm_cmd_dep(c, e) > w->done[1u - e]) continue;
    w->at[e] += *bytes;
    w->done[e] = kiln_bm_cmd_id(c, e);
    *cmd = c;
    *cls = k;
    return (int)e;
  }
  return w->ended[0] && w->ended[1] ? KILN_BM_WALK_END : KILN_BM_WALK_STUCK;
}

/* ---- GDMA accesses ----------------------------------------------------------- */

/* Forward declaration: kiln_bm_run_streams checks each copy before it runs. */
static inline const char *kiln_bm_dma_tensor_check(const uint8_t *cmd, uint64_t ddr_lo,
                                                   uint64_t ddr_write_lo, uint64_t ddr_hi);

/* Bytes from a side's first element to one past its last, or 0 on overflow. */
static inline uint64_t kiln_bm_dma_extent(uint64_t n, uint64_t c, uint64_t h, uint64_t w,
                                          const uint64_t stride[4], uint64_t elem_bytes) {
  uint64_t last = 0u, i;
  const uint64_t dims[4] = {n, c, h, w};
  for (i = 0; i < 4u; ++i) {
    uint64_t step;
    if (dims[i] == 0u) return 0u;
    if (__builtin_mul_overflow(dims[i] - 1u, stride[i], &step) || __builtin_add_overflow(last, step, &last))
      return 0u;
  }
  if (__builtin_add_overflow(last, 1u, &last) || __builtin_mul_overflow(last, elem_bytes, &last)) return 0u;
  return last;
}

/* Whether one side of a tensor copy stays inside LMEM (each lane) or inside
 * DDR [ddr_lo, ddr_hi) (compiled or relocated addresses). */
static inline int kiln_bm_dma_side_ok(uint64_t addr, uint64_t n, uint64_t c, uint64_t h, uint64_t w,
                                      const uint64_t stride[4], uint64_t elem_bytes, uint64_t ddr_lo,
                                      uint64_t ddr_hi) {
  if (addr >= KILN_BM_LMEM_BASE && addr < KILN_BM_LMEM_END) {
    uint64_t lane = (addr - KILN_BM_LMEM_BASE) >> KILN_BM_LANE_SHIFT;
    uint64_t offset = (addr - KILN_BM_LMEM_BASE) & (KILN_LMEM_BYTES_PER_LANE - 1u);
    uint64_t groups = (lane + c + KILN_NPU_NUM - 1u) / KILN_NPU_NUM;
    uint64_t extent = kiln_bm_dma_extent(n, groups, h, w, stride, elem_bytes);
    return extent != 0u && extent <= KILN_LMEM_BYTES_PER_LANE - offset;
  }
  if (addr >= ddr_lo && addr < ddr_hi) {
    uint64_t extent = kiln_bm_dma_extent(n, c, h, w, stride, elem_bytes);
    return extent != 0u && extent <= ddr_hi - addr;
  }
  return 0;
}

static inline uint64_t kiln_bm_prec_bytes(uint64_t prec) {
  switch (prec) {
  case KILN_BM_PREC_INT8: return 1u;
  case KILN_BM_PREC_FP16: case KILN_BM_PREC_BF16: case KILN_BM_PREC_INT16: return 2u;
  case KILN_BM_PREC_FP32: case KILN_BM_PREC_INT32: return 4u;
  default: return 0u;
  }
}

/* A tensor copy's fields by name, as bit | width << 16, from its table:
 * what a runtime reads without decoding every field (code size). */
#define KILN_BM_DT_POS_(name, bit, width) KILN_BM_DT_##name = (bit) | (width) << 16,
enum kiln_bm_dma_tensor_pos { KILN_BM_DMA_TENSOR_FIELDS(KILN_BM_DT_POS_) KILN_BM_DT_END_ };
#undef KILN_BM_DT_POS_

static inline uint64_t kiln_bm_dt_get(const uint8_t *cmd, uint32_t pos) {
  return kiln_bm_get(cmd, pos & 0xFFFFu, pos >> 16);
}

/* NULL if the tensor copy at cmd reads only LMEM and DDR [ddr_lo, ddr_hi)
 * and writes only LMEM and DDR [ddr_write_lo, ddr_hi); else why not. */
static inline const char *kiln_bm_dma_tensor_check(const uint8_t *cmd, uint64_t ddr_lo,
                                                   uint64_t ddr_write_lo, uint64_t ddr_hi) {
  /* src n c h w, dst n c h w sizes, then src and dst strides. */
  static const uint32_t pos[16] = {
      KILN_BM_DT_src_nsize,   KILN_BM_DT_src_csize,   KILN_BM_DT_src_hsize,   KILN_BM_DT_src_wsize,
      KILN_BM_DT_dst_nsize,   KILN_BM_DT_dst_csize,   KILN_BM_DT_dst_hsize,   KILN_BM_DT_dst_wsize,
      KILN_BM_DT_src_nstride, KILN_BM_DT_src_cstride, KILN_BM_DT_src_hstride, KILN_BM_DT_src_wstride,
      KILN_BM_DT_dst_nstride, KILN_BM_DT_dst_cstride, KILN_BM_DT_dst_hstride, KILN_BM_DT_dst_wstride};
  uint64_t f[16], side, bytes = kiln_bm_prec_bytes(kiln_bm_dt_get(cmd, KILN_BM_DT_src_data_format));
  uint32_t i;
  for (i = 0; i < 16u; ++i) f[i] = kiln_bm_dt_get(cmd, pos[i]);
  if (!bytes || !kiln_bm_dt_get(cmd, KILN_BM_DT_stride_enable) ||
      kiln_bm_dt_get(cmd, KILN_BM_DT_decompress_enable) || kiln_bm_dt_get(cmd, KILN_BM_DT_cmd_special_function) ||
      !kiln_bm_dt_get(cmd, KILN_BM_DT_nchw_copy))
    return "copy form kiln does not run"; /* kiln's copies keep their shape */
  for (i = 0; i < 4u; ++i) f[4 + i] = f[i]; /* the destination has the source's shape */
  for (side = 0; side < 2u; ++side) {
    const uint32_t l32 = side ? KILN_BM_DT_dst_start_addr_l32 : KILN_BM_DT_src_start_addr_l32;
    const uint32_t h8 = side ? KILN_BM_DT_dst_start_addr_h8 : KILN_BM_DT_src_start_addr_h8;
    const uint64_t *d = f + 4u * side, *st = f + 8u + 4u * side;
    if (!side && kiln_bm_dt_get(cmd, KILN_BM_DT_fill_constant_en)) continue; /* a fill reads nothing */
    if (!kiln_bm_dma_side_ok(kiln_bm_gdma_addr(kiln_bm_dt_get(cmd, l32), kiln_bm_dt_get(cmd, h8)), d[0],
                             d[1], d[2], d[3], st, bytes, side ? ddr_write_lo : ddr_lo, ddr_hi))
      return side ? "writes outside LMEM and writable net DDR" : "reads outside LMEM and net DDR";
  }
  return NULL;
}

/* Adds delta to the DDR addresses (>= KILN_BM_DDR_BASE) of the tensor copy
 * at cmd in place; 0 (and cmd unchanged) if one would not fit 40 bits. */
static inline int kiln_bm_dma_tensor_relocate(uint8_t *cmd, uint64_t delta) {
  static const uint32_t l32[2] = {KILN_BM_DT_src_start_addr_l32, KILN_BM_DT_dst_start_addr_l32};
  static const uint32_t h8[2] = {KILN_BM_DT_src_start_addr_h8, KILN_BM_DT_dst_start_addr_h8};
  uint64_t a[2];
  uint32_t i;
  for (i = 0; i < 2u; ++i) {
    a[i] = kiln_bm_gdma_addr(kiln_bm_dt_get(cmd, l32[i]), kiln_bm_dt_get(cmd, h8[i]));
    /* A fill reads nothing; LMEM and static memory stay where they are. */
    if ((i == 0u && kiln_bm_dt_get(cmd, KILN_BM_DT_fill_constant_en)) || a[i] < KILN_BM_DDR_BASE) continue;
    a[i] += delta;
    if (a[i] >> 40) return 0;
  }
  for (i = 0; i < 2u; ++i) {
    kiln_bm_set(cmd, l32[i] & 0xFFFFu, l32[i] >> 16, a[i] & 0xFFFFFFFFu);
    kiln_bm_set(cmd, h8[i] & 0xFFFFu, h8[i] >> 16, a[i] >> 32);
  }
  return 1;
}

/* ---- Running a group's streams ------------------------------------------------- */

/* Runs one command: NULL, or why it faulted. */
typedef const char *(*kiln_bm_exec_fn)(void *user, uint32_t engine, const uint8_t *cmd, uint32_t bytes);

/* Runs both streams in an order their sync ids allow, each copy first held
 * to LMEM and DDR [ddr_lo, ddr_hi) (whatever a verifier saw: what a device
 * model does before it lets a command touch memory). NULL when both streams
 * ended; else why not, with *engine and *index naming the command. */
static inline const char *kiln_bm_run_streams(const uint8_t *tiu, uint64_t tiu_size, const uint8_t *gdma,
                                              uint64_t gdma_size, uint64_t ddr_lo, uint64_t ddr_hi,
                                              kiln_bm_exec_fn exec, void *user, uint32_t *engine,
                                              uint32_t *index) {
  kiln_bm_walk w;
  const uint8_t *cmd;
  uint32_t bytes, count[2] = {0u, 0u};
  kiln_bm_class cls;
  int e;
  kiln_bm_walk_init(&w, tiu, tiu_size, gdma, gdma_size);
  while ((e = kiln_bm_walk_next(&w, &cmd, &bytes, &cls)) == (int)KILN_BM_ENGINE_TIU ||
         e == (int)KILN_BM_ENGINE_GDMA) {
    const char *why = e == (int)KILN_BM_ENGINE_GDMA ? kiln_bm_dma_tensor_check(cmd, ddr_lo, ddr_lo, ddr_hi) : NULL;
    if (!why) why = exec(user, (uint32_t)e, cmd, bytes);
    *engine = (uint32_t)e, *index = count[e];
    if (why) return why;
    ++count[e];
  }
  *engine = w.ended[0] ? KILN_BM_ENGINE_GDMA : KILN_BM_ENGINE_TIU;
  *index = count[*engine];
  return e == KILN_BM_WALK_END ? NULL
         : e == KILN_BM_WALK_BAD ? "a malformed stream" : "sync ids can never be satisfied";
}

/* ---- Checking a group's streams ------------------------------------------------ */

typedef struct kiln_bm_stream_fault {
  uint32_t engine; /* KILN_BM_ENGINE_* */
  uint32_t index;  /* command index in its stream */
  const char *why;
} kiln_bm_stream_fault;

/* NULL if one engine's stream is well formed: whole commands of forms kiln
 * runs, ids 1, 2, ... in order, waits no later than the other engine's
 * `other_count` commands, exactly `count` commands with the end last, then
 * only zero padding up to the next KILN_BM_STREAM_ALIGN boundary; for GDMA,
 * every copy inside LMEM and the net's DDR [ddr_lo, ddr_hi), writes at or
 * above ddr_write_lo. Else the fault, with *index the command's. */
static inline const char *kiln_bm_check_stream(const uint8_t *s, uint64_t size, uint32_t engine,
                                               uint32_t count, uint32_t other_count, uint64_t ddr_lo,
                                               uint64_t ddr_write_lo, uint64_t ddr_hi, uint32_t *index) {
  uint64_t at = 0u;
  uint32_t bytes;
  *index = 0u;
  if (size % KILN_BM_STREAM_ALIGN != 0u || count == 0u) return "stream empty or not padded";
  for (*index = 0u; *index < count; ++*index) {
    kiln_bm_class c = kiln_bm_stream_cmd(s, size, at, engine, &bytes);
    const uint8_t *cmd = s + at;
    if (c == KILN_BM_CLASS_NONE) return "command form kiln does not run";
    if (kiln_bm_cmd_id(cmd, engine) != *index + 1u) return "id is not its stream position";
    if (kiln_bm_cmd_dep(cmd, engine) > other_count) return "waits past the other stream";
    if (kiln_bm_is_end(cmd, c) != (*index + 1u == count)) return "end command not last";
    if (c == KILN_BM_CLASS_DMA_TENSOR) {
      const char *why = kiln_bm_dma_tensor_check(cmd, ddr_lo, ddr_write_lo, ddr_hi);
      if (why) return why;
    }
    at += bytes;
  }
  for (; at < size; ++at)
    if (s[at] || size - at > KILN_BM_STREAM_ALIGN) return "more than zero padding after the end";
  return NULL;
}

/* Both streams of a group: each well formed, and their waits never
 * deadlock. */
static inline int kiln_bm_check_streams(const uint8_t *tiu, uint64_t tiu_size, uint32_t tiu_count,
                                        const uint8_t *gdma, uint64_t gdma_size, uint32_t gdma_count,
                                        uint64_t ddr_lo, uint64_t ddr_write_lo, uint64_t ddr_hi,
                                        kiln_bm_stream_fault *fault) {
  kiln_bm_walk w;
  const uint8_t *cmd;
  uint32_t bytes;
  kiln_bm_class cls;
  int e;
  fault->engine = KILN_BM_ENGINE_TIU;
  fault->why = kiln_bm_check_stream(tiu, tiu_size, KILN_BM_ENGINE_TIU, tiu_count, gdma_count, ddr_lo,
                                    ddr_write_lo, ddr_hi, &fault->index);
  if (fault->why) return 0;
  fault->engine = KILN_BM_ENGINE_GDMA;
  fault->why = kiln_bm_check_stream(gdma, gdma_size, KILN_BM_ENGINE_GDMA, gdma_count, tiu_count, ddr_lo,
                                    ddr_write_lo, ddr_hi, &fault->index);
  if (fault->why) return 0;
  kiln_bm_walk_init(&w, tiu, tiu_size, gdma, gdma_size);
  while ((e = kiln_bm_walk_next(&w, &cmd, &bytes, &cls)) == (int)KILN_BM_ENGINE_TIU ||
         e == (int)KILN_BM_ENGINE_GDMA) {
  }
  if (e == KILN_BM_WALK_END) return 1;
  fault->engine = w.ended[0] ? KILN_BM_ENGINE_GDMA : KILN_BM_ENGINE_TIU;
  fault->index = w.done[fault->engine];
  fault->why = "waits in a cycle: deadlock";
  return 0;
}

#endif
