// kiln/abi/bm1684x_cost.h: BM1684X's own commands are charged as cost.h
// charges the kiln record that does the same work.
#include "kiln/abi/bm1684x_cost.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

template <typename Cmd>
std::vector<uint8_t> encoded(const Cmd &k, const char *(*encode)(const Cmd *, uint8_t *),
                             size_t bytes) {
  std::vector<uint8_t> out(KILN_BM_MAX_CMD_BYTES);
  EXPECT_EQ(encode(&k, out.data()), nullptr);
  out.resize(bytes);
  return out;
}

kiln_tiu_operand operand(uint16_t n, uint16_t c, uint16_t h, uint16_t w, uint8_t dtype) {
  kiln_tiu_operand o{};
  o.n = n, o.c = c, o.h = h, o.w = w, o.dtype = dtype;
  return o;
}

TEST(Bm1684xCost, AConvCostsWhatItsRecordCosts) {
  for (uint64_t prec : {KILN_BM_PREC_FP32, KILN_BM_PREC_FP16, KILN_BM_PREC_INT8}) {
    kiln_bm_sconv k{};
    k.cmd_short = 1, k.tsk_typ = KILN_BM_TSK_CONV;
    k.opd0_prec = prec, k.res0_prec = prec == KILN_BM_PREC_INT8 ? uint64_t{KILN_BM_PREC_INT32} : prec;
    k.res0_n = 1, k.res0_c = 100, k.res0_h = 14, k.res0_w = 14;
    k.opd0_c = 96, k.opd0_h = 16, k.opd0_w = 16, k.opd1_h = 3, k.opd1_w = 3;
    k.res_op_x_str = k.res_op_y_str = 1;
    auto cmd = encoded(k, kiln_bm_sconv_encode, KILN_BM_SCONV_BYTES);
    kiln_tiu_cmd r{};
    r.op = KILN_TIU_CONV, r.groups = 1, r.kh = 3, r.kw = 3;
    r.out = operand(1, 100, 14, 14, kiln_bm_dtype_of(k.res0_prec));
    r.in0 = operand(1, 96, 16, 16, kiln_bm_dtype_of(prec));
    EXPECT_EQ(kiln_bm_tiu_cycles(cmd.data(), KILN_BM_CLASS_SCONV), kiln_tiu_cycles(&r)) << prec;
  }
}

TEST(Bm1684xCost, ElementwiseCommandsCostEuPassesAndTheSfuMore) {
  kiln_bm_sar a{};
  a.cmd_short = 1, a.tsk_typ = KILN_BM_TSK_AR, a.tsk_eu_typ = KILN_BM_AR_ADD, a.tsk_opd_num = 2;
  a.res0_prec = a.opd0_prec = a.opd1_prec = KILN_BM_PREC_FP32;
  a.res0_n = 1, a.res0_c = 70, a.res0_h = 20, a.res0_w = 24;
  auto add = encoded(a, kiln_bm_sar_encode, KILN_BM_SAR_BYTES);
  kiln_tiu_cmd r{};
  r.op = KILN_TIU_ELTWISE, r.subop = KILN_ELT_ADD;
  r.out = operand(1, 70, 20, 24, KILN_DTYPE_F32);
  EXPECT_EQ(kiln_bm_tiu_cycles(add.data(), KILN_BM_CLASS_SAR), kiln_tiu_cycles(&r));
  // f16 is twice the rate; a conversion runs at its wider side's.
  a.res0_prec = a.opd0_prec = a.opd1_prec = KILN_BM_PREC_FP16;
  auto add16 = encoded(a, kiln_bm_sar_encode, KILN_BM_SAR_BYTES);
  EXPECT_LT(kiln_bm_tiu_cycles(add16.data(), KILN_BM_CLASS_SAR),
            kiln_bm_tiu_cycles(add.data(), KILN_BM_CLASS_SAR));
  a.tsk_eu_typ = KILN_BM_AR_DATA_CONVERT, a.tsk_opd_num = 1, a.res0_prec = KILN_BM_PREC_FP32;
  auto widen = encoded(a, kiln_bm_sar_encode, KILN_BM_SAR_BYTES);
  EXPECT_EQ(kiln_bm_tiu_cycles(widen.data(), KILN_BM_CLASS_SAR),
            kiln_bm_tiu_cycles(add.data(), KILN_BM_CLASS_SAR));
  // The SFU's Taylor series is a transcendental activation's passes.
  kiln_bm_ssfu f{};
  f.cmd_short = 1, f.tsk_typ = KILN_BM_TSK_SFU, f.tsk_eu_typ = KILN_BM_SFU_TAYLOR_4X;
  f.res0_prec = f.opd0_prec = KILN_BM_PREC_FP32, f.opd1_n = 10;
  f.res0_n = 1, f.res0_c = 70, f.res0_h = 20, f.res0_w = 24;
  auto taylor = encoded(f, kiln_bm_ssfu_encode, KILN_BM_SSFU_BYTES);
  r.op = KILN_TIU_ACTIVE, r.subop = KILN_ACT_EXP;
  EXPECT_EQ(kiln_bm_tiu_cycles(taylor.data(), KILN_BM_CLASS_SSFU), kiln_tiu_cycles(&r));
}

