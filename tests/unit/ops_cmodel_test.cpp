// Every lowering path, op by op: small Top IR modules compiled through the
// whole back end (pipeline, codegen, bmodel, runtime, cmodel) must match the
// Top interpreter.
#include "kiln/Codegen/Codegen.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Interpreter/TopInterpreter.h"
#include "kiln/Support/Pipeline.h"
#include "kiln/Target/Bmodel/BmodelWriter.h"
#include "kiln/cmodel/device.h"
#include "kiln/rt/runtime.hpp"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace kiln;

namespace {

struct OpCase {
  const char *name;
  const char *ir; // @main with f32 args and results
};

std::vector<float> noise(size_t count, uint32_t seed, float lo, float hi) {
  std::vector<float> v(count);
  for (auto &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = lo + (hi - lo) * (float)((seed >> 8) & 0xffff) / 65536.f;
  }
  return v;
}

class OpsOnCmodel : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpsOnCmodel, MatchesInterpreter) {
  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect, top::TopDialect, tpu::TpuDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(GetParam().ir, &ctx);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();

  // Positive inputs keep log/sqrt/pow defined; weights stay as written.
  interp::TensorMap inputs, reference;
  std::vector<std::vector<float>> feeds;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto type = cast<RankedTensorType>(arg.getType());
    interp::Tensor t;
    t.shape.assign(type.getShape().begin(), type.getShape().end());
    t.data = noise(type.getNumElements(), 7 + i, 0.1f, 2.f);
    feeds.push_back(t.data);
    inputs["arg" + std::to_string(i)] = t;
  }
  ASSERT_TRUE(succeeded(interp::runTop(func, inputs, reference)));

  PassManager pm(&ctx);
  addCompilePipeline(pm, PipelineOptions());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto net = codegen::generateNet(*module, GetParam().name);
  ASSERT_TRUE(succeeded(net));
  std::vector<uint8_t> bytes = bmodel::serialize({*net});

  cmodel::Device device(64u << 20);
  kiln_hal hal = device.hal();
  rt::Runtime runtime;
  ASSERT_EQ(runtime.init(hal), KILN_OK);
  rt::Net loaded;
  ASSERT_EQ(loaded.load(runtime, bytes.data(), bytes.size()), KILN_OK);
  for (size_t i = 0; i < feeds.size(); ++i)
    ASSERT_EQ(loaded.setInput(i, feeds[i].data(), feeds[i].size() * 4), KILN_OK);
  ASSERT_EQ(loaded.run(10u * 1000u * 1000u), KILN_OK) << device.faultReason();
  for (uint32_t o = 0; o < loaded.outputCount(); ++o) {
    kiln_tensor_info info;
    loaded.outputInfo(o, &info);
    std::vector<float> got(info.bytes / 4);
    ASSERT_EQ(loaded.getOutput(o, got.data(), info.bytes), KILN_OK);
    const auto &want = reference["out" + std::to_string(o)].data;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4f * (1.f + std::fabs(want[i])))
          << GetParam().name << " output " << o << " element " << i << ": " << got[i] << " vs " << want[i];
  }
}

