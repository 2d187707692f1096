//===- Bm1684xLowering.cpp - Command records to BM1684X's own streams ------===//
//
// isa: bm1684x. Each group's TIU and GDMA records become the chip's own
// commands (kiln/abi/bm1684x.h): a record becomes one or more commands of its
// engine, the sync ids are renumbered so that a command waits for the last
// command of the record its record waited for, and each stream ends with its
// engine's end command and is zero-padded to KILN_BM_STREAM_ALIGN bytes.
//
// kiln's LMEM layout is the chip's alignEU layout with the first channel on
// lane 0, so tensors keep their addresses. Where a chip operand's per-lane
// layout differs from kiln's (filters, biases and depthwise kernels of more
// than 64 channels, whose channel groups kiln aligns to the EU and the chip
// packs), the command is split per image and per 64 output channels.
// What cannot be lowered yet is refused naming the op (docs/DESIGN.md 4.1).
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Codegen.h"

#include "kiln/abi/bm1684x.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"
#include "kiln/abi/quant.h"
#include "kiln/chip/tiu_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>

using namespace kiln;
using namespace kiln::codegen;

namespace {

uint64_t precOf(uint32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32: return KILN_BM_PREC_FP32;
  case KILN_DTYPE_F16: return KILN_BM_PREC_FP16;
  case KILN_DTYPE_BF16: return KILN_BM_PREC_BF16;
  case KILN_DTYPE_INT16: return KILN_BM_PREC_INT16;
  case KILN_DTYPE_INT32: return KILN_BM_PREC_INT32;
  default: return KILN_BM_PREC_INT8;
  }
}

bool isFloat(uint32_t dtype) {
  return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F16 || dtype == KILN_DTYPE_BF16;
}

/// The bits of f in a float dtype (the low 16 for f16 and bf16).
uint64_t floatBits(uint32_t dtype, float f) {
  uint32_t bits = kiln_f32_bits(f);
  return dtype == KILN_DTYPE_F16    ? kiln_f32_bits_to_f16_bits(bits)
         : dtype == KILN_DTYPE_BF16 ? kiln_f32_bits_to_bf16_bits(bits)
                                    : bits;
}

/// The float a dtype's bits stand for (the low 16 for f16 and bf16).
float floatOf(uint32_t dtype, uint64_t bits) {
  return dtype == KILN_DTYPE_F16    ? kiln_f16_to_f32(uint16_t(bits))
         : dtype == KILN_DTYPE_BF16 ? kiln_bf16_to_f32(uint16_t(bits))
                                    : kiln_f32_from_bits(uint32_t(bits));
}

uint64_t groupsOf(uint64_t c) { return (c + KILN_NPU_NUM - 1) / KILN_NPU_NUM; }

/// An LMEM operand as the chip addresses it: lane-0 offset and element
/// strides (n, c = one channel group, h, w) of kiln's layout.
struct View {
  uint64_t addr, n, c, h, w;
  uint64_t str[4];
  bool window; // a window of rows of taller planes: not the alignEU layout
};

View viewOf(const kiln_tiu_operand &o) {
  const uint32_t bytes = kiln_dtype_bytes(o.dtype);
  const uint32_t planeH = o.plane_h ? o.plane_h : o.h;
  const uint64_t plane = kiln_lmem_plane_stride(planeH, o.w, bytes) / bytes;
  View v{o.addr, o.n, o.c, o.h, o.w, {groupsOf(o.c) * plane, plane, o.w, 1}, planeH != o.h};
  return v;
}

/// Bytes per lane group of a conv filter [oc, ic, taps] in the chip's
/// IC-parallel layout, ic padded to blocks of `cube` (lg::chipFilterIcAlign).
uint64_t chipFilterPlane(uint32_t ic, uint32_t taps, uint32_t bytes, uint32_t cube) {
  return kiln_lmem_plane_stride((ic + cube - 1) / cube * cube, taps, bytes);
}

/// An int8 immediate's bits, and an int32's.
uint64_t int8Bits(int32_t v) { return uint8_t(v); }
uint64_t int32Bits(int64_t v) { return uint32_t(v); }

/// Where the chip's intermediates of an op go: right after its result's own
/// bytes (lg::chipScratchBytes reserved them).
uint64_t scratchOf(const kiln_tiu_operand &out) {
  return out.addr + kiln_lmem_lane_bytes(out.n, out.c, out.h, out.w, kiln_dtype_bytes(out.dtype));
}

/// An alignEU view of an [n, c, h, w] tensor of `dtype` at a lane-0 address.
View alignedView(uint64_t addr, uint64_t n, uint64_t c, uint64_t h, uint64_t w, uint32_t dtype) {
  kiln_tiu_operand o{};
  o.addr = uint32_t(addr), o.n = uint16_t(n), o.c = uint16_t(c), o.h = uint16_t(h), o.w = uint16_t(w);
  o.dtype = uint8_t(dtype);
  return viewOf(o);
}

/// Bytes of one channel group of an operand in a lane.
uint64_t planeBytes(const kiln_tiu_operand &o) {
  return kiln_lmem_plane_stride(o.plane_h ? o.plane_h : o.h, o.w, kiln_dtype_bytes(o.dtype));
}

/// What LMEM holds across groups, as far as the lowering needs it.
struct LmemKnowledge {
  // LMEM addresses (lane 0) that hold a conv filter for the chip, loaded by
  // an earlier copy of this group or a prefetch of an earlier one: the block
  // of input channels it was laid out in (0: copied as it was, through a
  // strided view) and the [ic, taps] rows the copy saw.
  struct LaidFilter {
    uint32_t block, ic, taps;
  };
  std::map<uint32_t, LaidFilter> chipFilters;
  // LMEM address -> the coefficient offset last loaded there whole.
  std::map<uint32_t, uint64_t> loadedFrom;
};

struct Lowering {
  Lowering(LmemKnowledge &known, const std::vector<uint8_t> &coeff,
           const std::vector<ChipFilterCopy> &chipCopies)
      : chipFilters(known.chipFilters), loadedFrom(known.loadedFrom), coeff(coeff),
        chipCopies(chipCopies) {}
  std::vector<uint8_t> tiu, gdma;
  std::map<uint32_t, LmemKnowledge::LaidFilter> &chipFilters;
  std::map<uint32_t, uint64_t> &loadedFrom;
  const std::vector<uint8_t> &coeff;
  const std::vector<ChipFilterCopy> &chipCopies;
  uint32_t tiuId = 0, gdmaId = 0;
  // Per kiln record id, the id of the last real command it became.
  std::map<uint32_t, uint32_t> lastTiu, lastGdma;
  uint32_t dep = 0; // the real id the record being lowered waits for
  // While a transposed conv is lowered: its sCONVs insert zeros between the
  // input's pixels (stride - 1 of them) and turn the filter (deconv()).
  bool transposed = false;
  uint32_t transposedStride[2] = {1, 1};
  std::string error;

  template <typename Cmd, typename Encode>
  void push(std::vector<uint8_t> &stream, Cmd &cmd, size_t bytes, Encode encode) {
    uint8_t buf[KILN_BM_MAX_CMD_BYTES];
    if (const char *bad = encode(&cmd, buf)) {
      if (error.empty())
        error = std::string("field ") + bad + " out of range";
      return;
    }
    stream.insert(stream.end(), buf, buf + bytes);
  }

  template <typename Cmd> void tiuHeader(Cmd &k, uint64_t tsk, uint64_t eu) {
    k.cmd_short = 1;
    k.cmd_id = ++tiuId;
    k.cmd_id_dep = dep;
    k.cmd_id_en = 1;
    k.tsk_typ = tsk;
    k.tsk_eu_typ = eu;
  }

  void fail(const std::string &why) {
    if (error.empty())
      error = why;
  }

  // ---- TIU -----------------------------------------------------------------

  /// An sAR of op writing out (its strides) in outType, operands signed.
  kiln_bm_sar arCommand(uint64_t op, const View &out, uint32_t outType) {
    kiln_bm_sar k{};
    tiuHeader(k, KILN_BM_TSK_AR, op);
    k.res0_prec = precOf(outType);
    k.opd0_sign = k.opd1_sign = k.opd2_sign = 1;
    k.res0_n = out.n, k.res0_c = out.c, k.res0_h = out.h, k.res0_w = out.w;
    k.res0_str = KILN_BM_LAYOUT_STRIDE;
    k.res0_addr = out.addr;
    k.res0_n_str = out.str[0], k.res0_c_str = out.str[1];
    k.res0_h_str = out.str[2], k.res0_w_str = out.str[3];
    return k;
  }

  /// out = a (op) b over out's shape; b may be a constant (bits) or absent.
  /// An integer add/sub/mul's exact result may be shifted right by rshift,
  /// rounded half away from zero, before it is stored; a DIV takes its
  /// 1/sqrt's Newton steps.
  void ar(uint64_t op, const View &out, uint32_t outType, const View *a, uint32_t aType,
          const View *b, uint32_t bType, bool bConst, uint64_t bBits, uint32_t rshift = 0,
          uint32_t newtonSteps = 0) {
    kiln_bm_sar k = arCommand(op, out, outType);
    k.tsk_opd_num = b || bConst ? 2 : 1;
    k.opd0_prec = precOf(aType);
    k.opd1_prec = precOf(bConst || !b ? aType : bType);
    // A dimension of 1 against a longer one of the result broadcasts.
    auto strides = [&](const View &v, uint64_t s[4]) {
      const uint64_t dims[4] = {v.n, v.c, v.h, v.w}, outDims[4] = {out.n, out.c, out.h, out.w};
      for (int i = 0; i < 4; ++i)
        s[i] = dims[i] == 1 && outDims[i] != 1 ? 0 : v.str[i];
      if (v.c == 1 && out.c != 1)
        fail("a channel broadcast (the chip keeps each channel on its own lane)");
    };
    uint64_t s[4];
    k.opd0_str = KILN_BM_LAYOUT_STRIDE;
    k.opd0_addr = a->addr;
    strides(*a, s);
    k.opd0_n_str = s[0], k.opd0_c_str = s[1], k.opd0_h_str = s[2], k.opd0_w_str = s[3];
    if (bConst) {
      k.opd1_const = 1;
      k.opd1_addr = bBits;
    } else if (b) {
      k.opd1_str = KILN_BM_LAYOUT_STRIDE;
      k.opd1_addr = b->addr;
      strides(*b, s);
      k.opd1_n_str = s[0], k.opd1_c_str = s[1], k.opd1_h_str = s[2], k.opd1_w_str = s[3];
    }
    if (rshift) {
      k.tsk_opd_num = 3;
      k.opd2_const = 1;
      k.opd2_addr = uint8_t(-int32_t(rshift));
      k.opd2_n_str = KILN_BM_ROUND_HALF_AWAY;
    }
    if (op == KILN_BM_AR_DIV) // the 1/sqrt's Newton steps
      k.opd2_n_str = newtonSteps - 1;
    push(tiu, k, KILN_BM_SAR_BYTES, kiln_bm_sar_encode);
  }

  /// out = 1/sqrt(in), f32 alignEU tensors, by the SFU with 4 Newton steps.
  void rsqrt(const View &out, const View &in) {
    kiln_bm_ssfu k{};
    tiuHeader(k, KILN_BM_TSK_SFU, KILN_BM_SFU_RSQRT);
    k.res0_prec = k.opd0_prec = KILN_BM_PREC_FP32;
    k.opd2_n_str = 3;
    k.res0_n = out.n, k.res0_c = out.c, k.res0_h = out.h, k.res0_w = out.w;
    k.res0_addr = out.addr, k.opd0_addr = in.addr;
    push(tiu, k, KILN_BM_SSFU_BYTES, kiln_bm_ssfu_encode);
  }

  /// Every element of out = one immediate (sAR COPY of a constant).
  void fill(const View &out, uint32_t dtype, uint64_t bits) {
    kiln_bm_sar k = arCommand(KILN_BM_AR_COPY, out, dtype);
    k.tsk_opd_num = 1;
    k.opd0_prec = k.opd1_prec = precOf(dtype);
    k.opd0_const = 1;
    k.opd0_addr = bits;
    push(tiu, k, KILN_BM_SAR_BYTES, kiln_bm_sar_encode);
  }

