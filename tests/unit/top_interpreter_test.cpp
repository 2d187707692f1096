// The Top interpreter against hand-computed values, independent naive
// formulas and (when /usr/bin/python3 has torch) PyTorch.
#include "kiln/Interpreter/TopInterpreter.h"

#include "kiln/Dialect/Top/IR/TopOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using kiln::interp::runTop;
using kiln::interp::Tensor;
using kiln::interp::TensorMap;

namespace {

using Shape = std::vector<int64_t>;

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Deterministic values in [-1, 1) so failures reproduce.
std::vector<float> pseudoRandom(int64_t count, uint32_t seed) {
  std::vector<float> values(count);
  for (float &v : values) {
    seed = seed * 1664525u + 1013904223u;
    v = float(seed >> 8) / float(1u << 23) - 1.0f;
  }
  return values;
}

std::vector<float> iota(int64_t count, float start = 0) {
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = start + float(i);
  return values;
}

std::string tensorType(const Shape &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

/// A top.weight line; the hex form of a dense attribute takes any shape.
std::string weight(const std::string &name, const Shape &shape,
                   const std::vector<float> &data) {
  std::string hex = "0x";
  const auto *bytes = reinterpret_cast<const unsigned char *>(data.data());
  char buf[3];
  for (size_t i = 0; i < data.size() * sizeof(float); ++i) {
    std::snprintf(buf, sizeof(buf), "%02X", bytes[i]);
    hex += buf;
  }
  std::string type = tensorType(shape);
  return "    %" + name + " = top.weight {value = dense<\"" + hex +
         "\"> : " + type + "} : " + type + "\n";
}

void expectClose(const Tensor &actual, const Shape &shape,
                 const std::vector<float> &expected, float tolerance = 1e-5f) {
  ASSERT_EQ(actual.shape, shape);
  ASSERT_EQ(actual.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual.data[i], expected[i],
                tolerance * std::max(1.0f, std::fabs(expected[i])))
        << "at flat index " << i;
}

class TopInterpreterTest : public ::testing::Test {
protected:
  TopInterpreterTest() {
    context.loadDialect<func::FuncDialect, kiln::top::TopDialect>();
  }

  /// Parses `ir` and runs its @main; diagnostics go to `diagnostics`.
  LogicalResult run(const std::string &ir, const TensorMap &inputs,
                    TensorMap &outputs, TensorMap *allValues = nullptr) {
    diagnostics.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(ir, ParserConfig(&context));
    if (!module) {
      ADD_FAILURE() << "parse failed:\n" << diagnostics << ir;
      return failure();
    }
    auto func = module->lookupSymbol<func::FuncOp>("main");
    if (!func) {
      ADD_FAILURE() << "no @main";
      return failure();
    }
    return runTop(func, inputs, outputs, allValues);
  }

  /// Runs a one-output module and returns that output.
  Tensor runOne(const std::string &ir, const TensorMap &inputs) {
    TensorMap outputs;
    EXPECT_TRUE(succeeded(run(ir, inputs, outputs))) << diagnostics;
    EXPECT_EQ(outputs.size(), 1u);
    return outputs.empty() ? Tensor{} : outputs.begin()->second;
  }

  MLIRContext context;
  std::string diagnostics;
};

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

struct ConvParams {
  int64_t strideH, strideW, padTop, padLeft, padBottom, padRight, dilH, dilW,
      group;
};

/// Scatter-form convolution: every input pixel adds into each output it
/// reaches. A different loop structure from the interpreter's gather form.
std::vector<float> scatterConv(const std::vector<float> &in, const Shape &is,
                               const std::vector<float> &w, const Shape &ws,
                               const std::vector<float> &bias,
                               const ConvParams &p, int64_t oh, int64_t ow) {
  int64_t n = is[0], ic = is[1], ih = is[2], iw = is[3];
  int64_t oc = ws[0], icg = ws[1], kh = ws[2], kw = ws[3];
  int64_t ocg = oc / p.group;
  std::vector<double> out(n * oc * oh * ow, 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < ic; ++c)
      for (int64_t y = 0; y < ih; ++y)
        for (int64_t x = 0; x < iw; ++x)
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
              int64_t ty = y + p.padTop - ky * p.dilH;
              int64_t tx = x + p.padLeft - kx * p.dilW;
              if (ty < 0 || tx < 0 || ty % p.strideH || tx % p.strideW)
                continue;
              int64_t oy = ty / p.strideH, ox = tx / p.strideW;
              if (oy >= oh || ox >= ow)
                continue;
              int64_t g = c / icg;
              for (int64_t o = g * ocg; o < (g + 1) * ocg; ++o)
                out[((b * oc + o) * oh + oy) * ow + ox] +=
                    double(in[((b * ic + c) * ih + y) * iw + x]) *
                    w[((o * icg + c % icg) * kh + ky) * kw + kx];
            }
  std::vector<float> result(out.size());
  for (size_t i = 0; i < out.size(); ++i)
    result[i] =
        float(out[i] + (bias.empty() ? 0.0 : bias[(i / (oh * ow)) % oc]));
  return result;
}

TEST_F(TopInterpreterTest, ConvByHand) {
  // 3x3 ramp, 2x2 ones: each output is the sum of a 2x2 block.
  std::string ir =
      "func.func @main(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {\n" +
      weight("w", {1, 1, 2, 2}, {1, 1, 1, 1}) + R"(
    %n = top.none
    %y = top.conv %x, %w, %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>,
        pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
        : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, none) -> tensor<1x1x2x2xf32>
    return %y : tensor<1x1x2x2xf32>
  })";
  Tensor y = runOne(ir, {{"arg0", {{1, 1, 3, 3}, iota(9, 1)}}});
  expectClose(y, {1, 1, 2, 2}, {12, 16, 24, 28});
}

TEST_F(TopInterpreterTest, ConvStridePadDilationGroups) {
  Shape is = {2, 4, 7, 6}, ws = {6, 2, 3, 3};
  ConvParams p{2, 2, 1, 2, 0, 1, 2, 1, 2};
  // H: (7 + 1 + 0 - 2*2 - 1) / 2 + 1 = 2; W: (6 + 2 + 1 - 2 - 1) / 2 + 1 = 4.
  Shape os = {2, 6, 2, 4};
  auto x = pseudoRandom(numElements(is), 1);
  auto w = pseudoRandom(numElements(ws), 2);
  auto b = pseudoRandom(6, 3);
  std::string ir = "func.func @main(%x: " + tensorType(is) +
                   " {kiln.name = \"image\"}) -> (" + tensorType(os) +
                   " {kiln.name = \"features\"}) {\n" + weight("w", ws, w) +
                   weight("b", {6}, b) + R"(
    %y = top.conv %x, %w, %b {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
        pads = array<i64: 1, 2, 0, 1>, dilations = array<i64: 2, 1>, group = 2 : i64}
        : (tensor<2x4x7x6xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x2x4xf32>
    return %y : tensor<2x6x2x4xf32>
  })";
  TensorMap outputs;
  ASSERT_TRUE(succeeded(run(ir, {{"image", {is, x}}}, outputs))) << diagnostics;
  ASSERT_EQ(outputs.count("features"), 1u);
  expectClose(outputs["features"], os, scatterConv(x, is, w, ws, b, p, 2, 4));
}

