// RUN: kiln-opt %s -top-shape-infer -split-input-file -verify-diagnostics | FileCheck %s

// Result shapes (here deliberately wrong) are recomputed from the operands.
// CHECK-LABEL: func.func @conv_pool
// CHECK-SAME: -> tensor<1x8x28x28xf32>
// CHECK: top.conv {{.*}} -> tensor<1x8x56x56xf32>
// CHECK: top.maxpool {{.*}} -> tensor<1x8x28x28xf32>
func.func @conv_pool(%arg0: tensor<1x3x112x112xf32>) -> tensor<1x1x1x1xf32> {
  %w = top.weight {value = dense<1.0> : tensor<8x3x3x3xf32>} : tensor<8x3x3x3xf32>
  %n = top.none
  %0 = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x112x112xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x1x1x1xf32>
  %1 = top.maxpool %0 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  return %1 : tensor<1x1x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast
// CHECK: top.add {{.*}} -> tensor<2x3x4xf32>
func.func @broadcast(%arg0: tensor<2x1x4xf32>, %arg1: tensor<3x1xf32>) -> tensor<1xf32> {
  %0 = top.add %arg0, %arg1 : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @mismatch(%arg0: tensor<2x3xf32>, %arg1: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operands do not broadcast}}
  %0 = top.add %arg0, %arg1 : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Batched matmul: the batch dimensions broadcast.
// CHECK-LABEL: func.func @batched_matmul
// CHECK: top.matmul {{.*}} -> tensor<2x5x3x6xf32>
func.func @batched_matmul(%arg0: tensor<2x1x3x4xf32>, %arg1: tensor<5x4x6xf32>) -> tensor<1xf32> {
  %n = top.none
  %0 = top.matmul %arg0, %arg1, %n : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>, none) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// Output channels come from filter dim 1 x group in ONNX layout and from
// dim 0 once reordered: both give 6 here.
// CHECK-LABEL: func.func @deconv_layouts
// CHECK: top.deconv {{.*}} -> tensor<1x6x8x7xf32>
// CHECK: top.deconv {{.*}} -> tensor<1x6x8x7xf32>
func.func @deconv_layouts(%arg0: tensor<1x4x3x3xf32>, %onnx: tensor<4x3x2x2xf32>, %oihw: tensor<6x2x2x2xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %n = top.none
  %0 = top.deconv %arg0, %onnx, %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 3, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 1>, group = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<4x3x2x2xf32>, none) -> tensor<1xf32>
  %1 = top.deconv %arg0, %oihw, %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 3, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 1>, group = 2 : i64, filter_reordered = true} : (tensor<1x4x3x3xf32>, tensor<6x2x2x2xf32>, none) -> tensor<1xf32>
  return %0, %1 : tensor<1xf32>, tensor<1xf32>
}

// -----

// CHECK-LABEL: func.func @data_movement
// CHECK: top.transpose {{.*}} -> tensor<4x2x3xf32>
// CHECK: top.slice {{.*}} -> tensor<2x2x2xf32>
// CHECK: top.gather {{.*}} -> tensor<2x2x2x4xf32>
// CHECK: top.expand {{.*}} -> tensor<5x2x3x4xf32>
// CHECK: top.expand {{.*}} -> tensor<4x3x8xf32>
// CHECK: top.pad {{.*}} -> tensor<2x6x5xf32>
// CHECK: top.reduce {{.*}} -> tensor<3xf32>
func.func @data_movement(%arg0: tensor<2x3x4xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  %0 = top.transpose %arg0 {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<1xf32>
  // Backwards along the last axis from 3 to (exclusive) -1 in steps of 2.
  %1 = top.slice %arg0 {starts = array<i64: 0, 1, 3>, ends = array<i64: 2, 3, -1>, steps = array<i64: 1, 1, -2>} : (tensor<2x3x4xf32>) -> tensor<1xf32>
  %2 = top.gather %arg0 {axis = 1 : i64, indices = array<i64: 0, 2, 2, 1>, indices_shape = array<i64: 2, 2>} : (tensor<2x3x4xf32>) -> tensor<1xf32>
  %3 = top.expand %arg0 {shape = array<i64: 5, 1, 1, 4>} : (tensor<2x3x4xf32>) -> tensor<1xf32>
  %4 = top.expand %arg0 {shape = array<i64: 4, 3, 8>, repeats = array<i64: 2, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<1xf32>
  %5 = top.pad %arg0 {pads = array<i64: 0, 1, 0, 0, 2, 1>, mode = 1 : i32} : (tensor<2x3x4xf32>) -> tensor<1xf32>
  %6 = top.reduce %arg0 {mode = 1 : i32, axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<1xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}

// -----

// CHECK-LABEL: func.func @resize
// CHECK: top.resize {{.*}} -> tensor<1x3x8x12xf32>
func.func @resize(%arg0: tensor<1x3x4x6xf32>) -> tensor<1xf32> {
  %0 = top.resize %arg0 {mode = 1 : i32, out_hw = array<i64: 8, 12>, scales = array<f64: 2.0, 2.0>, coord_mode = 0 : i32, nearest_mode = 0 : i32} : (tensor<1x3x4x6xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @bad_slice(%arg0: tensor<2x3xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{dimension 1: start 4, end 3, step 1 are not normalized for extent 3}}
  %0 = top.slice %arg0 {starts = array<i64: 0, 4>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @bad_reflect(%arg0: tensor<2x3xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{reflect pads of dimension 1 must be smaller than its extent 3}}
  %0 = top.pad %arg0 {pads = array<i64: 0, 3, 0, 0>, mode = 1 : i32} : (tensor<2x3xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @bad_deconv(%arg0: tensor<1x4x3x3xf32>, %arg1: tensor<3x2x2x2xf32>) -> tensor<1xf32> {
  %n = top.none
  // expected-error @+1 {{input channels 4 do not match filter}}
  %0 = top.deconv %arg0, %arg1, %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x3x3xf32>, tensor<3x2x2x2xf32>, none) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// ceil_mode with a window larger than the (padded) input: one output when
// the window starts inside, as in ONNX and PyTorch (compiler fuzzer finding:
// "window is larger than the padded input"). The second window is wider by
// one stride than the input: no output there.
// CHECK-LABEL: func.func @ceil_window_larger_than_input
// CHECK: top.maxpool {{.*}} -> tensor<1x7x1x1xf32>
func.func @ceil_window_larger_than_input(%arg0: tensor<1x7x1x2xf32>) -> tensor<1x7x1x1xf32> {
  %0 = top.maxpool %arg0 {ceil_mode = true, kernel_shape = array<i64: 2, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x7x1x2xf32>) -> tensor<1x7x1x1xf32>
  return %0 : tensor<1x7x1x1xf32>
}

// -----

func.func @ceil_window_starts_past_input(%arg0: tensor<1x7x1x1xf32>) -> tensor<1x7x1x1xf32> {
  // expected-error @+1 {{window is larger than the padded input}}
  %0 = top.maxpool %arg0 {ceil_mode = true, kernel_shape = array<i64: 3, 1>, strides = array<i64: 2, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x7x1x1xf32>) -> tensor<1x7x1x1xf32>
  return %0 : tensor<1x7x1x1xf32>
}
