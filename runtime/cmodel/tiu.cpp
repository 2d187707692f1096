// TIU kernels: exact semantics on the LMEM layout of chip.h.
//
// Kernels are templates over an element codec (how a dtype's bits become the
// float a kernel computes in and back). F32 is the only codec so far; f16 and
// bf16 slot in as codecs with round-to-nearest-even stores, int8 as kernels of
// their own (integer accumulation and requantization). The scalar functions
// (eltwiseOp, activeOp, the resize taps) compute in float whatever the codec.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

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

// min(max(v, lo), hi) that keeps NaN, like relu.
float clamp(float v, float lo, float hi) {
  float t = v < lo ? lo : v;
  return t > hi ? hi : t;
}

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

// Output coordinate that input coordinate `in` reaches at deconv tap `k`.
int64_t deconvOutputCoord(uint32_t in, uint32_t k, uint32_t stride, uint32_t pad, uint32_t dil) {
  return int64_t{in} * stride + int64_t{k} * dil - pad;
}

// ---- conv and deconv ---------------------------------------------------------

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

// Scatter form (commands.h): the output starts as the bias (or zero), then
// every input element times every tap adds to the output it reaches, if that
// lies inside. Sums are kept in float and stored once, so a narrower dtype
// rounds only the result and an output overlapping the input is written
// after every read.
template <class E>
void deconv(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  Operand<E> in(lmem, cmd.in0), weight(lmem, cmd.in1), bias(lmem, cmd.in2), out(lmem, cmd.out);
  const kiln_tiu_operand &os = cmd.out;
  const uint32_t ic_per_group = cmd.in0.c / cmd.groups;
  const uint32_t oc_per_group = os.c / cmd.groups;
  const bool has_bias = cmd.flags & KILN_TIU_FLAG_HAS_BIAS;
  auto index = [&](uint32_t n, uint32_t c, uint64_t h, uint64_t w) {
    return ((size_t{n} * os.c + c) * os.h + h) * os.w + w;
  };
  std::vector<float> acc(size_t{os.n} * os.c * os.h * os.w);
  forEachElement(os, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    acc[index(n, c, h, w)] = has_bias ? bias.get(0, c, 0, 0) : 0.0f;
  });
  forEachElement(cmd.in0, [&](uint32_t n, uint32_t ic, uint32_t iy, uint32_t ix) {
    const float v = in.get(n, ic, iy, ix);
    const uint32_t i = ic % ic_per_group, oc_base = ic / ic_per_group * oc_per_group;
    for (uint32_t oc = oc_base; oc < oc_base + oc_per_group; ++oc)
      for (uint32_t ky = 0; ky < cmd.kh; ++ky) {
        int64_t oy = deconvOutputCoord(iy, ky, cmd.stride_h, cmd.pad_top, cmd.dil_h);
        if (oy < 0 || oy >= os.h)
          continue;
        for (uint32_t kx = 0; kx < cmd.kw; ++kx) {
          int64_t ox = deconvOutputCoord(ix, kx, cmd.stride_w, cmd.pad_left, cmd.dil_w);
          if (ox < 0 || ox >= os.w)
            continue;
          acc[index(n, oc, uint64_t(oy), uint64_t(ox))] +=
              v * weight.get(0, oc, i, ky * cmd.kw + kx);
        }
      }
  });
  forEachElement(os, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    out.set(n, c, h, w, applyFlags(cmd, acc[index(n, c, h, w)]));
  });
}

// ---- pool ----------------------------------------------------------------------

// Max and min start from the identity (-inf / +inf) and skip pads, so a pad
// never wins; sum and avg add the valid taps, avg then divides by their count
// unless COUNT_INCLUDE_PAD.
float poolIdentity(uint16_t kind) {
  switch (kind) {
  case KILN_POOL_MAX: return -std::numeric_limits<float>::infinity();
  case KILN_POOL_MIN: return std::numeric_limits<float>::infinity();
  default: return 0.0f; // KILN_POOL_AVG, KILN_POOL_SUM
  }
}

float poolStep(uint16_t kind, float acc, float v) {
  switch (kind) {
  case KILN_POOL_MAX: return v > acc ? v : acc;
  case KILN_POOL_MIN: return v < acc ? v : acc;
  default: return acc + v; // KILN_POOL_AVG, KILN_POOL_SUM
  }
}

