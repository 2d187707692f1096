// RUN: kiln-opt %s -split-input-file -top-pool-before-pointwise-conv | FileCheck %s

// An RSE neck's squeeze: the mean of a 12 -> 96 projection is the projection
// of the 12-channel mean, and the squeeze conv reading it composes with it
// into one 12 -> 24 conv: W = 96 * 0.5 * 0.25 = 12 (0x41400000), b = 0.125 +
// 96 * 0.5 * 1 = 48.125 (0x42408000). The projection stays for the scale.
// CHECK-LABEL: func.func @rse
// CHECK: %[[W:.*]] = top.weight {{.*}} tensor<96x12x1x1xf32>
// CHECK: %[[B:.*]] = top.weight {{.*}} tensor<96xf32>
// CHECK: %[[Y:.*]] = top.conv %arg0, %[[W]], %[[B]] {{.*}} -> tensor<1x96x16x16xf32>
// CHECK: %[[M:.*]] = top.global_avgpool %arg0 : (tensor<1x12x16x16xf32>) -> tensor<1x12x1x1xf32>
// CHECK: %[[CW:.*]] = top.weight {value = dense_resource<[[CWK:.*]]> : tensor<24x12x1x1xf32>}
// CHECK: %[[CB:.*]] = top.weight {value = dense_resource<[[CBK:.*]]> : tensor<24xf32>}
// CHECK: %[[S:.*]] = top.conv %[[M]], %[[CW]], %[[CB]] {{.*}}do_relu = true{{.*}} -> tensor<1x24x1x1xf32>
// CHECK: top.conv %[[S]]
// CHECK: [[CWK]]: "0x04000000{{(00004041)+}}"
// CHECK: [[CBK]]: "0x04000000{{(00804042)+}}"
func.func @rse(%x: tensor<1x12x16x16xf32>) -> tensor<1x96x16x16xf32> {
  %w = top.weight {value = dense<0.25> : tensor<96x12x1x1xf32>} : tensor<96x12x1x1xf32>
  %b = top.weight {value = dense<1.0> : tensor<96xf32>} : tensor<96xf32>
  %w1 = top.weight {value = dense<0.5> : tensor<24x96x1x1xf32>} : tensor<24x96x1x1xf32>
  %b1 = top.weight {value = dense<0.125> : tensor<24xf32>} : tensor<24xf32>
  %w2 = top.weight {value = dense<0.5> : tensor<96x24x1x1xf32>} : tensor<96x24x1x1xf32>
  %none = top.none
  %y = top.conv %x, %w, %b {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x12x16x16xf32>, tensor<96x12x1x1xf32>, tensor<96xf32>) -> tensor<1x96x16x16xf32>
  %m = top.global_avgpool %y : (tensor<1x96x16x16xf32>) -> tensor<1x96x1x1xf32>
  %s = top.conv %m, %w1, %b1 {dilations = array<i64: 1, 1>, do_relu = true, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x96x1x1xf32>, tensor<24x96x1x1xf32>, tensor<24xf32>) -> tensor<1x24x1x1xf32>
  %e = top.conv %s, %w2, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x24x1x1xf32>, tensor<96x24x1x1xf32>, none) -> tensor<1x96x1x1xf32>
  %r = top.mul %y, %e : (tensor<1x96x16x16xf32>, tensor<1x96x1x1xf32>) -> tensor<1x96x16x16xf32>
  return %r : tensor<1x96x16x16xf32>
}

// -----

// The projection of the mean read by the scale itself: nothing to compose.
// CHECK-LABEL: func.func @unsqueezed
// CHECK: %[[Y:.*]] = top.conv %arg0
// CHECK: %[[M:.*]] = top.global_avgpool %arg0
// CHECK: %[[P:.*]] = top.conv %[[M]]
// CHECK: top.mul %[[Y]], %[[P]]
func.func @unsqueezed(%x: tensor<1x12x16x16xf32>) -> tensor<1x96x16x16xf32> {
  %w = top.weight {value = dense<0.25> : tensor<96x12x1x1xf32>} : tensor<96x12x1x1xf32>
  %none = top.none
  %y = top.conv %x, %w, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x12x16x16xf32>, tensor<96x12x1x1xf32>, none) -> tensor<1x96x16x16xf32>
  %m = top.global_avgpool %y : (tensor<1x96x16x16xf32>) -> tensor<1x96x1x1xf32>
  %r = top.mul %y, %m : (tensor<1x96x16x16xf32>, tensor<1x96x1x1xf32>) -> tensor<1x96x16x16xf32>
  return %r : tensor<1x96x16x16xf32>
}

// -----

// Not linear per pixel: a 3 x 3 window (its borders read padding), a stride
// that skips pixels, a fused ReLU.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: top.global_avgpool %{{[0-9]+}}
func.func @kept(%x: tensor<1x8x16x16xf32>) -> (tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>) {
  %w3 = top.weight {value = dense<0.25> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
  %w1 = top.weight {value = dense<0.25> : tensor<8x8x1x1xf32>} : tensor<8x8x1x1xf32>
  %none = top.none
  %a = top.conv %x, %w3, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x16x16xf32>
  %b = top.conv %x, %w1, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x8x16x16xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x8x8xf32>
  %c = top.conv %x, %w1, %none {dilations = array<i64: 1, 1>, do_relu = true, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x16x16xf32>
  %pa = top.global_avgpool %a : (tensor<1x8x16x16xf32>) -> tensor<1x8x1x1xf32>
  %pb = top.global_avgpool %b : (tensor<1x8x8x8xf32>) -> tensor<1x8x1x1xf32>
  %pc = top.global_avgpool %c : (tensor<1x8x16x16xf32>) -> tensor<1x8x1x1xf32>
  return %pa, %pb, %pc : tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>
}
