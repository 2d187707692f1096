// TIU kernels: exact semantics on the LMEM layout of chip.h, in the dtypes of
// docs/precision.md.
//
// Float kernels are templates over an element codec (how a dtype's bits
// become the f32 a kernel computes in and back): F32, and F16/BF16, which
// load exactly and store rounded to nearest even. INT8 has kernels of its own
// (integer accumulation and the requantization of kiln/abi/quant.h). The
// row functions (eltwiseRow, activeRow) and the resize taps compute in f32
// whatever the codec.
#include "kiln/chip/tiu_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/chip/engines.h"
#include "kiln/abi/cmd_check.h"
#include "parallel.h"
#include "kiln/abi/quant.h"

namespace kiln::chip {
namespace {

// The LMEM a record runs on: KILN_NPU_NUM lanes of lane_bytes, lane-major.
struct Lmem {
  uint8_t *base;
  uint64_t lane_bytes;
};

// Codecs: Value is what a kernel computes with; fromBits decodes a constant
// operand (commands.h: the value's bits in the low bytes of addr).
struct F32 {
  using Value = float;
  static constexpr uint32_t kBytes = 4;
  static float load(const uint8_t *p) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(uint8_t *p, float v) { std::memcpy(p, &v, sizeof v); }
  static float fromBits(uint32_t bits) { return kiln_f32_from_bits(bits); }
};

uint16_t loadU16(const uint8_t *p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void storeU16(uint8_t *p, uint16_t v) { std::memcpy(p, &v, sizeof v); }

// Every f16 value as f32 (kiln_f16_to_f32, tabulated once: loads are hot).
const std::vector<float> kF16ToF32 = [] {
  std::vector<float> t(65536);
  for (uint32_t h = 0; h < 65536; ++h)
    t[h] = kiln_f16_to_f32(uint16_t(h));
  return t;
}();

struct F16 {
  using Value = float;
  static constexpr uint32_t kBytes = 2;
  static float load(const uint8_t *p) { return kF16ToF32[loadU16(p)]; }
  static void store(uint8_t *p, float v) { storeU16(p, kiln_f32_to_f16(v)); }
  static float fromBits(uint32_t bits) { return kiln_f16_to_f32(uint16_t(bits)); }
};

struct BF16 {
  using Value = float;
  static constexpr uint32_t kBytes = 2;
  static float load(const uint8_t *p) { return kiln_bf16_to_f32(loadU16(p)); }
  static void store(uint8_t *p, float v) { storeU16(p, kiln_f32_to_bf16(v)); }
  static float fromBits(uint32_t bits) { return kiln_bf16_to_f32(uint16_t(bits)); }
};

// Kernels store only values already saturated to int8.
struct I8 {
  using Value = int32_t;
  static constexpr uint32_t kBytes = 1;
  static int32_t load(const uint8_t *p) { return int8_t(*p); }
  static void store(uint8_t *p, int32_t v) { *p = uint8_t(int8_t(v)); }
  static int32_t fromBits(uint32_t bits) { return int8_t(uint8_t(bits)); }
};

struct I32 {
  using Value = int32_t;
  static constexpr uint32_t kBytes = 4;
  static int32_t load(const uint8_t *p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(uint8_t *p, int32_t v) { std::memcpy(p, &v, sizeof v); }
  static int32_t fromBits(uint32_t bits) { return int32_t(bits); }
};

// An operand of a record: an LMEM tensor, or a constant whose bits are in addr.
template <class E>
class Operand {
public:
  using Value = typename E::Value;

  Operand(Lmem lmem, const kiln_tiu_operand &o)
      : lmem_(lmem.base), lane_bytes_(lmem.lane_bytes), o_(o),
        layout_(o.addr, o.c, o.plane_h ? o.plane_h : o.h, o.w, E::kBytes, lmem.lane_bytes),
        is_const_(o.flags & KILN_OPND_CONST), value_(E::fromBits(o.addr)) {}

  Value get(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    return is_const_ ? value_ : E::load(lmem_ + layout_.offset(n, c, h, w));
  }
  // Eltwise read: a dimension of 1 repeats along the output's.
  Value broadcastGet(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
    return get(o_.n == 1 ? 0 : n, o_.c == 1 ? 0 : c, o_.h == 1 ? 0 : h, o_.w == 1 ? 0 : w);
  }
  void set(uint32_t n, uint32_t c, uint32_t h, uint32_t w, Value v) {
    E::store(lmem_ + layout_.offset(n, c, h, w), v);
  }
  // The h x w values of (n, c), row-major: within a plane (or a window of
  // plane_h rows) the rows follow one another.
  void getPlane(uint32_t n, uint32_t c, Value *dst) const {
    if (is_const_) {
      for (uint32_t h = 0, i = 0; h < o_.h; ++h)
        for (uint32_t w = 0; w < o_.w; ++w)
          dst[i++] = get(n, c, h, w);
      return;
    }
    const uint8_t *p = lmem_ + layout_.offset(n, c, 0, 0);
    const size_t count = size_t{o_.h} * o_.w;
    if constexpr (std::is_same_v<E, F32>)
      std::memcpy(dst, p, count * sizeof(float));
    else
      for (size_t i = 0; i < count; ++i)
        dst[i] = E::load(p + i * E::kBytes);
  }
  // Row (n, c, h) of an output `width` wide, broadcast as broadcastGet does.
  void getRow(uint32_t n, uint32_t c, uint32_t h, uint32_t width, Value *dst) const {
    if (is_const_ || o_.w == 1) {
      std::fill(dst, dst + width, broadcastGet(n, c, h, 0));
      return;
    }
    const uint8_t *p = lmem_ + layout_.offset(o_.n == 1 ? 0 : n, o_.c == 1 ? 0 : c,
                                              o_.h == 1 ? 0 : h, 0);
    if constexpr (std::is_same_v<E, F32>) {
      std::memcpy(dst, p, size_t{width} * sizeof(float));
      return;
    }
    for (uint32_t w = 0; w < width; ++w)
      dst[w] = E::load(p + size_t{w} * E::kBytes);
  }
  void setRow(uint32_t n, uint32_t c, uint32_t h, const Value *src) {
    uint8_t *p = lmem_ + layout_.offset(n, c, h, 0);
    if constexpr (std::is_same_v<E, F16>) {
      f32ToF16Row(src, o_.w, p);
    } else if constexpr (std::is_same_v<E, F32>) {
      std::memcpy(p, src, size_t{o_.w} * sizeof(float));
    } else {
      for (uint32_t w = 0; w < o_.w; ++w)
        E::store(p + size_t{w} * E::kBytes, src[w]);
    }
  }
  const kiln_tiu_operand &shape() const { return o_; }
  // Whether the values can be read where they lie, as floats: F32, not a
  // constant, and 4-byte aligned (planes start at multiples of KILN_EU_BYTES).
  bool inPlace() const {
    return std::is_same_v<E, F32> && !is_const_ && o_.addr % 4 == 0 && lane_bytes_ % 4 == 0;
  }
  const uint8_t *planeAt(uint32_t n, uint32_t c) const { return lmem_ + layout_.offset(n, c, 0, 0); }
  // Stores count values at element p onwards of plane (n, c), as setRow.
  void setRun(uint32_t n, uint32_t c, size_t p, uint32_t count, const Value *src) {
    uint8_t *dst = lmem_ + layout_.offset(n, c, 0, 0) + p * E::kBytes;
    if constexpr (std::is_same_v<E, F16>) {
      f32ToF16Row(src, count, dst);
    } else if constexpr (std::is_same_v<E, F32>) {
      std::memcpy(dst, src, size_t{count} * sizeof(float));
    } else {
      for (uint32_t i = 0; i < count; ++i)
        E::store(dst + size_t{i} * E::kBytes, src[i]);
    }
  }
  uint8_t *planeAt(uint32_t n, uint32_t c) { return lmem_ + layout_.offset(n, c, 0, 0); }
  // Whether b holds the same elements at the same places.
  template <class B>
  bool sameAs(const Operand<B> &b) const {
    const kiln_tiu_operand &x = b.shape();
    return E::kBytes == B::kBytes && !is_const_ && !(x.flags & KILN_OPND_CONST) &&
           x.addr == o_.addr && x.n == o_.n && x.c == o_.c && x.h == o_.h && x.w == o_.w &&
           (x.plane_h ? x.plane_h : x.h) == (o_.plane_h ? o_.plane_h : o_.h);
  }
  // Per-lane bytes [first, last) the operand may touch (none for a constant).
  uint64_t laneFirst() const { return o_.addr; }
  uint64_t laneEnd() const {
    if (is_const_)
      return o_.addr;
    return o_.addr + kiln_lmem_lane_bytes(o_.n, o_.c, o_.plane_h ? o_.plane_h : o_.h, o_.w,
                                          E::kBytes);
  }

private:
  uint8_t *lmem_;
  uint64_t lane_bytes_;
  kiln_tiu_operand o_;
  LmemLayout layout_;
  bool is_const_;
  Value value_;
};

// The INT8 quantization fields of a record (commands.h).
struct Quant {
  int32_t m0, m1;
  uint32_t shift;
  int32_t zp_in0, zp_in1, zp_out;
  bool relu;

  explicit Quant(const kiln_tiu_cmd &cmd)
      : m0(int32_t(cmd.aux[0])), m1(int32_t(cmd.aux[1])), shift(cmd.aux[3]),
        zp_in0(kiln_zero_point(cmd.aux[2], 0)), zp_in1(kiln_zero_point(cmd.aux[2], 1)),
        zp_out(kiln_zero_point(cmd.aux[2], 2)), relu(cmd.flags & KILN_TIU_FLAG_RELU) {}

  // sat8(rshift_round(v * m, shift) + zp_out), then the RELU flag's
  // max(out, zp_out).
  int32_t requant(int64_t v, int32_t m) const { return finish(kiln_requant_i8(v, m, shift, zp_out)); }
  int32_t finish(int32_t q) const { return relu && q < zp_out ? zp_out : q; }
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

// Calls mac(x, w) for every tap of output (n, oc, oy, ox) that reads the
// input: weight in1 is [1, oc, ic/groups, kh*kw] and padding contributes
// nothing.
template <class In, class W, class F>
void forEachConvTap(const kiln_tiu_cmd &cmd, const Operand<In> &in, const Operand<W> &weight,
                    uint32_t n, uint32_t oc, uint32_t oy, uint32_t ox, F mac) {
  const uint32_t ic_per_group = cmd.in0.c / cmd.groups;
  const uint32_t ic_base = oc / (cmd.out.c / cmd.groups) * ic_per_group;
  for (uint32_t i = 0; i < ic_per_group; ++i)
    for (uint32_t ky = 0; ky < cmd.kh; ++ky) {
      int64_t iy = inputCoord(oy, ky, cmd.stride_h, cmd.pad_top, cmd.dil_h);
      if (iy < 0 || iy >= cmd.in0.h)
        continue;
      for (uint32_t kx = 0; kx < cmd.kw; ++kx) {
        int64_t ix = inputCoord(ox, kx, cmd.stride_w, cmd.pad_left, cmd.dil_w);
        if (ix < 0 || ix >= cmd.in0.w)
          continue;
        mac(in.get(n, ic_base + i, uint32_t(iy), uint32_t(ix)),
            weight.get(0, oc, i, ky * cmd.kw + kx));
      }
    }
}

// Calls f(n, oc, oy, ox, x, w) for every input element x times every tap w
// of the deconv, where the output it reaches lies inside out.
template <class In, class W, class F>
void forEachDeconvTap(const kiln_tiu_cmd &cmd, const Operand<In> &in, const Operand<W> &weight,
                      F f) {
  const kiln_tiu_operand &os = cmd.out;
  const uint32_t ic_per_group = cmd.in0.c / cmd.groups;
  const uint32_t oc_per_group = os.c / cmd.groups;
  forEachElement(cmd.in0, [&](uint32_t n, uint32_t ic, uint32_t iy, uint32_t ix) {
    const auto v = in.get(n, ic, iy, ix);
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
          f(n, oc, uint32_t(oy), uint32_t(ox), v, weight.get(0, oc, i, ky * cmd.kw + kx));
        }
      }
  });
}

// Index of an output element in a dense NCHW scratch buffer.
size_t denseIndex(const kiln_tiu_operand &o, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
  return ((size_t{n} * o.c + c) * o.h + h) * o.w + w;
}

// Float conv: products of the loaded (narrow) values, accumulated in f32;
// the bias B may be wider than E (an F32 bias in an F16 conv).
template <class E, class B>
void conv(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<E> in(lmem, cmd.in0), weight(lmem, cmd.in1), out(lmem, cmd.out);
  Operand<B> bias(lmem, cmd.in2);
  const bool has_bias = cmd.flags & KILN_TIU_FLAG_HAS_BIAS;
  forEachElement(cmd.out, [&](uint32_t n, uint32_t oc, uint32_t oy, uint32_t ox) {
    float acc = 0.0f;
    forEachConvTap(cmd, in, weight, n, oc, oy, ox, [&](float x, float w) { acc += x * w; });
    if (has_bias)
      acc += bias.get(0, oc, 0, 0);
    out.set(n, oc, oy, ox, applyFlags(cmd, acc));
  });
}

// Scatter form (commands.h): the output starts as the bias (or zero), then
// every input element times every tap adds to the output it reaches, if that
// lies inside. Sums are kept in f32 and stored once, so a narrower dtype
// rounds only the result and an output overlapping the input is written
// after every read.
template <class E, class B>
void deconv(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<E> in(lmem, cmd.in0), weight(lmem, cmd.in1), out(lmem, cmd.out);
  Operand<B> bias(lmem, cmd.in2);
  const kiln_tiu_operand &os = cmd.out;
  const bool has_bias = cmd.flags & KILN_TIU_FLAG_HAS_BIAS;
  std::vector<float> acc(size_t{os.n} * os.c * os.h * os.w);
  forEachElement(os, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    acc[denseIndex(os, n, c, h, w)] = has_bias ? bias.get(0, c, 0, 0) : 0.0f;
  });
  forEachDeconvTap(cmd, in, weight,
                   [&](uint32_t n, uint32_t oc, uint32_t oy, uint32_t ox, float x, float w) {
                     acc[denseIndex(os, n, oc, oy, ox)] += x * w;
                   });
  forEachElement(os, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    out.set(n, c, h, w, applyFlags(cmd, acc[denseIndex(os, n, c, h, w)]));
  });
}

// The INT8 requant table in2 [1, oc, 1, 3] = (bias, multiplier, rshift).
struct RequantRow {
  int32_t bias, multiplier;
  uint32_t shift;
};

// Reads the table up front so a bad shift faults before anything is written.
const char *readRequantTable(const kiln_tiu_cmd &cmd, Lmem lmem, std::vector<RequantRow> *rows) {
  Operand<I32> table(lmem, cmd.in2);
  rows->resize(cmd.out.c);
  for (uint32_t oc = 0; oc < cmd.out.c; ++oc) {
    RequantRow r{table.get(0, oc, 0, 0), table.get(0, oc, 0, 1), uint32_t(table.get(0, oc, 0, 2))};
    if (r.shift > 63)
      return "INT8 requant shift outside 0..63";
    (*rows)[oc] = r;
  }
  return nullptr;
}

// acc = sum of (x - zp_in0) * w + bias in int64, requantized per channel.
const char *convI8(const kiln_tiu_cmd &cmd, Lmem lmem) {
  std::vector<RequantRow> table;
  if (const char *why = readRequantTable(cmd, lmem, &table))
    return why;
  Operand<I8> in(lmem, cmd.in0), weight(lmem, cmd.in1), out(lmem, cmd.out);
  const Quant q(cmd);
  forEachElement(cmd.out, [&](uint32_t n, uint32_t oc, uint32_t oy, uint32_t ox) {
    int64_t acc = table[oc].bias;
    forEachConvTap(cmd, in, weight, n, oc, oy, ox,
                   [&](int32_t x, int32_t w) { acc += int64_t{x - q.zp_in0} * w; });
    out.set(n, oc, oy, ox,
            q.finish(kiln_requant_i8(acc, table[oc].multiplier, table[oc].shift, q.zp_out)));
  });
  return nullptr;
}

// The scatter of deconv in int64; outputs no tap reaches requantize the bias.
const char *deconvI8(const kiln_tiu_cmd &cmd, Lmem lmem) {
  std::vector<RequantRow> table;
  if (const char *why = readRequantTable(cmd, lmem, &table))
    return why;
  Operand<I8> in(lmem, cmd.in0), weight(lmem, cmd.in1), out(lmem, cmd.out);
  const Quant q(cmd);
  const kiln_tiu_operand &os = cmd.out;
  std::vector<int64_t> acc(size_t{os.n} * os.c * os.h * os.w);
  forEachElement(os, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    acc[denseIndex(os, n, c, h, w)] = table[c].bias;
  });
  forEachDeconvTap(cmd, in, weight,
                   [&](uint32_t n, uint32_t oc, uint32_t oy, uint32_t ox, int32_t x, int32_t w) {
                     acc[denseIndex(os, n, oc, oy, ox)] += int64_t{x - q.zp_in0} * w;
                   });
  forEachElement(os, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    out.set(n, c, h, w,
            q.finish(kiln_requant_i8(acc[denseIndex(os, n, c, h, w)], table[c].multiplier,
                                     table[c].shift, q.zp_out)));
  });
  return nullptr;
}

