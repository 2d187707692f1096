// RUN: kiln-opt %s -top-fold-constants -split-input-file -verify-diagnostics -mlir-print-debuginfo | FileCheck %s

// A chain on weights folds into one weight named after its last op:
// transpose([[1, 2], [3, 4]]) * 2 = [[2, 6], [4, 8]]. The inputs, now dead,
// are erased; the op reading an argument stays.
// CHECK-LABEL: func.func @chain
// CHECK-NOT: top.transpose
// CHECK-NOT: top.mul
// CHECK: %[[W:.*]] = top.weight {value = dense_resource<scaled> : tensor<2x2xf32>} : tensor<2x2xf32> loc(#[[LOC:.*]])
// CHECK-NEXT: top.add %arg0, %[[W]]
// CHECK-NOT: top.weight
// CHECK: #[[LOC]] = loc("scaled")
// CHECK: scaled: "0x04000000000000400000C0400000804000000041"
func.func @chain(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = top.weight {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %two = top.weight {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %t = top.transpose %w {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("t")
  %s = top.mul %t, %two : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32> loc("scaled")
  %y = top.add %arg0, %s : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// Ops with an absent optional operand fold too; a weight still used
// elsewhere is kept.
// CHECK-LABEL: func.func @keeps_shared_weight
// CHECK: %[[W:.*]] = top.weight {value = dense<1.000000e+00> : tensor<1x1x1x1xf32>}
// CHECK: top.weight {value = dense_resource<c> : tensor<1x1x2x2xf32>} : tensor<1x1x2x2xf32>
// CHECK-NOT: top.conv
// CHECK: top.mul %arg0, %[[W]]
func.func @keeps_shared_weight(%arg0: tensor<1x1x1x1xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
  %x = top.weight {value = dense<3.0> : tensor<1x1x2x2xf32>} : tensor<1x1x2x2xf32>
  %n = top.none
  %c = top.conv %x, %w, %n {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32> loc("c")
  %m = top.mul %arg0, %w : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  return %c, %m : tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>
}

// -----

// Nothing to fold: every op reads a computed value.
// CHECK-LABEL: func.func @nothing
// CHECK: top.active
// CHECK: top.reduce
func.func @nothing(%arg0: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %e = top.active %arg0 {mode = 4 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = top.reduce %e {mode = 0 : i32, axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %s : tensor<2x1xf32>
}

// -----

// Operands that do not fit fail the pass with the interpreter's diagnostic.
func.func @invalid(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %a = top.weight {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
  %b = top.weight {value = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
  // expected-error @+1 {{do not broadcast}}
  %c = top.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

// A QDQ model's weight quantization is not folded into a float weight: INT8
// lowering needs the integers and their scales.
// CHECK-LABEL: func.func @qdq_weight
// CHECK: %[[W:.*]] = top.weight {value = dense<[1, -2]> : tensor<2xi8>}
// CHECK: %[[D:.*]] = top.dequantize_linear %[[W]]
// CHECK: %[[F:.*]] = top.weight {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK: %[[Q:.*]] = top.quantize_linear %[[F]]
// CHECK: top.dequantize_linear %[[Q]]
func.func @qdq_weight(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %w = top.weight {value = dense<[1, -2]> : tensor<2xi8>} : tensor<2xi8>
  %d = top.dequantize_linear %w {scale = array<f64: 0.5>, zero_point = array<i64: 0>} : (tensor<2xi8>) -> tensor<2xf32>
  %y = top.add %arg0, %d : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %f = top.weight {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %q = top.quantize_linear %f {scale = array<f64: 0.5>, zero_point = array<i64: 0>} : (tensor<2xf32>) -> tensor<2xi8>
  %e = top.dequantize_linear %q {scale = array<f64: 0.5>, zero_point = array<i64: 0>} : (tensor<2xi8>) -> tensor<2xf32>
  %z = top.add %arg0, %e : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y, %z : tensor<2xf32>, tensor<2xf32>
}
