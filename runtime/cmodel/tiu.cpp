// TIU kernels: exact semantics on the LMEM layout of chip.h.
//
// Kernels are templates over an element codec (how a dtype's bits become the
// float a kernel computes in and back). F32 is the only codec so far; f16 and
// bf16 slot in as codecs with round-to-nearest-even stores, int8 as kernels of
// their own (integer accumulation and requantization).
#include <cstring>
#include <limits>

#include "engines.h"
#include "kiln/abi/cmd_check.h"

namespace kiln::cmodel {
namespace {

struct F32 {
  static constexpr uint32_t kBytes = 4;
  static float load(const uint8_t *p) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(uint8_t *p, float v) { std::memcpy(p, &v, sizeof v); }
  static float fromBits(uint32_t bits) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
};

// An operand of a record: an LMEM tensor, or a constant whose bits are in addr.
template <class E>
class Operand {
public:
  Operand(uint8_t *lmem, const kiln_tiu_operand &o)
      : lmem_(lmem), o_(o), layout_(o.addr, o.c, o.plane_h ? o.plane_h : o.h, o.w, E::kBytes),
        is_const_(o.flags & KILN_OPND_CONST), value_(E::fromBits(o.addr)) {}

  float get(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    return is_const_ ? value_ : E::load(lmem_ + layout_.offset(n, c, h, w));
  }
  // Eltwise read: a dimension of 1 repeats along the output's.
  float broadcastGet(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    return get(o_.n == 1 ? 0 : n, o_.c == 1 ? 0 : c, o_.h == 1 ? 0 : h, o_.w == 1 ? 0 : w);
  }
  void set(uint32_t n, uint32_t c, uint32_t h, uint32_t w, float v) {
    E::store(lmem_ + layout_.offset(n, c, h, w), v);
  }
  const kiln_tiu_operand &shape() const { return o_; }

private:
  uint8_t *lmem_;
  kiln_tiu_operand o_;
  LmemLayout layout_;
  bool is_const_;
  float value_;
};

// Keeps NaN (a NaN input is not "less than zero").
float relu(float v) { return v < 0.0f ? 0.0f : v; }

float applyFlags(const kiln_tiu_cmd &cmd, float v) {
  return (cmd.flags & KILN_TIU_FLAG_RELU) ? relu(v) : v;
}

// Calls f(n, c, h, w) for every element of an output, in NCHW order.
template <class F>
void forEachElement(const kiln_tiu_operand &o, F f) {
  for (uint32_t n = 0; n < o.n; ++n)
    for (uint32_t c = 0; c < o.c; ++c)
      for (uint32_t h = 0; h < o.h; ++h)
        for (uint32_t w = 0; w < o.w; ++w)
          f(n, c, h, w);
}

// Input coordinate of output coordinate `out` at kernel tap `k`.
int64_t inputCoord(uint32_t out, uint32_t k, uint32_t stride, uint32_t pad, uint32_t dil) {
  return int64_t{out} * stride - pad + int64_t{k} * dil;
}

// Weight in1 is [1, oc, ic/groups, kh*kw]; padding reads as zero.
template <class E>
void conv(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  Operand<E> in(lmem, cmd.in0), weight(lmem, cmd.in1), bias(lmem, cmd.in2), out(lmem, cmd.out);
  const uint32_t ic_per_group = cmd.in0.c / cmd.groups;
  const uint32_t oc_per_group = cmd.out.c / cmd.groups;
  const bool has_bias = cmd.flags & KILN_TIU_FLAG_HAS_BIAS;
  forEachElement(cmd.out, [&](uint32_t n, uint32_t oc, uint32_t oy, uint32_t ox) {
    const uint32_t ic_base = oc / oc_per_group * ic_per_group;
    float acc = 0.0f;
    for (uint32_t i = 0; i < ic_per_group; ++i)
      for (uint32_t ky = 0; ky < cmd.kh; ++ky) {
        int64_t iy = inputCoord(oy, ky, cmd.stride_h, cmd.pad_top, cmd.dil_h);
        if (iy < 0 || iy >= cmd.in0.h)
          continue;
        for (uint32_t kx = 0; kx < cmd.kw; ++kx) {
          int64_t ix = inputCoord(ox, kx, cmd.stride_w, cmd.pad_left, cmd.dil_w);
          if (ix < 0 || ix >= cmd.in0.w)
            continue;
          acc += in.get(n, ic_base + i, uint32_t(iy), uint32_t(ix)) *
                 weight.get(0, oc, i, ky * cmd.kw + kx);
        }
      }
    if (has_bias)
      acc += bias.get(0, oc, 0, 0);
    out.set(n, oc, oy, ox, applyFlags(cmd, acc));
  });
}

// Max pads with -inf; avg divides by the valid taps unless COUNT_INCLUDE_PAD.
template <class E>
void pool(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  Operand<E> in(lmem, cmd.in0), out(lmem, cmd.out);
  const bool is_max = cmd.subop == KILN_POOL_MAX;
  const bool include_pad = cmd.flags & KILN_TIU_FLAG_COUNT_INCLUDE_PAD;
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t oy, uint32_t ox) {
    float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
    uint32_t valid = 0;
    for (uint32_t ky = 0; ky < cmd.kh; ++ky) {
      int64_t iy = inputCoord(oy, ky, cmd.stride_h, cmd.pad_top, cmd.dil_h);
      if (iy < 0 || iy >= cmd.in0.h)
        continue;
      for (uint32_t kx = 0; kx < cmd.kw; ++kx) {
        int64_t ix = inputCoord(ox, kx, cmd.stride_w, cmd.pad_left, cmd.dil_w);
        if (ix < 0 || ix >= cmd.in0.w)
          continue;
        float v = in.get(n, c, uint32_t(iy), uint32_t(ix));
        acc = is_max ? (v > acc ? v : acc) : acc + v;
        ++valid;
      }
    }
    if (!is_max) {
      uint32_t divisor = include_pad ? uint32_t{cmd.kh} * cmd.kw : valid;
      acc = divisor ? acc / float(divisor) : 0.0f;
    }
    out.set(n, c, oy, ox, applyFlags(cmd, acc));
  });
}

