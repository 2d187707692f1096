/* kiln firmware ABI: TIU and GDMA command records.
 *
 * A layer group's work is two queues, one per engine. Each record carries a
 * 1-based id within its queue and the id of the other engine's record it must
 * wait for (0 = no wait). The engines run concurrently; a record starts when
 * its engine is free and the other engine has completed the awaited id.
 *
 * Addresses: LMEM addresses are per-lane byte offsets; tensors in LMEM start on
 * lane 0 and use the layout of chip.h. DDR addresses are byte offsets from the
 * net's DDR base register (regs.h); the device faults on any access outside
 * [base, base + size). All fields are little-endian.
 *
 * Dtypes (ABI 1.2, docs/precision.md): a TIU record runs in F32, F16, BF16
 * or INT8, see "Dtypes of a TIU record" below; the arithmetic helpers are in
 * quant.h. */
#ifndef KILN_ABI_COMMANDS_H
#define KILN_ABI_COMMANDS_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/abi/static_assert.h"

/* ---- TIU (tensor compute on LMEM) ---------------------------------------- */

typedef enum kiln_tiu_op {
  KILN_TIU_CONV = 1,    /* out = conv(in0, weight in1) + bias in2 */
  KILN_TIU_POOL = 2,    /* subop: kiln_pool_kind */
  KILN_TIU_ELTWISE = 3, /* subop: kiln_eltwise_kind, out = in0 (op) in1 */
  KILN_TIU_ACTIVE = 4,  /* subop: kiln_active_kind, out = f(in0) */
  KILN_TIU_DECONV = 5,  /* transposed conv, see below */
  KILN_TIU_RESIZE = 6,  /* subop: kiln_resize_mode, see below */
  KILN_TIU_CAST = 7,    /* out = in0 converted to out's dtype, see below (ABI 1.2) */
  KILN_TIU_OP_END
} kiln_tiu_op;

typedef enum kiln_pool_kind {
  KILN_POOL_MAX = 0,
  KILN_POOL_AVG = 1,
  KILN_POOL_SUM = 2, /* sum over the window's valid elements (reductions) */
  KILN_POOL_MIN = 3,
  KILN_POOL_END
} kiln_pool_kind;

typedef enum kiln_eltwise_kind {
  KILN_ELT_ADD = 0,
  KILN_ELT_SUB = 1,
  KILN_ELT_MUL = 2,
  KILN_ELT_MAX = 3,
  KILN_ELT_MIN = 4,
  KILN_ELT_DIV = 5,
  KILN_ELT_POW = 6,   /* powf(in0, in1) */
  KILN_ELT_PRELU = 7, /* in0 >= 0 ? in0 : in0 * in1 (in1: slope, broadcast) */
  KILN_ELT_END
} kiln_eltwise_kind;

/* Unary functions; param[0] = a, param[1] = b where noted. */
typedef enum kiln_active_kind {
  KILN_ACT_RELU = 0,
  KILN_ACT_LEAKY_RELU = 1,   /* x >= 0 ? x : a * x */
  KILN_ACT_SIGMOID = 2,
  KILN_ACT_TANH = 3,
  KILN_ACT_EXP = 4,
  KILN_ACT_LOG = 5,
  KILN_ACT_SQRT = 6,
  KILN_ACT_RSQRT = 7,
  KILN_ACT_RECIPROCAL = 8,
  KILN_ACT_ABS = 9,
  KILN_ACT_NEG = 10,
  KILN_ACT_ERF = 11,
  KILN_ACT_ELU = 12,         /* x > 0 ? x : a * (exp(x) - 1) */
  KILN_ACT_SELU = 13,        /* b * (x > 0 ? x : a * (exp(x) - 1)) */
  KILN_ACT_SOFTPLUS = 14,    /* log(1 + exp(x)) */
  KILN_ACT_HARD_SIGMOID = 15,/* max(0, min(1, a * x + b)) */
  KILN_ACT_HARD_SWISH = 16,  /* x * max(0, min(1, x / 6 + 0.5)) */
  KILN_ACT_CLIP = 17,        /* min(max(x, a), b) */
  KILN_ACT_SQUARE = 18,      /* x * x */
  KILN_ACT_GELU = 19,        /* 0.5 * x * (1 + erf(x / sqrt(2))) */
  KILN_ACT_SCALE = 20,       /* a * x + b */
  KILN_ACT_SILU = 21,        /* x * sigmoid(x) (ABI 1.4) */
  KILN_ACT_MISH = 22,        /* x * tanh(log(1 + exp(x))) (ABI 1.4) */
  KILN_ACT_END
} kiln_active_kind;

