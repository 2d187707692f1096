// The Tpu interpreter on hand-written typed Tpu IR (f16, bf16, INT8): against
// closed-form results on small nets, and bit for bit against the same IR
// compiled (layer groups, codegen, bmodel) and run on the cmodel, sliced
// groups included.
#include "kiln/Codegen/Codegen.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/Dialect/Tpu/Transforms/Passes.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Interpreter/TpuInterpreter.h"
#include "kiln/Target/Bmodel/BmodelWriter.h"
#include "kiln/abi/commands.h"
#include "kiln/abi/quant.h"
#include "kiln/cmodel/device.h"
#include "kiln/rt/runtime.hpp"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/QuantOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace kiln;

namespace {

std::string dims(std::initializer_list<int64_t> d) {
  std::string s;
  for (int64_t x : d)
    s += std::to_string(x) + "x";
  return s;
}

/// Deterministic values in [lo, hi), on a grid of `step` when step > 0.
std::vector<float> noise(size_t count, uint32_t seed, float lo, float hi, float step = 0) {
  std::vector<float> v(count);
  for (auto &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = lo + (hi - lo) * (float)((seed >> 8) & 0xffff) / 65536.f;
    if (step > 0)
      x = std::floor(x / step) * step;
  }
  return v;
}

std::vector<int8_t> noiseI8(size_t count, uint32_t seed, int lo, int hi) {
  std::vector<int8_t> v(count);
  for (auto &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = (int8_t)(lo + (int)((seed >> 8) % (uint32_t)(hi - lo + 1)));
  }
  return v;
}

template <typename T> std::vector<char> rawOf(const std::vector<T> &v) {
  std::vector<char> raw(v.size() * sizeof(T));
  std::memcpy(raw.data(), v.data(), raw.size());
  return raw;
}

std::vector<char> narrow(const std::vector<float> &v, bool bf16) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    h[i] = bf16 ? kiln_f32_to_bf16(v[i]) : kiln_f32_to_f16(v[i]);
  return rawOf(h);
}

float roundTo(float x, bool bf16) {
  return bf16 ? kiln_bf16_to_f32(kiln_f32_to_bf16(x)) : kiln_f16_to_f32(kiln_f32_to_f16(x));
}

/// m / 2^s ~= ratio with m in [2^30, 2^31).
std::pair<int32_t, int32_t> multiplier(double ratio) {
  int e;
  double f = std::frexp(ratio, &e);
  int64_t m = std::llround(f * 2147483648.0);
  int s = 31 - e;
  if (m == 2147483648LL) {
    m /= 2;
    --s;
  }
  return {(int32_t)m, s};
}

bool anySliced(const codegen::NetCode &net) {
  for (const auto &g : net.groups)
    if (g.nSlices * g.hSlices > 1)
      return true;
  return false;
}

/// Sets the data of the top.weight named `name` (its raw bytes in the
/// storage type of its result type).
void setWeight(ModuleOp m, StringRef name, const std::vector<char> &raw) {
  bool found = false;
  m.walk([&](top::WeightOp w) {
    auto loc = dyn_cast<NameLoc>(w.getLoc());
    if (!loc || loc.getName() != name)
      return;
    auto type = cast<RankedTensorType>(w.getType());
    Type elem = type.getElementType();
    if (auto q = dyn_cast<quant::QuantizedType>(elem))
      elem = q.getStorageType();
    auto attrType = RankedTensorType::get(type.getShape(), elem);
    ASSERT_EQ(raw.size(), tpu::tensorBytes(type)) << name.str();
    w->setAttr("value", DenseElementsAttr::getFromRawBuffer(attrType, raw));
    found = true;
  });
  ASSERT_TRUE(found) << name.str();
}


class TpuInterp : public ::testing::Test {
protected:
  void SetUp() override {
    ctx.loadDialect<func::FuncDialect, top::TopDialect, tpu::TpuDialect,
                    quant::QuantizationDialect>();
  }

  OwningOpRef<ModuleOp> parse(const std::string &ir) {
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(ir, &ctx);
    EXPECT_TRUE(m) << ir;
    return m;
  }

  static func::FuncOp mainOf(ModuleOp m) { return *m.getOps<func::FuncOp>().begin(); }

  /// Layer groups, addresses, codegen, bmodel; runs on the cmodel with the
  /// f32 inputs (argument order) and returns output 0.
  std::vector<float> runCompiled(ModuleOp source, const std::vector<interp::Tensor> &inputs,
                                 bool *sliced = nullptr) {
    auto all = runCompiledAll(source, inputs, sliced);
    return all.empty() ? std::vector<float>() : all[0];
  }