  /// out = sum_k coef[k] * in^k (f32 alignEU tensors) by the SFU's Taylor
  /// series: Horner's rule from the highest term, an f32 multiply and add
  /// per term (chip/bm1684x.cpp). Channel c reads the coefficients on lane
  /// c % 64 at `table`, which this first writes there.
  void taylor(const View &out, const View &in, const float *coef, uint32_t terms, uint64_t table) {
    const uint64_t lanes = std::min<uint64_t>(out.c, KILN_NPU_NUM);
    for (uint32_t k = 0; k < terms; ++k)
      fill(View{table + 4 * k, 1, lanes, 1, 1, {terms, terms, 1, 1}, false}, KILN_DTYPE_F32,
           kiln_f32_bits(coef[k]));
    kiln_bm_ssfu k{};
    tiuHeader(k, KILN_BM_TSK_SFU, KILN_BM_SFU_TAYLOR_4X);
    k.res0_prec = k.opd0_prec = KILN_BM_PREC_FP32;
    k.res0_n = out.n, k.res0_c = out.c, k.res0_h = out.h, k.res0_w = out.w;
    k.opd1_n = terms;
    k.res0_addr = out.addr, k.opd0_addr = in.addr, k.opd1_addr = table;
    push(tiu, k, KILN_BM_SSFU_BYTES, kiln_bm_ssfu_encode);
  }

  /// out = e^in, f32 alignEU tensors (out may be in). in is clamped to
  /// [ln(2^-126), 88] so that 2^n below stays a normal f32 (e^-87.3 is
  /// f32's least normal; e^88 ~ 1.65e38 stands for larger values), then
  /// x = n ln2 + r with n = round(x / ln2) and r = x - n ln2_hi - n ln2_lo
  /// (Cody and Waite's two-part ln2: n ln2_hi is exact), |r| <= ln2 / 2;
  /// e^r is the SFU's Taylor series of 1/k!, k < 10 (the next term is below
  /// 2^-28 of the sum), and 2^n the f32 whose bits are (n + 127) << 23.
  /// Uses an f32 and an int32 tensor of out's shape at `scratch`, then the
  /// coefficients in an EU's bytes (lg::chipScratchBytes).
  void exp(const View &out, const View &in, uint64_t scratch) {
    const uint32_t f32 = KILN_DTYPE_F32, i32 = KILN_DTYPE_INT32;
    const uint64_t tensor = kiln_lmem_lane_bytes(out.n, out.c, out.h, out.w, 4);
    const View t = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
    View n = alignedView(scratch + tensor, out.n, out.c, out.h, out.w, i32);
    const float ln2Hi = 0.693359375f, ln2Lo = -2.12194440e-4f;
    ar(KILN_BM_AR_MAX, out, f32, &in, f32, nullptr, f32, true, kiln_f32_bits(-87.3365448f));
    ar(KILN_BM_AR_MIN, out, f32, &out, f32, nullptr, f32, true, kiln_f32_bits(88.0f));
    ar(KILN_BM_AR_MUL, t, f32, &out, f32, nullptr, f32, true, kiln_f32_bits(1.44269504f));
    ar(KILN_BM_AR_DATA_CONVERT, n, i32, &t, f32, nullptr, 0, false, 0); // half to even
    for (float part : {ln2Hi, ln2Lo}) {
      ar(KILN_BM_AR_DATA_CONVERT, t, f32, &n, i32, nullptr, 0, false, 0);
      ar(KILN_BM_AR_MUL, t, f32, &t, f32, nullptr, f32, true, kiln_f32_bits(part));
      ar(KILN_BM_AR_SUB, out, f32, &out, f32, &t, f32, false, 0);
    }
    static const float kInverseFactorials[10] = {1.0f, 1.0f, 1.0f / 2, 1.0f / 6, 1.0f / 24,
                                                 1.0f / 120, 1.0f / 720, 1.0f / 5040,
                                                 1.0f / 40320, 1.0f / 362880};
    taylor(t, out, kInverseFactorials, 10, scratch + 2 * tensor);
    ar(KILN_BM_AR_ADD, n, i32, &n, i32, nullptr, i32, true, int32Bits(127));
    ar(KILN_BM_AR_MUL, n, i32, &n, i32, nullptr, i32, true, int32Bits(1 << 23));
    ar(KILN_BM_AR_MUL, out, f32, &t, f32, &n, f32, false, 0); // n's bits as an f32
  }

  /// out = 1 / (1 + e^-in), f32 alignEU tensors (out may be in); the
  /// reciprocal is the SFU's 1/sqrt squared (1 + e^-x >= 1, so both are
  /// finite; e^-x is at most e^88). Scratch as exp's.
  void sigmoid(const View &out, const View &in, uint64_t scratch) {
    const uint32_t f32 = KILN_DTYPE_F32;
    ar(KILN_BM_AR_MUL, out, f32, &in, f32, nullptr, f32, true, kiln_f32_bits(-1.0f));
    exp(out, out, scratch);
    ar(KILN_BM_AR_ADD, out, f32, &out, f32, nullptr, f32, true, kiln_f32_bits(1.0f));
    const View r = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
    rsqrt(r, out);
    ar(KILN_BM_AR_MUL, out, f32, &r, f32, &r, f32, false, 0);
  }

  /// out = max(out, 0) in place (INT8: max(out, zp_out)).
  void relu(const kiln_tiu_cmd &c) {
    View v = viewOf(c.out);
    const uint64_t zero = isFloat(c.out.dtype) ? floatBits(c.out.dtype, 0.0f)
                                                : int8Bits(kiln_zero_point(c.aux[2], 2));
    ar(KILN_BM_AR_MAX, v, c.out.dtype, &v, c.out.dtype, nullptr, c.out.dtype, true, zero);
  }

  /// out (INT8) = sat8(round_half_away(in * mult >> shift) + zp), in an
  /// int32 [n, c, h, w] alignEU tensor; the parameters immediates, or per
  /// channel from `table` (compact (mult, -shift, zp) int32 triples on the
  /// channels' lanes, at most 64 channels).
  void requant(uint64_t outAddr, uint64_t inAddr, uint64_t n, uint64_t c, uint64_t h, uint64_t w,
               const uint64_t *table, int64_t mult, int32_t shift, int32_t zp,
               uint64_t round = KILN_BM_ROUND_HALF_AWAY) {
    kiln_bm_srqdq k{};
    tiuHeader(k, KILN_BM_TSK_RQDQ, 1);
    k.opd0_prec = KILN_BM_PREC_INT32, k.opd0_sign = 1;
    k.res0_prec = KILN_BM_PREC_INT8, k.opd2_sign = 1;
    k.opd2_n_str = round;
    k.res0_n = n, k.res0_c = c, k.res0_h = h, k.res0_w = w;
    k.res0_addr = outAddr, k.opd0_addr = inAddr;
    if (table) {
      k.opd1_addr = *table;
    } else {
      k.opd1_const = 1;
      k.opd1_addr = int32Bits(mult);
      k.opd2_addr = uint64_t(uint8_t(-shift)) | uint64_t(uint16_t(zp)) << 16;
    }
    push(tiu, k, KILN_BM_SRQDQ_BYTES, kiln_bm_srqdq_encode);
  }

  // ---- INT8 ------------------------------------------------------------------------

  /// An INT8 conv: per image and 64 output channels, sCONV into int32
  /// accumulators and the bias added (a depthwise conv: sPorD, which adds
  /// it), the per-channel requant table rebuilt in the chip's order from
  /// kiln's (bias, multiplier, rshift), then sRQ.
  void convInt8(const kiln_tiu_cmd &c, uint64_t filterPlane, bool depthwise = false) {
    const int32_t zpIn = kiln_zero_point(c.aux[2], 0), zpOut = kiln_zero_point(c.aux[2], 2);
    if (zpIn != 0)
      return fail("an INT8 convolution with an input zero point (asymmetric: not yet)");
    if (c.out.plane_h && c.out.plane_h != c.out.h)
      return fail("a convolution writing a window of rows");
    const uint64_t acc = scratchOf(c.out);
    const uint64_t table = acc + kiln_lmem_lane_bytes(1, 1, c.out.h, c.out.w, 4);
    const View in = viewOf(c.in0);
    if (depthwise && in.window)
      return fail("a depthwise convolution over a window of rows");
    perImageAndLaneGroup(c, [&](uint32_t n, uint32_t c0, uint32_t count) {
      const uint64_t g = c0 / KILN_NPU_NUM;
      // kiln's table: (bias, multiplier, rshift) per channel, a 64-byte
      // plane per channel group.
      const uint64_t kilnTable = c.in2.addr + g * planeBytes(c.in2);
      if (depthwise) {
        kiln_bm_spord k = depthwiseCommand(c, n, c0, count, acc, KILN_BM_PREC_INT32);
        k.opd2_addr = kilnTable; // the bias, first of each channel's triple
        push(tiu, k, KILN_BM_SPORD_BYTES, kiln_bm_spord_encode);
      } else {
        kiln_bm_sconv k = convCommand(c, n, c0, count, acc, KILN_BM_PREC_INT32, filterPlane);
        k.opd2_const = 1, k.opd2_addr = 0; // no kernel zero point
        push(tiu, k, KILN_BM_SCONV_BYTES, kiln_bm_sconv_encode);
      }
      const View accView = alignedView(acc, 1, count, c.out.h, c.out.w, KILN_DTYPE_INT32);
      auto column = [&](uint64_t addr, uint64_t stride) {
        return View{addr, 1, count, 1, 1, {stride, stride, 1, 1}, false};
      };
      const View bias = column(kilnTable, 16), mult = column(kilnTable + 4, 16),
                 rshift = column(kilnTable + 8, 16);
      if (!depthwise)
        ar(KILN_BM_AR_ADD, accView, KILN_DTYPE_INT32, &accView, KILN_DTYPE_INT32, &bias,
           KILN_DTYPE_INT32, false, 0);
      const View t0 = column(table, 3), t1 = column(table + 4, 3), t2 = column(table + 8, 3);
      ar(KILN_BM_AR_COPY, t0, KILN_DTYPE_INT32, &mult, KILN_DTYPE_INT32, nullptr, 0, false, 0);
      ar(KILN_BM_AR_MUL, t1, KILN_DTYPE_INT32, &rshift, KILN_DTYPE_INT32, nullptr,
         KILN_DTYPE_INT32, true, int32Bits(-1));
      ar(KILN_BM_AR_MUL, t2, KILN_DTYPE_INT32, &rshift, KILN_DTYPE_INT32, nullptr,
         KILN_DTYPE_INT32, true, 0);
      ar(KILN_BM_AR_ADD, t2, KILN_DTYPE_INT32, &t2, KILN_DTYPE_INT32, nullptr, KILN_DTYPE_INT32,
         true, int32Bits(zpOut));
      requant(outChunk(c, n, c0), acc, 1, count, c.out.h, c.out.w, &table, 0, 0, 0);
    });
  }

