// RUN: kiln-opt %s -top-absorb-qdq -split-input-file -verify-diagnostics | FileCheck %s

// A QDQ pair on an activation becomes kiln.qparams on its producer.
// CHECK-LABEL: func.func @activation
// CHECK: %[[R:.*]] = top.relu %arg0 {kiln.qparams = array<f64: 1.250000e-01, 3.000000e+00>}
// CHECK-NOT: top.quantize_linear
// CHECK-NOT: top.dequantize_linear
// CHECK: top.add %[[R]], %[[R]]
func.func @activation(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %r = top.relu %arg0 : (tensor<4xf32>) -> tensor<4xf32>
  %q = top.quantize_linear %r {scale = array<f64: 0.125>, zero_point = array<i64: 3>} : (tensor<4xf32>) -> tensor<4xi8>
  %d = top.dequantize_linear %q {scale = array<f64: 0.125>, zero_point = array<i64: 3>} : (tensor<4xi8>) -> tensor<4xf32>
  %y = top.add %d, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// uint8 becomes int8: zero point 130 - 128 = 2. On an argument the
// parameters are an argument attribute.
// CHECK-LABEL: func.func @uint8_argument
// CHECK-SAME: %arg0: tensor<4xf32> {kiln.qparams = array<f64: 2.000000e-02, 2.000000e+00>}
// CHECK-NEXT: top.relu %arg0 :
func.func @uint8_argument(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %q = top.quantize_linear %arg0 {scale = array<f64: 0.02>, zero_point = array<i64: 130>} : (tensor<4xf32>) -> tensor<4xui8>
  %d = top.dequantize_linear %q {scale = array<f64: 0.02>, zero_point = array<i64: 130>} : (tensor<4xui8>) -> tensor<4xf32>
  %r = top.relu %d : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Weights keep their QDQ (an INT8 weight for the lowering); per-axis pairs
// on activations are not per-tensor quantization: both stay.
// CHECK-LABEL: func.func @weights_and_per_axis
// CHECK: top.quantize_linear
// CHECK: top.dequantize_linear
// CHECK: top.quantize_linear %arg0
// CHECK: top.dequantize_linear
// CHECK-NOT: kiln.qparams
func.func @weights_and_per_axis(%arg0: tensor<2x2xf32>) -> (tensor<2xf32>, tensor<2x2xf32>) {
  %w = top.weight {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %q = top.quantize_linear %w {scale = array<f64: 0.5>, zero_point = array<i64: 0>} : (tensor<2xf32>) -> tensor<2xi8>
  %d = top.dequantize_linear %q {scale = array<f64: 0.5>, zero_point = array<i64: 0>} : (tensor<2xi8>) -> tensor<2xf32>
  %q2 = top.quantize_linear %arg0 {scale = array<f64: 0.5, 0.25>, zero_point = array<i64: 0, 0>, axis = 0} : (tensor<2x2xf32>) -> tensor<2x2xi8>
  %d2 = top.dequantize_linear %q2 {scale = array<f64: 0.5, 0.25>, zero_point = array<i64: 0, 0>, axis = 0} : (tensor<2x2xi8>) -> tensor<2x2xf32>
  return %d, %d2 : tensor<2xf32>, tensor<2x2xf32>
}

// -----

// Two pairs on one tensor with different parameters: the first wins, the
// second is dropped with a warning.
// CHECK-LABEL: func.func @two_pairs
// CHECK: top.relu %arg0 {kiln.qparams = array<f64: 1.000000e-01, 0.000000e+00>}
// CHECK-NOT: top.dequantize_linear
func.func @two_pairs(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = top.relu %arg0 : (tensor<4xf32>) -> tensor<4xf32>
  %q = top.quantize_linear %r {scale = array<f64: 0.1>, zero_point = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xi8>
  %d = top.dequantize_linear %q {scale = array<f64: 0.1>, zero_point = array<i64: 0>} : (tensor<4xi8>) -> tensor<4xf32>
  %q2 = top.quantize_linear %r {scale = array<f64: 0.2>, zero_point = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xi8>
  // expected-warning @+1 {{a second QDQ pair on one tensor: keeping its first quantization (scale 0.1, zero point 0) over (scale 0.2, zero point 0)}}
  %d2 = top.dequantize_linear %q2 {scale = array<f64: 0.2>, zero_point = array<i64: 0>} : (tensor<4xi8>) -> tensor<4xf32>
  return %d, %d2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// No QDQ: nothing changes.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: top.relu %arg0 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return
func.func @plain(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %r = top.relu %arg0 : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