TEST_F(TopInterpreterTest, ConvWithComputedFilter) {
  // A modulated convolution: the filter is a graph value, read when it runs.
  Shape is = {1, 2, 4, 4}, ws = {3, 2, 2, 2};
  auto x = pseudoRandom(numElements(is), 4);
  auto w = pseudoRandom(numElements(ws), 5);
  std::vector<float> style = {0.5f, -2.0f, 3.0f};
  std::string ir =
      "func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x3x3xf32> {\n" +
      weight("w", ws, w) + weight("s", {3, 1, 1, 1}, style) + R"(
    %f = top.mul %w, %s : (tensor<3x2x2x2xf32>, tensor<3x1x1x1xf32>) -> tensor<3x2x2x2xf32>
    %n = top.none
    %y = top.conv %x, %f, %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>,
        pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, do_relu = true}
        : (tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32>, none) -> tensor<1x3x3x3xf32>
    return %y : tensor<1x3x3x3xf32>
  })";
  std::vector<float> modulated(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    modulated[i] = w[i] * style[i / 8];
  auto expected =
      scatterConv(x, is, modulated, ws, {}, {1, 1, 0, 0, 0, 0, 1, 1, 1}, 3, 3);
  bool sawNegative = false;
  for (float &v : expected) {
    sawNegative |= v < 0;
    v = std::max(v, 0.0f);
  }
  EXPECT_TRUE(sawNegative) << "the test should exercise do_relu";
  expectClose(runOne(ir, {{"arg0", {is, x}}}), {1, 3, 3, 3}, expected);
}

TEST_F(TopInterpreterTest, DenseResourceWeight) {
  // Blob: alignment 4, then 1.0f, 2.0f, 3.0f, 4.0f little-endian.
  std::string ir = R"(
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %w = top.weight {value = dense_resource<blob> : tensor<4xf32>} : tensor<4xf32>
    %y = top.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
  {-#
    dialect_resources: {
      builtin: {
        blob: "0x040000000000803F000000400000404000008040"
      }
    }
  #-})";
  expectClose(runOne(ir, {{"arg0", {{4}, {10, 20, 30, 40}}}}), {4},
              {11, 22, 33, 44});
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

std::string poolModule(const std::string &op, const Shape &in, const Shape &out,
                       const std::string &attrs) {
  return "func.func @main(%x: " + tensorType(in) + ") -> " + tensorType(out) +
         " {\n  %y = top." + op + " %x {" + attrs + "} : (" + tensorType(in) +
         ") -> " + tensorType(out) + "\n  return %y : " + tensorType(out) +
         "\n}";
}

TEST_F(TopInterpreterTest, MaxPoolCeilMode) {
  // 5x5 ramp, 2x2 stride 2: ceil_mode keeps the partial last row and column.
  std::string ir =
      poolModule("maxpool", {1, 1, 5, 5}, {1, 1, 3, 3},
                 "kernel_shape = array<i64: 2, 2>, strides = "
                 "array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, "
                 "ceil_mode = true");
  expectClose(runOne(ir, {{"arg0", {{1, 1, 5, 5}, iota(25)}}}), {1, 1, 3, 3},
              {6, 8, 9, 16, 18, 19, 21, 23, 24});
}

TEST_F(TopInterpreterTest, MaxPoolCeilModeDropsWindowInEndPadding) {
  // in 5, k 2, s 3, pads 1/1: ceil((5+2-2)/3)+1 = 3, but the third window
  // would start at 5, inside the end padding, so there are 2. Padding never
  // wins the max even though every input value is negative.
  std::string ir =
      poolModule("maxpool", {1, 1, 1, 5}, {1, 1, 1, 2},
                 "kernel_shape = array<i64: 1, 2>, strides = "
                 "array<i64: 1, 3>, pads = array<i64: 0, 1, 0, 1>, "
                 "ceil_mode = true");
  expectClose(runOne(ir, {{"arg0", {{1, 1, 1, 5}, {-1, -2, -3, -4, -5}}}}),
              {1, 1, 1, 2}, {-1, -3});
}

TEST_F(TopInterpreterTest, AvgPoolCountIncludePad) {
  // 3x3 ramp 1..9, 2x2 stride 2, one pixel of padding on every side.
  const char *attrs = "kernel_shape = array<i64: 2, 2>, strides = array<i64: "
                      "2, 2>, pads = array<i64: 1, 1, 1, 1>";
  TensorMap in = {{"arg0", {{1, 1, 3, 3}, iota(9, 1)}}};
  // Windows hold {1}, {2, 3}, {4, 7}, {5, 6, 8, 9}.
  expectClose(
      runOne(poolModule("avgpool", {1, 1, 3, 3}, {1, 1, 2, 2}, attrs), in),
      {1, 1, 2, 2}, {1, 2.5, 5.5, 7});
  expectClose(
      runOne(poolModule("avgpool", {1, 1, 3, 3}, {1, 1, 2, 2},
                        std::string(attrs) + ", count_include_pad = true"),
             in),
      {1, 1, 2, 2}, {0.25, 1.25, 2.75, 7});
}

TEST_F(TopInterpreterTest, AvgPoolCeilModeNeverCountsBeyondPaddedInput) {
  // 3x3 ramp 1..9, 2x2 stride 2, no pads, ceil_mode: the last windows hang
  // past the input; with no padding there is nothing extra to count.
  const char *attrs = "kernel_shape = array<i64: 2, 2>, strides = array<i64: "
                      "2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true, "
                      "count_include_pad = true";
  expectClose(runOne(poolModule("avgpool", {1, 1, 3, 3}, {1, 1, 2, 2}, attrs),
                     {{"arg0", {{1, 1, 3, 3}, iota(9, 1)}}}),
              {1, 1, 2, 2}, {3, 4.5, 7.5, 9});

  // in 4, k 3, s 2, pads 1/1, ceil: 3 windows; the last covers [3, 6) of
  // which only [3, 5) is input or padding, so it divides by 2 (one real).
  const char *padded =
      "kernel_shape = array<i64: 1, 3>, strides = array<i64: "
      "1, 2>, pads = array<i64: 0, 1, 0, 1>, ceil_mode = true, "
      "count_include_pad = true";
  expectClose(runOne(poolModule("avgpool", {1, 1, 1, 4}, {1, 1, 1, 3}, padded),
                     {{"arg0", {{1, 1, 1, 4}, {1, 2, 3, 4}}}}),
              {1, 1, 1, 3}, {3.0f / 3, 9.0f / 3, 4.0f / 2});
}

TEST_F(TopInterpreterTest, GlobalAvgPool) {
  std::string ir = R"(
  func.func @main(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32> {
    %y = top.global_avgpool %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32>
    return %y : tensor<1x2x1x1xf32>
  })";
  expectClose(runOne(ir, {{"arg0", {{1, 2, 2, 2}, iota(8)}}}), {1, 2, 1, 1},
              {1.5, 5.5});
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_F(TopInterpreterTest, AddBroadcastsPerChannel) {
  std::string ir = R"(
  func.func @main(%b: tensor<1x3x1x1xf32>, %x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
    %y = top.add %b, %x : (tensor<1x3x1x1xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
    return %y : tensor<1x3x4x4xf32>
  })";
  auto x = pseudoRandom(48, 7);
  std::vector<float> b = {100, 200, 300}, expected(48);
  for (int i = 0; i < 48; ++i)
    expected[i] = b[i / 16] + x[i];
  expectClose(
      runOne(ir, {{"arg0", {{1, 3, 1, 1}, b}}, {"arg1", {{1, 3, 4, 4}, x}}}),
      {1, 3, 4, 4}, expected);
}

TEST_F(TopInterpreterTest, AddAndMulBroadcastAcrossRanks) {
  std::string ir = R"(
  func.func @main(%v: tensor<4xf32>, %m: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
    %s = top.add %v, %m : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %p = top.mul %m, %v {do_relu = true} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    return %s, %p : tensor<2x4xf32>, tensor<2x4xf32>
  })";
  std::vector<float> v = {1, -2, 3, -4}, m = iota(8, -3);
  std::vector<float> sum(8), prod(8);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c) {
      sum[r * 4 + c] = v[c] + m[r * 4 + c];
      prod[r * 4 + c] = std::max(v[c] * m[r * 4 + c], 0.0f);
    }
  TensorMap outputs;
  ASSERT_TRUE(
      succeeded(run(ir, {{"arg0", {{4}, v}}, {"arg1", {{2, 4}, m}}}, outputs)))
      << diagnostics;
  expectClose(outputs["out0"], {2, 4}, sum);
  expectClose(outputs["out1"], {2, 4}, prod);
}

TEST_F(TopInterpreterTest, BatchNormAndRelu) {
  std::string ir =
      "func.func @main(%x: tensor<1x2x1x2xf32>) -> tensor<1x2x1x2xf32> {\n" +
      weight("g", {2}, {2, 1}) + weight("b", {2}, {1, -10}) +
      weight("m", {2}, {1, 0}) + weight("v", {2}, {3.99999f, 0.99999f}) + R"(
    %n = top.batchnorm %x, %g, %b, %m, %v {epsilon = 1.0e-05 : f64}
        : (tensor<1x2x1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x1x2xf32>
    %y = top.relu %n : (tensor<1x2x1x2xf32>) -> tensor<1x2x1x2xf32>
    return %y : tensor<1x2x1x2xf32>
  })";
  // Channel 0: (x - 1) / 2 * 2 + 1 = x; channel 1: x - 10, then relu.
  expectClose(runOne(ir, {{"arg0", {{1, 2, 1, 2}, {3, -5, 12, 7}}}}),
              {1, 2, 1, 2}, {3, 0, 2, 0});
}

