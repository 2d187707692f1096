// RUN: kiln-opt %s -convert-top-to-tpu -tpu-layer-group -split-input-file | FileCheck %s
// RUN: kiln-opt %s -convert-top-to-tpu -tpu-layer-group=enabled=false -split-input-file | FileCheck %s --check-prefix=SINGLE

// A conv-relu-pool chain whose activations do not fit LMEM whole is one group
// sliced along H; the filter is held, the input is loaded per slice. Two
// slices would fit; the cost model picks more, double-buffered, so loads and
// stores of one slice overlap the compute of the next, and tapered: the first
// and last slices, whose load and store nothing hides, are half the others
// (6 of the pool's 112 rows, then 13 or 12).
// CHECK-LABEL: func.func @chain
// The plan lists the input, the filter, the conv's and the pool's results.
// The input's slices overlap by the conv's halo rows.
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 10, 1], buffers = 2, order = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 16, 224, 224], lmem = [0, 25088], bytes = 25088, live = [0, 1], banks = [0, 1, 2, 3],
// CHECK-SAME: hold = [(0+1, 0+16, 0+13, 0+224), (0+1, 0+16, 11+28, 0+224),
// CHECK-SAME: store = []>,
// CHECK-SAME: #tpu.value_plan<shape = [1, 16, 16, 9], invariant, lmem = {{\[}}[[F:[0-9]+]], [[F]]],
// CHECK-SAME: #tpu.value_plan<shape = [1, 16, 224, 224], lmem = [{{[0-9]+}}, {{[0-9]+}}],
// CHECK-SAME: #tpu.value_plan<shape = [1, 16, 112, 112],
// CHECK-SAME: hold = [(0+1, 0+16, 0+6, 0+112), (0+1, 0+16, 6+13, 0+112),
// CHECK-SAME: store = [(0+1, 0+16, 0+6, 0+112), (0+1, 0+16, 6+13, 0+112),
// CHECK: tpu.load %arg0 :
// CHECK: tpu.load %{{.*}} :
// CHECK: tpu.conv2d
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
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0],
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 8, 8, 8], invariant, lmem = [0, 0], bytes = 256, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 0+8, 0+8)], store = []>,
// CHECK-SAME: #tpu.value_plan<shape = [1, 8, 8, 8], lmem = [256, 256], bytes = 256, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+8, 0+8)], store = [(0+1, 0+8, 0+8, 0+8)]>]>}
func.func @small(%arg0: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = top.relu %arg0 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}
