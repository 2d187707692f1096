/* kiln firmware ABI: BM1684X's own TIU and GDMA command formats.
 *
 * The chip's commands are little-endian bit strings; bit k is bit k % 64 of
 * 64-bit word k / 64, fields are packed LSB first and none crosses a word.
 * Each class below is ONE field table (name, first bit, width); the struct,
 * the encoder, the decoder and the disassembler's field list are all
 * generated from it, so encode and decode cannot disagree.
 *
 * Source: the register tables TPU-MLIR's debugger decodes with
 * (python/debugger/target_1684x/regdef.py, cross-checked against torch-tpu's
 * bd_reg_def.h/gdma_reg_def.h and two public BM1684X bmodels), as restated
 * in shared/bm1684x/FACTS.md sections 1-3. Field names are the debugger's.
 *
 * kiln emits the short TIU forms (what TPU-MLIR's backend emits) and the
 * 96-byte GDMA forms (libbmrt splits a GDMA stream as 96-byte commands and a
 * final 16-byte sys), each engine's stream ended by its SYS command and
 * padded with zeros to KILN_BM_STREAM_ALIGN bytes. */
#ifndef KILN_ABI_BM1684X_H
#define KILN_ABI_BM1684X_H

#include <stddef.h>
#include <stdint.h>

/* ---- Memory map: the addresses commands carry ---------------------------- */

/* TIU operands address LMEM as lane << KILN_BM_LANE_SHIFT | offset (no base)
 * and static memory with its full address; GDMA addresses tell their memory
 * by range (there is no direction field). */
#define KILN_BM_LANE_SHIFT 18u
#define KILN_BM_LMEM_BASE 0x08000000ull /* GDMA: LMEM, 64 lanes of 256 KiB */
#define KILN_BM_LMEM_END 0x09000000ull
#define KILN_BM_SMEM_BASE 0x09000000ull /* static memory (SFU tables at 0) */
#define KILN_BM_L2_BASE 0x10000000ull   /* L2 SRAM */
#define KILN_BM_DDR_BASE 0x100000000ull /* DDR ("global memory") */
#define KILN_BM_STREAM_ALIGN 128u       /* each engine's stream is padded to this */

/* ---- Codes ----------------------------------------------------------------- */

/* Precision codes (TIU *_prec, GDMA src_data_format); integer signedness
 * is a separate *_sign bit. */
typedef enum kiln_bm_prec {
  KILN_BM_PREC_INT8 = 0,
  KILN_BM_PREC_FP16 = 1,
  KILN_BM_PREC_FP32 = 2,
  KILN_BM_PREC_INT16 = 3,
  KILN_BM_PREC_INT32 = 4,
  KILN_BM_PREC_BF16 = 5,
  KILN_BM_PREC_INT4 = 6,
  KILN_BM_PREC_FP8 = 7
} kiln_bm_prec;

/* Operand layouts (*_str): ALIGN_EU derives strides (w 1, h W, c the plane
 * rounded up to the EU, n that times the channel groups), COMPACT likewise
 * with unrounded planes, STRIDE takes the command's element strides. */
typedef enum kiln_bm_layout {
  KILN_BM_LAYOUT_ALIGN_EU = 0,
  KILN_BM_LAYOUT_COMPACT = 1,
  KILN_BM_LAYOUT_OFFSET = 2,
  KILN_BM_LAYOUT_STRIDE = 3,
  KILN_BM_LAYOUT_LINE = 4
} kiln_bm_layout;

/* Rounding modes (opd2_n_str of AR, RQ/DQ, PorD). */
typedef enum kiln_bm_round {
  KILN_BM_ROUND_HALF_EVEN = 0,
  KILN_BM_ROUND_HALF_AWAY = 1,
  KILN_BM_ROUND_TO_ZERO = 2,
  KILN_BM_ROUND_DOWN = 3,
  KILN_BM_ROUND_UP = 4,
  KILN_BM_ROUND_HALF_UP = 5,
  KILN_BM_ROUND_HALF_DOWN = 6
} kiln_bm_round;

/* TIU tsk_typ. */
typedef enum kiln_bm_tsk {
  KILN_BM_TSK_CONV = 0,
  KILN_BM_TSK_PORD = 1,
  KILN_BM_TSK_MM = 2,
  KILN_BM_TSK_AR = 3,
  KILN_BM_TSK_RQDQ = 4,
  KILN_BM_TSK_TRANS_BC = 5,
  KILN_BM_TSK_SG = 6,
  KILN_BM_TSK_LAR = 7,
  KILN_BM_TSK_SFU = 9,
  KILN_BM_TSK_LIN = 10,
  KILN_BM_TSK_CMP = 13,
  KILN_BM_TSK_VC = 14,
  KILN_BM_TSK_SYS = 15
} kiln_bm_tsk;

/* AR tsk_eu_typ. */
typedef enum kiln_bm_ar_op {
  KILN_BM_AR_MUL = 0,
  KILN_BM_AR_NOT = 1,
  KILN_BM_AR_ADD = 2,
  KILN_BM_AR_SUB = 3,
  KILN_BM_AR_MAX = 4,
  KILN_BM_AR_MIN = 5,
  KILN_BM_AR_LOGIC_SHIFT = 6,
  KILN_BM_AR_AND = 7,
  KILN_BM_AR_OR = 8,
  KILN_BM_AR_XOR = 9,
  KILN_BM_AR_SELECT_GREATER = 10,
  KILN_BM_AR_SELECT_EQUAL = 11,
  KILN_BM_AR_DIV = 12,
  KILN_BM_AR_SELECT_LESS = 13,
  KILN_BM_AR_DATA_CONVERT = 14,
  KILN_BM_AR_ADD_SATU = 15,
  KILN_BM_AR_SUB_SATU = 16,
  KILN_BM_AR_CLAMP = 17,
  KILN_BM_AR_MAC = 18,
  KILN_BM_AR_COPY = 19,
  KILN_BM_AR_MUL_SATU = 20,
  KILN_BM_AR_ARITH_SHIFT = 21,
  KILN_BM_AR_ROTATE_SHIFT = 22,
  KILN_BM_AR_MULDHR = 23,
  KILN_BM_AR_EU_IDX_GEN = 24,
  KILN_BM_AR_NPU_IDX_GEN = 25,
  KILN_BM_AR_ABS = 26,
  KILN_BM_AR_FSUBABS = 27,
  KILN_BM_AR_COPY_MB = 28,
  KILN_BM_AR_GET_FIRST_ONE = 29,
  KILN_BM_AR_GET_FIRST_ZERO = 30
} kiln_bm_ar_op;