  /// INT8 add/sub: requant((a - zp_a) * m0 +- (b - zp_b) * m1, 1, rshift,
  /// zp_out), the scaled operands as int32 beside the result.
  void eltwiseInt8(const kiln_tiu_cmd &c) {
    if (c.subop != KILN_ELT_ADD && c.subop != KILN_ELT_SUB)
      return fail("INT8 elementwise mul/max/min (not yet)");
    if ((c.in0.flags | c.in1.flags) & KILN_OPND_CONST)
      return fail("an INT8 elementwise op with a constant (not yet)");
    const View out = viewOf(c.out);
    if (out.window)
      return fail("an INT8 elementwise op writing a window of rows");
    const uint64_t a = scratchOf(c.out), b = a + kiln_lmem_lane_bytes(out.n, out.c, out.h, out.w, 4);
    const uint32_t i32 = KILN_DTYPE_INT32;
    const int64_t m[2] = {int32_t(c.aux[0]), int32_t(c.aux[1])};
    // The scaled operands are exact in 64 bits on the chip but kept in 32:
    // shift them right by as many bits as their sum would need beyond 31
    // (then kiln's one rounding of the sum becomes three; 0 when they fit).
    uint32_t pre = 0;
    while ((uint64_t(std::llabs(m[0])) + uint64_t(std::llabs(m[1]))) * 256u >>
               pre >= (uint64_t(1) << 31) && pre < uint32_t(c.aux[3]))
      ++pre;
    const kiln_tiu_operand *ins[2] = {&c.in0, &c.in1};
    for (int i = 0; i < 2; ++i) {
      const View x = viewOf(*ins[i]);
      const View s = alignedView(i ? b : a, out.n, out.c, out.h, out.w, i32);
      ar(KILN_BM_AR_DATA_CONVERT, s, i32, &x, KILN_DTYPE_INT8, nullptr, 0, false, 0);
      if (const int32_t zp = kiln_zero_point(c.aux[2], i))
        ar(KILN_BM_AR_SUB, s, i32, &s, i32, nullptr, i32, true, int32Bits(zp));
      ar(KILN_BM_AR_MUL, s, i32, &s, i32, nullptr, i32, true, int32Bits(m[i]), pre);
    }
    const View sa = alignedView(a, out.n, out.c, out.h, out.w, i32);
    const View sb = alignedView(b, out.n, out.c, out.h, out.w, i32);
    ar(c.subop == KILN_ELT_ADD ? KILN_BM_AR_ADD : KILN_BM_AR_SUB, sa, i32, &sa, i32, &sb, i32,
       false, 0);
    requant(c.out.addr, a, out.n, out.c, out.h, out.w, nullptr, 1, int32_t(c.aux[3] - pre),
            kiln_zero_point(c.aux[2], 2));
  }

  /// INT8 average (and sum) pooling over whole planes: the sums as int32
  /// by halving additions, then one requant. kiln divides the scaled sum by
  /// the count exactly; the chip's requant takes multiplier / 2^shift, so
  /// average pooling folds 1 / count into them (off by one at most, near
  /// rounding ties).
  void poolInt8(const kiln_tiu_cmd &c) {
    const bool avg = c.subop == KILN_POOL_AVG;
    const bool global = c.out.h == 1 && c.out.w == 1 && c.kh == c.in0.h && c.kw == c.in0.w &&
                        !(c.pad_top | c.pad_bottom | c.pad_left | c.pad_right);
    if (!global)
      return fail("INT8 average pooling other than over whole planes (not yet)");
    if (viewOf(c.in0).window || viewOf(c.out).window)
      return fail("pooling over a window of rows");
    const uint64_t n = c.out.n, ch = c.out.c, len = uint64_t{c.in0.h} * c.in0.w;
    const uint32_t i32 = KILN_DTYPE_INT32;
    const uint64_t sums = scratchOf(c.out), packed = sums + kiln_lmem_lane_bytes(n, ch, 1, len, 4);
    View in = viewOf(c.in0);
    in.h = 1, in.w = len, in.str[2] = 0; // a plane as one row
    const View all = alignedView(sums, n, ch, 1, len, i32);
    ar(KILN_BM_AR_DATA_CONVERT, all, i32, &in, KILN_DTYPE_INT8, nullptr, 0, false, 0);
    for (uint64_t left = len; left > 1;) {
      const uint64_t half = left / 2;
      View lo = all, hi = all;
      lo.w = hi.w = half;
      hi.addr += (left - half) * 4;
      ar(KILN_BM_AR_ADD, lo, i32, &lo, i32, &hi, i32, false, 0);
      left -= half;
    }
    View first = all;
    first.w = 1;
    const View one = alignedView(packed, n, ch, 1, 1, i32);
    ar(KILN_BM_AR_COPY, one, i32, &first, i32, nullptr, 0, false, 0);
    const int32_t zpIn = kiln_zero_point(c.aux[2], 0);
    if (zpIn)
      ar(KILN_BM_AR_SUB, one, i32, &one, i32, nullptr, i32, true, int32Bits(int64_t{zpIn} * len));
    int64_t mult = int32_t(c.aux[0]);
    int32_t shift = int32_t(c.aux[3]);
    if (avg) { // m0 / count as mult / 2^k, mult within int32
      const double exact = double(mult) / double(len);
      int k = 0;
      while (k < 40 && std::fabs(exact) * std::ldexp(1.0, k + 1) < 2147483647.0 && shift + k < 60)
        ++k;
      mult = std::llround(exact * std::ldexp(1.0, k));
      shift += k;
    }
    requant(c.out.addr, packed, n, ch, 1, 1, nullptr, mult, shift, kiln_zero_point(c.aux[2], 2));
  }



  template <typename Cmd> void window(Cmd &k, const kiln_tiu_cmd &c) {
    k.opd1_h = c.kh, k.opd1_w = c.kw;
    // One output along an axis takes no step: a global pool's stride (the
    // plane's size) would not fit the 4-bit field.
    k.res_op_y_str = c.out.h == 1 ? 1 : c.stride_h, k.res_op_x_str = c.out.w == 1 ? 1 : c.stride_w;
    k.opd1_y_ins0 = c.dil_h - 1u, k.opd1_x_ins0 = c.dil_w - 1u;
    k.opd0_up_pad = c.pad_top, k.opd0_dn_pad = c.pad_bottom;
    k.opd0_lf_pad = c.pad_left, k.opd0_rt_pad = c.pad_right;
  }

  /// Per image and per 64 output channels: (image, first channel).
  template <typename F> void perImageAndLaneGroup(const kiln_tiu_cmd &c, F f) {
    for (uint32_t n = 0; n < c.out.n; ++n)
      for (uint32_t c0 = 0; c0 < c.out.c; c0 += KILN_NPU_NUM)
        f(n, c0, std::min<uint32_t>(KILN_NPU_NUM, c.out.c - c0));
  }

  /// Where channels [c0, c0 + 64) of image n of the result start.
  uint64_t outChunk(const kiln_tiu_cmd &c, uint32_t n, uint32_t c0) const {
    return c.out.addr + (uint64_t{n} * groupsOf(c.out.c) + c0 / KILN_NPU_NUM) * planeBytes(c.out);
  }

  /// What an sCONV and an sPorD of `count` channels of one image into an
  /// alignEU tensor at resAddr share: the header, formats, window and result.
  template <typename Cmd>
  void windowCommand(Cmd &k, uint64_t tsk, const kiln_tiu_cmd &c, uint32_t count,
                     uint64_t resAddr, uint64_t resPrec) {
    tiuHeader(k, tsk, 0);
    k.opd0_prec = precOf(c.in0.dtype), k.res0_prec = resPrec;
    k.opd0_sign = k.opd1_sign = k.opd2_sign = 1;
    window(k, c);
    k.res0_n = 1, k.res0_c = count, k.res0_h = c.out.h, k.res0_w = c.out.w;
    k.res0_addr = resAddr;
  }

  /// The sCONV of output channels [c0, c0 + count) of image n into a
  /// [1, count, oh, ow] alignEU tensor at resAddr, the filter's lane groups
  /// filterPlane bytes apart; opd2 (bias or kernel zero point) is the caller's.
  kiln_bm_sconv convCommand(const kiln_tiu_cmd &c, uint32_t n, uint32_t c0, uint32_t count,
                            uint64_t resAddr, uint64_t resPrec, uint64_t filterPlane) {
    const View in = viewOf(c.in0);
    kiln_bm_sconv k{};
    windowCommand(k, KILN_BM_TSK_CONV, c, count, resAddr, resPrec);
    k.opd0_c = c.in0.c, k.opd0_h = c.in0.h, k.opd0_w = c.in0.w;
    k.opd0_addr = in.addr + n * in.str[0] * kiln_dtype_bytes(c.in0.dtype);
    if (in.window) {
      k.opd0_str = KILN_BM_LAYOUT_STRIDE;
      k.opd0_n_str = in.str[0], k.opd0_c_str = in.str[1];
      k.opd0_h_str = in.str[2], k.opd0_w_str = in.str[3];
    }
    k.opd1_addr = c.in1.addr + c0 / KILN_NPU_NUM * filterPlane;
    k.opd3_const = 1; // zero padding
    if (transposed) {
      k.opd0_y_ins0 = transposedStride[0] - 1, k.opd0_x_ins0 = transposedStride[1] - 1;
      k.kernel_rotate = 1;
    }
    return k;
  }

  /// A transposed conv as the chip runs one: an sCONV over the input with
  /// stride - 1 zeros inserted between its pixels, padded by dil * (k - 1) -
  /// pad before (and as much after as the output needs), the filter turned
  /// by 180 degrees (kernel_rotate). Output (iy * s + ky * d - pad) of the
  /// record's scatter form is then window position iy * s + pad' - (k-1-ky)
  /// * d of the gather form.
  void deconv(const kiln_tiu_cmd &c) {
    kiln_tiu_cmd cc = c;
    // Padding before and after along one axis; false past the 4-bit fields.
    auto pads = [](uint32_t in, uint32_t out, uint32_t k, uint32_t s, uint32_t d, int64_t pad,
                   uint16_t *before, uint16_t *after) {
      const int64_t reach = int64_t{d} * (k - 1);
      const int64_t lo = reach - pad, hi = int64_t{out} + reach - ((int64_t{in} - 1) * s + 1) - lo;
      if (lo < 0 || lo > 15 || hi > 15 || s < 1 || s > 16)
        return false;
      *before = uint16_t(lo), *after = uint16_t(std::max<int64_t>(hi, 0));
      return true;
    };
    // A slice whose first output row needs none of the first input rows
    // (its window would start past them): those rows are skipped, the
    // input becoming a window of its rows.
    const int64_t lateRows = int64_t{c.pad_top} - int64_t{c.dil_h} * (c.kh - 1);
    int64_t padTop = c.pad_top;
    if (lateRows > 0 && c.stride_h > 0) {
      const uint32_t skip = uint32_t((lateRows + c.stride_h - 1) / c.stride_h);
      if (skip >= c.in0.h)
        return fail("a transposed convolution slice that reads none of its input");
      cc.in0.plane_h = c.in0.plane_h ? c.in0.plane_h : c.in0.h;
      cc.in0.addr += skip * c.in0.w * kiln_dtype_bytes(c.in0.dtype);
      cc.in0.h -= skip;
      padTop -= int64_t{skip} * c.stride_h;
    }
    if (!pads(cc.in0.h, c.out.h, c.kh, c.stride_h, c.dil_h, padTop, &cc.pad_top, &cc.pad_bottom) ||
        !pads(c.in0.w, c.out.w, c.kw, c.stride_w, c.dil_w, c.pad_left, &cc.pad_left, &cc.pad_right))
      return fail("a transposed convolution whose stride or padding the chip's fields cannot "
                  "express");
    cc.op = KILN_TIU_CONV;
    cc.stride_h = cc.stride_w = 1;
    transposed = true;
    transposedStride[0] = c.stride_h, transposedStride[1] = c.stride_w;
    conv(cc);
    transposed = false;
  }

  /// The depthwise sPorD of channels [c0, c0 + count) of image n into an
  /// alignEU tensor at resAddr; opd2 (the bias) is the caller's.
  kiln_bm_spord depthwiseCommand(const kiln_tiu_cmd &c, uint32_t n, uint32_t c0, uint32_t count,
                                 uint64_t resAddr, uint64_t resPrec) {
    const uint64_t g = c0 / KILN_NPU_NUM;
    kiln_bm_spord k{};
    windowCommand(k, KILN_BM_TSK_PORD, c, count, resAddr, resPrec);
    k.opd0_h = c.in0.h, k.opd0_w = c.in0.w;
    k.opd0_addr = c.in0.addr + (uint64_t{n} * groupsOf(c.in0.c) + g) * planeBytes(c.in0);
    k.opd1_addr = c.in1.addr + g * planeBytes(c.in1);
    k.opd3_const = 1;
    return k;
  }

