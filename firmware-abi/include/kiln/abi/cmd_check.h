/* kiln firmware ABI: structural checks of one command record, shared by the
 * runtime verifier and the cmodel so that both accept exactly the same
 * records, and the compiler can check what it emits.
 *
 * A record passes when its op, subop, direction, dtypes and flags are known,
 * its operands combine dtypes as commands.h allows (and its INT8
 * quantization fields are in range, unused ones 0), its shapes and
 * parameters are consistent (a row window holds at most its planes' rows;
 * kernels, strides and dilations are >= 1; resize and cast scales are finite
 * and > 0 and a resize slice lies within the full heights), every LMEM
 * operand lies within a lane (at its own dtype's size) and every DDR side
 * lies within [0, ddr_size) of the net's window. All math is
 * overflow-checked and integer-only; nothing outside the record is read.
 *
 * The *_in_lane forms take the lane size: the chip's KILN_LMEM_BYTES_PER_LANE
 * for records of a bmodel, a bigger one for the compiler's interpreter, which
 * runs unsliced ops on a roomier LMEM. */
#ifndef KILN_ABI_CMD_CHECK_H
#define KILN_ABI_CMD_CHECK_H

#include <stdint.h>

#include "kiln/abi/chip.h"
#include "kiln/abi/commands.h"
#include "kiln/abi/cost.h"
#include "kiln/abi/status.h"

/* Does an [n, c, h, w] LMEM tensor at per-lane address addr, whose planes
 * hold plane_h rows (0: h), fit in a lane of `lane` bytes? A whole tensor
 * (plane_h 0) takes its aligned planes, kiln_lmem_lane_bytes; a window of
 * rows of a taller tensor ends at its last row, so a window of a buffer that
 * fits also fits. Each factor is bounded by the lane before it is multiplied
 * and every product is overflow-checked, so nothing can wrap whatever the
 * lane size. */
static inline int kiln_lmem_fits_in_lane(uint64_t lane, uint64_t addr, uint32_t n, uint32_t c,
                                         uint32_t h, uint32_t w, uint32_t plane_h,
                                         uint32_t dsize) {
  uint32_t rows = plane_h ? plane_h : h;
  uint64_t bytes, plane, groups, span, end;
  if (!n || !c || !h || !w || rows < h)
    return 0;
  if (addr > lane || rows > lane || w > lane || n > lane)
    return 0;
  /* rows * w fits in 64 bits (both are 32-bit); times dsize may not. */
  if (__builtin_mul_overflow((uint64_t)rows * w, dsize, &bytes) || bytes > lane)
    return 0;
  plane = kiln_lmem_plane_stride(rows, w, dsize);
  groups = ((uint64_t)c + KILN_NPU_NUM - 1u) / KILN_NPU_NUM;
  if (plane > lane || groups > lane)
    return 0;
  /* The last plane starts (n * groups - 1) planes in; a whole tensor's last
   * plane is a full aligned plane, a window's ends at its last row. */
  if (__builtin_mul_overflow((uint64_t)n * groups - 1u, plane, &span))
    return 0;
  end = plane_h ? (uint64_t)h * w * dsize : plane;
  return !__builtin_add_overflow(span, end, &end) && end <= lane - addr;
}

static inline int kiln_lmem_fits(uint64_t addr, uint32_t n, uint32_t c, uint32_t h,
                                 uint32_t w, uint32_t plane_h, uint32_t dsize) {
  return kiln_lmem_fits_in_lane(KILN_LMEM_BYTES_PER_LANE, addr, n, c, h, w, plane_h, dsize);
}

/* ---- TIU ------------------------------------------------------------------ */

/* A constant keeps its value in the low dsize bytes of addr; the rest is 0. */
static inline kiln_status kiln_tiu_operand_check(const kiln_tiu_operand *o, int may_be_const,
                                                 uint64_t lane) {
  uint32_t dsize = kiln_dtype_bytes(o->dtype);
  if (!(o->flags & KILN_OPND_USED) || (o->flags & ~(KILN_OPND_USED | KILN_OPND_CONST)))
    return KILN_ERR_BAD_COMMAND;
  if (dsize == 0u)
    return KILN_ERR_BAD_COMMAND;
  if (o->flags & KILN_OPND_CONST)
    return may_be_const && (dsize >= 4u || !(o->addr >> (8u * dsize))) ? KILN_OK
                                                                      : KILN_ERR_BAD_COMMAND;
  if (!o->n || !o->c || !o->h || !o->w || (o->plane_h && o->plane_h < o->h))
    return KILN_ERR_BAD_COMMAND;
  return kiln_lmem_fits_in_lane(lane, o->addr, o->n, o->c, o->h, o->w, o->plane_h, dsize)
             ? KILN_OK
             : KILN_ERR_OUT_OF_RANGE;
}