/* SFU tsk_eu_typ (FACTS.md 1.5.8). */
typedef enum kiln_bm_sfu_op {
  KILN_BM_SFU_TAYLOR_4X = 12,
  KILN_BM_SFU_TAYLOR = 13,
  KILN_BM_SFU_NORM = 15,
  KILN_BM_SFU_RSQRT = 17 /* 1/sqrt(x): opd2_n_str + 1 Newton steps */
} kiln_bm_sfu_op;

/* SYS tsk_eu_typ that ends a TIU stream. */
#define KILN_BM_SYS_END 31u

/* GDMA cmd_type. */
typedef enum kiln_bm_gdma_type {
  KILN_BM_GDMA_TENSOR = 0,
  KILN_BM_GDMA_MATRIX = 1,
  KILN_BM_GDMA_MASKED_SELECT = 2,
  KILN_BM_GDMA_GENERAL = 3,
  KILN_BM_GDMA_CW_TRANSPOSE = 4,
  KILN_BM_GDMA_NONZERO = 5,
  KILN_BM_GDMA_SYS = 6,
  KILN_BM_GDMA_GATHER = 7,
  KILN_BM_GDMA_SCATTER = 8
} kiln_bm_gdma_type;

/* ---- Field tables -------------------------------------------------------- */
/* F(name, first bit, width), in bit order, covering every bit of the class. */

#define KILN_BM_TIU_LONG_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(eu_half_en, 50, 1) \
  F(tsk_opd_num, 51, 2) \
  F(pad_mode, 53, 2) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(intr_en, 63, 1) \
  F(res_add, 64, 1) \
  F(relu, 65, 1) \
  F(left_tran, 66, 1) \
  F(rsvd_67, 67, 1) \
  F(kernel_rotate, 68, 1) \
  F(opd0_sign, 69, 1) \
  F(opd1_sign, 70, 1) \
  F(opd2_sign, 71, 1) \
  F(res0_prec, 72, 3) \
  F(opd0_prec, 75, 3) \
  F(opd1_prec, 78, 3) \
  F(opd2_prec, 81, 3) \
  F(opd0_const, 84, 1) \
  F(opd1_const, 85, 1) \
  F(opd2_const, 86, 1) \
  F(res0_str, 87, 3) \
  F(opd0_str, 90, 3) \
  F(opd1_str, 93, 3) \
  F(opd2_str, 96, 3) \
  F(res_add_sign, 99, 1) \
  F(rsvd_100, 100, 25) \
  F(rsvd_125, 125, 1) \
  F(opd3_const, 126, 1) \
  F(rsvd_127, 127, 1) \
  F(opd0_x_ins0, 128, 4) \
  F(opd0_y_ins0, 132, 4) \
  F(opd1_x_ins0, 136, 4) \
  F(opd1_y_ins0, 140, 4) \
  F(opd0_up_pad, 144, 4) \
  F(opd0_dn_pad, 148, 4) \
  F(opd0_lf_pad, 152, 4) \
  F(opd0_rt_pad, 156, 4) \
  F(res_op_x_str, 160, 4) \
  F(res_op_y_str, 164, 4) \
  F(res0_h_shift, 168, 4) \
  F(res0_w_shift, 172, 4) \
  F(opd0_h_shift, 176, 4) \
  F(opd0_w_shift, 180, 4) \
  F(opd1_h_shift, 184, 4) \
  F(opd1_w_shift, 188, 4) \
  F(tsk_lane_num, 192, 64) \
  F(res0_n, 256, 16) \
  F(res0_c, 272, 16) \
  F(res0_h, 288, 16) \
  F(res0_w, 304, 16) \
  F(opd0_n, 320, 16) \
  F(opd0_c, 336, 16) \
  F(opd0_h, 352, 16) \
  F(opd0_w, 368, 16) \
  F(opd1_n, 384, 16) \
  F(opd1_c, 400, 16) \
  F(opd1_h, 416, 16) \
  F(opd1_w, 432, 16) \
  F(res0_n_str, 448, 16) \
  F(res0_c_str, 464, 16) \
  F(opd0_n_str, 480, 16) \
  F(opd0_c_str, 496, 16) \
  F(opd1_n_str, 512, 16) \
  F(opd1_c_str, 528, 16) \
  F(opd2_n_str, 544, 16) \
  F(opd2_c_str, 560, 16) \
  F(res0_addr, 576, 32) \
  F(opd0_addr, 608, 32) \
  F(opd1_addr, 640, 32) \
  F(opd2_addr, 672, 32) \
  F(res0_h_str, 704, 32) \
  F(res0_w_str, 736, 32) \
  F(opd0_h_str, 768, 32) \
  F(opd0_w_str, 800, 32) \
  F(opd1_h_str, 832, 32) \
  F(opd1_w_str, 864, 32) \
  F(opd2_h_str, 896, 32) \
  F(opd2_w_str, 928, 32) \
  F(res1_addr, 960, 32) \
  F(opd3_addr, 992, 32)

