/* kiln firmware ABI: the cycle model of DESIGN.md section 4 and the two-queue
 * scheduler. One implementation shared by the compiler's cost estimate, the
 * runtime verifier (sync ids) and the cmodel (timing and execution order).
 *
 * Freestanding C99: integer math only, saturating instead of overflowing, so
 * every function is safe on records nobody has checked yet. */
#ifndef KILN_ABI_COST_H
#define KILN_ABI_COST_H

#include <stdint.h>

#include "kiln/abi/chip.h"
#include "kiln/abi/commands.h"
#include "kiln/abi/static_assert.h"
#include "kiln/abi/status.h"

/* ---- saturating helpers (GCC/Clang builtins: no libgcc calls) ------------- */

static inline uint64_t kiln_sat_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t kiln_sat_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t kiln_ceil_div(uint64_t a, uint64_t b) {
  return a / b + (a % b != 0u);
}

/* ---- TIU ------------------------------------------------------------------ */

/* Conv tiling (pixels, input channels per cycle per lane) for an input dtype;
 * types without a conv rate of their own use the f32 one. */
static inline void kiln_conv_tiling(uint32_t dtype, uint32_t *pix, uint32_t *icp) {
  switch (dtype) {
  case KILN_DTYPE_INT8: case KILN_DTYPE_UINT8:
    *pix = KILN_CONV_PIX_INT8; *icp = KILN_CONV_ICP_INT8; break;
  case KILN_DTYPE_F16: case KILN_DTYPE_BF16:
    *pix = KILN_CONV_PIX_F16; *icp = KILN_CONV_ICP_F16; break;
  default:
    *pix = KILN_CONV_PIX_F32; *icp = KILN_CONV_ICP_F32; break;
  }
}

/* n * ceil(c/64) * ceil(h*w / EU elements of dtype): one EU pass over a
 * tensor's shape at a dtype's rate. */
static inline uint64_t kiln_eu_passes_as(const kiln_tiu_operand *t, uint32_t dtype) {
  uint32_t eu = kiln_eu_elems(dtype);
  uint64_t planes = kiln_sat_mul(t->n, kiln_ceil_div(t->c, KILN_NPU_NUM));
  if (eu == 0u) /* unknown dtype: rate of the widest type */
    eu = KILN_EU_BYTES / 4u;
  return kiln_sat_mul(planes, kiln_ceil_div((uint64_t)t->h * t->w, eu));
}

/* One EU pass over a tensor at its own dtype's rate. */
static inline uint64_t kiln_eu_passes(const kiln_tiu_operand *t) {
  return kiln_eu_passes_as(t, t->dtype);
}

/* RESIZE subop fields (commands.h: mode | coord << 4 | nearest << 8). */
static inline uint32_t kiln_resize_mode_of(uint32_t subop) { return subop & 0xfu; }
static inline uint32_t kiln_resize_coord_of(uint32_t subop) { return subop >> 4 & 0xfu; }
static inline uint32_t kiln_resize_nearest_of(uint32_t subop) { return subop >> 8 & 0xfu; }

/* Transcendental ACTIVE kinds (and eltwise POW) cost this many elementwise
 * passes: the EU evaluates them as short polynomial sequences. */
#define KILN_TRANSCENDENTAL_PASSES 4u

static inline int kiln_active_is_transcendental(uint32_t kind) {
  switch (kind) {
  case KILN_ACT_SIGMOID: case KILN_ACT_TANH: case KILN_ACT_EXP: case KILN_ACT_LOG:
  case KILN_ACT_ERF: case KILN_ACT_GELU: case KILN_ACT_SOFTPLUS: case KILN_ACT_ELU:
  case KILN_ACT_SELU: case KILN_ACT_SILU: case KILN_ACT_MISH:
    return 1;
  default:
    return 0;
  }
}

/* n * ceil(oc/64) * ceil(pixels/PIX) * ceil(ic_per_group/ICP) * kh*kw: conv
 * counts output pixels, deconv input pixels (it scatters each one). */