  /// A float bias's lane group for channels from c0, or +0 without one.
  template <typename Cmd> void floatBias(Cmd &k, const kiln_tiu_cmd &c, uint32_t c0) {
    if (c.flags & KILN_TIU_FLAG_HAS_BIAS) {
      k.opd2_addr = c.in2.addr + c0 / KILN_NPU_NUM * planeBytes(c.in2);
    } else {
      k.opd2_const = 1;
      k.opd2_addr = 0; // +0 in every format
    }
  }

  /// A grouped float conv: per image, group and the part of the group's
  /// output channels in one lane group, an sCONV from the group's first
  /// input channel's lane to its first output channel's lane (the filter
  /// and bias on the output channels' lanes, as the chip reads them). A
  /// 16-bit one with 1x1 kernels (attention's matmuls) reads kiln's filter
  /// rows, which are then the chip's IC-parallel ones (blocks of input
  /// channels one after another; the chip reads no padding past ic); with
  /// larger kernels (a FIR upsampling's) it reads a copy laid out so.
  void groupedConv(const kiln_tiu_cmd &c) {
    if (!isFloat(c.in0.dtype))
      return fail("a grouped INT8 convolution (not yet)");
    if (c.in0.dtype != KILN_DTYPE_F32 && (c.flags & KILN_TIU_FLAG_HAS_BIAS) &&
        c.in2.dtype != KILN_DTYPE_F32)
      return fail("an f16/bf16 convolution with a 16-bit bias (the chip's is f32)");
    if (c.out.plane_h && c.out.plane_h != c.out.h)
      return fail("a convolution writing a window of rows");
    const uint32_t icg = c.in0.c / c.groups, ocg = c.out.c / c.groups;
    auto lane = [](uint32_t channel) { return uint64_t{channel % KILN_NPU_NUM} << KILN_BM_LANE_SHIFT; };
    const uint64_t inPlane = planeBytes(c.in0);
    uint64_t filter = c.in1.addr, filterPlane = planeBytes(c.in1);
    if (c.in0.dtype != KILN_DTYPE_F32 && c.kh * c.kw != 1) { // kiln's rows are not the chip's
      filter = withChipFilter(c).in1.addr;
      chipFilters.erase(uint32_t(filter));
      filterPlane = chipFilterPlane(c.in1.h, c.in1.w, kiln_dtype_bytes(c.in1.dtype), KILN_CONV_ICP_F16);
    }
    for (uint32_t n = 0; n < c.out.n; ++n)
      for (uint32_t gi = 0; gi < c.groups; ++gi)
        for (uint32_t a = gi * ocg; a < (gi + 1) * ocg;) {
          const uint32_t b = std::min((gi + 1) * ocg, (a / KILN_NPU_NUM + 1) * KILN_NPU_NUM);
          const uint32_t i0 = gi * icg;
          kiln_bm_sconv k = convCommand(c, n, a, b - a, outChunk(c, n, a) + lane(a),
                                        precOf(c.out.dtype), filterPlane);
          k.opd0_c = icg;
          k.opd0_addr += i0 / KILN_NPU_NUM * inPlane + lane(i0);
          k.opd1_addr = filter + a / KILN_NPU_NUM * filterPlane + lane(a);
          floatBias(k, c, a);
          if (!k.opd2_const)
            k.opd2_addr += lane(a);
          push(tiu, k, KILN_BM_SCONV_BYTES, kiln_bm_sconv_encode);
          a = b;
        }
  }

  /// A 16-bit conv whose filter is in LMEM in kiln's [ic][taps] rows (formed
  /// by this group's own commands, or a grouped conv's): the filter copied
  /// by one sAR into the chip's IC-parallel layout beside the result (lg::
  /// chipScratchBytes), blocks of 32 input channels, each block's taps in
  /// turn with its channels innermost (the chip reads no channel past ic:
  /// the last block's padding stays as it is); the conv then reads the copy.
  kiln_tiu_cmd withChipFilter(const kiln_tiu_cmd &c) {
    const uint32_t cube = KILN_CONV_ICP_F16, ic = c.in1.h, taps = c.in1.w, oc = c.in1.c;
    const uint32_t bytes = kiln_dtype_bytes(c.in1.dtype);
    const uint64_t plane = planeBytes(c.in1) / bytes;
    const uint64_t chipPlane = chipFilterPlane(ic, taps, bytes, cube) / bytes;
    const uint64_t scratch = scratchOf(c.out);
    for (uint32_t i0 = 0; i0 < ic; i0 += cube) {
      const uint32_t m = std::min(cube, ic - i0);
      // blocks x oc x taps x channels: whole blocks in one copy, the last
      // partial one in another.
      const uint32_t blocks = m == cube ? ic / cube : 1;
      const View from{c.in1.addr + uint64_t{i0} * taps * bytes, blocks, oc, taps, m,
                      {uint64_t{cube} * taps, plane, 1, taps}, false};
      const View to{scratch + uint64_t{i0} * taps * bytes, blocks, oc, taps, m,
                    {uint64_t{cube} * taps, chipPlane, cube, 1}, false};
      ar(KILN_BM_AR_COPY, to, c.in1.dtype, &from, c.in1.dtype, nullptr, 0, false, 0);
      i0 += (blocks - 1) * cube;
    }
    chipFilters[uint32_t(scratch)] = {cube, ic, taps};
    kiln_tiu_cmd cc = c;
    cc.in1.addr = uint32_t(scratch);
    return cc;
  }

  void conv(const kiln_tiu_cmd &c) {
    if (c.groups != 1)
      return groupedConv(c);
    // f16/bf16 and INT8 filters: the chip reads blocks of 32 or 64 input
    // channels per tap.
    uint64_t filterPlane = planeBytes(c.in1);
    if (c.in0.dtype != KILN_DTYPE_F32) {
      auto laid = chipFilters.find(c.in1.addr);
      if (laid == chipFilters.end()) {
        if (!isFloat(c.in0.dtype))
          return fail("an INT8 convolution whose filter is formed on chip (not yet)");
        const kiln_tiu_cmd cc = withChipFilter(c);
        conv(cc);
        chipFilters.erase(cc.in1.addr); // scratch: whatever comes there next is no filter
        return;
      }
      const LmemKnowledge::LaidFilter &f = laid->second;
      if (f.block ? f.ic != c.in1.h || f.taps != c.in1.w
                  : c.kh * c.kw != 1 || uint64_t{f.ic} * f.taps != c.in1.h)
        return fail("an f16/bf16/INT8 convolution whose filter is read through a strided view "
                    "other than a 1x1 conv's rows (not yet)");
      filterPlane = f.block ? chipFilterPlane(c.in1.h, c.in1.w, kiln_dtype_bytes(c.in1.dtype), f.block)
                            : planeBytes(c.in1);
    }
    if (!isFloat(c.in0.dtype))
      return convInt8(c, filterPlane);
    if (c.in0.dtype != KILN_DTYPE_F32 && (c.flags & KILN_TIU_FLAG_HAS_BIAS) &&
        c.in2.dtype != KILN_DTYPE_F32)
      return fail("an f16/bf16 convolution with a 16-bit bias (the chip's is f32)");
    if (c.out.plane_h && c.out.plane_h != c.out.h)
      return fail("a convolution writing a window of rows");
    perImageAndLaneGroup(c, [&](uint32_t n, uint32_t c0, uint32_t count) {
      kiln_bm_sconv k =
          convCommand(c, n, c0, count, outChunk(c, n, c0), precOf(c.out.dtype), filterPlane);
      floatBias(k, c, c0);
      push(tiu, k, KILN_BM_SCONV_BYTES, kiln_bm_sconv_encode);
    });
  }

  void depthwise(const kiln_tiu_cmd &c) {
    if (!isFloat(c.in0.dtype))
      return convInt8(c, planeBytes(c.in1), true);
    // The depthwise datapath sums in the input's format, from a bias of it.
    if ((c.flags & KILN_TIU_FLAG_HAS_BIAS) && c.in2.dtype != c.in0.dtype)
      return fail("a depthwise convolution whose bias is not of its input's format");
    // One image's lane group at a time: a window of rows of taller planes
    // is then rows in a row in each lane, from the window's first one (the
    // planes' stride only separates images and lane groups).
    perImageAndLaneGroup(c, [&](uint32_t n, uint32_t c0, uint32_t count) {
      kiln_bm_spord k =
          depthwiseCommand(c, n, c0, count, outChunk(c, n, c0), precOf(c.in0.dtype));
      floatBias(k, c, c0);
      push(tiu, k, KILN_BM_SPORD_BYTES, kiln_bm_spord_encode);
    });
  }

  void pool(const kiln_tiu_cmd &c) {
    const bool int8 = !isFloat(c.in0.dtype);
    if (int8 && c.subop != KILN_POOL_MAX)
      return c.subop == KILN_POOL_MIN ? fail("min pooling") : poolInt8(c);
    if (viewOf(c.in0).window || (c.out.plane_h && c.out.plane_h != c.out.h))
      return fail("pooling over a window of rows");
    kiln_bm_spord k{};
    const bool padded = c.pad_top || c.pad_bottom || c.pad_left || c.pad_right;
    switch (c.subop) {
    case KILN_POOL_MAX:
      tiuHeader(k, KILN_BM_TSK_PORD, 4);
      // Pads never win.
      k.opd3_addr = int8 ? int8Bits(-128) : floatBits(c.in0.dtype, -INFINITY);
      break;
    case KILN_POOL_AVG:
    case KILN_POOL_SUM:
      // The chip scales by one immediate: the count must not depend on the window.
      if (c.subop == KILN_POOL_AVG && padded && !(c.flags & KILN_TIU_FLAG_COUNT_INCLUDE_PAD))
        return fail("average pooling that excludes its padding from the count");
      tiuHeader(k, KILN_BM_TSK_PORD, 1);
      k.opd1_const = 1;
      k.opd1_addr = floatBits(c.in0.dtype, c.subop == KILN_POOL_SUM ? 1.0f
                                                                    : 1.0f / float(c.kh * c.kw));
      break;
    default:
      return fail("min pooling");
    }
    k.opd3_const = 1;
    k.opd0_prec = k.res0_prec = precOf(c.in0.dtype);
    k.opd0_sign = k.opd1_sign = k.opd2_sign = 1;
    window(k, c);
    k.res0_n = c.out.n, k.res0_c = c.out.c, k.res0_h = c.out.h, k.res0_w = c.out.w;
    k.res0_addr = c.out.addr;
    k.opd0_h = c.in0.h, k.opd0_w = c.in0.w;
    k.opd0_addr = c.in0.addr;
    push(tiu, k, KILN_BM_SPORD_BYTES, kiln_bm_spord_encode);
  }

  /// An eltwise input: a view, or a constant's bits.
  struct Input {
    View view;
    bool isConst;
    uint64_t bits;
  };
  Input input(const kiln_tiu_operand &o) {
    return {viewOf(o), (o.flags & KILN_OPND_CONST) != 0, o.addr};
  }

  /// Whether operand o is one value known here (an immediate, or a single
  /// element loaded whole from the coefficients), and that value.
  bool scalarOf(const kiln_tiu_operand &o, float *value) const {
    if (o.flags & KILN_OPND_CONST) {
      *value = floatOf(o.dtype, o.addr);
      return true;
    }
    auto from = loadedFrom.find(o.addr);
    const uint32_t bytes = kiln_dtype_bytes(o.dtype);
    if (uint64_t(o.n) * o.c * o.h * o.w != 1 || !isFloat(o.dtype) || from == loadedFrom.end() ||
        from->second + bytes > coeff.size())
      return false;
    uint32_t bits = 0;
    memcpy(&bits, coeff.data() + from->second, bytes);
    *value = floatOf(o.dtype, bits);
    return true;
  }

