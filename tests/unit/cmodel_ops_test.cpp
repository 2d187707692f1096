// The cmodel's newer TIU ops (deconv, resize, pool sum/min, eltwise div/pow/
// prelu, every ACTIVE kind) and GDMA fills and stride-0 broadcasts, each
// against a naive reference written differently from the kernel; the record
// checks (cmd_check.h, shared with the runtime verifier) and the cost model
// for them, by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

#include "cmodel_harness.h"
#include "kiln/abi/cmd_check.h"
#include "kiln/abi/cost.h"

namespace kiln::test {
namespace {

using cmodel::Device;

size_t idx(const Shape &s, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
  return ((size_t{n} * s.c + c) * s.h + h) * s.w + w;
}

// NaN matches NaN, an infinity the same infinity, anything else within a
// relative 1e-5 plus `slack` (and a tiny absolute slack for underflow).
void expectMatches(float got, double want, double slack, const std::string &what) {
  const float want_f = float(want);
  if (std::isnan(want_f)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got;
  } else if (std::isinf(want_f)) {
    EXPECT_EQ(got, want_f) << what;
  } else {
    EXPECT_NEAR(got, want, 1e-5 * std::fabs(want) + slack + 1e-30) << what;
  }
}

void expectClose(const std::vector<float> &got, const std::vector<double> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5 * (1.0 + std::fabs(want[i]))) << "element " << i;
}

// ---- ACTIVE ----------------------------------------------------------------------

struct ActiveCase {
  kiln_active_kind kind;
  float a, b;
  std::function<double(double x, double a, double b)> ref; // in double, other formulas
  // Extra tolerance per |x|: f32 gelu's 1 + erf(x / sqrt(2)) cancels for
  // negative x, as in PyTorch's formula, which the kernel keeps.
  double slack_per_x = 0;
};

double hardClip(double v) { return std::min(1.0, std::max(0.0, v)); }

const std::vector<ActiveCase> &activeCases() {
  static const std::vector<ActiveCase> cases = {
      {KILN_ACT_RELU, 0, 0, [](double x, double, double) { return x > 0 ? x : 0.0; }},
      {KILN_ACT_LEAKY_RELU, 0.1f, 0, [](double x, double a, double) { return std::max(x, a * x); }},
      {KILN_ACT_SIGMOID, 0, 0,
       [](double x, double, double) { return 0.5 * (1 + std::tanh(x / 2)); }},
      {KILN_ACT_TANH, 0, 0,
       [](double x, double, double) {
         return x > 20 ? 1.0 : std::expm1(2 * x) / (std::exp(2 * x) + 1);
       }},
      {KILN_ACT_EXP, 0, 0, [](double x, double, double) { return std::pow(M_E, x); }},
      {KILN_ACT_LOG, 0, 0, [](double x, double, double) { return std::log2(x) / std::log2(M_E); }},
      {KILN_ACT_SQRT, 0, 0, [](double x, double, double) { return std::sqrt(x); }},
      {KILN_ACT_RSQRT, 0, 0,
       [](double x, double, double) { return x == 0 ? INFINITY : std::pow(x, -0.5); }},
      {KILN_ACT_RECIPROCAL, 0, 0, [](double x, double, double) { return std::pow(x, -1.0); }},
      {KILN_ACT_ABS, 0, 0, [](double x, double, double) { return x < 0 ? -x : x; }},
      {KILN_ACT_NEG, 0, 0, [](double x, double, double) { return 0.0 - x; }},
      {KILN_ACT_ERF, 0, 0, [](double x, double, double) { return 1 - std::erfc(x); }},
      {KILN_ACT_ELU, 0.7f, 0,
       [](double x, double a, double) { return x > 0 ? x : a * (std::exp(x) - 1); }},
      {KILN_ACT_SELU, 1.6732632f, 1.050701f,
       [](double x, double a, double b) { return x > 0 ? b * x : b * a * (std::exp(x) - 1); }},
      {KILN_ACT_SOFTPLUS, 0, 0, [](double x, double, double) { return std::log(1 + std::exp(x)); }},
      {KILN_ACT_HARD_SIGMOID, 0.2f, 0.5f,
       [](double x, double a, double b) { return hardClip(a * x + b); }},
      {KILN_ACT_HARD_SWISH, 0, 0,
       [](double x, double, double) { return x * hardClip((x + 3) / 6); }},
      {KILN_ACT_CLIP, -1.5f, 2.0f,
       [](double x, double a, double b) { return x < a ? a : (x > b ? b : x); }},
      {KILN_ACT_SQUARE, 0, 0, [](double x, double, double) { return std::pow(x, 2.0); }},
      {KILN_ACT_GELU, 0, 0,
       [](double x, double, double) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); }, 2e-7},
      {KILN_ACT_SCALE, -2.5f, 0.75f, [](double x, double a, double b) { return b + x * a; }},
      {KILN_ACT_SILU, 0, 0, [](double x, double, double) { return x / (1 + std::exp(-x)); }},
      {KILN_ACT_MISH, 0, 0,
       [](double x, double, double) { return x * std::tanh(std::log(1 + std::exp(x))); }},
  };
  return cases;
}

// Runs ACTIVE `kind` over `points` ([1, 1, 1, N]) on a fresh device.
std::vector<float> runActive(kiln_active_kind kind, float a, float b,
                             const std::vector<float> &points, uint32_t flags = 0) {
  Device dev(kDeviceDdrBytes);
  const Shape s{1, 1, 1, uint32_t(points.size())};
  putLmem(dev, 0, s, points);
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ACTIVE, uint16_t(kind));
  cmd.in0 = lmemOperand(0, s);
  cmd.out = lmemOperand(4096, s);
  cmd.param[0] = a, cmd.param[1] = b;
  cmd.flags = flags;
  EXPECT_EQ(runQueues(dev, {cmd}, {}), KILN_OK) << dev.faultReason();
  return getLmem(dev, 4096, s);
}

TEST(ActiveOps, EveryKindMatchesReference) {
  ASSERT_EQ(activeCases().size(), size_t{KILN_ACT_END}); // a case for every kind
  const std::vector<float> points = {-100.0f, -20.0f, -3.5f, -1.0f, -0.5f, -1e-3f, 0.0f,
                                     1e-3f,   0.5f,   1.0f,  2.5f,  3.0f,  6.0f,  20.0f,
                                     88.0f,   100.0f};
  for (const ActiveCase &k : activeCases()) {
    auto got = runActive(k.kind, k.a, k.b, points);
    for (size_t i = 0; i < points.size(); ++i)
      expectMatches(got[i], k.ref(points[i], k.a, k.b), k.slack_per_x * std::fabs(points[i]),
                    "kind " + std::to_string(k.kind) + " at " + std::to_string(points[i]));
  }
}