//===----------------------------------------------------------------------===//
// MatMul, reshape, concat
//===----------------------------------------------------------------------===//

TEST_F(TopInterpreterTest, MatMulRightTransposeWithBias) {
  Shape is = {2, 3, 4};
  auto x = pseudoRandom(24, 8), w = pseudoRandom(20, 9),
       b = pseudoRandom(5, 10);
  std::string ir =
      "func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2x3x5xf32> {\n" +
      weight("w", {5, 4}, w) + weight("b", {5}, b) + R"(
    %y = top.matmul %x, %w, %b {right_transpose = true}
        : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
    return %y : tensor<2x3x5xf32>
  })";
  std::vector<float> expected(30);
  for (int r = 0; r < 6; ++r)
    for (int j = 0; j < 5; ++j) {
      double acc = b[j];
      for (int k = 0; k < 4; ++k)
        acc += double(x[r * 4 + k]) * w[j * 4 + k];
      expected[r * 5 + j] = float(acc);
    }
  expectClose(runOne(ir, {{"arg0", {is, x}}}), {2, 3, 5}, expected);
}

TEST_F(TopInterpreterTest, MatMulPlainWithRelu) {
  std::string ir =
      "func.func @main(%x: tensor<2x2xf32>) -> tensor<2x3xf32> {\n" +
      weight("w", {2, 3}, {1, 2, 3, -4, -5, -6}) + R"(
    %n = top.none
    %y = top.matmul %x, %w, %n {do_relu = true} : (tensor<2x2xf32>, tensor<2x3xf32>, none) -> tensor<2x3xf32>
    return %y : tensor<2x3xf32>
  })";
  // [1 1] -> [-3 -3 -3] -> 0; [2 0] -> [2 4 6].
  expectClose(runOne(ir, {{"arg0", {{2, 2}, {1, 1, 2, 0}}}}), {2, 3},
              {0, 0, 0, 2, 4, 6});
}

TEST_F(TopInterpreterTest, ReshapeAndConcat) {
  std::string ir = R"(
  func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x1xf32>) -> (tensor<3x3xf32>, tensor<6x2xf32>) {
    %r = top.reshape %a {shape = array<i64: 3, -1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %c = top.concat %r, %b {axis = -1 : i64} : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x3xf32>
    %d = top.concat %r, %r {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
    return %c, %d : tensor<3x3xf32>, tensor<6x2xf32>
  })";
  TensorMap outputs;
  ASSERT_TRUE(succeeded(
      run(ir, {{"arg0", {{2, 3}, iota(6)}}, {"arg1", {{3, 1}, {10, 11, 12}}}},
          outputs)))
      << diagnostics;
  expectClose(outputs["out0"], {3, 3}, {0, 1, 10, 2, 3, 11, 4, 5, 12});
  expectClose(outputs["out1"], {6, 2}, {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
}

//===----------------------------------------------------------------------===//
// Names, per-layer values and failures
//===----------------------------------------------------------------------===//

TEST_F(TopInterpreterTest, RecordsEveryLayerByName) {
  std::string ir = R"(
  func.func @main(%x: tensor<2xf32> {kiln.name = "in"}) -> (tensor<2xf32> {kiln.name = "out"}) {
    %w = top.weight {value = dense<[1.0, -5.0]> : tensor<2xf32>} : tensor<2xf32> loc("w")
    %a = top.add %x, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("add1")
    %r = top.relu %a : (tensor<2xf32>) -> tensor<2xf32> loc(fused["relu1", "x.py":3:1])
    return %r : tensor<2xf32>
  })";
  TensorMap outputs, all;
  ASSERT_TRUE(succeeded(run(ir, {{"in", {{2}, {1, 2}}}}, outputs, &all)))
      << diagnostics;
  expectClose(outputs["out"], {2}, {2, 0});
  EXPECT_EQ(all.size(), 2u) << "weights are not layers";
  expectClose(all["add1"], {2}, {2, -3});
  expectClose(all["relu1"], {2}, {2, 0});
}

TEST_F(TopInterpreterTest, MissingInputFails) {
  std::string ir = R"(
  func.func @main(%x: tensor<2xf32> {kiln.name = "image"}) -> tensor<2xf32> {
    %y = top.relu %x : (tensor<2xf32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  })";
  TensorMap outputs;
  EXPECT_TRUE(failed(run(ir, {{"arg0", {{2}, {1, 2}}}}, outputs)));
  EXPECT_NE(diagnostics.find("missing input 'image'"), std::string::npos)
      << diagnostics;
}

TEST_F(TopInterpreterTest, InputShapeMismatchFails) {
  std::string ir = R"(
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = top.relu %x : (tensor<2xf32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  })";
  TensorMap outputs;
  EXPECT_TRUE(failed(run(ir, {{"arg0", {{3}, {1, 2, 3}}}}, outputs)));
  EXPECT_NE(diagnostics.find("has shape [3]"), std::string::npos)
      << diagnostics;
}