// ---- fast conv and deconv ----------------------------------------------------
//
// The sums above, on dense copies of the operands (exact: every codec's
// value is an f32 or an int32) with each output row accumulated in a vector,
// so the inner loops run over a row of outputs and vectorize. Every output
// still receives its products in the reference order, as separate multiply
// and add (this file is built with -ffp-contract=off), so the results are the
// reference kernels' bits: conv sums its taps in (ic, ky, kx) order and then
// adds the bias; deconv starts from the bias and adds in (ic, iy, ix) order,
// which per output row is (iy, ky, kx descending) since each input row and
// column reaches an output through one tap at most. Padding taps are never
// visited. Jobs are (n, oc) pairs, so the thread count never changes a bit.
// The operands are read before anything is written.

// GCC builds an AVX-512, an AVX2 and a baseline version of each hot loop
// and picks one when the program loads (same arithmetic, no FMA: -ffp-contract=off); clang
// (the sanitizer build) cannot multiversion templates and builds the baseline.
#if defined(__clang__)
#define KILN_HOT_LOOP
#else
#define KILN_HOT_LOOP __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

// Scratch vectors that keep their memory from one record to the next (per
// thread): large fresh allocations cost a page fault per 4 KiB.
enum Scratch {
  kInput, kFilter, kSums, kSums2, kRowSums, kPacked, kPatches, kWindowResults, kScratchSlots
};

template <class T>
std::vector<T> &scratch(Scratch slot) {
  thread_local std::vector<T> slots[kScratchSlots];
  return slots[slot];
}

template <class E>
std::vector<typename E::Value> &denseCopy(const Operand<E> &o, Scratch slot) {
  const kiln_tiu_operand &s = o.shape();
  std::vector<typename E::Value> &v = scratch<typename E::Value>(slot);
  v.resize(size_t{s.n} * s.c * s.h * s.w);
  const size_t plane = size_t{s.h} * s.w;
  // Large copies (a layer's filters) split over the threads by channel.
  const size_t chunks = v.size() >= (size_t{1} << 20) ? std::min<size_t>(s.c, 4 * cmodelThreads()) : 1;
  parallelFor(chunks, [&](size_t chunk) {
    for (uint32_t n = 0; n < s.n; ++n)
      for (uint32_t c = uint32_t(chunk * s.c / chunks); c < (chunk + 1) * s.c / chunks; ++c)
        o.getPlane(n, c, &v[(size_t{n} * s.c + c) * plane]);
  });
  return v;
}

// The h x w values of every plane (n, c) of an operand, row-major, wherever
// they are: in LMEM itself when the operand can be read in place (no copy),
// else in a dense copy.
template <class T>
struct Planes {
  std::vector<const T *> at; // [n * c + ch]
  uint32_t c = 0;
  const T *operator()(uint32_t n, uint32_t ch) const { return at[size_t{n} * c + ch]; }
  // The planes of channels first .. of image n, one after another.
  const T *const *from(uint32_t n, uint32_t first) const { return &at[size_t{n} * c + first]; }
};

template <class T>
Planes<T> densePlanes(const kiln_tiu_operand &s, const std::vector<T> &v) {
  Planes<T> p;
  p.c = s.c;
  p.at.resize(size_t{s.n} * s.c);
  for (size_t i = 0; i < p.at.size(); ++i)
    p.at[i] = v.data() + i * s.h * s.w;
  return p;
}

template <class E>
Planes<typename E::Value> planesOf(const Operand<E> &o, Scratch slot) {
  const kiln_tiu_operand &s = o.shape();
  if constexpr (std::is_same_v<E, F32>) {
    if (o.inPlace()) {
      Planes<float> p;
      p.c = s.c;
      p.at.resize(size_t{s.n} * s.c);
      for (uint32_t n = 0; n < s.n; ++n)
        for (uint32_t c = 0; c < s.c; ++c)
          p.at[size_t{n} * s.c + c] = reinterpret_cast<const float *>(o.planeAt(n, c));
      return p;
    }
  }
  return densePlanes(s, denseCopy(o, slot));
}

// acc[j] += x[j * step] * w for j < count.
template <class Acc, class X, class W>
KILN_HOT_LOOP void macRow(Acc *acc, const X *x, ptrdiff_t step,
                                                              uint32_t count, W w) {
  if (step == 1)
    for (uint32_t j = 0; j < count; ++j)
      acc[j] += x[j] * w;
  else
    for (uint32_t j = 0; j < count; ++j)
      acc[j] += x[j * step] * w;
}

// acc[j * step] += x[j] * w for j < count.
template <class Acc, class X, class W>
KILN_HOT_LOOP void scatterRow(Acc *acc, ptrdiff_t step,
                                                                  const X *x, uint32_t count, W w) {
  for (uint32_t j = 0; j < count; ++j)
    acc[j * step] += x[j] * w;
}

// Outputs o in [lo, hi) whose input coordinate o * stride + off lies in [0, in).
void validRange(uint32_t out, int64_t off, uint32_t stride, uint32_t in, uint32_t *lo,
                uint32_t *hi) {
  int64_t first = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t last = int64_t{in} - 1 - off; // o * stride <= last
  int64_t end = last < 0 ? 0 : last / stride + 1;
  *lo = uint32_t(std::min<int64_t>(first, out));
  *hi = uint32_t(std::max<int64_t>(*lo, std::min<int64_t>(end, out)));
}