TEST(ActiveOps, NumericallySafeForms) {
  // softplus never overflows: exp only sees -|x|.
  auto soft = runActive(KILN_ACT_SOFTPLUS, 0, 0, {200.0f, 1000.0f, -1000.0f});
  EXPECT_EQ(soft[0], 200.0f);
  EXPECT_EQ(soft[1], 1000.0f);
  EXPECT_EQ(soft[2], 0.0f);
  auto sig = runActive(KILN_ACT_SIGMOID, 0, 0, {-1000.0f, 1000.0f});
  EXPECT_EQ(sig[0], 0.0f);
  EXPECT_EQ(sig[1], 1.0f);
  // NaN goes through the clamping kinds rather than being clamped away.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(runActive(KILN_ACT_CLIP, -1, 1, {nan})[0]));
  EXPECT_TRUE(std::isnan(runActive(KILN_ACT_HARD_SIGMOID, 0.2f, 0.5f, {nan})[0]));
  // The RELU flag applies after the function.
  auto scaled = runActive(KILN_ACT_SCALE, -2.0f, 1.0f, {-1.0f, 1.0f}, KILN_TIU_FLAG_RELU);
  EXPECT_EQ(scaled, (std::vector<float>{3.0f, 0.0f}));
}

// ---- ELTWISE div, pow, prelu ---------------------------------------------------

struct BinaryCase {
  kiln_eltwise_kind kind;
  Shape a, b; // each broadcasts to the output
  bool b_const;
};

double binaryRef(kiln_eltwise_kind kind, double a, double b) {
  switch (kind) {
  case KILN_ELT_DIV: return a * (1.0 / b);
  case KILN_ELT_POW: return std::exp(b * std::log(a)); // a > 0 here
  default: return a < 0 ? b * a : a;                   // PRELU
  }
}

class BinaryOpsTest : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(BinaryOpsTest, BroadcastsLikeNumpy) {
  const BinaryCase &p = GetParam();
  const Shape os{2, 70, 3, 5};
  auto a = randomFloats(p.a.count(), 41), b = randomFloats(p.b.count(), 42);
  if (p.kind == KILN_ELT_POW) // positive bases, exponents in [-2, 2)
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = std::fabs(a[i]) * 3.0f + 0.1f;
  if (p.kind == KILN_ELT_POW)
    for (float &v : b)
      v *= 2.0f;
  if (p.kind == KILN_ELT_DIV) // divisors away from zero
    for (float &v : b)
      v = v < 0 ? v - 0.25f : v + 0.25f;
  const float b_scalar = -0.3f;

  Device dev(kDeviceDdrBytes);
  putLmem(dev, 0, p.a, a);
  putLmem(dev, 16 << 10, p.b, b);
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_ELTWISE, uint16_t(p.kind));
  cmd.out = lmemOperand(32 << 10, os);
  cmd.in0 = lmemOperand(0, p.a);
  cmd.in1 = p.b_const ? constOperand(b_scalar) : lmemOperand(16 << 10, p.b);
  ASSERT_EQ(runQueues(dev, {cmd}, {}), KILN_OK) << dev.faultReason();

  // Broadcasting through element strides of 0, rather than index clamping.
  auto strides = [](const Shape &s) {
    std::array<size_t, 4> st = {size_t{s.c} * s.h * s.w, size_t{s.h} * s.w, s.w, 1};
    const uint32_t dims[4] = {s.n, s.c, s.h, s.w};
    for (int d = 0; d < 4; ++d)
      if (dims[d] == 1)
        st[d] = 0;
    return st;
  };
  const auto sa = strides(p.a), sb = strides(p.b);
  std::vector<double> want(os.count());
  for (size_t i = 0; i < want.size(); ++i) {
    const size_t pos[4] = {i / (os.c * os.h * os.w), i / (os.h * os.w) % os.c, i / os.w % os.h,
                           i % os.w};
    size_t ia = 0, ib = 0;
    for (int d = 0; d < 4; ++d)
      ia += pos[d] * sa[d], ib += pos[d] * sb[d];
    want[i] = binaryRef(p.kind, a[ia], p.b_const ? b_scalar : b[ib]);
  }
  expectClose(getLmem(dev, 32 << 10, os), want);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, BinaryOpsTest,
    ::testing::Values(BinaryCase{KILN_ELT_DIV, {2, 70, 3, 5}, {2, 70, 3, 5}, false},
                      BinaryCase{KILN_ELT_DIV, {1, 70, 1, 5}, {2, 1, 3, 1}, false},
                      BinaryCase{KILN_ELT_POW, {2, 70, 3, 5}, {1, 70, 1, 1}, false},
                      BinaryCase{KILN_ELT_POW, {2, 1, 3, 5}, {1, 70, 3, 1}, false},
                      // per-channel and scalar slopes
                      BinaryCase{KILN_ELT_PRELU, {2, 70, 3, 5}, {1, 70, 1, 1}, false},
                      BinaryCase{KILN_ELT_PRELU, {2, 70, 3, 5}, {1, 1, 1, 1}, true}));

// ---- POOL sum and min --------------------------------------------------------------

struct PoolCase {
  kiln_pool_kind kind;
  uint32_t kh, kw, sh, sw, dh, dw, pt, pb, pl, pr;
};

uint32_t windowOut(uint32_t in, uint32_t p0, uint32_t p1, uint32_t k, uint32_t s, uint32_t d) {
  return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

class PoolOpsTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolOpsTest, MatchesNaiveReference) {
  const PoolCase &p = GetParam();
  const Shape is{2, 66, 7, 9};
  const Shape os{is.n, is.c, windowOut(is.h, p.pt, p.pb, p.kh, p.sh, p.dh),
                 windowOut(is.w, p.pl, p.pr, p.kw, p.sw, p.dw)};
  // Inputs in [1, 3): a zero pad would win a min, and would not change a sum.
  auto in = randomFloats(is.count(), 51);
  for (float &v : in)
    v += 2.0f;
  Device dev(kDeviceDdrBytes);
  putLmem(dev, 0, is, in);
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_POOL, uint16_t(p.kind));
  cmd.out = lmemOperand(100 << 10, os);
  cmd.in0 = lmemOperand(0, is);
  cmd.kh = uint16_t(p.kh), cmd.kw = uint16_t(p.kw);
  cmd.stride_h = uint16_t(p.sh), cmd.stride_w = uint16_t(p.sw);
  cmd.dil_h = uint16_t(p.dh), cmd.dil_w = uint16_t(p.dw);
  cmd.pad_top = uint16_t(p.pt), cmd.pad_bottom = uint16_t(p.pb);
  cmd.pad_left = uint16_t(p.pl), cmd.pad_right = uint16_t(p.pr);
  ASSERT_EQ(runQueues(dev, {cmd}, {}), KILN_OK) << dev.faultReason();

  // Gather each window's valid elements, then reduce them.
  std::vector<double> want(os.count());
  for (uint32_t n = 0; n < os.n; ++n)
    for (uint32_t c = 0; c < os.c; ++c)
      for (uint32_t y = 0; y < os.h; ++y)
        for (uint32_t x = 0; x < os.w; ++x) {
          std::vector<double> window;
          for (uint32_t ky = 0; ky < p.kh; ++ky)
            for (uint32_t kx = 0; kx < p.kw; ++kx) {
              int iy = int(y * p.sh + ky * p.dh) - int(p.pt);
              int ix = int(x * p.sw + kx * p.dw) - int(p.pl);
              if (iy >= 0 && ix >= 0 && iy < int(is.h) && ix < int(is.w))
                window.push_back(in[idx(is, n, c, iy, ix)]);
            }
          want[idx(os, n, c, y, x)] = p.kind == KILN_POOL_MIN
                                          ? *std::min_element(window.begin(), window.end())
                                          : std::accumulate(window.begin(), window.end(), 0.0);
        }
  expectClose(getLmem(dev, 100 << 10, os), want);
}