TEST_F(TopInterpreterTest, StaleResultTypeFails) {
  // The result type claims 3x3, but a 2x2 ones filter on 3x3 gives 2x2.
  std::string ir =
      "func.func @main(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {\n" +
      weight("w", {1, 1, 2, 2}, {1, 1, 1, 1}) + R"(
    %n = top.none
    %y = top.conv %x, %w, %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>,
        pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
        : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, none) -> tensor<1x1x3x3xf32>
    return %y : tensor<1x1x3x3xf32>
  })";
  TensorMap outputs;
  EXPECT_TRUE(failed(run(ir, {{"arg0", {{1, 1, 3, 3}, iota(9)}}}, outputs)));
  EXPECT_NE(diagnostics.find("computes shape [1, 1, 2, 2]"), std::string::npos)
      << diagnostics;
}

TEST_F(TopInterpreterTest, UnknownOpFails) {
  context.allowUnregisteredDialects();
  std::string ir = R"(
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = "test.mystery"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  })";
  TensorMap outputs;
  EXPECT_TRUE(failed(run(ir, {{"arg0", {{2}, {1, 2}}}}, outputs)));
  EXPECT_NE(diagnostics.find("not supported by the Top interpreter"),
            std::string::npos)
      << diagnostics;
}

//===----------------------------------------------------------------------===//
// New ops by hand
//===----------------------------------------------------------------------===//

TEST_F(TopInterpreterTest, BinaryOpsBroadcast) {
  std::string ir = R"(
  func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
    %0 = top.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %1 = top.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %2 = top.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %3 = top.max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %4 = top.min %a, %b {do_relu = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %5 = top.prelu %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    return %0, %1, %2, %3, %4, %5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  })";
  std::vector<float> a = {-2, 1, 4, 3, -1, 0.5f}, b = {2, -1, 0.5f};
  TensorMap outputs;
  ASSERT_TRUE(
      succeeded(run(ir, {{"arg0", {{2, 3}, a}}, {"arg1", {{3}, b}}}, outputs)))
      << diagnostics;
  expectClose(outputs["out0"], {2, 3}, {-4, 2, 3.5f, 1, 0, 0});
  expectClose(outputs["out1"], {2, 3}, {-1, -1, 8, 1.5f, 1, 1});
  expectClose(outputs["out2"], {2, 3}, {4, 1, 2, 9, -1, std::sqrt(0.5f)});
  expectClose(outputs["out3"], {2, 3}, {2, 1, 4, 3, -1, 0.5f});
  expectClose(outputs["out4"], {2, 3}, {0, 0, 0.5f, 2, 0, 0.5f});
  // prelu: negative inputs times the slope.
  expectClose(outputs["out5"], {2, 3}, {-4, 1, 4, 3, 1, 0.5f});
}