  /// As runCompiled, every output.
  std::vector<std::vector<float>> runCompiledAll(ModuleOp source,
                                                 const std::vector<interp::Tensor> &inputs,
                                                 bool *sliced = nullptr) {
    OwningOpRef<ModuleOp> module(source.clone());
    PassManager pm(&ctx);
    pm.addNestedPass<func::FuncOp>(tpu::createLayerGroupPass());
    pm.addPass(tpu::createAddressAssignPass());
    EXPECT_TRUE(succeeded(pm.run(*module)));
    auto net = codegen::generateNet(*module, "tpu_interp");
    EXPECT_TRUE(succeeded(net));
    if (failed(net))
      return {};
    if (sliced)
      *sliced = anySliced(*net);
    mostWSlices = 1;
    for (const auto &g : net->groups)
      mostWSlices = std::max(mostWSlices, g.wSlices);
    std::vector<uint8_t> bytes = bmodel::serialize({{*net}});
    cmodel::Device device(256u << 20);
    kiln_hal hal = device.hal();
    rt::Runtime runtime;
    EXPECT_EQ(runtime.init(hal), KILN_OK);
    rt::Net loaded;
    kiln_status st = loaded.load(runtime, bytes.data(), bytes.size());
    EXPECT_EQ(st, KILN_OK) << kiln_status_str(st);
    if (st != KILN_OK)
      return {};
    for (size_t i = 0; i < inputs.size(); ++i)
      EXPECT_EQ(loaded.setInput(i, inputs[i].data.data(), inputs[i].data.size() * 4), KILN_OK);
    EXPECT_EQ(loaded.run(120u * 1000u * 1000u), KILN_OK) << device.faultReason();
    std::vector<std::vector<float>> outs;
    for (uint32_t o = 0; o < loaded.outputCount(); ++o) {
      kiln_tensor_info info;
      loaded.outputInfo(o, &info);
      std::vector<float> out(info.bytes / 4);
      EXPECT_EQ(loaded.getOutput(o, out.data(), info.bytes), KILN_OK);
      outs.push_back(std::move(out));
    }
    return outs;
  }

  static void expectBitwise(const std::vector<float> &got, const std::vector<float> &want) {
    ASSERT_EQ(got.size(), want.size());
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (std::memcmp(&got[i], &want[i], 4) != 0 && bad++ < 10)
        ADD_FAILURE() << "element " << i << ": " << got[i] << " vs " << want[i];
    EXPECT_EQ(bad, 0u);
  }

  /// An f16 net of fpConvNet's or fpPoolNet's with fpData's filter scaled
  /// by 1/4 (sums stay small) and bias: the interpreter and the compiled net
  /// give the same bits. `sliced` as runCompiled's.
  void expectScaledF16Matches(ModuleOp m, int64_t c, int64_t h, int64_t w, int64_t k,
                              bool *sliced = nullptr);

  MLIRContext ctx;
  /// The most W slices of a group in the net runCompiled last compiled.
  uint32_t mostWSlices = 1;
};

//===----------------------------------------------------------------------===//
// F16 / BF16
//===----------------------------------------------------------------------===//

/// x -> cast -> conv KxK (f32 bias, relu) -> add x -> relu -> cast -> y.
std::string fpConvNet(const char *ft, int64_t c, int64_t h, int64_t w, int64_t k) {
  std::string f32 = "tensor<" + dims({1, c, h, w}) + "f32>";
  std::string t = "tensor<" + dims({1, c, h, w}) + ft + ">";
  std::string wt = "tensor<" + dims({c, c, k, k}) + ft + ">";
  std::string bt = "tensor<" + std::to_string(c) + "xf32>";
  std::string p = std::to_string(k / 2), ks = std::to_string(k);
  return "func.func @main(%x: " + f32 + " {kiln.name = \"x\"}) -> (" + f32 +
         " {kiln.name = \"y\"}) {\n"
         "  %xh = tpu.cast %x : (" + f32 + ") -> " + t + " loc(\"xh\")\n"
         "  %w = top.weight {value = dense<0.0> : " + wt + "} : " + wt + " loc(\"w\")\n"
         "  %b = top.weight {value = dense<0.0> : " + bt + "} : " + bt + " loc(\"b\")\n"
         "  %c = tpu.conv2d %xh, %w, %b {kernel_shape = array<i64: " + ks + ", " + ks +
         ">, strides = array<i64: 1, 1>, pads = array<i64: " + p + ", " + p + ", " + p + ", " + p +
         ">, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (" + t + ", " + wt +
         ", " + bt + ") -> " + t + " loc(\"c\")\n"
         "  %a = tpu.eltwise %c, %xh {kind = 0 : i32, do_relu = false} : (" + t + ", " + t +
         ") -> " + t + " loc(\"a\")\n"
         "  %r = tpu.relu %a : (" + t + ") -> " + t + " loc(\"r\")\n"
         "  %y = tpu.cast %r : (" + t + ") -> " + f32 + " loc(\"y\")\n"
         "  return %y : " + f32 + "\n}\n";
}

/// The conv and pool of fpPoolNet: by default a 1x1 conv and a 2x2 max pool.
struct ConvPool {
  int64_t convKernel = 1; // pads convKernel / 2
  int poolKind = 0;       // tpu::PoolKind
  int64_t poolKernel = 2, poolPad = 0;
};