/* RESIZE subop: mode | coord << 4 | nearest << 8 | KILN_RESIZE_EXACT_H |
 * KILN_RESIZE_EXACT_W. An EXACT bit (ABI 1.3) says the axis's scale is
 * exactly its full output length over its full input length (the model gave
 * sizes, or a scale that is that ratio): nearest then computes the source
 * coordinate as an exact fraction of the integer lengths, so an output that
 * maps exactly onto a rounding tie rounds as nearest_mode says (the f32
 * scale would land just off the tie). Linear ignores the bits. */
#define KILN_RESIZE_EXACT_H 0x1000u
#define KILN_RESIZE_EXACT_W 0x2000u
typedef enum kiln_resize_mode { KILN_RESIZE_NEAREST = 0, KILN_RESIZE_LINEAR = 1 } kiln_resize_mode;
typedef enum kiln_resize_coord {
  KILN_COORD_HALF_PIXEL = 0,        /* (o + 0.5) / scale - 0.5 */
  KILN_COORD_ASYMMETRIC = 1,        /* o / scale */
  KILN_COORD_ALIGN_CORNERS = 2,     /* o * (in - 1) / (in * scale - 1), as ONNX */
  KILN_COORD_PYTORCH_HALF_PIXEL = 3 /* out > 1 ? (o + 0.5) / scale - 0.5 : 0 */
} kiln_resize_coord;
typedef enum kiln_resize_nearest {
  KILN_NEAREST_ROUND_PREFER_FLOOR = 0,
  KILN_NEAREST_ROUND_PREFER_CEIL = 1,
  KILN_NEAREST_FLOOR = 2,
  KILN_NEAREST_CEIL = 3
} kiln_resize_nearest;

/* kiln_tiu_cmd.flags */
#define KILN_TIU_FLAG_RELU 0x1u              /* apply ReLU to the result (INT8: max(out, zp_out)) */
#define KILN_TIU_FLAG_HAS_BIAS 0x2u          /* conv, deconv: in2 is a [1, oc, 1, 1] bias
                                              * (INT8: the [1, oc, 1, 3] requant table) */
#define KILN_TIU_FLAG_COUNT_INCLUDE_PAD 0x4u /* avg pool divides by kh*kw */
#define KILN_TIU_FLAG_DEPTHWISE 0x8u         /* conv (ABI 1.5): a depthwise conv (groups ==
                                              * in0.c == out.c) issued to the pooling and
                                              * depthwise datapath, see below */

/* kiln_tiu_operand.flags */
#define KILN_OPND_USED 0x1u
#define KILN_OPND_CONST 0x2u /* scalar: addr holds the value's bits */

/* An LMEM tensor [n, c, h, w]. A dimension of 1 in an eltwise input
 * broadcasts against the output. The operand may be a window of rows of a
 * stored tensor whose planes hold plane_h rows (0: plane_h = h): then addr
 * points at the window's first row and the plane stride is
 * kiln_lmem_plane_stride(plane_h, w, dsize). A CONST operand (eltwise
 * inputs only) holds its value's bits in addr: all 32 for F32, the low 16
 * for F16/BF16, the low 8 for INT8 (the bits above must be 0). */
typedef struct kiln_tiu_operand {
  uint32_t addr;
  uint16_t n, c, h, w;
  uint8_t dtype; /* kiln_dtype */
  uint8_t flags; /* KILN_OPND_* */
  uint16_t plane_h;
} kiln_tiu_operand;

