// RUN: kiln-opt %s -split-input-file -top-fold-pad-into-conv | FileCheck %s

// upfirdn2d's explicit zero pad before the depthwise FIR conv: the conv pads.
// CHECK-LABEL: func.func @fir
// CHECK-NOT: top.pad
// CHECK: top.conv %arg0, {{.*}} pads = array<i64: 1, 2, 1, 2>
func.func @fir(%x: tensor<1x4x9x9xf32>) -> tensor<1x4x8x10xf32> {
  %w = top.weight {value = dense<0.0625> : tensor<4x1x4x4xf32>} : tensor<4x1x4x4xf32>
  %none = top.none
  %p = top.pad %x {mode = 0 : i32, pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x11x11xf32>
  %y = top.conv %p, %w, %none {dilations = array<i64: 1, 1>, group = 4 : i64, kernel_shape = array<i64: 4, 4>, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x11x11xf32>, tensor<4x1x4x4xf32>, none) -> tensor<1x4x8x10xf32>
  return %y : tensor<1x4x8x10xf32>
}

// -----

// A pad the conv cannot take stays: non-zero value, reflect mode, channel
// padding, or more padding than the kernel spans.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: top.pad
func.func @kept(%x: tensor<1x4x9x9xf32>) -> (tensor<1x4x9x9xf32>, tensor<1x4x9x9xf32>, tensor<1x6x9x9xf32>, tensor<1x4x13x13xf32>) {
  %w = top.weight {value = dense<0.5> : tensor<4x4x3x3xf32>} : tensor<4x4x3x3xf32>
  %w6 = top.weight {value = dense<0.5> : tensor<6x6x3x3xf32>} : tensor<6x6x3x3xf32>
  %none = top.none
  %p1 = top.pad %x {mode = 0 : i32, value = 1.0 : f64, pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x11x11xf32>
  %y1 = top.conv %p1, %w, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x11x11xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x9x9xf32>
  %p2 = top.pad %x {mode = 1 : i32, pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x11x11xf32>
  %y2 = top.conv %p2, %w, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x11x11xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x9x9xf32>
  %p3 = top.pad %x {mode = 0 : i32, pads = array<i64: 0, 1, 1, 1, 0, 1, 1, 1>} : (tensor<1x4x9x9xf32>) -> tensor<1x6x11x11xf32>
  %y3 = top.conv %p3, %w6, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x11x11xf32>, tensor<6x6x3x3xf32>, none) -> tensor<1x6x9x9xf32>
  %p4 = top.pad %x {mode = 0 : i32, pads = array<i64: 0, 0, 2, 2, 0, 0, 2, 2>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x13x13xf32>
  %y4 = top.conv %p4, %w, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x13x13xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x13x13xf32>
  return %y1, %y2, %y3, %y4 : tensor<1x4x9x9xf32>, tensor<1x4x9x9xf32>, tensor<1x6x9x9xf32>, tensor<1x4x13x13xf32>
}

// -----

// A pad with another user stays for it; the conv reads the unpadded input.
// CHECK-LABEL: func.func @shared
// CHECK: %[[P:.*]] = top.pad %arg0
// CHECK: top.conv %arg0
// CHECK: return %{{.*}}, %[[P]]
func.func @shared(%x: tensor<1x4x9x9xf32>) -> (tensor<1x4x9x9xf32>, tensor<1x4x11x11xf32>) {
  %w = top.weight {value = dense<0.5> : tensor<4x4x3x3xf32>} : tensor<4x4x3x3xf32>
  %none = top.none
  %p = top.pad %x {mode = 0 : i32, pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x11x11xf32>
  %y = top.conv %p, %w, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x11x11xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x9x9xf32>
  return %y, %p : tensor<1x4x9x9xf32>, tensor<1x4x11x11xf32>
}