template <class E>
void pool(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  Operand<E> in(lmem, cmd.in0), out(lmem, cmd.out);
  const uint16_t kind = cmd.subop;
  const bool include_pad = cmd.flags & KILN_TIU_FLAG_COUNT_INCLUDE_PAD;
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t oy, uint32_t ox) {
    float acc = poolIdentity(kind);
    uint32_t valid = 0;
    for (uint32_t ky = 0; ky < cmd.kh; ++ky) {
      int64_t iy = inputCoord(oy, ky, cmd.stride_h, cmd.pad_top, cmd.dil_h);
      if (iy < 0 || iy >= cmd.in0.h)
        continue;
      for (uint32_t kx = 0; kx < cmd.kw; ++kx) {
        int64_t ix = inputCoord(ox, kx, cmd.stride_w, cmd.pad_left, cmd.dil_w);
        if (ix < 0 || ix >= cmd.in0.w)
          continue;
        acc = poolStep(kind, acc, in.get(n, c, uint32_t(iy), uint32_t(ix)));
        ++valid;
      }
    }
    if (kind == KILN_POOL_AVG) {
      uint32_t divisor = include_pad ? uint32_t{cmd.kh} * cmd.kw : valid;
      acc = divisor ? acc / float(divisor) : 0.0f;
    }
    out.set(n, c, oy, ox, applyFlags(cmd, acc));
  });
}

// ---- eltwise and active ---------------------------------------------------------

float eltwiseOp(uint16_t subop, float a, float b) {
  switch (subop) {
  case KILN_ELT_ADD: return a + b;
  case KILN_ELT_SUB: return a - b;
  case KILN_ELT_MUL: return a * b;
  case KILN_ELT_MAX: return a > b ? a : b;
  case KILN_ELT_MIN: return a < b ? a : b;
  case KILN_ELT_DIV: return a / b;
  case KILN_ELT_POW: return std::pow(a, b);
  default: return a >= 0.0f ? a : a * b; // KILN_ELT_PRELU, b the slope
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

// exp(x) - 1 through expm1, which keeps its precision near 0.
float eluOf(float x, float alpha) { return x > 0.0f ? x : alpha * std::expm1(x); }

// The functions of kiln_active_kind; a and b are param[0] and param[1].
float activeOp(uint16_t kind, float x, float a, float b) {
  switch (kind) {
  case KILN_ACT_RELU: return relu(x);
  case KILN_ACT_LEAKY_RELU: return x >= 0.0f ? x : a * x;
  case KILN_ACT_SIGMOID: return 1.0f / (1.0f + std::exp(-x));
  case KILN_ACT_TANH: return std::tanh(x);
  case KILN_ACT_EXP: return std::exp(x);
  case KILN_ACT_LOG: return std::log(x);
  case KILN_ACT_SQRT: return std::sqrt(x);
  case KILN_ACT_RSQRT: return 1.0f / std::sqrt(x);
  case KILN_ACT_RECIPROCAL: return 1.0f / x;
  case KILN_ACT_ABS: return std::fabs(x);
  case KILN_ACT_NEG: return -x;
  case KILN_ACT_ERF: return std::erf(x);
  case KILN_ACT_ELU: return eluOf(x, a);
  case KILN_ACT_SELU: return b * eluOf(x, a);
  // log(1 + exp(x)) without overflow: exp only ever sees -|x|.
  case KILN_ACT_SOFTPLUS: return std::log1p(std::exp(-std::fabs(x))) + relu(x);
  case KILN_ACT_HARD_SIGMOID: return clamp(a * x + b, 0.0f, 1.0f);
  case KILN_ACT_HARD_SWISH: return x * clamp(x / 6.0f + 0.5f, 0.0f, 1.0f);
  case KILN_ACT_CLIP: return clamp(x, a, b);
  case KILN_ACT_SQUARE: return x * x;
  case KILN_ACT_GELU: return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
  default: return a * x + b; // KILN_ACT_SCALE
  }
}

template <class E>
void active(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  Operand<E> in(lmem, cmd.in0), out(lmem, cmd.out);
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    float v = activeOp(cmd.subop, in.get(n, c, h, w), cmd.param[0], cmd.param[1]);
    out.set(n, c, h, w, applyFlags(cmd, v));
  });
}

// ---- resize ----------------------------------------------------------------------

// Where one output index reads along an axis: nearest reads i0; linear blends
// i0 and i1 with weight l on i1.
struct ResizeTap {
  uint32_t i0, i1;
  float l;
};

// ONNX Resize's coordinate_transformation_mode in f32: the source coordinate
// of output index o on an axis of full lengths in -> out.
float sourceCoord(uint32_t coord, uint32_t o, float scale, uint32_t in, uint32_t out) {
  const float x = float(o);
  switch (coord) {
  case KILN_COORD_ASYMMETRIC: return x / scale;
  case KILN_COORD_ALIGN_CORNERS: {
    // ONNX measures the resized length as in * scale, which need not be
    // the integer output length when the model gives scales.
    const float resized = float(in) * scale;
    (void)out;
    return resized > 1.0f ? x * float(in - 1) / (resized - 1.0f) : 0.0f;
  }
  case KILN_COORD_PYTORCH_HALF_PIXEL: return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
  default: return (x + 0.5f) / scale - 0.5f; // KILN_COORD_HALF_PIXEL
  }
}