/// x -> cast -> conv (f32 bias, relu) -> pool (stride 2, count_include_pad
/// false) -> active -> cast.
std::string fpPoolNet(const char *ft, int64_t c, int64_t h, int64_t w, int mode, double alpha,
                      double beta, ConvPool cp = {}) {
  auto pooled = [&](int64_t x) { return (x + 2 * cp.poolPad - cp.poolKernel) / 2 + 1; };
  std::string f32 = "tensor<" + dims({1, c, h, w}) + "f32>";
  std::string f32o = "tensor<" + dims({1, c, pooled(h), pooled(w)}) + "f32>";
  std::string t = "tensor<" + dims({1, c, h, w}) + ft + ">";
  std::string to = "tensor<" + dims({1, c, pooled(h), pooled(w)}) + ft + ">";
  std::string wt = "tensor<" + dims({c, c, cp.convKernel, cp.convKernel}) + ft + ">";
  std::string bt = "tensor<" + std::to_string(c) + "xf32>";
  std::string k = std::to_string(cp.convKernel), p = std::to_string(cp.convKernel / 2);
  std::string pk = std::to_string(cp.poolKernel), pp = std::to_string(cp.poolPad);
  return "func.func @main(%x: " + f32 + " {kiln.name = \"x\"}) -> (" + f32o +
         " {kiln.name = \"y\"}) {\n"
         "  %xh = tpu.cast %x : (" + f32 + ") -> " + t + " loc(\"xh\")\n"
         "  %w = top.weight {value = dense<0.0> : " + wt + "} : " + wt + " loc(\"w\")\n"
         "  %b = top.weight {value = dense<0.0> : " + bt + "} : " + bt + " loc(\"b\")\n"
         "  %c = tpu.conv2d %xh, %w, %b {kernel_shape = array<i64: " + k + ", " + k +
         ">, strides = array<i64: 1, 1>, pads = array<i64: " + p + ", " + p + ", " + p + ", " + p +
         ">, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (" + t + ", " + wt +
         ", " + bt + ") -> " + t + " loc(\"c\")\n"
         "  %p = tpu.pool2d %c {kind = " + std::to_string(cp.poolKind) +
         " : i32, kernel_shape = array<i64: " + pk + ", " + pk +
         ">, strides = array<i64: 2, 2>, pads = array<i64: " + pp + ", " + pp + ", " + pp + ", " +
         pp + ">, count_include_pad = false, do_relu = false} : (" + t + ") -> " + to +
         " loc(\"p\")\n"
         "  %s = tpu.active %p {mode = " + std::to_string(mode) + " : i32, alpha = " +
         std::to_string(alpha) + " : f64, beta = " + std::to_string(beta) + " : f64} : (" + to +
         ") -> " + to + " loc(\"s\")\n"
         "  %y = tpu.cast %s : (" + to + ") -> " + f32o + " loc(\"y\")\n"
         "  return %y : " + f32o + "\n}\n";
}

struct FpData {
  std::vector<float> x, w, b; // w and b as f32 values the narrow type holds exactly
};

FpData fpData(int64_t c, int64_t h, int64_t w, int64_t k, bool bf16, bool grid) {
  FpData d;
  d.x = noise(c * h * w, 3, -1.f, 1.f, grid ? 0.125f : 0.f);
  d.w = noise(c * c * k * k, 5, -0.5f, 0.5f, grid ? 0.25f : 0.f);
  for (auto &v : d.w)
    v = roundTo(v, bf16);
  d.b = noise(c, 7, -0.5f, 0.5f, grid ? 0.125f : 0.f);
  return d;
}

void TpuInterp::expectScaledF16Matches(ModuleOp m, int64_t c, int64_t h, int64_t w, int64_t k,
                                       bool *sliced) {
  FpData d = fpData(c, h, w, k, false, false);
  for (auto &v : d.w)
    v = roundTo(v * 0.25f, false);
  setWeight(m, "w", narrow(d.w, false));
  setWeight(m, "b", rawOf(d.b));
  interp::Tensor x{{1, c, h, w}, d.x};
  interp::TensorMap outputs;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(m), {{"x", x}}, outputs)));
  expectBitwise(runCompiled(m, {x}, sliced), outputs["y"].data);
}

TEST_F(TpuInterp, F16ConvReluAddClosedForm) {
  const int64_t C = 4, H = 5, W = 6;
  auto m = parse(fpConvNet("f16", C, H, W, 1));
  ASSERT_TRUE(m);
  FpData d = fpData(C, H, W, 1, false, true);
  setWeight(*m, "w", narrow(d.w, false));
  setWeight(*m, "b", rawOf(d.b));
  interp::TensorMap outputs, all;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", {{1, C, H, W}, d.x}}}, outputs, &all)));
  // Every value is on a grid f16 holds exactly: the result is exact.
  const auto &y = outputs["y"].data;
  ASSERT_EQ(y.size(), (size_t)(C * H * W));
  for (int64_t o = 0; o < C; ++o)
    for (int64_t p = 0; p < H * W; ++p) {
      double acc = d.b[o];
      for (int64_t i = 0; i < C; ++i)
        acc += (double)d.x[i * H * W + p] * d.w[o * C + i];
      double v = std::max(acc, 0.0) + d.x[o * H * W + p];
      EXPECT_EQ(y[o * H * W + p], (float)std::max(v, 0.0)) << o << " " << p;
    }
  // Intermediate values come back as f32 too.
  EXPECT_EQ(all["c"].shape, (std::vector<int64_t>{1, C, H, W}));
  EXPECT_EQ(all["xh"].data, d.x);
}