static inline uint64_t kiln_conv_work(const kiln_tiu_cmd *cmd, uint64_t pixels) {
  uint32_t pix, icp;
  uint32_t groups = cmd->groups ? cmd->groups : 1u;
  uint64_t work;
  kiln_conv_tiling(cmd->in0.dtype, &pix, &icp);
  work = kiln_sat_mul(cmd->out.n, kiln_ceil_div(cmd->out.c, KILN_NPU_NUM));
  work = kiln_sat_mul(work, kiln_ceil_div(pixels, pix));
  work = kiln_sat_mul(work, kiln_ceil_div(cmd->in0.c / groups, icp));
  return kiln_sat_mul(work, (uint64_t)cmd->kh * cmd->kw);
}

static inline uint64_t kiln_tiu_cycles(const kiln_tiu_cmd *cmd) {
  const kiln_tiu_operand *out = &cmd->out;
  uint64_t kernel = (uint64_t)cmd->kh * cmd->kw;
  uint64_t work = 0u;
  switch (cmd->op) {
  case KILN_TIU_CONV:
    if (cmd->flags & KILN_TIU_FLAG_DEPTHWISE) /* the pooling datapath, as a pool */
      work = kiln_ceil_div(kiln_sat_mul(kiln_eu_passes(out), kernel), 2u);
    else
      work = kiln_conv_work(cmd, (uint64_t)out->h * out->w);
    break;
  case KILN_TIU_DECONV:
    work = kiln_conv_work(cmd, (uint64_t)cmd->in0.h * cmd->in0.w);
    break;
  case KILN_TIU_POOL: /* twice the elementwise rate per kernel tap */
    work = kiln_ceil_div(kiln_sat_mul(kiln_eu_passes(out), kernel), 2u);
    break;
  case KILN_TIU_ELTWISE:
    work = kiln_eu_passes(out);
    if (cmd->subop == KILN_ELT_POW)
      work = kiln_sat_mul(work, KILN_TRANSCENDENTAL_PASSES);
    break;
  case KILN_TIU_ACTIVE:
    work = kiln_eu_passes(out);
    if (kiln_active_is_transcendental(cmd->subop))
      work = kiln_sat_mul(work, KILN_TRANSCENDENTAL_PASSES);
    break;
  case KILN_TIU_CAST: /* one pass at the rate of the wider side */
    work = kiln_eu_passes_as(out, kiln_dtype_bytes(cmd->in0.dtype) > kiln_dtype_bytes(out->dtype)
                                      ? cmd->in0.dtype
                                      : out->dtype);
    break;
  case KILN_TIU_RESIZE: /* linear blends two taps per direction: two passes */
    work = kiln_eu_passes(out);
    if (kiln_resize_mode_of(cmd->subop) == KILN_RESIZE_LINEAR)
      work = kiln_sat_mul(work, 2u);
    break;
  default:
    break;
  }
  return kiln_sat_add(work, KILN_TIU_CMD_OVERHEAD);
}

/* ---- GDMA ----------------------------------------------------------------- */

static inline int kiln_gdma_src_is_lmem(uint32_t dir) {
  return dir == KILN_GDMA_LMEM_TO_DDR || dir == KILN_GDMA_LMEM_TO_LMEM;
}
static inline int kiln_gdma_dst_is_lmem(uint32_t dir) {
  return dir == KILN_GDMA_DDR_TO_LMEM || dir == KILN_GDMA_LMEM_TO_LMEM;
}

static inline uint64_t kiln_gdma_elems(const kiln_gdma_cmd *cmd) {
  return kiln_sat_mul(kiln_sat_mul(cmd->n, cmd->c), kiln_sat_mul(cmd->h, cmd->w));
}

/* Elements per contiguous run of one side of a copy. A DDR side is contiguous
 * over the innermost dimensions whose strides are dense (size-1 dimensions do
 * not break a run); an LMEM side over one h*w plane of a lane. Both are
 * products of innermost dimensions, so the smaller run divides the larger. */
static inline uint64_t kiln_gdma_run_elems(const kiln_gdma_cmd *cmd, int lmem,
                                           const uint32_t stride[4]) {
  const uint32_t dims[4] = {cmd->n, cmd->c, cmd->h, cmd->w};
  uint64_t run = 1u;
  int d;
  if (lmem)
    return kiln_sat_mul(cmd->h, cmd->w);
  for (d = 3; d >= 0; --d) {
    if (dims[d] != 1u && stride[d] != run)
      break;
    run = kiln_sat_mul(run, dims[d]);
  }
  return run;
}

