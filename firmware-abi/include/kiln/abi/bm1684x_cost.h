/* kiln firmware ABI: cost.h's cycle model charging BM1684X's own commands.
 *
 * Each real command is charged by the rule cost.h applies to the kiln record
 * doing the same work, from the same chip facts (chip.h): an sCONV as a conv
 * (output pixels, input channels per IC-parallel block, kernel taps, 64
 * channels per pass), an sPorD as pooling, an sAR/sCMP/sTRANS&BC as one EU
 * pass over its result (a conversion or requant at the rate of its wider
 * side), an sMM2 as a 1x1 conv whose rows are output channels, a
 * DMA_tensor as a copy of its bytes in bursts at its direction's bandwidth,
 * and an SFU command (Taylor series, 1/sqrt) or an sAR DIV (which runs the
 * SFU's 1/sqrt) as a transcendental activation. A sigmoid is thus charged as
 * the twenty-odd commands it becomes, not as one record. Every command pays
 * the per-command overhead; the ends and sync commands are free.
 *
 * Freestanding C99, integer math only. Not in the runtime core: the cmodel,
 * inspect and the compiler use it. */
#ifndef KILN_ABI_BM1684X_COST_H
#define KILN_ABI_BM1684X_COST_H

#include <stdint.h>

#include "kiln/abi/bm1684x.h"
#include "kiln/abi/bm1684x_stream.h"
#include "kiln/abi/cost.h"

static inline uint32_t kiln_bm_dtype_of(uint64_t prec) {
  switch (prec) {
  case KILN_BM_PREC_FP32: return KILN_DTYPE_F32;
  case KILN_BM_PREC_FP16: return KILN_DTYPE_F16;
  case KILN_BM_PREC_BF16: return KILN_DTYPE_BF16;
  case KILN_BM_PREC_INT16: return KILN_DTYPE_INT16;
  case KILN_BM_PREC_INT32: return KILN_DTYPE_INT32;
  default: return KILN_DTYPE_INT8;
  }
}

/* An [n, c, h, w] result of prec, as cost.h's operand. */
static inline kiln_tiu_operand kiln_bm_cost_shape(uint64_t n, uint64_t c, uint64_t h, uint64_t w,
                                                  uint64_t prec) {
  kiln_tiu_operand o;
  o.addr = 0u, o.n = (uint16_t)n, o.c = (uint16_t)c, o.h = (uint16_t)h, o.w = (uint16_t)w;
  o.dtype = (uint8_t)kiln_bm_dtype_of(prec), o.flags = 0u, o.plane_h = 0u;
  return o;
}

/* EU passes over a result at the rate of the wider of two precisions. */
static inline uint64_t kiln_bm_passes_wider(const kiln_tiu_operand *out, uint64_t a, uint64_t b) {
  return kiln_eu_passes_as(out, kiln_bm_dtype_of(kiln_bm_prec_bytes(a) >= kiln_bm_prec_bytes(b) ? a : b));
}

static inline uint64_t kiln_bm_tiu_cycles(const uint8_t *cmd, kiln_bm_class cls) {
  uint64_t work = 0u;
  switch (cls) {
  case KILN_BM_CLASS_SCONV: {
    kiln_bm_sconv k;
    kiln_tiu_cmd r;
    kiln_bm_sconv_decode(cmd, &k);
    r.out = kiln_bm_cost_shape(k.res0_n, k.res0_c, k.res0_h, k.res0_w, k.res0_prec);
    r.in0 = kiln_bm_cost_shape(k.res0_n, k.opd0_c, k.opd0_h, k.opd0_w, k.opd0_prec);
    r.groups = 1u, r.kh = (uint16_t)k.opd1_h, r.kw = (uint16_t)k.opd1_w;
    work = kiln_conv_work(&r, (uint64_t)k.res0_h * k.res0_w);
    break;
  }
  case KILN_BM_CLASS_SPORD: { /* the pooling datapath: two taps per EU pass */
    kiln_bm_spord k;
    kiln_tiu_operand out;
    kiln_bm_spord_decode(cmd, &k);
    out = kiln_bm_cost_shape(k.res0_n, k.res0_c, k.res0_h, k.res0_w, k.res0_prec);
    work = kiln_ceil_div(kiln_sat_mul(kiln_eu_passes(&out), (uint64_t)k.opd1_h * k.opd1_w), 2u);
    break;
  }
  case KILN_BM_CLASS_SMM2: { /* rows on lanes, columns as pixels, K as input channels */
    kiln_bm_smm2 k;
    kiln_tiu_cmd r;
    kiln_bm_smm2_decode(cmd, &k);
    r.out = kiln_bm_cost_shape(1u, k.res0_c, 1u, k.res0_w, k.res0_prec);
    r.in0 = kiln_bm_cost_shape(1u, k.opd1_c, 1u, 1u, k.opd0_prec);
    r.groups = 1u, r.kh = 1u, r.kw = 1u;
    work = kiln_conv_work(&r, k.res0_w);
    break;
  }
  case KILN_BM_CLASS_SAR: {
    kiln_bm_sar k;
    kiln_tiu_operand out;
    kiln_bm_sar_decode(cmd, &k);
    out = kiln_bm_cost_shape(k.res0_n, k.res0_c, k.res0_h, k.res0_w, k.res0_prec);
    work = kiln_bm_passes_wider(&out, k.opd0_prec, k.res0_prec);
    if (k.tsk_eu_typ == KILN_BM_AR_DIV)
      work = kiln_sat_mul(work, KILN_TRANSCENDENTAL_PASSES);
    break;
  }
  case KILN_BM_CLASS_SRQDQ: {
    kiln_bm_srqdq k;
    kiln_tiu_operand out;
    kiln_bm_srqdq_decode(cmd, &k);
    out = kiln_bm_cost_shape(k.res0_n, k.res0_c, k.res0_h, k.res0_w, k.res0_prec);
    work = kiln_bm_passes_wider(&out, k.opd0_prec, k.res0_prec);
    break;
  }
  case KILN_BM_CLASS_SCMP: {
    kiln_bm_scmp k;
    kiln_tiu_operand out;
    kiln_bm_scmp_decode(cmd, &k);
    out = kiln_bm_cost_shape(k.res0_n, k.res0_c, k.res0_h, k.res0_w, k.opd0_prec);
    work = kiln_bm_passes_wider(&out, k.opd0_prec, k.opd2_prec);
    break;
  }
  case KILN_BM_CLASS_STRANS_BC: {
    kiln_bm_strans_bc k;
    kiln_tiu_operand out;
    kiln_bm_strans_bc_decode(cmd, &k);
    out = kiln_bm_cost_shape(k.res0_n, k.res0_c, k.res0_h, k.res0_w, k.res0_prec);
    work = kiln_eu_passes(&out);
    break;
  }
  case KILN_BM_CLASS_SSFU: {
    kiln_bm_ssfu k;
    kiln_tiu_operand out;
    kiln_bm_ssfu_decode(cmd, &k);
    out = kiln_bm_cost_shape(k.res0_n, k.res0_c, k.res0_h, k.res0_w, k.res0_prec);
    work = kiln_sat_mul(kiln_eu_passes(&out), KILN_TRANSCENDENTAL_PASSES);
    break;
  }
  case KILN_BM_CLASS_SYSID:
    return 0u;
  default: /* classes kiln does not emit: one pass of nothing */
    break;
  }
  return kiln_sat_add(work, KILN_TIU_CMD_OVERHEAD);
}