// Conv sums of (x, w) products into acc [n][oc][oh][ow] (zeroed by the
// caller), each plane then given to sink.
template <class T, class Acc, class Sink>
void convSums(const kiln_tiu_cmd &cmd, const Planes<T> &x, const Planes<T> &w,
              std::vector<Acc> &acc, const Sink &sink) {
  const kiln_tiu_operand &is = cmd.in0, &os = cmd.out;
  const uint32_t icg = is.c / cmd.groups, ocg = os.c / cmd.groups, taps = cmd.kh * cmd.kw;
  parallelFor(size_t{os.n} * os.c, [&](size_t job) {
    const uint32_t n = uint32_t(job / os.c), oc = uint32_t(job % os.c);
    const uint32_t ic_base = oc / ocg * icg;
    for (uint32_t oy = 0; oy < os.h; ++oy) {
      Acc *row = &acc[((size_t{n} * os.c + oc) * os.h + oy) * os.w];
      for (uint32_t i = 0; i < icg; ++i)
        for (uint32_t ky = 0; ky < cmd.kh; ++ky) {
          int64_t iy = inputCoord(oy, ky, cmd.stride_h, cmd.pad_top, cmd.dil_h);
          if (iy < 0 || iy >= is.h)
            continue;
          const T *in = x(n, ic_base + i) + size_t(iy) * is.w;
          const T *tapsRow = w(0, oc) + size_t{i} * taps + size_t{ky} * cmd.kw;
          for (uint32_t kx = 0; kx < cmd.kw; ++kx) {
            int64_t off = int64_t{kx} * cmd.dil_w - cmd.pad_left;
            uint32_t lo, hi;
            validRange(os.w, off, cmd.stride_w, is.w, &lo, &hi);
            if (lo < hi)
              macRow(row + lo, in + int64_t{lo} * cmd.stride_w + off, cmd.stride_w, hi - lo,
                     tapsRow[kx]);
          }
        }
    }
    sink(n, oc, 0, os.h * os.w, &acc[(size_t{n} * os.c + oc) * os.h * os.w]);
  });
}

// Deconv sums added to acc [n][oc][oh][ow] (which holds the bias).
template <class T, class Acc>
void deconvSums(const kiln_tiu_cmd &cmd, const Planes<T> &x, const Planes<T> &w,
                std::vector<Acc> &acc) {
  const kiln_tiu_operand &is = cmd.in0, &os = cmd.out;
  const uint32_t icg = is.c / cmd.groups, ocg = os.c / cmd.groups, taps = cmd.kh * cmd.kw;
  parallelFor(size_t{os.n} * os.c, [&](size_t job) {
    const uint32_t n = uint32_t(job / os.c), oc = uint32_t(job % os.c);
    const uint32_t ic_base = oc / ocg * icg;
    for (uint32_t i = 0; i < icg; ++i)
      for (uint32_t iy = 0; iy < is.h; ++iy) {
        const T *in = x(n, ic_base + i) + size_t{iy} * is.w;
        for (uint32_t ky = 0; ky < cmd.kh; ++ky) {
          int64_t oy = deconvOutputCoord(iy, ky, cmd.stride_h, cmd.pad_top, cmd.dil_h);
          if (oy < 0 || oy >= os.h)
            continue;
          Acc *row = &acc[((size_t{n} * os.c + oc) * os.h + size_t(oy)) * os.w];
          const T *tapsRow = w(0, oc) + size_t{i} * taps + size_t{ky} * cmd.kw;
          for (uint32_t kx = cmd.kw; kx-- > 0;) {
            // ox = ix * stride + off for the inputs ix whose output lies inside.
            int64_t off = int64_t{kx} * cmd.dil_w - cmd.pad_left;
            int64_t first = off >= 0 ? 0 : (-off + cmd.stride_w - 1) / cmd.stride_w;
            int64_t last = (int64_t{os.w} - 1 - off); // ix * stride <= last
            int64_t end = last < 0 ? 0 : std::min<int64_t>(is.w, last / cmd.stride_w + 1);
            if (first < end)
              scatterRow(row + first * cmd.stride_w + off, cmd.stride_w, in + first,
                         uint32_t(end - first), tapsRow[kx]);
          }
        }
      }
  });
}

// The blocked forms: a micro-tile of kTileRows scalar rows (pixels or
// filters) times kBlock vector columns (filters or pixels, two vectors of
// kLanes), accumulated in registers over k = (i, ky, kx) in order. A zero
// standing in for padding adds x * w = +-0 to a sum that starts at +0 and so
// is never -0: the bits do not change as long as every weight is finite
// (0 * inf is NaN), which is checked first. Vectors move in and out with
// memcpy (unaligned, no aliasing questions).
constexpr uint32_t kLanes = 16;
constexpr uint32_t kTileRows = 8;
constexpr uint32_t kBlock = 2 * kLanes;

template <class T>
struct LanesOf;
template <>
struct LanesOf<float> {
  typedef float type __attribute__((vector_size(kLanes * 4)));
};
template <>
struct LanesOf<int32_t> {
  typedef int32_t type __attribute__((vector_size(kLanes * 4)));
};

// Where the micro-tile's vector for k starts: rows `stride` apart, or at
// `offset` in the k-th of a list of planes.
template <class T>
struct StridedRows {
  const T *base;
  size_t stride;
  const T *at(uint32_t k) const { return base + k * stride; }
};
template <class T>
struct PlaneRows {
  const T *const *planes;
  size_t offset;
  const T *at(uint32_t k) const { return planes[k] + offset; }
};
// The micro-tile's scalar r at k: in the r-th of a list of rows (filters), or
// at r in the row for k (pixels of patches, `stride` apart).
template <class T>
struct ScalarRows {
  const T *const *rows;
  T at(uint32_t r, uint32_t k) const { return rows[r][k]; }
};
template <class T>
struct ScalarCols {
  const T *base;
  size_t stride;
  T at(uint32_t r, uint32_t k) const { return base[k * stride + r]; }
};
// Pixel `offset + r` of the k-th of a list of planes.
template <class T>
struct PlaneCols {
  const T *const *planes;
  size_t offset;
  T at(uint32_t r, uint32_t k) const { return planes[k][offset + r]; }
};

// out[r][l] = sum over k < K (ascending) of the products of scalars.at(r, k)
// and rows.at(k)[l], for r < kTileRows and l < NV * kLanes. The input operand
// stays the left factor, as in the reference kernels, so even NaN payloads
// agree: `InputIsScalar` says which side the input is.
// Only the first R rows are computed (R = 1: a single pixel).
template <bool InputIsScalar, uint32_t NV, uint32_t R, class Scalars, class Rows, class T>
KILN_HOT_LOOP void dotTile(Scalars scalars, Rows rows, uint32_t K, T out[kTileRows][kBlock]) {
  using V = typename LanesOf<T>::type;
  V acc[R][NV] = {};
  for (uint32_t k = 0; k < K; ++k) {
    const T *p = rows.at(k);
    V v[NV];
    for (uint32_t j = 0; j < NV; ++j)
      std::memcpy(&v[j], p + j * kLanes, sizeof(V));
    for (uint32_t r = 0; r < R; ++r) {
      const T s = scalars.at(r, k);
      for (uint32_t j = 0; j < NV; ++j) {
        if constexpr (InputIsScalar)
          acc[r][j] += s * v[j];
        else
          acc[r][j] += v[j] * s;
      }
    }
  }
  for (uint32_t r = 0; r < R; ++r)
    for (uint32_t j = 0; j < NV; ++j)
      std::memcpy(&out[r][j * kLanes], &acc[r][j], sizeof(V));
}

// dotTile with one vector where `columns` (at most kBlock) needs no more,
// and one row where `scalarRows` is 1.
template <bool InputIsScalar, class Scalars, class Rows, class T>
void dotTileCols(uint32_t columns, uint32_t scalarRows, Scalars scalars, Rows rows, uint32_t K,
                 T out[kTileRows][kBlock]) {
  if (scalarRows == 1)
    columns > kLanes ? dotTile<InputIsScalar, 2, 1>(scalars, rows, K, out)
                     : dotTile<InputIsScalar, 1, 1>(scalars, rows, K, out);
  else
    columns > kLanes ? dotTile<InputIsScalar, 2, kTileRows>(scalars, rows, K, out)
                     : dotTile<InputIsScalar, 1, kTileRows>(scalars, rows, K, out);
}

// Whether some tap of the conv reads padding (a zero, in the blocked forms).
bool readsPadding(const kiln_tiu_cmd &cmd) {
  const kiln_tiu_operand &is = cmd.in0, &os = cmd.out;
  return cmd.pad_top || cmd.pad_left ||
         int64_t{os.h - 1} * cmd.stride_h + int64_t{cmd.kh - 1} * cmd.dil_h >= is.h ||
         int64_t{os.w - 1} * cmd.stride_w + int64_t{cmd.kw - 1} * cmd.dil_w >= is.w;
}

// Branch-free over the exponent bits, so it vectorizes.
template <class T>
bool allFinite(const T *v, size_t count) {
  if constexpr (std::is_same_v<T, float>) {
    uint32_t nonFinite = 0;
    for (size_t i = 0; i < count; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &v[i], sizeof bits);
      nonFinite |= (bits & 0x7f800000u) == 0x7f800000u;
    }
    return !nonFinite;
  }
  return true;
}

// Each oc's filter is K = icg * taps values in a row (in1 is [1, oc, icg, taps]).
template <class T>
bool filtersFinite(const kiln_tiu_cmd &cmd, const Planes<T> &w) {
  const size_t K = size_t(cmd.in0.c / cmd.groups) * cmd.kh * cmd.kw;
  for (uint32_t oc = 0; oc < cmd.out.c; ++oc)
    if (!allFinite(w(0, oc), K))
      return false;
  return true;
}

// One step of a transpose by blocks: rows x and y (b apart) swap their
// off-diagonal b x b blocks (vectors by reference: no vector ABI).
template <uint32_t B, class V, size_t... C>
inline void swapBlocks(V &x, V &y, std::index_sequence<C...>) {
  constexpr uint32_t n = sizeof...(C);
  const V top = __builtin_shufflevector(x, y, ((C & B) ? n + C - B : C)...);
  y = __builtin_shufflevector(x, y, ((C & B) ? n + C : C + B)...);
  x = top;
}

template <uint32_t B, class V>
inline void swapBlocks(V (&m)[kLanes]) {
  for (uint32_t i = 0; i < kLanes; ++i)
    if (!(i & B))
      swapBlocks<B>(m[i], m[i + B], std::make_index_sequence<kLanes>());
}

// dst[k * kBlock + l] = src[l][k] for l, k < kLanes: a kLanes x kLanes
// transpose in registers, each filter read as one vector.
template <class T>
KILN_HOT_LOOP void transposeTile(const T *const *src, T *dst) {
  using V = typename LanesOf<T>::type;
  V m[kLanes];
  for (uint32_t l = 0; l < kLanes; ++l)
    std::memcpy(&m[l], src[l], sizeof(V));
  swapBlocks<8>(m);
  swapBlocks<4>(m);
  swapBlocks<2>(m);
  swapBlocks<1>(m);
  for (uint32_t k = 0; k < kLanes; ++k)
    std::memcpy(dst + size_t{k} * kBlock, &m[k], sizeof(V));
}

