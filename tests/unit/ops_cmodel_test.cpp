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
  const char *ir;                  // @main with f32 args and results
  const char *loweredTo = nullptr; // an op the pipeline must have made
  bool widthSliced = false;        // a layer group must slice along W
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
  if (const char *op = GetParam().loweredTo) {
    bool found = false;
    module->walk([&](Operation *o) { found |= o->getName().getStringRef() == op; });
    ASSERT_TRUE(found) << "the pipeline made no " << op;
  }
  if (GetParam().widthSliced) {
    bool found = false;
    module->walk([&](tpu::GroupOp g) { found |= g.getPlan().getSlices()[3] > 1; });
    ASSERT_TRUE(found) << "no layer group sliced along W";
  }
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
    // Narrow convs compute several rows per pass (tpu-fold-output-rows): the
    // taps of each row block, the folded second conv and the stores into the
    // unfolded result must give the convs' own sums.
    {"narrow_convs_row_folded", R"(
func.func @main(%x: tensor<1x3x32x16xf32>) -> tensor<1x3x32x16xf32> {
  %wa = top.weight {value = dense<[[[[-0.524, 0.088, -0.260], [0.208, 0.251, -0.869], [-0.974, 0.675, -0.481]], [[-0.531, 0.991, -0.059], [0.673, -0.047, 0.278], [-0.699, 0.270, 0.736]], [[0.046, 0.483, 0.343], [-0.872, 0.516, 0.182], [-0.397, -0.938, 0.731]]], [[[-0.055, 0.438, 0.758], [0.428, 0.842, -0.210], [0.602, -0.111, 0.871]], [[0.758, -0.805, -0.728], [-0.566, 0.931, -0.128], [0.253, -0.398, 0.014]], [[-0.228, -0.298, 0.170], [0.169, 0.808, 0.364], [0.858, 0.713, 0.982]]]]> : tensor<2x3x3x3xf32>} : tensor<2x3x3x3xf32>
  %ba = top.weight {value = dense<[0.250, -0.500]> : tensor<2xf32>} : tensor<2xf32>
  %wb = top.weight {value = dense<[[[[0.343, -0.674, 0.721], [0.929, 0.809, 0.138], [0.428, -0.578, 0.663]], [[0.147, -0.430, -0.873], [0.708, 0.980, -0.823], [0.601, -0.179, -0.698]]], [[[-0.412, 0.538, 0.746], [-0.912, 0.229, -0.910], [0.437, -0.338, 0.762]], [[0.961, 0.011, 0.997], [-0.381, -0.846, 0.200], [-0.937, -0.605, -0.184]]], [[[0.221, -0.688, -0.915], [0.736, -0.372, 0.917], [0.793, -0.244, -0.079]], [[0.040, 0.288, 0.191], [0.119, 0.240, 0.881], [0.014, -0.138, 0.441]]]]> : tensor<3x2x3x3xf32>} : tensor<3x2x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %wa, %ba {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x32x16xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x2x32x16xf32>
  %1 = top.relu %0 : (tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32>
  %2 = top.conv %1, %wb, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 2, 1, 0, 1>, dilations = array<i64: 1, 1>} : (tensor<1x2x32x16xf32>, tensor<3x2x3x3xf32>, none) -> tensor<1x3x32x16xf32>
  return %2 : tensor<1x3x32x16xf32>
})", "tpu.unfold_rows"},
    // A ConvTranspose whose kernel is as tall as its stride: each kernel row
    // computes a block of output channels, stored into its rows.
    {"deconv_row_folded", R"(
func.func @main(%x: tensor<1x32x16x16xf32>) -> tensor<1x2x32x33xf32> {
  %w = top.weight {value = dense<[[[[0.074, 0.145, 0.177], [0.265, 0.144, 0.253]], [[-0.283, -0.021, 0.266], [0.089, 0.241, -0.232]]], [[[-0.019, -0.152, 0.026], [0.044, -0.292, -0.170]], [[-0.132, 0.250, 0.159], [-0.204, 0.178, -0.217]]], [[[0.070, -0.224, -0.299], [0.223, -0.174, -0.171]], [[0.289, 0.223, -0.126], [0.277, 0.024, 0.107]]], [[[-0.177, 0.265, 0.114], [0.280, 0.236, -0.121]], [[-0.083, -0.200, -0.213], [-0.261, -0.119, 0.062]]], [[[-0.298, 0.107, -0.097], [-0.114, 0.191, -0.012]], [[-0.111, -0.011, 0.123], [-0.266, 0.285, -0.286]]], [[[0.150, 0.207, -0.289], [0.173, -0.080, 0.047]], [[-0.295, -0.272, -0.191], [0.273, -0.182, 0.153]]], [[[0.258, 0.265, -0.093], [-0.087, 0.015, 0.165]], [[-0.235, 0.149, 0.178], [0.216, -0.278, 0.267]]], [[[-0.245, -0.096, 0.066], [0.251, -0.096, 0.255]], [[0.027, -0.113, -0.110], [-0.194, -0.253, -0.211]]], [[[0.114, 0.298, -0.203], [-0.271, 0.292, 0.020]], [[-0.056, -0.158, 0.056], [0.196, -0.027, -0.047]]], [[[-0.267, 0.250, -0.280], [-0.004, 0.203, -0.222]], [[0.139, 0.270, 0.078], [0.173, -0.236, -0.039]]], [[[-0.210, 0.207, -0.123], [-0.028, 0.300, 0.211]], [[0.286, -0.028, -0.007], [0.138, -0.013, -0.125]]], [[[-0.058, -0.212, -0.074], [0.293, 0.276, 0.076]], [[-0.000, -0.097, -0.247], [-0.137, 0.169, 0.220]]], [[[-0.083, 0.172, 0.165], [0.117, 0.098, 0.156]], [[-0.082, 0.123, -0.131], [-0.009, 0.162, 0.115]]], [[[-0.124, 0.267, 0.090], [0.048, -0.293, 0.028]], [[-0.150, 0.103, -0.022], [0.190, 0.088, 0.179]]], [[[-0.091, 0.086, 0.143], [0.197, -0.090, 0.206]], [[0.222, 0.113, 0.286], [0.274, 0.011, 0.018]]], [[[-0.200, 0.202, 0.262], [-0.014, 0.115, 0.132]], [[0.138, -0.197, 0.168], [0.049, 0.099, -0.048]]], [[[0.074, 0.165, 0.082], [0.132, -0.283, -0.204]], [[-0.035, 0.090, -0.169], [0.112, 0.079, -0.275]]], [[[-0.017, -0.164, -0.268], [-0.220, -0.110, -0.191]], [[-0.184, -0.279, -0.021], [-0.072, 0.067, 0.054]]], [[[-0.157, 0.242, -0.300], [-0.057, -0.133, -0.054]], [[-0.231, 0.199, -0.076], [-0.278, 0.068, -0.243]]], [[[0.027, -0.096, 0.049], [0.275, 0.191, -0.049]], [[0.188, 0.085, -0.078], [-0.215, 0.058, 0.038]]], [[[0.274, 0.281, 0.065], [-0.089, 0.236, -0.299]], [[-0.235, 0.039, 0.069], [-0.216, 0.078, 0.235]]], [[[-0.074, -0.041, -0.164], [-0.125, 0.283, -0.072]], [[0.277, 0.248, 0.057], [-0.144, 0.289, -0.002]]], [[[-0.051, -0.109, 0.291], [-0.005, -0.128, -0.014]], [[-0.227, 0.073, -0.034], [-0.124, 0.169, 0.196]]], [[[-0.292, 0.020, -0.136], [0.261, 0.169, -0.153]], [[-0.139, -0.207, 0.293], [-0.124, 0.065, -0.015]]], [[[0.087, 0.062, 0.146], [-0.229, 0.156, -0.120]], [[0.020, -0.098, -0.122], [0.018, -0.021, -0.083]]], [[[0.147, 0.054, -0.278], [-0.149, -0.027, 0.250]], [[0.233, 0.027, -0.291], [0.167, -0.043, 0.045]]], [[[0.125, 0.079, -0.011], [0.247, -0.069, -0.065]], [[0.211, -0.182, -0.122], [0.198, -0.260, 0.202]]], [[[0.117, -0.040, -0.128], [0.168, 0.246, -0.214]], [[-0.013, 0.029, -0.001], [-0.102, -0.208, 0.052]]], [[[0.187, -0.259, -0.162], [0.192, 0.175, 0.098]], [[-0.285, 0.134, 0.287], [0.299, 0.121, -0.271]]], [[[0.205, -0.168, 0.087], [0.271, 0.127, -0.219]], [[-0.125, 0.251, -0.210], [0.066, -0.052, -0.203]]], [[[0.073, -0.274, -0.235], [-0.072, -0.257, -0.265]], [[0.045, 0.145, 0.227], [-0.219, -0.041, -0.111]]], [[[0.060, -0.006, 0.263], [-0.075, -0.267, 0.118]], [[-0.209, 0.079, 0.004], [0.246, 0.033, 0.073]]]]> : tensor<32x2x2x3xf32>} : tensor<32x2x2x3xf32>
  %b = top.weight {value = dense<[0.5, -0.25]> : tensor<2xf32>} : tensor<2xf32>
  %0 = top.deconv %x, %w, %b {kernel_shape = array<i64: 2, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x32x16x16xf32>, tensor<32x2x2x3xf32>, tensor<2xf32>) -> tensor<1x2x32x33xf32>
  return %0 : tensor<1x2x32x33xf32>
})", "tpu.unfold_rows"},
    // Two such ConvTransposes in a chain: the second reads the first's
    // folded rows and computes twice as many per pass.
    {"deconv_chain_row_folded", R"(
func.func @main(%x: tensor<1x4x16x16xf32>) -> tensor<1x2x64x65xf32> {
  %w0 = top.weight {value = dense<[[[[-0.074, -0.253], [-0.723, 0.733]], [[-0.987, 0.006], [0.797, -0.838]], [[0.109, 0.233], [-0.918, -0.242]]], [[[0.407, -0.096], [0.450, -0.686]], [[-0.524, -0.778], [0.013, 0.848]], [[0.181, 0.548], [-0.233, 0.492]]], [[[-0.797, -0.418], [0.348, 0.451]], [[-0.156, -0.825], [-0.467, -0.580]], [[-0.438, 0.619], [-0.601, 0.773]]], [[[0.759, -0.890], [-0.242, -0.017]], [[-0.953, -0.151], [0.813, -0.776]], [[0.194, -0.758], [0.157, 0.791]]]]> : tensor<4x3x2x2xf32>} : tensor<4x3x2x2xf32>
  %b0 = top.weight {value = dense<[0.5, -0.25, 0.125]> : tensor<3xf32>} : tensor<3xf32>
  %w1 = top.weight {value = dense<[[[[-0.594, -0.983, -0.833], [0.080, -0.965, -0.830]], [[-0.007, 0.842, -0.160], [-0.204, 0.277, -0.813]]], [[[0.160, -0.655, 0.218], [0.917, -0.892, 0.110]], [[0.213, -0.701, -0.463], [0.990, 0.996, -0.757]]], [[[0.411, 0.902, -0.526], [0.222, -0.914, -0.268]], [[0.348, 0.181, 0.549], [-0.827, -0.306, 0.728]]]]> : tensor<3x2x2x3xf32>} : tensor<3x2x2x3xf32>
  %n = top.none
  %0 = top.deconv %x, %w0, %b0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x16x16xf32>, tensor<4x3x2x2xf32>, tensor<3xf32>) -> tensor<1x3x32x32xf32>
  %1 = top.relu %0 : (tensor<1x3x32x32xf32>) -> tensor<1x3x32x32xf32>
  %2 = top.deconv %1, %w1, %n {kernel_shape = array<i64: 2, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x32x32xf32>, tensor<3x2x2x3xf32>, none) -> tensor<1x2x64x65xf32>
  return %2 : tensor<1x2x64x65xf32>
})", "tpu.unfold_rows"},
    {"modulated_conv_sliced", R"(
func.func @main(%x: tensor<1x16x224x224xf32>, %style: tensor<1x16x1x1xf32>) -> tensor<1x16x224x224xf32> {
  %w = top.weight {value = dense<0.1> : tensor<16x16x3x3xf32>} : tensor<16x16x3x3xf32>
  %f = top.mul %w, %style : (tensor<16x16x3x3xf32>, tensor<1x16x1x1xf32>) -> tensor<16x16x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %f, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x16x224x224xf32>, tensor<16x16x3x3xf32>, none) -> tensor<1x16x224x224xf32>
  return %0 : tensor<1x16x224x224xf32>
})"},
    // Two rows of 4000 columns: the group slices along W, each slice
    // reading halo columns with its own left and right pads through a
    // conv and a depthwise conv of W stride 2.
    {"wide_rows_width_sliced", R"(
func.func @main(%x: tensor<1x4x2x4000xf32>) -> tensor<1x8x1x1000xf32> {
  %w = top.weight {value = dense<[[[[-0.262, 0.044, -0.130], [0.104, 0.126, -0.434], [-0.487, 0.337, -0.241]], [[-0.266, 0.496, -0.030], [0.336, -0.024, 0.139], [-0.349, 0.135, 0.368]], [[0.023, 0.241, 0.171], [-0.436, 0.258, 0.091], [-0.199, -0.469, 0.366]], [[-0.027, 0.219, 0.379], [0.214, 0.421, -0.105], [0.301, -0.055, 0.436]]], [[[0.379, -0.403, -0.364], [-0.283, 0.465, -0.064], [0.127, -0.199, 0.007]], [[-0.114, -0.149, 0.085], [0.084, 0.404, 0.182], [0.429, 0.356, 0.491]], [[0.171, -0.337, 0.361], [0.465, 0.405, 0.069], [0.214, -0.289, 0.332]], [[0.074, -0.215, -0.437], [0.354, 0.490, -0.411], [0.301, -0.090, -0.349]]], [[[-0.206, 0.269, 0.373], [-0.456, 0.115, -0.455], [0.218, -0.169, 0.381]], [[0.481, 0.005, 0.499], [-0.190, -0.423, 0.100], [-0.469, -0.303, -0.092]], [[0.110, -0.344, -0.458], [0.368, -0.186, 0.459], [0.397, -0.122, -0.040]], [[0.020, 0.144, 0.096], [0.059, 0.120, 0.441], [0.007, -0.069, 0.220]]], [[[-0.262, -0.199, 0.478], [0.021, 0.048, -0.489], [-0.085, 0.080, -0.480]], [[0.116, 0.132, -0.440], [0.127, -0.034, 0.179], [-0.147, 0.207, 0.238]], [[-0.478, -0.439, 0.176], [0.463, -0.249, -0.044], [0.093, -0.180, -0.136]], [[-0.187, -0.131, 0.096], [-0.200, -0.123, 0.272], [-0.473, 0.069, 0.235]]], [[[-0.190, -0.277, 0.304], [-0.261, -0.313, -0.065], [0.198, -0.398, -0.178]], [[-0.166, 0.334, -0.062], [0.356, -0.331, -0.163], [0.150, 0.385, -0.049]], [[-0.275, -0.379, 0.030], [-0.309, 0.307, 0.338], [-0.316, -0.221, 0.307]], [[0.142, 0.306, -0.155], [-0.370, -0.208, 0.294], [-0.229, -0.154, -0.083]]], [[[-0.080, -0.090, 0.421], [-0.344, -0.495, 0.443], [0.380, 0.487, -0.066]], [[0.450, 0.427, -0.278], [0.246, 0.337, 0.163], [0.019, -0.211, -0.159]], [[-0.273, -0.432, 0.089], [-0.213, 0.310, -0.455], [0.404, 0.194, 0.424]], [[0.397, 0.400, 0.077], [-0.487, 0.245, -0.328], [-0.200, 0.163, 0.025]]], [[[-0.086, 0.439, 0.112], [-0.159, -0.248, 0.362], [-0.023, 0.282, -0.148]], [[-0.303, 0.035, 0.317], [-0.329, 0.292, 0.422], [0.306, 0.323, -0.492]], [[0.129, 0.363, -0.450], [-0.229, -0.231, 0.027], [-0.077, -0.027, 0.276]], [[-0.498, -0.445, -0.373], [-0.375, -0.432, 0.475], [0.354, -0.414, 0.002]]], [[[-0.184, -0.185, -0.149], [0.147, 0.087, -0.139], [-0.309, -0.171, -0.376]], [[0.056, 0.216, -0.120], [-0.420, -0.321, -0.127], [0.104, 0.283, -0.120]], [[0.301, 0.123, -0.068], [-0.128, -0.004, 0.203], [-0.079, 0.194, -0.039]], [[-0.255, 0.036, 0.195], [-0.428, -0.075, -0.074], [0.380, 0.436, -0.126]]]]> : tensor<8x4x3x3xf32>} : tensor<8x4x3x3xf32>
  %b = top.weight {value = dense<[-0.314, -0.233, -0.301, 0.086, -0.185, -0.268, 0.191, 0.453]> : tensor<8xf32>} : tensor<8xf32>
  %d = top.weight {value = dense<[[[[0.398, 0.291, -0.238], [-0.036, -0.377, 0.313], [0.162, 0.387, 0.292]]], [[[0.168, 0.234, 0.064], [-0.397, 0.088, -0.495], [-0.356, 0.274, -0.456]]], [[[-0.408, -0.401, 0.380], [-0.321, -0.477, 0.342], [-0.379, 0.344, 0.174]]], [[[0.336, 0.452, 0.079], [0.299, -0.464, 0.267], [0.011, 0.215, -0.393]]], [[[0.249, 0.435, -0.439], [-0.176, 0.064, 0.328], [-0.258, -0.320, -0.250]]], [[[0.116, 0.254, -0.106], [-0.133, -0.103, -0.150], [-0.082, -0.417, 0.000]]], [[[0.473, -0.087, 0.247], [-0.339, 0.191, 0.256], [0.174, 0.017, -0.016]]], [[[0.143, 0.397, -0.351], [-0.404, 0.248, 0.417], [0.017, -0.057, 0.219]]]]> : tensor<8x1x3x3xf32>} : tensor<8x1x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %w, %b {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x4x2x4000xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x2x2000xf32>
  %1 = top.relu %0 : (tensor<1x8x2x2000xf32>) -> tensor<1x8x2x2000xf32>
  %2 = top.conv %1, %d, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x2x2000xf32>, tensor<8x1x3x3xf32>, none) -> tensor<1x8x1x1000xf32>
  return %2 : tensor<1x8x1x1000xf32>
})", nullptr, true},
};

INSTANTIATE_TEST_SUITE_P(Lowering, OpsOnCmodel, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