static inline uint32_t kiln_gdma_milli_bytes_per_cycle(uint32_t dir) {
  switch (dir) {
  case KILN_GDMA_DDR_TO_LMEM: return KILN_GDMA_MBPC_DDR_TO_LMEM;
  case KILN_GDMA_LMEM_TO_DDR: return KILN_GDMA_MBPC_LMEM_TO_DDR;
  case KILN_GDMA_LMEM_TO_LMEM: return KILN_GDMA_MBPC_LMEM_TO_LMEM;
  default: return KILN_GDMA_MBPC_DDR_TO_DDR;
  }
}

/* A FILL only writes: it moves at the rate of writing its destination (the
 * LMEM write rate of a load, the DDR write rate of a store). */
static inline uint32_t kiln_gdma_cmd_milli_bytes_per_cycle(const kiln_gdma_cmd *cmd) {
  if (cmd->flags & KILN_GDMA_FLAG_FILL)
    return kiln_gdma_milli_bytes_per_cycle(kiln_gdma_dst_is_lmem(cmd->dir)
                                               ? KILN_GDMA_DDR_TO_LMEM
                                               : KILN_GDMA_LMEM_TO_DDR);
  return kiln_gdma_milli_bytes_per_cycle(cmd->dir);
}

/* Bytes on the bus: every contiguous run rounded up to a burst. A FILL has
 * no source, so only the destination's runs count. */
static inline uint64_t kiln_gdma_bus_bytes(const kiln_gdma_cmd *cmd) {
  uint64_t elems = kiln_gdma_elems(cmd);
  uint64_t dst_run = kiln_gdma_run_elems(cmd, kiln_gdma_dst_is_lmem(cmd->dir), cmd->dst_stride);
  uint64_t run = dst_run, run_bytes;
  if (!(cmd->flags & KILN_GDMA_FLAG_FILL)) {
    uint64_t src_run =
        kiln_gdma_run_elems(cmd, kiln_gdma_src_is_lmem(cmd->dir), cmd->src_stride);
    run = src_run < dst_run ? src_run : dst_run;
  }
  if (elems == 0u)
    return 0u;
  run_bytes = kiln_sat_mul(run, kiln_dtype_bytes(cmd->dtype));
  run_bytes = kiln_sat_mul(kiln_ceil_div(run_bytes, KILN_GDMA_BURST_BYTES), KILN_GDMA_BURST_BYTES);
  return kiln_sat_mul(elems / run, run_bytes);
}

static inline uint64_t kiln_gdma_cycles(const kiln_gdma_cmd *cmd) {
  uint64_t milli_bytes = kiln_sat_mul(kiln_gdma_bus_bytes(cmd), 1000u);
  uint64_t transfer = kiln_ceil_div(milli_bytes, kiln_gdma_cmd_milli_bytes_per_cycle(cmd));
  return kiln_sat_add(transfer, KILN_GDMA_CMD_LATENCY);
}

/* ---- LMEM banks ----------------------------------------------------------- */

/* Each lane's LMEM is KILN_LMEM_BANKS banks of KILN_LMEM_BANK_BYTES. When the
 * TIU and the GDMA run commands at the same time that touch a common bank,
 * the bank serves them in turn. The model charges the command that starts
 * second (the GDMA one if both start together) half of the cycles during
 * which both run: KILN_BANK_CONFLICT_DIV = 2. */
#define KILN_BANK_CONFLICT_DIV 2u

/* One past the last per-lane byte of an [n, c, h, w] LMEM tensor at addr
 * whose planes hold plane_h rows (0: h); a window ends at its last row. */
static inline uint64_t kiln_lmem_end(uint64_t addr, uint32_t n, uint32_t c, uint32_t h,
                                     uint32_t w, uint32_t plane_h, uint32_t dsize) {
  uint64_t planes = kiln_sat_mul(n, kiln_ceil_div(c, KILN_NPU_NUM));
  uint64_t bytes;
  if (planes == 0u)
    return addr;
  if (plane_h)
    bytes = kiln_sat_add(kiln_sat_mul(planes - 1u, kiln_lmem_plane_stride(plane_h, w, dsize)),
                         kiln_sat_mul((uint64_t)h * w, dsize));
  else
    bytes = kiln_sat_mul(planes, kiln_lmem_plane_stride(h, w, dsize));
  return kiln_sat_add(addr, bytes);
}