TEST_F(TopInterpreterTest, ReduceModes) {
  // [2, 3] = [[1, -2, 3], [4, 5, -6]].
  std::string ir = R"(
  func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<3xf32>, tensor<1x1xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) {
    %0 = top.reduce %x {mode = 0 : i32, axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
    %1 = top.reduce %x {mode = 1 : i32, axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
    %2 = top.reduce %x {mode = 2 : i32, axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
    %3 = top.reduce %x {mode = 3 : i32, axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
    %4 = top.reduce %x {mode = 4 : i32, axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
    %5 = top.reduce %x {mode = 5 : i32, axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
    return %0, %1, %2, %3, %4, %5 : tensor<2x1xf32>, tensor<3xf32>, tensor<1x1xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>
  })";
  TensorMap outputs;
  ASSERT_TRUE(
      succeeded(run(ir, {{"arg0", {{2, 3}, {1, -2, 3, 4, 5, -6}}}}, outputs)))
      << diagnostics;
  expectClose(outputs["out0"], {2, 1}, {2, 3});
  expectClose(outputs["out1"], {3}, {2.5f, 1.5f, -1.5f});
  expectClose(outputs["out2"], {1, 1}, {5});
  expectClose(outputs["out3"], {2}, {-2, -6});
  expectClose(outputs["out4"], {2}, {std::sqrt(14.0f), std::sqrt(77.0f)});
  expectClose(outputs["out5"], {3}, {17, 29, 45});
}

TEST_F(TopInterpreterTest, DataMovement) {
  // x = 0..23 as [2, 3, 4].
  std::string ir = R"(
  func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<2x2x2x4xf32>, tensor<2x2x3x4xf32>, tensor<2x6x4xf32>, tensor<1x1xf32>) {
    %0 = top.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    %1 = top.slice %x {starts = array<i64: 1, 0, 3>, ends = array<i64: -1, 3, -1>, steps = array<i64: -1, 2, -2>} : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
    %2 = top.gather %x {axis = 1 : i64, indices = array<i64: 2, 0>, indices_shape = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
    %3 = top.reshape %2 {shape = array<i64: 2, 2, 1, 4>} : (tensor<2x2x4xf32>) -> tensor<2x2x1x4xf32>
    %4 = top.expand %3 {shape = array<i64: 2, 1>} : (tensor<2x2x1x4xf32>) -> tensor<2x2x2x4xf32>
    %5 = top.expand %x {shape = array<i64: 2, 2, 3, 4>} : (tensor<2x3x4xf32>) -> tensor<2x2x3x4xf32>
    %6 = top.expand %x {shape = array<i64: 2, 6, 4>, repeats = array<i64: 1, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
    %7 = top.gather %x {axis = 2 : i64, indices = array<i64: 3>, indices_shape = array<i64>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
    %8 = top.slice %7 {starts = array<i64: 1, 2>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
    return %0, %1, %4, %5, %6, %8 : tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<2x2x2x4xf32>, tensor<2x2x3x4xf32>, tensor<2x6x4xf32>, tensor<1x1xf32>
  })";
  std::vector<float> x = iota(24);
  auto at = [&](int i, int j, int k) { return x[(i * 3 + j) * 4 + k]; };
  std::vector<float> transposed, sliced, gathered, expanded, tiled;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        transposed.push_back(at(i, j, k));
  // Rows 1, 0; columns 0, 2; depth 3, 1.
  for (int i : {1, 0})
    for (int j : {0, 2})
      for (int k : {3, 1})
        sliced.push_back(at(i, j, k));
  for (int i = 0; i < 2; ++i)
    for (int j : {2, 0})
      for (int r = 0; r < 2; ++r)
        for (int k = 0; k < 4; ++k)
          gathered.push_back(at(i, j, k));
  for (int r = 0; r < 2; ++r)
    expanded.insert(expanded.end(), x.begin(), x.end());
  for (int i = 0; i < 2; ++i)
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k)
          tiled.push_back(at(i, j, k));
  TensorMap outputs;
  ASSERT_TRUE(succeeded(run(ir, {{"arg0", {{2, 3, 4}, x}}}, outputs)))
      << diagnostics;
  expectClose(outputs["out0"], {4, 2, 3}, transposed);
  expectClose(outputs["out1"], {2, 2, 2}, sliced);
  expectClose(outputs["out2"], {2, 2, 2, 4}, gathered);
  expectClose(outputs["out3"], {2, 2, 3, 4}, expanded);
  expectClose(outputs["out4"], {2, 6, 4}, tiled);
  expectClose(outputs["out5"], {1, 1}, {at(1, 2, 3)});
}

TEST_F(TopInterpreterTest, BatchedMatMulBroadcasts) {
  Shape as = {2, 1, 3, 4}, bs = {5, 4, 2};
  auto a = pseudoRandom(numElements(as), 21),
       b = pseudoRandom(numElements(bs), 22);
  std::string ir = R"(
  func.func @main(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x2xf32>) -> tensor<2x5x3x2xf32> {
    %n = top.none
    %y = top.matmul %a, %b, %n : (tensor<2x1x3x4xf32>, tensor<5x4x2xf32>, none) -> tensor<2x5x3x2xf32>
    return %y : tensor<2x5x3x2xf32>
  })";
  std::vector<float> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 2; ++c) {
          double acc = 0;
          for (int k = 0; k < 4; ++k)
            acc += double(a[(i * 3 + r) * 4 + k]) * b[(j * 4 + k) * 2 + c];
          expected.push_back(float(acc));
        }
  expectClose(runOne(ir, {{"arg0", {as, a}}, {"arg1", {bs, b}}}), {2, 5, 3, 2},
              expected);
}

TEST_F(TopInterpreterTest, GlobalMaxPool) {
  std::string ir = R"(
  func.func @main(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32> {
    %y = top.global_maxpool %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32>
    return %y : tensor<1x2x1x1xf32>
  })";
  expectClose(
      runOne(ir, {{"arg0", {{1, 2, 2, 2}, {1, -5, 3, 2, -1, -2, -3, -4}}}}),
      {1, 2, 1, 1}, {3, -1});
}

TEST_F(TopInterpreterTest, DeconvByHand) {
  // One input pixel per position, 2x2 ones filter, stride 2: each input
  // value fills its own 2x2 block; pads trim the first row and column.
  std::string ir =
      "func.func @main(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32> {\n" +
      weight("w", {1, 1, 2, 2}, {1, 1, 1, 1}) + weight("b", {1}, {10}) + R"(
    %y = top.deconv %x, %w, %b {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
        pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>}
        : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
    return %y : tensor<1x1x3x3xf32>
  })";
  expectClose(runOne(ir, {{"arg0", {{1, 1, 2, 2}, {1, 2, 3, 4}}}}),
              {1, 1, 3, 3}, {11, 12, 12, 13, 14, 14, 13, 14, 14});
}

/// A ConvTranspose by the definition, one output at a time: its products in
/// (c, iy, ix) order in double, as the interpreter adds them, then the bias,
/// rounded once.
std::vector<float> naiveDeconv(const std::vector<float> &in, const Shape &is,
                               const std::vector<float> &w, const Shape &ws,
                               const std::vector<float> &bias, int64_t group,
                               const int64_t stride[2], const int64_t pad[2],
                               const int64_t dil[2], const Shape &os) {
  int64_t ic = is[1], icg = ic / group, ocg = ws[1], kh = ws[2], kw = ws[3];
  std::vector<float> out;
  for (int64_t b = 0; b < os[0]; ++b)
    for (int64_t o = 0; o < os[1]; ++o)
      for (int64_t y = 0; y < os[2]; ++y)
        for (int64_t x = 0; x < os[3]; ++x) {
          double acc = 0;
          int64_t g = o / ocg;
          for (int64_t c = g * icg; c < (g + 1) * icg; ++c)
            for (int64_t iy = 0; iy < is[2]; ++iy)
              for (int64_t ix = 0; ix < is[3]; ++ix)
                for (int64_t ky = 0; ky < kh; ++ky)
                  for (int64_t kx = 0; kx < kw; ++kx)
                    if (iy * stride[0] + ky * dil[0] - pad[0] == y &&
                        ix * stride[1] + kx * dil[1] - pad[1] == x)
                      acc += double(in[((b * ic + c) * is[2] + iy) * is[3] + ix]) *
                             double(w[((c * ocg + o % ocg) * kh + ky) * kw + kx]);
          out.push_back(float(acc + (bias.empty() ? 0.0 : bias[o])));
        }
  return out;
}

TEST_F(TopInterpreterTest, DeconvBitsMatchTheDefinition) {
  struct Case {
    int64_t stride[2], pad[4], dil[2], outPad[2], group;
  };
  // W strides 1 to 3 (the interpreter keeps a row as its W stride's
  // phases), negative tap offsets from padding, dilation, groups.
  for (const Case &k : {Case{{1, 1}, {0, 0, 0, 0}, {1, 1}, {0, 0}, 1},
                        Case{{2, 2}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1},
                        Case{{2, 3}, {1, 2, 0, 1}, {2, 1}, {1, 0}, 2},
                        Case{{1, 3}, {0, 4, 2, 0}, {1, 2}, {0, 2}, 2}}) {
    Shape is = {2, 4, 5, 7}, ws = {4, 3, 3, 3};
    int64_t oc = ws[1] * k.group;
    int64_t oh = (is[2] - 1) * k.stride[0] - k.pad[0] - k.pad[2] + k.dil[0] * 2 + 1 + k.outPad[0];
    int64_t ow = (is[3] - 1) * k.stride[1] - k.pad[1] - k.pad[3] + k.dil[1] * 2 + 1 + k.outPad[1];
    Shape os = {2, oc, oh, ow};
    auto x = pseudoRandom(numElements(is), 41), w = pseudoRandom(numElements(ws), 42),
         b = pseudoRandom(oc, 43);
    auto list = [](std::initializer_list<int64_t> v) {
      std::string s;
      for (int64_t d : v)
        s += (s.empty() ? "" : ", ") + std::to_string(d);
      return s;
    };
    std::string ir = "func.func @main(%x: " + tensorType(is) + ") -> " + tensorType(os) +
                     " {\n" + weight("w", ws, w) + weight("b", {oc}, b) +
                     "    %y = top.deconv %x, %w, %b {kernel_shape = array<i64: 3, 3>, "
                     "strides = array<i64: " + list({k.stride[0], k.stride[1]}) +
                     ">, pads = array<i64: " + list({k.pad[0], k.pad[1], k.pad[2], k.pad[3]}) +
                     ">, dilations = array<i64: " + list({k.dil[0], k.dil[1]}) +
                     ">, output_padding = array<i64: " + list({k.outPad[0], k.outPad[1]}) +
                     ">, group = " + std::to_string(k.group) + " : i64} : (" + tensorType(is) +
                     ", " + tensorType(ws) + ", " + tensorType({oc}) + ") -> " + tensorType(os) +
                     "\n    return %y : " + tensorType(os) + "\n  }";
    Tensor y = runOne(ir, {{"arg0", {is, x}}});
    const int64_t pad[2] = {k.pad[0], k.pad[1]};
    std::vector<float> expected = naiveDeconv(x, is, w, ws, b, k.group, k.stride, pad, k.dil, os);
    ASSERT_EQ(y.shape, os);
    ASSERT_EQ(y.data.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
      ASSERT_EQ(y.data[i], expected[i]) << "stride " << k.stride[1] << ", flat index " << i;
  }
}

//===----------------------------------------------------------------------===//
// New ops against PyTorch / numpy
//===----------------------------------------------------------------------===//

/// Runs `body` in /usr/bin/python3 with `ins` (a list of flat float32 torch
/// tensors) and numpy as np, torch, F in scope; the body sets `outs`, a list
/// of tensors or arrays, whose flattened values are returned concatenated.
/// Skips the test (returns nullopt) when torch is missing.
std::optional<std::vector<float>>
torchReference(const std::string &body,
               const std::vector<std::vector<float>> &ins) {
  // ctest runs tests in parallel processes: the files are per test.
  std::string dir =
      ::testing::TempDir() + "top_interp_" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
      std::to_string(getpid());
  std::string script = dir + ".py", in = dir + ".in", out = dir + ".out";
  std::string sizes;
  for (const auto &v : ins)
    sizes += (sizes.empty() ? "" : ",") + std::to_string(v.size());
  std::ofstream(script)
      << "import sys\ntry:\n    import numpy as np\n"
         "    import torch\n    import torch.nn.functional as F\n"
         "except ImportError:\n    sys.exit(77)\n"
         "flat = np.fromfile(sys.argv[1], dtype='<f4')\n"
         "ins, start = [], 0\n"
         "for s in [int(v) for v in sys.argv[3].split(',') if v]:\n"
         "    ins.append(torch.from_numpy(flat[start:start + s].copy()))\n"
         "    start += s\n"
      << body
      << "\nnp.concatenate([np.asarray(o, dtype='<f4').ravel() "
         "for o in outs]).astype('<f4').tofile(sys.argv[2])\n";
  {
    std::ofstream file(in, std::ios::binary);
    for (const auto &v : ins)
      file.write(reinterpret_cast<const char *>(v.data()),
                 v.size() * sizeof(float));
  }
  std::remove(out.c_str());
  int status = std::system((std::string(KILN_TEST_PYTHON) + " " + script + " " +
                            in + " " + out + " " + sizes)
                               .c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
    return std::nullopt;
  EXPECT_EQ(status, 0) << body;
  std::ifstream result(out, std::ios::binary | std::ios::ate);
  std::streamsize bytes = result.tellg();
  std::vector<float> floats(bytes > 0 ? bytes / sizeof(float) : 0);
  result.seekg(0);
  result.read(reinterpret_cast<char *>(floats.data()), bytes);
  for (const std::string &file : {script, in, out})
    std::remove(file.c_str());
  return floats;
}

/// `count` values of `all` from `offset` (and advances it).
std::vector<float> take(const std::vector<float> &all, size_t &offset,
                        size_t count) {
  std::vector<float> part(all.begin() + offset, all.begin() + offset + count);
  offset += count;
  return part;
}

TEST_F(TopInterpreterTest, DeconvBothLayoutsMatchPyTorch) {
  // ic 4, oc 6, group 2: ONNX filter [4, 3, 3, 3].
  Shape is = {1, 4, 5, 5}, ws = {4, 3, 3, 3}, os = {1, 6, 12, 11};
  auto x = pseudoRandom(numElements(is), 31),
       w = pseudoRandom(numElements(ws), 32), b = pseudoRandom(6, 33);
  auto ref = torchReference(R"(
x, w, b = ins[0].reshape(1, 4, 5, 5), ins[1].reshape(4, 3, 3, 3), ins[2]
outs = [F.conv_transpose2d(x, w, b, stride=(2, 3), padding=(1, 2),
                           output_padding=(1, 0), groups=2, dilation=(2, 1))]
)",
                            {x, w, b});
  if (!ref)
    GTEST_SKIP() << "no torch";
  // The chip's layout: per group, [ic/g, oc/g] -> [oc/g, ic/g].
  std::vector<float> reordered(w.size());
  for (int g = 0; g < 2; ++g)
    for (int c = 0; c < 2; ++c)
      for (int o = 0; o < 3; ++o)
        for (int k = 0; k < 9; ++k)
          reordered[((g * 3 + o) * 2 + c) * 9 + k] =
              w[((g * 2 + c) * 3 + o) * 9 + k];
  const char *attrs =
      R"({kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 3>,
        pads = array<i64: 1, 2, 1, 2>, dilations = array<i64: 2, 1>,
        output_padding = array<i64: 1, 0>, group = 2 : i64)";
  std::string ir =
      "func.func @main(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>, %wr: "
      "tensor<6x2x3x3xf32>) -> (tensor<1x6x12x11xf32>, tensor<1x6x12x11xf32>) "
      "{\n" +
      weight("b", {6}, b) + "    %y = top.deconv %x, %w, %b " + attrs +
      "} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> "
      "tensor<1x6x12x11xf32>\n    %z = top.deconv %x, %wr, %b " +
      attrs +
      ", filter_reordered = true} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>, "
      "tensor<6xf32>) -> tensor<1x6x12x11xf32>\n    return %y, %z : "
      "tensor<1x6x12x11xf32>, tensor<1x6x12x11xf32>\n}";
  TensorMap outputs;
  ASSERT_TRUE(succeeded(run(ir,
                            {{"arg0", {is, x}},
                             {"arg1", {ws, w}},
                             {"arg2", {{6, 2, 3, 3}, reordered}}},
                            outputs)))
      << diagnostics;
  expectClose(outputs["out0"], os, *ref, 1e-4f);
  expectClose(outputs["out1"], os, *ref, 1e-4f);
}

TEST_F(TopInterpreterTest, ResizeMatchesPyTorch) {
  Shape is = {1, 2, 4, 5};
  auto x = pseudoRandom(numElements(is), 41);
  auto ref = torchReference(R"(
x = ins[0].reshape(1, 2, 4, 5)
outs = [F.interpolate(x, size=(7, 10), mode='bilinear', align_corners=False),
        F.interpolate(x, size=(7, 10), mode='bilinear', align_corners=True),
        F.interpolate(x, size=(8, 15), mode='nearest'),
        F.interpolate(x, size=(3, 3), mode='bilinear', align_corners=False)]
)",
                            {x});
  if (!ref)
    GTEST_SKIP() << "no torch";
  // PyTorch's bilinear is half_pixel (pytorch_half_pixel), align_corners is
  // align_corners, nearest is asymmetric with floor; scales are out / in.
  std::string ir = R"(
  func.func @main(%x: tensor<1x2x4x5xf32>) -> (tensor<1x2x7x10xf32>, tensor<1x2x7x10xf32>, tensor<1x2x8x15xf32>, tensor<1x2x3x3xf32>) {
    %0 = top.resize %x {mode = 1 : i32, out_hw = array<i64: 7, 10>, scales = array<f64: 1.75, 2.0>, coord_mode = 3 : i32, nearest_mode = 0 : i32} : (tensor<1x2x4x5xf32>) -> tensor<1x2x7x10xf32>
    %1 = top.resize %x {mode = 1 : i32, out_hw = array<i64: 7, 10>, scales = array<f64: 1.75, 2.0>, coord_mode = 2 : i32, nearest_mode = 0 : i32} : (tensor<1x2x4x5xf32>) -> tensor<1x2x7x10xf32>
    %2 = top.resize %x {mode = 0 : i32, out_hw = array<i64: 8, 15>, scales = array<f64: 2.0, 3.0>, coord_mode = 1 : i32, nearest_mode = 2 : i32} : (tensor<1x2x4x5xf32>) -> tensor<1x2x8x15xf32>
    %3 = top.resize %x {mode = 1 : i32, out_hw = array<i64: 3, 3>, scales = array<f64: 0.75, 0.6>, coord_mode = 0 : i32, nearest_mode = 0 : i32} : (tensor<1x2x4x5xf32>) -> tensor<1x2x3x3xf32>
    return %0, %1, %2, %3 : tensor<1x2x7x10xf32>, tensor<1x2x7x10xf32>, tensor<1x2x8x15xf32>, tensor<1x2x3x3xf32>
  })";
  TensorMap outputs;
  ASSERT_TRUE(succeeded(run(ir, {{"arg0", {is, x}}}, outputs))) << diagnostics;
  size_t offset = 0;
  expectClose(outputs["out0"], {1, 2, 7, 10}, take(*ref, offset, 140));
  expectClose(outputs["out1"], {1, 2, 7, 10}, take(*ref, offset, 140));
  expectClose(outputs["out2"], {1, 2, 8, 15}, take(*ref, offset, 240));
  expectClose(outputs["out3"], {1, 2, 3, 3}, take(*ref, offset, 18));
}

