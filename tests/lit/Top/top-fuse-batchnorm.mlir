// RUN: kiln-opt %s -top-fuse-batchnorm -split-input-file -verify-diagnostics -mlir-print-debuginfo | FileCheck %s

// conv -> bn folds into the conv's filter and bias; the bn disappears and the
// conv takes its name. s = 1 / sqrt(3 + 1) = 0.5 scales the filter (1 -> 0.5);
// the bias becomes beta - mean * s = 3 - 2 * 0.5 = 2.
// CHECK-LABEL: func.func @fold_into_conv
// CHECK-NOT: top.batchnorm
// CHECK: %[[F:.*]] = top.weight {value = dense_resource<bn_folded_filter>
// CHECK: %[[B:.*]] = top.weight {value = dense_resource<bn_folded_bias>
// CHECK: top.conv %arg0, %[[F]], %[[B]] {{.*}} loc(#[[LOC:.*]])
// CHECK: #[[LOC]] = loc("bn")
// CHECK: bn_folded_filter: "0x040000000000003F"
// CHECK: bn_folded_bias: "0x0400000000000040"
func.func @fold_into_conv(%arg0: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %w = top.weight {value = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
  %n = top.none
  %c = top.conv %arg0, %w, %n {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x4x4xf32> loc("conv")
  %g = top.weight {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
  %b = top.weight {value = dense<3.0> : tensor<1xf32>} : tensor<1xf32>
  %m = top.weight {value = dense<2.0> : tensor<1xf32>} : tensor<1xf32>
  %v = top.weight {value = dense<3.0> : tensor<1xf32>} : tensor<1xf32>
  %0 = top.batchnorm %c, %g, %b, %m, %v {epsilon = 1.0 : f64} : (tensor<1x1x4x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32> loc("bn")
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// A batch norm on a function argument becomes a per-channel mul and add.
// CHECK-LABEL: func.func @standalone
// CHECK: top.mul %arg0
// CHECK-NEXT: top.add
// CHECK-NOT: top.batchnorm
func.func @standalone(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %g = top.weight {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
  %b = top.weight {value = dense<0.0> : tensor<2xf32>} : tensor<2xf32>
  %m = top.weight {value = dense<0.0> : tensor<2xf32>} : tensor<2xf32>
  %v = top.weight {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
  %0 = top.batchnorm %arg0, %g, %b, %m, %v : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Computed parameters: s = gamma * rsqrt(var + eps) and the shift are Top
// ops, then the same per-channel mul and add.
// CHECK-LABEL: func.func @computed_params
// CHECK: %[[VE:.*]] = top.active %arg4 {alpha = 1.000000e+00 : f64, beta = 1.000000e-03 : f64, mode = 20 : i32} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK: %[[RS:.*]] = top.active %[[VE]] {mode = 7 : i32}
// CHECK: %[[S:.*]] = top.mul %arg1, %[[RS]]
// CHECK: %[[MS:.*]] = top.mul %arg3, %[[S]]
// CHECK: %[[SH:.*]] = top.sub %arg2, %[[MS]]
// CHECK: %[[SC:.*]] = top.reshape %[[S]] {shape = array<i64: 2, 1, 1>} : (tensor<2xf32>) -> tensor<2x1x1xf32>
// CHECK: %[[SHC:.*]] = top.reshape %[[SH]] {shape = array<i64: 2, 1, 1>}
// CHECK: %[[M:.*]] = top.mul %arg0, %[[SC]] : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK: top.add %[[M]], %[[SHC]] {{.*}} loc(#[[LOC:.*]])
// CHECK-NOT: top.batchnorm
// CHECK: #[[LOC]] = loc("bn2")
func.func @computed_params(%arg0: tensor<1x2x4x4xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %0 = top.batchnorm %arg0, %g, %b, %m, %v {epsilon = 1.0e-3 : f64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("bn2")
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// top.batchnorm's verifier rejects it before the pass runs.
func.func @bad_params(%arg0: tensor<1x2x4x4xf32>, %g: tensor<3xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{'top.batchnorm' op scale has 3 elements for 2 channels}}
  %0 = top.batchnorm %arg0, %g, %g, %g, %g : (tensor<1x2x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}