// Filters as [group][block][k][kBlock channels], zero beyond the group's.
// Each filter lies in another lane, a multiple of the cache's way size
// apart: whole tiles are transposed in registers, the rest read filter by
// filter, a chunk of k (a few KiB of dst) at a time.
template <class T>
void packFilters(const kiln_tiu_cmd &cmd, const Planes<T> &w, std::vector<T> &packed) {
  static_assert(kLanes == 16, "swapBlocks steps");
  const uint32_t groups = cmd.groups, ocg = cmd.out.c / groups;
  const uint32_t K = cmd.in0.c / groups * cmd.kh * cmd.kw, blocks = (ocg + kBlock - 1) / kBlock;
  packed.resize(size_t{groups} * blocks * K * kBlock);
  parallelFor(size_t{groups} * blocks, [&](size_t job) {
    const uint32_t g = uint32_t(job / blocks), b = uint32_t(job % blocks);
    const uint32_t first = g * ocg + b * kBlock, lanes = std::min(kBlock, ocg - b * kBlock);
    T *dst = &packed[job * K * kBlock];
    const uint32_t tiledLanes = lanes / kLanes * kLanes, tiledK = K / kLanes * kLanes;
    for (uint32_t l0 = 0; l0 < tiledLanes; l0 += kLanes)
      for (uint32_t k0 = 0; k0 < tiledK; k0 += kLanes) {
        const T *src[kLanes];
        for (uint32_t l = 0; l < kLanes; ++l)
          src[l] = w(0, first + l0 + l) + k0;
        transposeTile(src, dst + size_t{k0} * kBlock + l0);
      }
    constexpr uint32_t kChunk = 64;
    for (uint32_t k0 = 0; k0 < K; k0 += kChunk) {
      const uint32_t k1 = std::min(K, k0 + kChunk);
      for (uint32_t l = 0; l < lanes; ++l) {
        const T *src = w(0, first + l);
        for (uint32_t k = l < tiledLanes ? std::max(k0, tiledK) : k0; k < k1; ++k)
          dst[size_t{k} * kBlock + l] = src[k];
      }
      for (uint32_t k = k0; k < k1; ++k)
        std::fill(dst + size_t{k} * kBlock + lanes, dst + size_t{k + 1} * kBlock, T(0));
    }
  });
}

// patches[k * ld + q] for q < count: input k = (i, ky, kx) of output pixel
// p0 + q, zero where padding (and for q up to ld). A run of pixels in one
// output row reads one input row, so the copies are runs too.
template <class T>
void im2col(const kiln_tiu_cmd &cmd, const T *const *planes, uint32_t p0, uint32_t count,
            size_t ld, T *patches) {
  const kiln_tiu_operand &is = cmd.in0, &os = cmd.out;
  const uint32_t icg = is.c / cmd.groups, sw = cmd.stride_w;
  for (uint32_t q = 0; q < count;) {
    const uint32_t oy = (p0 + q) / os.w, ox0 = (p0 + q) % os.w;
    const uint32_t len = std::min(os.w - ox0, count - q);
    for (uint32_t i = 0; i < icg; ++i)
      for (uint32_t ky = 0; ky < cmd.kh; ++ky) {
        const int64_t iy = inputCoord(oy, ky, cmd.stride_h, cmd.pad_top, cmd.dil_h);
        const bool rowInside = iy >= 0 && iy < is.h;
        const T *row = rowInside ? planes[i] + size_t(iy) * is.w : nullptr;
        for (uint32_t kx = 0; kx < cmd.kw; ++kx) {
          T *dst = patches + ((size_t{i} * cmd.kh + ky) * cmd.kw + kx) * ld + q;
          if (!rowInside) {
            std::fill(dst, dst + len, T(0));
            continue;
          }
          const int64_t off = int64_t{kx} * cmd.dil_w - cmd.pad_left;
          uint32_t lo, hi; // outputs of the whole row that read inside
          validRange(os.w, off, sw, is.w, &lo, &hi);
          lo = std::clamp(lo, ox0, ox0 + len) - ox0;
          hi = std::clamp(hi, ox0, ox0 + len) - ox0;
          if (hi < lo)
            hi = lo;
          std::fill(dst, dst + lo, T(0));
          const T *src = row + (int64_t{ox0} * sw + off);
          if (sw == 1)
            std::copy(src + lo, src + hi, dst + lo);
          else
            for (uint32_t j = lo; j < hi; ++j)
              dst[j] = src[size_t{j} * sw];
          std::fill(dst + hi, dst + len, T(0));
        }
      }
    q += len;
  }
  if (count < ld)
    for (size_t k = 0; k < size_t{icg} * cmd.kh * cmd.kw; ++k)
      std::fill(patches + k * ld + count, patches + (k + 1) * ld, T(0));
}

// Whether the conv is 1x1 with stride 1 and no padding: its input planes
// are its patches.
bool pointwise(const kiln_tiu_cmd &cmd) {
  return cmd.kh == 1 && cmd.kw == 1 && cmd.stride_h == 1 && cmd.stride_w == 1 &&
         !readsPadding(cmd);
}

// Pixels of a tile of patches of K values each: ~256 KiB, a multiple of
// `multiple`, at most `most`.
uint32_t tilePixels(uint32_t K, uint32_t multiple, uint32_t most) {
  return std::clamp<uint32_t>(uint32_t(65536 / K) / multiple * multiple, multiple, most);
}

// Runs f(n, g, p0, count, first, end) on the threads for every tile of
// `tile` output pixels [p0, p0 + count) of each sample n and group g, the
// tile's `units` (filter rows or blocks) split into [first, end) so that the
// threads get about two jobs each.
template <class F>
void forEachTileJob(const kiln_tiu_cmd &cmd, uint32_t tile, uint32_t units, const F &f) {
  const kiln_tiu_operand &os = cmd.out;
  const uint32_t groups = cmd.groups, pixels = os.h * os.w;
  const uint32_t tiles = (pixels + tile - 1) / tile;
  const size_t tileJobs = size_t{os.n} * groups * tiles;
  const uint32_t splits =
      std::min<uint32_t>(units, uint32_t((2 * cmodelThreads() + tileJobs - 1) / tileJobs));
  const uint32_t perJob = (units + splits - 1) / splits;
  parallelFor(tileJobs * splits, [&](size_t job) {
    const uint32_t split = uint32_t(job % splits);
    const size_t tileJob = job / splits;
    const uint32_t t = uint32_t(tileJob % tiles), g = uint32_t(tileJob / tiles % groups),
                   n = uint32_t(tileJob / tiles / groups);
    const uint32_t p0 = t * tile;
    f(n, g, p0, std::min(tile, pixels - p0), split * perJob,
      std::min(units, (split + 1) * perJob));
  });
}

// Conv sums with pixels in the vectors and filters (read in place) as
// scalars: a job is a tile of pixels and a run of filter octets. Patches come
// from im2col, except for a pointwise conv, whose input planes are its
// patches (its short last block goes through a zero-padded copy).
template <class T, class Sink>
void convSumsPixels(const kiln_tiu_cmd &cmd, const Planes<T> &x, const Planes<T> &w,
                    const Sink &sink) {
  const kiln_tiu_operand &is = cmd.in0, &os = cmd.out;
  const uint32_t groups = cmd.groups, icg = is.c / groups, ocg = os.c / groups;
  const uint32_t K = icg * cmd.kh * cmd.kw, octets = (ocg + kTileRows - 1) / kTileRows;
  const bool direct = pointwise(cmd);
  const uint32_t tile = direct ? 4 * kBlock : tilePixels(K, kBlock, 512);
  forEachTileJob(cmd, tile, octets, [&](uint32_t n, uint32_t g, uint32_t p0, uint32_t count,
                                        uint32_t oBegin, uint32_t oEnd) {
    const T *const *planes = x.from(n, g * icg);
    std::vector<T> &patches = scratch<T>(kPatches);
    const size_t ld = (count + kBlock - 1) / kBlock * kBlock;
    std::vector<const T *> tailRows;
    if (!direct) {
      patches.resize(K * ld);
      im2col(cmd, planes, p0, count, ld, patches.data());
    } else if (count % kBlock) {
      const uint32_t first = count / kBlock * kBlock;
      patches.assign(size_t{K} * kBlock, T(0));
      tailRows.resize(K);
      for (uint32_t k = 0; k < K; ++k) {
        std::copy(planes[k] + p0 + first, planes[k] + p0 + count, &patches[size_t{k} * kBlock]);
        tailRows[k] = &patches[size_t{k} * kBlock];
      }
    }
    for (uint32_t o = oBegin * kTileRows; o < oEnd * kTileRows; o += kTileRows) {
      const T *filters[kTileRows];
      for (uint32_t r = 0; r < kTileRows; ++r)
        filters[r] = w(0, g * ocg + std::min(o + r, ocg - 1));
      for (uint32_t q = 0; q < count; q += kBlock) {
        const uint32_t run = std::min(kBlock, count - q);
        T sums[kTileRows][kBlock];
        if (!direct)
          dotTileCols<false>(run, kTileRows, ScalarRows<T>{filters},
                             StridedRows<T>{patches.data() + q, ld}, K, sums);
        else if (run == kBlock)
          dotTileCols<false>(run, kTileRows, ScalarRows<T>{filters}, PlaneRows<T>{planes, p0 + q},
                             K, sums);
        else
          dotTileCols<false>(run, kTileRows, ScalarRows<T>{filters},
                             PlaneRows<T>{tailRows.data(), 0}, K, sums);
        for (uint32_t r = 0; r < kTileRows && o + r < ocg; ++r)
          sink(n, g * ocg + o + r, p0 + q, run, sums[r]);
      }
    }
  });
}

// Conv sums with channels in the vectors (filters packed) and pixels as
// scalars, for maps too small to fill vectors: a job is a tile of pixels and
// a run of channel blocks.
template <class T, class Sink>
void convSumsChannels(const kiln_tiu_cmd &cmd, const Planes<T> &x, const Planes<T> &w,
                      const Sink &sink) {
  const kiln_tiu_operand &is = cmd.in0, &os = cmd.out;
  const uint32_t groups = cmd.groups, icg = is.c / groups, ocg = os.c / groups;
  const uint32_t K = icg * cmd.kh * cmd.kw, blocks = (ocg + kBlock - 1) / kBlock;
  std::vector<T> &packed = scratch<T>(kPacked);
  packFilters(cmd, w, packed);
  const uint32_t tile = tilePixels(K, kTileRows, 64);
  forEachTileJob(cmd, tile, blocks, [&](uint32_t n, uint32_t g, uint32_t p0, uint32_t count,
                                        uint32_t bBegin, uint32_t bEnd) {
    const size_t ld = (count + kTileRows - 1) / kTileRows * kTileRows;
    // A single pixel of a pointwise conv reads the planes (a matrix times a vector).
    const bool single = count == 1 && pointwise(cmd);
    std::vector<T> &patches = scratch<T>(kPatches);
    if (!single) {
      patches.resize(K * ld);
      im2col(cmd, x.from(n, g * icg), p0, count, ld, patches.data());
    }
    for (uint32_t b = bBegin; b < bEnd; ++b) {
      const T *wb = &packed[(size_t{g} * blocks + b) * K * kBlock];
      const uint32_t lanes = std::min(kBlock, ocg - b * kBlock);
      for (uint32_t p = 0; p < count; p += kTileRows) {
        T sums[kTileRows][kBlock];
        const uint32_t run = std::min(kTileRows, count - p);
        if (single)
          dotTileCols<true>(lanes, run, PlaneCols<T>{x.from(n, g * icg), p0},
                            StridedRows<T>{wb, kBlock}, K, sums);
        else
          dotTileCols<true>(lanes, run, ScalarCols<T>{patches.data() + p, ld},
                            StridedRows<T>{wb, kBlock}, K, sums); // pixels x filters
        for (uint32_t l = 0; l < lanes; ++l) {
          T column[kTileRows];
          for (uint32_t j = 0; j < run; ++j)
            column[j] = sums[j][l];
          sink(n, g * ocg + b * kBlock + l, p0 + p, run, column);
        }
      }
    }
  });
}