INSTANTIATE_TEST_SUITE_P(Kinds, PoolOpsTest,
                         ::testing::Values(PoolCase{KILN_POOL_SUM, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                                           PoolCase{KILN_POOL_MIN, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                                           PoolCase{KILN_POOL_SUM, 2, 3, 1, 2, 2, 1, 0, 1, 2, 0},
                                           PoolCase{KILN_POOL_MIN, 2, 3, 1, 2, 2, 1, 0, 1, 2, 0},
                                           PoolCase{KILN_POOL_SUM, 7, 9, 1, 1, 1, 1, 0, 0, 0, 0}));

// ---- DECONV ------------------------------------------------------------------------------

struct DeconvCase {
  Shape in;
  uint32_t oc, groups, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow;
  bool bias, relu;
};

// The textbook definition: insert stride - 1 zeros between input pixels, pad
// by dil * (k - 1) - pad at the start, and run a stride-1 conv with the
// kernel flipped in both directions. weight is [oc][ic/groups][kh][kw].
std::vector<double> referenceDeconv(const DeconvCase &p, const std::vector<float> &in,
                                    const std::vector<float> &weight,
                                    const std::vector<float> &bias) {
  const Shape zs{p.in.n, p.in.c, (p.in.h - 1) * p.sh + 1, (p.in.w - 1) * p.sw + 1};
  std::vector<double> z(zs.count(), 0.0);
  for (uint32_t n = 0; n < p.in.n; ++n)
    for (uint32_t c = 0; c < p.in.c; ++c)
      for (uint32_t y = 0; y < p.in.h; ++y)
        for (uint32_t x = 0; x < p.in.w; ++x)
          z[idx(zs, n, c, y * p.sh, x * p.sw)] = in[idx(p.in, n, c, y, x)];
  const int pad_y = int(p.dh * (p.kh - 1)) - int(p.pt), pad_x = int(p.dw * (p.kw - 1)) - int(p.pl);
  const uint32_t icg = p.in.c / p.groups, ocg = p.oc / p.groups;
  const Shape os{p.in.n, p.oc, p.oh, p.ow};
  std::vector<double> out(os.count());
  for (uint32_t n = 0; n < os.n; ++n)
    for (uint32_t o = 0; o < os.c; ++o)
      for (uint32_t y = 0; y < os.h; ++y)
        for (uint32_t x = 0; x < os.w; ++x) {
          double acc = p.bias ? bias[o] : 0.0;
          for (uint32_t i = 0; i < icg; ++i)
            for (uint32_t ky = 0; ky < p.kh; ++ky)
              for (uint32_t kx = 0; kx < p.kw; ++kx) {
                int zy = int(y + ky * p.dh) - pad_y, zx = int(x + kx * p.dw) - pad_x;
                if (zy < 0 || zx < 0 || zy >= int(zs.h) || zx >= int(zs.w))
                  continue;
                acc += z[idx(zs, n, o / ocg * icg + i, zy, zx)] *
                       weight[((size_t{o} * icg + i) * p.kh + (p.kh - 1 - ky)) * p.kw +
                              (p.kw - 1 - kx)];
              }
          out[idx(os, n, o, y, x)] = p.relu ? std::max(acc, 0.0) : acc;
        }
  return out;
}

kiln_tiu_cmd deconvCmd(const DeconvCase &p, uint32_t in_addr, uint32_t w_addr, uint32_t b_addr,
                       uint32_t out_addr) {
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_DECONV);
  cmd.in0 = lmemOperand(in_addr, p.in);
  cmd.in1 = lmemOperand(w_addr, {1, p.oc, p.in.c / p.groups, p.kh * p.kw});
  cmd.out = lmemOperand(out_addr, {p.in.n, p.oc, p.oh, p.ow});
  if (p.bias) {
    cmd.in2 = lmemOperand(b_addr, {1, p.oc, 1, 1});
    cmd.flags |= KILN_TIU_FLAG_HAS_BIAS;
  }
  if (p.relu)
    cmd.flags |= KILN_TIU_FLAG_RELU;
  cmd.kh = uint16_t(p.kh), cmd.kw = uint16_t(p.kw);
  cmd.stride_h = uint16_t(p.sh), cmd.stride_w = uint16_t(p.sw);
  cmd.dil_h = uint16_t(p.dh), cmd.dil_w = uint16_t(p.dw);
  cmd.pad_top = uint16_t(p.pt), cmd.pad_left = uint16_t(p.pl);
  cmd.groups = uint16_t(p.groups);
  return cmd;
}

class DeconvTest : public ::testing::TestWithParam<DeconvCase> {};

TEST_P(DeconvTest, MatchesZeroInsertionConv) {
  const DeconvCase &p = GetParam();
  const Shape ws{1, p.oc, p.in.c / p.groups, p.kh * p.kw}, bs{1, p.oc, 1, 1};
  const uint32_t in_addr = 0, w_addr = 32 << 10, b_addr = 64 << 10, out_addr = 96 << 10;
  auto in = randomFloats(p.in.count(), 61), weight = randomFloats(ws.count(), 62),
       bias = randomFloats(bs.count(), 63);
  Device dev(kDeviceDdrBytes);
  putLmem(dev, in_addr, p.in, in);
  putLmem(dev, w_addr, ws, weight);
  putLmem(dev, b_addr, bs, bias);
  ASSERT_EQ(runQueues(dev, {deconvCmd(p, in_addr, w_addr, b_addr, out_addr)}, {}), KILN_OK)
      << dev.faultReason();
  expectClose(getLmem(dev, out_addr, {p.in.n, p.oc, p.oh, p.ow}),
              referenceDeconv(p, in, weight, bias));
}

// ONNX's output size is (in - 1) * s + d * (k - 1) + 1 - pads + output_padding.
INSTANTIATE_TEST_SUITE_P(
    Shapes, DeconvTest,
    ::testing::Values(
        // grouped, strided, dilated, bias and relu; one column fewer than ONNX's 12
        DeconvCase{{2, 4, 5, 4}, 6, 2, 3, 2, 2, 3, 1, 2, 1, 0, 10, 11, true, true},
        // depthwise 2x upsample across the lane wrap
        DeconvCase{{1, 70, 4, 5}, 70, 70, 4, 4, 2, 2, 1, 1, 1, 1, 8, 10, true, false},
        // pointwise with more output channels than lanes
        DeconvCase{{1, 3, 3, 4}, 66, 1, 1, 1, 1, 1, 1, 1, 0, 0, 3, 4, false, false},
        // a slice's view: pads past the kernel, an output cropped on both sides
        DeconvCase{{1, 5, 6, 3}, 3, 1, 3, 3, 2, 1, 1, 1, 4, 3, 5, 2, true, false}));

// ---- RESIZE --------------------------------------------------------------------------------

// ONNX Resize, one axis, straight from the operator's text (f32 coordinates,
// as the chip computes them).
float onnxSourceCoord(uint32_t coord, uint32_t x_resized, float scale, uint32_t length_original,
                      uint32_t length_resized) {
  const float x = float(x_resized);
  if (coord == KILN_COORD_ASYMMETRIC)
    return x / scale;
  // The ONNX reference measures the resized length as length * scale, which
  // need not be the integer output length.
  if (coord == KILN_COORD_ALIGN_CORNERS) {
    const float resized = float(length_original) * scale;
    (void)length_resized;
    return resized > 1.0f ? x * float(length_original - 1) / (resized - 1.0f) : 0.0f;
  }
  if (coord == KILN_COORD_PYTORCH_HALF_PIXEL && length_resized <= 1)
    return 0.0f;
  return (x + 0.5f) / scale - 0.5f;
}

int64_t clampIndex(int64_t i, uint32_t len) { return std::clamp<int64_t>(i, 0, int64_t{len} - 1); }

// ONNX's neighbours of x are floor(x) and floor(x) + 1 on an edge-padded
// axis; ratio is the weight of the upper one.
struct Neighbours {
  int64_t lo, hi;
  double ratio;
};
Neighbours neighbours(float x, uint32_t len) {
  const double x_int = std::floor(double(x));
  return {clampIndex(int64_t(x_int), len), clampIndex(int64_t(x_int) + 1, len), x - x_int};
}

int64_t nearestIndex(float x, uint32_t nearest_mode, uint32_t len) {
  const Neighbours nb = neighbours(x, len);
  if (nb.ratio == 0.0)
    return nb.lo;
  bool upper = false;
  switch (nearest_mode) {
  case KILN_NEAREST_ROUND_PREFER_FLOOR: upper = nb.ratio > 0.5; break;
  case KILN_NEAREST_ROUND_PREFER_CEIL: upper = nb.ratio >= 0.5; break;
  case KILN_NEAREST_FLOOR: upper = false; break;
  default: upper = true; break; // ceil
  }
  return upper ? nb.hi : nb.lo;
}

struct ResizeCase {
  Shape in;
  uint32_t oh, ow;
  float scale_h, scale_w;
};

uint16_t resizeSubop(uint32_t mode, uint32_t coord, uint32_t nearest) {
  return uint16_t(mode | coord << 4 | nearest << 8);
}

std::vector<double> referenceResize(const ResizeCase &p, uint16_t subop,
                                    const std::vector<float> &in) {
  const uint32_t mode = subop & 0xf, coord = subop >> 4 & 0xf, nearest = subop >> 8 & 0xf;
  const Shape os{p.in.n, p.in.c, p.oh, p.ow};
  std::vector<double> out(os.count());
  for (uint32_t n = 0; n < os.n; ++n)
    for (uint32_t c = 0; c < os.c; ++c)
      for (uint32_t y = 0; y < os.h; ++y)
        for (uint32_t x = 0; x < os.w; ++x) {
          float sy = onnxSourceCoord(coord, y, p.scale_h, p.in.h, p.oh);
          float sx = onnxSourceCoord(coord, x, p.scale_w, p.in.w, p.ow);
          auto at = [&](int64_t iy, int64_t ix) { return double(in[idx(p.in, n, c, iy, ix)]); };
          if (mode == KILN_RESIZE_NEAREST) {
            out[idx(os, n, c, y, x)] =
                at(nearestIndex(sy, nearest, p.in.h), nearestIndex(sx, nearest, p.in.w));
            continue;
          }
          const Neighbours ny = neighbours(sy, p.in.h), nx = neighbours(sx, p.in.w);
          out[idx(os, n, c, y, x)] =
              (1 - ny.ratio) * (1 - nx.ratio) * at(ny.lo, nx.lo) +
              (1 - ny.ratio) * nx.ratio * at(ny.lo, nx.hi) +
              ny.ratio * (1 - nx.ratio) * at(ny.hi, nx.lo) + ny.ratio * nx.ratio * at(ny.hi, nx.hi);
        }
  return out;
}

// The input rows the slice of output rows [first, last) reads.
std::pair<uint32_t, uint32_t> rowsRead(const ResizeCase &p, uint16_t subop, uint32_t first,
                                       uint32_t last) {
  uint32_t lo = p.in.h, hi = 0;
  for (uint32_t y = first; y < last; ++y) {
    float sy = onnxSourceCoord(subop >> 4 & 0xf, y, p.scale_h, p.in.h, p.oh);
    uint32_t a, b;
    if ((subop & 0xf) == KILN_RESIZE_NEAREST) {
      a = b = uint32_t(nearestIndex(sy, subop >> 8 & 0xf, p.in.h));
    } else {
      const Neighbours nb = neighbours(std::clamp(sy, 0.0f, float(p.in.h - 1)), p.in.h);
      a = uint32_t(nb.lo);
      b = uint32_t(nb.ratio > 0 ? nb.hi : nb.lo);
    }
    lo = std::min(lo, a), hi = std::max(hi, b + 1);
  }
  return {lo, hi};
}

const std::vector<ResizeCase> kResizeCases = {
    {{1, 3, 4, 5}, 8, 10, 2.0f, 2.0f},    // 2x up
    {{2, 66, 4, 3}, 6, 7, 1.5f, 2.5f},    // non-integer scales, lanes wrap
    {{1, 2, 8, 6}, 4, 3, 0.5f, 0.5f},     // 2x down
    {{1, 2, 5, 7}, 3, 4, 0.6f, 4 / 7.0f}, // sizes given: scale = out / in
    {{1, 2, 4, 4}, 1, 9, 0.25f, 2.25f},   // one output row
};

constexpr uint32_t kResizeIn = 0, kResizeWhole = 64 << 10, kResizeSliced = 128 << 10;

kiln_tiu_cmd resizeCmd(const ResizeCase &p, uint16_t subop) {
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_RESIZE, subop);
  cmd.in0 = lmemOperand(kResizeIn, p.in);
  cmd.out = lmemOperand(kResizeWhole, {p.in.n, p.in.c, p.oh, p.ow});
  cmd.param[0] = p.scale_h, cmd.param[1] = p.scale_w;
  return cmd;
}