float eltwiseOp(uint16_t subop, float a, float b) {
  switch (subop) {
  case KILN_ELT_ADD: return a + b;
  case KILN_ELT_SUB: return a - b;
  case KILN_ELT_MUL: return a * b;
  case KILN_ELT_MAX: return a > b ? a : b;
  default: return a < b ? a : b; // KILN_ELT_MIN
  }
}

template <class E>
void eltwise(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  Operand<E> a(lmem, cmd.in0), b(lmem, cmd.in1), out(lmem, cmd.out);
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    float v = eltwiseOp(cmd.subop, a.broadcastGet(n, c, h, w), b.broadcastGet(n, c, h, w));
    out.set(n, c, h, w, applyFlags(cmd, v));
  });
}

template <class E>
void active(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  Operand<E> in(lmem, cmd.in0), out(lmem, cmd.out);
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    out.set(n, c, h, w, applyFlags(cmd, relu(in.get(n, c, h, w)))); // KILN_ACT_RELU
  });
}

template <class E>
void runTyped(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  switch (cmd.op) {
  case KILN_TIU_CONV: conv<E>(cmd, lmem); break;
  case KILN_TIU_POOL: pool<E>(cmd, lmem); break;
  case KILN_TIU_ELTWISE: eltwise<E>(cmd, lmem); break;
  default: active<E>(cmd, lmem); break; // KILN_TIU_ACTIVE
  }
}

// The one dtype of every operand the record uses, or KILN_DTYPE_COUNT if they
// differ (no mixed-type kernel exists yet).
uint32_t recordDtype(const kiln_tiu_cmd &cmd) {
  const kiln_tiu_operand *operands[] = {&cmd.out, &cmd.in0, &cmd.in1, &cmd.in2};
  for (const kiln_tiu_operand *o : operands)
    if ((o->flags & KILN_OPND_USED) && o->dtype != cmd.out.dtype)
      return KILN_DTYPE_COUNT;
  return cmd.out.dtype;
}

} // namespace

const char *runTiu(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  switch (kiln_tiu_cmd_check(&cmd)) {
  case KILN_OK: break;
  case KILN_ERR_OUT_OF_RANGE: return "TIU operand outside LMEM";
  default: return "malformed TIU record";
  }
  switch (recordDtype(cmd)) {
  case KILN_DTYPE_F32:
    runTyped<F32>(cmd, lmem);
    return nullptr;
  default:
    return "unsupported dtype";
  }
}

} // namespace kiln::cmodel