// Depthwise convs and pools run as window records: a channel's input,
// padded and split into stride phases, makes every tap one pass over a flat
// run of outputs (oh rows of qw, the columns past ow discarded), taps in
// (ky, kx) order. What every channel of such a record shares, worked out once.
struct DepthwiseShape {
  uint32_t qh, qw;              // rows and columns of a phase plane
  size_t phaseSize;             // qh * qw
  uint32_t run;                 // outputs kept in registers over all taps
  size_t chunks;                // oh * qw outputs in runs of `run`
  std::vector<uint32_t> lo, hi; // per column phase b: columns [lo, hi) read the input
  std::vector<size_t> tapAt;    // per tap (ky, kx): where its pass starts in the phases
};
constexpr uint32_t kDepthwiseRun = 4 * kLanes; // the longest run

DepthwiseShape depthwiseShape(const kiln_tiu_cmd &cmd) {
  const uint32_t sh = cmd.stride_h, sw = cmd.stride_w, dh = cmd.dil_h, dw = cmd.dil_w;
  DepthwiseShape d;
  d.qh = cmd.out.h + (cmd.kh - 1) * dh / sh;
  d.qw = cmd.out.w + (cmd.kw - 1) * dw / sw;
  d.phaseSize = size_t{d.qh} * d.qw;
  const size_t wide = size_t{cmd.out.h} * d.qw;
  d.run = wide > kLanes ? kDepthwiseRun : kLanes; // one vector for tiny maps
  d.chunks = (wide + d.run - 1) / d.run;
  d.lo.resize(sw);
  d.hi.resize(sw);
  for (uint32_t b = 0; b < sw; ++b)
    validRange(d.qw, int64_t{b} - cmd.pad_left, sw, cmd.in0.w, &d.lo[b], &d.hi[b]);
  for (uint32_t ky = 0; ky < cmd.kh; ++ky)
    for (uint32_t kx = 0; kx < cmd.kw; ++kx)
      d.tapAt.push_back((size_t{ky * dh % sh} * sw + kx * dw % sw) * d.phaseSize +
                        size_t{ky * dh / sh} * d.qw + kx * dw / sw);
  return d;
}

// The even lanes of a then b, to dst (vectors by reference: no vector ABI).
template <class T, class V, size_t... I>
inline void storeEvenLanes(T *dst, const V &a, const V &b, std::index_sequence<I...>) {
  const V even = __builtin_shufflevector(a, b, (2 * I)...);
  std::memcpy(dst, &even, sizeof even);
}

// dst[i] = src[2 * i] for i < count, kLanes at a time by shuffles (a
// stride-2 loop does not vectorize); reads src[0, 2 * count - 1) only.
template <class T>
inline void copyEven(T *dst, const T *src, uint32_t count) {
  using V = typename LanesOf<T>::type;
  uint32_t i = 0;
  for (; i + kLanes < count; i += kLanes) {
    V a, b;
    std::memcpy(&a, src + 2 * i, sizeof a);
    std::memcpy(&b, src + 2 * i + kLanes, sizeof b);
    storeEvenLanes(dst + i, a, b, std::make_index_sequence<kLanes>());
  }
  for (; i < count; ++i)
    dst[i] = src[size_t{2} * i];
}

// One channel of a window record (depthwise conv or pool): phase (a, b) of
// `phases` gets padded input (y * sh + a, x * sw + b), padded coordinates
// starting at (-pad_top, -pad_left), where that lies inside the input (the
// padding, the same for every channel, is the caller's); then every output
// of a run starts at `init` and step(acc, x, t) updates it for the taps t
// in (ky, kx) order (in `sums`, d.chunks * d.run + kLanes long), and the oh
// rows of ow results go one after another to `results` (oh * ow + kLanes
// long). The last runs read past the phases, so they hold d.chunks * d.run
// more. NV vectors make a run.
template <uint32_t NV, class T, class Step>
KILN_HOT_LOOP void windowChannel(const kiln_tiu_cmd &cmd, const DepthwiseShape &d,
                                 const T *plane, T init, Step step, T *phases, T *sums,
                                 T *results) {
  const kiln_tiu_operand &is = cmd.in0;
  const uint32_t sh = cmd.stride_h, sw = cmd.stride_w, qh = d.qh, qw = d.qw;
  for (uint32_t a = 0; a < sh; ++a)
    for (uint32_t b = 0; b < sw; ++b)
      for (uint32_t y = 0; y < qh; ++y) {
        const int64_t iy = int64_t{y} * sh + a - cmd.pad_top;
        if (iy < 0 || iy >= is.h)
          continue;
        // Columns xq in [lo, hi) read input column xq * sw + b - pad_left.
        const uint32_t lo = d.lo[b], hi = d.hi[b];
        T *dst = &phases[((size_t{a} * sw + b) * qh + y) * qw] + lo;
        const T *src = plane + size_t(iy) * is.w + (int64_t{lo} * sw + b - cmd.pad_left);
        if (sw == 1)
          std::copy(src, src + (hi - lo), dst);
        else if (sw == 2)
          copyEven(dst, src, hi - lo);
        else
          for (uint32_t xq = 0; xq < hi - lo; ++xq)
            dst[xq] = src[size_t{xq} * sw];
      }
  using V = typename LanesOf<T>::type;
  for (size_t j = 0; j < d.chunks * d.run; j += NV * kLanes) {
    V acc[NV];
    for (uint32_t v = 0; v < NV; ++v)
      acc[v] = V{} + init;
    for (size_t t = 0; t < d.tapAt.size(); ++t) {
      const T *src = &phases[d.tapAt[t] + j];
      for (uint32_t v = 0; v < NV; ++v) {
        V x;
        std::memcpy(&x, src + v * kLanes, sizeof x);
        step(acc[v], x, t);
      }
    }
    std::memcpy(&sums[j], acc, sizeof acc);
  }
  // The oh rows of ow results, whole vectors at a time: a row's last vector
  // spills into the next row's place, which that row then writes.
  const uint32_t ow = cmd.out.w;
  for (uint32_t oy = 0; oy < cmd.out.h; ++oy)
    for (uint32_t x = 0; x < ow; x += kLanes) {
      V v;
      std::memcpy(&v, &sums[size_t{oy} * qw + x], sizeof v);
      std::memcpy(&results[size_t{oy} * ow + x], &v, sizeof v);
    }
}

// Runs f(n, c, results) for every channel of a window record, the padding
// `pad`: jobs are runs of channels that write the padding once.
template <class T, class Step, class F>
void forEachWindowChannel(const kiln_tiu_cmd &cmd, const Planes<T> &x, T pad, T init,
                          const Step &step, const F &f) {
  const kiln_tiu_operand &os = cmd.out;
  const DepthwiseShape d = depthwiseShape(cmd);
  const size_t channels = size_t{os.n} * os.c, runs = std::min<size_t>(channels, 4 * cmodelThreads());
  parallelFor(runs, [&](size_t run) {
    std::vector<T> &phases = scratch<T>(kPatches), &sums = scratch<T>(kSums2),
                   &results = scratch<T>(kWindowResults);
    phases.assign(d.phaseSize * cmd.stride_h * cmd.stride_w + d.chunks * d.run, pad);
    sums.resize(d.chunks * d.run + kLanes);
    results.resize(size_t{os.h} * os.w + kLanes);
    for (size_t job = run * channels / runs; job < (run + 1) * channels / runs; ++job) {
      const uint32_t n = uint32_t(job / os.c), c = uint32_t(job % os.c);
      if (d.run == kLanes)
        windowChannel<1>(cmd, d, x(n, c), init, step(c), phases.data(), sums.data(),
                         results.data());
      else
        windowChannel<kDepthwiseRun / kLanes>(cmd, d, x(n, c), init, step(c), phases.data(),
                                              sums.data(), results.data());
      f(n, c, results.data());
    }
  });
}

// Depthwise convs (one input and one output channel per group): the sums of
// x * tap, zeros for padding (which needs finite weights, as in the blocked
// forms).
template <class T, class Sink>
void convSumsDepthwise(const kiln_tiu_cmd &cmd, const Planes<T> &x, const Planes<T> &w,
                       const Sink &sink) {
  using V = typename LanesOf<T>::type;
  auto step = [&](uint32_t c) {
    return [taps = w(0, c)](V &acc, const V &v, size_t t) { acc += v * taps[t]; };
  };
  forEachWindowChannel(cmd, x, T(0), T(0), step, [&](uint32_t n, uint32_t c, const T *sums) {
    sink(n, c, 0, cmd.out.h * cmd.out.w, sums);
  });
}

// The share of vector lanes and tile rows doing work with `vectored`
// outputs in the vectors and `scalars` as scalars.
double laneUse(uint64_t vectored, uint64_t scalars) {
  const uint64_t columns = vectored > kLanes ? (vectored + kBlock - 1) / kBlock * kBlock : kLanes;
  return double(vectored) / double(columns) * double(scalars) /
         double((scalars + kTileRows - 1) / kTileRows * kTileRows);
}

// The fastest form that computes the reference's bits: depthwise convs by
// flat passes; pixels in the vectors, or channels when that fills them much
// better (small maps), for 8 or more channels per group; rows otherwise (in
// acc), and whenever a tap reads padding and a weight is not finite. Every
// form gives sink(n, oc, p, count, sums) the finished sums of each output
// exactly once, from the thread that computed them.
template <class T, class Acc, class Sink>
void convAllSums(const kiln_tiu_cmd &cmd, const Planes<T> &x, const Planes<T> &w,
                 std::vector<Acc> &acc, const Sink &sink) {
  const uint32_t icg = cmd.in0.c / cmd.groups, ocg = cmd.out.c / cmd.groups;
  const uint64_t pixels = uint64_t{cmd.out.h} * cmd.out.w;
  const bool zerosOk = !readsPadding(cmd) || filtersFinite(cmd, w);
  if (zerosOk && icg == 1 && ocg == 1) {
    convSumsDepthwise(cmd, x, w, sink);
    return;
  }
  if (zerosOk && ocg >= 8) {
    if (laneUse(ocg, pixels) > 1.5 * laneUse(pixels, ocg))
      convSumsChannels(cmd, x, w, sink);
    else
      convSumsPixels(cmd, x, w, sink);
    return;
  }
  acc.assign(size_t{cmd.out.n} * cmd.out.c * pixels, Acc(0));
  convSums(cmd, x, w, acc, sink);
}

// A sink that keeps the sums in acc [n][oc][oh][ow].
template <class Acc>
auto sumsInto(const kiln_tiu_operand &os, std::vector<Acc> &acc) {
  const size_t pixels = size_t{os.h} * os.w;
  acc.resize(size_t{os.n} * os.c * pixels);
  return [&acc, &os, pixels](uint32_t n, uint32_t oc, size_t p, uint32_t count, const Acc *sums) {
    Acc *dst = &acc[(size_t{n} * os.c + oc) * pixels + p];
    if (dst != sums)
      std::copy(sums, sums + count, dst);
  };
}

// dst[i] = sums[i] (+ *bias) (then ReLU): the reference's last steps, one
// loop per case so each vectorizes.
KILN_HOT_LOOP void finishRun(float *dst, const float *sums, uint32_t count, const float *bias,
                             bool relu_after) {
  if (bias) {
    const float b = *bias;
    for (uint32_t i = 0; i < count; ++i)
      dst[i] = sums[i] + b;
  } else if (dst != sums) {
    std::memcpy(dst, sums, size_t{count} * sizeof(float));
  }
  if (relu_after)
    for (uint32_t i = 0; i < count; ++i)
      dst[i] = relu(dst[i]);
}

// Whether two operands' LMEM bytes may meet (the same per-lane range in
// every lane, so comparing one lane's is enough).
template <class A, class B>
bool mayOverlap(const Operand<A> &a, const Operand<B> &b) {
  return a.laneFirst() < a.laneEnd() && b.laneFirst() < b.laneEnd() &&
         a.laneFirst() < b.laneEnd() && b.laneFirst() < a.laneEnd();
}