/* Conv: in0 [n, ic, ih, iw]; in1 (weight) [1, oc, ic/groups, kh*kw]; in2
 * (bias) [1, oc, 1, 1] (INT8: [1, oc, 1, 3]); out [n, oc, oh, ow]. Pads are those of this slice:
 * rows outside the slice's loaded input are zeros. Pool uses kh/kw, strides
 * and pads likewise; avg pool divides by the count of valid input elements
 * unless COUNT_INCLUDE_PAD.
 *
 * Depthwise (ABI 1.5): a CONV with KILN_TIU_FLAG_DEPTHWISE, one input
 * channel per group (groups == in0.c == out.c), computes exactly what the
 * same record without the flag computes; the chip runs it on the datapath
 * pools use, per lane and tap at twice the elementwise rate, instead of the
 * MAC array, whose input-channel slots a depthwise conv would leave all but
 * one of idle (cost.h).
 *
 * Deconv (transposed conv): operands as for conv (the weight already in
 * [oc, ic/groups] order). Input element (iy, ix) times tap (ky, kx) adds to
 * output (iy * stride_h + ky * dil_h - pad_top, ix * stride_w + kx * dil_w -
 * pad_left) when that lies inside out; other outputs get only the bias.
 * pad_bottom/pad_right are unused and must be 0.
 *
 * Resize: out [n, c, oh, ow] from in0 [n, c, ih, iw] with ONNX Resize
 * semantics; param[0], param[1] = scale_h, scale_w (out / in, as the model
 * gives them) and aux[0], aux[1] = the full input and output heights when
 * this command covers rows aux[2].. of the output and its in0 starts at
 * input row aux[3] (all 0 when the command covers the whole tensor). Linear
 * clamps source coordinates to the input, as ONNX does.
 *
 * Cast (ABI 1.2): out = in0 converted, same shape, subop 0:
 *   float -> float (F32, F16, BF16 any way): rounds to nearest even when
 *     narrowing (F16 overflow gives +-Inf);
 *   float -> INT8: kiln_quantize_f32(x, param[0], zp_out), param[0] the
 *     output's scale (finite, > 0);
 *   INT8 -> float: kiln_dequantize_i8(q, param[0], zp_in0), param[0] the
 *     input's scale (finite, > 0), then stored in out's dtype;
 *   INT8 -> INT8: kiln_requant_i8(q - zp_in0, m0, rshift, zp_out).
 *
 * Dtypes of a TIU record (ABI 1.2; kiln_tiu_cmd_check accepts exactly these):
 * - F32, F16, BF16: every used operand has the record's dtype, except that
 *   a CONV/DECONV bias (in2) may be F32 in an F16/BF16 record. Kernels load
 *   the narrow values as f32, compute in f32 (conv/deconv multiply the
 *   narrow values and accumulate in f32) and round the result to nearest
 *   even on store. aux is 0 (RESIZE: its slice fields).
 * - INT8: every used operand INT8, except the conv/deconv requant table in2
 *   (INT32) and CAST's float side. The quantization fields are
 *     aux[0] = m0 (int32 bits), aux[1] = m1 (int32 bits),
 *     aux[2] = zero points, (uint8)zp_in0 | (uint8)zp_in1 << 8 |
 *              (uint8)zp_out << 16 (each an int8; kiln_pack_zero_points),
 *     aux[3] = rshift (0..63);
 *   fields an op does not use below must be 0, and so must the zero point
 *   of an operand that is not an INT8 operand of the op. With
 *   requant(v) = kiln_requant_i8(v, m0, rshift, zp_out) (quant.h):
 *   CONV, DECONV: HAS_BIAS is required and in2 is INT32 [1, oc, 1, 3] =
 *     (bias, multiplier, rshift) per output channel; acc = sum of
 *     (x - zp_in0) * w + bias (int64), out = kiln_requant_i8(acc,
 *     multiplier, rshift, zp_out) (a table rshift outside 0..63 faults).
 *     Padding contributes nothing. Uses zp_in0, zp_out.
 *   POOL MAX/MIN: on q directly (pads never win); uses zp_out for RELU
 *     (zp_in0 may be given, unused).
 *   POOL SUM: requant(sum of (q - zp_in0)); POOL AVG:
 *     kiln_requant_i8(kiln_div_round(sum of (q - zp_in0) * m0, count), 1,
 *     rshift, zp_out) with count as for floats. Use m0, rshift, zp_in0,
 *     zp_out.
 *   ELTWISE ADD/SUB: requant'((a - zp_in0) * m0 +- (b - zp_in1) * m1);
 *     MAX/MIN: requant'(max/min((a - zp_in0) * m0, (b - zp_in1) * m1));
 *     MUL: requant((a - zp_in0) * (b - zp_in1)); where requant' is
 *     requant with multiplier 1 (m0, m1 already applied). DIV, POW and
 *     PRELU have no INT8 form.
 *   ACTIVE (every kind): in1 is an INT8 table [1, 1, 1, 256] on lane 0 and
 *     out = table[(uint8)q]; param is unused (the table holds the function).
 *   RESIZE: in and out share one quantization: nearest copies q, linear
 *     blends q in f32 as for floats and rounds half away from zero; aux
 *     keeps its slice meaning, so no quantization fields and no RELU.
 *   CAST: as above (INT8 -> INT8 uses m0, rshift, zp_in0, zp_out).
 *   The RELU flag, where allowed, then gives max(out, zp_out). */