// Commands for output rows [first, last) reading only the input rows they
// need: both operands are windows of the whole tensors (plane_h).
kiln_tiu_cmd resizeSliceCmd(const ResizeCase &p, uint16_t subop, uint32_t id, uint32_t first,
                            uint32_t last) {
  const auto [lo, hi] = rowsRead(p, subop, first, last);
  kiln_tiu_cmd cmd = resizeCmd(p, subop);
  cmd.cmd_id = id;
  cmd.in0 = lmemOperand(kResizeIn + lo * p.in.w * 4, {p.in.n, p.in.c, hi - lo, p.in.w});
  cmd.in0.plane_h = uint16_t(p.in.h);
  cmd.out = lmemOperand(kResizeSliced + first * p.ow * 4, {p.in.n, p.in.c, last - first, p.ow});
  cmd.out.plane_h = uint16_t(p.oh);
  cmd.aux[0] = p.in.h, cmd.aux[1] = p.oh, cmd.aux[2] = first, cmd.aux[3] = lo;
  return cmd;
}

TEST(ResizeOps, EveryModeMatchesOnnxAndSlicesMatchTheWholeTensor) {
  for (const ResizeCase &p : kResizeCases)
    for (uint32_t mode : {KILN_RESIZE_NEAREST, KILN_RESIZE_LINEAR})
      for (uint32_t coord = 0; coord <= KILN_COORD_PYTORCH_HALF_PIXEL; ++coord)
        for (uint32_t nearest = 0; nearest <= KILN_NEAREST_CEIL; ++nearest) {
          const uint16_t subop = resizeSubop(mode, coord, nearest);
          SCOPED_TRACE("in " + std::to_string(p.in.h) + "x" + std::to_string(p.in.w) + " out " +
                       std::to_string(p.oh) + "x" + std::to_string(p.ow) + " mode " +
                       std::to_string(mode) + " coord " + std::to_string(coord) + " nearest " +
                       std::to_string(nearest));
          const Shape os{p.in.n, p.in.c, p.oh, p.ow};
          const auto in = randomFloats(p.in.count(), 71);
          Device dev(kDeviceDdrBytes);
          putLmem(dev, kResizeIn, p.in, in);

          // The whole tensor, then the same output in slices of 1, 2 and 3 rows.
          std::vector<kiln_tiu_cmd> tiu = {resizeCmd(p, subop)};
          for (uint32_t first = 0, rows = 1; first < p.oh; first += rows, rows = rows % 3 + 1)
            tiu.push_back(resizeSliceCmd(p, subop, uint32_t(tiu.size() + 1), first,
                                         std::min(first + rows, p.oh)));
          ASSERT_EQ(runQueues(dev, tiu, {}), KILN_OK) << dev.faultReason();

          const auto whole = getLmem(dev, kResizeWhole, os);
          const auto want = referenceResize(p, subop, in);
          if (mode == KILN_RESIZE_NEAREST) // a copy: exact
            EXPECT_EQ(whole, std::vector<float>(want.begin(), want.end()));
          else
            expectClose(whole, want);
          EXPECT_EQ(getLmem(dev, kResizeSliced, os), whole);
        }
}