/* out == (in + pad0 + pad1 - dil * (k - 1) - 1) / stride + 1, with a
 * non-negative numerator. k, stride and dil must be >= 1. */
static inline int kiln_window_dim_ok(uint32_t in, uint32_t pad0, uint32_t pad1, uint32_t k,
                                     uint32_t stride, uint32_t dil, uint32_t out) {
  int64_t span = (int64_t)in + pad0 + pad1 - ((int64_t)dil * (k - 1u) + 1);
  return span >= 0 && span / stride + 1 == out;
}

static inline int kiln_window_ok(const kiln_tiu_cmd *cmd) {
  if (!cmd->kh || !cmd->kw || !cmd->stride_h || !cmd->stride_w || !cmd->dil_h || !cmd->dil_w)
    return 0;
  return kiln_window_dim_ok(cmd->in0.h, cmd->pad_top, cmd->pad_bottom, cmd->kh,
                            cmd->stride_h, cmd->dil_h, cmd->out.h) &&
         kiln_window_dim_ok(cmd->in0.w, cmd->pad_left, cmd->pad_right, cmd->kw,
                            cmd->stride_w, cmd->dil_w, cmd->out.w);
}

static inline int kiln_same_shape(const kiln_tiu_operand *a, uint32_t n, uint32_t c,
                                  uint32_t h, uint32_t w) {
  return a->n == n && a->c == c && a->h == h && a->w == w;
}

/* Each dimension of an eltwise input equals the output's or is 1. */
static inline int kiln_broadcasts_to(const kiln_tiu_operand *in, const kiln_tiu_operand *out) {
  if (in->flags & KILN_OPND_CONST)
    return 1;
  return (in->n == out->n || in->n == 1u) && (in->c == out->c || in->c == 1u) &&
         (in->h == out->h || in->h == 1u) && (in->w == out->w || in->w == 1u);
}

/* Shared by conv and deconv: groups, the weight [1, oc, ic/groups, kh*kw]
 * and the bias [1, oc, 1, 1] (INT8: the requant table [1, oc, 1, 3]). */
static inline int kiln_conv_operands_ok(const kiln_tiu_cmd *cmd) {
  uint32_t groups = cmd->groups;
  if (cmd->subop != 0u || (cmd->flags & KILN_TIU_FLAG_COUNT_INCLUDE_PAD))
    return 0;
  if (!groups || cmd->in0.c % groups || cmd->out.c % groups || cmd->out.n != cmd->in0.n)
    return 0;
  if (!kiln_same_shape(&cmd->in1, 1u, cmd->out.c, cmd->in0.c / groups,
                       (uint32_t)cmd->kh * cmd->kw))
    return 0;
  return !(cmd->flags & KILN_TIU_FLAG_HAS_BIAS) ||
         kiln_same_shape(&cmd->in2, 1u, cmd->out.c, 1u,
                         cmd->in0.dtype == KILN_DTYPE_INT8 ? 3u : 1u);
}

/* A depthwise record has one input channel per group and per output channel. */
static inline kiln_status kiln_conv_check(const kiln_tiu_cmd *cmd) {
  if ((cmd->flags & KILN_TIU_FLAG_DEPTHWISE) &&
      (cmd->groups != cmd->in0.c || cmd->out.c != cmd->in0.c))
    return KILN_ERR_BAD_COMMAND;
  return kiln_conv_operands_ok(cmd) && kiln_window_ok(cmd) ? KILN_OK : KILN_ERR_BAD_COMMAND;
}

/* Deconv scatters into whatever output it is given (outputs no tap reaches
 * hold the bias), so its shape is free; the unused end pads must be 0. */
static inline kiln_status kiln_deconv_check(const kiln_tiu_cmd *cmd) {
  if (!cmd->kh || !cmd->kw || !cmd->stride_h || !cmd->stride_w || !cmd->dil_h || !cmd->dil_w)
    return KILN_ERR_BAD_COMMAND;
  if (cmd->pad_bottom || cmd->pad_right)
    return KILN_ERR_BAD_COMMAND;
  return kiln_conv_operands_ok(cmd) ? KILN_OK : KILN_ERR_BAD_COMMAND;
}

