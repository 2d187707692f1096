// kiln's model of BM1684X's commands (kiln/chip/bm1684x.h) against Sophgo's
// simulator, command class by command class: random commands within each
// class's legal ranges run on both from the same memory, and every byte of
// the memory they may touch must come out identical.
//
// KILN_ORACLE_COMMANDS sets the commands per class (default 10000).
#include <gtest/gtest.h>

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kiln/abi/bm1684x.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/quant.h"
#include "kiln/chip/bm1684x.h"
#include "sim_or_skip.h"

namespace {

using kiln::sophgo_sim::SophgoSim;
namespace bm = kiln::chip::bm1684x;

constexpr uint64_t kLane = KILN_LMEM_BYTES_PER_LANE;
// The part of each lane and of DDR the random commands use and compare.
constexpr uint32_t kArena = 16u << 10;
constexpr uint64_t kDdrArena = 512u << 10;

int commandsPerClass() {
  const char *s = std::getenv("KILN_ORACLE_COMMANDS");
  return s && *s ? std::max(1, std::atoi(s)) : 10000;
}

uint32_t precBytes(uint32_t prec) {
  switch (prec) {
  case KILN_BM_PREC_INT8: return 1;
  case KILN_BM_PREC_FP32: case KILN_BM_PREC_INT32: return 4;
  default: return 2;
  }
}
bool precIsFloat(uint32_t prec) {
  return prec == KILN_BM_PREC_FP32 || prec == KILN_BM_PREC_FP16 || prec == KILN_BM_PREC_BF16;
}
const char *precName(uint32_t prec) {
  static const char *names[] = {"i8", "f16", "f32", "i16", "i32", "bf16", "i4", "f8"};
  return names[prec & 7u];
}

// Every field of a command, for a failure message.
std::string describe(kiln_bm_class cls, const uint8_t *cmd) {
  uint32_t count = 0;
  const kiln_bm_field *f = kiln_bm_class_fields(cls, &count);
  std::string s = kiln_bm_class_name(cls);
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t v = kiln_bm_get(cmd, f[i].bit, f[i].width);
    if (v) s += " " + std::string(f[i].name) + "=" + std::to_string(v);
  }
  return s;
}

// The two machines: Sophgo's simulator and kiln's model, with memories of
// the same contents.
class Machines {
public:
  explicit Machines(SophgoSim *sim)
      : sim_(sim), lmem_(KILN_NPU_NUM * kLane), ddr_(kDdrArena), rng_(1234) {
    mem_.lmem = lmem_.data();
    mem_.ddr = ddr_.data();
    mem_.ddrBytes = ddr_.size();
  }
  std::mt19937_64 &rng() { return rng_; }

  // Fills the arenas of both with the same bytes, drawn from a pool per
  // precision at a random place: random floats of the format's magnitudes
  // (zeros among them; no NaNs, see DESIGN.md "kiln's model of the
  // commands"), or random bits for integers.
  // `narrow`: values of magnitude 2^-4..2^4 (sums of products stay well
  // inside every format).
  void randomize(uint32_t prec, bool narrow = false) {
    const std::vector<uint8_t> &pool = this->pool(prec, narrow);
    const size_t need = KILN_NPU_NUM * size_t{kArena} + kDdrArena;
    size_t at = std::uniform_int_distribution<size_t>(0, (pool.size() - need) / 4)(rng_) * 4;
    for (uint32_t lane = 0; lane < KILN_NPU_NUM; ++lane, at += kArena) {
      memcpy(lmem_.data() + lane * kLane, pool.data() + at, kArena);
      memcpy(sim_->lmem() + lane * kLane, pool.data() + at, kArena);
    }
    memcpy(ddr_.data(), pool.data() + at, kDdrArena);
    memcpy(sim_->ddr(), pool.data() + at, kDdrArena);
  }

  // Runs one command on both; "" or why they differ.
  std::string run(const uint8_t *cmd, size_t bytes, SophgoSim::Engine engine) {
    std::string e = runOnly(cmd, bytes, engine);
    return e.empty() ? compare() : e;
  }

  // Encodes a TIU command of class cls, fills both memories with random
  // values of `prec` (specials included) and runs it on both: "" or why
  // they differ, with the command.
  template <typename Cmd>
  std::string runTiu(const Cmd &k, const char *(*encode)(const Cmd *, uint8_t *), kiln_bm_class cls,
                     uint32_t prec) {
    uint8_t cmd[KILN_BM_MAX_CMD_BYTES];
    if (const char *bad = encode(&k, cmd)) return std::string("field out of range: ") + bad;
    randomize(prec, true);
    std::string diff = run(cmd, kiln_bm_class_bytes(cls), SophgoSim::Tiu);
    return diff.empty() ? diff : diff + "\n" + describe(cls, cmd);
  }

  uint8_t *kilnLmem() { return lmem_.data(); }
  uint8_t *simLmem() { return sim_->lmem(); }
  // Runs one command on both without comparing; kiln's fault or "".
  std::string runOnly(const uint8_t *cmd, size_t bytes, SophgoSim::Engine engine) {
    const char *fault = engine == SophgoSim::Tiu ? bm::runTiu(cmd, bytes, mem_)
                                                 : bm::runGdma(cmd, bytes, mem_);
    if (fault) return std::string("kiln faults: ") + fault;
    if (std::getenv("KILN_ORACLE_TRACE"))
      fprintf(stderr, "%s\n", describe(engine == SophgoSim::Tiu ? kiln_bm_tiu_class(cmd)
                                                                : kiln_bm_gdma_class(cmd), cmd).c_str());
    sim_->execute(cmd, engine);
    return "";
  }
  // The arenas of both are byte-identical: "" or where they first differ.
  std::string compare() {
    for (uint32_t lane = 0; lane < KILN_NPU_NUM; ++lane) {
      const uint8_t *k = lmem_.data() + lane * kLane, *s = sim_->lmem() + lane * kLane;
      if (memcmp(k, s, kArena) != 0) {
        uint32_t i = 0;
        while (k[i] == s[i]) ++i;
        char buf[160];
        snprintf(buf, sizeof buf, "LMEM lane %u offset 0x%x: kiln %02x, simulator %02x", lane, i,
                 k[i], s[i]);
        return buf;
      }
    }
    if (memcmp(ddr_.data(), sim_->ddr(), kDdrArena) != 0) {
      uint64_t i = 0;
      while (ddr_[i] == sim_->ddr()[i]) ++i;
      char buf[160];
      snprintf(buf, sizeof buf, "DDR offset 0x%llx: kiln %02x, simulator %02x",
               static_cast<unsigned long long>(i), ddr_[i], sim_->ddr()[i]);
      return buf;
    }
    return "";
  }

private:
  const std::vector<uint8_t> &pool(uint32_t prec, bool narrow) {
    std::vector<uint8_t> &p = pools_[(precIsFloat(prec) ? prec : 0) + (narrow ? 8 : 0)];
    if (!p.empty()) return p;
    p.resize(2 * (KILN_NPU_NUM * size_t{kArena} + kDdrArena));
    std::uniform_int_distribution<uint32_t> u32;
    if (!precIsFloat(prec)) {
      for (size_t i = 0; i < p.size(); i += 4) {
        uint32_t v = u32(rng_);
        memcpy(&p[i], &v, 4);
      }
      return p;
    }
    std::uniform_real_distribution<float> mant(-2.0f, 2.0f);
    const int range = narrow ? 4 : prec == KILN_BM_PREC_FP16 ? 14 : 40;
    std::uniform_int_distribution<int> expo(-range, range);
    for (size_t i = 0; i < p.size();) {
      // Zeros and subnormals of the format among them.
      const uint32_t special = u32(rng_) % 64;
      const float tiny = prec == KILN_BM_PREC_FP16 ? 0x1p-14f : 0x1p-126f;
      float f = special == 0   ? 0.0f
                : special == 1 ? tiny * mant(rng_) / 2.0f
                               : std::ldexp(mant(rng_), expo(rng_));
      if (prec == KILN_BM_PREC_FP32) {
        uint32_t b = kiln_f32_bits(f);
        memcpy(&p[i], &b, 4);
        i += 4;
      } else {
        uint16_t b = prec == KILN_BM_PREC_FP16 ? kiln_f32_to_f16(f) : kiln_f32_to_bf16(f);
        memcpy(&p[i], &b, 2);
        i += 2;
      }
    }
    return p;
  }