TEST(ResizeOps, SliceWithoutTheRowsItReadsFaults) {
  const ResizeCase p = kResizeCases[0];
  const uint16_t subop = resizeSubop(KILN_RESIZE_LINEAR, KILN_COORD_HALF_PIXEL, 0);
  Device dev(kDeviceDdrBytes);
  putLmem(dev, kResizeIn, p.in, randomFloats(p.in.count(), 72));
  putLmem(dev, kResizeSliced, {1, 3, 8, 10}, std::vector<float>(240, 7.0f));
  kiln_tiu_cmd cmd = resizeSliceCmd(p, subop, 1, 2, 5);
  ASSERT_GT(cmd.in0.h, 1u);
  cmd.in0.h -= 1; // drop the last row it reads
  EXPECT_EQ(runQueues(dev, {cmd}, {}), KILN_ERR_DEVICE_FAULT);
  EXPECT_NE(dev.faultReason().find("outside its window"), std::string::npos) << dev.faultReason();
  EXPECT_EQ(getLmem(dev, kResizeSliced, {1, 3, 8, 10}), std::vector<float>(240, 7.0f));
}

// ---- GDMA: FILL and stride-0 sources -------------------------------------------------------

uint32_t bitsOf(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits;
}

TEST(GdmaOps, FillWritesThePatternAndReadsNothing) {
  Device dev(kDeviceDdrBytes);
  const Shape block{2, 3, 4, 5}, outer{2, 3, 6, 8}, lmem_full{1, 70, 6, 4};
  putDdr(dev, kWindowOffset, std::vector<float>(outer.count(), 1.0f));
  putLmem(dev, 0, lmem_full, std::vector<float>(lmem_full.count(), 1.0f));

  // Into a strided block of a DDR tensor; src_addr would be far outside the
  // window as an address.
  kiln_gdma_cmd ddr_fill = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_DDR, block, bitsOf(-2.5f), 0);
  ddr_fill.flags = KILN_GDMA_FLAG_FILL;
  denseStrides(outer, ddr_fill.dst_stride);
  ddr_fill.dst_addr = (1 * outer.w + 2) * 4; // from row 1, column 2
  std::fill(ddr_fill.src_stride, ddr_fill.src_stride + 4, 0xffffffffu);
  // Into rows 1..4 of an LMEM tensor (a window), from "LMEM".
  kiln_gdma_cmd lmem_fill = gdmaCmd(2, 0, KILN_GDMA_LMEM_TO_LMEM, {1, 70, 3, 4},
                                    bitsOf(0.5f), 1 * lmem_full.w * 4);
  lmem_fill.flags = KILN_GDMA_FLAG_FILL;
  lmem_fill.lmem_plane_h = lmem_full.h;
  ASSERT_EQ(runQueues(dev, {}, {ddr_fill, lmem_fill}), KILN_OK) << dev.faultReason();

  const auto ddr = getDdr(dev, kWindowOffset, outer.count());
  for (uint32_t n = 0; n < outer.n; ++n)
    for (uint32_t c = 0; c < outer.c; ++c)
      for (uint32_t h = 0; h < outer.h; ++h)
        for (uint32_t w = 0; w < outer.w; ++w) {
          bool inside = h >= 1 && h < 5 && w >= 2 && w < 7;
          ASSERT_EQ(ddr[idx(outer, n, c, h, w)], inside ? -2.5f : 1.0f) << n << c << h << w;
        }
  const auto lmem = getLmem(dev, 0, lmem_full);
  for (uint32_t c = 0; c < lmem_full.c; ++c)
    for (uint32_t h = 0; h < lmem_full.h; ++h)
      for (uint32_t w = 0; w < lmem_full.w; ++w)
        ASSERT_EQ(lmem[idx(lmem_full, 0, c, h, w)], h >= 1 && h < 4 ? 0.5f : 1.0f);
  EXPECT_EQ(dev.stats().ddr_read_bytes, 0u);
  EXPECT_EQ(dev.stats().ddr_write_bytes, block.count() * 4);
}