TEST_F(TpuInterp, F16RoundsEveryStore) {
  // 1 + 2^-11 is not an f16: the cast rounds to even (1), then the add of
  // 2^-11 + 2^-11 rounds again.
  const char *ir = R"(
func.func @main(%x: tensor<1x1x1x2xf32> {kiln.name = "x"}) -> (tensor<1x1x1x2xf32> {kiln.name = "y"}) {
  %h = tpu.cast %x : (tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf16> loc("h")
  %a = tpu.eltwise %h, %h {kind = 0 : i32, do_relu = false} : (tensor<1x1x1x2xf16>, tensor<1x1x1x2xf16>) -> tensor<1x1x1x2xf16> loc("a")
  %y = tpu.cast %a : (tensor<1x1x1x2xf16>) -> tensor<1x1x1x2xf32> loc("y")
  return %y : tensor<1x1x1x2xf32>
})";
  auto m = parse(ir);
  ASSERT_TRUE(m);
  interp::TensorMap outputs;
  float big = 1.f + 1.f / 2048.f, huge = 40000.f;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", {{1, 1, 1, 2}, {big, huge}}}}, outputs)));
  EXPECT_EQ(outputs["y"].data[0], 2.f);
  EXPECT_TRUE(std::isinf(outputs["y"].data[1])); // 80000 overflows f16
}

TEST_F(TpuInterp, Bf16ConvPoolScaleClosedForm) {
  const int64_t C = 4, H = 4, W = 6;
  auto m = parse(fpPoolNet("bf16", C, H, W, KILN_ACT_SCALE, 0.5, 0.25));
  ASSERT_TRUE(m);
  FpData d = fpData(C, H, W, 1, true, true);
  setWeight(*m, "w", narrow(d.w, true));
  setWeight(*m, "b", rawOf(d.b));
  interp::TensorMap outputs;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", {{1, C, H, W}, d.x}}}, outputs)));
  const auto &y = outputs["y"].data;
  ASSERT_EQ(y.size(), (size_t)(C * H / 2 * W / 2));
  for (int64_t o = 0; o < C; ++o)
    for (int64_t oy = 0; oy < H / 2; ++oy)
      for (int64_t ox = 0; ox < W / 2; ++ox) {
        double best = -1e30;
        for (int64_t ky = 0; ky < 2; ++ky)
          for (int64_t kx = 0; kx < 2; ++kx) {
            int64_t p = (oy * 2 + ky) * W + ox * 2 + kx;
            double acc = d.b[o];
            for (int64_t i = 0; i < C; ++i)
              acc += (double)d.x[i * H * W + p] * d.w[o * C + i];
            best = std::max(best, (double)roundTo((float)std::max(acc, 0.0), true));
          }
        float want = roundTo((float)(0.5 * best + 0.25), true);
        EXPECT_EQ(y[(o * H / 2 + oy) * W / 2 + ox], want) << o << " " << oy << " " << ox;
      }
}

TEST_F(TpuInterp, F16MatchesCompiledNet) {
  const int64_t C = 8, H = 20, W = 24;
  auto m = parse(fpConvNet("f16", C, H, W, 3));
  ASSERT_TRUE(m);
  FpData d = fpData(C, H, W, 3, false, false);
  setWeight(*m, "w", narrow(d.w, false));
  setWeight(*m, "b", rawOf(d.b));
  interp::Tensor x{{1, C, H, W}, d.x};
  interp::TensorMap outputs;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", x}}, outputs)));
  expectBitwise(runCompiled(*m, {x}), outputs["y"].data);
}

TEST_F(TpuInterp, F16SlicedGroupMatchesCompiledNet) {
  // 1x16x128x256: each f32 boundary tensor alone is 128 KiB per lane.
  const int64_t C = 16, H = 128, W = 256;
  auto m = parse(fpConvNet("f16", C, H, W, 3));
  ASSERT_TRUE(m);
  bool sliced = false;
  expectScaledF16Matches(*m, C, H, W, 3, &sliced);
  EXPECT_TRUE(sliced);
}

TEST_F(TpuInterp, F16WidthSlicedGroupMatchesCompiledNet) {
  // Two rows of 6000 columns: H slices would repeat the conv's halo rows;
  // W slices read two halo columns each and pipeline.
  const int64_t C = 16, H = 2, W = 6000;
  // A 3x3 conv, then a 3x3 average pool of stride 2 (pads 1): windows with
  // halo columns, and pads at the ends of the row only.
  auto m = parse(fpPoolNet("f16", C, H, W, KILN_ACT_SCALE, 0.5, 0.25,
                           {3, /*Avg*/ 1, 3, 1}));
  ASSERT_TRUE(m);
  expectScaledF16Matches(*m, C, H, W, 3);
  EXPECT_GT(mostWSlices, 1u);
}