#define KILN_BM_SCONV_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(opd0_sign, 50, 1) \
  F(opd1_sign, 51, 1) \
  F(opd2_sign, 52, 1) \
  F(pad_mode, 53, 2) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(res_add, 63, 1) \
  F(kernel_rotate, 64, 1) \
  F(res0_prec, 65, 3) \
  F(opd0_prec, 68, 3) \
  F(opd1_const, 71, 1) \
  F(opd2_const, 72, 1) \
  F(opd0_up_pad, 73, 4) \
  F(opd0_dn_pad, 77, 4) \
  F(opd0_lf_pad, 81, 4) \
  F(opd0_rt_pad, 85, 4) \
  F(res_op_x_str, 89, 4) \
  F(res_op_y_str, 93, 4) \
  F(opd3_const, 97, 1) \
  F(opd0_str, 98, 3) \
  F(res0_addr, 101, 26) \
  F(intr_en, 127, 1) \
  F(opd0_x_ins0, 128, 4) \
  F(opd0_y_ins0, 132, 4) \
  F(opd1_x_ins0, 136, 4) \
  F(opd1_y_ins0, 140, 4) \
  F(opd0_n_str, 144, 16) \
  F(res0_n, 160, 16) \
  F(res0_c, 176, 16) \
  F(res0_h, 192, 16) \
  F(res0_w, 208, 16) \
  F(opd0_c, 224, 16) \
  F(opd0_h, 240, 16) \
  F(opd0_w, 256, 16) \
  F(opd1_h, 272, 16) \
  F(opd1_w, 288, 16) \
  F(opd0_c_str, 304, 16) \
  F(opd0_addr, 320, 32) \
  F(opd1_addr, 352, 32) \
  F(opd2_addr, 384, 32) \
  F(res1_addr, 416, 32) \
  F(opd3_addr, 448, 32) \
  F(opd0_h_str, 480, 16) \
  F(opd0_w_str, 496, 16)

#define KILN_BM_SPORD_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(kernel_rotate, 50, 1) \
  F(opd0_sign, 51, 1) \
  F(opd1_sign, 52, 1) \
  F(pad_mode, 53, 2) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(opd1_const, 63, 1) \
  F(opd2_const, 64, 1) \
  F(opd3_const, 65, 1) \
  F(res0_prec, 66, 3) \
  F(opd0_prec, 69, 3) \
  F(opd0_x_ins0, 72, 4) \
  F(opd0_y_ins0, 76, 4) \
  F(opd1_x_ins0, 80, 4) \
  F(opd1_y_ins0, 84, 4) \
  F(opd0_up_pad, 88, 4) \
  F(opd0_dn_pad, 92, 4) \
  F(opd0_lf_pad, 96, 4) \
  F(opd0_rt_pad, 100, 4) \
  F(res_op_x_str, 104, 4) \
  F(res_op_y_str, 108, 4) \
  F(opd2_n_str, 112, 3) \
  F(rsvd_115, 115, 11) \
  F(opd2_sign, 126, 1) \
  F(intr_en, 127, 1) \
  F(res0_n, 128, 16) \
  F(res0_c, 144, 16) \
  F(res0_h, 160, 16) \
  F(res0_w, 176, 16) \
  F(opd0_h, 192, 16) \
  F(opd0_w, 208, 16) \
  F(opd1_h, 224, 16) \
  F(opd1_w, 240, 16) \
  F(res0_addr, 256, 32) \
  F(opd0_addr, 288, 32) \
  F(opd1_addr, 320, 32) \
  F(opd2_addr, 352, 32) \
  F(res1_addr, 384, 32) \
  F(opd3_addr, 416, 32) \
  F(rsvd_448, 448, 64)

#define KILN_BM_SMM_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(res_add, 50, 1) \
  F(left_tran, 51, 1) \
  F(opd0_const, 52, 1) \
  F(opd2_const, 53, 1) \
  F(rsvd_54, 54, 1) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(intr_en, 63, 1) \
  F(opd0_sign, 64, 1) \
  F(opd1_sign, 65, 1) \
  F(opd2_sign, 66, 1) \
  F(res0_prec, 67, 3) \
  F(opd0_prec, 70, 3) \
  F(opd2_n_str, 73, 3) \
  F(rsvd_76, 76, 20) \
  F(rsvd_96, 96, 16) \
  F(res0_c, 112, 16) \
  F(res0_w, 128, 16) \
  F(opd0_n, 144, 16) \
  F(opd0_c, 160, 16) \
  F(opd0_w, 176, 16) \
  F(rsvd_192, 192, 16) \
  F(opd1_w, 208, 16) \
  F(res0_addr, 224, 32) \
  F(opd0_addr, 256, 32) \
  F(opd1_addr, 288, 32) \
  F(opd2_addr, 320, 32) \
  F(opd3_addr, 352, 32)

#define KILN_BM_SMM2_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(opd0_sign, 50, 1) \
  F(opd1_sign, 51, 1) \
  F(res0_prec, 52, 3) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(opd2_const, 63, 1) \
  F(res0_c, 64, 16) \
  F(res0_w, 80, 16) \
  F(opd1_c, 96, 16) \
  F(opd1_w, 112, 16) \
  F(opd0_prec, 128, 3) \
  F(opd0_const, 131, 1) \
  F(opd1_const, 132, 1) \
  F(res_add, 133, 1) \
  F(res0_addr, 134, 25) \
  F(intr_en, 159, 1) \
  F(opd0_addr, 160, 32) \
  F(opd1_addr, 192, 32) \
  F(opd2_addr, 224, 32)