TEST(GdmaOps, FillOfANarrowDtypeWritesThePatternsLowBytes) {
  Device dev(kDeviceDdrBytes);
  std::memset(dev.ddr().data() + kWindowOffset, 0xee, 16);
  kiln_gdma_cmd fill = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_DDR, {1, 1, 1, 5}, 0x1234abcd, 0);
  fill.dtype = KILN_DTYPE_INT16;
  fill.flags = KILN_GDMA_FLAG_FILL;
  ASSERT_EQ(runQueues(dev, {}, {fill}), KILN_OK) << dev.faultReason();
  const uint8_t *d = dev.ddr().data() + kWindowOffset;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(d[2 * i], 0xcd);
    EXPECT_EQ(d[2 * i + 1], 0xab);
  }
  EXPECT_EQ(d[10], 0xee);
}

// Expand and tile: a source stride of 0 repeats an element along that
// dimension, in every direction that reads DDR, including along w.
TEST(GdmaOps, StrideZeroSourcesBroadcast) {
  Device dev(kDeviceDdrBytes);
  const Shape out{2, 70, 3, 4};
  const auto per_channel = randomFloats(out.c, 81); // [1, 70, 1, 1]
  const auto row = randomFloats(out.w, 82);         // [1, 1, 1, 4]
  const float scalar = 42.0f;
  const uint64_t chan_off = 0, row_off = 4096, scalar_off = 8192, tiled_off = 64 << 10,
                 scalar_out_off = 128 << 10, back_off = 192 << 10;
  putDdr(dev, kWindowOffset + chan_off, per_channel);
  putDdr(dev, kWindowOffset + row_off, row);
  putDdr(dev, kWindowOffset + scalar_off, {scalar});

  kiln_gdma_cmd expand = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, out, chan_off, 0);
  const uint32_t chan_strides[4] = {0, 1, 0, 0};
  std::copy(chan_strides, chan_strides + 4, expand.src_stride);
  kiln_gdma_cmd tile = gdmaCmd(2, 0, KILN_GDMA_DDR_TO_DDR, out, row_off, tiled_off);
  const uint32_t row_strides[4] = {0, 0, 0, 1};
  std::copy(row_strides, row_strides + 4, tile.src_stride);
  kiln_gdma_cmd splat = gdmaCmd(3, 0, KILN_GDMA_DDR_TO_DDR, out, scalar_off, scalar_out_off);
  std::fill(splat.src_stride, splat.src_stride + 4, 0u);
  // LMEM to DDR reads LMEM: the expanded tensor goes back out densely.
  kiln_gdma_cmd store = gdmaCmd(4, 0, KILN_GDMA_LMEM_TO_DDR, out, 0, back_off);
  ASSERT_EQ(runQueues(dev, {}, {expand, tile, splat, store}), KILN_OK) << dev.faultReason();

  std::vector<float> want_expand(out.count()), want_tile(out.count());
  for (size_t i = 0; i < out.count(); ++i) {
    want_expand[i] = per_channel[i / (out.h * out.w) % out.c];
    want_tile[i] = row[i % out.w];
  }
  EXPECT_EQ(getLmem(dev, 0, out), want_expand);
  EXPECT_EQ(getDdr(dev, kWindowOffset + back_off, out.count()), want_expand);
  EXPECT_EQ(getDdr(dev, kWindowOffset + tiled_off, out.count()), want_tile);
  EXPECT_EQ(getDdr(dev, kWindowOffset + scalar_out_off, out.count()),
            std::vector<float>(out.count(), scalar));
}

// ---- record checks (cmd_check.h) ------------------------------------------------------------

kiln_status check(const kiln_tiu_cmd &cmd) { return kiln_tiu_cmd_check(&cmd); }
kiln_status check(const kiln_gdma_cmd &cmd) { return kiln_gdma_cmd_check(&cmd, 1u << 20); }

template <class Edit>
kiln_tiu_cmd edited(kiln_tiu_cmd cmd, Edit edit) {
  edit(cmd);
  return cmd;
}

TEST(RecordChecks, Deconv) {
  const DeconvCase p{{2, 4, 5, 4}, 6, 2, 3, 2, 2, 3, 1, 2, 1, 0, 10, 11, true, true};
  const kiln_tiu_cmd good = deconvCmd(p, 0, 32 << 10, 64 << 10, 96 << 10);
  EXPECT_EQ(check(good), KILN_OK);
  // Any output shape: outputs no tap reaches hold the bias.
  EXPECT_EQ(check(edited(good, [](auto &c) { c.out.h = 1, c.out.w = 40; })), KILN_OK);
  for (auto edit : std::vector<std::function<void(kiln_tiu_cmd &)>>{
           [](auto &c) { c.kh = 0; }, [](auto &c) { c.kw = 0; },
           [](auto &c) { c.stride_h = 0; }, [](auto &c) { c.stride_w = 0; },
           [](auto &c) { c.dil_h = 0; }, [](auto &c) { c.dil_w = 0; },
           [](auto &c) { c.pad_bottom = 1; }, [](auto &c) { c.pad_right = 1; },
           [](auto &c) { c.groups = 0; }, [](auto &c) { c.groups = 3; },
           [](auto &c) { c.in1.h = 4; },                       // weight not [.., ic/groups, ..]
           [](auto &c) { c.in1.w = 5; },                       // nor kh*kw taps
           [](auto &c) { c.in2 = kiln_tiu_operand{}; },        // HAS_BIAS without a bias
           [](auto &c) { c.flags |= KILN_TIU_FLAG_COUNT_INCLUDE_PAD; },
           [](auto &c) { c.subop = 1; }, [](auto &c) { c.out.n = 1; },
           [](auto &c) { c.aux[1] = 1; },                      // aux is resize's
           [](auto &c) { c.in0.flags |= KILN_OPND_CONST; }})
    EXPECT_EQ(check(edited(good, edit)), KILN_ERR_BAD_COMMAND);
}

/// A 3x3 depthwise conv, pad 1, over [1, 70, 6, 10] (across the lane wrap).
kiln_tiu_cmd depthwiseCmd(uint32_t in_addr, uint32_t w_addr, uint32_t b_addr, uint32_t out_addr) {
  const Shape s{1, 70, 6, 10};
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_CONV);
  cmd.in0 = lmemOperand(in_addr, s);
  cmd.in1 = lmemOperand(w_addr, {1, 70, 1, 9});
  cmd.in2 = lmemOperand(b_addr, {1, 70, 1, 1});
  cmd.out = lmemOperand(out_addr, s);
  cmd.flags = KILN_TIU_FLAG_HAS_BIAS | KILN_TIU_FLAG_DEPTHWISE;
  cmd.kh = cmd.kw = 3;
  cmd.stride_h = cmd.stride_w = cmd.dil_h = cmd.dil_w = 1;
  cmd.pad_top = cmd.pad_bottom = cmd.pad_left = cmd.pad_right = 1;
  cmd.groups = 70;
  return cmd;
}

