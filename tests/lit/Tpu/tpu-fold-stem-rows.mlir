// RUN: kiln-opt %s -split-input-file -tpu-fold-stem-rows | FileCheck %s

// An RGB stem in F16 fills 3 of the 32 input-channel slots. Its 7 kernel rows
// fold into 21 channels: tpu.fold_rows puts, per kernel row ky, input rows
// 2*oy + ky - 3 into channels [3*ky, 3*ky + 3) (the conv's group loads them
// there), the filter's kernel rows move into its channels, and the conv keeps
// its columns (kernel 1x7, stride 1x2, pads left/right only).
// CHECK-LABEL: func.func @stem_f16
// CHECK: %[[ROWS:.*]] = tpu.fold_rows %arg0 {dilation_h = 1 : i64, kernel_h = 7 : i64, pad_top = 3 : i64, stride_h = 2 : i64}
// CHECK-SAME: (tensor<1x3x224x224xf16>) -> tensor<1x21x112x224xf16>
// CHECK: %[[W:.*]] = top.weight {value = dense<5.000000e-01> : tensor<64x21x1x7xf16>}
// CHECK: tpu.conv2d %[[ROWS]], %[[W]], %{{.*}} {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 1, 7>, pads = array<i64: 0, 3, 0, 3>, strides = array<i64: 1, 2>}
// CHECK-SAME: -> tensor<1x64x112x112xf16>
func.func @stem_f16(%x: tensor<1x3x224x224xf16>) -> tensor<1x64x112x112xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<64x3x7x7xf16>} : tensor<64x3x7x7xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf16>, tensor<64x3x7x7xf16>, none) -> tensor<1x64x112x112xf16>
  return %0 : tensor<1x64x112x112xf16>
}

// -----

// F32 convs take one input channel per slot and cycle: folding gains nothing.
// CHECK-LABEL: func.func @stem_f32
// CHECK-NOT: tpu.fold_rows
// CHECK: kernel_shape = array<i64: 7, 7>
func.func @stem_f32(%x: tensor<1x3x224x224xf32>) -> tensor<1x64x112x112xf32> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<64x3x7x7xf32>} : tensor<64x3x7x7xf32>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, none) -> tensor<1x64x112x112xf32>
  return %0 : tensor<1x64x112x112xf32>
}

// -----

// A wide conv already fills the slots.
// CHECK-LABEL: func.func @wide_f16
// CHECK-NOT: tpu.fold_rows
// CHECK: kernel_shape = array<i64: 3, 3>
func.func @wide_f16(%x: tensor<1x64x56x56xf16>) -> tensor<1x64x56x56xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<64x64x3x3xf16>} : tensor<64x64x3x3xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x56x56xf16>, tensor<64x64x3x3xf16>, none) -> tensor<1x64x56x56xf16>
  return %0 : tensor<1x64x56x56xf16>
}

// -----

// Only the conv reading the net's input folds; a narrow conv deeper in the
// net keeps its place in a layer group (its input would have to be stored
// for the folded loads).
// CHECK-LABEL: func.func @inner_f16
// CHECK: %[[ROWS:.*]] = tpu.fold_rows %arg0
// CHECK: %[[FIRST:.*]] = tpu.conv2d %[[ROWS]], {{.*}}kernel_shape = array<i64: 1, 7>
// CHECK-NOT: tpu.fold_rows
// CHECK: tpu.conv2d %[[FIRST]], {{.*}}kernel_shape = array<i64: 7, 7>
func.func @inner_f16(%x: tensor<1x3x224x224xf16>) -> tensor<1x3x224x224xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<3x3x7x7xf16>} : tensor<3x3x7x7xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x3x224x224xf16>, tensor<3x3x7x7xf16>, none) -> tensor<1x3x224x224xf16>
  %1 = tpu.conv2d %0, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x3x224x224xf16>, tensor<3x3x7x7xf16>, none) -> tensor<1x3x224x224xf16>
  return %1 : tensor<1x3x224x224xf16>
}

// -----

// The filter's kernel rows become channel blocks: W'[o, ky*C + c, 0, kx] =
// W[o, c, ky, kx]. Here W[0, c, ky, kx] = 9c + 3ky + kx + 1, so W' lists
// kernel row 0 of both channels (1 2 3, 10 11 12), then row 1, then row 2.
// A cast of the net's input moves after the fold, which reads the input in
// its own dtype.
// CHECK-LABEL: func.func @cast_and_filter
// CHECK: %[[ROWS:.*]] = tpu.fold_rows %arg0 {dilation_h = 1 : i64, kernel_h = 3 : i64, pad_top = 1 : i64, stride_h = 1 : i64} : (tensor<1x2x224x224xf32>) -> tensor<1x6x224x224xf32>
// CHECK: %[[CAST:.*]] = tpu.cast %[[ROWS]] {{.*}}-> tensor<1x6x224x224xf16>
// CHECK{LITERAL}: top.weight {value = dense<[[[[1.000000e+00, 2.000000e+00, 3.000000e+00]], [[1.000000e+01, 1.100000e+01, 1.200000e+01]], [[4.000000e+00, 5.000000e+00, 6.000000e+00]], [[1.300000e+01, 1.400000e+01, 1.500000e+01]], [[7.000000e+00, 8.000000e+00, 9.000000e+00]], [[1.600000e+01, 1.700000e+01, 1.800000e+01]]]]> : tensor<1x6x1x3xf16>}
// CHECK: tpu.conv2d %[[CAST]]
// CHECK-SAME: kernel_shape = array<i64: 1, 3>, pads = array<i64: 0, 1, 0, 1>
func.func @cast_and_filter(%x: tensor<1x2x224x224xf32>) -> tensor<1x1x224x224xf16> {
  %w = top.weight {value = dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[10.0, 11.0, 12.0], [13.0, 14.0, 15.0], [16.0, 17.0, 18.0]]]]> : tensor<1x2x3x3xf16>} : tensor<1x2x3x3xf16>
  %n = top.none
  %c = tpu.cast %x : (tensor<1x2x224x224xf32>) -> tensor<1x2x224x224xf16>
  %0 = tpu.conv2d %c, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x224x224xf16>, tensor<1x2x3x3xf16>, none) -> tensor<1x1x224x224xf16>
  return %0 : tensor<1x1x224x224xf16>
}