/* Pads must be smaller than the kernel, so every window sees some input. */
static inline kiln_status kiln_pool_check(const kiln_tiu_cmd *cmd) {
  if (cmd->subop >= KILN_POOL_END || (cmd->flags & KILN_TIU_FLAG_HAS_BIAS))
    return KILN_ERR_BAD_COMMAND;
  if (cmd->out.n != cmd->in0.n || cmd->out.c != cmd->in0.c || !kiln_window_ok(cmd))
    return KILN_ERR_BAD_COMMAND;
  if (cmd->pad_top >= cmd->kh || cmd->pad_bottom >= cmd->kh || cmd->pad_left >= cmd->kw ||
      cmd->pad_right >= cmd->kw)
    return KILN_ERR_BAD_COMMAND;
  return KILN_OK;
}

/* Is the float at p finite and > 0? Judged on its bits (never loaded as a
 * float), so the check builds for firmware without FP registers. */
static inline int kiln_f32_finite_positive(const float *p) {
  uint32_t bits;
  __builtin_memcpy(&bits, p, sizeof bits);
  return bits != 0u && !(bits >> 31) && (bits >> 23 & 0xffu) != 0xffu;
}

/* The whole-tensor form has aux all 0; the slice form gives the full heights
 * (>= 1) and its output rows and input window must lie within them. Whether
 * the window holds every row the slice reads is float math, left to the
 * engine (the cmodel faults). */
static inline kiln_status kiln_resize_check(const kiln_tiu_cmd *cmd) {
  const uint32_t *aux = cmd->aux;
  if ((cmd->subop >> 14) || kiln_resize_mode_of(cmd->subop) > KILN_RESIZE_LINEAR ||
      kiln_resize_coord_of(cmd->subop) > KILN_COORD_PYTORCH_HALF_PIXEL ||
      kiln_resize_nearest_of(cmd->subop) > KILN_NEAREST_CEIL)
    return KILN_ERR_BAD_COMMAND;
  if (cmd->flags & ~KILN_TIU_FLAG_RELU)
    return KILN_ERR_BAD_COMMAND;
  if (!kiln_f32_finite_positive(&cmd->param[0]) || !kiln_f32_finite_positive(&cmd->param[1]))
    return KILN_ERR_BAD_COMMAND;
  if (cmd->out.n != cmd->in0.n || cmd->out.c != cmd->in0.c)
    return KILN_ERR_BAD_COMMAND;
  if (!aux[0] && !aux[1] && !aux[2] && !aux[3])
    return KILN_OK;
  if (!aux[0] || !aux[1] || (uint64_t)aux[2] + cmd->out.h > aux[1] ||
      (uint64_t)aux[3] + cmd->in0.h > aux[0])
    return KILN_ERR_BAD_COMMAND;
  return KILN_OK;
}

static inline int kiln_is_float_dtype(uint32_t dtype) {
  return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F16 || dtype == KILN_DTYPE_BF16;
}

/* Does the record combine dtypes as commands.h allows? The record's dtype is
 * out's (CAST: either side may differ); operands the op does not use are not
 * looked at. */
static inline int kiln_tiu_dtypes_ok(const kiln_tiu_cmd *cmd, int uses_in1, int uses_in2) {
  uint32_t d = cmd->out.dtype;
  if (cmd->op == KILN_TIU_CAST)
    return (kiln_is_float_dtype(d) || d == KILN_DTYPE_INT8) &&
           (kiln_is_float_dtype(cmd->in0.dtype) || cmd->in0.dtype == KILN_DTYPE_INT8);
  if (!kiln_is_float_dtype(d) && d != KILN_DTYPE_INT8)
    return 0;
  if (cmd->in0.dtype != d)
    return 0;
  if (d == KILN_DTYPE_INT8) {
    if (cmd->op == KILN_TIU_ELTWISE && cmd->subop > KILN_ELT_MIN)
      return 0; /* DIV, POW, PRELU have no INT8 form */
    if ((cmd->op == KILN_TIU_CONV || cmd->op == KILN_TIU_DECONV) &&
        (!uses_in2 || cmd->in2.dtype != KILN_DTYPE_INT32))
      return 0; /* the requant table is not optional */
  } else if (uses_in2 && cmd->in2.dtype != d && cmd->in2.dtype != KILN_DTYPE_F32) {
    return 0; /* a narrow float conv's bias may stay F32 */
  }
  return !uses_in1 || cmd->in1.dtype == d;
}