TEST_F(TpuInterp, Bf16MatchesCompiledNet) {
  // The f32 input alone is 192 KiB per lane: the group must slice.
  const int64_t C = 16, H = 192, W = 256;
  auto m = parse(fpPoolNet("bf16", C, H, W, KILN_ACT_SIGMOID, 0, 0));
  ASSERT_TRUE(m);
  FpData d = fpData(C, H, W, 1, true, false);
  setWeight(*m, "w", narrow(d.w, true));
  setWeight(*m, "b", rawOf(d.b));
  interp::Tensor x{{1, C, H, W}, d.x};
  interp::TensorMap outputs;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", x}}, outputs)));
  bool sliced = false;
  expectBitwise(runCompiled(*m, {x}, &sliced), outputs["y"].data);
  EXPECT_TRUE(sliced);
}

//===----------------------------------------------------------------------===//
// F32 from the lowering: DMA, concat and reshape on the host
//===----------------------------------------------------------------------===//

TEST_F(TpuInterp, LoweredF32NetMatchesTopAndCompiledNet) {
  const char *ir = R"(
func.func @main(%x: tensor<1x8x32x32xf32> {kiln.name = "x"}) -> (tensor<1x10xf32> {kiln.name = "y"}, tensor<1x32x16x16xf32> {kiln.name = "z"}) {
  %n = top.none
  %w1 = top.weight {value = dense<0.0> : tensor<16x8x3x3xf32>} : tensor<16x8x3x3xf32>
  %b1 = top.weight {value = dense<0.0> : tensor<16xf32>} : tensor<16xf32>
  %c1 = top.conv %x, %w1, %b1 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, do_relu = true} : (tensor<1x8x32x32xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x32x32xf32> loc("c1")
  %p = top.maxpool %c1 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32> loc("p")
  %s = top.active %p {mode = 2 : i32} : (tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32> loc("s")
  %cat = top.concat %p, %s {axis = 1 : i64} : (tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>) -> tensor<1x32x16x16xf32> loc("cat")
  %t = top.transpose %cat {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32> loc("z")
  %g = top.global_avgpool %t : (tensor<1x32x16x16xf32>) -> tensor<1x32x1x1xf32> loc("g")
  %f = top.reshape %g {shape = array<i64: 1, 32>} : (tensor<1x32x1x1xf32>) -> tensor<1x32xf32> loc("f")
  %wf = top.weight {value = dense<0.0> : tensor<10x32xf32>} : tensor<10x32xf32>
  %bf = top.weight {value = dense<0.0> : tensor<10xf32>} : tensor<10xf32>
  %y = top.matmul %f, %wf, %bf {right_transpose = true} : (tensor<1x32xf32>, tensor<10x32xf32>, tensor<10xf32>) -> tensor<1x10xf32> loc("y")
  return %y, %t : tensor<1x10xf32>, tensor<1x32x16x16xf32>
}
)";
  auto m = parse(ir);
  ASSERT_TRUE(m);
  uint32_t seed = 1;
  SmallVector<top::WeightOp> weights;
  m->walk([&](top::WeightOp w) { weights.push_back(w); });
  for (top::WeightOp w : weights) {
    auto type = cast<RankedTensorType>(w.getType());
    std::vector<float> data = noise(type.getNumElements(), seed++, -0.3f, 0.3f);
    w->setAttr("value", DenseElementsAttr::get(type, ArrayRef<float>(data)));
  }
  interp::Tensor x{{1, 8, 32, 32}, noise(8 * 32 * 32, 99, -1.f, 1.f)};
  interp::TensorMap reference, outputs, all;
  ASSERT_TRUE(succeeded(interp::runTop(mainOf(*m), {{"x", x}}, reference)));
  PassManager pm(&ctx);
  pm.addPass(tpu::createConvertTopToTpuPass());
  ASSERT_TRUE(succeeded(pm.run(*m)));
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", x}}, outputs, &all)));
  for (const char *name : {"y", "z"}) {
    const auto &got = outputs[name].data, &want = reference[name].data;
    ASSERT_EQ(got.size(), want.size()) << name;
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4f * (1.f + std::fabs(want[i]))) << name << " " << i;
  }
  EXPECT_TRUE(all.count("c1"));
  auto compiled = runCompiledAll(*m, {x});
  ASSERT_EQ(compiled.size(), 2u);
  expectBitwise(compiled[0], outputs["y"].data);
  expectBitwise(compiled[1], outputs["z"].data);
}

//===----------------------------------------------------------------------===//
// INT8
//===----------------------------------------------------------------------===//

/// x -> quantize -> { conv 3x3 (relu), conv 1x1 } -> add (requant) -> sigmoid
/// table -> dequantize -> y. Scales are powers of two or small multiples, so
/// the IR text holds them exactly.
struct Int8Net {
  int64_t ic, oc, h, w;
  double sIn = 0.0625, sC = 0.125, sC2 = 0.09375, sA = 0.1875, sOut = 1.0 / 256;
  int zpIn = -3, zpC = 2, zpC2 = -1, zpA = 0, zpOut = -128;
  std::vector<double> sW = {0.0078125, 0.015625, 0.01171875, 0.0234375};
  std::vector<double> sW2 = {0.015625, 0.0078125, 0.0234375, 0.01171875};

