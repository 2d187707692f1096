// RUN: kiln-opt %s -split-input-file -top-sink-reshape-into-reduce | FileCheck %s

// StyleGAN2's demodulation: the [1, O] chain after the sum of squares runs on
// the [1, O, 1, 1, 1] shape its final reshape gives it, and the reshape goes.
// CHECK-LABEL: func.func @demodulation
// CHECK: %[[SUM:.*]] = top.reduce %{{.*}} {axes = array<i64: 2, 3, 4>, mode = 0 : i32} : (tensor<1x8x4x3x3xf32>) -> tensor<1x8x1x1x1xf32>
// CHECK: %[[EPS:.*]] = top.add %[[SUM]], %{{.*}} : (tensor<1x8x1x1x1xf32>, tensor<f32>) -> tensor<1x8x1x1x1xf32>
// CHECK: %[[ROOT:.*]] = top.active %[[EPS]] {{.*}}-> tensor<1x8x1x1x1xf32>
// CHECK: %[[D:.*]] = top.div %{{.*}}, %[[ROOT]] : (tensor<f32>, tensor<1x8x1x1x1xf32>) -> tensor<1x8x1x1x1xf32>
// CHECK-NOT: top.reshape
// CHECK: top.mul %arg0, %[[D]]
func.func @demodulation(%w: tensor<1x8x4x3x3xf32>) -> tensor<1x8x4x3x3xf32> {
  %eps = top.weight {value = dense<1.0e-8> : tensor<f32>} : tensor<f32>
  %one = top.weight {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %sq = top.mul %w, %w : (tensor<1x8x4x3x3xf32>, tensor<1x8x4x3x3xf32>) -> tensor<1x8x4x3x3xf32>
  %sum = top.reduce %sq {axes = array<i64: 2, 3, 4>, keepdims = false, mode = 0 : i32} : (tensor<1x8x4x3x3xf32>) -> tensor<1x8xf32>
  %a = top.add %sum, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %r = top.active %a {mode = 6 : i32} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %d = top.div %one, %r : (tensor<f32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %d5 = top.reshape %d {shape = array<i64: 1, -1, 1, 1, 1>} : (tensor<1x8xf32>) -> tensor<1x8x1x1x1xf32>
  %out = top.mul %w, %d5 : (tensor<1x8x4x3x3xf32>, tensor<1x8x1x1x1xf32>) -> tensor<1x8x4x3x3xf32>
  return %out : tensor<1x8x4x3x3xf32>
}

// -----

// A reshape to another shape than the reduction's kept axes stays.
// CHECK-LABEL: func.func @other_shape
// CHECK: keepdims = false
// CHECK: top.reshape
func.func @other_shape(%x: tensor<1x8x4x4xf32>) -> tensor<2x4xf32> {
  %sum = top.reduce %x {axes = array<i64: 2, 3>, keepdims = false, mode = 0 : i32} : (tensor<1x8x4x4xf32>) -> tensor<1x8xf32>
  %r = top.reshape %sum {shape = array<i64: 2, 4>} : (tensor<1x8xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// An op between them with a second user, or a non-scalar operand, keeps the
// chain as it is.
// CHECK-LABEL: func.func @shared
// CHECK: keepdims = false
// CHECK: top.reshape
func.func @shared(%x: tensor<1x8x4x4xf32>, %b: tensor<1x8xf32>) -> (tensor<1x8x1x1xf32>, tensor<1x8xf32>) {
  %sum = top.reduce %x {axes = array<i64: 2, 3>, keepdims = false, mode = 0 : i32} : (tensor<1x8x4x4xf32>) -> tensor<1x8xf32>
  %a = top.add %sum, %b : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %r = top.reshape %a {shape = array<i64: 1, 8, 1, 1>} : (tensor<1x8xf32>) -> tensor<1x8x1x1xf32>
  return %r, %a : tensor<1x8x1x1xf32>, tensor<1x8xf32>
}