/* Banks (bit b: bank b) the per-lane range [lo, hi) touches. */
static inline uint32_t kiln_lmem_bank_mask(uint64_t lo, uint64_t hi) {
  uint64_t first, last;
  if (hi <= lo || lo >= KILN_LMEM_BYTES_PER_LANE)
    return 0u;
  if (hi > KILN_LMEM_BYTES_PER_LANE)
    hi = KILN_LMEM_BYTES_PER_LANE;
  first = lo / KILN_LMEM_BANK_BYTES;
  last = (hi - 1u) / KILN_LMEM_BANK_BYTES;
  return (uint32_t)(((2ull << last) - 1u) & ~((1ull << first) - 1u));
}

static inline uint32_t kiln_tiu_operand_banks(const kiln_tiu_operand *o) {
  if (!(o->flags & KILN_OPND_USED) || (o->flags & KILN_OPND_CONST))
    return 0u;
  return kiln_lmem_bank_mask(o->addr, kiln_lmem_end(o->addr, o->n, o->c, o->h, o->w, o->plane_h,
                                                    kiln_dtype_bytes(o->dtype)));
}

/* The banks a TIU command reads or writes. */
static inline uint32_t kiln_tiu_banks(const kiln_tiu_cmd *cmd) {
  return kiln_tiu_operand_banks(&cmd->out) | kiln_tiu_operand_banks(&cmd->in0) |
         kiln_tiu_operand_banks(&cmd->in1) | kiln_tiu_operand_banks(&cmd->in2);
}

/* The banks a GDMA command reads or writes (its LMEM sides). */
static inline uint32_t kiln_gdma_banks(const kiln_gdma_cmd *cmd) {
  uint32_t dsize = kiln_dtype_bytes(cmd->dtype), banks = 0u;
  if (kiln_gdma_src_is_lmem(cmd->dir))
    banks |= kiln_lmem_bank_mask(cmd->src_addr, kiln_lmem_end(cmd->src_addr, cmd->n, kiln_gdma_lmem_channels(cmd),
                                                               cmd->h, cmd->w,
                                                               cmd->lmem_plane_h, dsize));
  if (kiln_gdma_dst_is_lmem(cmd->dir))
    banks |= kiln_lmem_bank_mask(cmd->dst_addr, kiln_lmem_end(cmd->dst_addr, cmd->n, kiln_gdma_lmem_channels(cmd),
                                                               cmd->h, cmd->w,
                                                               cmd->lmem_plane_h, dsize));
  return banks;
}

/* The cycles added to a command of `cycles` that starts while the other
 * engine runs one sharing a bank with it for `other_left` more cycles. */
static inline uint64_t kiln_bank_conflict_cycles(uint64_t cycles, uint64_t other_left) {
  return (cycles < other_left ? cycles : other_left) / KILN_BANK_CONFLICT_DIV;
}

/* ---- the two queues ------------------------------------------------------- */

typedef enum kiln_engine { KILN_ENGINE_TIU = 0, KILN_ENGINE_GDMA = 1 } kiln_engine;

/* Called once per command as it starts; index is 0-based within its queue.
 * Any status other than KILN_OK stops the schedule and is returned. */
typedef kiln_status (*kiln_schedule_cb)(void *user, kiln_engine engine, uint32_t index);

/* The same with the cycle the command starts at (from the start of the
 * queues) and its modelled cycles: what a trace shows. */
typedef kiln_status (*kiln_schedule_timed_cb)(void *user, kiln_engine engine, uint32_t index,
                                              uint64_t start, uint64_t cycles);

typedef struct kiln_queue_timing {
  uint64_t total_cycles;    /* the last command's completion */
  uint64_t tiu_busy;        /* sum of TIU command cycles (bank conflicts included) */
  uint64_t gdma_busy;       /* sum of GDMA command cycles (bank conflicts included) */
  uint64_t bank_conflicts;  /* commands that started in a bank conflict */
  uint64_t conflict_cycles; /* the cycles those conflicts added */
} kiln_queue_timing;

KILN_STATIC_ASSERT(sizeof(kiln_queue_timing) == 40, queue_timing_size);