  SophgoSim *sim_;
  std::vector<uint8_t> pools_[16];
  std::vector<uint8_t> lmem_, ddr_;
  bm::Memories mem_;
  std::mt19937_64 rng_;
};

uint32_t rnd(std::mt19937_64 &g, uint32_t lo, uint32_t hi) {
  return std::uniform_int_distribution<uint32_t>(lo, hi)(g);
}

// ---- Random LMEM tensors -----------------------------------------------------

struct Dims {
  uint32_t n, c, h, w;
};

// Places a tensor of dims d at the next free per-lane offset (*next),
// laid out as `layout`; fills the strides for STRIDE and returns the TIU
// address (lane << 18 | offset), or UINT32_MAX when the arena is full.
uint32_t placeLmem(std::mt19937_64 &g, const Dims &d, uint32_t prec, uint32_t layout,
                   uint32_t lane0, uint32_t *next, uint64_t st[4]) {
  uint32_t bytes = precBytes(prec);
  uint64_t groups = (uint64_t{lane0} + d.c + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
  uint64_t plane = uint64_t{d.h} * d.w;
  if (layout == KILN_BM_LAYOUT_ALIGN_EU) {
    uint64_t eu = KILN_EU_BYTES / bytes, cs = (plane + eu - 1) / eu * eu;
    st[0] = groups * cs, st[1] = cs, st[2] = d.w, st[3] = 1;
  } else if (layout == KILN_BM_LAYOUT_COMPACT) {
    st[0] = groups * plane, st[1] = plane, st[2] = d.w, st[3] = 1;
  } else {
    st[3] = rnd(g, 1, 2);
    st[2] = st[3] * d.w + rnd(g, 0, 3);
    st[1] = st[2] * d.h + rnd(g, 0, 5);
    st[0] = st[1] * groups + rnd(g, 0, 5);
  }
  uint64_t extent = ((d.n - 1) * st[0] + (groups - 1) * st[1] + (d.h - 1) * st[2] +
                     (d.w - 1) * st[3] + 1) * bytes;
  uint32_t offset = (*next + 63u) / 64u * 64u;
  if (layout == KILN_BM_LAYOUT_STRIDE) offset += bytes * rnd(g, 0, 8);
  if (offset + extent > kArena) return UINT32_MAX;
  *next = offset + static_cast<uint32_t>(extent);
  return lane0 << KILN_BM_LANE_SHIFT | offset;
}

// ---- sAR -----------------------------------------------------------------------

struct ArCase {
  const char *name;
  uint32_t op;
  bool floats, ints, unary;
};
const ArCase kArCases[] = {
    {"mul", KILN_BM_AR_MUL, true, true, false},
    {"add", KILN_BM_AR_ADD, true, true, false},
    {"sub", KILN_BM_AR_SUB, true, true, false},
    {"max", KILN_BM_AR_MAX, true, true, false},
    {"min", KILN_BM_AR_MIN, true, true, false},
    {"and", KILN_BM_AR_AND, false, true, false},
    {"or", KILN_BM_AR_OR, false, true, false},
    {"xor", KILN_BM_AR_XOR, false, true, false},
    {"not", KILN_BM_AR_NOT, false, true, true},
    {"copy", KILN_BM_AR_COPY, true, true, true},
    {"abs", KILN_BM_AR_ABS, true, true, true},
    {"add_satu", KILN_BM_AR_ADD_SATU, false, true, false},
    {"sub_satu", KILN_BM_AR_SUB_SATU, false, true, false},
    {"mul_satu", KILN_BM_AR_MUL_SATU, false, true, false},
    {"data_convert", KILN_BM_AR_DATA_CONVERT, true, true, true},
    {"div", KILN_BM_AR_DIV, true, false, false},
};

const uint32_t kFloatPrecs[] = {KILN_BM_PREC_FP32, KILN_BM_PREC_FP16, KILN_BM_PREC_BF16};
const uint32_t kIntPrecs[] = {KILN_BM_PREC_INT8, KILN_BM_PREC_INT16, KILN_BM_PREC_INT32};
const uint32_t kAllPrecs[] = {KILN_BM_PREC_FP32, KILN_BM_PREC_FP16, KILN_BM_PREC_BF16,
                              KILN_BM_PREC_INT8, KILN_BM_PREC_INT16, KILN_BM_PREC_INT32};

template <size_t N> uint32_t pick(std::mt19937_64 &g, const uint32_t (&a)[N]) {
  return a[rnd(g, 0, N - 1)];
}

// f's bits in a float format (the low 16 for f16 and bf16).
uint32_t floatBitsOf(uint32_t prec, float f) {
  return prec == KILN_BM_PREC_FP32   ? kiln_f32_bits(f)
         : prec == KILN_BM_PREC_FP16 ? kiln_f32_to_f16(f)
                                     : kiln_f32_to_bf16(f);
}

// A random sAR command of case c; false when its operands did not fit.
bool randomAr(std::mt19937_64 &g, const ArCase &c, bool floats, kiln_bm_sar *a) {
  *a = kiln_bm_sar{};
  a->cmd_short = 1;
  a->cmd_id = 1;
  a->cmd_id_en = 1;
  a->tsk_typ = KILN_BM_TSK_AR;
  a->tsk_eu_typ = c.op;
  a->tsk_opd_num = c.unary ? 1 : 2;
  Dims d{rnd(g, 1, 2), rnd(g, 1, 80), rnd(g, 1, 6), rnd(g, 1, 20)};
  a->res0_n = d.n, a->res0_c = d.c, a->res0_h = d.h, a->res0_w = d.w;
  uint32_t prec = floats ? pick(g, kFloatPrecs) : pick(g, kIntPrecs);
  if (c.op == KILN_BM_AR_DIV) prec = KILN_BM_PREC_FP32; // the simulator asserts on others
  uint32_t inPrec = prec, outPrec = prec;
  bool s0 = rnd(g, 0, 1), s1 = rnd(g, 0, 1);
  if (c.op == KILN_BM_AR_MAX || c.op == KILN_BM_AR_MIN) s1 = s0; // the chip's rule
  if (c.op == KILN_BM_AR_DATA_CONVERT) {
    inPrec = floats ? prec : pick(g, kAllPrecs);
    outPrec = pick(g, kAllPrecs);
    // No f16 <-> bf16 (the simulator asserts: the chip goes through f32).
    while ((inPrec == KILN_BM_PREC_FP16 && outPrec == KILN_BM_PREC_BF16) ||
           (inPrec == KILN_BM_PREC_BF16 && outPrec == KILN_BM_PREC_FP16))
      outPrec = pick(g, kAllPrecs);
    a->opd2_sign = rnd(g, 0, 1);
    // Float to integer rounds by modes 0..4 only (the simulator asserts).
    a->opd2_n_str = precIsFloat(inPrec) && !precIsFloat(outPrec) ? rnd(g, 0, 4) : rnd(g, 0, 6);
  }
  a->res0_prec = outPrec;
  a->opd0_prec = inPrec;
  a->opd1_prec = prec;
  a->opd0_sign = s0;
  a->opd1_sign = s1;
  uint32_t next = 0, lane0 = rnd(g, 0, 63);
  uint64_t st[4];
  auto layout = [&] {
    static const uint32_t layouts[] = {KILN_BM_LAYOUT_ALIGN_EU, KILN_BM_LAYOUT_COMPACT,
                                       KILN_BM_LAYOUT_STRIDE};
    return pick(g, layouts);
  };
  a->res0_str = layout();
  a->res0_addr = placeLmem(g, d, outPrec, static_cast<uint32_t>(a->res0_str), lane0, &next, st);
  a->res0_n_str = st[0], a->res0_c_str = st[1], a->res0_h_str = st[2], a->res0_w_str = st[3];
  if (!c.unary && rnd(g, 0, 3) == 0) {
    a->opd1_const = 1;
    a->opd1_addr = rnd(g, 0, UINT32_MAX) & (precBytes(prec) == 4 ? 0xFFFFFFFFu
                                            : precBytes(prec) == 2 ? 0xFFFFu : 0xFFu);
    if (floats) // a finite float of the operand's format
      a->opd1_addr = floatBitsOf(prec, std::ldexp(static_cast<float>(rnd(g, 0, 2000)) / 1000.0f - 1.0f,
                                                  static_cast<int>(rnd(g, 0, 20)) - 10));
  } else if (!c.unary) {
    a->opd1_str = layout();
    a->opd1_addr = placeLmem(g, d, prec, static_cast<uint32_t>(a->opd1_str), lane0, &next, st);
    a->opd1_n_str = st[0], a->opd1_c_str = st[1], a->opd1_h_str = st[2], a->opd1_w_str = st[3];
  }
  if (c.op == KILN_BM_AR_COPY && rnd(g, 0, 3) == 0) { // a fill with an immediate
    a->opd0_const = 1;
    a->opd0_addr = rnd(g, 0, UINT32_MAX) & (precBytes(inPrec) == 4 ? 0xFFFFFFFFu
                                            : precBytes(inPrec) == 2 ? 0xFFFFu : 0xFFu);
  } else {
    a->opd0_str = layout();
    a->opd0_addr = placeLmem(g, d, inPrec, static_cast<uint32_t>(a->opd0_str), lane0, &next, st);
    a->opd0_n_str = st[0], a->opd0_c_str = st[1], a->opd0_h_str = st[2], a->opd0_w_str = st[3];
  }
  // Integer ADD/SUB/MUL take a shift (opd2, int8 immediate) and a rounding mode.
  bool shiftable = !floats && (c.op == KILN_BM_AR_ADD || c.op == KILN_BM_AR_SUB ||
                               c.op == KILN_BM_AR_MUL || c.op == KILN_BM_AR_ADD_SATU ||
                               c.op == KILN_BM_AR_SUB_SATU || c.op == KILN_BM_AR_MUL_SATU);
  if (shiftable && rnd(g, 0, 1)) {
    a->tsk_opd_num = 3;
    a->opd2_const = 1;
    a->opd2_addr = static_cast<uint8_t>(-static_cast<int>(rnd(g, 0, 15)));
    a->opd2_n_str = rnd(g, 0, 6);
  }
  if (c.op == KILN_BM_AR_DIV) a->opd2_n_str = rnd(g, 0, 3); // Newton steps - 1
  return a->res0_addr != UINT32_MAX && a->opd0_addr != UINT32_MAX && a->opd1_addr != UINT32_MAX;
}

TEST(Bm1684xDiff, ArithmeticMatchesTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  // Every op with floats and with integers where it has them, equally.
  std::vector<std::pair<const ArCase *, bool>> kinds;
  for (const ArCase &c : kArCases) {
    if (c.floats) kinds.push_back({&c, true});
    if (c.ints) kinds.push_back({&c, false});
  }
  const int perKind = (commandsPerClass() + static_cast<int>(kinds.size()) - 1) /
                      static_cast<int>(kinds.size());
  int total = 0;
  for (const auto &[c, floats] : kinds) {
    for (int done = 0; done < perKind;) {
      kiln_bm_sar a;
      if (!randomAr(m.rng(), *c, floats, &a)) continue;
      uint8_t cmd[KILN_BM_SAR_BYTES];
      ASSERT_EQ(kiln_bm_sar_encode(&a, cmd), nullptr);
      m.randomize(static_cast<uint32_t>(a.opd0_prec));
      std::string diff = m.run(cmd, sizeof cmd, SophgoSim::Tiu);
      ASSERT_EQ(diff, "") << c->name << " " << precName(static_cast<uint32_t>(a.opd0_prec)) << "->"
                          << precName(static_cast<uint32_t>(a.res0_prec)) << ": "
                          << describe(KILN_BM_CLASS_SAR, cmd);
      ++done;
    }
    total += perKind;
  }
  printf("sAR: %d random commands (%zu ops x float/integer kinds), all byte-identical\n", total,
         kinds.size());
}

// ---- GDMA DMA_tensor ---------------------------------------------------------

TEST(Bm1684xDiff, TensorCopiesMatchTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  int done = 0, fills = 0, reshapes = 0, masked = 0;
  while (done < commandsPerClass()) {
    kiln_bm_dma_tensor t{};
    t.stride_enable = 1;
    t.cmd_id_en = 1;
    t.cmd_id = 1;
    t.cmd_type = KILN_BM_GDMA_TENSOR;
    uint32_t prec = pick(g, kAllPrecs), bytes = precBytes(prec);
    t.src_data_format = prec;
    Dims d{rnd(g, 1, 3), rnd(g, 1, 100), rnd(g, 1, 8), rnd(g, 1, 24)};
    t.src_nsize = d.n, t.src_csize = d.c, t.src_hsize = d.h, t.src_wsize = d.w;
    Dims o = d;
    t.nchw_copy = 1;
    uint32_t dir = rnd(g, 0, 3); // bit 0: source in LMEM, bit 1: destination in LMEM
    if (rnd(g, 0, 4) == 0) { // the destination reshaped: the same elements in n, c, h, w order
      t.nchw_copy = 0;
      o = rnd(g, 0, 1) ? Dims{1, d.n * d.c, d.h, d.w} : Dims{d.n, d.c, d.h * d.w, 1};
      t.dst_nsize = o.n, t.dst_csize = o.c, t.dst_hsize = o.h, t.dst_wsize = o.w;
      ++reshapes;
    }
    uint32_t nextLmem = 0;
    uint64_t nextDdr = 0;
    bool ok = true;
    auto side = [&](const Dims &s, bool lmem, bool isSrc, uint64_t *addr, uint64_t st[4]) {
      if (lmem) {
        uint32_t a = placeLmem(g, s, prec, KILN_BM_LAYOUT_STRIDE, rnd(g, 0, 63), &nextLmem, st);
        if (a == UINT32_MAX) ok = false;
        *addr = KILN_BM_LMEM_BASE + a;
        return;
      }
      // DDR: dense or padded strides; a source may also broadcast (stride 0)
      // or read across in any order.
      st[3] = rnd(g, 1, 3);
      st[2] = st[3] * s.w + rnd(g, 0, 4);
      st[1] = st[2] * s.h + rnd(g, 0, 4);
      st[0] = st[1] * s.c + rnd(g, 0, 4);
      // (Not W: the simulator divides by a DDR W stride.)
      if (isSrc && rnd(g, 0, 7) == 0) st[rnd(g, 0, 2)] = 0;
      uint64_t extent = ((s.n - 1) * st[0] + (s.c - 1) * st[1] + (s.h - 1) * st[2] +
                         (s.w - 1) * st[3] + 1) * bytes;
      uint64_t off = (nextDdr + 63) / 64 * 64 + bytes * rnd(g, 0, 16);
      if (off + extent > kDdrArena) ok = false;
      nextDdr = off + extent;
      *addr = KILN_BM_DDR_BASE + off;
    };
    uint64_t src = 0, dst = 0, ss[4], ds[4];
    if (rnd(g, 0, 9) == 0) {
      t.fill_constant_en = 1;
      t.constant_value = rnd(g, 0, UINT32_MAX);
      ++fills;
    } else {
      side(d, dir & 1u, true, &src, ss);
    }
    side(o, dir & 2u, false, &dst, ds);
    if (!ok) continue;
    if (!t.fill_constant_en) {
      t.src_nstride = ss[0], t.src_cstride = ss[1], t.src_hstride = ss[2], t.src_wstride = ss[3];
      t.src_start_addr_l32 = src & 0xFFFFFFFFu, t.src_start_addr_h8 = src >> 32;
    }
    t.dst_nstride = ds[0], t.dst_cstride = ds[1], t.dst_hstride = ds[2], t.dst_wstride = ds[3];
    t.dst_start_addr_l32 = dst & 0xFFFFFFFFu, t.dst_start_addr_h8 = dst >> 32;
    t.localmem_mask_l32 = 0xFFFFFFFFu, t.localmem_mask_h32 = 0xFFFFFFFFu;
    if ((dir & 2u) && rnd(g, 0, 9) == 0) {
      t.localmem_mask_l32 = rnd(g, 0, UINT32_MAX), t.localmem_mask_h32 = rnd(g, 0, UINT32_MAX);
      ++masked;
    }
    uint8_t cmd[KILN_BM_DMA_TENSOR_BYTES];
    ASSERT_EQ(kiln_bm_dma_tensor_encode(&t, cmd), nullptr);
    m.randomize(prec);
    std::string diff = m.run(cmd, sizeof cmd, SophgoSim::Gdma);
    ASSERT_EQ(diff, "") << describe(KILN_BM_CLASS_DMA_TENSOR, cmd);
    ++done;
  }
  printf("DMA_tensor: %d random copies (%d fills, %d reshaped, %d lane-masked), all "
         "byte-identical\n", done, fills, reshapes, masked);
}


// ---- sCONV ------------------------------------------------------------------------

// Distance in units in the last place between two values of a float format
// (bits ordered as integers; +0 and -0 are one apart).
int64_t ulpDistance(uint32_t a, uint32_t b, uint32_t prec) {
  auto ordered = [&](uint32_t v) -> int64_t {
    const uint32_t signBit = prec == KILN_BM_PREC_FP32 ? 0x80000000u : 0x8000u;
    return (v & signBit) ? -static_cast<int64_t>(v & ~signBit) - 1 : static_cast<int64_t>(v);
  };
  int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}


// A random sliding window over an input of dims `in` (kernel up to 4x4,
// dilation, stride, zeros inserted between pixels, padding), written into an
// sCONV or sPorD command, which name these fields alike; the output's height
// and width, or false when the kernel is larger than the padded input.
template <typename Cmd>
bool randomWindow(std::mt19937_64 &g, const Dims &in, Cmd *c, uint32_t *oh, uint32_t *ow) {
  const uint32_t kh = rnd(g, 1, 4), kw = rnd(g, 1, 4);
  const uint32_t dy = rnd(g, 0, 3) == 0 ? 2 : 1, dx = rnd(g, 0, 3) == 0 ? 2 : 1;
  const uint32_t sy = rnd(g, 1, 3), sx = rnd(g, 1, 3);
  const uint32_t iy = rnd(g, 0, 5) == 0 ? 2 : 1, ix = rnd(g, 0, 5) == 0 ? 2 : 1;
  const uint32_t pt = rnd(g, 0, 2), pb = rnd(g, 0, 2), pl = rnd(g, 0, 2), pr = rnd(g, 0, 2);
  const int64_t fullH = int64_t{in.h - 1} * iy + 1 + pt + pb, fullW = int64_t{in.w - 1} * ix + 1 + pl + pr;
  const int64_t extH = int64_t{kh - 1} * dy + 1, extW = int64_t{kw - 1} * dx + 1;
  if (fullH < extH || fullW < extW) return false;
  *oh = static_cast<uint32_t>((fullH - extH) / sy + 1);
  *ow = static_cast<uint32_t>((fullW - extW) / sx + 1);
  c->opd0_h = in.h, c->opd0_w = in.w, c->opd1_h = kh, c->opd1_w = kw;
  c->res_op_y_str = sy, c->res_op_x_str = sx;
  c->opd1_y_ins0 = dy - 1, c->opd1_x_ins0 = dx - 1, c->opd0_y_ins0 = iy - 1, c->opd0_x_ins0 = ix - 1;
  c->opd0_up_pad = pt, c->opd0_dn_pad = pb, c->opd0_lf_pad = pl, c->opd0_rt_pad = pr;
  return true;
}

struct ConvStats {
  int commands = 0, identical = 0;
  int64_t maxUlp = 0;
};

// A random sCONV (f32, f16, bf16, or int8 with an int32 result); false when
// it does not fit the arena.
bool randomConv(std::mt19937_64 &g, uint32_t prec, uint32_t outPrec, kiln_bm_sconv *k) {
  *k = kiln_bm_sconv{};
  k->cmd_short = 1, k->cmd_id = 1, k->cmd_id_en = 1, k->tsk_typ = KILN_BM_TSK_CONV;
  k->opd0_prec = prec, k->res0_prec = outPrec;
  k->opd0_sign = 1, k->opd1_sign = 1, k->opd2_sign = 1;
  const Dims in{rnd(g, 1, 2), rnd(g, 1, 40), rnd(g, 1, 9), rnd(g, 1, 9)};
  Dims out{in.n, rnd(g, 1, 80), 0, 0};
  if (!randomWindow(g, in, k, &out.h, &out.w)) return false;
  k->res0_n = out.n, k->res0_c = out.c, k->res0_h = out.h, k->res0_w = out.w;
  k->opd0_c = in.c;
  k->kernel_rotate = rnd(g, 0, 3) == 0; // a transposed conv's turned filter
  uint32_t next = 0;
  uint64_t st[4];
  const uint32_t outLane = rnd(g, 0, 63);
  k->res0_addr = placeLmem(g, out, outPrec, KILN_BM_LAYOUT_ALIGN_EU, outLane, &next, st);
  k->opd0_str = rnd(g, 0, 3) == 0 ? KILN_BM_LAYOUT_COMPACT : KILN_BM_LAYOUT_ALIGN_EU;
  k->opd0_addr = placeLmem(g, in, prec, static_cast<uint32_t>(k->opd0_str), rnd(g, 0, 63), &next, st);
  k->opd0_n_str = st[0], k->opd0_c_str = st[1], k->opd0_h_str = st[2], k->opd0_w_str = st[3];
  // The filter and bias on the output channels' lanes.
  const uint32_t cube = prec == KILN_BM_PREC_FP32 ? 1 : prec == KILN_BM_PREC_INT8 ? 64 : 32;
  const uint32_t icAligned = (in.c + cube - 1) / cube * cube;
  Dims filter{1, out.c, 1, icAligned * static_cast<uint32_t>(k->opd1_h * k->opd1_w)};
  k->opd1_addr = placeLmem(g, filter, prec, KILN_BM_LAYOUT_COMPACT, outLane, &next, st);
  if (prec == KILN_BM_PREC_INT8) {
    // opd2 is the kernel zero point, set below.
  } else if (rnd(g, 0, 2) == 0) {
    k->opd2_const = 1;
    k->opd2_addr = kiln_f32_bits(static_cast<float>(rnd(g, 0, 200)) / 50.0f - 2.0f);
  } else {
    k->opd2_addr = placeLmem(g, Dims{1, out.c, 1, 1}, KILN_BM_PREC_FP32, KILN_BM_LAYOUT_COMPACT,
                             outLane, &next, st);
  }
  k->opd3_const = 1;
  if (prec == KILN_BM_PREC_INT8) {
    // Either input may be unsigned; the kernel zero point is an immediate.
    k->opd0_sign = rnd(g, 0, 1), k->opd1_sign = rnd(g, 0, 1);
    k->opd2_const = 1;
    k->opd2_sign = rnd(g, 0, 1);
    k->opd2_addr = rnd(g, 0, 1) ? 0 : static_cast<uint8_t>(static_cast<int>(rnd(g, 0, 6)) - 3);
    k->opd3_addr = rnd(g, 0, 1) ? 0 : rnd(g, 0, 255);
  } else if (rnd(g, 0, 2) == 0) {
    k->opd3_addr = floatBitsOf(prec, static_cast<float>(rnd(g, 0, 8)) / 4.0f - 1.0f);
  }
  return k->res0_addr != UINT32_MAX && k->opd0_addr != UINT32_MAX && k->opd1_addr != UINT32_MAX &&
         k->opd2_addr != UINT32_MAX;
}

// (input and filter format, result format)
class Convolution : public testing::TestWithParam<std::pair<uint32_t, uint32_t>> {};

TEST_P(Convolution, MatchesTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  const auto [prec, outPrec] = GetParam();
  ConvStats st;
  while (st.commands < (commandsPerClass() + 5) / 6) {
    kiln_bm_sconv k;
    if (!randomConv(g, prec, outPrec, &k)) continue;
    uint8_t cmd[KILN_BM_SCONV_BYTES];
    ASSERT_EQ(kiln_bm_sconv_encode(&k, cmd), nullptr);
    m.randomize(prec, true);
    std::string e = m.runOnly(cmd, sizeof cmd, SophgoSim::Tiu);
    ASSERT_EQ(e, "") << describe(KILN_BM_CLASS_SCONV, cmd);
    // The result element by element (its largest difference in ulp is the
    // figure to report should it ever be non-zero); then the simulator's
    // result is taken into kiln's memory and every other byte must match.
    const uint32_t bytes = precBytes(outPrec);
    const uint32_t lane0 = static_cast<uint32_t>(k.res0_addr >> KILN_BM_LANE_SHIFT);
    const uint32_t off = static_cast<uint32_t>(k.res0_addr) & (kLane - 1);
    const uint64_t eu = KILN_EU_BYTES / bytes;
    const uint64_t cs = (k.res0_h * k.res0_w + eu - 1) / eu * eu;
    const uint64_t ns = cs * ((lane0 + k.res0_c + 63) / 64);
    int64_t worst = 0;
    for (uint32_t n = 0; n < k.res0_n; ++n)
      for (uint32_t o = 0; o < k.res0_c; ++o)
        for (uint32_t e2 = 0; e2 < k.res0_h * k.res0_w; ++e2) {
          uint64_t at = ((lane0 + o) % 64) * kLane + off +
                        (n * ns + ((lane0 + o) / 64) * cs + e2) * bytes;
          uint32_t a = 0, b = 0;
          memcpy(&a, m.kilnLmem() + at, bytes);
          memcpy(&b, m.simLmem() + at, bytes);
          worst = std::max(worst, ulpDistance(a, b, outPrec));
          memcpy(m.kilnLmem() + at, m.simLmem() + at, bytes);
        }
    ASSERT_EQ(m.compare(), "") << describe(KILN_BM_CLASS_SCONV, cmd);
    ++st.commands;
    st.identical += worst == 0;
    st.maxUlp = std::max(st.maxUlp, worst);
    EXPECT_EQ(worst, 0) << precName(prec) << "->" << precName(outPrec) << ", "
                        << describe(KILN_BM_CLASS_SCONV, cmd);
  }
  printf("sCONV %s->%s: %d random convs, %d byte-identical, largest difference %lld ulp\n",
         precName(prec), precName(outPrec), st.commands, st.identical,
         static_cast<long long>(st.maxUlp));
}

INSTANTIATE_TEST_SUITE_P(
    Bm1684xDiff, Convolution,
    testing::Values(std::pair{uint32_t{KILN_BM_PREC_FP32}, uint32_t{KILN_BM_PREC_FP32}},
                    std::pair{uint32_t{KILN_BM_PREC_FP16}, uint32_t{KILN_BM_PREC_FP16}},
                    std::pair{uint32_t{KILN_BM_PREC_FP16}, uint32_t{KILN_BM_PREC_FP32}},
                    std::pair{uint32_t{KILN_BM_PREC_BF16}, uint32_t{KILN_BM_PREC_BF16}},
                    std::pair{uint32_t{KILN_BM_PREC_BF16}, uint32_t{KILN_BM_PREC_FP32}},
                    std::pair{uint32_t{KILN_BM_PREC_INT8}, uint32_t{KILN_BM_PREC_INT32}}),
    [](const testing::TestParamInfo<std::pair<uint32_t, uint32_t>> &info) {
      return std::string(precName(info.param.first)) + "_to_" + precName(info.param.second);
    });

// ---- sPorD -----------------------------------------------------------------------

// A random float sPorD of kind eu (0 depthwise, 1 average, 4 max); false
// when it does not fit the arena.
bool randomPord(std::mt19937_64 &g, uint32_t eu, uint32_t prec, kiln_bm_spord *p) {
  *p = kiln_bm_spord{};
  p->cmd_short = 1, p->cmd_id = 1, p->cmd_id_en = 1, p->tsk_typ = KILN_BM_TSK_PORD;
  p->tsk_eu_typ = eu;
  p->opd0_prec = prec, p->res0_prec = prec;
  p->opd0_sign = 1, p->opd1_sign = 1, p->opd2_sign = 1;
  const Dims in{rnd(g, 1, 2), rnd(g, 1, 100), rnd(g, 1, 10), rnd(g, 1, 10)};
  Dims out{in.n, in.c, 0, 0};
  if (!randomWindow(g, in, p, &out.h, &out.w)) return false;
  const uint32_t kh = static_cast<uint32_t>(p->opd1_h), kw = static_cast<uint32_t>(p->opd1_w);
  p->res0_n = out.n, p->res0_c = out.c, p->res0_h = out.h, p->res0_w = out.w;
  auto floatBits = [&](float f) { return floatBitsOf(prec, f); };
  uint32_t next = 0;
  uint64_t st[4];
  const uint32_t lane0 = rnd(g, 0, 63);
  p->res0_addr = placeLmem(g, out, prec, KILN_BM_LAYOUT_ALIGN_EU, lane0, &next, st);
  p->opd0_addr = placeLmem(g, in, prec, KILN_BM_LAYOUT_ALIGN_EU, lane0, &next, st);
  p->opd3_const = 1;
  p->opd3_addr = floatBits(static_cast<float>(rnd(g, 0, 8)) / 4.0f - 1.0f);
  if (eu == 1) { // the scale
    p->opd1_const = 1;
    p->opd1_addr = floatBits(1.0f / static_cast<float>(kh * kw));
  } else if (eu != 4) {
    if (rnd(g, 0, 3) == 0) {
      p->opd1_const = 1;
      p->opd1_addr = floatBits(static_cast<float>(rnd(g, 0, 200)) / 50.0f - 2.0f);
    } else {
      p->opd1_addr = placeLmem(g, Dims{1, in.c, kh, kw}, prec, KILN_BM_LAYOUT_COMPACT, lane0, &next, st);
    }
    if (rnd(g, 0, 2) == 0) { // the bias, of the input's format
      p->opd2_const = 1;
      p->opd2_addr = floatBits(static_cast<float>(rnd(g, 0, 200)) / 50.0f - 2.0f);
    } else {
      p->opd2_addr = placeLmem(g, Dims{1, in.c, 1, 1}, prec, KILN_BM_LAYOUT_COMPACT, lane0, &next, st);
    }
  }
  return p->res0_addr != UINT32_MAX && p->opd0_addr != UINT32_MAX && p->opd1_addr != UINT32_MAX &&
         p->opd2_addr != UINT32_MAX;
}

TEST(Bm1684xDiff, FloatPoolingAndDepthwiseMatchTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  const uint32_t kinds[] = {0, 1, 4};
  const char *names[] = {"depthwise", "avg", "", "", "max"};
  const int count = (commandsPerClass() + 8) / 9;
  for (uint32_t eu : kinds)
    for (uint32_t prec : kFloatPrecs) {
      for (int done = 0; done < count;) {
        kiln_bm_spord p;
        if (!randomPord(g, eu, prec, &p)) continue;
        uint8_t cmd[KILN_BM_SPORD_BYTES];
        ASSERT_EQ(kiln_bm_spord_encode(&p, cmd), nullptr);
        m.randomize(prec, true);
        std::string diff = m.run(cmd, sizeof cmd, SophgoSim::Tiu);
        ASSERT_EQ(diff, "") << names[eu] << " " << precName(prec) << ": "
                            << describe(KILN_BM_CLASS_SPORD, cmd);
        ++done;
      }
      printf("sPorD %s %s: %d random commands, all byte-identical\n", names[eu], precName(prec),
             count);
    }
}

TEST(Bm1684xDiff, IntegerMaxPoolingMatchesTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  int done = 0, unsignedCount = 0;
  while (done < commandsPerClass()) {
    kiln_bm_spord p;
    if (!randomPord(g, 4, KILN_BM_PREC_INT8, &p)) continue;
    p.opd0_sign = rnd(g, 0, 1); // int8 or uint8; the result takes the input's
    p.opd3_addr = rnd(g, 0, 255); // the padding value's byte
    unsignedCount += p.opd0_sign == 0;
    ASSERT_EQ(m.runTiu(p, kiln_bm_spord_encode, KILN_BM_CLASS_SPORD, KILN_BM_PREC_INT8), "");
    ++done;
  }
  printf("sPorD max i8/u8: %d random commands (%d unsigned), all byte-identical\n", done,
         unsignedCount);
}

TEST(Bm1684xDiff, IntegerDepthwiseMatchesTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  int done = 0;
  while (done < commandsPerClass()) {
    kiln_bm_spord p;
    if (!randomPord(g, 0, KILN_BM_PREC_INT8, &p)) continue;
    // int8 or uint8 inputs and kernels, int32 sums with an int32 bias.
    p.res0_prec = KILN_BM_PREC_INT32;
    p.opd0_sign = rnd(g, 0, 1), p.opd1_sign = rnd(g, 0, 1);
    p.opd3_addr = rnd(g, 0, 255);
    if (p.opd1_const) p.opd1_addr = rnd(g, 0, 255);
    if (p.opd2_const) p.opd2_addr = rnd(g, 0, UINT32_MAX);
    // The result and bias are 4 bytes an element: place them again.
    uint32_t next = 0;
    uint64_t st[4];
    const uint32_t lane0 = static_cast<uint32_t>(p.res0_addr >> KILN_BM_LANE_SHIFT);
    const Dims out{static_cast<uint32_t>(p.res0_n), static_cast<uint32_t>(p.res0_c),
                   static_cast<uint32_t>(p.res0_h), static_cast<uint32_t>(p.res0_w)};
    const Dims in{out.n, out.c, static_cast<uint32_t>(p.opd0_h), static_cast<uint32_t>(p.opd0_w)};
    p.res0_addr = placeLmem(g, out, KILN_BM_PREC_INT32, KILN_BM_LAYOUT_ALIGN_EU, lane0, &next, st);
    p.opd0_addr = placeLmem(g, in, KILN_BM_PREC_INT8, KILN_BM_LAYOUT_ALIGN_EU, lane0, &next, st);
    if (!p.opd1_const)
      p.opd1_addr = placeLmem(g, Dims{1, out.c, static_cast<uint32_t>(p.opd1_h),
                                      static_cast<uint32_t>(p.opd1_w)},
                              KILN_BM_PREC_INT8, KILN_BM_LAYOUT_COMPACT, lane0, &next, st);
    if (!p.opd2_const)
      p.opd2_addr = placeLmem(g, Dims{1, out.c, 1, 1}, KILN_BM_PREC_INT32, KILN_BM_LAYOUT_COMPACT,
                              lane0, &next, st);
    if (p.res0_addr == UINT32_MAX || p.opd0_addr == UINT32_MAX || p.opd1_addr == UINT32_MAX ||
        p.opd2_addr == UINT32_MAX)
      continue;
    ASSERT_EQ(m.runTiu(p, kiln_bm_spord_encode, KILN_BM_CLASS_SPORD, KILN_BM_PREC_INT8), "");
    ++done;
  }
  printf("sPorD depthwise i8/u8 -> i32: %d random commands, all byte-identical\n", done);
}

// ---- sMM2 (matmul, matrix2 layout) ---------------------------------------------------

TEST(Bm1684xDiff, MatmulNNMatchesTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  int done = 0;
  while (done < commandsPerClass()) {
    kiln_bm_smm2 k{};
    k.cmd_short = 1, k.cmd_id = 1, k.cmd_id_en = 1, k.tsk_typ = KILN_BM_TSK_MM;
    k.tsk_eu_typ = 4;
    const uint32_t prec = rnd(g, 0, 1) ? uint32_t{KILN_BM_PREC_FP16} : uint32_t{KILN_BM_PREC_BF16};
    const uint32_t resPrec = rnd(g, 0, 1) ? prec : uint32_t{KILN_BM_PREC_FP32};
    k.opd0_prec = prec, k.res0_prec = resPrec;
    // K past several IC blocks; M past the lanes.
    const uint32_t M = rnd(g, 1, 90), K = rnd(g, 1, 150), N = rnd(g, 1, 48);
    k.res0_c = M, k.res0_w = N, k.opd1_c = K, k.opd1_w = N;
    uint32_t next = 0;
    uint64_t st[4];
    // Matrices start at lane 0 (rows across lanes from lane 0).
    k.res0_addr = placeLmem(g, Dims{1, M, 1, N}, resPrec, KILN_BM_LAYOUT_ALIGN_EU, 0, &next, st);
    k.opd0_addr = placeLmem(g, Dims{1, M, 1, K}, prec, KILN_BM_LAYOUT_ALIGN_EU, 0, &next, st);
    k.opd1_addr = placeLmem(g, Dims{1, K, 1, N}, prec, KILN_BM_LAYOUT_ALIGN_EU, 0, &next, st);
    if (k.res0_addr == UINT32_MAX || k.opd0_addr == UINT32_MAX || k.opd1_addr == UINT32_MAX)
      continue;
    const std::string diff = m.runTiu(k, kiln_bm_smm2_encode, KILN_BM_CLASS_SMM2, prec);
    ASSERT_EQ(diff, "");
    ++done;
  }
  printf("sMM2 NN f16/bf16 -> own format or f32: %d random matmuls, all byte-identical\n", done);
}

// ---- sCMP (compare and select) --------------------------------------------------------

TEST(Bm1684xDiff, CompareAndSelectMatchTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  int done = 0;
  while (done < commandsPerClass()) {
    kiln_bm_scmp k{};
    k.cmd_short = 1, k.cmd_id = 1, k.cmd_id_en = 1, k.tsk_typ = KILN_BM_TSK_CMP;
    k.tsk_eu_typ = rnd(g, 22, 26);
    const bool two = k.tsk_eu_typ == 22 || k.tsk_eu_typ == 25;
    // Compared and selected formats of one width (the model refuses others).
    uint32_t prec = pick(g, kAllPrecs), selPrec = pick(g, kAllPrecs);
    while (precBytes(selPrec) != precBytes(prec))
      selPrec = pick(g, kAllPrecs);
    k.opd0_prec = prec, k.opd2_prec = selPrec;
    k.opd0_sign = rnd(g, 0, 1);
    const Dims d{rnd(g, 1, 2), rnd(g, 1, 80), rnd(g, 1, 6), rnd(g, 1, 20)};
    k.res0_n = d.n, k.res0_c = d.c, k.res0_h = d.h, k.res0_w = d.w;
    uint32_t next = 0, lane0 = rnd(g, 0, 63);
    uint64_t st[4];
    auto place = [&](uint32_t p) { return placeLmem(g, d, p, KILN_BM_LAYOUT_ALIGN_EU, lane0, &next, st); };
    k.res0_addr = place(two ? prec : selPrec);
    if (two) k.res1_addr = place(selPrec);
    const uint32_t precs[4] = {prec, prec, selPrec, selPrec};
    uint64_t *addrs[4] = {&k.opd0_addr, &k.opd1_addr, &k.opd2_addr, &k.opd3_addr};
    uint64_t *consts[4] = {&k.opd0_const, &k.opd1_const, &k.opd2_const, &k.opd3_const};
    bool ok = k.res0_addr != UINT32_MAX && k.res1_addr != UINT32_MAX;
    for (int i = 0; i < 4; ++i) {
      if (i > 0 && rnd(g, 0, 3) == 0) {
        *consts[i] = 1;
        *addrs[i] = rnd(g, 0, UINT32_MAX) & (precBytes(precs[i]) == 4 ? 0xFFFFFFFFu
                                             : precBytes(precs[i]) == 2 ? 0xFFFFu : 0xFFu);
      } else {
        *addrs[i] = place(precs[i]);
        ok = ok && *addrs[i] != UINT32_MAX;
      }
    }
    if (!ok) continue;
    uint8_t cmd[KILN_BM_SCMP_BYTES];
    ASSERT_EQ(kiln_bm_scmp_encode(&k, cmd), nullptr);
    m.randomize(prec, true);
    std::string diff = m.run(cmd, sizeof cmd, SophgoSim::Tiu);
    ASSERT_EQ(diff, "") << describe(KILN_BM_CLASS_SCMP, cmd);
    ++done;
  }
  printf("sCMP: %d random compare/selects, all byte-identical\n", done);
}

// ---- sTRANS&sBC (lane copy, lane broadcast) -----------------------------------------

TEST(Bm1684xDiff, LaneCopyAndBroadcastMatchTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  int done = 0, broadcasts = 0;
  while (done < commandsPerClass()) {
    kiln_bm_strans_bc t{};
    t.cmd_short = 1, t.cmd_id = 1, t.cmd_id_en = 1, t.tsk_typ = KILN_BM_TSK_TRANS_BC;
    t.tsk_eu_typ = rnd(g, 2, 3);
    const uint32_t prec = pick(g, kAllPrecs);
    t.res0_prec = prec;
    const Dims out{rnd(g, 1, 3), rnd(g, 1, 100), rnd(g, 1, 8), rnd(g, 1, 24)};
    t.res0_n = out.n, t.res0_c = out.c, t.res0_h = out.h, t.res0_w = out.w;
    const Dims in{out.n, t.tsk_eu_typ == 3 ? 1u : out.c, out.h, out.w};
    t.opd0_c = in.c, t.opd0_w = in.w;
    uint32_t next = 0;
    uint64_t st[4];
    t.res0_addr = placeLmem(g, out, prec, KILN_BM_LAYOUT_ALIGN_EU, rnd(g, 0, 63), &next, st);
    t.opd0_addr = placeLmem(g, in, prec, KILN_BM_LAYOUT_ALIGN_EU, rnd(g, 0, 63), &next, st);
    if (t.res0_addr == UINT32_MAX || t.opd0_addr == UINT32_MAX) continue;
    broadcasts += t.tsk_eu_typ == 3;
    ASSERT_EQ(m.runTiu(t, kiln_bm_strans_bc_encode, KILN_BM_CLASS_STRANS_BC, prec), "");
    ++done;
  }
  printf("sTRANS&sBC: %d random lane copies and broadcasts (%d broadcasts), all byte-identical\n",
         done, broadcasts);
}

// ---- sSFU (special function unit) --------------------------------------------------

TEST(Bm1684xDiff, ReciprocalSquareRootMatchesTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  int done = 0, inPlace = 0;
  while (done < commandsPerClass()) {
    kiln_bm_ssfu f{};
    f.cmd_short = 1, f.cmd_id = 1, f.cmd_id_en = 1, f.tsk_typ = KILN_BM_TSK_SFU;
    f.tsk_eu_typ = KILN_BM_SFU_RSQRT;
    f.res0_prec = f.opd0_prec = KILN_BM_PREC_FP32;
    f.opd2_n_str = rnd(g, 0, 3); // 1..4 Newton steps
    const Dims d{rnd(g, 1, 3), rnd(g, 1, 100), rnd(g, 1, 8), rnd(g, 1, 24)};
    f.res0_n = d.n, f.res0_c = d.c, f.res0_h = d.h, f.res0_w = d.w;
    uint32_t next = 0;
    uint64_t st[4];
    const uint32_t lane = rnd(g, 0, 63);
    f.opd0_addr = placeLmem(g, d, KILN_BM_PREC_FP32, KILN_BM_LAYOUT_ALIGN_EU, lane, &next, st);
    f.res0_addr = rnd(g, 0, 3) == 0 ? f.opd0_addr
                                    : placeLmem(g, d, KILN_BM_PREC_FP32, KILN_BM_LAYOUT_ALIGN_EU,
                                                lane, &next, st);
    if (f.res0_addr == UINT32_MAX || f.opd0_addr == UINT32_MAX) continue;
    inPlace += f.res0_addr == f.opd0_addr;
    // Values of every magnitude: zeros, negatives, subnormals and infinities.
    ASSERT_EQ(m.runTiu(f, kiln_bm_ssfu_encode, KILN_BM_CLASS_SSFU, KILN_BM_PREC_FP32), "");
    ++done;
  }
  printf("sSFU RSQRT: %d random commands (%d in place), all byte-identical\n", done, inPlace);
}

TEST(Bm1684xDiff, TaylorSeriesMatchesTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  int done = 0, fourX = 0, otherLane = 0;
  while (done < commandsPerClass()) {
    kiln_bm_ssfu f{};
    f.cmd_short = 1, f.cmd_id = 1, f.cmd_id_en = 1, f.tsk_typ = KILN_BM_TSK_SFU;
    f.tsk_eu_typ = rnd(g, 0, 1) ? KILN_BM_SFU_TAYLOR : KILN_BM_SFU_TAYLOR_4X;
    f.res0_prec = f.opd0_prec = KILN_BM_PREC_FP32;
    const Dims d{rnd(g, 1, 3), rnd(g, 1, 100), rnd(g, 1, 8), rnd(g, 1, 24)};
    f.res0_n = d.n, f.res0_c = d.c, f.res0_h = d.h, f.res0_w = d.w;
    f.opd1_n = rnd(g, 2, 40);
    uint32_t next = 0;
    uint64_t st[4];
    const uint32_t lane = rnd(g, 0, 63);
    f.opd0_addr = placeLmem(g, d, KILN_BM_PREC_FP32, KILN_BM_LAYOUT_ALIGN_EU, lane, &next, st);
    f.res0_addr = rnd(g, 0, 3) == 0 ? f.opd0_addr
                                    : placeLmem(g, d, KILN_BM_PREC_FP32, KILN_BM_LAYOUT_ALIGN_EU,
                                                lane, &next, st);
    // Channel c reads the coefficients in lane (their address's lane + c)
    // % 64, which need not be its own.
    const uint32_t coefLane = rnd(g, 0, 3) ? lane : rnd(g, 0, 63);
    f.opd1_addr = placeLmem(g, Dims{1, 1, 1, static_cast<uint32_t>(f.opd1_n)}, KILN_BM_PREC_FP32,
                            KILN_BM_LAYOUT_COMPACT, coefLane, &next, st);
    if (f.res0_addr == UINT32_MAX || f.opd0_addr == UINT32_MAX || f.opd1_addr == UINT32_MAX) continue;
    fourX += f.tsk_eu_typ == KILN_BM_SFU_TAYLOR_4X;
    otherLane += coefLane != lane;
    ASSERT_EQ(m.runTiu(f, kiln_bm_ssfu_encode, KILN_BM_CLASS_SSFU, KILN_BM_PREC_FP32), "");
    ++done;
  }
  printf("sSFU TAYLOR f32: %d random commands (%d TAYLOR_4X, %d with the coefficients' address in "
         "another lane), all byte-identical\n", done, fourX, otherLane);
}

// ---- sRQ (integer requant) -------------------------------------------------------

TEST(Bm1684xDiff, IntegerRequantMatchesTheSimulator) {
  KILN_SIM_OR_SKIP(sim);
  Machines m(sim);
  auto &g = m.rng();
  int done = 0, perChannel = 0;
  while (done < commandsPerClass()) {
    kiln_bm_srqdq r{};
    r.cmd_short = 1, r.cmd_id = 1, r.cmd_id_en = 1, r.tsk_typ = KILN_BM_TSK_RQDQ, r.tsk_eu_typ = 1;
    const uint32_t inPrecs[] = {KILN_BM_PREC_INT16, KILN_BM_PREC_INT32};
    const uint32_t outPrecs[] = {KILN_BM_PREC_INT8, KILN_BM_PREC_INT16};
    const uint32_t inPrec = pick(g, inPrecs), outPrec = pick(g, outPrecs);
    r.opd0_prec = inPrec, r.opd0_sign = rnd(g, 0, 1);
    r.res0_prec = outPrec, r.opd2_sign = rnd(g, 0, 1);
    r.opd2_n_str = rnd(g, 0, 6);
    Dims d{rnd(g, 1, 2), rnd(g, 1, 100), rnd(g, 1, 6), rnd(g, 1, 16)};
    r.res0_n = d.n, r.res0_c = d.c, r.res0_h = d.h, r.res0_w = d.w;
    uint32_t next = 0, lane0 = rnd(g, 0, 63);
    uint64_t st[4];
    r.res0_addr = placeLmem(g, d, outPrec, KILN_BM_LAYOUT_ALIGN_EU, lane0, &next, st);
    r.opd0_addr = placeLmem(g, d, inPrec, KILN_BM_LAYOUT_ALIGN_EU, lane0, &next, st);
    // Multipliers of any size and sign, right shifts up to 40 and a few
    // left shifts, zero points of either sign.
    auto mult = [&] { return rnd(g, 0, 1) ? rnd(g, 0, UINT32_MAX) : rnd(g, 0, 70000) - 35000u; };
    auto shift = [&] { return static_cast<int32_t>(rnd(g, 0, 44)) - 40; };
    auto zp = [&] { return static_cast<int32_t>(rnd(g, 0, 400)) - 200; };
    uint32_t params = UINT32_MAX;
    if (rnd(g, 0, 1)) {
      r.opd1_const = 1;
      r.opd1_addr = mult();
      r.opd2_addr = static_cast<uint8_t>(shift()) | static_cast<uint32_t>(static_cast<uint16_t>(zp())) << 16;
    } else {
      if (lane0 + d.c > KILN_NPU_NUM) continue; // one channel group (see the model)
      params = placeLmem(g, Dims{1, d.c, 1, 3}, KILN_BM_PREC_INT32, KILN_BM_LAYOUT_COMPACT, lane0, &next, st);
      r.opd1_addr = params;
    }
    if (r.res0_addr == UINT32_MAX || r.opd0_addr == UINT32_MAX || r.opd1_addr == UINT32_MAX) continue;
    uint8_t cmd[KILN_BM_SRQDQ_BYTES];
    ASSERT_EQ(kiln_bm_srqdq_encode(&r, cmd), nullptr);
    m.randomize(KILN_BM_PREC_INT32);
    if (!r.opd1_const) { // legal per-channel parameters in both memories
      for (uint32_t c = 0; c < d.c; ++c) {
        const int32_t p[3] = {static_cast<int32_t>(mult()), shift(), zp()};
        const uint32_t lc = lane0 + c;
        const uint64_t at = (lc % 64) * kLane + (params & (kLane - 1)) + (lc / 64) * 12;
        memcpy(m.kilnLmem() + at, p, sizeof p);
        memcpy(m.simLmem() + at, p, sizeof p);
      }
      ++perChannel;
    }
    std::string diff = m.run(cmd, sizeof cmd, SophgoSim::Tiu);
    ASSERT_EQ(diff, "") << describe(KILN_BM_CLASS_SRQDQ, cmd);
    ++done;
  }
  printf("sRQ (integer requant): %d random commands (%d with per-channel parameters), all "
         "byte-identical\n", done, perChannel);
}

} // namespace