  void eltwise(const kiln_tiu_cmd &c) {
    static const uint64_t kOps[] = {KILN_BM_AR_ADD, KILN_BM_AR_SUB, KILN_BM_AR_MUL,
                                    KILN_BM_AR_MAX, KILN_BM_AR_MIN};
    if (!isFloat(c.out.dtype))
      return eltwiseInt8(c);
    Input a = input(c.in0), b = input(c.in1);
    const View out = viewOf(c.out);
    const uint32_t t = c.out.dtype;
    if (a.isConst && b.isConst)
      return fail("an elementwise op of two constants");
    uint64_t op = 0;
    switch (c.subop) {
    case KILN_ELT_DIV: {
      if (a.isConst)
        return fail("a constant divided by a tensor (not yet)");
      float divisor;
      if (scalarOf(c.in1, &divisor)) // a * (1 / b), the reciprocal exact to f32 here
        return ar(KILN_BM_AR_MUL, out, t, &a.view, t, nullptr, t, true, floatBits(t, 1.0f / divisor));
      op = KILN_BM_AR_DIV;
      break;
    }
    case KILN_ELT_POW: {
      // x^2 (a layer norm's variance, a detection head's squares); other
      // exponents need the SFU's log (not yet).
      float exponent;
      if (a.isConst || !scalarOf(c.in1, &exponent) || exponent != 2.0f)
        return fail("elementwise pow other than x^2 (not yet)");
      return ar(KILN_BM_AR_MUL, out, t, &a.view, t, &a.view, t, false, 0);
    }
    case KILN_ELT_PRELU: // x >= 0 ? x : x * slope
      if (a.isConst)
        return fail("a prelu of a constant");
      op = KILN_BM_AR_MAX;
      break;
    default:
      if (c.subop >= sizeof kOps / sizeof kOps[0])
        return fail("an elementwise kind kiln does not know");
      op = kOps[c.subop];
    }
    if (a.isConst) { // only b's side of the chip takes an immediate
      if (c.subop == KILN_ELT_SUB)
        return fail("a constant minus a tensor (not yet)");
      std::swap(a, b);
    }
    // An operand of one channel against many: each lane reads only its
    // own, so the channel is first broadcast to every lane (sBC), beside
    // the result (lg::chipScratchBytes).
    uint64_t scratch = scratchOf(c.out);
    for (Input *x : {&a, &b})
      if (!x->isConst && x->view.c == 1 && out.c > 1) {
        if (x->view.window || out.window)
          return fail("a channel broadcast over a window of rows");
        const View spread = alignedView(scratch, x->view.n, out.c, x->view.h, x->view.w, c.out.dtype);
        kiln_bm_strans_bc t{};
        tiuHeader(t, KILN_BM_TSK_TRANS_BC, 3);
        t.res0_prec = precOf(c.out.dtype);
        t.res0_n = spread.n, t.res0_c = spread.c, t.res0_h = spread.h, t.res0_w = spread.w;
        t.opd0_c = 1, t.opd0_w = spread.w;
        t.res0_addr = spread.addr, t.opd0_addr = x->view.addr;
        push(tiu, t, KILN_BM_STRANS_BC_BYTES, kiln_bm_strans_bc_encode);
        x->view = spread;
        scratch += kiln_lmem_lane_bytes(spread.n, spread.c, spread.h, spread.w,
                                        kiln_dtype_bytes(c.out.dtype));
      }
    if (c.subop == KILN_ELT_PRELU) {
      // min(x, 0) * slope beside the result (after any broadcast slope),
      // then max(x, 0) plus it.
      if (out.window)
        return fail("a prelu writing a window of rows");
      const View neg = alignedView(scratch, out.n, out.c, out.h, out.w, t);
      ar(KILN_BM_AR_MIN, neg, t, &a.view, t, nullptr, t, true, floatBits(t, 0.0f));
      ar(KILN_BM_AR_MUL, neg, t, &neg, t, b.isConst ? nullptr : &b.view, t, b.isConst, b.bits);
      ar(KILN_BM_AR_MAX, out, t, &a.view, t, nullptr, t, true, floatBits(t, 0.0f));
      return ar(KILN_BM_AR_ADD, out, t, &out, t, &neg, t, false, 0);
    }
    if (op != KILN_BM_AR_DIV)
      return ar(op, out, t, &a.view, c.in0.dtype, b.isConst ? nullptr : &b.view, c.in1.dtype,
                b.isConst, b.bits);
    divide(out, t, a.view, b.view, scratch);
  }

  /// out = a / b by the chip's DIV: (1/sqrt|b|)^2 * a with the SFU's 1/sqrt
  /// (4 Newton steps: within 2 ulp of a / b), f32 only: 16-bit operands are
  /// widened into f32 beside the result (lg::chipScratchBytes) first.
  void divide(const View &out, uint32_t t, View a, View b, uint64_t scratch) {
    const uint32_t f32 = KILN_DTYPE_F32;
    View y = out;
    if (t != f32) {
      if (out.window)
        return fail("a 16-bit division writing a window of rows");
      for (View *x : {&a, &b}) {
        const View wide = alignedView(scratch, x->n, x->c, x->h, x->w, f32);
        ar(KILN_BM_AR_DATA_CONVERT, wide, f32, x, t, nullptr, 0, false, 0);
        scratch += kiln_lmem_lane_bytes(x->n, x->c, x->h, x->w, 4);
        *x = wide;
      }
      y = a.n == out.n && a.c == out.c && a.h == out.h && a.w == out.w
              ? a : alignedView(scratch, out.n, out.c, out.h, out.w, f32);
    }
    ar(KILN_BM_AR_DIV, y, f32, &a, f32, &b, f32, false, 0, 0, /*newtonSteps=*/4);
    if (t != f32)
      ar(KILN_BM_AR_DATA_CONVERT, out, t, &y, f32, nullptr, 0, false, 0);
  }

  /// An INT8 activation is a 256-entry table (out = table[(uint8)q]); one
  /// that clamps q to [lo, hi] (ReLU, ReLU6 in their input's quantization)
  /// is a max and a min.
  void activeInt8(const kiln_tiu_cmd &c) {
    auto from = loadedFrom.find(c.in1.addr);
    if (from == loadedFrom.end() || from->second + 256 > coeff.size())
      return fail("an INT8 activation whose table is not loaded from the coefficients");
    const uint8_t *table = coeff.data() + from->second;
    auto entry = [&](int q) { return int(int8_t(table[uint8_t(q)])); };
    int lo = 127, hi = -128;
    for (int q = -128; q < 128; ++q)
      lo = std::min(lo, entry(q)), hi = std::max(hi, entry(q));
    // table[q] = clamp(q * mult / 2^shift rounded half to even, lo, hi):
    // a clip in other scales. Found from the table, then checked on all of it.
    auto scaled = [](int q, int64_t mult, int shift) {
      const int64_t p = int64_t(q) * mult, half = int64_t(1) << (shift - 1);
      int64_t r = (p + half) >> shift; // floor((p + half) / 2^shift)
      if (((p + half) & ((int64_t(1) << shift) - 1)) == 0 && (r & 1))
        --r; // an exact tie goes to even
      return int(std::clamp<int64_t>(r, -128, 127));
    };
    const int shift = 24;
    // Each entry strictly inside (lo, hi) bounds the scale: q * r within
    // half a step of it.
    double rLo = 0, rHi = 1e9;
    for (int q = -128; q < 128; ++q)
      if (q != 0 && entry(q) > lo && entry(q) < hi) {
        const double a = (entry(q) - 0.5) / q, b = (entry(q) + 0.5) / q;
        rLo = std::max(rLo, std::min(a, b)), rHi = std::min(rHi, std::max(a, b));
      }
    int64_t found = -1;
    const double unit = double(int64_t(1) << shift);
    const int64_t first = int64_t(rLo * unit) - 1, last = int64_t(std::min(rHi, 64.0) * unit) + 1;
    for (int64_t m = std::max<int64_t>(first, 1); m <= last && last - first < (1 << 22) && found < 0;
         ++m) {
      bool all = true;
      for (int q = -128; q < 128 && all; ++q)
        all = entry(q) == std::clamp(scaled(q, m, shift), lo, hi);
      if (all)
        found = m;
    }
    if (found < 0)
      return fail("an INT8 activation other than a clip (table lookups: not yet)");
    const View in = viewOf(c.in0), out = viewOf(c.out);
    if (in.window || out.window)
      return fail("an INT8 activation over a window of rows");
    const uint32_t t = KILN_DTYPE_INT8;
    if (found == int64_t(1) << shift) { // the input's own scale: a clamp
      ar(KILN_BM_AR_MAX, out, t, &in, t, nullptr, t, true, int8Bits(lo));
    } else { // q as int32 beside the result, rescaled into it
      const uint64_t wide = scratchOf(c.out);
      const View w = alignedView(wide, out.n, out.c, out.h, out.w, KILN_DTYPE_INT32);
      ar(KILN_BM_AR_DATA_CONVERT, w, KILN_DTYPE_INT32, &in, t, nullptr, 0, false, 0);
      requant(c.out.addr, wide, out.n, out.c, out.h, out.w, nullptr, found, shift, 0,
              KILN_BM_ROUND_HALF_EVEN);
      ar(KILN_BM_AR_MAX, out, t, &out, t, nullptr, t, true, int8Bits(lo));
    }
    ar(KILN_BM_AR_MIN, out, t, &out, t, nullptr, t, true, int8Bits(hi));
  }

  /// out = erfc(z) for z >= 0 (f32 alignEU tensors; out may be z) by
  /// Numerical Recipes' Chebyshev fit, the one whose ten coefficients the
  /// chip's firmware keeps in static memory (FACTS.md 5.2): t = 1 / (1 + z/2)
  /// (1/sqrt squared: 1 + z/2 >= 1), erfc = t * e^(-z^2 + P(t)) with P the
  /// SFU's Taylor series of the ten; relative error below 1.2e-7. Uses two
  /// tensors at `scratch`, then exp's scratch.
  void erfc(const View &out, const View &z, uint64_t scratch) {
    const uint32_t f32 = KILN_DTYPE_F32;
    const uint64_t tensor = kiln_lmem_lane_bytes(out.n, out.c, out.h, out.w, 4);
    const View t = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
    const View p = alignedView(scratch + tensor, out.n, out.c, out.h, out.w, f32);
    ar(KILN_BM_AR_MUL, t, f32, &z, f32, nullptr, f32, true, kiln_f32_bits(0.5f));
    ar(KILN_BM_AR_ADD, t, f32, &t, f32, nullptr, f32, true, kiln_f32_bits(1.0f));
    rsqrt(p, t);
    ar(KILN_BM_AR_MUL, t, f32, &p, f32, &p, f32, false, 0);
    static const float kErfc[10] = {-1.26551223f, 1.00002368f, 0.37409196f, 0.09678418f,
                                    -0.18628806f, 0.27886807f, -1.13520398f, 1.48851587f,
                                    -0.82215223f, 0.17087277f};
    // exp's scratch starts after p; its coefficient area serves P first.
    const uint64_t expScratch = scratch + 2 * tensor;
    taylor(p, t, kErfc, 10, expScratch + 2 * tensor);
    ar(KILN_BM_AR_MUL, out, f32, &z, f32, &z, f32, false, 0);
    ar(KILN_BM_AR_SUB, out, f32, &p, f32, &out, f32, false, 0);
    exp(out, out, expScratch);
    ar(KILN_BM_AR_MUL, out, f32, &out, f32, &t, f32, false, 0);
  }

