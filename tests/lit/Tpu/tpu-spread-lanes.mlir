// RUN: kiln-opt %s -split-input-file -tpu-spread-lanes | FileCheck %s

// A text-detection head's last steps: Sigmoid and the cast to the f32 output
// over a one-channel 640 x 640 map, straight from DDR (the net's input here)
// to the net's output. They run on the view [1, 64, 10, 640]: 64 lanes
// instead of one.
// CHECK-LABEL: func.func @head
// CHECK: %[[V:.*]] = tpu.reshape %arg0 : (tensor<1x1x640x640xf16>) -> tensor<1x64x10x640xf16>
// CHECK: %[[S:.*]] = tpu.active %[[V]] {{.*}} -> tensor<1x64x10x640xf16>
// CHECK: %[[C:.*]] = tpu.cast %[[S]] : (tensor<1x64x10x640xf16>) -> tensor<1x64x10x640xf32>
// CHECK: %[[B:.*]] = tpu.reshape %[[C]] : (tensor<1x64x10x640xf32>) -> tensor<1x1x640x640xf32>
// CHECK: return %[[B]]
func.func @head(%x: tensor<1x1x640x640xf16>) -> tensor<1x1x640x640xf32> {
  %0 = tpu.active %x {mode = 2 : i32, alpha = 0.0 : f64, beta = 0.0 : f64} : (tensor<1x1x640x640xf16>) -> tensor<1x1x640x640xf16>
  %1 = tpu.cast %0 : (tensor<1x1x640x640xf16>) -> tensor<1x1x640x640xf32>
  return %1 : tensor<1x1x640x640xf32>
}

// -----

// A ReLU between two convs over 16 channels: one pass saved per 4 rows does
// not pay for the DDR trips the reshapes would force on both sides; and a
// 64-channel tensor already fills the lanes.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: tpu.reshape
func.func @kept(%x: tensor<1x16x32x32xf32>, %y: tensor<1x64x8x8xf32>) -> (tensor<1x16x32x32xf32>, tensor<1x64x8x8xf32>) {
  %w = top.weight {value = dense<0.5> : tensor<16x16x1x1xf32>} : tensor<16x16x1x1xf32>
  %none = top.none
  %0 = tpu.conv2d %x, %w, %none {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>, tensor<16x16x1x1xf32>, none) -> tensor<1x16x32x32xf32>
  %1 = tpu.relu %0 : (tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  %2 = tpu.conv2d %1, %w, %none {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x32x32xf32>, tensor<16x16x1x1xf32>, none) -> tensor<1x16x32x32xf32>
  %3 = tpu.active %y {mode = 2 : i32, alpha = 0.0 : f64, beta = 0.0 : f64} : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  return %2, %3 : tensor<1x16x32x32xf32>, tensor<1x64x8x8xf32>
}

// -----

// A cast forming a filter in its conv's layout (a matmul's 512-element row
// vector on one lane, viewed as a [1, 512, 1, 1] filter): spread over 64
// lanes it would save a few EU cycles and cost the filter's trip through DDR,
// where in the conv's group it is formed in LMEM.
// CHECK-LABEL: func.func @filter_cast
// CHECK: tpu.cast %{{.*}} : (tensor<1x1x512x1xf32>) -> tensor<1x1x512x1xf16>
// CHECK-NOT: tensor<1x64x8x1x
func.func @filter_cast(%rows: tensor<1x512x1x4xf16>, %vec: tensor<1x1x512x1xf32>) -> tensor<1x1x1x4xf16> {
  %n = top.none
  %c = tpu.cast %vec : (tensor<1x1x512x1xf32>) -> tensor<1x1x512x1xf16>
  %f = tpu.reshape %c : (tensor<1x1x512x1xf16>) -> tensor<1x512x1x1xf16>
  %y = tpu.conv2d %rows, %f, %n {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x512x1x4xf16>, tensor<1x512x1x1xf16>, none) -> tensor<1x1x1x4xf16>
  return %y : tensor<1x1x1x4xf16>
}