const OpCase kCases[] = {
    // SVTR's attention: the qkv permute stored in place by its producer's
    // group (or read through strided views), k's transpose a strided view,
    // the Softmax on the matmul's rows, the output transpose folded.
    {"attention_strided", R"(
func.func @main(%a: tensor<1x40x72xf32>) -> tensor<1x40x24xf32> {
  %none = top.none
  %x = top.relu %a : (tensor<1x40x72xf32>) -> tensor<1x40x72xf32>
  %r = top.reshape %x {shape = array<i64: 1, 40, 3, 2, 12>} : (tensor<1x40x72xf32>) -> tensor<1x40x3x2x12xf32>
  %p = top.transpose %r {perm = array<i64: 2, 0, 3, 1, 4>} : (tensor<1x40x3x2x12xf32>) -> tensor<3x1x2x40x12xf32>
  %q5 = top.slice %p {starts = array<i64: 0, 0, 0, 0, 0>, ends = array<i64: 1, 1, 2, 40, 12>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<3x1x2x40x12xf32>) -> tensor<1x1x2x40x12xf32>
  %k5 = top.slice %p {starts = array<i64: 1, 0, 0, 0, 0>, ends = array<i64: 2, 1, 2, 40, 12>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<3x1x2x40x12xf32>) -> tensor<1x1x2x40x12xf32>
  %v5 = top.slice %p {starts = array<i64: 2, 0, 0, 0, 0>, ends = array<i64: 3, 1, 2, 40, 12>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<3x1x2x40x12xf32>) -> tensor<1x1x2x40x12xf32>
  %q = top.reshape %q5 {shape = array<i64: 1, 2, 40, 12>} : (tensor<1x1x2x40x12xf32>) -> tensor<1x2x40x12xf32>
  %k = top.reshape %k5 {shape = array<i64: 1, 2, 40, 12>} : (tensor<1x1x2x40x12xf32>) -> tensor<1x2x40x12xf32>
  %v = top.reshape %v5 {shape = array<i64: 1, 2, 40, 12>} : (tensor<1x1x2x40x12xf32>) -> tensor<1x2x40x12xf32>
  %kt = top.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x40x12xf32>) -> tensor<1x2x12x40xf32>
  %s = top.matmul %q, %kt, %none : (tensor<1x2x40x12xf32>, tensor<1x2x12x40xf32>, none) -> tensor<1x2x40x40xf32>
  %sm = top.softmax %s {axis = 3 : i64} : (tensor<1x2x40x40xf32>) -> tensor<1x2x40x40xf32>
  %o = top.matmul %sm, %v, %none : (tensor<1x2x40x40xf32>, tensor<1x2x40x12xf32>, none) -> tensor<1x2x40x12xf32>
  %ot = top.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x40x12xf32>) -> tensor<1x40x2x12xf32>
  %y = top.reshape %ot {shape = array<i64: 1, 40, 24>} : (tensor<1x40x2x12xf32>) -> tensor<1x40x24xf32>
  return %y : tensor<1x40x24xf32>
})"},
    // H and W swapped: read by one group through strides; stored transposed
    // (in place) by the relu's group for two readers.
    {"transpose_strided", R"(
func.func @main(%a: tensor<1x4x64x64xf32>) -> (tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>) {
  %t = top.transpose %a {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %0 = top.relu %t : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %r = top.relu %a : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %u = top.transpose %r {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %1 = top.relu %u : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %2 = top.active %u {mode = 6 : i32} : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  return %0, %1, %2 : tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>
})"},
    {"transpose", R"(
func.func @main(%a: tensor<2x3x4x5xf32>) -> tensor<5x2x4x3xf32> {
  %0 = top.transpose %a {perm = array<i64: 3, 0, 2, 1>} : (tensor<2x3x4x5xf32>) -> tensor<5x2x4x3xf32>
  return %0 : tensor<5x2x4x3xf32>
})"},
    {"transpose_5d", R"(
func.func @main(%a: tensor<2x3x2x4x5xf32>) -> tensor<5x2x4x3x2xf32> {
  %0 = top.transpose %a {perm = array<i64: 4, 0, 3, 1, 2>} : (tensor<2x3x2x4x5xf32>) -> tensor<5x2x4x3x2xf32>
  return %0 : tensor<5x2x4x3x2xf32>
})"},
    {"slice_steps", R"(
func.func @main(%a: tensor<4x9x7xf32>) -> tensor<2x3x3xf32> {
  %0 = top.slice %a {starts = array<i64: 1, 8, 0>, ends = array<i64: 4, -1, 7>, steps = array<i64: 2, -3, 3>} : (tensor<4x9x7xf32>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
})"},
    {"gather", R"(
func.func @main(%a: tensor<3x5x2xf32>) -> tensor<3x2x2x2xf32> {
  %0 = top.gather %a {axis = 1 : i64, indices = array<i64: 4, 0, 1, 2>, indices_shape = array<i64: 2, 2>} : (tensor<3x5x2xf32>) -> tensor<3x2x2x2xf32>
  return %0 : tensor<3x2x2x2xf32>
})"},
    {"expand_tile", R"(
func.func @main(%a: tensor<3x1xf32>) -> (tensor<2x3x4xf32>, tensor<6x2xf32>) {
  %0 = top.expand %a {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %1 = top.expand %a {shape = array<i64>, repeats = array<i64: 2, 2>} : (tensor<3x1xf32>) -> tensor<6x2xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<6x2xf32>
})"},
    {"pad_modes", R"(
func.func @main(%a: tensor<1x2x4x5xf32>) -> (tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>) {
  %0 = top.pad %a {pads = array<i64: 0, 0, 1, 2, 0, 0, 2, 1>, mode = 0 : i32, value = -1.0 : f64} : (tensor<1x2x4x5xf32>) -> tensor<1x2x7x8xf32>
  %1 = top.pad %a {pads = array<i64: 0, 0, 1, 2, 0, 0, 2, 1>, mode = 1 : i32} : (tensor<1x2x4x5xf32>) -> tensor<1x2x7x8xf32>
  %2 = top.pad %a {pads = array<i64: 0, 0, 1, 2, 0, 0, 2, 1>, mode = 2 : i32} : (tensor<1x2x4x5xf32>) -> tensor<1x2x7x8xf32>
  return %0, %1, %2 : tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>
})"},
    {"reduce_modes", R"(
func.func @main(%a: tensor<2x3x4x5xf32>) -> (tensor<2x1x4x1xf32>, tensor<2x4xf32>, tensor<3xf32>, tensor<2x3x4x1xf32>) {
  %0 = top.reduce %a {mode = 1 : i32, axes = array<i64: 1, 3>, keepdims = true} : (tensor<2x3x4x5xf32>) -> tensor<2x1x4x1xf32>
  %1 = top.reduce %a {mode = 2 : i32, axes = array<i64: 1, 3>, keepdims = false} : (tensor<2x3x4x5xf32>) -> tensor<2x4xf32>
  %2 = top.reduce %a {mode = 4 : i32, axes = array<i64: 0, 2, 3>, keepdims = false} : (tensor<2x3x4x5xf32>) -> tensor<3xf32>
  %3 = top.reduce %a {mode = 5 : i32, axes = array<i64: 3>, keepdims = true} : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x1xf32>
  return %0, %1, %2, %3 : tensor<2x1x4x1xf32>, tensor<2x4xf32>, tensor<3xf32>, tensor<2x3x4x1xf32>
})"},
    {"binary_broadcast", R"(
func.func @main(%a: tensor<2x3x4x5xf32>, %b: tensor<3x1x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>) {
  %0 = top.sub %a, %b : (tensor<2x3x4x5xf32>, tensor<3x1x5xf32>) -> tensor<2x3x4x5xf32>
  %1 = top.div %a, %b : (tensor<2x3x4x5xf32>, tensor<3x1x5xf32>) -> tensor<2x3x4x5xf32>
  %2 = top.pow %a, %b : (tensor<2x3x4x5xf32>, tensor<3x1x5xf32>) -> tensor<2x3x4x5xf32>
  %3 = top.min %a, %b : (tensor<2x3x4x5xf32>, tensor<3x1x5xf32>) -> tensor<2x3x4x5xf32>
  return %0, %1, %2, %3 : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>
})"},
    {"binary_5d", R"(
func.func @main(%a: tensor<2x3x4x5x6xf32>, %b: tensor<2x3x1x1x1xf32>) -> tensor<2x3x4x5x6xf32> {
  %0 = top.mul %a, %b : (tensor<2x3x4x5x6xf32>, tensor<2x3x1x1x1xf32>) -> tensor<2x3x4x5x6xf32>
  return %0 : tensor<2x3x4x5x6xf32>
})"},
    {"activations", R"(
func.func @main(%a: tensor<1x4x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %0 = top.active %a {mode = 2 : i32} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %1 = top.active %a {mode = 5 : i32} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %2 = top.active %a {mode = 17 : i32, alpha = 0.5 : f64, beta = 1.5 : f64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %3 = top.active %a {mode = 19 : i32} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %4 = top.active %a {mode = 7 : i32} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %0, %1, %2, %3, %4 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
})"},
    {"batched_matmul", R"(
func.func @main(%a: tensor<2x3x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %n = top.none
  %0 = top.matmul %a, %b, %n : (tensor<2x3x4x5xf32>, tensor<3x5x6xf32>, none) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
})"},
    {"deconv", R"(
func.func @main(%a: tensor<1x3x7x7xf32>) -> tensor<1x4x14x14xf32> {
  %w = top.weight {value = dense<[[[[0.1, -0.2, 0.3], [0.4, 0.5, -0.6], [0.7, 0.8, 0.9]]], [[[0.2, 0.1, 0.0], [-0.1, 0.3, 0.2], [0.5, -0.4, 0.1]]], [[[0.3, 0.3, -0.3], [0.2, 0.1, 0.6], [-0.7, 0.2, 0.4]]]]> : tensor<3x1x3x3xf32>} : tensor<3x1x3x3xf32>
  %w4 = top.expand %w {shape = array<i64: 3, 4, 3, 3>} : (tensor<3x1x3x3xf32>) -> tensor<3x4x3x3xf32>
  %n = top.none
  %0 = top.deconv %a, %w4, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x3x7x7xf32>, tensor<3x4x3x3xf32>, none) -> tensor<1x4x14x14xf32>
  return %0 : tensor<1x4x14x14xf32>
})"},
    {"resize", R"(
func.func @main(%a: tensor<1x3x5x6xf32>) -> (tensor<1x3x10x12xf32>, tensor<1x3x10x12xf32>) {
  %0 = top.resize %a {mode = 0 : i32, out_hw = array<i64: 10, 12>, scales = array<f64: 2.0, 2.0>, coord_mode = 1 : i32, nearest_mode = 2 : i32} : (tensor<1x3x5x6xf32>) -> tensor<1x3x10x12xf32>
  %1 = top.resize %a {mode = 1 : i32, out_hw = array<i64: 10, 12>, scales = array<f64: 2.0, 2.0>, coord_mode = 3 : i32, nearest_mode = 0 : i32} : (tensor<1x3x5x6xf32>) -> tensor<1x3x10x12xf32>
  return %0, %1 : tensor<1x3x10x12xf32>, tensor<1x3x10x12xf32>
})"},
    {"resize_sliced", R"(
func.func @main(%a: tensor<1x8x160x160xf32>) -> tensor<1x8x320x320xf32> {
  %0 = top.resize %a {mode = 1 : i32, out_hw = array<i64: 320, 320>, scales = array<f64: 2.0, 2.0>, coord_mode = 0 : i32, nearest_mode = 0 : i32} : (tensor<1x8x160x160xf32>) -> tensor<1x8x320x320xf32>
  return %0 : tensor<1x8x320x320xf32>
})"},
    {"deconv_sliced", R"(
func.func @main(%a: tensor<1x8x160x160xf32>, %w: tensor<8x8x4x4xf32>) -> tensor<1x8x320x320xf32> {
  %n = top.none
  %t = top.transpose %w {perm = array<i64: 1, 0, 2, 3>} : (tensor<8x8x4x4xf32>) -> tensor<8x8x4x4xf32>
  %0 = top.deconv %a, %t, %n {kernel_shape = array<i64: 4, 4>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, filter_reordered = true} : (tensor<1x8x160x160xf32>, tensor<8x8x4x4xf32>, none) -> tensor<1x8x320x320xf32>
  return %0 : tensor<1x8x320x320xf32>
})"},
    // A filter formed per lane group of output channels: too wide to form whole.
    {"modulated_deconv_channel_sliced", R"(
func.func @main(%x: tensor<1x512x4x4xf32>, %w: tensor<1x512x512x3x3xf32>, %s: tensor<1x1x512x1x1xf32>) -> tensor<1x512x9x9xf32> {
  %ws = top.mul %w, %s : (tensor<1x512x512x3x3xf32>, tensor<1x1x512x1x1xf32>) -> tensor<1x512x512x3x3xf32>
  %f = top.reshape %ws {shape = array<i64: 512, 512, 3, 3>} : (tensor<1x512x512x3x3xf32>) -> tensor<512x512x3x3xf32>
  %n = top.none
  %0 = top.deconv %x, %f, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, filter_reordered = true} : (tensor<1x512x4x4xf32>, tensor<512x512x3x3xf32>, none) -> tensor<1x512x9x9xf32>
  return %0 : tensor<1x512x9x9xf32>
})"},
    {"modulated_conv_sliced", R"(
func.func @main(%x: tensor<1x16x224x224xf32>, %style: tensor<1x16x1x1xf32>) -> tensor<1x16x224x224xf32> {
  %w = top.weight {value = dense<0.1> : tensor<16x16x3x3xf32>} : tensor<16x16x3x3xf32>
  %f = top.mul %w, %style : (tensor<16x16x3x3xf32>, tensor<1x16x1x1xf32>) -> tensor<16x16x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %f, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x16x224x224xf32>, tensor<16x16x3x3xf32>, none) -> tensor<1x16x224x224xf32>
  return %0 : tensor<1x16x224x224xf32>
})"},
};

INSTANTIATE_TEST_SUITE_P(Lowering, OpsOnCmodel, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