template <class E, class B>
void convFast(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<E> in(lmem, cmd.in0), weight(lmem, cmd.in1), out(lmem, cmd.out);
  Operand<B> bias(lmem, cmd.in2);
  const bool has_bias = cmd.flags & KILN_TIU_FLAG_HAS_BIAS;
  const kiln_tiu_operand &os = cmd.out;
  std::vector<float> biases(os.c);
  for (uint32_t c = 0; c < os.c; ++c)
    biases[c] = has_bias ? bias.get(0, c, 0, 0) : 0.0f;
  const bool relu_after = cmd.flags & KILN_TIU_FLAG_RELU, direct = out.inPlace();
  // Bias, ReLU and the store of a run of sums: F32 straight into LMEM.
  auto finish = [&](uint32_t n, uint32_t oc, size_t p, uint32_t count, const float *sums) {
    const float *b = has_bias ? &biases[oc] : nullptr;
    if (direct) {
      finishRun(reinterpret_cast<float *>(out.planeAt(n, oc)) + p, sums, count, b, relu_after);
      return;
    }
    constexpr uint32_t kChunk = 256;
    float done[kChunk];
    for (uint32_t at = 0; at < count; at += kChunk) {
      const uint32_t m = std::min(kChunk, count - at);
      finishRun(done, sums + at, m, b, relu_after);
      out.setRun(n, oc, p + at, m, done);
    }
  };
  const Planes<float> x = planesOf(in, kInput), w = planesOf(weight, kFilter);
  std::vector<float> &acc = scratch<float>(kSums);
  // An output that overlaps no input is written as its sums are done;
  // otherwise after every read.
  if (!mayOverlap(out, in) && !mayOverlap(out, weight) && !(has_bias && mayOverlap(out, bias))) {
    convAllSums(cmd, x, w, acc, finish);
    return;
  }
  convAllSums(cmd, x, w, acc, sumsInto(os, acc));
  const size_t pixels = size_t{os.h} * os.w;
  for (uint32_t n = 0; n < os.n; ++n)
    for (uint32_t c = 0; c < os.c; ++c)
      finish(n, c, 0, uint32_t(pixels), &acc[(size_t{n} * os.c + c) * pixels]);
}

template <class E, class B>
void deconvFast(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<E> in(lmem, cmd.in0), weight(lmem, cmd.in1), out(lmem, cmd.out);
  Operand<B> bias(lmem, cmd.in2);
  const bool has_bias = cmd.flags & KILN_TIU_FLAG_HAS_BIAS;
  const kiln_tiu_operand &os = cmd.out;
  std::vector<float> &acc = scratch<float>(kSums);
  acc.resize(size_t{os.n} * os.c * os.h * os.w);
  size_t i = 0;
  forEachElement(os, [&](uint32_t, uint32_t c, uint32_t, uint32_t) {
    acc[i++] = has_bias ? bias.get(0, c, 0, 0) : 0.0f;
  });
  deconvSums(cmd, planesOf(in, kInput), planesOf(weight, kFilter), acc);
  float *row = acc.data();
  forEachRow(os, [&](uint32_t n, uint32_t c, uint32_t h) {
    for (uint32_t w = 0; w < os.w; ++w)
      row[w] = applyFlags(cmd, row[w]);
    out.setRow(n, c, h, row);
    row += os.w;
  });
}

// INT8: (x - zp_in0) * w sums are exact in int32 while an output has fewer
// than 2^31 / (255 * 128) taps (|x - zp| <= 255, |w| <= 128), so the order is
// free; the bias and requantization follow in int64. Larger records run the
// reference kernel.
Planes<int32_t> int8Planes(const Operand<I8> &o, int32_t zp, Scratch slot) {
  std::vector<int32_t> &v = denseCopy(o, slot);
  for (int32_t &e : v)
    e -= zp;
  return densePlanes(o.shape(), v);
}

// Taps per output below which int32 sums of (x - zp) * w cannot overflow.
constexpr uint64_t kInt32SafeTaps = (uint64_t{1} << 31) / (255 * 128);

bool int32SumsExact(const kiln_tiu_cmd &cmd) {
  return uint64_t(cmd.in0.c / cmd.groups) * cmd.kh * cmd.kw < kInt32SafeTaps;
}

// Conv or deconv in INT8: `sums` adds the (x - zp) * w products into a
// zeroed int32 vector; the bias and the per-channel requantization follow.
template <class Sums>
const char *convLikeI8Fast(const kiln_tiu_cmd &cmd, Lmem lmem, Sums sums) {
  std::vector<RequantRow> table;
  if (const char *why = readRequantTable(cmd, lmem, &table))
    return why;
  Operand<I8> in(lmem, cmd.in0), weight(lmem, cmd.in1), out(lmem, cmd.out);
  const Quant q(cmd);
  const kiln_tiu_operand &os = cmd.out;
  std::vector<int32_t> &acc = scratch<int32_t>(kSums);
  acc.assign(size_t{os.n} * os.c * os.h * os.w, 0);
  sums(int8Planes(in, q.zp_in0, kInput), int8Planes(weight, 0, kFilter), acc);
  size_t i = 0;
  forEachElement(os, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    int64_t v = int64_t{table[c].bias} + acc[i++];
    out.set(n, c, h, w, q.finish(kiln_requant_i8(v, table[c].multiplier, table[c].shift, q.zp_out)));
  });
  return nullptr;
}

const char *convI8Fast(const kiln_tiu_cmd &cmd, Lmem lmem) {
  if (!int32SumsExact(cmd))
    return convI8(cmd, lmem);
  return convLikeI8Fast(cmd, lmem, [&](const auto &x, const auto &w, auto &acc) {
    std::vector<int32_t> &rows = scratch<int32_t>(kRowSums);
    convAllSums(cmd, x, w, rows, sumsInto(cmd.out, acc));
  });
}

const char *deconvI8Fast(const kiln_tiu_cmd &cmd, Lmem lmem) {
  if (!int32SumsExact(cmd))
    return deconvI8(cmd, lmem);
  return convLikeI8Fast(cmd, lmem, [&](const auto &x, const auto &w, auto &acc) {
    deconvSums(cmd, x, w, acc);
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

// Calls f(iy, ix) for every tap of pool output (oy, ox) inside the input;
// returns their count.
template <class F>
uint32_t forEachPoolTap(const kiln_tiu_cmd &cmd, uint32_t oy, uint32_t ox, F f) {
  uint32_t valid = 0;
  for (uint32_t ky = 0; ky < cmd.kh; ++ky) {
    int64_t iy = inputCoord(oy, ky, cmd.stride_h, cmd.pad_top, cmd.dil_h);
    if (iy < 0 || iy >= cmd.in0.h)
      continue;
    for (uint32_t kx = 0; kx < cmd.kw; ++kx) {
      int64_t ix = inputCoord(ox, kx, cmd.stride_w, cmd.pad_left, cmd.dil_w);
      if (ix < 0 || ix >= cmd.in0.w)
        continue;
      f(uint32_t(iy), uint32_t(ix));
      ++valid;
    }
  }
  return valid;
}

// What avg divides by: the valid taps, or the whole kernel with
// COUNT_INCLUDE_PAD.
uint32_t poolDivisor(const kiln_tiu_cmd &cmd, uint32_t valid) {
  return (cmd.flags & KILN_TIU_FLAG_COUNT_INCLUDE_PAD) ? uint32_t{cmd.kh} * cmd.kw : valid;
}

template <class E>
void pool(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<E> in(lmem, cmd.in0), out(lmem, cmd.out);
  const uint16_t kind = cmd.subop;
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t oy, uint32_t ox) {
    float acc = poolIdentity(kind);
    uint32_t valid = forEachPoolTap(cmd, oy, ox, [&](uint32_t iy, uint32_t ix) {
      acc = poolStep(kind, acc, in.get(n, c, iy, ix));
    });
    if (kind == KILN_POOL_AVG) {
      uint32_t divisor = poolDivisor(cmd, valid);
      acc = divisor ? acc / float(divisor) : 0.0f;
    }
    out.set(n, c, oy, ox, applyFlags(cmd, acc));
  });
}

// Float pools as window records (with the conv kernels in "fast conv and
// deconv"). Max and min pad with -inf / +inf, which a step never picks
// (v > acc is false for v = -inf, a NaN acc included), so padding counts as
// the reference's skipped taps; sum and avg pad with +0, which leaves a sum
// that starts at +0 unchanged (it is never -0). Avg then divides by each
// output's valid taps (rows times columns), as the reference.
template <class E>
void poolFast(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<E> in(lmem, cmd.in0), out(lmem, cmd.out);
  const kiln_tiu_operand &os = cmd.out;
  const uint16_t kind = cmd.subop;
  // A window record computes oh rows of qw columns to keep ow of them: when
  // the kernel is wider than the output (a global pool: ow 1, qw = kw) that
  // is mostly waste, and the per-output path is faster.
  const uint64_t taps = cmd.kw ? uint64_t{cmd.kw} - 1 : 0;
  const uint64_t qw = os.w + taps * cmd.dil_w / std::max<uint32_t>(cmd.stride_w, 1);
  if (mayOverlap(in, out) || qw > 2 * uint64_t{os.w}) {
    pool<E>(cmd, lmem);
    return;
  }
  auto valid = [&](uint32_t outLen, uint32_t k, uint32_t stride, uint32_t pad, uint32_t dil,
                   uint32_t inLen) {
    std::vector<uint32_t> v(outLen);
    for (uint32_t o = 0; o < outLen; ++o)
      for (uint32_t t = 0; t < k; ++t) {
        const int64_t i = inputCoord(o, t, stride, pad, dil);
        v[o] += i >= 0 && i < inLen;
      }
    return v;
  };
  const std::vector<uint32_t> rows = valid(os.h, cmd.kh, cmd.stride_h, cmd.pad_top, cmd.dil_h, cmd.in0.h),
                              cols = valid(os.w, cmd.kw, cmd.stride_w, cmd.pad_left, cmd.dil_w, cmd.in0.w);
  const bool relu_after = cmd.flags & KILN_TIU_FLAG_RELU, direct = out.inPlace();
  const float identity = poolIdentity(kind);
  using V = LanesOf<float>::type;
  auto finish = [&](uint32_t n, uint32_t c, const float *acc) {
    std::vector<float> &done = scratch<float>(kRowSums);
    done.resize(size_t{os.h} * os.w);
    if (kind == KILN_POOL_AVG) {
      for (uint32_t oy = 0, i = 0; oy < os.h; ++oy)
        for (uint32_t ox = 0; ox < os.w; ++ox, ++i) {
          const uint32_t divisor = poolDivisor(cmd, rows[oy] * cols[ox]);
          done[i] = divisor ? acc[i] / float(divisor) : 0.0f;
        }
      acc = done.data();
    }
    if (direct) {
      finishRun(reinterpret_cast<float *>(out.planeAt(n, c)), acc, os.h * os.w, nullptr,
                relu_after);
      return;
    }
    finishRun(done.data(), acc, os.h * os.w, nullptr, relu_after);
    out.setRun(n, c, 0, os.h * os.w, done.data());
  };
  const Planes<float> x = planesOf(in, kInput);
  auto run = [&](auto step) {
    forEachWindowChannel(cmd, x, identity, identity, [&](uint32_t) { return step; }, finish);
  };
  switch (kind) {
  case KILN_POOL_MAX: return run([](V &acc, const V &v, size_t) { acc = v > acc ? v : acc; });
  case KILN_POOL_MIN: return run([](V &acc, const V &v, size_t) { acc = v < acc ? v : acc; });
  default: return run([](V &acc, const V &v, size_t) { acc += v; }); // AVG, SUM
  }
}

// Max/min pick a q (the output shares the input's quantization); sum and avg
// add q - zp_in0 and requantize, avg after dividing by the count (rounded
// half away from zero).
void poolI8(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<I8> in(lmem, cmd.in0), out(lmem, cmd.out);
  const Quant q(cmd);
  const uint16_t kind = cmd.subop;
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t oy, uint32_t ox) {
    int32_t best = kind == KILN_POOL_MAX ? -128 : 127;
    int64_t sum = 0;
    uint32_t valid = forEachPoolTap(cmd, oy, ox, [&](uint32_t iy, uint32_t ix) {
      int32_t v = in.get(n, c, iy, ix);
      best = kind == KILN_POOL_MAX ? (v > best ? v : best) : (v < best ? v : best);
      sum += v - q.zp_in0;
    });
    int32_t result;
    if (kind == KILN_POOL_MAX || kind == KILN_POOL_MIN)
      result = q.finish(best);
    else if (kind == KILN_POOL_SUM)
      result = q.requant(sum, q.m0);
    else // KILN_POOL_AVG
      result = q.requant(kiln_div_round(kiln_mul_sat_i64(sum, q.m0), poolDivisor(cmd, valid)), 1);
    out.set(n, c, oy, ox, result);
  });
}