  std::string q(double s, int zp) const {
    char buf[96];
    std::snprintf(buf, sizeof buf, "!quant.uniform<i8:f32, %.17g:%d>", s, zp);
    return buf;
  }
  std::string perAxis(const std::vector<double> &s) const {
    std::string out = "!quant.uniform<i8:f32:0, {";
    for (size_t i = 0; i < (size_t)oc; ++i) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%s%.17g", i ? "," : "", s[i % s.size()]);
      out += buf;
    }
    return out + "}>";
  }
  double wScale(const std::vector<double> &s, int64_t o) const { return s[o % s.size()]; }

  std::string ir() const {
    auto T = [&](int64_t c, const std::string &e) {
      return "tensor<" + dims({1, c, h, w}) + e + ">";
    };
    std::string f32 = T(ic, "f32"), qx = T(ic, q(sIn, zpIn)), qc = T(oc, q(sC, zpC)),
                qc2 = T(oc, q(sC2, zpC2)), qa = T(oc, q(sA, zpA)), qo = T(oc, q(sOut, zpOut)),
                fo = T(oc, "f32");
    std::string w1 = "tensor<" + dims({oc, ic, 3, 3}) + perAxis(sW) + ">";
    std::string w1a = "tensor<" + dims({oc, ic, 3, 3}) + "i8>";
    std::string w2 = "tensor<" + dims({oc, ic, 1, 1}) + perAxis(sW2) + ">";
    std::string w2a = "tensor<" + dims({oc, ic, 1, 1}) + "i8>";
    std::string tt = "tensor<" + std::to_string(oc) + "x3xi32>";
    auto [m0, m1, s] = addQuant();
    return "func.func @main(%x: " + f32 + " {kiln.name = \"x\"}) -> (" + fo +
           " {kiln.name = \"y\"}) {\n"
           "  %q = tpu.cast %x : (" + f32 + ") -> " + qx + " loc(\"q\")\n"
           "  %w1 = top.weight {value = dense<0> : " + w1a + "} : " + w1 + " loc(\"w1\")\n"
           "  %t1 = top.weight {value = dense<0> : " + tt + "} : " + tt + " loc(\"t1\")\n"
           "  %c1 = tpu.conv2d %q, %w1, %t1 {kernel_shape = array<i64: 3, 3>, strides = "
           "array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group "
           "= 1 : i64, do_relu = true} : (" + qx + ", " + w1 + ", " + tt + ") -> " + qc +
           " loc(\"c1\")\n"
           "  %w2 = top.weight {value = dense<0> : " + w2a + "} : " + w2 + " loc(\"w2\")\n"
           "  %t2 = top.weight {value = dense<0> : " + tt + "} : " + tt + " loc(\"t2\")\n"
           "  %c2 = tpu.conv2d %q, %w2, %t2 {kernel_shape = array<i64: 1, 1>, strides = "
           "array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group "
           "= 1 : i64, do_relu = false} : (" + qx + ", " + w2 + ", " + tt + ") -> " + qc2 +
           " loc(\"c2\")\n"
           "  %a = tpu.eltwise %c1, %c2 {kind = 0 : i32, do_relu = false, quant = #tpu.requant<m0 = " +
           std::to_string(m0) + ", m1 = " + std::to_string(m1) + ", rshift = " + std::to_string(s) +
           ">} : (" + qc + ", " + qc2 + ") -> " + qa + " loc(\"a\")\n"
           "  %lut = top.weight {value = dense<0> : tensor<256xi8>} : tensor<256xi8> loc(\"lut\")\n"
           "  %s = tpu.active %a, %lut {mode = 2 : i32, alpha = 0.0 : f64, beta = 0.0 : f64} : (" +
           qa + ", tensor<256xi8>) -> " + qo + " loc(\"s\")\n"
           "  %y = tpu.cast %s : (" + qo + ") -> " + fo + " loc(\"y\")\n"
           "  return %y : " + fo + "\n}\n";
  }

  /// Eltwise add: m0 / 2^s = sC / sA, m1 / 2^s = sC2 / sA.
  std::tuple<int64_t, int64_t, int64_t> addQuant() const {
    auto [m, s] = multiplier(std::max(sC, sC2) / sA);
    double scale = std::ldexp(1.0, s);
    return {std::llround(sC / sA * scale), std::llround(sC2 / sA * scale), s};
  }

  std::vector<int32_t> table(const std::vector<double> &sw, const std::vector<float> &bias,
                             double sOutConv) const {
    std::vector<int32_t> t;
    for (int64_t o = 0; o < oc; ++o) {
      double sAcc = sIn * wScale(sw, o);
      auto [m, s] = multiplier(sAcc / sOutConv);
      t.push_back((int32_t)std::llround(bias[o] / sAcc));
      t.push_back(m);
      t.push_back(s);
    }
    return t;
  }

  std::vector<int8_t> lut() const {
    std::vector<int8_t> t(256);
    for (int q = -128; q < 128; ++q) {
      float x = kiln_dequantize_i8(q, (float)sA, zpA);
      t[(uint8_t)q] = kiln_quantize_f32(1.f / (1.f + std::exp(-x)), (float)sOut, zpOut);
    }
    return t;
  }

  /// The closed form of docs/precision.md.
  std::vector<float> reference(const std::vector<float> &x, const std::vector<int8_t> &w1,
                               const std::vector<int32_t> &t1, const std::vector<int8_t> &w2,
                               const std::vector<int32_t> &t2) const {
    int64_t hw = h * w;
    std::vector<int8_t> qx(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      qx[i] = kiln_quantize_f32(x[i], (float)sIn, zpIn);
    auto conv = [&](const std::vector<int8_t> &wt, const std::vector<int32_t> &t, int k,
                    int zpOutConv, bool relu) {
      std::vector<int8_t> out(oc * hw);
      int pad = k / 2;
      for (int64_t o = 0; o < oc; ++o)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t xx = 0; xx < w; ++xx) {
            int64_t acc = t[o * 3];
            for (int64_t i = 0; i < ic; ++i)
              for (int ky = 0; ky < k; ++ky)
                for (int kx = 0; kx < k; ++kx) {
                  int64_t iy = y + ky - pad, ix = xx + kx - pad;
                  if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                    continue;
                  acc += (int64_t)(qx[i * hw + iy * w + ix] - zpIn) *
                         wt[((o * ic + i) * k + ky) * k + kx];
                }
            int8_t v = kiln_requant_i8(acc, t[o * 3 + 1], t[o * 3 + 2], zpOutConv);
            if (relu)
              v = std::max<int8_t>(v, zpOutConv);
            out[o * hw + y * w + xx] = v;
          }
      return out;
    };
    auto c1 = conv(w1, t1, 3, zpC, true), c2 = conv(w2, t2, 1, zpC2, false);
    auto [m0, m1, s] = addQuant();
    auto table = lut();
    std::vector<float> y(oc * hw);
    for (size_t i = 0; i < y.size(); ++i) {
      int64_t v = (int64_t)(c1[i] - zpC) * m0 + (int64_t)(c2[i] - zpC2) * m1;
      int8_t a = kiln_requant_i8(v, 1, s, zpA);
      y[i] = kiln_dequantize_i8(table[(uint8_t)a], (float)sOut, zpOut);
    }
    return y;
  }
};