/* A tensor copy as cost.h's copy record: its direction from the addresses,
 * its shape, strides and element size, a fill reading nothing. */
static inline void kiln_bm_dma_tensor_as_record(const uint8_t *cmd, kiln_gdma_cmd *g) {
  int src_lmem, dst_lmem;
  uint64_t src, dst, bytes;
  uint32_t i;
  static const uint32_t src_str[4] = {KILN_BM_DT_src_nstride, KILN_BM_DT_src_cstride,
                                      KILN_BM_DT_src_hstride, KILN_BM_DT_src_wstride};
  static const uint32_t dst_str[4] = {KILN_BM_DT_dst_nstride, KILN_BM_DT_dst_cstride,
                                      KILN_BM_DT_dst_hstride, KILN_BM_DT_dst_wstride};
  src = kiln_bm_gdma_addr(kiln_bm_dt_get(cmd, KILN_BM_DT_src_start_addr_l32),
                          kiln_bm_dt_get(cmd, KILN_BM_DT_src_start_addr_h8));
  dst = kiln_bm_gdma_addr(kiln_bm_dt_get(cmd, KILN_BM_DT_dst_start_addr_l32),
                          kiln_bm_dt_get(cmd, KILN_BM_DT_dst_start_addr_h8));
  src_lmem = src >= KILN_BM_LMEM_BASE && src < KILN_BM_LMEM_END;
  dst_lmem = dst >= KILN_BM_LMEM_BASE && dst < KILN_BM_LMEM_END;
  g->cmd_id = 0u, g->wait_tiu_id = 0u;
  g->dir = (uint8_t)(src_lmem ? (dst_lmem ? KILN_GDMA_LMEM_TO_LMEM : KILN_GDMA_LMEM_TO_DDR)
                              : (dst_lmem ? KILN_GDMA_DDR_TO_LMEM : KILN_GDMA_DDR_TO_DDR));
  bytes = kiln_bm_prec_bytes(kiln_bm_dt_get(cmd, KILN_BM_DT_src_data_format));
  g->dtype = (uint8_t)(bytes == 4u ? KILN_DTYPE_F32 : bytes == 2u ? KILN_DTYPE_F16 : KILN_DTYPE_INT8);
  g->flags = kiln_bm_dt_get(cmd, KILN_BM_DT_fill_constant_en) ? KILN_GDMA_FLAG_FILL : 0u;
  g->n = (uint32_t)kiln_bm_dt_get(cmd, KILN_BM_DT_src_nsize);
  g->c = (uint32_t)kiln_bm_dt_get(cmd, KILN_BM_DT_src_csize);
  g->h = (uint32_t)kiln_bm_dt_get(cmd, KILN_BM_DT_src_hsize);
  g->w = (uint32_t)kiln_bm_dt_get(cmd, KILN_BM_DT_src_wsize);
  g->lmem_plane_h = 0u, g->lmem_lane = 0u;
  g->src_addr = src, g->dst_addr = dst;
  for (i = 0; i < 4u; ++i) {
    g->src_stride[i] = (uint32_t)kiln_bm_dt_get(cmd, src_str[i]);
    g->dst_stride[i] = (uint32_t)kiln_bm_dt_get(cmd, dst_str[i]);
  }
  for (i = 0; i < 3u; ++i) g->reserved1[i] = 0u;
}

static inline uint64_t kiln_bm_gdma_cycles(const uint8_t *cmd, kiln_bm_class cls) {
  kiln_gdma_cmd g;
  if (cls != KILN_BM_CLASS_DMA_TENSOR)
    return 0u; /* the end */
  kiln_bm_dma_tensor_as_record(cmd, &g);
  return kiln_gdma_cycles(&g);
}

#endif