// ---- eltwise and active ---------------------------------------------------------

// dst[i] = f(a[i], b[i]), then ReLU if asked (dst may be a): one loop per
// kind (as activeRow).
template <class F>
void zipRow(float *dst, const float *a, const float *b, uint32_t count, bool relu_after, F f) {
  if (relu_after)
    for (uint32_t i = 0; i < count; ++i)
      dst[i] = relu(f(a[i], b[i]));
  else
    for (uint32_t i = 0; i < count; ++i)
      dst[i] = f(a[i], b[i]);
}

KILN_HOT_LOOP void eltwiseRow(uint16_t subop, float *dst, const float *a, const float *b,
                              uint32_t n, bool relu_after) {
  auto zip = [&](auto f) { zipRow(dst, a, b, n, relu_after, f); };
  switch (subop) {
  case KILN_ELT_ADD: return zip([](float x, float y) { return x + y; });
  case KILN_ELT_SUB: return zip([](float x, float y) { return x - y; });
  case KILN_ELT_MUL: return zip([](float x, float y) { return x * y; });
  case KILN_ELT_MAX: return zip([](float x, float y) { return x > y ? x : y; });
  case KILN_ELT_MIN: return zip([](float x, float y) { return x < y ? x : y; });
  case KILN_ELT_DIV: return zip([](float x, float y) { return x / y; });
  case KILN_ELT_POW: return zip([](float x, float y) { return std::pow(x, y); });
  default: return zip([](float x, float y) { return x >= 0.0f ? x : x * y; }); // PRELU, y the slope
  }
}

// F32 planes of an output and its input `a` that can be computed in place,
// plane by plane and in parallel, with the same results as row by row: a is
// the output itself or lies apart from it, and so does every other input.
bool samePlanes(const kiln_tiu_operand &x, const kiln_tiu_operand &out) {
  return x.n == out.n && x.c == out.c && x.h == out.h && x.w == out.w;
}

template <class E>
bool planewise(const Operand<E> &out, const Operand<E> &a, const Operand<E> *others, size_t count) {
  if (!out.inPlace() || !a.inPlace() || !samePlanes(a.shape(), out.shape()) ||
      !(a.sameAs(out) || !mayOverlap(a, out)))
    return false;
  for (size_t i = 0; i < count; ++i)
    if (!others[i].inPlace() || !samePlanes(others[i].shape(), out.shape()) ||
        mayOverlap(others[i], out))
      return false;
  return true;
}

// Runs f(dst, src, count, n, c) on each output plane dst and a's plane src
// (the same plane when a is the output), planes split over the threads.
void forEachPlanePair(
    const kiln_tiu_operand &os, Operand<F32> &out, const Operand<F32> &a,
    const std::function<void(float *, const float *, uint32_t, uint32_t, uint32_t)> &f) {
  const uint32_t count = uint32_t(os.h) * os.w;
  const size_t planes = size_t{os.n} * os.c;
  const size_t chunks = std::min<size_t>(planes, size_t{count} * planes >= 16384 ? 4 * cmodelThreads() : 1);
  parallelFor(chunks, [&](size_t chunk) {
    for (size_t i = chunk * planes / chunks; i < (chunk + 1) * planes / chunks; ++i) {
      const uint32_t n = uint32_t(i / os.c), c = uint32_t(i % os.c);
      f(reinterpret_cast<float *>(out.planeAt(n, c)),
        reinterpret_cast<const float *>(a.planeAt(n, c)), count, n, c);
    }
  });
}

// Row by row: each output row is computed from its input rows read first.
template <class E>
void eltwise(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<E> a(lmem, cmd.in0), b(lmem, cmd.in1), out(lmem, cmd.out);
  if constexpr (std::is_same_v<E, F32>) {
    if (planewise(out, a, &b, 1)) {
      forEachPlanePair(cmd.out, out, a,
                       [&](float *dst, const float *src, uint32_t count, uint32_t n, uint32_t c) {
                         eltwiseRow(cmd.subop, dst, src,
                                    reinterpret_cast<const float *>(b.planeAt(n, c)), count,
                                    cmd.flags & KILN_TIU_FLAG_RELU);
                       });
      return;
    }
  }
  const uint32_t width = cmd.out.w;
  std::vector<float> ra(width), rb(width);
  forEachRow(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h) {
    a.getRow(n, c, h, width, ra.data());
    b.getRow(n, c, h, width, rb.data());
    eltwiseRow(cmd.subop, ra.data(), ra.data(), rb.data(), width, cmd.flags & KILN_TIU_FLAG_RELU);
    out.setRow(n, c, h, ra.data());
  });
}

// Each input is rescaled to a common integer scale ((q - zp) * m), combined,
// and the result requantized; mul multiplies the centred values and then
// scales by m0. DIV, POW and PRELU never get here (cmd_check.h).
int64_t eltwiseI8Op(uint16_t subop, const Quant &q, int32_t a, int32_t b) {
  const int64_t x = int64_t{a - q.zp_in0}, y = int64_t{b - q.zp_in1};
  switch (subop) {
  case KILN_ELT_ADD: return x * q.m0 + y * q.m1;
  case KILN_ELT_SUB: return x * q.m0 - y * q.m1;
  case KILN_ELT_MAX: return x * q.m0 > y * q.m1 ? x * q.m0 : y * q.m1;
  case KILN_ELT_MIN: return x * q.m0 < y * q.m1 ? x * q.m0 : y * q.m1;
  default: return x * y * q.m0; // KILN_ELT_MUL
  }
}

void eltwiseI8(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<I8> a(lmem, cmd.in0), b(lmem, cmd.in1), out(lmem, cmd.out);
  const Quant q(cmd);
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    int64_t v = eltwiseI8Op(cmd.subop, q, a.broadcastGet(n, c, h, w), b.broadcastGet(n, c, h, w));
    out.set(n, c, h, w, q.requant(v, 1));
  });
}

// exp(x) - 1 through expm1, which keeps its precision near 0.
float eluOf(float x, float alpha) { return x > 0.0f ? x : alpha * std::expm1(x); }

// The functions of kiln_active_kind; a and b are param[0] and param[1].
// dst[i] = f(src[i]), then ReLU if asked (dst may be src): one loop per
// function, so the cheap ones vectorize (the same operations on every
// element as one at a time).
template <class F>
void mapRow(float *dst, const float *src, uint32_t count, bool relu_after, F f) {
  if (relu_after)
    for (uint32_t i = 0; i < count; ++i)
      dst[i] = relu(f(src[i]));
  else
    for (uint32_t i = 0; i < count; ++i)
      dst[i] = f(src[i]);
}

KILN_HOT_LOOP void activeRow(uint16_t kind, float *dst, const float *src, uint32_t n, float a,
                             float b, bool relu_after) {
  auto map = [&](auto f) { mapRow(dst, src, n, relu_after, f); };
  switch (kind) {
  case KILN_ACT_RELU: return map([](float x) { return relu(x); });
  case KILN_ACT_LEAKY_RELU: return map([a](float x) { return x >= 0.0f ? x : a * x; });
  case KILN_ACT_SIGMOID: return map([](float x) { return 1.0f / (1.0f + std::exp(-x)); });
  case KILN_ACT_TANH: return map([](float x) { return std::tanh(x); });
  case KILN_ACT_EXP: return map([](float x) { return std::exp(x); });
  case KILN_ACT_LOG: return map([](float x) { return std::log(x); });
  case KILN_ACT_SQRT: return map([](float x) { return std::sqrt(x); });
  case KILN_ACT_RSQRT: return map([](float x) { return 1.0f / std::sqrt(x); });
  case KILN_ACT_RECIPROCAL: return map([](float x) { return 1.0f / x; });
  case KILN_ACT_ABS: return map([](float x) { return std::fabs(x); });
  case KILN_ACT_NEG: return map([](float x) { return -x; });
  case KILN_ACT_ERF: return map([](float x) { return std::erf(x); });
  case KILN_ACT_ELU: return map([a](float x) { return eluOf(x, a); });
  case KILN_ACT_SELU: return map([a, b](float x) { return b * eluOf(x, a); });
  // log(1 + exp(x)) without overflow: exp only ever sees -|x|.
  case KILN_ACT_SOFTPLUS:
    return map([](float x) { return std::log1p(std::exp(-std::fabs(x))) + relu(x); });
  case KILN_ACT_HARD_SIGMOID:
    return map([a, b](float x) { return clamp(a * x + b, 0.0f, 1.0f); });
  case KILN_ACT_HARD_SWISH:
    return map([](float x) { return x * clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); });
  case KILN_ACT_CLIP: return map([a, b](float x) { return clamp(x, a, b); });
  case KILN_ACT_SQUARE: return map([](float x) { return x * x; });
  case KILN_ACT_GELU:
    return map([](float x) { return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f))); });
  case KILN_ACT_SILU: return map([](float x) { return x / (1.0f + std::exp(-x)); });
  case KILN_ACT_MISH:
    return map([](float x) {
      return x * std::tanh(std::log1p(std::exp(-std::fabs(x))) + relu(x));
    });
  default: return map([a, b](float x) { return a * x + b; }); // KILN_ACT_SCALE
  }
}

template <class E>
void active(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<E> in(lmem, cmd.in0), out(lmem, cmd.out);
  const uint32_t width = cmd.out.w;
  const bool relu_after = cmd.flags & KILN_TIU_FLAG_RELU;
  if constexpr (std::is_same_v<E, F32>) {
    if (planewise<F32>(out, in, nullptr, 0)) {
      forEachPlanePair(cmd.out, out, in,
                       [&](float *dst, const float *src, uint32_t count, uint32_t, uint32_t) {
                         activeRow(cmd.subop, dst, src, count, cmd.param[0], cmd.param[1],
                                   relu_after);
                       });
      return;
    }
  }
  std::vector<float> row(width);
  forEachRow(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h) {
    in.getRow(n, c, h, width, row.data());
    activeRow(cmd.subop, row.data(), row.data(), width, cmd.param[0], cmd.param[1], relu_after);
    out.setRow(n, c, h, row.data());
  });
}

// INT8: the compiler tabulated the function for every q; the table in1
// [1, 1, 1, 256] is read at (uint8)q.
void activeI8(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<I8> in(lmem, cmd.in0), table(lmem, cmd.in1), out(lmem, cmd.out);
  const Quant q(cmd);
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    out.set(n, c, h, w, q.finish(table.get(0, 0, 0, uint8_t(in.get(n, c, h, w)))));
  });
}

