// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-form-views | FileCheck %s

// A channel split of a [1, C, H, W] map copies contiguous ranges: each part
// is a view at its element offset, no tpu.dma left.
// CHECK-LABEL: func.func @split_channels
// CHECK-NOT: tpu.dma
// CHECK: tpu.view %arg0 {offset = 0 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK: tpu.view %arg0 {offset = 48 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x5x4x4xf32>
func.func @split_channels(%arg0: tensor<1x8x4x4xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x5x4x4xf32>) {
  %0 = top.slice %arg0 {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 1, 3, 4, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x3x4x4xf32>
  %1 = top.slice %arg0 {starts = array<i64: 0, 3, 0, 0>, ends = array<i64: 1, 8, 4, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x5x4x4xf32>
  return %0, %1 : tensor<1x3x4x4xf32>, tensor<1x5x4x4xf32>
}

// -----

// One row of StyleGAN2's ws [1, 14, 512] (a gather of index 3 on axis 1).
// CHECK-LABEL: func.func @ws_row
// CHECK: tpu.view %arg0 {offset = 1536 : i64} : (tensor<1x14x512xf32>) -> tensor<1x512xf32>
func.func @ws_row(%arg0: tensor<1x14x512xf32>) -> tensor<1x512xf32> {
  %0 = top.gather %arg0 {axis = 1 : i64, indices = array<i64: 3>, indices_shape = array<i64>} : (tensor<1x14x512xf32>) -> tensor<1x512xf32>
  return %0 : tensor<1x512xf32>
}

// -----

// Slices that are not one contiguous range stay copies: along H with C > 1,
// with a step, and reversed.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: tpu.view
// CHECK-COUNT-3: tpu.dma
// CHECK-NOT: tpu.view
func.func @strided(%arg0: tensor<1x8x4x4xf32>) -> (tensor<1x8x2x4xf32>, tensor<1x4x4x4xf32>, tensor<1x8x4x4xf32>) {
  %0 = top.slice %arg0 {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 1, 8, 2, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x4xf32>
  %1 = top.slice %arg0 {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 1, 8, 4, 4>, steps = array<i64: 1, 2, 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x4xf32>
  %2 = top.slice %arg0 {starts = array<i64: 0, 7, 0, 0>, ends = array<i64: 1, -1, 4, 4>, steps = array<i64: 1, -1, 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %0, %1, %2 : tensor<1x8x2x4xf32>, tensor<1x4x4x4xf32>, tensor<1x8x4x4xf32>
}
