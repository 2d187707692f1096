// RUN: kiln-opt %s -convert-top-to-tpu -split-input-file | FileCheck %s

// A 4-D transpose is one strided copy.
// CHECK-LABEL: func.func @transpose
// CHECK: tpu.dma %arg0 {program = [#tpu.copy<src = 0, src_offset = 0, dst_offset = 0, shape = [2, 5, 4, 3], src_strides = [60, 1, 5, 20], dst_strides = [60, 12, 3, 1]>]}
func.func @transpose(%arg0: tensor<2x3x4x5xf32>) -> tensor<2x5x4x3xf32> {
  %0 = top.transpose %arg0 {perm = array<i64: 0, 3, 2, 1>} : (tensor<2x3x4x5xf32>) -> tensor<2x5x4x3xf32>
  return %0 : tensor<2x5x4x3xf32>
}

// -----

// Contiguous dimensions merge: a slice of rows 1..3 of a [4, 8] matrix is one
// run of 16 elements starting at element 8.
// CHECK-LABEL: func.func @slice_rows
// CHECK: tpu.dma %arg0 {program = [#tpu.copy<src = 0, src_offset = 8, dst_offset = 0, shape = [1, 1, 1, 16], src_strides = [0, 0, 0, 1], dst_strides = [0, 0, 0, 1]>]}
func.func @slice_rows(%arg0: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %0 = top.slice %arg0 {starts = array<i64: 1, 0>, ends = array<i64: 3, 8>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Broadcasting reads with stride 0.
// CHECK-LABEL: func.func @expand
// CHECK: tpu.dma %arg0 {program = [#tpu.copy<src = 0, src_offset = 0, dst_offset = 0, shape = [1, 1, 3, 4], src_strides = [0, 0, 1, 0], dst_strides = [0, 0, 4, 1]>]}
func.func @expand(%arg0: tensor<3x1xf32>) -> tensor<3x4xf32> {
  %0 = top.expand %arg0 {shape = array<i64: 3, 4>} : (tensor<3x1xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Constant padding fills, then copies the interior; 1.5 is 0x3FC00000.
// CHECK-LABEL: func.func @pad
// CHECK: tpu.dma %arg0 {program = [#tpu.copy<src = fill, dst_offset = 0, shape = [1, 1, 1, 20], dst_strides = [0, 0, 0, 1], bits = 0x3FC00000>, #tpu.copy<src = 0, src_offset = 0, dst_offset = 6, shape = [1, 1, 2, 3], src_strides = [0, 0, 3, 1], dst_strides = [0, 0, 5, 1]>]}
func.func @pad(%arg0: tensor<2x3xf32>) -> tensor<4x5xf32> {
  %0 = top.pad %arg0 {pads = array<i64: 1, 1, 1, 1>, mode = 0 : i32, value = 1.5 : f64} : (tensor<2x3xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// A reduction over H and W is one sum pool over the 4 x 5 window: the input
// keeps its layout (no reshape), so the pool can share its producer's group.
// CHECK-LABEL: func.func @reduce_hw
// CHECK-NOT: tpu.reshape
// CHECK: tpu.pool2d %arg0 {{.*}}kernel_shape = array<i64: 4, 5>{{.*}}kind = 2
// CHECK-NOT: tpu.dma
func.func @reduce_hw(%arg0: tensor<1x8x4x5xf32>) -> tensor<1x8x1x1xf32> {
  %0 = top.reduce %arg0 {mode = 0 : i32, axes = array<i64: 2, 3>, keepdims = true} : (tensor<1x8x4x5xf32>) -> tensor<1x8x1x1xf32>
  return %0 : tensor<1x8x1x1xf32>
}

// -----

// Reducing the channel axis moves it last first; L2 squares and takes the root.
// CHECK-LABEL: func.func @reduce_c_l2
// CHECK: tpu.dma
// CHECK: tpu.active {{.*}}mode = 18
// CHECK: tpu.pool2d {{.*}}kind = 2
// CHECK: tpu.active {{.*}}mode = 6
func.func @reduce_c_l2(%arg0: tensor<1x8x4x5xf32>) -> tensor<1x1x4x5xf32> {
  %0 = top.reduce %arg0 {mode = 4 : i32, axes = array<i64: 1>, keepdims = true} : (tensor<1x8x4x5xf32>) -> tensor<1x1x4x5xf32>
  return %0 : tensor<1x1x4x5xf32>
}

// -----

// A batched matmul with a computed right operand becomes a grouped 1x1 conv.
// CHECK-LABEL: func.func @bmm
// CHECK: tpu.conv2d {{.*}}group = 3 : i64
func.func @bmm(%arg0: tensor<3x4x5xf32>, %arg1: tensor<3x5x6xf32>) -> tensor<3x4x6xf32> {
  %n = top.none
  %0 = top.matmul %arg0, %arg1, %n : (tensor<3x4x5xf32>, tensor<3x5x6xf32>, none) -> tensor<3x4x6xf32>
  return %0 : tensor<3x4x6xf32>
}

// -----

// A static ConvTranspose filter [ic, oc, kh, kw] is reordered at compile time.
// CHECK-LABEL: func.func @deconv
// CHECK: top.weight {{.*}} : tensor<4x2x3x3xf32>
// CHECK: tpu.deconv2d
func.func @deconv(%arg0: tensor<1x2x5x5xf32>) -> tensor<1x4x10x10xf32> {
  %w = top.weight {value = dense<1.0> : tensor<2x4x3x3xf32>} : tensor<2x4x3x3xf32>
  %n = top.none
  %0 = top.deconv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>, tensor<2x4x3x3xf32>, none) -> tensor<1x4x10x10xf32>
  return %0 : tensor<1x4x10x10xf32>
}
