// RUN: kiln-opt %s -convert-top-to-tpu -tpu-layer-group -tpu-address-assign | FileCheck %s

// Coefficients first, then the neuron region; every tensor 4 KiB aligned and
// a reshape aliases its input.
// CHECK: module attributes {tpu.coeff_size = 4096 : i64, tpu.neuron_size = 12288 : i64}
// CHECK: func.func @main(%arg0: tensor<1x4x4x4xf32> {tpu.ddr_addr = 4096 : i64})
// CHECK: top.weight {ddr_addr = [0]
// CHECK: tpu.group {{{.*}}ddr_addr = [8192]
// CHECK: tpu.reshape {{.*}}ddr_addr = [8192]
// CHECK: tpu.group {{{.*}}ddr_addr = [12288]
// CHECK: tpu.reshape {{.*}}ddr_addr = [12288]
func.func @main(%arg0: tensor<1x4x4x4xf32>) -> tensor<1x64xf32> {
  %w = top.weight {value = dense<1.0> : tensor<4x4x1x1xf32>} : tensor<4x4x1x1xf32>
  %n = top.none
  %0 = top.conv %arg0, %w, %n {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>, none) -> tensor<1x4x4x4xf32>
  %1 = top.reshape %0 {shape = array<i64: 1, 4, 16, 1>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x16x1xf32>
  %2 = top.relu %1 : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
  %3 = top.reshape %2 {shape = array<i64: 1, 64>} : (tensor<1x4x16x1xf32>) -> tensor<1x64xf32>
  return %3 : tensor<1x64xf32>
}
