// RUN: kiln-opt %s -convert-top-to-tpu -split-input-file | FileCheck %s

// Gemm becomes a 1x1 conv between reshapes, with the filter transposed at
// compile time; global average pooling becomes a pool over H x W.
// CHECK-LABEL: func.func @head
// CHECK: tpu.pool2d %arg0 {{.*}}kernel_shape = array<i64: 7, 7>{{.*}}kind = 1
// CHECK: %[[R:.*]] = tpu.reshape {{.*}} -> tensor<1x8x1x1xf32>
// CHECK: %[[C:.*]] = tpu.conv2d %[[R]], {{.*}} -> tensor<1x10x1x1xf32>
// CHECK: tpu.reshape %[[C]] {{.*}} -> tensor<1x10xf32>
// CHECK-NOT: top.matmul
func.func @head(%arg0: tensor<1x8x7x7xf32>) -> tensor<1x10xf32> {
  %0 = top.global_avgpool %arg0 : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
  %1 = top.reshape %0 {shape = array<i64: 1, 8>} : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
  %w = top.weight {value = dense<1.0> : tensor<10x8xf32>} : tensor<10x8xf32>
  %b = top.weight {value = dense<0.5> : tensor<10xf32>} : tensor<10xf32>
  %2 = top.matmul %1, %w, %b {right_transpose = true} : (tensor<1x8xf32>, tensor<10x8xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  return %2 : tensor<1x10xf32>
}

// -----

// Elementwise ops work on 4-D tensors padded with leading 1s, which keeps
// numpy broadcasting; a ReLU fused into the add stays fused.
// CHECK-LABEL: func.func @add_bcast
// CHECK: tpu.reshape %arg1 {{.*}} -> tensor<1x1x1x4xf32>
// CHECK: tpu.eltwise {{.*}} {do_relu = true, kind = 0 : i32}
func.func @add_bcast(%arg0: tensor<1x2x3x4xf32>, %arg1: tensor<4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = top.add %arg0, %arg1 {do_relu = true} : (tensor<1x2x3x4xf32>, tensor<4xf32>) -> tensor<1x2x3x4xf32>
  return %0 : tensor<1x2x3x4xf32>
}

// -----

// ceil_mode pooling becomes extra bottom/right padding.
// CHECK-LABEL: func.func @ceil
// CHECK: tpu.pool2d {{.*}}pads = array<i64: 0, 0, 1, 1>
func.func @ceil(%arg0: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  %0 = top.maxpool %arg0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}
