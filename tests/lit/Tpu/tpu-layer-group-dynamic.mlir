// RUN: kiln-opt %s -convert-top-to-tpu -tpu-layer-group | FileCheck %s

// A conv whose filter is computed by the graph (a modulated filter, as in
// StyleGAN2): the filter is never sliced. The group that runs the conv
// loads it whole, once (held), and keeps it for every H slice, while the
// activation is loaded slice by slice.
// CHECK-LABEL: func.func @modulated
// CHECK: %[[F:.*]] = tpu.group {{.*}}n_slices = 1
// CHECK: tpu.eltwise
// CHECK: tpu.group {buffers = {{[12]}} : i64, h_slices = [[H:[2-9]|[1-9][0-9]+]] : i64, n_slices = 1 : i64}
// CHECK-DAG: tpu.load %arg0 {held = false
// CHECK-DAG: tpu.load %[[F]] {held = true
// CHECK: tpu.conv2d
func.func @modulated(%x: tensor<1x16x224x224xf32>, %style: tensor<1x16x1x1xf32>) -> tensor<1x16x224x224xf32> {
  %w = top.weight {value = dense<0.1> : tensor<16x16x3x3xf32>} : tensor<16x16x3x3xf32>
  %s = top.reshape %style {shape = array<i64: 1, 16, 1, 1>} : (tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32>
  %f = top.mul %w, %s : (tensor<16x16x3x3xf32>, tensor<1x16x1x1xf32>) -> tensor<16x16x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %f, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x16x224x224xf32>, tensor<16x16x3x3xf32>, none) -> tensor<1x16x224x224xf32>
  return %0 : tensor<1x16x224x224xf32>
}
