// RUN: kiln-opt %s -split-input-file -tpu-fuse-casts | FileCheck %s

// f16 -> f32 -> f16 is the f16 value itself; f16 -> f32 -> bf16 reads the
// f16 value directly; two equal casts of one value become one.
// CHECK-LABEL: func.func @float_pairs
// CHECK-NEXT: %[[W:.*]] = tpu.cast %arg0 : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = tpu.cast %arg0 : (tensor<4xf16>) -> tensor<4xbf16>
// CHECK-NEXT: return %arg0, %[[B]], %[[W]], %[[W]]
func.func @float_pairs(%arg0: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>) {
  %0 = tpu.cast %arg0 : (tensor<4xf16>) -> tensor<4xf32>
  %1 = tpu.cast %0 : (tensor<4xf32>) -> tensor<4xf16>
  %2 = tpu.cast %0 : (tensor<4xf32>) -> tensor<4xbf16>
  %3 = tpu.cast %arg0 : (tensor<4xf16>) -> tensor<4xf32>
  return %1, %2, %0, %3 : tensor<4xf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A QDQ model dequantizes and quantizes again: with equal parameters that is
// nothing, with others one requantization (0.02 / 0.04 = 2^30 / 2^31).
// f32 -> f16 -> f32 rounds, so it stays.
// CHECK-LABEL: func.func @int8_pairs
// CHECK-NEXT: %[[R:.*]] = tpu.cast %arg0 {quant = #tpu.requant<m0 = 1073741824, m1 = 0, rshift = 31>} : (tensor<4x!quant.uniform<i8:f32, 2.000000e-02>>) -> tensor<4x!quant.uniform<i8:f32, 4.000000e-02>>
// CHECK-NEXT: %[[N:.*]] = tpu.cast %arg1 : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT: %[[F:.*]] = tpu.cast %[[N]] : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT: return %arg0, %[[R]], %[[F]]
func.func @int8_pairs(%arg0: tensor<4x!quant.uniform<i8:f32, 0.02>>, %arg1: tensor<4xf32>) -> (tensor<4x!quant.uniform<i8:f32, 0.02>>, tensor<4x!quant.uniform<i8:f32, 0.04>>, tensor<4xf32>) {
  %0 = tpu.cast %arg0 : (tensor<4x!quant.uniform<i8:f32, 0.02>>) -> tensor<4xf32>
  %1 = tpu.cast %0 : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.02>>
  %2 = tpu.cast %0 : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.04>>
  %3 = tpu.cast %arg1 : (tensor<4xf32>) -> tensor<4xf16>
  %4 = tpu.cast %3 : (tensor<4xf16>) -> tensor<4xf32>
  return %1, %2, %4 : tensor<4x!quant.uniform<i8:f32, 0.02>>, tensor<4x!quant.uniform<i8:f32, 0.04>>, tensor<4xf32>
}

// -----

// The output cast of a net whose last TIU op ran at another rank casts before
// the reshape, so it can join that op's layer group; a cast of a reshape of
// the net's input stays where it is.
// CHECK-LABEL: func.func @output_cast
// CHECK: %[[S:.*]] = tpu.active %arg0 {{.*}} -> tensor<1x40x1x64xf16>
// CHECK-NEXT: %[[C:.*]] = tpu.cast %[[S]] : (tensor<1x40x1x64xf16>) -> tensor<1x40x1x64xf32>
// CHECK-NEXT: %[[R:.*]] = tpu.reshape %[[C]] : (tensor<1x40x1x64xf32>) -> tensor<1x40x64xf32>
// CHECK: %[[V:.*]] = tpu.reshape %arg1
// CHECK-NEXT: tpu.cast %[[V]]
// CHECK: return %[[R]]
func.func @output_cast(%arg0: tensor<1x40x1x64xf16>, %arg1: tensor<1x40x1x64xf16>) -> (tensor<1x40x64xf32>, tensor<1x40x64xf32>) {
  %0 = tpu.active %arg0 {mode = 2 : i32, alpha = 0.0 : f64, beta = 0.0 : f64} : (tensor<1x40x1x64xf16>) -> tensor<1x40x1x64xf16>
  %1 = tpu.reshape %0 : (tensor<1x40x1x64xf16>) -> tensor<1x40x64xf16>
  %2 = tpu.cast %1 : (tensor<1x40x64xf16>) -> tensor<1x40x64xf32>
  %3 = tpu.reshape %arg1 : (tensor<1x40x1x64xf16>) -> tensor<1x40x64xf16>
  %4 = tpu.cast %3 : (tensor<1x40x64xf16>) -> tensor<1x40x64xf32>
  return %2, %4 : tensor<1x40x64xf32>, tensor<1x40x64xf32>
}
