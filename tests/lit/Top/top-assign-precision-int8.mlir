// RUN: kiln-opt %s -split-input-file -top-assign-precision="mode=int8" | FileCheck %s

// Under int8 the inner ops of a normalization (kiln.norm, set by the
// importer for InstanceNormalization and by top-decompose for Softmax) run
// in F16, one report line per normalization; the ops around it stay int8
// (fuzzer findings int8_instance_norm_constant_channel, int8_attention_softmax).
// CHECK: kiln.precision_report = ["inorm (inner ops of the normalization): f16 (int8 loses nearly constant channels)"]
// CHECK-LABEL: func.func @norm
// CHECK: top.reduce {{.*}}kiln.dtype = #top.dtype<f16>
// CHECK: top.sub {{.*}}kiln.dtype = #top.dtype<f16>
// CHECK: top.relu {{.*}}kiln.dtype = #top.dtype<int8>
module {
func.func @norm(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %m = top.reduce %arg0 {mode = 1 : i32, axes = array<i64: 2, 3>, keepdims = true, kiln.norm = ["inorm", "int8 loses nearly constant channels"]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> loc("inorm_mean")
  %c = top.sub %arg0, %m {kiln.norm = ["inorm", "int8 loses nearly constant channels"]} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> loc("inorm_centered")
  %r = top.relu %c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("r")
  return %r : tensor<1x2x4x4xf32>
}
}

// -----

// A ReduceL2 has no INT8 form and runs in F16; its inner sum of squares is
// its result squared (258.6^2 = 66874 > 32752), so it stays f32 (fuzzer
// finding f16_reduce_l2_overflow). A smaller one falls back to F16 later.
// CHECK: kiln.precision_report = ["l2: f32 (sum of squares (result squared) reaches |x| = 66873.96 > f16 limit 32752.00)"]
// CHECK-LABEL: func.func @l2
// CHECK: top.reduce {{.*}}kiln.dtype = #top.dtype<f32>
// CHECK: top.reduce {{.*}}kiln.dtype = #top.dtype<int8>
module {
func.func @l2(%arg0: tensor<1x2x4x4xf32>) -> (tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) {
  %a = top.reduce %arg0 {mode = 4 : i32, axes = array<i64: 2, 3>, keepdims = true, kiln.calib = array<f64: 258.6, 93.7, 258.6>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> loc("l2")
  %b = top.reduce %arg0 {mode = 4 : i32, axes = array<i64: 2, 3>, keepdims = true, kiln.calib = array<f64: 100.0, 3.0, 100.0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> loc("small")
  return %a, %b : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>
}
}