TEST_F(TopInterpreterTest, ActivationsAndSoftmaxMatchPyTorch) {
  Shape is = {2, 3, 4};
  auto x = pseudoRandom(24, 51);
  for (float &v : x)
    v *= 4; // reach the bends of hard_sigmoid, hard_swish and clip
  std::vector<float> positive(24);
  for (int i = 0; i < 24; ++i)
    positive[i] = std::fabs(x[i]) + 0.1f;
  auto ref = torchReference(R"(
x, p = ins[0].reshape(2, 3, 4), ins[1].reshape(2, 3, 4)
outs = [F.leaky_relu(x, 0.1), torch.sigmoid(x), torch.tanh(x), torch.exp(x),
        torch.log(p), torch.sqrt(p), torch.rsqrt(p), torch.reciprocal(p),
        torch.abs(x), -x, torch.erf(x), F.elu(x, 0.7), F.selu(x), F.softplus(x),
        torch.clamp(x * 0.2 + 0.5, 0, 1), F.hardswish(x), torch.clamp(x, -0.5, 0.3),
        x * x, F.gelu(x), 3 * x - 1,
        torch.softmax(x, 1), torch.log_softmax(x, -1)]
)",
                            {x, positive});
  if (!ref)
    GTEST_SKIP() << "no torch";
  // (mode, alpha, beta, input): firmware-abi's kiln_active_kind values.
  struct Mode {
    int mode;
    double alpha, beta;
    bool positive;
  };
  std::vector<Mode> modes = {
      {1, 0.1, 0, false},
      {2, 0, 0, false},
      {3, 0, 0, false},
      {4, 0, 0, false},
      {5, 0, 0, true},
      {6, 0, 0, true},
      {7, 0, 0, true},
      {8, 0, 0, true},
      {9, 0, 0, false},
      {10, 0, 0, false},
      {11, 0, 0, false},
      {12, 0.7, 0, false},
      {13, 1.6732632423543772, 1.0507009873554805, false},
      {14, 0, 0, false},
      {15, 0.2, 0.5, false},
      {16, 0, 0, false},
      {17, -0.5, 0.3, false},
      {18, 0, 0, false},
      {19, 0, 0, false},
      {20, 3, -1, false}};
  std::string ir =
      "func.func @main(%x: tensor<2x3x4xf32>, %p: tensor<2x3x4xf32>) -> (";
  std::string body, results;
  for (size_t i = 0; i < modes.size() + 2; ++i)
    ir += std::string(i ? ", " : "") + "tensor<2x3x4xf32>";
  ir += ") {\n";
  for (size_t i = 0; i < modes.size(); ++i) {
    char line[256];
    std::snprintf(
        line, sizeof line,
        "  %%r%zu = top.active %%%s {mode = %d : i32, alpha = %.17e : "
        "f64, beta = %.17e : f64} : (tensor<2x3x4xf32>) -> "
        "tensor<2x3x4xf32>\n",
        i, modes[i].positive ? "p" : "x", modes[i].mode, modes[i].alpha,
        modes[i].beta);
    ir += line;
    results += std::string(i ? ", " : "") + "%r" + std::to_string(i);
  }
  ir += "  %s0 = top.softmax %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> "
        "tensor<2x3x4xf32>\n"
        "  %s1 = top.softmax %x {axis = -1 : i64, log = true} : "
        "(tensor<2x3x4xf32>) -> tensor<2x3x4xf32>\n  return " +
        results + ", %s0, %s1 : ";
  for (size_t i = 0; i < modes.size() + 2; ++i)
    ir += std::string(i ? ", " : "") + "tensor<2x3x4xf32>";
  ir += "\n}";
  TensorMap outputs;
  ASSERT_TRUE(succeeded(
      run(ir, {{"arg0", {is, x}}, {"arg1", {is, positive}}}, outputs)))
      << diagnostics;
  size_t offset = 0;
  for (size_t i = 0; i < modes.size() + 2; ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    expectClose(outputs["out" + std::to_string(i)], is, take(*ref, offset, 24),
                1e-5f);
  }
}

