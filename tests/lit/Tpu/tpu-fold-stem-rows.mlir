// RUN: kiln-opt %s -split-input-file -tpu-fold-stem-rows | FileCheck %s

// An RGB stem in F16 fills 3 of the 32 input-channel slots. Its 7 kernel rows
// fold into 21 channels: a tpu.dma gathers, per kernel row ky, input rows
// 2*oy + ky - 3 (zero fills where they fall outside), the filter is only
// reshaped, and the conv keeps its columns (kernel 1x7, stride 1x2, pads
// left/right only).
// CHECK-LABEL: func.func @stem_f16
// Kernel row 0: output rows 0-1 read padding (a fill of 3 x 2 rows), rows
// 2-111 read input rows 1, 3, ... (source stride 2 rows).
// CHECK: %[[ROWS:.*]] = tpu.dma %arg0 {program = array<i64: -1, 0, 0, 1, 1, 3, 448, 0, 0, 0, 0, 0, 0, 175616, 1, 0, 0, 224, 448, 1, 3, 110, 224, 0, 50176, 448, 1, 0, 175616, 224, 1, 0,
// CHECK-SAME: (tensor<1x3x224x224xf16>) -> tensor<1x21x112x224xf16>
// CHECK: %[[W:.*]] = top.weight {value = dense<5.000000e-01> : tensor<64x21x1x7xf16>}
// CHECK: tpu.conv2d %[[ROWS]], %[[W]], %{{.*}} {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 1, 7>, pads = array<i64: 0, 3, 0, 3>, strides = array<i64: 1, 2>}
// CHECK-SAME: -> tensor<1x64x112x112xf16>
func.func @stem_f16(%x: tensor<1x3x224x224xf16>) -> tensor<1x64x112x112xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<64x3x7x7xf16>} : tensor<64x3x7x7xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf16>, tensor<64x3x7x7xf16>, none) -> tensor<1x64x112x112xf16>
  return %0 : tensor<1x64x112x112xf16>
}

// -----

// F32 convs take one input channel per slot and cycle: folding gains nothing.
// CHECK-LABEL: func.func @stem_f32
// CHECK-NOT: tpu.dma
// CHECK: kernel_shape = array<i64: 7, 7>
func.func @stem_f32(%x: tensor<1x3x224x224xf32>) -> tensor<1x64x112x112xf32> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<64x3x7x7xf32>} : tensor<64x3x7x7xf32>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, none) -> tensor<1x64x112x112xf32>
  return %0 : tensor<1x64x112x112xf32>
}

// -----

// A wide conv already fills the slots.
// CHECK-LABEL: func.func @wide_f16
// CHECK-NOT: tpu.dma
// CHECK: kernel_shape = array<i64: 3, 3>
func.func @wide_f16(%x: tensor<1x64x56x56xf16>) -> tensor<1x64x56x56xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<64x64x3x3xf16>} : tensor<64x64x3x3xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x56x56xf16>, tensor<64x64x3x3xf16>, none) -> tensor<1x64x56x56xf16>
  return %0 : tensor<1x64x56x56xf16>
}

// -----

// Only the conv reading the net's input folds; a narrow conv deeper in the
// net keeps its place in a layer group (the gather would send its input
// through DDR).
// CHECK-LABEL: func.func @inner_f16
// CHECK: %[[ROWS:.*]] = tpu.dma %arg0
// CHECK: %[[FIRST:.*]] = tpu.conv2d %[[ROWS]], {{.*}}kernel_shape = array<i64: 1, 7>
// CHECK-NOT: tpu.dma
// CHECK: tpu.conv2d %[[FIRST]], {{.*}}kernel_shape = array<i64: 7, 7>
func.func @inner_f16(%x: tensor<1x3x224x224xf16>) -> tensor<1x3x224x224xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<3x3x7x7xf16>} : tensor<3x3x7x7xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x3x224x224xf16>, tensor<3x3x7x7xf16>, none) -> tensor<1x3x224x224xf16>
  %1 = tpu.conv2d %0, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 7, 7>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x3x224x224xf16>, tensor<3x3x7x7xf16>, none) -> tensor<1x3x224x224xf16>
  return %1 : tensor<1x3x224x224xf16>
}
