// RUN: kiln-opt %s -top-fold-quantize-constants -split-input-file | FileCheck %s

// Per-tensor int8: x / 0.5 rounds half to even (0.25 / 0.5 = 0.5 -> 0,
// 0.75 / 0.5 = 1.5 -> 2), adds the zero point 1 and saturates (100 -> 127,
// -100 -> -128): [-1, 1, 3, 127, -128]. The float weight goes; the
// dequantize stays and reads the INT8 weight.
// CHECK-LABEL: func.func @per_tensor
// CHECK-NOT: top.quantize_linear
// CHECK: %[[W:.*]] = top.weight {value = dense_resource<wq> : tensor<5xi8>} : tensor<5xi8>
// CHECK-NOT: top.weight
// CHECK: top.dequantize_linear %[[W]] {axis = 0 : i64, scale = array<f64: 5.000000e-01>, zero_point = array<i64: 1>} : (tensor<5xi8>) -> tensor<5xf32>
// CHECK: wq: "0x01000000FF01037F80"
func.func @per_tensor() -> tensor<5xf32> {
  %w = top.weight {value = dense<[-1.0, 0.25, 0.75, 100.0, -100.0]> : tensor<5xf32>} : tensor<5xf32>
  %q = top.quantize_linear %w {scale = array<f64: 0.5>, zero_point = array<i64: 1>, axis = 0} : (tensor<5xf32>) -> tensor<5xi8> loc("wq")
  %d = top.dequantize_linear %q {scale = array<f64: 0.5>, zero_point = array<i64: 1>, axis = 0} : (tensor<5xi8>) -> tensor<5xf32>
  return %d : tensor<5xf32>
}

// -----

// Per-axis along dimension 0: row 0 with scale 1 ([1, -1]), row 1 with
// scale 2 (3 / 2 = 1.5 -> 2, 2.5 / 2 = 1.25 -> 1).
// CHECK-LABEL: func.func @per_axis
// CHECK: top.weight {value = dense_resource<filter_q> : tensor<2x2xi8>} : tensor<2x2xi8>
// CHECK: top.dequantize_linear
// CHECK: filter_q: "0x0100000001FF0201"
func.func @per_axis() -> tensor<2x2xf32> {
  %w = top.weight {value = dense<[[1.0, -1.0], [3.0, 2.5]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %q = top.quantize_linear %w {scale = array<f64: 1.0, 2.0>, zero_point = array<i64: 0, 0>, axis = 0} : (tensor<2x2xf32>) -> tensor<2x2xi8> loc("filter_q")
  %d = top.dequantize_linear %q {scale = array<f64: 1.0, 2.0>, zero_point = array<i64: 0, 0>, axis = 0} : (tensor<2x2xi8>) -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// uint8: zero point 128, saturating to [0, 255] (-200 -> 0, 200 -> 255).
// CHECK-LABEL: func.func @uint8
// CHECK: top.weight {value = dense_resource<u> : tensor<5xui8>} : tensor<5xui8>
// CHECK: u: "0x01000000808280FF00"
func.func @uint8() -> tensor<5xf32> {
  %w = top.weight {value = dense<[0.0, 2.0, -0.5, 200.0, -200.0]> : tensor<5xf32>} : tensor<5xf32>
  %q = top.quantize_linear %w {scale = array<f64: 1.0>, zero_point = array<i64: 128>, axis = 0} : (tensor<5xf32>) -> tensor<5xui8> loc("u")
  %d = top.dequantize_linear %q {scale = array<f64: 1.0>, zero_point = array<i64: 128>, axis = 0} : (tensor<5xui8>) -> tensor<5xf32>
  return %d : tensor<5xf32>
}

// -----

// An activation's quantize is not a constant: it stays.
// CHECK-LABEL: func.func @activation
// CHECK: top.quantize_linear %arg0
// CHECK: top.dequantize_linear
func.func @activation(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %q = top.quantize_linear %arg0 {scale = array<f64: 0.1>, zero_point = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xi8>
  %d = top.dequantize_linear %q {scale = array<f64: 0.1>, zero_point = array<i64: 0>} : (tensor<4xi8>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}