/* aux fields an INT8 record may use (commands.h); all others must be 0. */
#define KILN_QF_M0 0x01u
#define KILN_QF_M1 0x02u
#define KILN_QF_SHIFT 0x04u
#define KILN_QF_ZP_IN0 0x08u
#define KILN_QF_ZP_IN1 0x10u
#define KILN_QF_ZP_OUT 0x20u

static inline uint32_t kiln_tiu_quant_fields(const kiln_tiu_cmd *cmd) {
  const uint32_t zp0 = cmd->in0.dtype == KILN_DTYPE_INT8 ? KILN_QF_ZP_IN0 : 0u;
  const uint32_t zpo = cmd->out.dtype == KILN_DTYPE_INT8 ? KILN_QF_ZP_OUT : 0u;
  if (!zp0 && !zpo) /* no INT8 operand */
    return 0u;
  switch (cmd->op) {
  case KILN_TIU_CONV: case KILN_TIU_DECONV: case KILN_TIU_ACTIVE:
    return zp0 | zpo;
  case KILN_TIU_POOL:
    if (cmd->subop == KILN_POOL_MAX || cmd->subop == KILN_POOL_MIN)
      return zp0 | zpo;
    return KILN_QF_M0 | KILN_QF_SHIFT | zp0 | zpo;
  case KILN_TIU_ELTWISE:
    if (cmd->subop == KILN_ELT_MUL)
      return KILN_QF_M0 | KILN_QF_SHIFT | zp0 | KILN_QF_ZP_IN1 | zpo;
    return KILN_QF_M0 | KILN_QF_M1 | KILN_QF_SHIFT | zp0 | KILN_QF_ZP_IN1 | zpo;
  case KILN_TIU_CAST:
    return zp0 && zpo ? KILN_QF_M0 | KILN_QF_SHIFT | zp0 | zpo : zp0 | zpo;
  default: /* KILN_TIU_RESIZE: aux is its slice */
    return 0u;
  }
}

static inline int kiln_tiu_quant_fields_ok(const kiln_tiu_cmd *cmd) {
  const uint32_t used = kiln_tiu_quant_fields(cmd);
  const uint32_t zps = cmd->aux[2];
  if (cmd->op == KILN_TIU_RESIZE)
    return 1;
  if ((!(used & KILN_QF_M0) && cmd->aux[0]) || (!(used & KILN_QF_M1) && cmd->aux[1]))
    return 0;
  if ((used & KILN_QF_SHIFT) ? cmd->aux[3] > 63u : cmd->aux[3] != 0u)
    return 0;
  return !(zps >> 24) && ((used & KILN_QF_ZP_IN0) || !(zps & 0xffu)) &&
         ((used & KILN_QF_ZP_IN1) || !(zps >> 8 & 0xffu)) &&
         ((used & KILN_QF_ZP_OUT) || !(zps >> 16 & 0xffu));
}

/* Quantize and dequantize divide or multiply by param[0]. */
static inline kiln_status kiln_cast_check(const kiln_tiu_cmd *cmd) {
  int quantizes = cmd->in0.dtype == KILN_DTYPE_INT8 || cmd->out.dtype == KILN_DTYPE_INT8;
  int requantizes = cmd->in0.dtype == KILN_DTYPE_INT8 && cmd->out.dtype == KILN_DTYPE_INT8;
  if (cmd->subop != 0u || (cmd->flags & ~KILN_TIU_FLAG_RELU))
    return KILN_ERR_BAD_COMMAND;
  if (quantizes && !requantizes && !kiln_f32_finite_positive(&cmd->param[0]))
    return KILN_ERR_BAD_COMMAND;
  return kiln_same_shape(&cmd->in0, cmd->out.n, cmd->out.c, cmd->out.h, cmd->out.w)
             ? KILN_OK
             : KILN_ERR_BAD_COMMAND;
}

/* Which inputs an op reads besides in0: conv-like ops their weight (in1)
 * and, with HAS_BIAS, bias (in2); eltwise ops in1; INT8 ACTIVE its table. */
static inline int kiln_tiu_uses_in1(const kiln_tiu_cmd *cmd) {
  return cmd->op == KILN_TIU_CONV || cmd->op == KILN_TIU_DECONV ||
         cmd->op == KILN_TIU_ELTWISE ||
         (cmd->op == KILN_TIU_ACTIVE && cmd->in0.dtype == KILN_DTYPE_INT8);
}
static inline int kiln_tiu_uses_in2(const kiln_tiu_cmd *cmd) {
  return (cmd->op == KILN_TIU_CONV || cmd->op == KILN_TIU_DECONV) &&
         (cmd->flags & KILN_TIU_FLAG_HAS_BIAS);
}