// Linear clamps the coordinate to [0, in - 1] (what ONNX's edge padding
// amounts to); nearest picks floor(x) or floor(x) + 1 by the fraction as
// nearest_mode says, then clamps. A tiny scale can make x infinite; the
// clamps keep every index inside.
ResizeTap resizeTap(uint32_t subop, uint32_t o, float scale, uint32_t in, uint32_t out) {
  const float x = sourceCoord(kiln_resize_coord_of(subop), o, scale, in, out);
  const float last = float(in - 1);
  if (kiln_resize_mode_of(subop) == KILN_RESIZE_LINEAR) {
    const float xc = x > 0.0f ? (x < last ? x : last) : 0.0f;
    const uint32_t i0 = uint32_t(xc); // xc >= 0: truncation is floor
    const float l = xc - float(i0);
    // Weight 0 reads nothing more, so a slice's window need not hold i0 + 1.
    return {i0, l > 0.0f ? i0 + 1 : i0, l};
  }
  const float f = std::floor(x), frac = x - f;
  bool up;
  switch (kiln_resize_nearest_of(subop)) {
  case KILN_NEAREST_ROUND_PREFER_CEIL: up = frac >= 0.5f; break;
  case KILN_NEAREST_FLOOR: up = false; break;
  case KILN_NEAREST_CEIL: up = frac > 0.0f; break;
  default: up = frac > 0.5f; break; // KILN_NEAREST_ROUND_PREFER_FLOOR
  }
  const float pick = up ? f + 1.0f : f;
  const uint32_t i = uint32_t(pick > 0.0f ? (pick < last ? pick : last) : 0.0f);
  return {i, i, 0.0f};
}

// The taps of the command's `out_len` outputs along an axis, starting at
// global index out_first of a full length out_full, made relative to its
// input, which starts at global index in_first and holds in_len. Fails if a
// tap falls outside that input (a slice loaded too few rows).
bool axisTaps(uint32_t subop, float scale, uint32_t in_full, uint32_t out_full,
              uint32_t in_first, uint32_t in_len, uint32_t out_first, uint32_t out_len,
              std::vector<ResizeTap> *taps) {
  taps->clear();
  for (uint32_t o = 0; o < out_len; ++o) {
    ResizeTap t = resizeTap(subop, out_first + o, scale, in_full, out_full);
    if (t.i0 < in_first || t.i1 - in_first >= in_len) // i1 >= i0
      return false;
    taps->push_back({t.i0 - in_first, t.i1 - in_first, t.l});
  }
  return true;
}

// W is always whole; H may be a slice (commands.h: aux = full input height,
// full output height, first output row, first input row; all 0 = whole).
template <class E>
const char *resize(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  const bool slice = cmd.aux[0] != 0;
  const uint32_t in_h = slice ? cmd.aux[0] : cmd.in0.h, out_h = slice ? cmd.aux[1] : cmd.out.h;
  std::vector<ResizeTap> rows, cols;
  if (!axisTaps(cmd.subop, cmd.param[0], in_h, out_h, cmd.aux[3], cmd.in0.h, cmd.aux[2],
                cmd.out.h, &rows) ||
      !axisTaps(cmd.subop, cmd.param[1], cmd.in0.w, cmd.out.w, 0, cmd.in0.w, 0, cmd.out.w,
                &cols))
    return "resize reads input rows outside its window";

  Operand<E> in(lmem, cmd.in0), out(lmem, cmd.out);
  const bool linear = kiln_resize_mode_of(cmd.subop) == KILN_RESIZE_LINEAR;
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t oy, uint32_t ox) {
    const ResizeTap &r = rows[oy], &k = cols[ox];
    float v;
    if (linear) { // along W within each source row, then along H, as ONNX and PyTorch
      float top = (1.0f - k.l) * in.get(n, c, r.i0, k.i0) + k.l * in.get(n, c, r.i0, k.i1);
      float bottom = (1.0f - k.l) * in.get(n, c, r.i1, k.i0) + k.l * in.get(n, c, r.i1, k.i1);
      v = (1.0f - r.l) * top + r.l * bottom;
    } else {
      v = in.get(n, c, r.i0, k.i0);
    }
    out.set(n, c, oy, ox, applyFlags(cmd, v));
  });
  return nullptr;
}

// ---- dispatch ----------------------------------------------------------------------

template <class E>
const char *runTyped(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  switch (cmd.op) {
  case KILN_TIU_CONV: conv<E>(cmd, lmem); break;
  case KILN_TIU_DECONV: deconv<E>(cmd, lmem); break;
  case KILN_TIU_POOL: pool<E>(cmd, lmem); break;
  case KILN_TIU_ELTWISE: eltwise<E>(cmd, lmem); break;
  case KILN_TIU_RESIZE: return resize<E>(cmd, lmem);
  default: active<E>(cmd, lmem); break; // KILN_TIU_ACTIVE
  }
  return nullptr;
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
    return runTyped<F32>(cmd, lmem);
  default:
    return "unsupported dtype";
  }
}

} // namespace kiln::cmodel
