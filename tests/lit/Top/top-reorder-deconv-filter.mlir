// RUN: kiln-opt %s -top-reorder-deconv-filter -split-input-file -verify-diagnostics | FileCheck %s
// Running the pass twice changes nothing.
// RUN: kiln-opt %s -top-reorder-deconv-filter -split-input-file -verify-diagnostics > %t.once
// RUN: kiln-opt %s -top-reorder-deconv-filter -top-reorder-deconv-filter -split-input-file -verify-diagnostics > %t.twice
// RUN: diff %t.once %t.twice

// A computed filter [ic, oc, kh, kw] gets one transpose to [oc, ic, kh, kw].
// CHECK-LABEL: func.func @computed
// CHECK: %[[F:.*]] = top.mul %arg1, %arg2
// CHECK: %[[T:.*]] = top.transpose %[[F]] {perm = array<i64: 1, 0, 2, 3>} : (tensor<4x2x3x3xf32>) -> tensor<2x4x3x3xf32>
// CHECK: top.deconv %arg0, %[[T]], %{{.*}} {{{.*}}filter_reordered = true{{.*}}} : (tensor<1x4x5x5xf32>, tensor<2x4x3x3xf32>, none) -> tensor<1x2x7x7xf32>
// CHECK-NOT: top.transpose
func.func @computed(%arg0: tensor<1x4x5x5xf32>, %arg1: tensor<4x2x3x3xf32>, %arg2: tensor<4x1x1x1xf32>) -> tensor<1x2x7x7xf32> {
  %f = top.mul %arg1, %arg2 : (tensor<4x2x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x2x3x3xf32>
  %n = top.none
  %y = top.deconv %arg0, %f, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, none) -> tensor<1x2x7x7xf32>
  return %y : tensor<1x2x7x7xf32>
}

// -----

// A filter that is already a {1, 0, 2, 3} transpose (of an OIHW value)
// reads that value directly: the transpose goes away, none is added.
// CHECK-LABEL: func.func @cancels
// CHECK-NOT: top.transpose
// CHECK: top.deconv %arg0, %arg1, %{{.*}} {{{.*}}filter_reordered = true{{.*}}} : (tensor<1x4x5x5xf32>, tensor<2x4x3x3xf32>, none) -> tensor<1x2x7x7xf32>
func.func @cancels(%arg0: tensor<1x4x5x5xf32>, %arg1: tensor<2x4x3x3xf32>) -> tensor<1x2x7x7xf32> {
  %f = top.transpose %arg1 {perm = array<i64: 1, 0, 2, 3>} : (tensor<2x4x3x3xf32>) -> tensor<4x2x3x3xf32>
  %n = top.none
  %y = top.deconv %arg0, %f, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, none) -> tensor<1x2x7x7xf32>
  return %y : tensor<1x2x7x7xf32>
}

// -----

// The transpose has another user: it stays, the deconv reads its input.
// CHECK-LABEL: func.func @shared_transpose
// CHECK: %[[T:.*]] = top.transpose %arg1
// CHECK: top.deconv %arg0, %arg1,
// CHECK: return %{{.*}}, %[[T]]
func.func @shared_transpose(%arg0: tensor<1x4x5x5xf32>, %arg1: tensor<2x4x3x3xf32>) -> (tensor<1x2x7x7xf32>, tensor<4x2x3x3xf32>) {
  %f = top.transpose %arg1 {perm = array<i64: 1, 0, 2, 3>} : (tensor<2x4x3x3xf32>) -> tensor<4x2x3x3xf32>
  %n = top.none
  %y = top.deconv %arg0, %f, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, none) -> tensor<1x2x7x7xf32>
  return %y, %f : tensor<1x2x7x7xf32>, tensor<4x2x3x3xf32>
}

// -----

// group 2: [ic, oc/g, kh, kw] = [4, 3, 2, 2] -> [g, ic/g, oc/g, kh, kw]
// -> swap per group -> [oc, ic/g, kh, kw] = [6, 2, 2, 2].
// CHECK-LABEL: func.func @grouped
// CHECK: %[[G:.*]] = top.reshape %arg1 {shape = array<i64: 2, 2, 3, 2, 2>} : (tensor<4x3x2x2xf32>) -> tensor<2x2x3x2x2xf32>
// CHECK: %[[S:.*]] = top.transpose %[[G]] {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<2x2x3x2x2xf32>) -> tensor<2x3x2x2x2xf32>
// CHECK: %[[O:.*]] = top.reshape %[[S]] {shape = array<i64: 6, 2, 2, 2>} : (tensor<2x3x2x2x2xf32>) -> tensor<6x2x2x2xf32>
// CHECK: top.deconv %arg0, %[[O]], %{{.*}} {{{.*}}filter_reordered = true{{.*}}} : (tensor<1x4x3x3xf32>, tensor<6x2x2x2xf32>, none) -> tensor<1x6x6x6xf32>
func.func @grouped(%arg0: tensor<1x4x3x3xf32>, %arg1: tensor<4x3x2x2xf32>) -> tensor<1x6x6x6xf32> {
  %n = top.none
  %y = top.deconv %arg0, %arg1, %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<4x3x2x2xf32>, none) -> tensor<1x6x6x6xf32>
  return %y : tensor<1x6x6x6xf32>
}

// -----

// Weight filters are reordered by the lowering at compile time.
// CHECK-LABEL: func.func @weight
// CHECK-NOT: top.transpose
// CHECK: top.deconv
// CHECK-NOT: filter_reordered
func.func @weight(%arg0: tensor<1x4x5x5xf32>) -> tensor<1x2x7x7xf32> {
  %f = top.weight {value = dense<1.0> : tensor<4x2x3x3xf32>} : tensor<4x2x3x3xf32>
  %n = top.none
  %y = top.deconv %arg0, %f, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, none) -> tensor<1x2x7x7xf32>
  return %y : tensor<1x2x7x7xf32>
}

// -----

// top.deconv's verifier rejects it before the pass runs.
func.func @bad_group(%arg0: tensor<1x4x3x3xf32>, %arg1: tensor<4x3x2x2xf32>) -> tensor<1x9x6x6xf32> {
  %n = top.none
  // expected-error @+1 {{'top.deconv' op input channels 4 do not match filter [4, 3, 2, 2] with group 3}}
  %y = top.deconv %arg0, %arg1, %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<1x4x3x3xf32>, tensor<4x3x2x2xf32>, none) -> tensor<1x9x6x6xf32>
  return %y : tensor<1x9x6x6xf32>
}