#define KILN_BM_SAR_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(opd0_const, 50, 1) \
  F(opd1_const, 51, 1) \
  F(opd2_const, 52, 1) \
  F(tsk_opd_num, 53, 2) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(intr_en, 63, 1) \
  F(res0_prec, 64, 3) \
  F(opd0_prec, 67, 3) \
  F(opd1_prec, 70, 3) \
  F(opd2_prec, 73, 3) \
  F(opd0_sign, 76, 1) \
  F(opd1_sign, 77, 1) \
  F(res0_str, 78, 3) \
  F(opd0_str, 81, 3) \
  F(opd1_str, 84, 3) \
  F(opd2_n_str, 87, 3) \
  F(rsvd_90, 90, 6) \
  F(res0_n, 96, 16) \
  F(res0_c, 112, 16) \
  F(res0_h, 128, 16) \
  F(res0_w, 144, 16) \
  F(res0_addr, 160, 32) \
  F(opd0_addr, 192, 32) \
  F(opd1_addr, 224, 32) \
  F(opd2_addr, 256, 32) \
  F(res0_n_str, 288, 16) \
  F(res0_c_str, 304, 16) \
  F(opd0_n_str, 320, 16) \
  F(opd0_c_str, 336, 16) \
  F(opd1_n_str, 352, 16) \
  F(opd1_c_str, 368, 16) \
  F(res0_h_str, 384, 20) \
  F(res0_w_str, 404, 20) \
  F(opd0_h_str, 424, 20) \
  F(opd2_sign, 444, 1) \
  F(rsvd_445, 445, 3) \
  F(opd0_w_str, 448, 20) \
  F(opd1_h_str, 468, 20) \
  F(opd1_w_str, 488, 20) \
  F(rsvd_508, 508, 4)

#define KILN_BM_SRQDQ_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(opd0_sign, 50, 1) \
  F(opd2_sign, 51, 1) \
  F(res0_prec, 52, 3) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(opd1_const, 63, 1) \
  F(opd0_prec, 64, 3) \
  F(opd2_n_str, 67, 6) \
  F(res0_addr, 73, 27) \
  F(opd0_addr, 100, 27) \
  F(intr_en, 127, 1) \
  F(res0_n, 128, 16) \
  F(res0_c, 144, 16) \
  F(res0_h, 160, 16) \
  F(res0_w, 176, 16) \
  F(opd1_addr, 192, 32) \
  F(opd2_addr, 224, 32)

#define KILN_BM_STRANS_BC_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(res0_prec, 50, 3) \
  F(rsvd_53, 53, 2) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(intr_en, 63, 1) \
  F(res0_n, 64, 16) \
  F(res0_c, 80, 16) \
  F(res0_h, 96, 16) \
  F(res0_w, 112, 16) \
  F(opd0_c, 128, 16) \
  F(opd0_w, 144, 16) \
  F(rsvd_160, 160, 32) \
  F(res0_addr, 192, 32) \
  F(opd0_addr, 224, 32)

#define KILN_BM_SSG_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(opd3_const, 50, 1) \
  F(intr_en, 51, 1) \
  F(opd0_str, 52, 3) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(opd2_const, 63, 1) \
  F(res0_n, 64, 16) \
  F(res0_c, 80, 16) \
  F(res0_h, 96, 16) \
  F(res0_w, 112, 16) \
  F(opd0_h, 128, 16) \
  F(opd0_w, 144, 16) \
  F(opd1_c, 160, 16) \
  F(opd1_w, 176, 16) \
  F(res0_prec, 192, 3) \
  F(res0_addr, 195, 29) \
  F(opd0_prec, 224, 3) \
  F(opd0_addr, 227, 29) \
  F(opd1_prec, 256, 3) \
  F(opd1_addr, 259, 29) \
  F(opd2_addr, 288, 32) \
  F(res1_addr, 320, 32) \
  F(opd3_addr, 352, 32)

#define KILN_BM_SSGL_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(rsvd_50, 50, 3) \
  F(opd3_const, 53, 1) \
  F(intr_en, 54, 1) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(opd2_const, 63, 1) \
  F(res0_prec, 64, 3) \
  F(opd1_prec, 67, 3) \
  F(opd0_str, 70, 3) \
  F(rsvd_73, 73, 7) \
  F(res0_n, 80, 16) \
  F(res0_c, 96, 16) \
  F(res0_h, 112, 16) \
  F(res0_w, 128, 16) \
  F(opd0_h, 144, 16) \
  F(res0_addr, 160, 32) \
  F(opd0_addr, 192, 32) \
  F(opd1_addr, 224, 32) \
  F(opd2_addr, 256, 32) \
  F(res1_addr, 288, 32) \
  F(rsvd_320, 320, 64)

#define KILN_BM_SSFU_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(rsvd_50, 50, 5) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(intr_en, 63, 1) \
  F(res0_prec, 64, 3) \
  F(opd0_prec, 67, 3) \
  F(opd2_n_str, 70, 2) \
  F(rsvd_72, 72, 8) \
  F(res0_n, 80, 16) \
  F(res0_c, 96, 16) \
  F(res0_h, 112, 16) \
  F(res0_w, 128, 16) \
  F(opd1_n, 144, 16) \
  F(res0_addr, 160, 32) \
  F(opd0_addr, 192, 32) \
  F(opd1_addr, 224, 32)

#define KILN_BM_SLIN_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(opd1_const, 50, 1) \
  F(opd2_const, 51, 1) \
  F(res0_prec, 52, 3) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(intr_en, 63, 1) \
  F(res0_n, 64, 16) \
  F(res0_c, 80, 16) \
  F(res0_h, 96, 16) \
  F(res0_w, 112, 16) \
  F(res0_addr, 128, 32) \
  F(opd0_addr, 160, 32) \
  F(opd1_addr, 192, 32) \
  F(opd2_addr, 224, 32)

