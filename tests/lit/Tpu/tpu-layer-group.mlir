// RUN: kiln-opt %s -convert-top-to-tpu -tpu-layer-group -split-input-file | FileCheck %s
// RUN: kiln-opt %s -convert-top-to-tpu -tpu-layer-group=enabled=false -split-input-file | FileCheck %s --check-prefix=SINGLE

// A conv-relu-pool chain whose activations do not fit LMEM whole is one group
// sliced along H; the filter is held, the input is loaded per slice. Two
// slices would fit; the cost model picks more, double-buffered, so loads and
// stores of one slice overlap the compute of the next, and tapered: the first
// and last slices, whose load and store nothing hides, are half the others.
// CHECK-LABEL: func.func @chain
// CHECK: tpu.group {buffers = 2 : i64, h_slices = 10 : i64, h_tapered = true, n_slices = 1 : i64}
// CHECK: tpu.load %arg0 {held = false, tpu.lmem = #tpu.lmem<0, 25088>}
// CHECK: tpu.load %{{.*}} {held = true
// CHECK: tpu.conv2d
// CHECK-SAME: tpu.lmem = #tpu.lmem<
// CHECK: tpu.pool2d
// CHECK: tpu.store
// CHECK: tpu.yield
// With grouping off each op is its own group and the conv's output goes to DDR.
// SINGLE-LABEL: func.func @chain
// SINGLE: tpu.group
// SINGLE: tpu.conv2d
// SINGLE: tpu.store
// SINGLE: tpu.group
// SINGLE: tpu.pool2d
func.func @chain(%arg0: tensor<1x16x224x224xf32>) -> tensor<1x16x112x112xf32> {
  %w = top.weight {value = dense<0.5> : tensor<16x16x3x3xf32>} : tensor<16x16x3x3xf32>
  %n = top.none
  %0 = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (tensor<1x16x224x224xf32>, tensor<16x16x3x3xf32>, none) -> tensor<1x16x224x224xf32>
  %1 = top.maxpool %0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x16x224x224xf32>) -> tensor<1x16x112x112xf32>
  return %1 : tensor<1x16x112x112xf32>
}

// -----

// A small tensor fits whole: one slice, one buffer.
// SINGLE-LABEL: func.func @small
// CHECK-LABEL: func.func @small
// CHECK: tpu.group {buffers = 1 : i64, h_slices = 1 : i64, n_slices = 1 : i64}
func.func @small(%arg0: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = top.relu %arg0 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}
