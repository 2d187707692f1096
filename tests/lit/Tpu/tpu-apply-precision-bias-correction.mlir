// RUN: kiln-opt %s -tpu-apply-precision | FileCheck %s
// RUN: kiln-opt %s -tpu-apply-precision=bias-correction=false | FileCheck %s --check-prefix=OFF

// INT8 bias correction: the filter's rounding shifts each output channel's
// mean by sum_i (q_i * scale - w_i) * mean(input channel i); the bias takes
// it back. Channel 0: 1.0 -> 64 * 2/127 (+1/127) times mean 0.3; channel 1:
// 3.0 -> 95 * 4/127 (-1/127) times mean 0.7. In units of the accumulator
// (input scale 0.01 times filter scale): 0.5 -> 3175 becomes 3160, -0.5 ->
// -1588 becomes -1570. Without the input's channel means, or with the
// option off, the bias stays (as tpu-apply-precision.mlir's int8_conv).
// CHECK-LABEL: func.func @int8_conv_bias_corrected
// CHECK: top.weight {value = dense<{{\[\[}}3160, 1082196484, 37], [-1570, 1082196484, 36]]> : tensor<2x3xi32>}
// CHECK-LABEL: func.func @int8_conv_padded
// CHECK: top.weight {value = dense<{{\[\[}}3100, {{.*}}]]> : tensor<1x3xi32>}
// CHECK-LABEL: func.func @int8_conv_no_means
// CHECK: top.weight {value = dense<{{\[\[}}3175, 1082196484, 37], [-1588, 1082196484, 36]]> : tensor<2x3xi32>}
// OFF-LABEL: func.func @int8_conv_bias_corrected
// OFF: top.weight {value = dense<{{\[\[}}3175, 1082196484, 37], [-1588, 1082196484, 36]]> : tensor<2x3xi32>}
module {
func.func @int8_conv_bias_corrected(%arg0: tensor<1x2x4x4xf32> {kiln.calib = array<f64: 1.27, -1.27, 1.0>, kiln.channel_mean = array<f64: 0.3, 0.7>, kiln.name = "input"}) -> tensor<1x2x4x4xf32> {
  %w = top.weight {value = dense<[[[[1.0]], [[2.0]]], [[[-4.0]], [[3.0]]]]> : tensor<2x2x1x1xf32>} : tensor<2x2x1x1xf32>
  %b = top.weight {value = dense<[0.5, -0.5]> : tensor<2xf32>} : tensor<2xf32>
  %c = tpu.conv2d %arg0, %w, %b {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false, kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 2.54, -2.54, 2.54>, kiln.final} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("conv")
  return %c : tensor<1x2x4x4xf32>
}
// A padded 3x3 conv on 2x2: every weight 1.0 rounds to 64 * 2/127 (+1/127),
// the centre 2.0 is exact. A corner tap reads the input at 1 of 4 outputs,
// an edge tap at 2 of 4, so the shift is (4 * 1/4 + 4 * 1/2) / 127 * mean
// 0.5 = 1.5/127, not 8/127 * 0.5: bias 0.5 (3175) becomes 3100.
func.func @int8_conv_padded(%arg0: tensor<1x1x2x2xf32> {kiln.calib = array<f64: 1.27, -1.27, 1.0>, kiln.channel_mean = array<f64: 0.5>, kiln.name = "input"}) -> tensor<1x1x2x2xf32> {
  %w = top.weight {value = dense<[[[[1.0, 1.0, 1.0], [1.0, 2.0, 1.0], [1.0, 1.0, 1.0]]]]> : tensor<1x1x3x3xf32>} : tensor<1x1x3x3xf32>
  %b = top.weight {value = dense<[0.5]> : tensor<1xf32>} : tensor<1xf32>
  %c = tpu.conv2d %arg0, %w, %b {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false, kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 2.54, -2.54, 2.54>, kiln.final} : (tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32> loc("conv")
  return %c : tensor<1x1x2x2xf32>
}
func.func @int8_conv_no_means(%arg0: tensor<1x2x4x4xf32> {kiln.calib = array<f64: 1.27, -1.27, 1.0>, kiln.name = "input"}) -> tensor<1x2x4x4xf32> {
  %w = top.weight {value = dense<[[[[1.0]], [[2.0]]], [[[-4.0]], [[3.0]]]]> : tensor<2x2x1x1xf32>} : tensor<2x2x1x1xf32>
  %b = top.weight {value = dense<[0.5, -0.5]> : tensor<2xf32>} : tensor<2xf32>
  %c = tpu.conv2d %arg0, %w, %b {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false, kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 2.54, -2.54, 2.54>, kiln.final} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("conv")
  return %c : tensor<1x2x4x4xf32>
}
}
