// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// Typed Top attributes print in the form they parse.

// CHECK-LABEL: func.func @dtype
// CHECK: top.relu %arg0 {kiln.dtype = #top.dtype<int8>}
// CHECK: top.relu %0 {kiln.dtype = #top.dtype<bf16>}
func.func @dtype(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %0 = top.relu %arg0 {kiln.dtype = #top.dtype<int8>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %1 = top.relu %0 {kiln.dtype = #top.dtype<bf16>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %1 : tensor<1x8x4x4xf32>
}

// CHECK-LABEL: func.func @resize
// CHECK: top.resize %arg0 {coord_mode = 3 : i32, mode = 1 : i32, nearest_mode = 2 : i32
// CHECK: tpu.resize %arg0 {coord_mode = 2 : i32, mode = 0 : i32, nearest_mode = 1 : i32
// CHECK: tpu.active %arg0 {alpha = 0.000000e+00 : f64, beta = 0.000000e+00 : f64, mode = 0 : i32}
func.func @resize(%arg0: tensor<1x8x4x4xf32>) {
  %0 = top.resize %arg0 {mode = 1 : i32, coord_mode = 3 : i32, nearest_mode = 2 : i32, out_hw = array<i64: 8, 8>, scales = array<f64: 2.0, 2.0>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x8x8xf32>
  %1 = tpu.resize %arg0 {mode = 0 : i32, coord_mode = 2 : i32, nearest_mode = 1 : i32, scales = array<f64: 2.0, 2.0>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x8x8xf32>
  %2 = tpu.active %arg0 {mode = 0 : i32, alpha = 0.0 : f64, beta = 0.0 : f64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return
}