#define KILN_BM_SCMP_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(opd0_const, 50, 1) \
  F(opd1_const, 51, 1) \
  F(opd2_const, 52, 1) \
  F(opd3_const, 53, 1) \
  F(rsvd_54, 54, 1) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(intr_en, 63, 1) \
  F(opd0_prec, 64, 3) \
  F(opd2_prec, 67, 3) \
  F(opd0_str, 70, 3) \
  F(opd1_str, 73, 3) \
  F(rsvd_76, 76, 51) \
  F(opd0_sign, 127, 1) \
  F(res0_n, 128, 16) \
  F(res0_c, 144, 16) \
  F(res0_h, 160, 16) \
  F(res0_w, 176, 16) \
  F(res0_addr, 192, 32) \
  F(res1_addr, 224, 32) \
  F(opd0_addr, 256, 32) \
  F(opd1_addr, 288, 32) \
  F(opd2_addr, 320, 32) \
  F(opd3_addr, 352, 32)

#define KILN_BM_SVC_FIELDS(F) \
  F(cmd_short, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(opd0_sign, 50, 1) \
  F(opd1_sign, 51, 1) \
  F(opd2_n_str, 52, 3) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(intr_en, 63, 1) \
  F(res0_prec, 64, 3) \
  F(opd0_prec, 67, 3) \
  F(opd1_prec, 70, 3) \
  F(res0_addr, 73, 32) \
  F(rsvd_105, 105, 23) \
  F(opd0_addr, 128, 32) \
  F(rsvd_160, 160, 16) \
  F(res0_c, 176, 16) \
  F(res0_w, 192, 16) \
  F(opd0_c, 208, 16) \
  F(opd0_w, 224, 16) \
  F(opd1_w, 240, 16) \
  F(opd1_addr, 256, 32) \
  F(opd2_addr, 288, 32) \
  F(rsvd_320, 320, 64)

#define KILN_BM_SYSID_FIELDS(F) \
  F(rsvd_0, 0, 1) \
  F(cmd_id, 1, 20) \
  F(cmd_id_dep, 21, 20) \
  F(tsk_typ, 41, 4) \
  F(tsk_eu_typ, 45, 5) \
  F(rsvd_50, 50, 5) \
  F(cmd_id_en, 55, 4) \
  F(pwr_step, 59, 4) \
  F(intr_en, 63, 1) \
  F(cmd_id_eng1, 64, 20) \
  F(cmd_id_eng2, 84, 20) \
  F(cmd_id_eng3, 104, 20) \
  F(rsvd_124, 124, 4)

#define KILN_BM_DMA_TENSOR_FIELDS(F) \
  F(intr_en, 0, 1) \
  F(stride_enable, 1, 1) \
  F(nchw_copy, 2, 1) \
  F(cmd_short, 3, 1) \
  F(decompress_enable, 4, 1) \
  F(cmd_id_en, 5, 4) \
  F(cmd_id, 9, 20) \
  F(rsvd_29, 29, 3) \
  F(cmd_type, 32, 4) \
  F(cmd_special_function, 36, 3) \
  F(fill_constant_en, 39, 1) \
  F(src_data_format, 40, 3) \
  F(rsvd_43, 43, 21) \
  F(cmd_id_dep, 64, 20) \
  F(rsvd_84, 84, 12) \
  F(constant_value, 96, 32) \
  F(src_nstride, 128, 32) \
  F(src_cstride, 160, 32) \
  F(src_hstride, 192, 32) \
  F(src_wstride, 224, 32) \
  F(dst_nstride, 256, 32) \
  F(dst_cstride, 288, 32) \
  F(dst_hstride, 320, 32) \
  F(dst_wstride, 352, 32) \
  F(src_nsize, 384, 16) \
  F(src_csize, 400, 16) \
  F(src_hsize, 416, 16) \
  F(src_wsize, 432, 16) \
  F(dst_nsize, 448, 16) \
  F(dst_csize, 464, 16) \
  F(dst_hsize, 480, 16) \
  F(dst_wsize, 496, 16) \
  F(src_start_addr_l32, 512, 32) \
  F(src_start_addr_h8, 544, 8) \
  F(rsvd_552, 552, 24) \
  F(dst_start_addr_l32, 576, 32) \
  F(dst_start_addr_h8, 608, 8) \
  F(rsvd_616, 616, 24) \
  F(rsvd_640, 640, 32) \
  F(rsvd_672, 672, 32) \
  F(localmem_mask_l32, 704, 32) \
  F(localmem_mask_h32, 736, 32)

#define KILN_BM_DMA_MATRIX_FIELDS(F) \
  F(intr_en, 0, 1) \
  F(stride_enable, 1, 1) \
  F(nchw_copy, 2, 1) \
  F(cmd_short, 3, 1) \
  F(decompress_enable, 4, 1) \
  F(cmd_id_en, 5, 4) \
  F(cmd_id, 9, 20) \
  F(rsvd_29, 29, 3) \
  F(cmd_type, 32, 4) \
  F(cmd_special_function, 36, 3) \
  F(fill_constant_en, 39, 1) \
  F(src_data_format, 40, 3) \
  F(rsvd_43, 43, 21) \
  F(cmd_id_dep, 64, 20) \
  F(rsvd_84, 84, 12) \
  F(constant_value, 96, 32) \
  F(src_nstride, 128, 32) \
  F(src_cstride, 160, 32) \
  F(src_hstride, 192, 32) \
  F(src_wstride, 224, 32) \
  F(dst_nstride, 256, 32) \
  F(dst_cstride, 288, 32) \
  F(dst_hstride, 320, 32) \
  F(dst_wstride, 352, 32) \
  F(src_nsize, 384, 16) \
  F(src_csize, 400, 16) \
  F(src_hsize, 416, 16) \
  F(src_wsize, 432, 16) \
  F(dst_nsize, 448, 16) \
  F(dst_csize, 464, 16) \
  F(dst_hsize, 480, 16) \
  F(dst_wsize, 496, 16) \
  F(src_start_addr_h32, 512, 32) \
  F(src_start_addr_l8, 544, 8) \
  F(rsvd_552, 552, 24) \
  F(dst_start_addr_h32, 576, 32) \
  F(dst_start_addr_l8, 608, 8) \
  F(rsvd_616, 616, 24) \
  F(rsvd_640, 640, 32) \
  F(rsvd_672, 672, 32) \
  F(localmem_mask_l32, 704, 32) \
  F(localmem_mask_h32, 736, 32)

#define KILN_BM_DMA_GENERAL_FIELDS(F) \
  F(intr_en, 0, 1) \
  F(stride_enable, 1, 1) \
  F(nchw_copy, 2, 1) \
  F(cmd_short, 3, 1) \
  F(decompress_enable, 4, 1) \
  F(cmd_id_en, 5, 4) \
  F(cmd_id, 9, 20) \
  F(rsvd_29, 29, 3) \
  F(cmd_type, 32, 4) \
  F(cmd_special_function, 36, 3) \
  F(fill_constant_en, 39, 1) \
  F(src_data_format, 40, 3) \
  F(rsvd_43, 43, 21) \
  F(cmd_id_dep, 64, 20) \
  F(rsvd_84, 84, 12) \
  F(constant_value, 96, 32) \
  F(src_nstride, 128, 32) \
  F(src_cstride, 160, 32) \
  F(src_hstride, 192, 32) \
  F(src_wstride, 224, 32) \
  F(dst_nstride, 256, 32) \
  F(dst_cstride, 288, 32) \
  F(dst_hstride, 320, 32) \
  F(dst_wstride, 352, 32) \
  F(src_nsize, 384, 16) \
  F(src_csize, 400, 16) \
  F(src_hsize, 416, 16) \
  F(src_wsize, 432, 16) \
  F(dst_nsize, 448, 16) \
  F(dst_csize, 464, 16) \
  F(dst_hsize, 480, 16) \
  F(dst_wsize, 496, 16) \
  F(src_start_addr_l32, 512, 32) \
  F(src_start_addr_h8, 544, 8) \
  F(rsvd_552, 552, 24) \
  F(dst_start_addr_l32, 576, 32) \
  F(dst_start_addr_h8, 608, 8) \
  F(rsvd_616, 616, 24) \
  F(rsvd_640, 640, 32) \
  F(rsvd_672, 672, 32) \
  F(localmem_mask_l32, 704, 32) \
  F(localmem_mask_h32, 736, 32)

#define KILN_BM_DMA_GATHER_SCATTER_FIELDS(F) \
  F(intr_en, 0, 1) \
  F(stride_enable, 1, 1) \
  F(nchw_copy, 2, 1) \
  F(cmd_short, 3, 1) \
  F(decompress_enable, 4, 1) \
  F(cmd_id_en, 5, 4) \
  F(cmd_id, 9, 20) \
  F(rsvd_29, 29, 3) \
  F(cmd_type, 32, 4) \
  F(cmd_special_function, 36, 3) \
  F(fill_constant_en, 39, 1) \
  F(src_data_format, 40, 3) \
  F(rsvd_43, 43, 21) \
  F(cmd_id_dep, 64, 20) \
  F(rsvd_84, 84, 12) \
  F(constant_value, 96, 32) \
  F(src_cstride, 128, 32) \
  F(src_hstride, 160, 32) \
  F(dst_cstride, 192, 32) \
  F(dst_hstride, 224, 32) \
  F(index_cstride, 256, 32) \
  F(index_hstride, 288, 32) \
  F(rsvd_320, 320, 16) \
  F(src_csize, 336, 16) \
  F(src_hsize, 352, 32) \
  F(src_wsize, 384, 16) \
  F(dst_csize, 400, 16) \
  F(dst_hsize, 416, 32) \
  F(dst_wsize, 448, 16) \
  F(index_csize, 464, 16) \
  F(index_hsize, 480, 32) \
  F(src_start_addr_l32, 512, 32) \
  F(src_start_addr_h8, 544, 8) \
  F(rsvd_552, 552, 24) \
  F(dst_start_addr_l32, 576, 32) \
  F(dst_start_addr_h8, 608, 8) \
  F(rsvd_616, 616, 24) \
  F(index_start_addr_l32, 640, 32) \
  F(index_start_addr_h8, 672, 8) \
  F(rsvd_680, 680, 24) \
  F(localmem_mask_l32, 704, 32) \
  F(localmem_mask_h32, 736, 32)

#define KILN_BM_DMA_SYS_FIELDS(F) \
  F(intr_en, 0, 1) \
  F(stride_enable, 1, 1) \
  F(nchw_copy, 2, 1) \
  F(cmd_short, 3, 1) \
  F(decompress_enable, 4, 1) \
  F(cmd_id_en, 5, 4) \
  F(cmd_id, 9, 20) \
  F(rsvd_29, 29, 3) \
  F(cmd_type, 32, 4) \
  F(cmd_special_function, 36, 3) \
  F(fill_constant_en, 39, 1) \
  F(src_data_format, 40, 3) \
  F(rsvd_43, 43, 21) \
  F(cmd_id_dep, 64, 20) \
  F(rsvd_84, 84, 12) \
  F(constant_value, 96, 32)

/* The classes kiln reads and writes: X(ENUM, lower-case name, bytes,
 * field table). TIU_LONG is the one 128-byte layout every long TIU form
 * shares; DMA_GATHER_SCATTER serves cmd_type 7 and 8; the SYS classes end a
 * stream. */
#define KILN_BM_CLASSES(X) \
  X(TIU_LONG, tiu_long, 128u, KILN_BM_TIU_LONG_FIELDS) \
  X(SCONV, sconv, 64u, KILN_BM_SCONV_FIELDS) \
  X(SPORD, spord, 64u, KILN_BM_SPORD_FIELDS) \
  X(SMM, smm, 48u, KILN_BM_SMM_FIELDS) \
  X(SMM2, smm2, 32u, KILN_BM_SMM2_FIELDS) \
  X(SAR, sar, 64u, KILN_BM_SAR_FIELDS) \
  X(SRQDQ, srqdq, 32u, KILN_BM_SRQDQ_FIELDS) \
  X(STRANS_BC, strans_bc, 32u, KILN_BM_STRANS_BC_FIELDS) \
  X(SSG, ssg, 48u, KILN_BM_SSG_FIELDS) \
  X(SSGL, ssgl, 48u, KILN_BM_SSGL_FIELDS) \
  X(SSFU, ssfu, 32u, KILN_BM_SSFU_FIELDS) \
  X(SLIN, slin, 32u, KILN_BM_SLIN_FIELDS) \
  X(SCMP, scmp, 48u, KILN_BM_SCMP_FIELDS) \
  X(SVC, svc, 48u, KILN_BM_SVC_FIELDS) \
  X(SYSID, sysid, 16u, KILN_BM_SYSID_FIELDS) \
  X(DMA_TENSOR, dma_tensor, 96u, KILN_BM_DMA_TENSOR_FIELDS) \
  X(DMA_MATRIX, dma_matrix, 96u, KILN_BM_DMA_MATRIX_FIELDS) \
  X(DMA_GENERAL, dma_general, 96u, KILN_BM_DMA_GENERAL_FIELDS) \
  X(DMA_GATHER_SCATTER, dma_gather_scatter, 96u, KILN_BM_DMA_GATHER_SCATTER_FIELDS) \
  X(DMA_SYS, dma_sys, 16u, KILN_BM_DMA_SYS_FIELDS)

#define KILN_BM_CLASS_ENUM_(E, n, bytes, fields) KILN_BM_CLASS_##E,
typedef enum kiln_bm_class {
  KILN_BM_CLASS_NONE = 0,
  KILN_BM_CLASSES(KILN_BM_CLASS_ENUM_)
  KILN_BM_CLASS_COUNT
} kiln_bm_class;
#undef KILN_BM_CLASS_ENUM_

/* KILN_BM_<class>_BYTES: each class's size. */
#define KILN_BM_CLASS_BYTES_(E, n, bytes, fields) KILN_BM_##E##_BYTES = bytes,
enum kiln_bm_class_bytes_ { KILN_BM_CLASSES(KILN_BM_CLASS_BYTES_) KILN_BM_MAX_CMD_BYTES = 128u };
#undef KILN_BM_CLASS_BYTES_

/* ---- Bit access ---------------------------------------------------------- */

static inline uint64_t kiln_bm_word(const uint8_t *cmd, uint32_t word) {
  uint64_t v = 0;
  uint32_t i;
  for (i = 0; i < 8u; ++i) v |= (uint64_t)cmd[word * 8u + i] << (8u * i);
  return v;
}
static inline uint64_t kiln_bm_mask(uint32_t width) {
  return width >= 64u ? ~(uint64_t)0 : ((uint64_t)1 << width) - 1u;
}
/* The field at first bit `bit`, `width` bits, of a command; the command
 * must hold the whole 64-bit word the field lies in. */
static inline uint64_t kiln_bm_get(const uint8_t *cmd, uint32_t bit, uint32_t width) {
  return kiln_bm_word(cmd, bit / 64u) >> (bit % 64u) & kiln_bm_mask(width);
}
static inline void kiln_bm_set(uint8_t *cmd, uint32_t bit, uint32_t width, uint64_t value) {
  uint32_t word = bit / 64u, i;
  uint64_t mask = kiln_bm_mask(width) << (bit % 64u);
  uint64_t v = (kiln_bm_word(cmd, word) & ~mask) | (value << (bit % 64u) & mask);
  for (i = 0; i < 8u; ++i) cmd[word * 8u + i] = (uint8_t)(v >> (8u * i));
}

/* ---- Per class: struct, encoder, decoder, field list --------------------- */

/* One named field, for listing a command (the disassembler). */
typedef struct kiln_bm_field {
  const char *name;
  uint16_t bit;
  uint8_t width;
} kiln_bm_field;

#define KILN_BM_MEMBER_(name, bit, width) uint64_t name;
#define KILN_BM_DECODE_(name, bit, width) out->name = kiln_bm_get(cmd, bit, width);
#define KILN_BM_ENCODE_(name, bit, width) \
  if (in->name > kiln_bm_mask(width) && !bad) bad = #name; \
  kiln_bm_set(cmd, bit, width, in->name);
#define KILN_BM_DESC_(name, bit, width) {#name, bit, width},
/* kiln_bm_<class>: every field as a uint64_t. _decode reads all of a
 * command's fields; _encode writes them all over `bytes` bytes and returns
 * NULL, or the name of the first field whose value does not fit (then the
 * field holds the value's low bits). */
#define KILN_BM_DEFINE_CLASS_(E, n, bytes, fields) \
  typedef struct kiln_bm_##n { fields(KILN_BM_MEMBER_) } kiln_bm_##n; \
  static inline void kiln_bm_##n##_decode(const uint8_t *cmd, kiln_bm_##n *out) { \
    fields(KILN_BM_DECODE_) \
  } \
  static inline const char *kiln_bm_##n##_encode(const kiln_bm_##n *in, uint8_t *cmd) { \
    const char *bad = NULL; \
    uint32_t i; \
    for (i = 0; i < (bytes); ++i) cmd[i] = 0; \
    fields(KILN_BM_ENCODE_) \
    return bad; \
  }
