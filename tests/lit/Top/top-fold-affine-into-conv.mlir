// RUN: kiln-opt %s -split-input-file -top-fold-affine-into-conv | FileCheck %s

// PP-LCNetV3's learnable affine block after a depthwise conv: scale * conv
// (the scalar on the left, as the export writes it) + shift fold into the
// filter and bias: W * 2, b * 2 + 0.5. The conv takes the add's name (its
// folded weights are named after it).
// CHECK-LABEL: func.func @after
// CHECK-NOT: top.mul
// CHECK-NOT: top.add
// CHECK-DAG: %[[W:.*]] = top.weight {value = dense_resource<lab_add_affine> : tensor<4x1x3x3xf32>}
// CHECK-DAG: %[[B:.*]] = top.weight {value = dense_resource<lab_add_affine_bias> : tensor<4xf32>}
// CHECK: %[[C:.*]] = top.conv %arg0, %[[W]], %[[B]]
// CHECK: return %[[C]]
func.func @after(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = top.weight {value = dense<0.25> : tensor<4x1x3x3xf32>} : tensor<4x1x3x3xf32>
  %b = top.weight {value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %s = top.weight {value = dense<2.0> : tensor<1xf32>} : tensor<1xf32>
  %t = top.weight {value = dense<0.5> : tensor<1xf32>} : tensor<1xf32>
  %c = top.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 4 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("conv")
  %m = top.mul %s, %c : (tensor<1xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("lab_mul")
  %a = top.add %m, %t : (tensor<1x4x8x8xf32>, tensor<1xf32>) -> tensor<1x4x8x8xf32> loc("lab_add")
  return %a : tensor<1x4x8x8xf32>
}

// -----

// Per-channel constants ([1, C, 1, 1] and [C, 1, 1]); a sub and a div by a
// constant are an add and a mul. The folded values: W * 3 / 2 = 1.5 and
// (1 * 3 - 1) / 2 = 1.
// CHECK-LABEL: func.func @per_channel
// CHECK-NOT: top.mul
// CHECK-NOT: top.sub
// CHECK-NOT: top.div
// CHECK: top.conv
func.func @per_channel(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = top.weight {value = dense<1.0> : tensor<3x2x1x1xf32>} : tensor<3x2x1x1xf32>
  %b = top.weight {value = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
  %s = top.weight {value = dense<3.0> : tensor<1x3x1x1xf32>} : tensor<1x3x1x1xf32>
  %t = top.weight {value = dense<1.0> : tensor<3x1x1xf32>} : tensor<3x1x1xf32>
  %d = top.weight {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %c = top.conv %x, %w, %b {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %m = top.mul %c, %s : (tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %u = top.sub %m, %t : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %q = top.div %u, %d : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xf32>
  return %q : tensor<1x3x4x4xf32>
}

// -----

// The affine block after an activation, in front of a pointwise conv (no
// padding): it folds into that conv's filter and bias, which reads the
// activation directly.
// CHECK-LABEL: func.func @before
// CHECK: %[[A:.*]] = top.active %arg0
// CHECK-DAG: %[[W:.*]] = top.weight {value = dense_resource<{{.*}}_input_affine{{.*}}> : tensor<6x4x1x1xf32>}
// CHECK-DAG: %[[B:.*]] = top.weight {value = dense_resource<{{.*}}_input_affine_bias{{.*}}> : tensor<6xf32>}
// CHECK-NOT: top.mul
// CHECK-NOT: top.add
// CHECK: top.conv %[[A]], %[[W]], %[[B]]
func.func @before(%x: tensor<1x4x8x8xf32>) -> tensor<1x6x8x8xf32> {
  %w = top.weight {value = dense<0.5> : tensor<6x4x1x1xf32>} : tensor<6x4x1x1xf32>
  %none = top.none
  %s = top.weight {value = dense<2.0> : tensor<1xf32>} : tensor<1xf32>
  %t = top.weight {value = dense<0.5> : tensor<1xf32>} : tensor<1xf32>
  %h = top.active %x {mode = 17 : i32} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %m = top.mul %s, %h : (tensor<1xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a = top.add %m, %t : (tensor<1x4x8x8xf32>, tensor<1xf32>) -> tensor<1x4x8x8xf32>
  %c = top.conv %a, %w, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x1x1xf32>, none) -> tensor<1x6x8x8xf32>
  return %c : tensor<1x6x8x8xf32>
}

// -----

// What cannot fold stays: a conv with another user, a fused ReLU, a
// non-constant factor, a per-element constant, an affine in front of a
// padded conv (its zero padding would need the shift too), a div by zero.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: top.mul
// CHECK: top.add
// CHECK: top.mul
// CHECK: top.mul
// CHECK: top.div
func.func @kept(%x: tensor<1x2x4x4xf32>, %y: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<2x2x1x1xf32>} : tensor<2x2x1x1xf32>
  %w3 = top.weight {value = dense<1.0> : tensor<2x2x3x3xf32>} : tensor<2x2x3x3xf32>
  %none = top.none
  %s = top.weight {value = dense<3.0> : tensor<1xf32>} : tensor<1xf32>
  %e = top.weight {value = dense<3.0> : tensor<1x2x4x4xf32>} : tensor<1x2x4x4xf32>
  %z = top.weight {value = dense<0.0> : tensor<1xf32>} : tensor<1xf32>
  %c1 = top.conv %x, %w, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %m1 = top.mul %c1, %s : (tensor<1x2x4x4xf32>, tensor<1xf32>) -> tensor<1x2x4x4xf32>
  %c2 = top.conv %x, %w, %none {dilations = array<i64: 1, 1>, do_relu = true, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %m2 = top.mul %c2, %s : (tensor<1x2x4x4xf32>, tensor<1xf32>) -> tensor<1x2x4x4xf32>
  %c3 = top.conv %x, %w, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %a3 = top.add %c3, %y : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c4 = top.conv %x, %w, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %m4 = top.mul %c4, %e : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %m5 = top.mul %y, %s : (tensor<1x2x4x4xf32>, tensor<1xf32>) -> tensor<1x2x4x4xf32>
  %c5 = top.conv %m5, %w3, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, none) -> tensor<1x2x4x4xf32>
  %c6 = top.conv %x, %w, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %d6 = top.div %c6, %z : (tensor<1x2x4x4xf32>, tensor<1xf32>) -> tensor<1x2x4x4xf32>
  return %c1, %m1, %m2, %a3, %m4, %c5, %d6 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
