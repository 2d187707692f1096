// BM1684X's command formats (kiln/abi/bm1684x.h): each class's field table
// covers its bytes exactly, encode and decode are inverse over random field
// values and random bytes, an overflowing value is named, classification
// finds each class, and commands from a public BM1684X bmodel (TPU-MLIR's
// test/TDB yolov5s, as FACTS.md quotes them) decode to their known fields.
#include <gtest/gtest.h>

#include <stdint.h>
#include <string.h>

#include <random>
#include <vector>

#include "kiln/abi/bm1684x.h"

namespace {

TEST(Bm1684xIsa, EveryFieldTableCoversItsClassBitByBit) {
  for (int c = 1; c < KILN_BM_CLASS_COUNT; ++c) {
    auto cls = static_cast<kiln_bm_class>(c);
    uint32_t count = 0;
    const kiln_bm_field *f = kiln_bm_class_fields(cls, &count);
    ASSERT_GT(count, 0u) << kiln_bm_class_name(cls);
    uint32_t next = 0;
    for (uint32_t i = 0; i < count; ++i) {
      EXPECT_EQ(f[i].bit, next) << kiln_bm_class_name(cls) << "." << f[i].name;
      EXPECT_GE(f[i].width, 1u);
      // No field crosses a 64-bit word: kiln_bm_get reads one word.
      EXPECT_EQ(f[i].bit / 64u, (f[i].bit + f[i].width - 1u) / 64u)
          << kiln_bm_class_name(cls) << "." << f[i].name;
      next = f[i].bit + f[i].width;
    }
    EXPECT_EQ(next, 8u * kiln_bm_class_bytes(cls)) << kiln_bm_class_name(cls);
  }
}

// For each class: random values of every field encode and decode back, and
// random bytes decode and encode back to the same bytes.
#define KILN_ROUND_TRIP_(E, n, bytes, fields)                                          \
  {                                                                                    \
    for (int iter = 0; iter < 2000; ++iter) {                                          \
      uint8_t raw[bytes];                                                              \
      for (auto &b : raw) b = static_cast<uint8_t>(rng());                             \
      kiln_bm_##n dec;                                                                 \
      kiln_bm_##n##_decode(raw, &dec);                                                 \
      uint8_t again[bytes];                                                            \
      ASSERT_EQ(kiln_bm_##n##_encode(&dec, again), nullptr) << #n;                      \
      ASSERT_EQ(memcmp(raw, again, bytes), 0) << #n;                                   \
      kiln_bm_##n v, back;                                                             \
      uint32_t count = 0;                                                              \
      const kiln_bm_field *f = kiln_bm_class_fields(KILN_BM_CLASS_##E, &count);        \
      uint64_t *words = reinterpret_cast<uint64_t *>(&v);                              \
      ASSERT_EQ(sizeof v, count * sizeof(uint64_t));                                   \
      for (uint32_t i = 0; i < count; ++i) words[i] = rng() & kiln_bm_mask(f[i].width); \
      ASSERT_EQ(kiln_bm_##n##_encode(&v, raw), nullptr) << #n;                          \
      kiln_bm_##n##_decode(raw, &back);                                                \
      ASSERT_EQ(memcmp(&v, &back, sizeof v), 0) << #n;                                 \
      for (uint32_t i = 0; i < count; ++i)                                             \
        ASSERT_EQ(kiln_bm_get(raw, f[i].bit, f[i].width), words[i]) << #n << "." << f[i].name; \
    }                                                                                  \
  }

TEST(Bm1684xIsa, EncodeAndDecodeAreInverse) {
  std::mt19937_64 rng(7);
  KILN_BM_CLASSES(KILN_ROUND_TRIP_)
}

TEST(Bm1684xIsa, AValueTooWideForItsFieldIsNamed) {
  kiln_bm_sconv c{};
  c.res0_c = 1u << 16; // a 16-bit field
  uint8_t raw[KILN_BM_SCONV_BYTES];
  const char *bad = kiln_bm_sconv_encode(&c, raw);
  ASSERT_NE(bad, nullptr);
  EXPECT_STREQ(bad, "res0_c");
  kiln_bm_dma_tensor t{};
  t.cmd_id = 1u << 20; // 20 bits
  uint8_t g[KILN_BM_DMA_TENSOR_BYTES];
  EXPECT_STREQ(kiln_bm_dma_tensor_encode(&t, g), "cmd_id");
}

TEST(Bm1684xIsa, ClassificationFindsEveryShortTiuFormAndGdmaForm) {
  struct TiuCase {
    uint32_t tsk, eu;
    kiln_bm_class cls;
  } tiu[] = {
      {KILN_BM_TSK_CONV, 0, KILN_BM_CLASS_SCONV},   {KILN_BM_TSK_PORD, 4, KILN_BM_CLASS_SPORD},
      {KILN_BM_TSK_MM, 1, KILN_BM_CLASS_SMM},       {KILN_BM_TSK_MM, 5, KILN_BM_CLASS_SMM2},
      {KILN_BM_TSK_AR, 2, KILN_BM_CLASS_SAR},       {KILN_BM_TSK_RQDQ, 1, KILN_BM_CLASS_SRQDQ},
      {KILN_BM_TSK_TRANS_BC, 3, KILN_BM_CLASS_STRANS_BC},
      {KILN_BM_TSK_SG, 2, KILN_BM_CLASS_SSG},       {KILN_BM_TSK_SG, 17, KILN_BM_CLASS_SSGL},
      {KILN_BM_TSK_SFU, 13, KILN_BM_CLASS_SSFU},    {KILN_BM_TSK_LIN, 1, KILN_BM_CLASS_SLIN},
      {KILN_BM_TSK_CMP, 23, KILN_BM_CLASS_SCMP},    {KILN_BM_TSK_VC, 0, KILN_BM_CLASS_SVC},
      {KILN_BM_TSK_SYS, KILN_BM_SYS_END, KILN_BM_CLASS_SYSID},
      {KILN_BM_TSK_LAR, 2, KILN_BM_CLASS_NONE},     {KILN_BM_TSK_MM, 9, KILN_BM_CLASS_NONE},
  };
  for (const TiuCase &t : tiu) {
    uint8_t raw[KILN_BM_MAX_CMD_BYTES] = {};
    kiln_bm_set(raw, 0, 1, 1);
    kiln_bm_set(raw, 41, 4, t.tsk);
    kiln_bm_set(raw, 45, 5, t.eu);
    EXPECT_EQ(kiln_bm_tiu_class(raw), t.cls) << "tsk " << t.tsk << " eu " << t.eu;
  }
  uint8_t longForm[KILN_BM_MAX_CMD_BYTES] = {};
  kiln_bm_set(longForm, 41, 4, KILN_BM_TSK_AR);
  EXPECT_EQ(kiln_bm_tiu_class(longForm), KILN_BM_CLASS_TIU_LONG);

  struct GdmaCase {
    uint32_t type, isShort;
    kiln_bm_class cls;
  } gdma[] = {
      {KILN_BM_GDMA_TENSOR, 0, KILN_BM_CLASS_DMA_TENSOR},
      {KILN_BM_GDMA_MATRIX, 0, KILN_BM_CLASS_DMA_MATRIX},
      {KILN_BM_GDMA_GENERAL, 0, KILN_BM_CLASS_DMA_GENERAL},
      {KILN_BM_GDMA_GATHER, 0, KILN_BM_CLASS_DMA_GATHER_SCATTER},
      {KILN_BM_GDMA_SCATTER, 0, KILN_BM_CLASS_DMA_GATHER_SCATTER},
      {KILN_BM_GDMA_SYS, 1, KILN_BM_CLASS_DMA_SYS},
      {KILN_BM_GDMA_MATRIX, 1, KILN_BM_CLASS_NONE}, // a short form libbmrt cannot split
      {KILN_BM_GDMA_NONZERO, 0, KILN_BM_CLASS_NONE},
  };
  for (const GdmaCase &g : gdma) {
    uint8_t raw[KILN_BM_MAX_CMD_BYTES] = {};
    kiln_bm_set(raw, 3, 1, g.isShort);
    kiln_bm_set(raw, 32, 4, g.type);
    EXPECT_EQ(kiln_bm_gdma_class(raw), g.cls) << "type " << g.type;
  }
}

// Bytes from a hex string of little-endian 64-bit words written as bytes.
std::vector<uint8_t> hexBytes(const char *hex) {
  std::vector<uint8_t> out;
  for (const char *p = hex; p[0] && p[1];) {
    if (*p == ' ') { ++p; continue; }
    unsigned v = 0;
    sscanf(p, "%2x", &v);
    out.push_back(static_cast<uint8_t>(v));
    p += 2;
  }
  return out;
}

// TPU-MLIR's test/TDB/bmodel/yolov5s_bm1684x_int8_sym.bmodel: its first GDMA
// command (a broadcast load of a 1x1x130x640 int8 plane to 6 lanes), its
// last TIU command (the end, id 430) and its last GDMA command (the sys end,
// id 142), as FACTS.md sections 1.5.13, 2.3 and 2.5 quote them.
TEST(Bm1684xIsa, CommandsOfAPublicBm1684xBmodelDecode) {
  std::vector<uint8_t> load = hexBytes(
      "2202000030000000 0000000000000000 00c0120000000000 8002000000000000 "
      "0045010000000000 8002000000000000 0100010082008002 0100060082008002 "
      "00507c0001000000 0000000800000000 0000000000000000 ffffffffffffffff");
  ASSERT_EQ(load.size(), size_t{KILN_BM_DMA_TENSOR_BYTES});
  ASSERT_EQ(kiln_bm_gdma_class(load.data()), KILN_BM_CLASS_DMA_TENSOR);
  kiln_bm_dma_tensor t;
  kiln_bm_dma_tensor_decode(load.data(), &t);
  EXPECT_EQ(t.cmd_id, 1u);
  EXPECT_EQ(t.cmd_id_en, 1u);
  EXPECT_EQ(t.stride_enable, 1u);
  EXPECT_EQ(t.cmd_special_function, 3u); // broadcast
  EXPECT_EQ(t.src_data_format, uint64_t{KILN_BM_PREC_INT8});
  EXPECT_EQ(t.src_nsize, 1u);
  EXPECT_EQ(t.src_csize, 1u);
  EXPECT_EQ(t.src_hsize, 130u);
  EXPECT_EQ(t.src_wsize, 640u);
  EXPECT_EQ(t.dst_csize, 6u);
  EXPECT_EQ(t.src_hstride, 640u);
  EXPECT_EQ(t.src_wstride, 0u); // the engine takes W strides as 1 when sf != 0
  EXPECT_EQ(kiln_bm_gdma_addr(t.src_start_addr_l32, t.src_start_addr_h8), 0x1007C5000ull);
  EXPECT_EQ(kiln_bm_gdma_addr(t.dst_start_addr_l32, t.dst_start_addr_h8), KILN_BM_LMEM_BASE);
  EXPECT_EQ(t.localmem_mask_l32, 0xFFFFFFFFu);
  EXPECT_EQ(t.localmem_mask_h32, 0xFFFFFFFFu);
  uint8_t again[KILN_BM_DMA_TENSOR_BYTES];
  ASSERT_EQ(kiln_bm_dma_tensor_encode(&t, again), nullptr);
  EXPECT_EQ(memcmp(again, load.data(), sizeof again), 0);

  std::vector<uint8_t> tiuEnd = hexBytes("5c030000 00fe0300 00000000 00000000");
  ASSERT_EQ(kiln_bm_tiu_class(tiuEnd.data()), KILN_BM_CLASS_SYSID);
  kiln_bm_sysid end;
  kiln_bm_sysid_decode(tiuEnd.data(), &end);
  EXPECT_EQ(end.cmd_id, 430u);
  EXPECT_EQ(end.tsk_typ, uint64_t{KILN_BM_TSK_SYS});
  EXPECT_EQ(end.tsk_eu_typ, KILN_BM_SYS_END);
  EXPECT_EQ(end.cmd_id_dep, 0u);

  std::vector<uint8_t> gdmaEnd = hexBytes("281c0100 06000000 00000000 00000000");
  ASSERT_EQ(kiln_bm_gdma_class(gdmaEnd.data()), KILN_BM_CLASS_DMA_SYS);
  kiln_bm_dma_sys sys;
  kiln_bm_dma_sys_decode(gdmaEnd.data(), &sys);
  EXPECT_EQ(sys.cmd_id, 142u);
  EXPECT_EQ(sys.cmd_short, 1u);
  EXPECT_EQ(sys.cmd_id_en, 1u);
  EXPECT_EQ(sys.cmd_type, uint64_t{KILN_BM_GDMA_SYS});
}

} // namespace