  /// out = ln(x) for positive normal f32 x (alignEU tensors; out may be x):
  /// x = 2^e m with 1 <= m < 2 taken from the bits (an AND and OR for m,
  /// the exponent field as an integer converted exactly to f32), then
  /// ln m = 2 atanh(s) = 2 s (1 + s^2/3 + s^4/5 + ... + s^14/15) with s =
  /// (m - 1) / (m + 1) <= 1/3 by the chip's DIV and the SFU's Taylor series
  /// of s^2 (eight terms: the next is below 2^-26 of the sum). The sign bit
  /// is ignored and zeros and subnormals read as 2^-127 (the domain the
  /// chip's firmware library leaves undefined too). Uses three tensors at
  /// `scratch`, then an EU's bytes for the coefficients.
  void log(const View &out, const View &x, uint64_t scratch) {
    const uint32_t f32 = KILN_DTYPE_F32, i32 = KILN_DTYPE_INT32;
    const uint64_t tensor = kiln_lmem_lane_bytes(out.n, out.c, out.h, out.w, 4);
    const View m = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
    const View s = alignedView(scratch + tensor, out.n, out.c, out.h, out.w, f32);
    const View e = alignedView(scratch + 2 * tensor, out.n, out.c, out.h, out.w, f32);
    ar(KILN_BM_AR_AND, m, i32, &x, i32, nullptr, i32, true, int32Bits(0x007FFFFF));
    ar(KILN_BM_AR_OR, m, i32, &m, i32, nullptr, i32, true, int32Bits(0x3F800000));
    ar(KILN_BM_AR_AND, e, i32, &x, i32, nullptr, i32, true, int32Bits(0x7F800000));
    ar(KILN_BM_AR_DATA_CONVERT, e, f32, &e, i32, nullptr, 0, false, 0);
    ar(KILN_BM_AR_MUL, e, f32, &e, f32, nullptr, f32, true, kiln_f32_bits(1.0f / 8388608.0f));
    ar(KILN_BM_AR_SUB, e, f32, &e, f32, nullptr, f32, true, kiln_f32_bits(127.0f));
    ar(KILN_BM_AR_MUL, e, f32, &e, f32, nullptr, f32, true, kiln_f32_bits(0.693147182f));
    ar(KILN_BM_AR_ADD, s, f32, &m, f32, nullptr, f32, true, kiln_f32_bits(1.0f));
    ar(KILN_BM_AR_SUB, m, f32, &m, f32, nullptr, f32, true, kiln_f32_bits(1.0f));
    ar(KILN_BM_AR_DIV, s, f32, &m, f32, &s, f32, false, 0, 0, /*newtonSteps=*/4);
    ar(KILN_BM_AR_MUL, m, f32, &s, f32, &s, f32, false, 0);
    static const float kAtanh[8] = {1.0f, 1.0f / 3, 1.0f / 5, 1.0f / 7,
                                    1.0f / 9, 1.0f / 11, 1.0f / 13, 1.0f / 15};
    taylor(m, m, kAtanh, 8, scratch + 3 * tensor);
    ar(KILN_BM_AR_MUL, m, f32, &m, f32, &s, f32, false, 0);
    ar(KILN_BM_AR_MUL, m, f32, &m, f32, nullptr, f32, true, kiln_f32_bits(2.0f));
    ar(KILN_BM_AR_ADD, out, f32, &m, f32, &e, f32, false, 0);
  }

  /// out = v with x's sign bit (v >= 0): the bits of v or those of x masked.
  void copySign(const View &out, const View &v, const View &x, const View &tmp) {
    const uint32_t i32 = KILN_DTYPE_INT32;
    ar(KILN_BM_AR_AND, tmp, i32, &x, i32, nullptr, i32, true, int32Bits(int32_t(0x80000000u)));
    ar(KILN_BM_AR_OR, out, i32, &v, i32, &tmp, i32, false, 0);
  }

  /// The SFU's functions, computed in f32: a 16-bit tensor is widened into
  /// f32 beside the result first and narrowed into it at the end. Beside
  /// the result (lg::chipScratchBytes): the f32 input (16-bit only), the
  /// silu's sigmoid, elu's min(x, 0) or softplus's e^-|x|, or erf's and
  /// gelu's two tensors and erfc's two, then exp's scratch (two tensors and
  /// the coefficients; log's three and the coefficients), sqrt's 1/sqrt(x)
  /// or reciprocal's ones.
  void special(const kiln_tiu_cmd &c) {
    View in = viewOf(c.in0), out = viewOf(c.out);
    if (in.window || out.window)
      return fail("a special function over a window of rows");
    const uint32_t t = c.out.dtype, f32 = KILN_DTYPE_F32;
    const uint64_t tensor = kiln_lmem_lane_bytes(out.n, out.c, out.h, out.w, 4);
    uint64_t scratch = scratchOf(c.out);
    View x = in, y = out;
    if (t != f32) {
      x = y = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
      scratch += tensor;
      ar(KILN_BM_AR_DATA_CONVERT, x, f32, &in, t, nullptr, 0, false, 0);
    }
    switch (c.subop) {
    case KILN_ACT_RSQRT: // 4 Newton steps: within an ulp or so
      rsqrt(y, x);
      break;
    case KILN_ACT_SQRT: { // x * 1/sqrt(x)
      const View r = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
      rsqrt(r, x);
      ar(KILN_BM_AR_MUL, y, f32, &x, f32, &r, f32, false, 0);
      break;
    }
    case KILN_ACT_EXP:
      exp(y, x, scratch);
      break;
    case KILN_ACT_SIGMOID:
      sigmoid(y, x, scratch);
      break;
    case KILN_ACT_SILU: { // x * sigmoid(x)
      const View g = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
      sigmoid(g, x, scratch + tensor);
      ar(KILN_BM_AR_MUL, y, f32, &x, f32, &g, f32, false, 0);
      break;
    }
    case KILN_ACT_TANH: // 2 sigmoid(2x) - 1
      ar(KILN_BM_AR_MUL, y, f32, &x, f32, nullptr, f32, true, kiln_f32_bits(2.0f));
      sigmoid(y, y, scratch);
      ar(KILN_BM_AR_MUL, y, f32, &y, f32, nullptr, f32, true, kiln_f32_bits(2.0f));
      ar(KILN_BM_AR_ADD, y, f32, &y, f32, nullptr, f32, true, kiln_f32_bits(-1.0f));
      break;
    case KILN_ACT_ELU:
    case KILN_ACT_SELU: { // max(x, 0) + a (e^min(x, 0) - 1), times b for selu
      const View g = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
      ar(KILN_BM_AR_MIN, g, f32, &x, f32, nullptr, f32, true, kiln_f32_bits(0.0f));
      exp(g, g, scratch + tensor);
      ar(KILN_BM_AR_SUB, g, f32, &g, f32, nullptr, f32, true, kiln_f32_bits(1.0f));
      ar(KILN_BM_AR_MUL, g, f32, &g, f32, nullptr, f32, true, kiln_f32_bits(c.param[0]));
      ar(KILN_BM_AR_MAX, y, f32, &x, f32, nullptr, f32, true, kiln_f32_bits(0.0f));
      ar(KILN_BM_AR_ADD, y, f32, &y, f32, &g, f32, false, 0);
      if (c.subop == KILN_ACT_SELU)
        ar(KILN_BM_AR_MUL, y, f32, &y, f32, nullptr, f32, true, kiln_f32_bits(c.param[1]));
      break;
    }
    case KILN_ACT_LOG:
      log(y, x, scratch);
      break;
    case KILN_ACT_SOFTPLUS: { // max(x, 0) + ln(1 + e^-|x|)
      const View g = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
      ar(KILN_BM_AR_ABS, g, f32, &x, f32, nullptr, 0, false, 0);
      ar(KILN_BM_AR_MUL, g, f32, &g, f32, nullptr, f32, true, kiln_f32_bits(-1.0f));
      exp(g, g, scratch + tensor);
      ar(KILN_BM_AR_ADD, g, f32, &g, f32, nullptr, f32, true, kiln_f32_bits(1.0f));
      log(g, g, scratch + tensor);
      ar(KILN_BM_AR_MAX, y, f32, &x, f32, nullptr, f32, true, kiln_f32_bits(0.0f));
      ar(KILN_BM_AR_ADD, y, f32, &y, f32, &g, f32, false, 0);
      break;
    }
    case KILN_ACT_RECIPROCAL: { // the chip's DIV of ones
      const View ones = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
      fill(ones, f32, kiln_f32_bits(1.0f));
      ar(KILN_BM_AR_DIV, y, f32, &ones, f32, &x, f32, false, 0, 0, /*newtonSteps=*/4);
      break;
    }
    case KILN_ACT_ERF:
    case KILN_ACT_GELU: {
      // erf(x) = sign(x) (1 - erfc|x|); gelu(x) = x (1/2 + sign(x) (1/2 -
      // erfc(|x| / sqrt 2) / 2)), the sign copied as a bit (sign(-0) too).
      const bool gelu = c.subop == KILN_ACT_GELU;
      const View g = alignedView(scratch, out.n, out.c, out.h, out.w, f32);
      const View z = alignedView(scratch + tensor, out.n, out.c, out.h, out.w, f32);
      ar(KILN_BM_AR_ABS, z, f32, &x, f32, nullptr, 0, false, 0);
      if (gelu)
        ar(KILN_BM_AR_MUL, z, f32, &z, f32, nullptr, f32, true, kiln_f32_bits(0.70710678f));
      erfc(z, z, scratch + 2 * tensor);
      ar(KILN_BM_AR_MUL, g, f32, &z, f32, nullptr, f32, true, kiln_f32_bits(gelu ? -0.5f : -1.0f));
      ar(KILN_BM_AR_ADD, g, f32, &g, f32, nullptr, f32, true, kiln_f32_bits(gelu ? 0.5f : 1.0f));
      copySign(g, g, x, z);
      if (!gelu) {
        ar(KILN_BM_AR_COPY, y, f32, &g, f32, nullptr, 0, false, 0);
        break;
      }
      ar(KILN_BM_AR_ADD, g, f32, &g, f32, nullptr, f32, true, kiln_f32_bits(0.5f));
      ar(KILN_BM_AR_MUL, y, f32, &x, f32, &g, f32, false, 0);
      break;
    }
    }
    if (t != f32)
      ar(KILN_BM_AR_DATA_CONVERT, out, t, &y, f32, nullptr, 0, false, 0);
  }

  void active(const kiln_tiu_cmd &c) {
    if (!isFloat(c.out.dtype))
      return activeInt8(c);
    const View in = viewOf(c.in0), out = viewOf(c.out);
    const uint32_t t = c.out.dtype;
    switch (c.subop) {
    case KILN_ACT_RELU:
      return ar(KILN_BM_AR_MAX, out, t, &in, t, nullptr, t, true, floatBits(t, 0.0f));
    case KILN_ACT_CLIP:
      ar(KILN_BM_AR_MAX, out, t, &in, t, nullptr, t, true, floatBits(t, c.param[0]));
      return ar(KILN_BM_AR_MIN, out, t, &out, t, nullptr, t, true, floatBits(t, c.param[1]));
    case KILN_ACT_SCALE:
      ar(KILN_BM_AR_MUL, out, t, &in, t, nullptr, t, true, floatBits(t, c.param[0]));
      return ar(KILN_BM_AR_ADD, out, t, &out, t, nullptr, t, true, floatBits(t, c.param[1]));
    case KILN_ACT_NEG:
      return ar(KILN_BM_AR_MUL, out, t, &in, t, nullptr, t, true, floatBits(t, -1.0f));
    case KILN_ACT_ABS:
      return ar(KILN_BM_AR_ABS, out, t, &in, t, nullptr, t, false, 0);
    case KILN_ACT_SQUARE:
      return ar(KILN_BM_AR_MUL, out, t, &in, t, &in, t, false, 0);
    case KILN_ACT_HARD_SIGMOID:
      // min(max(a * x + b, 0), 1), each step rounded.
      ar(KILN_BM_AR_MUL, out, t, &in, t, nullptr, t, true, floatBits(t, c.param[0]));
      ar(KILN_BM_AR_ADD, out, t, &out, t, nullptr, t, true, floatBits(t, c.param[1]));
      ar(KILN_BM_AR_MAX, out, t, &out, t, nullptr, t, true, floatBits(t, 0.0f));
      return ar(KILN_BM_AR_MIN, out, t, &out, t, nullptr, t, true, floatBits(t, 1.0f));
    case KILN_ACT_RSQRT:
    case KILN_ACT_SQRT:
    case KILN_ACT_EXP:
    case KILN_ACT_SIGMOID:
    case KILN_ACT_SILU:
    case KILN_ACT_TANH:
    case KILN_ACT_ERF:
    case KILN_ACT_GELU:
    case KILN_ACT_ELU:
    case KILN_ACT_SELU:
    case KILN_ACT_RECIPROCAL:
    case KILN_ACT_LOG:
    case KILN_ACT_SOFTPLUS:
      return special(c);
    case KILN_ACT_LEAKY_RELU:
    case KILN_ACT_HARD_SWISH: {
      // Beside the result (lg::chipScratchBytes): a * x, or the gate.
      if (out.window)
        return fail("a leaky relu or hard swish writing a window of rows");
      const View side = alignedView(scratchOf(c.out), out.n, out.c, out.h, out.w, t);
      if (c.subop == KILN_ACT_LEAKY_RELU) {
        // x >= 0 ? x : a * x is max(x, a * x) when 0 <= a <= 1.
        const float a = c.param[0];
        if (!(a >= 0.0f && a <= 1.0f))
          return fail("a leaky relu whose slope is outside [0, 1] (not yet)");
        ar(KILN_BM_AR_MUL, side, t, &in, t, nullptr, t, true, floatBits(t, a));
        return ar(KILN_BM_AR_MAX, out, t, &in, t, &side, t, false, 0);
      }
      // x * min(max(x / 6 + 0.5, 0), 1), the division a product by 1/6.
      ar(KILN_BM_AR_MUL, side, t, &in, t, nullptr, t, true, floatBits(t, 1.0f / 6.0f));
      ar(KILN_BM_AR_ADD, side, t, &side, t, nullptr, t, true, floatBits(t, 0.5f));
      ar(KILN_BM_AR_MAX, side, t, &side, t, nullptr, t, true, floatBits(t, 0.0f));
      ar(KILN_BM_AR_MIN, side, t, &side, t, nullptr, t, true, floatBits(t, 1.0f));
      return ar(KILN_BM_AR_MUL, out, t, &in, t, &side, t, false, 0);
    }
    default: {
      static const char *const kNames[] = {
          "relu", "leaky_relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt",
          "reciprocal", "abs", "neg", "erf", "elu", "selu", "softplus", "hard_sigmoid",
          "hard_swish", "clip", "square", "gelu", "scale", "silu", "mish"};
      static_assert(sizeof kNames / sizeof kNames[0] == KILN_ACT_END, "a name per kind");
      return fail(std::string("activation ") +
                  (c.subop < KILN_ACT_END ? kNames[c.subop] : "?") +
                  " (special functions on the SFU: not yet)");
    }
    }
  }