#define KILN_TIU_KNOWN_FLAGS \
  (KILN_TIU_FLAG_RELU | KILN_TIU_FLAG_HAS_BIAS | KILN_TIU_FLAG_COUNT_INCLUDE_PAD | \
   KILN_TIU_FLAG_DEPTHWISE)

static inline kiln_status kiln_tiu_cmd_check_in_lane(const kiln_tiu_cmd *cmd, uint64_t lane) {
  const uint32_t known_flags = KILN_TIU_KNOWN_FLAGS;
  int eltwise = cmd->op == KILN_TIU_ELTWISE;
  int lut = cmd->op == KILN_TIU_ACTIVE && cmd->in0.dtype == KILN_DTYPE_INT8;
  int uses_in1 = kiln_tiu_uses_in1(cmd);
  int uses_in2 = kiln_tiu_uses_in2(cmd);
  kiln_status st;

  if (cmd->op < KILN_TIU_CONV || cmd->op >= KILN_TIU_OP_END || (cmd->flags & ~known_flags))
    return KILN_ERR_BAD_COMMAND;
  if ((cmd->flags & KILN_TIU_FLAG_DEPTHWISE) && cmd->op != KILN_TIU_CONV)
    return KILN_ERR_BAD_COMMAND;
  if ((st = kiln_tiu_operand_check(&cmd->out, 0, lane)) != KILN_OK ||
      (st = kiln_tiu_operand_check(&cmd->in0, eltwise, lane)) != KILN_OK)
    return st;
  if (uses_in1 && (st = kiln_tiu_operand_check(&cmd->in1, eltwise, lane)) != KILN_OK)
    return st;
  if (!uses_in1 && (cmd->in1.flags & KILN_OPND_USED))
    return KILN_ERR_BAD_COMMAND;
  if (uses_in2 && (st = kiln_tiu_operand_check(&cmd->in2, 0, lane)) != KILN_OK)
    return st;
  if (!uses_in2 && (cmd->in2.flags & KILN_OPND_USED))
    return KILN_ERR_BAD_COMMAND;
  if (!kiln_tiu_dtypes_ok(cmd, uses_in1, uses_in2) || !kiln_tiu_quant_fields_ok(cmd))
    return KILN_ERR_BAD_COMMAND;
  /* INT8 RELU is max(out, zp_out); a resize has no zp_out to give. */
  if (cmd->op == KILN_TIU_RESIZE && cmd->out.dtype == KILN_DTYPE_INT8 &&
      (cmd->flags & KILN_TIU_FLAG_RELU))
    return KILN_ERR_BAD_COMMAND;

  switch (cmd->op) {
  case KILN_TIU_CONV:
    return kiln_conv_check(cmd);
  case KILN_TIU_DECONV:
    return kiln_deconv_check(cmd);
  case KILN_TIU_POOL:
    return kiln_pool_check(cmd);
  case KILN_TIU_RESIZE:
    return kiln_resize_check(cmd);
  case KILN_TIU_CAST:
    return kiln_cast_check(cmd);
  case KILN_TIU_ELTWISE:
    if (cmd->subop >= KILN_ELT_END || (cmd->flags & ~KILN_TIU_FLAG_RELU))
      return KILN_ERR_BAD_COMMAND;
    return kiln_broadcasts_to(&cmd->in0, &cmd->out) && kiln_broadcasts_to(&cmd->in1, &cmd->out)
               ? KILN_OK
               : KILN_ERR_BAD_COMMAND;
  default: /* KILN_TIU_ACTIVE; INT8 reads its function from the table in1 */
    if (cmd->subop >= KILN_ACT_END || (cmd->flags & ~KILN_TIU_FLAG_RELU))
      return KILN_ERR_BAD_COMMAND;
    if (lut && !kiln_same_shape(&cmd->in1, 1u, 1u, 1u, 256u))
      return KILN_ERR_BAD_COMMAND;
    return kiln_same_shape(&cmd->in0, cmd->out.n, cmd->out.c, cmd->out.h, cmd->out.w)
               ? KILN_OK
               : KILN_ERR_BAD_COMMAND;
  }
}

