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