TEST_F(TopInterpreterTest, PadMatchesNumpy) {
  Shape is = {2, 3, 4};
  auto x = pseudoRandom(24, 61);
  auto ref = torchReference(R"(
x = ins[0].numpy().reshape(2, 3, 4)
w = ((0, 1), (2, 0), (1, 3))
outs = [np.pad(x, w, mode='constant', constant_values=1.5),
        np.pad(x, w, mode='reflect'), np.pad(x, w, mode='edge')]
)",
                            {x});
  if (!ref)
    GTEST_SKIP() << "no torch";
  std::string ir = R"(
  func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<3x5x8xf32>, tensor<3x5x8xf32>, tensor<3x5x8xf32>) {
    %0 = top.pad %x {pads = array<i64: 0, 2, 1, 1, 0, 3>, mode = 0 : i32, value = 1.5 : f64} : (tensor<2x3x4xf32>) -> tensor<3x5x8xf32>
    %1 = top.pad %x {pads = array<i64: 0, 2, 1, 1, 0, 3>, mode = 1 : i32} : (tensor<2x3x4xf32>) -> tensor<3x5x8xf32>
    %2 = top.pad %x {pads = array<i64: 0, 2, 1, 1, 0, 3>, mode = 2 : i32} : (tensor<2x3x4xf32>) -> tensor<3x5x8xf32>
    return %0, %1, %2 : tensor<3x5x8xf32>, tensor<3x5x8xf32>, tensor<3x5x8xf32>
  })";
  TensorMap outputs;
  ASSERT_TRUE(succeeded(run(ir, {{"arg0", {is, x}}}, outputs))) << diagnostics;
  size_t offset = 0;
  for (int i = 0; i < 3; ++i)
    expectClose(outputs["out" + std::to_string(i)], {3, 5, 8},
                take(*ref, offset, 120));
}