struct Int8Case {
  Int8Net net;
  std::vector<float> x, b1, b2;
  std::vector<int8_t> w1, w2;
  std::vector<int32_t> t1, t2;

  explicit Int8Case(Int8Net n) : net(n) {
    x = noise(net.ic * net.h * net.w, 11, -4.f, 4.f);
    w1 = noiseI8(net.oc * net.ic * 9, 12, -127, 127);
    w2 = noiseI8(net.oc * net.ic, 13, -127, 127);
    b1 = noise(net.oc, 14, -1.f, 1.f);
    b2 = noise(net.oc, 15, -1.f, 1.f);
    t1 = net.table(net.sW, b1, net.sC);
    t2 = net.table(net.sW2, b2, net.sC2);
  }
  void fill(ModuleOp m) const {
    setWeight(m, "w1", rawOf(w1));
    setWeight(m, "w2", rawOf(w2));
    setWeight(m, "t1", rawOf(t1));
    setWeight(m, "t2", rawOf(t2));
    setWeight(m, "lut", rawOf(net.lut()));
  }
};

using TpuInterpInt8 = TpuInterp;

TEST_F(TpuInterpInt8, ClosedForm) {
  Int8Case c(Int8Net{3, 4, 6, 7});
  auto m = parse(c.net.ir());
  ASSERT_TRUE(m);
  c.fill(*m);
  interp::TensorMap outputs, all;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", {{1, 3, 6, 7}, c.x}}}, outputs, &all)));
  std::vector<float> want = c.net.reference(c.x, c.w1, c.t1, c.w2, c.t2);
  expectBitwise(outputs["y"].data, want);
  // Intermediates are dequantized: the quantized input is within half a step.
  ASSERT_EQ(all["q"].data.size(), c.x.size());
  for (size_t i = 0; i < c.x.size(); ++i)
    EXPECT_NEAR(all["q"].data[i], std::clamp(c.x[i], (-128 + 3) * 0.0625f, (127 + 3) * 0.0625f),
                0.0625 / 2 + 1e-6);
}

TEST_F(TpuInterpInt8, ReferenceFeedsEachLayerExactInputs) {
  Int8Case c(Int8Net{3, 4, 6, 7});
  auto m = parse(c.net.ir());
  ASSERT_TRUE(m);
  c.fill(*m);
  interp::TensorMap outputs, all;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", {{1, 3, 6, 7}, c.x}}}, outputs, &all)));
  // A run's own values are exact in their dtypes: fed back, nothing changes.
  interp::TensorMap fed, fedAll;
  ASSERT_TRUE(succeeded(
      interp::runTpu(mainOf(*m), {{"x", {{1, 3, 6, 7}, c.x}}}, fed, &fedAll, &all)));
  {
    SCOPED_TRACE("fed back");
    expectBitwise(fed["y"].data, outputs["y"].data);
  }
  // A reference for "q" (the cast of x) replaces what the convs read: the
  // result is the plain run on that input, while "q" itself stays the cast
  // of x (each layer's own result).
  std::vector<float> other = noise(c.x.size(), 99, -4.f, 4.f);
  interp::TensorMap reference{{"q", {{1, 3, 6, 7}, other}}}, replaced, replacedAll, plain;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", {{1, 3, 6, 7}, c.x}}}, replaced,
                                       &replacedAll, &reference)));
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", {{1, 3, 6, 7}, other}}}, plain)));
  {
    SCOPED_TRACE("q replaced");
    expectBitwise(replaced["y"].data, plain["y"].data);
    expectBitwise(replacedAll["q"].data, all["q"].data);
  }
  EXPECT_NE(replaced["y"].data, outputs["y"].data);
  // A reference of another shape is not substituted.
  interp::TensorMap misshapen{{"q", {{1, 3, 7, 6}, other}}}, kept;
  ASSERT_TRUE(
      succeeded(interp::runTpu(mainOf(*m), {{"x", {{1, 3, 6, 7}, c.x}}}, kept, nullptr, &misshapen)));
  expectBitwise(kept["y"].data, outputs["y"].data);
}