KILN_BM_CLASSES(KILN_BM_DEFINE_CLASS_)
#undef KILN_BM_DEFINE_CLASS_
#undef KILN_BM_MEMBER_
#undef KILN_BM_DECODE_
#undef KILN_BM_ENCODE_

/* A class's name, size in bytes and field list (count in *count). */
static inline const char *kiln_bm_class_name(kiln_bm_class c) {
#define KILN_BM_NAME_(E, n, bytes, fields) case KILN_BM_CLASS_##E: return #n;
  switch (c) {
  KILN_BM_CLASSES(KILN_BM_NAME_)
  default: return "none";
  }
#undef KILN_BM_NAME_
}
static inline uint32_t kiln_bm_class_bytes(kiln_bm_class c) {
#define KILN_BM_BYTES_(E, n, bytes, fields) case KILN_BM_CLASS_##E: return bytes;
  switch (c) {
  KILN_BM_CLASSES(KILN_BM_BYTES_)
  default: return 0u;
  }
#undef KILN_BM_BYTES_
}
static inline const kiln_bm_field *kiln_bm_class_fields(kiln_bm_class c, uint32_t *count) {
#define KILN_BM_FIELDS_(E, n, bytes, fields) \
  case KILN_BM_CLASS_##E: { \
    static const kiln_bm_field table[] = {fields(KILN_BM_DESC_)}; \
    *count = (uint32_t)(sizeof table / sizeof table[0]); \
    return table; \
  }
  switch (c) {
  KILN_BM_CLASSES(KILN_BM_FIELDS_)
  default: *count = 0u; return NULL;
  }