/* A record of a bmodel: LMEM is the chip's. */
static inline kiln_status kiln_tiu_cmd_check(const kiln_tiu_cmd *cmd) {
  return kiln_tiu_cmd_check_in_lane(cmd, KILN_LMEM_BYTES_PER_LANE);
}

/* ---- GDMA ----------------------------------------------------------------- */

/* One past the last byte a DDR side touches, from the window base: addr plus
 * the largest element offset (strides are unsigned, so addr is the lowest).
 * Returns 0 if the math overflows. Dimensions must be >= 1. */
static inline int kiln_gdma_ddr_end(const kiln_gdma_cmd *cmd, uint64_t addr,
                                    const uint32_t stride[4], uint64_t *out_end) {
  const uint32_t dims[4] = {cmd->n, cmd->c, cmd->h, cmd->w};
  uint64_t last = 0u, end;
  int d;
  for (d = 0; d < 4; ++d)
    if (__builtin_add_overflow(last, (uint64_t)(dims[d] - 1u) * stride[d], &last))
      return 0;
  if (__builtin_add_overflow(last, 1u, &end) ||
      __builtin_mul_overflow(end, (uint64_t)kiln_dtype_bytes(cmd->dtype), &end) ||
      __builtin_add_overflow(end, addr, &end))
    return 0;
  *out_end = end;
  return 1;
}

static inline kiln_status kiln_gdma_side_check(const kiln_gdma_cmd *cmd, int lmem,
                                               uint64_t addr, const uint32_t stride[4],
                                               uint64_t ddr_size) {
  uint64_t end;
  if (lmem)
    return kiln_lmem_fits(addr, cmd->n, kiln_gdma_lmem_channels(cmd), cmd->h, cmd->w,
                          cmd->lmem_plane_h,
                          kiln_dtype_bytes(cmd->dtype))
               ? KILN_OK
               : KILN_ERR_OUT_OF_RANGE;
  return kiln_gdma_ddr_end(cmd, addr, stride, &end) && end <= ddr_size ? KILN_OK
                                                                       : KILN_ERR_OUT_OF_RANGE;
}

/* A lane offset needs exactly one LMEM side and stays within the lanes. */
static inline int kiln_gdma_lane_ok(const kiln_gdma_cmd *cmd) {
  if (cmd->lmem_lane == 0u)
    return 1;
  return (cmd->dir == KILN_GDMA_DDR_TO_LMEM || cmd->dir == KILN_GDMA_LMEM_TO_DDR) &&
         cmd->lmem_lane < KILN_NPU_NUM && cmd->c <= KILN_NPU_NUM - cmd->lmem_lane;
}

/* A copy into DDR moves at most ddr_size bytes; this bounds the work of a
 * record whose strides revisit the same bytes. A FILL reads nothing: its
 * source side is not checked, and the high half of src_addr (beyond the
 * 32-bit pattern) must be 0. */
static inline kiln_status kiln_gdma_cmd_check(const kiln_gdma_cmd *cmd, uint64_t ddr_size) {
  int src_lmem = kiln_gdma_src_is_lmem(cmd->dir);
  int dst_lmem = kiln_gdma_dst_is_lmem(cmd->dir);
  int fill = (cmd->flags & KILN_GDMA_FLAG_FILL) != 0;
  kiln_status st = KILN_OK;
  if (cmd->dir >= KILN_GDMA_DIR_END || kiln_dtype_bytes(cmd->dtype) == 0u ||
      (cmd->flags & ~KILN_GDMA_FLAG_FILL) || (fill && (cmd->src_addr >> 32)))
    return KILN_ERR_BAD_COMMAND;
  if (!cmd->n || !cmd->c || !cmd->h || !cmd->w ||
      (cmd->lmem_plane_h && cmd->lmem_plane_h < cmd->h) || !kiln_gdma_lane_ok(cmd))
    return KILN_ERR_BAD_COMMAND;
  if (!fill)
    st = kiln_gdma_side_check(cmd, src_lmem, cmd->src_addr, cmd->src_stride, ddr_size);
  if (st == KILN_OK)
    st = kiln_gdma_side_check(cmd, dst_lmem, cmd->dst_addr, cmd->dst_stride, ddr_size);
  if (st == KILN_OK && !dst_lmem &&
      kiln_sat_mul(kiln_gdma_elems(cmd), kiln_dtype_bytes(cmd->dtype)) > ddr_size)
    st = KILN_ERR_OUT_OF_RANGE;
  return st;
}

#endif