TEST_F(TopInterpreterTest, EvaluateOpChecksOperands) {
  // evaluateOp (constant folding's entry) checks the data, not the types.
  std::string ir = R"(
  func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
    %y = top.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    return %y : tensor<3x2xf32>
  })";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(ir, ParserConfig(&context));
  ASSERT_TRUE(module);
  Operation *transpose =
      &module->lookupSymbol<func::FuncOp>("main").front().front();
  Tensor in{{2, 3}, iota(6)};
  FailureOr<Tensor> out = kiln::interp::evaluateOp(transpose, {&in});
  ASSERT_TRUE(succeeded(out));
  expectClose(*out, {3, 2}, {0, 3, 1, 4, 2, 5});
  Tensor bad{{6}, iota(6)};
  diagnostics.clear();
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += d.str();
    return success();
  });
  EXPECT_TRUE(failed(kiln::interp::evaluateOp(transpose, {&bad})));
  EXPECT_NE(diagnostics.find("is not a permutation"), std::string::npos)
      << diagnostics;
  EXPECT_TRUE(failed(kiln::interp::evaluateOp(transpose, {})));
}

//===----------------------------------------------------------------------===//
// Against PyTorch
//===----------------------------------------------------------------------===//

/// conv (groups, dilation, relu) -> maxpool (ceil) -> avgpool (ceil, pads
/// counted) -> flatten -> gemm. Reads the operands from argv[1] as raw f32,
/// writes the result to argv[2]; exits 77 when torch is missing.
const char *kTorchScript = R"(
import sys
try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit(77)
flat = np.fromfile(sys.argv[1], dtype='<f4')
sizes = [1*4*7*7, 4*2*3*3, 4, 5*36, 5]
parts, start = [], 0
for s in sizes:
    parts.append(torch.from_numpy(flat[start:start + s].copy()))
    start += s
x, w, b, fw, fb = parts
x = x.reshape(1, 4, 7, 7)
y = F.relu(F.conv2d(x, w.reshape(4, 2, 3, 3), b, padding=2, dilation=2, groups=2))
y = F.max_pool2d(y, 2, 2, ceil_mode=True)
y = F.avg_pool2d(y, 3, 2, padding=1, ceil_mode=True, count_include_pad=True)
y = F.linear(y.reshape(1, 36), fw.reshape(5, 36), fb)
y.detach().numpy().astype('<f4').tofile(sys.argv[2])
)";

TEST_F(TopInterpreterTest, MatchesPyTorch) {
  auto x = pseudoRandom(4 * 7 * 7, 11), w = pseudoRandom(4 * 2 * 9, 12),
       b = pseudoRandom(4, 13), fw = pseudoRandom(5 * 36, 14),
       fb = pseudoRandom(5, 15);

  std::string dir =
      ::testing::TempDir() + "top_interp_torch_" + std::to_string(getpid());
  std::string script = dir + ".py", in = dir + "_in.bin",
              out = dir + "_out.bin";
  std::ofstream(script) << kTorchScript;
  {
    std::ofstream file(in, std::ios::binary);
    for (const auto *v : {&x, &w, &b, &fw, &fb})
      file.write(reinterpret_cast<const char *>(v->data()),
                 v->size() * sizeof(float));
  }
  std::remove(out.c_str());
  int status = std::system(
      (std::string(KILN_TEST_PYTHON) + " " + script + " " + in + " " + out)
          .c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
    GTEST_SKIP() << KILN_TEST_PYTHON << " cannot import torch";
  ASSERT_EQ(status, 0);
  std::vector<float> expected(5);
  std::ifstream result(out, std::ios::binary);
  ASSERT_TRUE(result.read(reinterpret_cast<char *>(expected.data()),
                          expected.size() * sizeof(float)));

  std::string ir =
      "func.func @main(%x: tensor<1x4x7x7xf32>) -> tensor<1x5xf32> {\n" +
      weight("w", {4, 2, 3, 3}, w) + weight("b", {4}, b) +
      weight("fw", {5, 36}, fw) + weight("fb", {5}, fb) + R"(
    %c = top.conv %x, %w, %b {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>,
        pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>, group = 2 : i64, do_relu = true}
        : (tensor<1x4x7x7xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x7x7xf32>
    %m = top.maxpool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
        pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
    %a = top.avgpool %m {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
        pads = array<i64: 1, 1, 1, 1>, ceil_mode = true, count_include_pad = true}
        : (tensor<1x4x4x4xf32>) -> tensor<1x4x3x3xf32>
    %r = top.reshape %a {shape = array<i64: 1, 36>} : (tensor<1x4x3x3xf32>) -> tensor<1x36xf32>
    %y = top.matmul %r, %fw, %fb {right_transpose = true}
        : (tensor<1x36xf32>, tensor<5x36xf32>, tensor<5xf32>) -> tensor<1x5xf32>
    return %y : tensor<1x5xf32>
  })";
  expectClose(runOne(ir, {{"arg0", {{1, 4, 7, 7}, x}}}), {1, 5}, expected,
              1e-4f);
}

TEST_F(TopInterpreterTest, RerunWithReplacesOneValue) {
  // y = relu(x + 1) * 2 and z = x - 1: replacing the add's result changes y
  // exactly as a run on the replaced value would, and leaves z alone.
  std::string ir = R"(
  func.func @main(%x: tensor<1x4xf32> {kiln.name = "x"}) -> (tensor<1x4xf32> {kiln.name = "y"},
                                                          tensor<1x4xf32> {kiln.name = "z"}) {
)" + weight("one", {1}, {1}) + weight("two", {1}, {2}) + R"(
    %a = top.add %x, %one : (tensor<1x4xf32>, tensor<1xf32>) -> tensor<1x4xf32> loc("a")
    %r = top.relu %a : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("r")
    %y = top.mul %r, %two : (tensor<1x4xf32>, tensor<1xf32>) -> tensor<1x4xf32> loc("y")
    %z = top.sub %x, %one : (tensor<1x4xf32>, tensor<1xf32>) -> tensor<1x4xf32> loc("z")
    return %y, %z : tensor<1x4xf32>, tensor<1x4xf32>
  })";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, ParserConfig(&context));
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("main");
  kiln::interp::TopRun run;
  ASSERT_TRUE(succeeded(run.run(func, {{"x", {{1, 4}, {-3, -0.5f, 0.5f, 2}}}})));
  expectClose(run.outputs().at("y"), {1, 4}, {0, 1, 3, 6});
  expectClose(run.outputs().at("z"), {1, 4}, {-4, -1.5f, -0.5f, 1});
  expectClose(run.namedValues().at("a"), {1, 4}, {-2, 0.5f, 1.5f, 3});
  EXPECT_EQ(run.namedValues().size(), 4u); // a, r, y, z: no weights
  TensorMap outputs;
  ASSERT_TRUE(succeeded(run.rerunWith("a", {{1, 4}, {1, -1, 2, 0}}, outputs)));
  expectClose(outputs.at("y"), {1, 4}, {2, 0, 4, 0});
  expectClose(outputs.at("z"), {1, 4}, {-4, -1.5f, -0.5f, 1});
  // The kept run is unchanged: another replacement starts from it.
  ASSERT_TRUE(succeeded(run.rerunWith("r", {{1, 4}, {5, 5, 5, 5}}, outputs)));
  expectClose(outputs.at("y"), {1, 4}, {10, 10, 10, 10});
  // No such name, or a value of another shape: nothing to rerun.
  EXPECT_TRUE(failed(run.rerunWith("nope", {{1, 4}, {0, 0, 0, 0}}, outputs)));
  EXPECT_TRUE(failed(run.rerunWith("a", {{4, 1}, {0, 0, 0, 0}}, outputs)));
}

} // namespace