#undef KILN_BM_FIELDS_
}
#undef KILN_BM_DESC_

/* ---- Classifying a command in a stream ------------------------------------ */

/* The class of the TIU command at cmd (at least 8 bytes readable), by its
 * cmd_short bit, tsk_typ and tsk_eu_typ as the chip and libbmrt split a
 * stream; NONE for a form kiln does not handle (LAR, SEG, unknown). */
static inline kiln_bm_class kiln_bm_tiu_class(const uint8_t *cmd) {
  uint32_t tsk = (uint32_t)kiln_bm_get(cmd, 41u, 4u);
  uint32_t eu = (uint32_t)kiln_bm_get(cmd, 45u, 5u);
  if (tsk == KILN_BM_TSK_SYS) return KILN_BM_CLASS_SYSID;
  if (tsk == KILN_BM_TSK_LAR || tsk == 8u || tsk == 11u || tsk == 12u) return KILN_BM_CLASS_NONE;
  if (!kiln_bm_get(cmd, 0u, 1u)) return KILN_BM_CLASS_TIU_LONG;
  switch (tsk) {
  case KILN_BM_TSK_CONV: return KILN_BM_CLASS_SCONV;
  case KILN_BM_TSK_PORD: return KILN_BM_CLASS_SPORD;
  case KILN_BM_TSK_MM:
    return eu >= 1u && eu <= 3u ? KILN_BM_CLASS_SMM
           : eu >= 4u && eu <= 6u ? KILN_BM_CLASS_SMM2 : KILN_BM_CLASS_NONE;
  case KILN_BM_TSK_AR: return KILN_BM_CLASS_SAR;
  case KILN_BM_TSK_RQDQ: return KILN_BM_CLASS_SRQDQ;
  case KILN_BM_TSK_TRANS_BC: return KILN_BM_CLASS_STRANS_BC;
  case KILN_BM_TSK_SG: return eu <= 16u ? KILN_BM_CLASS_SSG : eu <= 19u ? KILN_BM_CLASS_SSGL : KILN_BM_CLASS_NONE;
  case KILN_BM_TSK_SFU: return KILN_BM_CLASS_SSFU;
  case KILN_BM_TSK_LIN: return KILN_BM_CLASS_SLIN;
  case KILN_BM_TSK_CMP: return KILN_BM_CLASS_SCMP;
  case KILN_BM_TSK_VC: return KILN_BM_CLASS_SVC;
  default: return KILN_BM_CLASS_NONE;
  }
}

