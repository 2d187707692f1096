// RUN: kiln-opt %s -split-input-file -tpu-hoist-shrinking-ops="max-group-ops=2" | FileCheck %s

// PP-LCNet's output projection: a 1 x 1 conv from 48 to 12 channels of a
// stage's output, exported after the later stages. It reads the stage's
// output last, so it moves right after it: the 48-channel map's readers are
// then adjacent and the 12-channel result makes the DDR trip instead.
// CHECK-LABEL: func.func @projection
// CHECK: %[[S:.*]] = tpu.relu %arg0
// CHECK-NEXT: top.weight
// CHECK-NEXT: %[[P:.*]] = tpu.conv2d %[[S]]
// CHECK-NEXT: tpu.conv2d %[[S]]
// CHECK: tpu.relu
// CHECK: tpu.relu
// CHECK: return
func.func @projection(%x: tensor<1x48x16x16xf16>) -> (tensor<1x48x8x8xf16>, tensor<1x12x16x16xf16>) {
  %none = top.none
  %dw = top.weight {value = dense<0.5> : tensor<48x1x3x3xf16>} : tensor<48x1x3x3xf16>
  %s = tpu.relu %x : (tensor<1x48x16x16xf16>) -> tensor<1x48x16x16xf16>
  %d = tpu.conv2d %s, %dw, %none {dilations = array<i64: 1, 1>, do_relu = false, group = 48 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x48x16x16xf16>, tensor<48x1x3x3xf16>, none) -> tensor<1x48x8x8xf16>
  %r1 = tpu.relu %d : (tensor<1x48x8x8xf16>) -> tensor<1x48x8x8xf16>
  %r2 = tpu.relu %r1 : (tensor<1x48x8x8xf16>) -> tensor<1x48x8x8xf16>
  %r3 = tpu.relu %r2 : (tensor<1x48x8x8xf16>) -> tensor<1x48x8x8xf16>
  %pw = top.weight {value = dense<0.5> : tensor<12x48x1x1xf16>} : tensor<12x48x1x1xf16>
  %p = tpu.conv2d %s, %pw, %none {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x48x16x16xf16>, tensor<12x48x1x1xf16>, none) -> tensor<1x12x16x16xf16>
  return %r3, %p : tensor<1x48x8x8xf16>, tensor<1x12x16x16xf16>
}

// -----

// Left in place: a conv widening its operand (the bytes kept would be fewer
// than the result's); a reader of a value another late op still reads; and
// a reader already within a group's reach of its operand.
// CHECK-LABEL: func.func @kept
// CHECK: tpu.relu %arg0
// CHECK-NEXT: tpu.relu
// CHECK-NEXT: tpu.relu
// CHECK-NEXT: tpu.relu
// CHECK-NEXT: tpu.relu
// CHECK-NEXT: top.weight
// CHECK-NEXT: tpu.conv2d
// CHECK-NEXT: tpu.eltwise
// CHECK-NEXT: tpu.relu
// CHECK-NEXT: return
func.func @kept(%x: tensor<1x12x16x16xf16>) -> (tensor<1x48x16x16xf16>, tensor<1x12x16x16xf16>, tensor<1x12x16x16xf16>) {
  %none = top.none
  %s = tpu.relu %x : (tensor<1x12x16x16xf16>) -> tensor<1x12x16x16xf16>
  %r1 = tpu.relu %s : (tensor<1x12x16x16xf16>) -> tensor<1x12x16x16xf16>
  %r2 = tpu.relu %r1 : (tensor<1x12x16x16xf16>) -> tensor<1x12x16x16xf16>
  %r3 = tpu.relu %r2 : (tensor<1x12x16x16xf16>) -> tensor<1x12x16x16xf16>
  %r4 = tpu.relu %r3 : (tensor<1x12x16x16xf16>) -> tensor<1x12x16x16xf16>
  %w = top.weight {value = dense<0.5> : tensor<48x12x1x1xf16>} : tensor<48x12x1x1xf16>
  %wide = tpu.conv2d %s, %w, %none {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x12x16x16xf16>, tensor<48x12x1x1xf16>, none) -> tensor<1x48x16x16xf16>
  %sum = tpu.eltwise %s, %r4 {do_relu = false, kind = 0 : i32} : (tensor<1x12x16x16xf16>, tensor<1x12x16x16xf16>) -> tensor<1x12x16x16xf16>
  %near = tpu.relu %sum : (tensor<1x12x16x16xf16>) -> tensor<1x12x16x16xf16>
  return %wide, %sum, %near : tensor<1x48x16x16xf16>, tensor<1x12x16x16xf16>, tensor<1x12x16x16xf16>
}