TEST(RecordChecks, Depthwise) {
  const kiln_tiu_cmd good = depthwiseCmd(0, 32 << 10, 64 << 10, 96 << 10);
  EXPECT_EQ(check(good), KILN_OK);
  for (auto edit : std::vector<std::function<void(kiln_tiu_cmd &)>>{
           [](auto &c) { c.groups = 35, c.in1.h = 2; },   // two input channels per group
           [](auto &c) { c.groups = 1, c.in1.h = 70; },   // a dense conv
           [](auto &c) { c.op = KILN_TIU_DECONV; },       // the flag is the conv's
           [](auto &c) { c.op = KILN_TIU_POOL, c.flags = KILN_TIU_FLAG_DEPTHWISE; }})
    EXPECT_EQ(check(edited(good, edit)), KILN_ERR_BAD_COMMAND);
}

TEST(DepthwiseOps, TheFlagChangesTheCostNotTheBits) {
  const Shape s{1, 70, 6, 10};
  const uint32_t in_addr = 0, w_addr = 32 << 10, b_addr = 64 << 10, out_addr = 96 << 10;
  const kiln_tiu_cmd flagged = depthwiseCmd(in_addr, w_addr, b_addr, out_addr);
  const kiln_tiu_cmd plain = edited(flagged, [](auto &c) { c.flags &= ~KILN_TIU_FLAG_DEPTHWISE; });
  std::vector<float> outs[2];
  for (int i = 0; i < 2; ++i) {
    Device dev(kDeviceDdrBytes);
    putLmem(dev, in_addr, s, randomFloats(s.count(), 71));
    putLmem(dev, w_addr, {1, 70, 1, 9}, randomFloats(70 * 9, 72));
    putLmem(dev, b_addr, {1, 70, 1, 1}, randomFloats(70, 73));
    ASSERT_EQ(runQueues(dev, {i ? flagged : plain}, {}), KILN_OK) << dev.faultReason();
    outs[i] = getLmem(dev, out_addr, s);
  }
  EXPECT_EQ(0, std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(float)));
  // f32: the MAC array, n * ceil(oc/64) * ceil(h*w/16) * ceil(1/1) * 9 = 2 * 4 * 9;
  // the depthwise datapath, the pool's count: ceil(2 * ceil(60/16) * 9 / 2) = 36.
  EXPECT_EQ(kiln_tiu_cycles(&plain), 2u * 4 * 9 + 32);
  EXPECT_EQ(kiln_tiu_cycles(&flagged), 36u + 32);
  // f16 (PIX 4, ICP 32; 32 elements per EU pass): 2 * 15 * 9 against 2 * 2 * 9 / 2.
  kiln_tiu_cmd plain16 = plain, flagged16 = flagged;
  for (kiln_tiu_cmd *c : {&plain16, &flagged16})
    c->in0.dtype = c->in1.dtype = c->out.dtype = KILN_DTYPE_F16;
  EXPECT_EQ(kiln_tiu_cycles(&plain16), 2u * 15 * 9 + 32);
  EXPECT_EQ(kiln_tiu_cycles(&flagged16), 18u + 32);
}

TEST(RecordChecks, Resize) {
  const ResizeCase p = kResizeCases[1];
  const kiln_tiu_cmd whole = resizeCmd(p, resizeSubop(KILN_RESIZE_LINEAR, 3, 3));
  const kiln_tiu_cmd slice = resizeSliceCmd(p, resizeSubop(KILN_RESIZE_NEAREST, 0, 0), 1, 2, 5);
  EXPECT_EQ(check(whole), KILN_OK);
  EXPECT_EQ(check(slice), KILN_OK);
  EXPECT_EQ(check(edited(whole, [](auto &c) { c.flags = KILN_TIU_FLAG_RELU; })), KILN_OK);
  // ABI 1.3: the exact-ratio bits of each axis.
  EXPECT_EQ(check(edited(whole, [](auto &c) { c.subop |= KILN_RESIZE_EXACT_H | KILN_RESIZE_EXACT_W; })),
            KILN_OK);
  // The slice may end at the full heights exactly.
  EXPECT_EQ(check(edited(slice, [&](auto &c) {
              c.aux[2] = p.oh - c.out.h;
              c.aux[3] = p.in.h - c.in0.h;
            })),
            KILN_OK);
  const float inf = std::numeric_limits<float>::infinity();
  for (auto edit : std::vector<std::function<void(kiln_tiu_cmd &)>>{
           [](auto &c) { c.subop = resizeSubop(2, 0, 0); },
           [](auto &c) { c.subop = resizeSubop(1, 4, 0); },
           [](auto &c) { c.subop = resizeSubop(0, 0, 4); },
           [](auto &c) { c.subop |= 1u << 14; },
           [](auto &c) { c.param[0] = 0.0f; }, [](auto &c) { c.param[1] = -2.0f; },
           [](auto &c) { c.param[0] = -0.0f; },
           [&](auto &c) { c.param[1] = inf; },
           [](auto &c) { c.param[0] = std::numeric_limits<float>::quiet_NaN(); },
           [](auto &c) { c.out.c = 65; }, [](auto &c) { c.out.n = 1; },
           [](auto &c) { c.flags = KILN_TIU_FLAG_HAS_BIAS; },
           [](auto &c) { c.in1 = lmemOperand(0, {1, 1, 1, 1}); },
           [](auto &c) { c.in0.flags |= KILN_OPND_CONST; }})
    EXPECT_EQ(check(edited(whole, edit)), KILN_ERR_BAD_COMMAND);
  for (auto edit : std::vector<std::function<void(kiln_tiu_cmd &)>>{
           [](auto &c) { c.aux[0] = 0; },                             // half the slice form
           [](auto &c) { c.aux[1] = 0; },
           [&](auto &c) { c.aux[2] = p.oh - c.out.h + 1; },           // rows past the output
           [&](auto &c) { c.aux[3] = p.in.h - c.in0.h + 1; },         // window past the input
           [](auto &c) { c.aux[2] = 0xffffffffu; }}) {                // no wrap-around
    EXPECT_EQ(check(edited(slice, edit)), KILN_ERR_BAD_COMMAND);
  }
  // The whole-tensor form with only a first row set is neither form.
  EXPECT_EQ(check(edited(whole, [](auto &c) { c.aux[2] = 1; })), KILN_ERR_BAD_COMMAND);
}