/* The class of the GDMA command at cmd (at least 8 bytes readable): the
 * 96-byte forms and the 16-byte sys; NONE for short forms and the masked
 * select / nonzero / CW-transpose forms kiln does not emit. */
static inline kiln_bm_class kiln_bm_gdma_class(const uint8_t *cmd) {
  uint32_t type = (uint32_t)kiln_bm_get(cmd, 32u, 4u);
  uint32_t is_short = (uint32_t)kiln_bm_get(cmd, 3u, 1u);
  if (type == KILN_BM_GDMA_SYS) return is_short ? KILN_BM_CLASS_DMA_SYS : KILN_BM_CLASS_NONE;
  if (is_short) return KILN_BM_CLASS_NONE;
  switch (type) {
  case KILN_BM_GDMA_TENSOR: return KILN_BM_CLASS_DMA_TENSOR;
  case KILN_BM_GDMA_MATRIX: return KILN_BM_CLASS_DMA_MATRIX;
  case KILN_BM_GDMA_GENERAL: return KILN_BM_CLASS_DMA_GENERAL;
  case KILN_BM_GDMA_GATHER: case KILN_BM_GDMA_SCATTER: return KILN_BM_CLASS_DMA_GATHER_SCATTER;
  default: return KILN_BM_CLASS_NONE;
  }
}

/* A GDMA address's 40 bits from its l32/h8 halves. */
static inline uint64_t kiln_bm_gdma_addr(uint64_t l32, uint64_t h8) { return h8 << 32 | l32; }

#endif