/* A queue pair read through accessors: tiu_at(src, i) and gdma_at(src, i)
 * return record i (0-based, below the queue's count). This lets a queue that
 * is derived from another (the runtime's warm queues, which leave out loads
 * of still-resident tensors) go through the same scheduler without a copy. A
 * returned record may be overwritten by the next call for the same engine. */
typedef struct kiln_queue_source {
  const void *src;
  uint32_t n_tiu, n_gdma;
  const kiln_tiu_cmd *(*tiu_at)(const void *src, uint32_t index);
  const kiln_gdma_cmd *(*gdma_at)(const void *src, uint32_t index);
} kiln_queue_source;

/* Every record's cmd_id must be its 1-based position and every wait id at most
 * the other queue's count. */
static inline kiln_status kiln_check_source_sync_ids(const kiln_queue_source *q) {
  uint32_t i;
  for (i = 0; i < q->n_tiu; ++i) {
    const kiln_tiu_cmd *t = q->tiu_at(q->src, i);
    if (t->cmd_id != i + 1u || t->wait_gdma_id > q->n_gdma)
      return KILN_ERR_BAD_SYNC;
  }
  for (i = 0; i < q->n_gdma; ++i) {
    const kiln_gdma_cmd *g = q->gdma_at(q->src, i);
    if (g->cmd_id != i + 1u || g->wait_tiu_id > q->n_tiu)
      return KILN_ERR_BAD_SYNC;
  }
  return KILN_OK;
}

/* Simulates both engines: a command starts when its engine is idle and the
 * other engine has completed the id it waits for. Each step starts or
 * completes at least one command, so the simulation is O(n_tiu + n_gdma).
 * Commands are reported to cb, or else to timed (either may be NULL), in
 * start order; commands that start together are reported earlier-finishing
 * first, then lower id, then TIU first. Returns KILN_ERR_BAD_SYNC for
 * malformed ids or a deadlock. */
static inline kiln_status kiln_schedule_source_timed(const kiln_queue_source *q,
                                                     kiln_schedule_cb cb,
                                                     kiln_schedule_timed_cb timed, void *user,
                                                     kiln_queue_timing *out) {
  const uint32_t n_tiu = q->n_tiu, n_gdma = q->n_gdma;
  uint32_t t_next = 0, g_next = 0;  /* next command to start */
  uint32_t t_done = 0, g_done = 0;  /* completed commands (in-order queues) */
  int t_busy = 0, g_busy = 0;
  uint64_t t_end = 0, g_end = 0, now = 0, t_sum = 0, g_sum = 0, t_c = 0, g_c = 0;
  uint64_t conflicts = 0, conflict_cycles = 0;
  uint32_t t_banks = 0, g_banks = 0; /* of the running commands */
  kiln_status st = kiln_check_source_sync_ids(q);
  if (st != KILN_OK)
    return st;

  for (;;) {
    const kiln_tiu_cmd *t = !t_busy && t_next < n_tiu ? q->tiu_at(q->src, t_next) : 0;
    const kiln_gdma_cmd *g = !g_busy && g_next < n_gdma ? q->gdma_at(q->src, g_next) : 0;
    int t_start = t && t->wait_gdma_id <= g_done;
    int g_start = g && g->wait_tiu_id <= t_done;
    int tiu_first = 1;
    int k;
    if (t_start) {
      t_c = kiln_tiu_cycles(t);
      t_banks = kiln_tiu_banks(t);
      if (g_busy && (t_banks & g_banks)) { /* the GDMA command started first */
        uint64_t extra = kiln_bank_conflict_cycles(t_c, g_end - now);
        t_c = kiln_sat_add(t_c, extra);
        conflicts++;
        conflict_cycles = kiln_sat_add(conflict_cycles, extra);
      }
      t_busy = 1;
      t_end = kiln_sat_add(now, t_c);
      t_sum = kiln_sat_add(t_sum, t_c);
    }
    if (g_start) {
      g_c = kiln_gdma_cycles(g);
      g_banks = kiln_gdma_banks(g);
      if (t_busy && (t_banks & g_banks)) {
        uint64_t extra = kiln_bank_conflict_cycles(g_c, t_end - now);
        g_c = kiln_sat_add(g_c, extra);
        conflicts++;
        conflict_cycles = kiln_sat_add(conflict_cycles, extra);
      }
      g_busy = 1;
      g_end = kiln_sat_add(now, g_c);
      g_sum = kiln_sat_add(g_sum, g_c);
    }
    if (t_start && g_start)
      tiu_first = t_end != g_end ? t_end < g_end : t_next <= g_next;
    for (k = 0; k < 2 && (cb || timed); ++k) {
      int report_tiu = (k == 0) == tiu_first;
      if (report_tiu && t_start)
        st = cb ? cb(user, KILN_ENGINE_TIU, t_next)
                : timed(user, KILN_ENGINE_TIU, t_next, now, t_c);
      else if (!report_tiu && g_start)
        st = cb ? cb(user, KILN_ENGINE_GDMA, g_next)
                : timed(user, KILN_ENGINE_GDMA, g_next, now, g_c);
      if (st != KILN_OK)
        return st;
    }
    t_next += (uint32_t)t_start;
    g_next += (uint32_t)g_start;

    if (!t_busy && !g_busy) {
      if (t_next < n_tiu || g_next < n_gdma)
        return KILN_ERR_BAD_SYNC; /* both idle, both blocked: a wait cycle */
      break;
    }
    /* Advance to the next completion; both complete if they end together. */
    now = !g_busy || (t_busy && t_end <= g_end) ? t_end : g_end;
    if (t_busy && t_end == now) {
      t_busy = 0;
      t_done = t_next;
    }
    if (g_busy && g_end == now) {
      g_busy = 0;
      g_done = g_next;
    }
  }
  if (out) {
    out->total_cycles = now;
    out->tiu_busy = t_sum;
    out->gdma_busy = g_sum;
    out->bank_conflicts = conflicts;
    out->conflict_cycles = conflict_cycles;
  }
  return KILN_OK;
}