// ---- resize ----------------------------------------------------------------------

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
// Nearest with an EXACT axis (commands.h): the source coordinate is the
// fraction num / den of the integer lengths, so a tie is a tie.
uint32_t exactNearest(uint32_t subop, uint32_t o, uint32_t in, uint32_t out) {
  int64_t num, den;
  switch (kiln_resize_coord_of(subop)) {
  case KILN_COORD_ASYMMETRIC: num = int64_t(o) * in, den = out; break;
  case KILN_COORD_ALIGN_CORNERS:
    num = out > 1 ? int64_t(o) * (in - 1) : 0, den = out > 1 ? out - 1 : 1;
    break;
  case KILN_COORD_PYTORCH_HALF_PIXEL:
    if (out <= 1) {
      num = 0, den = 1;
      break;
    }
    [[fallthrough]];
  default: // (o + 0.5) * in / out - 0.5
    num = (2 * int64_t(o) + 1) * in - out, den = 2 * int64_t(out);
    break;
  }
  int64_t f = num / den, rem = num % den;
  if (rem < 0)
    f -= 1, rem += den; // floor division
  bool up;
  switch (kiln_resize_nearest_of(subop)) {
  case KILN_NEAREST_ROUND_PREFER_CEIL: up = 2 * rem >= den; break;
  case KILN_NEAREST_FLOOR: up = false; break;
  case KILN_NEAREST_CEIL: up = rem > 0; break;
  default: up = 2 * rem > den; break; // KILN_NEAREST_ROUND_PREFER_FLOOR
  }
  const int64_t pick = f + (up ? 1 : 0);
  return uint32_t(pick < 0 ? 0 : pick > int64_t(in) - 1 ? int64_t(in) - 1 : pick);
}

ResizeTap resizeTap(uint32_t subop, uint32_t o, float scale, uint32_t in, uint32_t out,
                    bool exact) {
  if (exact && kiln_resize_mode_of(subop) == KILN_RESIZE_NEAREST) {
    const uint32_t i = exactNearest(subop, o, in, out);
    return {i, i, 0.0f};
  }
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

// W is always whole; H may be a slice (commands.h: aux = full input height,
// full output height, first output row, first input row; all 0 = whole).
// finish turns the f32 result into what E stores.
template <class E, class Finish>
const char *resize(const kiln_tiu_cmd &cmd, Lmem lmem, Finish finish) {
  const bool slice = cmd.aux[0] != 0;
  const uint32_t in_h = slice ? cmd.aux[0] : cmd.in0.h, out_h = slice ? cmd.aux[1] : cmd.out.h;
  std::vector<ResizeTap> rows, cols;
  if (!resizeAxisTaps(cmd.subop, cmd.param[0], cmd.subop & KILN_RESIZE_EXACT_H, in_h, out_h,
                cmd.aux[3], cmd.in0.h, cmd.aux[2], cmd.out.h, &rows) ||
      !resizeAxisTaps(cmd.subop, cmd.param[1], cmd.subop & KILN_RESIZE_EXACT_W, cmd.in0.w,
                cmd.out.w, 0, cmd.in0.w, 0, cmd.out.w, &cols))
    return "resize reads input rows outside its window";

  Operand<E> in(lmem, cmd.in0), out(lmem, cmd.out);
  const bool linear = kiln_resize_mode_of(cmd.subop) == KILN_RESIZE_LINEAR;
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t oy, uint32_t ox) {
    const ResizeTap &r = rows[oy], &k = cols[ox];
    float v;
    if (linear) { // along W within each source row, then along H, as ONNX and PyTorch
      auto at = [&](uint32_t y, uint32_t x) { return float(in.get(n, c, y, x)); };
      float top = (1.0f - k.l) * at(r.i0, k.i0) + k.l * at(r.i0, k.i1);
      float bottom = (1.0f - k.l) * at(r.i1, k.i0) + k.l * at(r.i1, k.i1);
      v = (1.0f - r.l) * top + r.l * bottom;
    } else {
      v = float(in.get(n, c, r.i0, k.i0));
    }
    out.set(n, c, oy, ox, finish(v));
  });
  return nullptr;
}

template <class E>
const char *resize(const kiln_tiu_cmd &cmd, Lmem lmem) {
  return resize<E>(cmd, lmem, [&](float v) { return applyFlags(cmd, v); });
}

// INT8 shares one quantization between in and out: nearest copies q, linear
// rounds its blend of q half away from zero (no RELU, cmd_check.h).
const char *resizeI8(const kiln_tiu_cmd &cmd, Lmem lmem) {
  return resize<I8>(cmd, lmem, [](float v) { return int32_t(kiln_sat_i8(int64_t(std::round(v)))); });
}

// ---- cast --------------------------------------------------------------------------

// float -> float: loads exactly, stores rounded to nearest even.
template <class In, class Out>
void castFloat(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<In> in(lmem, cmd.in0);
  Operand<Out> out(lmem, cmd.out);
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    out.set(n, c, h, w, applyFlags(cmd, in.get(n, c, h, w)));
  });
}

// float -> INT8 with the output's scale param[0] and zp_out (ONNX QuantizeLinear).
template <class In>
void quantize(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<In> in(lmem, cmd.in0);
  Operand<I8> out(lmem, cmd.out);
  const Quant q(cmd);
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    out.set(n, c, h, w, q.finish(kiln_quantize_f32(in.get(n, c, h, w), cmd.param[0], q.zp_out)));
  });
}

// INT8 -> float with the input's scale param[0] and zp_in0, in f32, then
// stored in out's dtype.
template <class Out>
void dequantize(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<I8> in(lmem, cmd.in0);
  Operand<Out> out(lmem, cmd.out);
  const Quant q(cmd);
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    float v = kiln_dequantize_i8(in.get(n, c, h, w), cmd.param[0], q.zp_in0);
    out.set(n, c, h, w, applyFlags(cmd, v));
  });
}

void requantize(const kiln_tiu_cmd &cmd, Lmem lmem) {
  Operand<I8> in(lmem, cmd.in0), out(lmem, cmd.out);
  const Quant q(cmd);
  forEachElement(cmd.out, [&](uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    out.set(n, c, h, w, q.requant(in.get(n, c, h, w) - q.zp_in0, q.m0));
  });
}

// Calls f with the codec of a float dtype (F32, F16 or BF16).
template <class F>
void withFloatCodec(uint32_t dtype, F f) {
  switch (dtype) {
  case KILN_DTYPE_F16: f(F16{}); break;
  case KILN_DTYPE_BF16: f(BF16{}); break;
  default: f(F32{}); break; // KILN_DTYPE_F32
  }
}

void cast(const kiln_tiu_cmd &cmd, Lmem lmem) {
  const bool from_i8 = cmd.in0.dtype == KILN_DTYPE_INT8, to_i8 = cmd.out.dtype == KILN_DTYPE_INT8;
  if (from_i8 && to_i8)
    requantize(cmd, lmem);
  else if (from_i8)
    withFloatCodec(cmd.out.dtype, [&](auto out) { dequantize<decltype(out)>(cmd, lmem); });
  else if (to_i8)
    withFloatCodec(cmd.in0.dtype, [&](auto in) { quantize<decltype(in)>(cmd, lmem); });
  else
    withFloatCodec(cmd.in0.dtype, [&](auto in) {
      withFloatCodec(cmd.out.dtype,
                     [&](auto out) { castFloat<decltype(in), decltype(out)>(cmd, lmem); });
    });
}

// ---- dispatch ----------------------------------------------------------------------

// A conv's bias is E, or F32 in a narrower float record.
template <class E>
const char *runFloat(const kiln_tiu_cmd &cmd, Lmem lmem, Kernels kernels) {
  const bool f32_bias = cmd.in2.dtype == KILN_DTYPE_F32;
  const bool fast = kernels == Kernels::Fast;
  switch (cmd.op) {
  case KILN_TIU_CONV:
    if (fast)
      f32_bias ? convFast<E, F32>(cmd, lmem) : convFast<E, E>(cmd, lmem);
    else
      f32_bias ? conv<E, F32>(cmd, lmem) : conv<E, E>(cmd, lmem);
    break;
  case KILN_TIU_DECONV:
    if (fast)
      f32_bias ? deconvFast<E, F32>(cmd, lmem) : deconvFast<E, E>(cmd, lmem);
    else
      f32_bias ? deconv<E, F32>(cmd, lmem) : deconv<E, E>(cmd, lmem);
    break;
  case KILN_TIU_POOL: fast ? poolFast<E>(cmd, lmem) : pool<E>(cmd, lmem); break;
  case KILN_TIU_ELTWISE: eltwise<E>(cmd, lmem); break;
  case KILN_TIU_RESIZE: return resize<E>(cmd, lmem);
  default: active<E>(cmd, lmem); break; // KILN_TIU_ACTIVE
  }
  return nullptr;
}

const char *runInt8(const kiln_tiu_cmd &cmd, Lmem lmem, Kernels kernels) {
  const bool fast = kernels == Kernels::Fast;
  switch (cmd.op) {
  case KILN_TIU_CONV: return fast ? convI8Fast(cmd, lmem) : convI8(cmd, lmem);
  case KILN_TIU_DECONV: return fast ? deconvI8Fast(cmd, lmem) : deconvI8(cmd, lmem);
  case KILN_TIU_POOL: poolI8(cmd, lmem); break;
  case KILN_TIU_ELTWISE: eltwiseI8(cmd, lmem); break;
  case KILN_TIU_RESIZE: return resizeI8(cmd, lmem);
  default: activeI8(cmd, lmem); break; // KILN_TIU_ACTIVE
  }
  return nullptr;
}

} // namespace

// The record checks decide every dtype question: past them, a record is a
// CAST, an INT8 record or a float record of one codec (commands.h).
const char *runTiuRecord(const kiln_tiu_cmd &cmd, uint8_t *lmem, uint64_t lane_bytes,
                         Kernels kernels) {
  switch (kiln_tiu_cmd_check_in_lane(&cmd, lane_bytes)) {
  case KILN_OK: break;
  case KILN_ERR_OUT_OF_RANGE: return "TIU operand outside LMEM";
  default: return "malformed TIU record";
  }
  const Lmem m{lmem, lane_bytes};
  if (cmd.op == KILN_TIU_CAST) {
    cast(cmd, m);
    return nullptr;
  }
  if (cmd.out.dtype == KILN_DTYPE_INT8)
    return runInt8(cmd, m, kernels);
  const char *why = nullptr;
  withFloatCodec(cmd.out.dtype, [&](auto e) { why = runFloat<decltype(e)>(cmd, m, kernels); });
  return why;
}

const char *runTiu(const kiln_tiu_cmd &cmd, uint8_t *lmem) {
  return runTiuRecord(cmd, lmem, KILN_LMEM_BYTES_PER_LANE);
}

bool resizeAxisTaps(uint32_t subop, float scale, bool exact, uint32_t in_full, uint32_t out_full,
                    uint32_t in_first, uint32_t in_len, uint32_t out_first, uint32_t out_len,
                    std::vector<ResizeTap> *taps) {
  taps->clear();
  for (uint32_t o = 0; o < out_len; ++o) {
    ResizeTap t = resizeTap(subop, out_first + o, scale, in_full, out_full, exact);
    if (t.i0 < in_first || t.i1 - in_first >= in_len) // i1 >= i0
      return false;
    taps->push_back({t.i0 - in_first, t.i1 - in_first, t.l});
  }
  return true;
}

} // namespace kiln::chip