TEST(Bm1684xCost, ACopyCostsItsBurstsAtItsDirectionsRate) {
  kiln_bm_dma_tensor t{};
  t.cmd_type = KILN_BM_GDMA_TENSOR, t.stride_enable = 1, t.nchw_copy = 1;
  t.src_data_format = KILN_BM_PREC_FP32;
  t.src_nsize = 1, t.src_csize = 64, t.src_hsize = 8, t.src_wsize = 32;
  t.src_nstride = 64 * 256, t.src_cstride = 256, t.src_hstride = 32, t.src_wstride = 1;
  t.dst_nstride = 256, t.dst_cstride = 256, t.dst_hstride = 32, t.dst_wstride = 1;
  const uint64_t ddr = KILN_BM_DDR_BASE + 4096, lmem = KILN_BM_LMEM_BASE + 512;
  t.src_start_addr_l32 = ddr & 0xFFFFFFFFu, t.src_start_addr_h8 = ddr >> 32;
  t.dst_start_addr_l32 = lmem & 0xFFFFFFFFu, t.dst_start_addr_h8 = lmem >> 32;
  auto load = encoded(t, kiln_bm_dma_tensor_encode, KILN_BM_DMA_TENSOR_BYTES);
  kiln_gdma_cmd g{};
  g.dir = KILN_GDMA_DDR_TO_LMEM, g.dtype = KILN_DTYPE_F32;
  g.n = 1, g.c = 64, g.h = 8, g.w = 32;
  g.src_stride[0] = 64 * 256, g.src_stride[1] = 256, g.src_stride[2] = 32, g.src_stride[3] = 1;
  EXPECT_EQ(kiln_bm_gdma_cycles(load.data(), KILN_BM_CLASS_DMA_TENSOR), kiln_gdma_cycles(&g));
  // Reading every element of a transposed block is charged a burst each.
  t.src_hstride = 1, t.src_wstride = 8;
  auto gather = encoded(t, kiln_bm_dma_tensor_encode, KILN_BM_DMA_TENSOR_BYTES);
  EXPECT_GT(kiln_bm_gdma_cycles(gather.data(), KILN_BM_CLASS_DMA_TENSOR),
            8 * kiln_bm_gdma_cycles(load.data(), KILN_BM_CLASS_DMA_TENSOR));
  // The ends cost nothing.
  kiln_bm_dma_sys d{};
  d.cmd_short = 1, d.cmd_type = KILN_BM_GDMA_SYS;
  auto end = encoded(d, kiln_bm_dma_sys_encode, KILN_BM_DMA_SYS_BYTES);
  EXPECT_EQ(kiln_bm_gdma_cycles(end.data(), KILN_BM_CLASS_DMA_SYS), 0u);
}

} // namespace
