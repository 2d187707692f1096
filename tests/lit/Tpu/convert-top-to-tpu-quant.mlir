// RUN: kiln-opt %s -convert-top-to-tpu -split-input-file -verify-diagnostics | FileCheck %s

// F32 view of a QDQ model: a QDQ pair on an activation becomes a tpu.cast
// into the quant type and back (uint8 zero point 130 as int8: 2); the INT8
// weight's dequantize is a float weight computed at compile time
// ([2, -4] * 0.5, [-1, 3] * 0.25).
// CHECK-LABEL: func.func @qdq
// CHECK: %[[Q:.*]] = tpu.cast %arg0 : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2x!quant.uniform<i8:f32, 2.000000e-02:2>>
// CHECK: %[[D:.*]] = tpu.cast %[[Q]] : (tensor<1x2x2x2x!quant.uniform<i8:f32, 2.000000e-02:2>>) -> tensor<1x2x2x2xf32>
// CHECK: tpu.conv2d %[[D]], %[[W:[^,]*]],
// CHECK-NOT: top.dequantize_linear
// CHECK-NOT: top.quantize_linear
// CHECK: filter_dq: "0x040000000000803F000000C0000080BE0000403F"
func.func @qdq(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %q = top.quantize_linear %arg0 {scale = array<f64: 0.02>, zero_point = array<i64: 130>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xui8>
  %d = top.dequantize_linear %q {scale = array<f64: 0.02>, zero_point = array<i64: 130>} : (tensor<1x2x2x2xui8>) -> tensor<1x2x2x2xf32>
  %w = top.weight {value = dense<[[[[2]], [[-4]]], [[[-1]], [[3]]]]> : tensor<2x2x1x1xi8>} : tensor<2x2x1x1xi8>
  %wd = top.dequantize_linear %w {scale = array<f64: 0.5, 0.25>, zero_point = array<i64: 0, 0>, axis = 0} : (tensor<2x2x1x1xi8>) -> tensor<2x2x1x1xf32> loc("filter_dq")
  %n = top.none
  %c = top.conv %d, %wd, %n {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

// The chip quantizes activations per tensor.
func.func @per_axis(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+2 {{failed to legalize operation 'top.quantize_linear'}}
  // expected-error @+1 {{quantizes an activation per axis (2 scales); the chip quantizes activations per tensor}}
  %q = top.quantize_linear %arg0 {scale = array<f64: 0.02, 0.03>, zero_point = array<i64: 0, 0>, axis = 1} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xi8>
  %d = top.dequantize_linear %q {scale = array<f64: 0.02, 0.03>, zero_point = array<i64: 0, 0>, axis = 1} : (tensor<1x2x2x2xi8>) -> tensor<1x2x2x2xf32>
  return %d : tensor<1x2x2x2xf32>
}