typedef struct kiln_tiu_cmd {
  uint32_t cmd_id;
  uint32_t wait_gdma_id;
  uint16_t op;    /* kiln_tiu_op */
  uint16_t subop; /* kiln_pool_kind | kiln_eltwise_kind | kiln_active_kind | resize bits */
  uint32_t flags; /* KILN_TIU_FLAG_* */
  kiln_tiu_operand out, in0, in1, in2;
  uint16_t kh, kw, stride_h, stride_w, dil_h, dil_w;
  uint16_t pad_top, pad_bottom, pad_left, pad_right;
  uint16_t groups;
  uint16_t reserved0;
  float param[2];
  uint32_t aux[4]; /* op-specific, see above (0 otherwise) */
} kiln_tiu_cmd;

/* INT8 records: the zero points in aux[2] and back. */
static inline uint32_t kiln_pack_zero_points(int32_t zp_in0, int32_t zp_in1, int32_t zp_out) {
  return (uint32_t)(uint8_t)zp_in0 | (uint32_t)(uint8_t)zp_in1 << 8 |
         (uint32_t)(uint8_t)zp_out << 16;
}
/* which: 0 = in0, 1 = in1, 2 = out. */
static inline int32_t kiln_zero_point(uint32_t packed, uint32_t which) {
  return (int8_t)(uint8_t)(packed >> (8u * which));
}

KILN_STATIC_ASSERT(sizeof(kiln_tiu_operand) == 16, tiu_operand_size);
KILN_STATIC_ASSERT(sizeof(kiln_tiu_cmd) == 128, tiu_cmd_size);
KILN_STATIC_ASSERT(offsetof(kiln_tiu_cmd, out) == 16, tiu_cmd_out_offset);
KILN_STATIC_ASSERT(offsetof(kiln_tiu_cmd, kh) == 80, tiu_cmd_kh_offset);
KILN_STATIC_ASSERT(offsetof(kiln_tiu_cmd, param) == 104, tiu_cmd_param_offset);

/* ---- GDMA (data movement) ------------------------------------------------ */

typedef enum kiln_gdma_dir {
  KILN_GDMA_DDR_TO_LMEM = 0,
  KILN_GDMA_LMEM_TO_DDR = 1,
  KILN_GDMA_DDR_TO_DDR = 2,
  KILN_GDMA_LMEM_TO_LMEM = 3,
  KILN_GDMA_DIR_END
} kiln_gdma_dir;

/* Copies an [n, c, h, w] block of elements. A DDR side is addressed with
 * element strides (stride[0..3] for n, c, h, w; a stride of 0 repeats an
 * element, which is how expand and tile broadcast); an LMEM side uses the
 * LMEM layout of an [n, c, h, w] tensor at its address and ignores its
 * strides. With KILN_GDMA_FLAG_FILL the source is not read: every destination
 * element is set to the 32-bit pattern in the low half of src_addr (the high
 * half 0; a narrower dtype takes the pattern's low bytes).
 *
 * lmem_lane (ABI 1.6): the LMEM side's channel i sits on lane lmem_lane + i
 * (lmem_lane + c <= 64 when lmem_lane is not 0), at the per-lane addresses
 * of channel lmem_lane + i of an [n, lmem_lane + c, h, w] tensor at its
 * address: a load into channels [lmem_lane, lmem_lane + c) of a tensor
 * (TPU-MLIR's lane-offset loads, how a folded stem's kernel rows reach
 * channels of their own). */
#define KILN_GDMA_FLAG_FILL 0x1u
typedef struct kiln_gdma_cmd {
  uint32_t cmd_id;
  uint32_t wait_tiu_id;
  uint8_t dir;   /* kiln_gdma_dir */
  uint8_t dtype; /* kiln_dtype */
  uint16_t flags;
  uint32_t n, c, h, w;
  uint32_t lmem_plane_h; /* LMEM side: rows its planes hold (0: h), as in kiln_tiu_operand */
  uint64_t src_addr;
  uint64_t dst_addr;
  uint32_t src_stride[4];
  uint32_t dst_stride[4];
  uint32_t lmem_lane; /* LMEM side: lane of its first channel (ABI 1.6), see above */
  uint32_t reserved1[3];
} kiln_gdma_cmd;

/* Channels an LMEM side spans counted from lane 0: what its extent in each
 * lane is computed from. */
static inline uint32_t kiln_gdma_lmem_channels(const kiln_gdma_cmd *cmd) {
  uint32_t c;
  return __builtin_add_overflow(cmd->c, cmd->lmem_lane, &c) ? UINT32_MAX : c;
}

KILN_STATIC_ASSERT(sizeof(kiln_gdma_cmd) == 96, gdma_cmd_size);
KILN_STATIC_ASSERT(offsetof(kiln_gdma_cmd, src_addr) == 32, gdma_src_offset);
KILN_STATIC_ASSERT(offsetof(kiln_gdma_cmd, src_stride) == 48, gdma_stride_offset);

#endif