TEST_F(TpuInterpInt8, MatchesCompiledNet) {
  Int8Case c(Int8Net{3, 4, 10, 12});
  auto m = parse(c.net.ir());
  ASSERT_TRUE(m);
  c.fill(*m);
  interp::Tensor x{{1, 3, 10, 12}, c.x};
  interp::TensorMap outputs;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", x}}, outputs)));
  expectBitwise(outputs["y"].data, c.net.reference(c.x, c.w1, c.t1, c.w2, c.t2));
  expectBitwise(runCompiled(*m, {x}), outputs["y"].data);
}

TEST_F(TpuInterpInt8, SlicedGroupMatchesCompiledNet) {
  // The f32 input alone is 128 KiB per lane: the group must slice.
  Int8Case c(Int8Net{16, 16, 128, 256});
  auto m = parse(c.net.ir());
  ASSERT_TRUE(m);
  c.fill(*m);
  interp::Tensor x{{1, 16, 128, 256}, c.x};
  interp::TensorMap outputs;
  ASSERT_TRUE(succeeded(interp::runTpu(mainOf(*m), {{"x", x}}, outputs)));
  bool sliced = false;
  expectBitwise(runCompiled(*m, {x}, &sliced), outputs["y"].data);
  EXPECT_TRUE(sliced);
}

//===----------------------------------------------------------------------===//
// Sizes and dtypes in the bmodel
//===----------------------------------------------------------------------===//

TEST_F(TpuInterpInt8, BmodelTensorsCarryDtypes) {
  Int8Case c(Int8Net{3, 4, 6, 7});
  auto m = parse(c.net.ir());
  ASSERT_TRUE(m);
  c.fill(*m);
  PassManager pm(&ctx);
  pm.addNestedPass<func::FuncOp>(tpu::createLayerGroupPass(8, false));
  pm.addPass(tpu::createAddressAssignPass());
  ASSERT_TRUE(succeeded(pm.run(*m)));
  auto net = codegen::generateNet(*m, "dtypes");
  ASSERT_TRUE(succeeded(net));
  EXPECT_EQ(net->inputs[0].dtype, KILN_DTYPE_F32);
  EXPECT_EQ(net->inputs[0].size, 3u * 6 * 7 * 4);
  bool sawInt8 = false;
  for (const auto &t : net->tensors)
    if (t.name == "q") {
      sawInt8 = true;
      EXPECT_EQ(t.dtype, KILN_DTYPE_INT8);
      EXPECT_EQ(t.size, 3u * 6 * 7);
      EXPECT_FLOAT_EQ(t.scale, 0.0625f);
      EXPECT_EQ(t.zeroPoint, -3);
    }
  EXPECT_TRUE(sawInt8);
  // The coefficients hold the INT8 filter bytes as given.
  int64_t w1At = -1;
  mainOf(*m).walk([&](top::WeightOp w) {
    if (cast<NameLoc>(w.getLoc()).getName() == "w1")
      w1At = cast<IntegerAttr>(w->getAttrOfType<ArrayAttr>("ddr_addr")[0]).getInt();
  });
  ASSERT_GE(w1At, 0);
  EXPECT_EQ(std::memcmp(net->coeff.data() + w1At, c.w1.data(), c.w1.size()), 0);
  // The cast records: quantize with the output's scale and zero point.
  bool sawCast = false;
  for (const auto &g : net->groups)
    for (const auto &r : g.tiu)
      if (r.op == KILN_TIU_CAST && r.out.dtype == KILN_DTYPE_INT8) {
        sawCast = true;
        EXPECT_EQ(r.param[0], 0.0625f);
        EXPECT_EQ(kiln_zero_point(r.aux[2], 2), -3);
        EXPECT_EQ(r.in0.dtype, KILN_DTYPE_F32);
      } else if (r.op == KILN_TIU_CONV) {
        EXPECT_EQ(r.in2.dtype, KILN_DTYPE_INT32);
        EXPECT_EQ(r.in2.w, 3u);
        EXPECT_TRUE(r.flags & KILN_TIU_FLAG_HAS_BIAS);
      } else if (r.op == KILN_TIU_ACTIVE) {
        EXPECT_EQ(r.in1.dtype, KILN_DTYPE_INT8);
        EXPECT_EQ(r.in1.w, 256u);
      }
  EXPECT_TRUE(sawCast);
}

} // namespace
