// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-layer-group -tpu-address-assign | FileCheck %s
// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-layer-group=enabled=false -tpu-address-assign | FileCheck %s --check-prefix=SHARE
// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-layer-group=enabled=false "-tpu-address-assign=keep-tensors=true" | FileCheck %s --check-prefix=KEEP

// Coefficients first, then the neuron region: the input and the output each
// their own 4 KiB-aligned bytes, then the shared activations; a reshape
// aliases its input.
// CHECK-LABEL: module attributes {tpu.activation_peak = 12288 : i64, tpu.coeff_size = 4096 : i64, tpu.neuron_size = 12288 : i64}
// CHECK: func.func @main(%arg0: tensor<1x4x4x4xf32> {tpu.ddr_addr = 4096 : i64})
// CHECK: top.weight {ddr_addr = [0]
// CHECK: tpu.group {{{.*}}ddr_addr = [12288]
// CHECK: tpu.reshape {{.*}}ddr_addr = [12288]
// CHECK: tpu.group {{{.*}}ddr_addr = [8192]
// CHECK: tpu.reshape {{.*}}ddr_addr = [8192]
func.func @main(%arg0: tensor<1x4x4x4xf32>) -> tensor<1x64xf32> {
  %w = top.weight {value = dense<1.0> : tensor<4x4x1x1xf32>} : tensor<4x4x1x1xf32>
  %n = top.none
  %0 = top.conv %arg0, %w, %n {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>, none) -> tensor<1x4x4x4xf32>
  %1 = top.reshape %0 {shape = array<i64: 1, 4, 16, 1>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x16x1xf32>
  %2 = top.relu %1 : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
  %3 = top.reshape %2 {shape = array<i64: 1, 64>} : (tensor<1x4x16x1xf32>) -> tensor<1x64xf32>
  return %3 : tensor<1x64xf32>
}

// -----

// A chain of four elementwise ops, one group each (steps 0..3). The first
// reads the net input, which stays the caller's; the second and third each
// write over the value they read for the last time (in place), so the three
// intermediate results share one buffer; the fourth is the output. With
// keep-tensors every result keeps bytes of its own.
// SHARE-LABEL: module attributes {tpu.activation_peak = 49152 : i64, tpu.coeff_size = 0 : i64, tpu.neuron_size = 49152 : i64}
// SHARE: func.func @chain(%arg0: tensor<1x64x8x8xf32> {tpu.ddr_addr = 0 : i64})
// SHARE: tpu.group {{{.*}}ddr_addr = [32768]
// SHARE: tpu.group {{{.*}}ddr_addr = [32768]
// SHARE: tpu.group {{{.*}}ddr_addr = [32768]
// SHARE: tpu.group {{{.*}}ddr_addr = [16384]
// KEEP-LABEL: module attributes {tpu.activation_peak = 65536 : i64, tpu.coeff_size = 0 : i64, tpu.keep_tensors, tpu.neuron_size = 81920 : i64}
// KEEP: tpu.group {{{.*}}ddr_addr = [32768]
// KEEP: tpu.group {{{.*}}ddr_addr = [49152]
// KEEP: tpu.group {{{.*}}ddr_addr = [65536]
func.func @chain(%arg0: tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> {
  %0 = top.relu %arg0 : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %1 = top.relu %0 : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %2 = top.relu %1 : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %3 = top.relu %2 : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  return %3 : tensor<1x64x8x8xf32>
}

// -----

// A channel concat of two computed values: their groups write straight into
// the concat's memory (the second 16 KiB after the first) and the concat is
// in place; the concat result is the output, so all of it is pinned.
// SHARE-LABEL: func.func @concat
// SHARE: tpu.group {{{.*}}ddr_addr = [16384]
// SHARE: tpu.group {{{.*}}ddr_addr = [32768]
// SHARE: tpu.concat {{.*}}ddr_addr = [16384], in_place}
func.func @concat(%arg0: tensor<1x64x8x8xf32>) -> tensor<1x128x8x8xf32> {
  %0 = top.relu %arg0 : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %1 = top.relu %0 : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %2 = top.concat %0, %1 {axis = 1 : i64} : (tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>) -> tensor<1x128x8x8xf32>
  return %2 : tensor<1x128x8x8xf32>
}

// -----

// Concat inputs that are net inputs, or repeated, stay copies.
// SHARE-LABEL: func.func @concat_copies
// SHARE: tpu.concat %arg0, %{{.*}} {axis = 1 : i64, ddr_addr
// SHARE-NOT: in_place
// SHARE: tpu.concat %[[R:[0-9]+]], %[[R]] {axis = 1 : i64, ddr_addr
// SHARE-NOT: in_place
func.func @concat_copies(%arg0: tensor<1x64x8x8xf32>) -> (tensor<1x128x8x8xf32>, tensor<1x128x8x8xf32>) {
  %0 = top.relu %arg0 : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %1 = top.concat %arg0, %0 {axis = 1 : i64} : (tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>) -> tensor<1x128x8x8xf32>
  %2 = top.relu %0 : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %3 = top.concat %2, %2 {axis = 1 : i64} : (tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>) -> tensor<1x128x8x8xf32>
  return %1, %3 : tensor<1x128x8x8xf32>, tensor<1x128x8x8xf32>
}

// -----

// Not in place: the first result is read again by the add after the second
// group, and the add's result is the caller's output.
// SHARE-LABEL: func.func @not_in_place
// SHARE: %[[A:.*]] = tpu.group {{{.*}}ddr_addr = [[[X:[0-9]+]]]
// SHARE: %[[B:.*]] = tpu.group {{{.*}}ddr_addr = [[[Y:[0-9]+]]]
// SHARE-NOT: ddr_addr = [[[X]]]
// SHARE: tpu.group {{{.*}}ddr_addr = [16384]
func.func @not_in_place(%arg0: tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> {
  %0 = top.relu %arg0 : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %1 = top.relu %0 : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %2 = top.add %0, %1 : (tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  return %2 : tensor<1x64x8x8xf32>
}

// -----

// isa: bm1684x: an f16 conv filter the chip reads in blocks of 32 input
// channels gets a second copy in that layout right after it, 40 input
// channels padded to 64: 8 x 64 x 9 x 2 bytes (9216); the bias, no filter,
// gets none.
// CHECK-LABEL: module attributes {kiln.isa = "bm1684x"
// CHECK: top.weight {ddr_addr = [0], kiln.chip_filter = [8192, 32], value
// CHECK: top.weight {ddr_addr = [20480], value
module attributes {kiln.isa = "bm1684x"} {
func.func @chip(%arg0: tensor<1x40x6x6xf16>) -> tensor<1x8x6x6xf16> {
  %w = top.weight {value = dense<1.0> : tensor<8x40x3x3xf16>} : tensor<8x40x3x3xf16>
  %b = top.weight {value = dense<0.5> : tensor<8xf16>} : tensor<8xf16>
  %0 = tpu.conv2d %arg0, %w, %b {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x40x6x6xf16>, tensor<8x40x3x3xf16>, tensor<8xf16>) -> tensor<1x8x6x6xf16>
  return %0 : tensor<1x8x6x6xf16>
}
}
