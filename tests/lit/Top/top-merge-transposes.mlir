// RUN: kiln-opt %s -split-input-file -top-merge-transposes | FileCheck %s

// NCHW -> NHWC -> NCHW cancels.
// CHECK-LABEL: func.func @pair
// CHECK-NOT: top.transpose
// CHECK: return %arg0
func.func @pair(%arg0: tensor<1x8x4x6xf32>) -> tensor<1x8x4x6xf32> {
  %0 = top.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x4x6xf32>) -> tensor<1x4x6x8xf32>
  %1 = top.transpose %0 {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x6x8xf32>) -> tensor<1x8x4x6xf32>
  return %1 : tensor<1x8x4x6xf32>
}

// -----

// Two moves compose into one; the first stays for its other user.
// CHECK-LABEL: func.func @compose
// CHECK: %[[A:.*]] = top.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>}
// CHECK: %[[B:.*]] = top.transpose %arg0 {perm = array<i64: 3, 2, 0, 1>}
// CHECK: return %[[A]], %[[B]]
func.func @compose(%arg0: tensor<2x8x4x6xf32>) -> (tensor<2x4x6x8xf32>, tensor<6x4x2x8xf32>) {
  %0 = top.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x8x4x6xf32>) -> tensor<2x4x6x8xf32>
  %1 = top.transpose %0 {perm = array<i64: 2, 1, 0, 3>} : (tensor<2x4x6x8xf32>) -> tensor<6x4x2x8xf32>
  return %0, %1 : tensor<2x4x6x8xf32>, tensor<6x4x2x8xf32>
}

// -----

// A squeeze-and-excitation scale [1, C, 1, 1] permuted to [1, 1, 1, C] moves
// no element: a reshape.
// CHECK-LABEL: func.func @unit_dims
// CHECK-NOT: top.transpose
// CHECK: top.reshape %arg0 {shape = array<i64: 1, 1, 1, 32>}
func.func @unit_dims(%arg0: tensor<1x32x1x1xf32>) -> tensor<1x1x1x32xf32> {
  %0 = top.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x32x1x1xf32>) -> tensor<1x1x1x32xf32>
  return %0 : tensor<1x1x1x32xf32>
}

// -----

// A real transpose stays.
// CHECK-LABEL: func.func @real
// CHECK: top.transpose %arg0 {perm = array<i64: 0, 2, 1, 3>}
func.func @real(%arg0: tensor<1x8x4x1xf32>) -> tensor<1x4x8x1xf32> {
  %0 = top.transpose %arg0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x4x1xf32>) -> tensor<1x4x8x1xf32>
  return %0 : tensor<1x4x8x1xf32>
}