  void cast(const kiln_tiu_cmd &c) {
    const View in = viewOf(c.in0), out = viewOf(c.out);
    if (!isFloat(c.in0.dtype) && !isFloat(c.out.dtype))
      return fail("INT8 requantizing casts (not yet)");
    if (!isFloat(c.out.dtype)) {
      // Quantize: x / scale (as x * (1 / scale), in f32 beside the result)
      // + zp, then rounded half to even and saturated: the zero point goes
      // in before the saturation, as kiln_quantize_f32 adds it.
      if (c.in0.dtype != KILN_DTYPE_F32)
        return fail("quantizing a 16-bit float (not yet)");
      const View scaled = alignedView(scratchOf(c.out), out.n, out.c, out.h, out.w, KILN_DTYPE_F32);
      ar(KILN_BM_AR_MUL, scaled, KILN_DTYPE_F32, &in, KILN_DTYPE_F32, nullptr, KILN_DTYPE_F32, true,
         floatBits(KILN_DTYPE_F32, 1.0f / c.param[0]));
      if (const int32_t zp = kiln_zero_point(c.aux[2], 2))
        ar(KILN_BM_AR_ADD, scaled, KILN_DTYPE_F32, &scaled, KILN_DTYPE_F32, nullptr, KILN_DTYPE_F32,
           true, floatBits(KILN_DTYPE_F32, float(zp)));
      ar(KILN_BM_AR_DATA_CONVERT, out, KILN_DTYPE_INT8, &scaled, KILN_DTYPE_F32, nullptr, 0,
         false, 0);
      return;
    }
    if (!isFloat(c.in0.dtype)) {
      // Dequantize: (q - zp) * scale, in the result's format.
      ar(KILN_BM_AR_DATA_CONVERT, out, c.out.dtype, &in, KILN_DTYPE_INT8, nullptr, 0, false, 0);
      if (const int32_t zp = kiln_zero_point(c.aux[2], 0))
        ar(KILN_BM_AR_SUB, out, c.out.dtype, &out, c.out.dtype, nullptr, c.out.dtype, true,
           floatBits(c.out.dtype, float(zp)));
      ar(KILN_BM_AR_MUL, out, c.out.dtype, &out, c.out.dtype, nullptr, c.out.dtype, true,
         floatBits(c.out.dtype, c.param[0]));
      return;
    }
    if (c.in0.dtype != KILN_DTYPE_F32 && c.out.dtype != KILN_DTYPE_F32 &&
        c.in0.dtype != c.out.dtype)
      return fail("f16 <-> bf16 casts (the chip goes through f32: not yet)");
    // Rounding mode 0 (half to even) rides in opd2_n_str, zero by default.
    ar(KILN_BM_AR_DATA_CONVERT, out, c.out.dtype, &in, c.in0.dtype, nullptr, c.in0.dtype, false,
       0);
  }

  // ---- resize ----------------------------------------------------------------

  /// Outputs o0, o0 + so, ... (len of them) of one axis reading sources
  /// i0 + j * si and i1 + j * si, weight l on the second.
  struct ResizeRun {
    uint32_t o0, so, i0, i1, si, len;
    float l;
  };

  /// The taps of an axis as runs of constant steps (an integer scale gives
  /// one or two per phase; the clamped ends their own), longest first.
  static std::vector<ResizeRun> resizeRuns(const std::vector<chip::ResizeTap> &taps) {
    std::vector<ResizeRun> runs;
    std::vector<bool> done(taps.size());
    const uint32_t count = uint32_t(taps.size());
    for (uint32_t o = 0; o < count; ++o) {
      if (done[o])
        continue;
      const chip::ResizeTap &t = taps[o];
      ResizeRun best{o, 1, t.i0, t.i1, 0, 1, t.l};
      for (uint32_t so = 1; so <= 8 && o + so < count; ++so) {
        const chip::ResizeTap &u = taps[o + so];
        if (done[o + so] || u.l != t.l || u.i0 < t.i0 || u.i1 - t.i1 != u.i0 - t.i0)
          continue;
        const uint32_t si = u.i0 - t.i0;
        uint32_t len = 2;
        for (; o + len * so < count && !done[o + len * so]; ++len) {
          const chip::ResizeTap &v = taps[o + len * so];
          if (v.l != t.l || v.i0 != t.i0 + len * si || v.i1 != t.i1 + len * si)
            break;
        }
        if (len > best.len)
          best = {o, so, t.i0, t.i1, si, len, t.l};
      }
      for (uint32_t j = 0; j < best.len; ++j)
        done[best.o0 + j * best.so] = true;
      runs.push_back(best);
    }
    return runs;
  }

  /// dst = src resized along axis 2 (H) or 3 (W), run by run: a copy where
  /// the weight is 0, else (1 - l) * a + l * b with each step rounded, as
  /// the kernels compute it (the second product in tmp).
  void resizeAxis(const View &src, const View &dst, uint64_t tmp, int axis,
                  const std::vector<ResizeRun> &runs, uint32_t dtype) {
    const uint64_t bytes = kiln_dtype_bytes(dtype);
    auto part = [&](View v, uint64_t first, uint64_t step, uint64_t len) {
      v.addr += first * v.str[axis] * bytes;
      v.str[axis] *= step;
      (axis == 2 ? v.h : v.w) = len;
      return v;
    };
    for (const ResizeRun &r : runs) {
      const View out = part(dst, r.o0, r.so, r.len), a = part(src, r.i0, r.si, r.len);
      if (r.l == 0.0f) {
        ar(KILN_BM_AR_COPY, out, dtype, &a, dtype, nullptr, dtype, false, 0);
        continue;
      }
      const View b = part(src, r.i1, r.si, r.len);
      const View t = alignedView(tmp, out.n, out.c, out.h, out.w, dtype);
      ar(KILN_BM_AR_MUL, out, dtype, &a, dtype, nullptr, dtype, true, floatBits(dtype, 1.0f - r.l));
      ar(KILN_BM_AR_MUL, t, dtype, &b, dtype, nullptr, dtype, true, floatBits(dtype, r.l));
      ar(KILN_BM_AR_ADD, out, dtype, &out, dtype, &t, dtype, false, 0);
    }
  }

  /// Nearest or linear resize: along W into the rows it reads, then along H
  /// (the kernels' order), each axis as a few strided sAR runs per phase.
  void resize(const kiln_tiu_cmd &c) {
    if (!isFloat(c.in0.dtype) || c.in0.dtype != c.out.dtype)
      return fail("an INT8 resize (not yet)");
    if (c.out.plane_h && c.out.plane_h != c.out.h)
      return fail("a resize writing a window of rows");
    const bool slice = c.aux[0] != 0;
    const uint32_t inH = slice ? c.aux[0] : c.in0.h, outH = slice ? c.aux[1] : c.out.h;
    std::vector<chip::ResizeTap> rows, cols;
    if (!chip::resizeAxisTaps(c.subop, c.param[0], c.subop & KILN_RESIZE_EXACT_H, inH, outH,
                              c.aux[3], c.in0.h, c.aux[2], c.out.h, &rows) ||
        !chip::resizeAxisTaps(c.subop, c.param[1], c.subop & KILN_RESIZE_EXACT_W, c.in0.w,
                              c.out.w, 0, c.in0.w, 0, c.out.w, &cols))
      return fail("a resize reading rows outside its input");
    const std::vector<ResizeRun> rowRuns = resizeRuns(rows), colRuns = resizeRuns(cols);
    if (rowRuns.size() + colRuns.size() > 64)
      return fail("a resize whose scale has no short period (too many commands)");
    // The input's rows at the output's width, then the second products.
    const View in = viewOf(c.in0), out = viewOf(c.out);
    const uint64_t wide = scratchOf(c.out);
    const View mid = alignedView(wide, c.in0.n, c.in0.c, c.in0.h, c.out.w, c.out.dtype);
    const uint64_t tmp =
        wide + kiln_lmem_lane_bytes(c.in0.n, c.in0.c, c.in0.h, c.out.w, kiln_dtype_bytes(c.out.dtype));
    resizeAxis(in, mid, tmp, 3, colRuns, c.out.dtype);
    resizeAxis(mid, out, tmp, 2, rowRuns, c.out.dtype);
  }

  void lowerTiu(const kiln_tiu_cmd &c) {
    dep = c.wait_gdma_id ? lastGdma[c.wait_gdma_id] : 0;
    switch (c.op) {
    case KILN_TIU_CONV:
      (c.flags & KILN_TIU_FLAG_DEPTHWISE) ? depthwise(c) : conv(c);
      break;
    case KILN_TIU_POOL: pool(c); break;
    case KILN_TIU_ELTWISE: eltwise(c); break;
    case KILN_TIU_ACTIVE: active(c); break;
    case KILN_TIU_CAST: cast(c); break;
    case KILN_TIU_DECONV: deconv(c); break;
    case KILN_TIU_RESIZE: resize(c); break;
    default: fail("an unknown TIU record"); break;
    }
    if ((c.flags & KILN_TIU_FLAG_RELU) && c.op != KILN_TIU_ACTIVE)
      relu(c);
    lastTiu[c.cmd_id] = tiuId;
    // What the result overwrote is no loaded filter or coefficient any more
    // (a filter formed where an earlier group's was loaded is in kiln's rows).
    const uint64_t end = c.out.addr + kiln_lmem_lane_bytes(c.out.n, c.out.c,
                                                           c.out.plane_h ? c.out.plane_h : c.out.h,
                                                           c.out.w, kiln_dtype_bytes(c.out.dtype));
    chipFilters.erase(chipFilters.lower_bound(c.out.addr), chipFilters.lower_bound(uint32_t(end)));
    loadedFrom.erase(loadedFrom.lower_bound(c.out.addr), loadedFrom.lower_bound(uint32_t(end)));
  }

  // ---- GDMA -------------------------------------------------------------------

