// RUN: kiln-opt %s -top-fuse-relu -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @fuse
// CHECK: top.add %arg0, %arg1 {do_relu = true}
// CHECK-NOT: top.relu
func.func @fuse(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = top.add %arg0, %arg1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = top.relu %0 : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// The add's value is used twice: the relu stays.
// CHECK-LABEL: func.func @shared
// CHECK: top.relu
func.func @shared(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = top.add %arg0, %arg1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = top.relu %0 : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