TEST(RecordChecks, NewKindsOfPoolEltwiseActive) {
  const Shape s{1, 3, 4, 4};
  kiln_tiu_cmd pool = tiuCmd(1, 0, KILN_TIU_POOL);
  pool.in0 = lmemOperand(0, s);
  pool.out = lmemOperand(4096, {1, 3, 2, 2});
  pool.kh = pool.kw = pool.stride_h = pool.stride_w = 2;
  pool.dil_h = pool.dil_w = 1;
  for (uint16_t k = 0; k < KILN_POOL_END; ++k)
    EXPECT_EQ(check(edited(pool, [&](auto &c) { c.subop = k; })), KILN_OK) << k;
  EXPECT_EQ(check(edited(pool, [](auto &c) { c.subop = KILN_POOL_END; })), KILN_ERR_BAD_COMMAND);

  kiln_tiu_cmd elt = tiuCmd(1, 0, KILN_TIU_ELTWISE);
  elt.in0 = elt.out = lmemOperand(0, s);
  elt.in1 = lmemOperand(4096, {1, 3, 1, 1});
  for (uint16_t k : {KILN_ELT_DIV, KILN_ELT_POW, KILN_ELT_PRELU})
    EXPECT_EQ(check(edited(elt, [&](auto &c) { c.subop = k; })), KILN_OK) << k;
  EXPECT_EQ(check(edited(elt, [](auto &c) { c.subop = KILN_ELT_END; })), KILN_ERR_BAD_COMMAND);

  kiln_tiu_cmd act = tiuCmd(1, 0, KILN_TIU_ACTIVE);
  act.in0 = act.out = lmemOperand(0, s);
  for (uint16_t k = 0; k < KILN_ACT_END; ++k)
    EXPECT_EQ(check(edited(act, [&](auto &c) { c.subop = k; })), KILN_OK) << k;
  EXPECT_EQ(check(edited(act, [](auto &c) { c.subop = KILN_ACT_END; })), KILN_ERR_BAD_COMMAND);
  EXPECT_EQ(check(edited(act, [](auto &c) { c.aux[3] = 1; })), KILN_ERR_BAD_COMMAND);
}

TEST(RecordChecks, GdmaFillAndStrideZero) {
  const Shape s{1, 2, 3, 4};
  for (int dir = 0; dir < KILN_GDMA_DIR_END; ++dir) {
    kiln_gdma_cmd fill = gdmaCmd(1, 0, kiln_gdma_dir(dir), s, 0xdeadbeefu, 0);
    fill.flags = KILN_GDMA_FLAG_FILL;
    std::fill(fill.src_stride, fill.src_stride + 4, 0xffffffffu); // unread
    EXPECT_EQ(check(fill), KILN_OK) << dir;
    // The destination is still checked.
    fill.dst_addr = kiln_gdma_dst_is_lmem(fill.dir) ? KILN_LMEM_BYTES_PER_LANE : (1u << 20) - 4;
    EXPECT_EQ(check(fill), KILN_ERR_OUT_OF_RANGE) << dir;
  }
  kiln_gdma_cmd fill = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_DDR, s, 0, 0);
  fill.flags = KILN_GDMA_FLAG_FILL;
  fill.src_addr = 1ull << 32; // more than a 32-bit pattern
  EXPECT_EQ(check(fill), KILN_ERR_BAD_COMMAND);
  fill.src_addr = 0;
  fill.flags = 0x2;
  EXPECT_EQ(check(fill), KILN_ERR_BAD_COMMAND);

  // A stride-0 source stays within the window wherever its one element is.
  kiln_gdma_cmd splat = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_LMEM, s, (1u << 20) - 4, 0);
  std::fill(splat.src_stride, splat.src_stride + 4, 0u);
  EXPECT_EQ(check(splat), KILN_OK);
  splat.src_addr += 1;
  EXPECT_EQ(check(splat), KILN_ERR_OUT_OF_RANGE);
}

// ---- cost model, by hand ---------------------------------------------------------------------

TEST(CostModel, DeconvByHand) {
  // in [2, 32, 5, 7], out [2, 96, 11, 15], groups 2, 3x3:
  // n * ceil(oc/64) * ceil(ih*iw/PIX) * ceil(ic_per_group/ICP) * kh*kw + 32
  kiln_tiu_cmd cmd = tiuCmd(1, 0, KILN_TIU_DECONV);
  cmd.in0 = lmemOperand(0, {2, 32, 5, 7});
  cmd.out = lmemOperand(0, {2, 96, 11, 15});
  cmd.kh = cmd.kw = 3;
  cmd.groups = 2;
  EXPECT_EQ(kiln_tiu_cycles(&cmd), 2u * 2 * 3 * 16 * 9 + 32); // f32 (16, 1): 1760
  cmd.in0.dtype = KILN_DTYPE_F16;
  EXPECT_EQ(kiln_tiu_cycles(&cmd), 2u * 2 * 9 * 1 * 9 + 32); // f16 (4, 32): 356
}

TEST(CostModel, ResizeActiveAndEltwiseByHand) {
  // out [1, 70, 6, 10] f32: 2 planes * ceil(60/16) = 8 passes.
  kiln_tiu_cmd resize = tiuCmd(1, 0, KILN_TIU_RESIZE, resizeSubop(KILN_RESIZE_NEAREST, 2, 3));
  resize.out = lmemOperand(0, {1, 70, 6, 10});
  EXPECT_EQ(kiln_tiu_cycles(&resize), 8u + 32);
  resize.subop = resizeSubop(KILN_RESIZE_LINEAR, 0, 0);
  EXPECT_EQ(kiln_tiu_cycles(&resize), 2u * 8 + 32);

  kiln_tiu_cmd act = tiuCmd(1, 0, KILN_TIU_ACTIVE, KILN_ACT_GELU);
  act.out = lmemOperand(0, {1, 70, 6, 10});
  EXPECT_EQ(kiln_tiu_cycles(&act), 4u * 8 + 32);
  act.subop = KILN_ACT_HARD_SWISH; // no transcendental
  EXPECT_EQ(kiln_tiu_cycles(&act), 8u + 32);
  kiln_tiu_cmd elt = tiuCmd(1, 0, KILN_TIU_ELTWISE, KILN_ELT_POW);
  elt.out = act.out;
  EXPECT_EQ(kiln_tiu_cycles(&elt), 4u * 8 + 32);
  elt.subop = KILN_ELT_DIV;
  EXPECT_EQ(kiln_tiu_cycles(&elt), 8u + 32);
}

TEST(CostModel, FillIsWriteBandwidthOnly) {
  // 12 f32 into DDR: one 48-byte run -> a 64-byte burst at 47.245 bytes per
  // cycle (LMEM->DDR, the DDR write rate): 1.35 -> 2, + 128. The same block
  // copied from a stride-0 source is 12 one-element runs at 30.065: 26 + 128.
  kiln_gdma_cmd fill = gdmaCmd(1, 0, KILN_GDMA_DDR_TO_DDR, {1, 1, 4, 3}, 0, 0);
  std::fill(fill.src_stride, fill.src_stride + 4, 0u);
  EXPECT_EQ(kiln_gdma_cycles(&fill), 26u + 128);
  fill.flags = KILN_GDMA_FLAG_FILL;
  EXPECT_EQ(kiln_gdma_cycles(&fill), 2u + 128);
  // Into LMEM [1, 64, 8, 8]: 64 planes of 256 bytes at 62.277: 264 + 128.
  kiln_gdma_cmd lmem_fill = gdmaCmd(1, 0, KILN_GDMA_LMEM_TO_LMEM, {1, 64, 8, 8}, 0, 0);
  lmem_fill.flags = KILN_GDMA_FLAG_FILL;
  EXPECT_EQ(kiln_gdma_cycles(&lmem_fill), 264u + 128);
}

} // namespace
} // namespace kiln::test