/* kiln_schedule_source_timed without start times. */
static inline kiln_status kiln_schedule_source(const kiln_queue_source *q, kiln_schedule_cb cb,
                                               void *user, kiln_queue_timing *out) {
  return kiln_schedule_source_timed(q, cb, 0, user, out);
}

/* ---- the two queues as arrays ----------------------------------------------- */

typedef struct kiln_queue_arrays {
  const kiln_tiu_cmd *tiu;
  const kiln_gdma_cmd *gdma;
} kiln_queue_arrays;

static inline const kiln_tiu_cmd *kiln_array_tiu_at(const void *src, uint32_t index) {
  return &((const kiln_queue_arrays *)src)->tiu[index];
}
static inline const kiln_gdma_cmd *kiln_array_gdma_at(const void *src, uint32_t index) {
  return &((const kiln_queue_arrays *)src)->gdma[index];
}

static inline kiln_status kiln_check_sync_ids(const kiln_tiu_cmd *tiu, uint32_t n_tiu,
                                              const kiln_gdma_cmd *gdma, uint32_t n_gdma) {
  kiln_queue_arrays arrays;
  kiln_queue_source q;
  arrays.tiu = tiu;
  arrays.gdma = gdma;
  q.src = &arrays;
  q.n_tiu = n_tiu;
  q.n_gdma = n_gdma;
  q.tiu_at = kiln_array_tiu_at;
  q.gdma_at = kiln_array_gdma_at;
  return kiln_check_source_sync_ids(&q);
}

/* kiln_schedule_source over two arrays. */
static inline kiln_status kiln_schedule_queues(const kiln_tiu_cmd *tiu, uint32_t n_tiu,
                                               const kiln_gdma_cmd *gdma, uint32_t n_gdma,
                                               kiln_schedule_cb cb, void *user,
                                               kiln_queue_timing *out) {
  kiln_queue_arrays arrays;
  kiln_queue_source q;
  if ((n_tiu && !tiu) || (n_gdma && !gdma))
    return KILN_ERR_INVALID_ARGUMENT;
  arrays.tiu = tiu;
  arrays.gdma = gdma;
  q.src = &arrays;
  q.n_tiu = n_tiu;
  q.n_gdma = n_gdma;
  q.tiu_at = kiln_array_tiu_at;
  q.gdma_at = kiln_array_gdma_at;
  return kiln_schedule_source(&q, cb, user, out);
}

#endif