  /// One side of a copy: its GDMA address and element strides.
  void side(bool lmem, uint64_t addr, const uint32_t ddrStride[4], const kiln_gdma_cmd &g,
            uint64_t *outAddr, uint64_t st[4]) {
    if (!lmem) {
      *outAddr = KILN_BM_DDR_BASE + addr;
      for (int i = 0; i < 4; ++i)
        st[i] = ddrStride[i];
      if (st[3] == 0)
        fail("a DDR side with a W stride of 0 (the simulator divides by it)");
      return;
    }
    const uint32_t bytes = kiln_dtype_bytes(g.dtype);
    const uint64_t plane =
        kiln_lmem_plane_stride(g.lmem_plane_h ? g.lmem_plane_h : g.h, g.w, bytes) / bytes;
    *outAddr = KILN_BM_LMEM_BASE + (uint64_t{g.lmem_lane} << KILN_BM_LANE_SHIFT) + addr;
    st[0] = groupsOf(uint64_t{g.lmem_lane} + g.c) * plane;
    st[1] = plane, st[2] = g.w, st[3] = 1;
  }

  /// A conv filter [1, oc, ic, taps] from DDR into the chip's IC-parallel
  /// layout: per output channel (lane), blocks of `cube` input channels,
  /// each block's taps in turn with its channels innermost; the channels
  /// past ic zero. From the filter's copy in that layout when it has one
  /// (lg::kChipFilterAttr): one contiguous copy; else reordered on the way,
  /// element by element: one copy for the whole blocks, one for the last
  /// partial block and a fill of its padding.
  void filterLoad(const kiln_gdma_cmd &g, uint32_t cube) {
    if (g.dir != KILN_GDMA_DDR_TO_LMEM || (g.flags & KILN_GDMA_FLAG_FILL) || g.lmem_lane || g.n != 1)
      return fail("a conv filter load of an unexpected form");
    const uint32_t bytes = kiln_dtype_bytes(g.dtype), ic = g.h, taps = g.w, oc = g.c;
    const uint64_t plane = chipFilterPlane(ic, taps, bytes, cube) / bytes;
    chipFilters[g.dst_addr] = {cube, ic, taps};
    // Output channels [o0, o0 + oc) of a filter with a copy in the chip's
    // layout: one copy of whole rows, each output channel's plane.
    const uint64_t row = uint64_t{ic} * taps * bytes;
    for (const ChipFilterCopy &f : chipCopies)
      if (f.block == cube && f.ic == ic && f.taps == taps && f.bytes == bytes &&
          g.src_addr >= f.kilnOffset && (g.src_addr - f.kilnOffset) % row == 0 &&
          (g.src_addr - f.kilnOffset) / row + oc <= f.oc && g.src_stride[1] == uint64_t{ic} * taps &&
          g.src_stride[2] == taps && g.src_stride[3] == 1) {
        const uint64_t padded = (uint64_t{ic} + cube - 1) / cube * cube * taps;
        kiln_bm_dma_tensor t{};
        header(t, g);
        t.src_nsize = 1, t.src_csize = oc, t.src_hsize = 1, t.src_wsize = padded;
        const uint64_t src = KILN_BM_DDR_BASE + f.chipOffset + (g.src_addr - f.kilnOffset) / row * padded * bytes;
        const uint64_t dst = KILN_BM_LMEM_BASE + g.dst_addr;
        t.src_start_addr_l32 = src & 0xFFFFFFFFu, t.src_start_addr_h8 = src >> 32;
        t.dst_start_addr_l32 = dst & 0xFFFFFFFFu, t.dst_start_addr_h8 = dst >> 32;
        t.src_nstride = uint64_t{oc} * padded, t.src_cstride = padded;
        t.src_hstride = padded, t.src_wstride = 1;
        t.dst_nstride = groupsOf(oc) * plane, t.dst_cstride = plane;
        t.dst_hstride = padded, t.dst_wstride = 1;
        return push(gdma, t, KILN_BM_DMA_TENSOR_BYTES, kiln_bm_dma_tensor_encode);
      }
    const uint64_t ddrStride[4] = {uint64_t{cube} * g.src_stride[2], g.src_stride[1],
                                   g.src_stride[3], g.src_stride[2]};
    const uint64_t lmemStride[4] = {uint64_t{cube} * taps, plane, cube, 1};
    auto copy = [&](uint32_t blocks, uint32_t channels, uint32_t firstChannel, bool fill) {
      kiln_bm_dma_tensor t{};
      header(t, g);
      t.src_nsize = blocks, t.src_csize = oc, t.src_hsize = taps, t.src_wsize = channels;
      const uint64_t dst = KILN_BM_LMEM_BASE + g.dst_addr +
                           (uint64_t{firstChannel} / cube * cube * taps + firstChannel % cube) * bytes;
      t.dst_start_addr_l32 = dst & 0xFFFFFFFFu, t.dst_start_addr_h8 = dst >> 32;
      t.dst_nstride = lmemStride[0], t.dst_cstride = lmemStride[1];
      t.dst_hstride = lmemStride[2], t.dst_wstride = lmemStride[3];
      if (fill) {
        t.fill_constant_en = 1; // zeros of any format
      } else {
        const uint64_t src = KILN_BM_DDR_BASE + g.src_addr +
                             uint64_t{firstChannel} * g.src_stride[2] * bytes;
        t.src_start_addr_l32 = src & 0xFFFFFFFFu, t.src_start_addr_h8 = src >> 32;
        t.src_nstride = ddrStride[0], t.src_cstride = ddrStride[1];
        t.src_hstride = ddrStride[2], t.src_wstride = ddrStride[3];
      }
      push(gdma, t, KILN_BM_DMA_TENSOR_BYTES, kiln_bm_dma_tensor_encode);
    };
    if (ic / cube)
      copy(ic / cube, cube, 0, false);
    if (const uint32_t rest = ic % cube) {
      copy(1, rest, ic - rest, false);
      copy(1, cube - rest, ic, true);
    }
  }

  /// What every copy of record g shares: id, wait, format, lane mask.
  void header(kiln_bm_dma_tensor &t, const kiln_gdma_cmd &g) {
    t.cmd_id = ++gdmaId;
    t.cmd_id_dep = g.wait_tiu_id ? lastTiu[g.wait_tiu_id] : 0;
    t.cmd_id_en = 1;
    t.cmd_type = KILN_BM_GDMA_TENSOR;
    t.stride_enable = 1;
    t.nchw_copy = 1;
    t.src_data_format = precOf(g.dtype);
    t.localmem_mask_l32 = t.localmem_mask_h32 = 0xFFFFFFFFu;
  }

  void lowerGdma(const kiln_gdma_cmd &g, uint32_t icAlign) {
    // A filter read through a strided view (an attention's transposed
    // operand: its [ic, taps] rows split as the view needs) is no [oc, ic,
    // taps] block to reorder: it is copied as it is, marked 0, and only a
    // 1x1 conv, whose rows are the chip's, may read it (conv()).
    const bool plainFilter = g.src_stride[3] == 1 && g.src_stride[2] == g.w &&
                             g.src_stride[1] == uint64_t{g.h} * g.w;
    if (icAlign > 1 && plainFilter) {
      filterLoad(g, icAlign);
      lastGdma[g.cmd_id] = gdmaId;
      return;
    }
    if (kiln_gdma_dst_is_lmem(g.dir)) { // whatever it held is gone
      chipFilters.erase(g.dst_addr);
      loadedFrom.erase(g.dst_addr);
      if (g.dir == KILN_GDMA_DDR_TO_LMEM && !(g.flags & KILN_GDMA_FLAG_FILL) && !g.lmem_lane)
        loadedFrom[g.dst_addr] = g.src_addr;
    }
    if (icAlign > 1)
      chipFilters[g.dst_addr] = {0, g.h, g.w};
    kiln_bm_dma_tensor t{};
    header(t, g);
    t.src_nsize = g.n, t.src_csize = g.c, t.src_hsize = g.h, t.src_wsize = g.w;
    uint64_t src = 0, dst = 0, ss[4] = {}, ds[4] = {};
    const bool srcLmem = kiln_gdma_src_is_lmem(g.dir), dstLmem = kiln_gdma_dst_is_lmem(g.dir);
    if (g.flags & KILN_GDMA_FLAG_FILL) {
      t.fill_constant_en = 1;
      t.constant_value = uint32_t(g.src_addr);
    } else {
      side(srcLmem, g.src_addr, g.src_stride, g, &src, ss);
    }
    side(dstLmem, g.dst_addr, g.dst_stride, g, &dst, ds);
    t.src_nstride = ss[0], t.src_cstride = ss[1], t.src_hstride = ss[2], t.src_wstride = ss[3];
    t.dst_nstride = ds[0], t.dst_cstride = ds[1], t.dst_hstride = ds[2], t.dst_wstride = ds[3];
    t.src_start_addr_l32 = src & 0xFFFFFFFFu, t.src_start_addr_h8 = src >> 32;
    t.dst_start_addr_l32 = dst & 0xFFFFFFFFu, t.dst_start_addr_h8 = dst >> 32;
    push(gdma, t, KILN_BM_DMA_TENSOR_BYTES, kiln_bm_dma_tensor_encode);
    lastGdma[g.cmd_id] = gdmaId;
  }

  void end() {
    kiln_bm_sysid s{};
    s.cmd_id = ++tiuId;
    s.cmd_id_en = 1;
    s.tsk_typ = KILN_BM_TSK_SYS;
    s.tsk_eu_typ = KILN_BM_SYS_END;
    push(tiu, s, KILN_BM_SYSID_BYTES, kiln_bm_sysid_encode);
    kiln_bm_dma_sys d{};
    d.cmd_short = 1;
    d.cmd_id = ++gdmaId;
    d.cmd_id_en = 1;
    d.cmd_type = KILN_BM_GDMA_SYS;
    push(gdma, d, KILN_BM_DMA_SYS_BYTES, kiln_bm_dma_sys_encode);
    tiu.resize((tiu.size() + KILN_BM_STREAM_ALIGN - 1) / KILN_BM_STREAM_ALIGN *
               KILN_BM_STREAM_ALIGN);
    gdma.resize((gdma.size() + KILN_BM_STREAM_ALIGN - 1) / KILN_BM_STREAM_ALIGN *
                KILN_BM_STREAM_ALIGN);
  }
};

} // namespace

std::string codegen::lowerToBm1684x(NetCode &net) {
  LmemKnowledge known;
  for (GroupCode &g : net.groups) {
    Lowering l(known, net.coeff, net.chipFilters);
    // The queues in an order that respects their sync ids, so that every id
    // a command waits for has been given a real id: a record waits for an
    // earlier record of the other queue.
    size_t ti = 0, gi = 0;
    while (ti < g.tiu.size() || gi < g.gdma.size()) {
      bool tiuReady = ti < g.tiu.size() &&
                      (!g.tiu[ti].wait_gdma_id || l.lastGdma.count(g.tiu[ti].wait_gdma_id));
      if (tiuReady) {
        l.lowerTiu(g.tiu[ti]);
        if (!l.error.empty()) {
          std::string op = ti < g.tiuOps.size() && g.tiuOps[ti] < g.ops.size()
                               ? g.ops[g.tiuOps[ti]]
                               : "?";
          return "group " + std::to_string(g.id) + ", op '" + op + "': " + l.error;
        }
        ++ti;
        continue;
      }
      bool gdmaReady = gi < g.gdma.size() &&
                       (!g.gdma[gi].wait_tiu_id || l.lastTiu.count(g.gdma[gi].wait_tiu_id));
      if (!gdmaReady)
        return "group " + std::to_string(g.id) + ": the sync ids wait for a later command";
      l.lowerGdma(g.gdma[gi], gi < g.gdmaIcAlign.size() ? g.gdmaIcAlign[gi] : 1);
      if (!l.error.empty())
        return "group " + std::to_string(g.id) + ", GDMA command " + std::to_string(gi + 1) +
               ": " + l.error;
      ++gi;
    }
    l.end();
    g.bmTiu = std::move(l.tiu);
    g.bmGdma = std::move(l.gdma);
    g.bmTiuCount = l.tiuId;
    g.bmGdmaCount = l.gdmaId;
  }
  return "";
}
