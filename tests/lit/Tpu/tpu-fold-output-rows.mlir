// RUN: kiln-opt %s -split-input-file -tpu-fold-output-rows | FileCheck %s

// U-Net's last decoder stage in F16: 16-channel convs fill 16 of the 64
// lanes. The chain computes 4 rows per pass on 64 lanes: the first conv gets
// a 6-row kernel and stride 4, the second reads the folded rows through a
// 3-row kernel over 64 channels, the 1x1 conv and the cast run folded, and
// tpu.unfold_rows ends the chain. Per-channel operands repeat per block.
// CHECK-LABEL: func.func @unet_decoder
// CHECK: %[[B0:.*]] = top.weight {value = dense<[1.000000e+00, 2.000000e+00, {{.*}}, 1.600000e+01, 1.000000e+00, 2.000000e+00, {{.*}}]> : tensor<64xf32>}
// CHECK: %[[C0:.*]] = tpu.conv2d %arg0, %{{.*}}, %[[B0]] {{{.*}}kernel_shape = array<i64: 6, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 4, 1>}
// CHECK-SAME: (tensor<1x32x64x64xf16>, tensor<64x32x6x3xf16>, tensor<64xf32>) -> tensor<1x64x16x64xf16>
// CHECK: %[[C1:.*]] = tpu.conv2d %[[C0]], {{.*}}kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK-SAME: (tensor<1x64x16x64xf16>, tensor<64x64x3x3xf16>, none) -> tensor<1x64x16x64xf16>
// CHECK: %[[C2:.*]] = tpu.conv2d %[[C1]], {{.*}} -> tensor<1x24x16x64xf16>
// CHECK: %[[CAST:.*]] = tpu.cast %[[C2]] : (tensor<1x24x16x64xf16>) -> tensor<1x24x16x64xf32>
// CHECK: %[[OUT:.*]] = tpu.unfold_rows %[[CAST]] {rows = 4 : i64} : (tensor<1x24x16x64xf32>) -> tensor<1x6x64x64xf32>
// CHECK: return %[[OUT]]
func.func @unet_decoder(%x: tensor<1x32x64x64xf16>) -> tensor<1x6x64x64xf32> {
  %w0 = top.weight {value = dense<5.000000e-01> : tensor<16x32x3x3xf16>} : tensor<16x32x3x3xf16>
  %b0 = top.weight {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]> : tensor<16xf32>} : tensor<16xf32>
  %w1 = top.weight {value = dense<2.500000e-01> : tensor<16x16x3x3xf16>} : tensor<16x16x3x3xf16>
  %w2 = top.weight {value = dense<1.250000e-01> : tensor<6x16x1x1xf16>} : tensor<6x16x1x1xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w0, %b0 {dilations = array<i64: 1, 1>, do_relu = true, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x64x64xf16>, tensor<16x32x3x3xf16>, tensor<16xf32>) -> tensor<1x16x64x64xf16>
  %1 = tpu.conv2d %0, %w1, %n {dilations = array<i64: 1, 1>, do_relu = true, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x64x64xf16>, tensor<16x16x3x3xf16>, none) -> tensor<1x16x64x64xf16>
  %2 = tpu.conv2d %1, %w2, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x64x64xf16>, tensor<6x16x1x1xf16>, none) -> tensor<1x6x64x64xf16>
  %3 = tpu.cast %2 : (tensor<1x6x64x64xf16>) -> tensor<1x6x64x64xf32>
  return %3 : tensor<1x6x64x64xf32>
}

// -----

// Block r's kernel rows are the original ones (1, 2, 3) shifted down by r
// rows in a kernel 3 rows taller: f16 1.0 = 0x3C00, 2.0 = 0x4000, 3.0 = 0x4200.
// CHECK-LABEL: func.func @shifted_taps
// CHECK: top.weight {value = dense<"0x{{(003C00400042000000000000)+(0000003C0040004200000000)+(00000000003C004000420000)+(000000000000003C00400042)+}}"> : tensor<64x1x6x1xf16>}
// CHECK: tpu.unfold_rows %{{.*}} {rows = 4 : i64} : (tensor<1x64x16x64xf16>) -> tensor<1x16x64x64xf16>
func.func @shifted_taps(%x: tensor<1x1x64x64xf16>) -> tensor<1x16x64x64xf16> {
  %w = top.weight {value = dense<[[[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]], [[[1.0], [2.0], [3.0]]]]> : tensor<16x1x3x1xf16>} : tensor<16x1x3x1xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 3, 1>, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x64x64xf16>, tensor<16x1x3x1xf16>, none) -> tensor<1x16x64x64xf16>
  return %0 : tensor<1x16x64x64xf16>
}

// -----

// 64 output channels already fill the lanes.
// CHECK-LABEL: func.func @wide
// CHECK-NOT: tpu.unfold_rows
func.func @wide(%x: tensor<1x32x64x64xf16>) -> tensor<1x64x64x64xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<64x32x3x3xf16>} : tensor<64x32x3x3xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x64x64xf16>, tensor<64x32x3x3xf16>, none) -> tensor<1x64x64x64xf16>
  return %0 : tensor<1x64x64x64xf16>
}

// -----

// A 1x1 conv gains nothing: R rows per pass take R kernel rows.
// CHECK-LABEL: func.func @pointwise_conv
// CHECK-NOT: tpu.unfold_rows
func.func @pointwise_conv(%x: tensor<1x32x64x64xf16>) -> tensor<1x16x64x64xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<16x32x1x1xf16>} : tensor<16x32x1x1xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x64x64xf16>, tensor<16x32x1x1xf16>, none) -> tensor<1x16x64x64xf16>
  return %0 : tensor<1x16x64x64xf16>
}

// -----

// Its result is read by a max pool that a layer group could have run on it
// in LMEM: unfolding means storing it and loading it back, which costs more
// than 48 lanes instead of 24 save on this conv (1,829 against 1,536 cycles).
// CHECK-LABEL: func.func @round_trip
// CHECK-NOT: tpu.unfold_rows
func.func @round_trip(%x: tensor<1x64x32x32xf16>) -> tensor<1x24x16x16xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<24x64x3x3xf16>} : tensor<24x64x3x3xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf16>, tensor<24x64x3x3xf16>, none) -> tensor<1x24x32x32xf16>
  %1 = tpu.pool2d %0 {kind = 0 : i32, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, count_include_pad = false, do_relu = false} : (tensor<1x24x32x32xf16>) -> tensor<1x24x16x16xf16>
  return %1 : tensor<1x24x16x16xf16>
}
