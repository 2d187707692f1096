// RUN: kiln-opt %s -split-input-file -tpu-fold-output-rows | FileCheck %s

// U-Net's last decoder stage in F16: 16-channel convs fill 16 of the 64
// lanes. The chain computes 2 rows per pass on 32 lanes (the row count the
// layer groups around it model fastest): the first conv gets a 4-row kernel
// and stride 2, the second reads the folded rows through a 3-row kernel over
// 32 channels, the 1x1 conv and the cast run folded, and tpu.unfold_rows
// ends the chain. Per-channel operands repeat per block.
// CHECK-LABEL: func.func @unet_decoder
// CHECK: %[[B0:.*]] = top.weight {tpu.model_bytes = 64 : i64, value = dense<[1.000000e+00, 2.000000e+00, {{.*}}, 1.600000e+01, 1.000000e+00, 2.000000e+00, {{.*}}]> : tensor<32xf32>}
// CHECK: %[[C0:.*]] = tpu.conv2d %arg0, %{{.*}}, %[[B0]] {{{.*}}kernel_shape = array<i64: 4, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>, tpu.folded_rows = 2 : i64, tpu.model_macs = 18874368 : i64}
// CHECK-SAME: (tensor<1x32x64x64xf16>, tensor<32x32x4x3xf16>, tensor<32xf32>) -> tensor<1x32x32x64xf16>
// CHECK: %[[C1:.*]] = tpu.conv2d %[[C0]], {{.*}}kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, tpu.folded_rows = 2 : i64, tpu.model_macs = {{[0-9]+}} : i64}
// CHECK-SAME: (tensor<1x32x32x64xf16>, tensor<32x32x3x3xf16>, none) -> tensor<1x32x32x64xf16>
// CHECK: %[[C2:.*]] = tpu.conv2d %[[C1]], {{.*}} -> tensor<1x12x32x64xf16>
// CHECK: %[[CAST:.*]] = tpu.cast %[[C2]] {tpu.folded_rows = 2 : i64} : (tensor<1x12x32x64xf16>) -> tensor<1x12x32x64xf32>
// CHECK: %[[OUT:.*]] = tpu.unfold_rows %[[CAST]] {rows = 2 : i64} : (tensor<1x12x32x64xf32>) -> tensor<1x6x64x64xf32>
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

// Block r's kernel rows are the original ones (1 to 5) shifted down by r
// rows in a kernel 3 rows taller: f16 1.0 = 0x3C00, 2.0 = 0x4000, 3.0 =
// 0x4200, 4.0 = 0x4400, 5.0 = 0x4500 (bytes little-endian).
// CHECK-LABEL: func.func @shifted_taps
// CHECK: top.weight {tpu.model_bytes = {{[0-9]+}} : i64, value = dense<"0x{{(003C003C003C003C003C00400040004000400040004200420042004200420044004400440044004400450045004500450045000000000000000000000000000000000000000000000000000000000000)+(00000000000000000000003C003C003C003C003C004000400040004000400042004200420042004200440044004400440044004500450045004500450000000000000000000000000000000000000000)+(0000000000000000000000000000000000000000003C003C003C003C003C0040004000400040004000420042004200420042004400440044004400440045004500450045004500000000000000000000)+(000000000000000000000000000000000000000000000000000000000000003C003C003C003C003C00400040004000400040004200420042004200420044004400440044004400450045004500450045)+}}"> : tensor<64x4x8x5xf16>}
// CHECK: tpu.conv2d {{.*}}kernel_shape = array<i64: 8, 5>, pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 4, 1>, tpu.folded_rows = 4 : i64, tpu.model_macs = {{[0-9]+}} : i64}
// CHECK: tpu.unfold_rows %{{.*}} {rows = 4 : i64} : (tensor<1x64x32x128xf16>) -> tensor<1x16x128x128xf16>
func.func @shifted_taps(%x: tensor<1x4x128x128xf16>) -> tensor<1x16x128x128xf16> {
  %w = top.weight {value = dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]], [[[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]], [[1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0]]]]> : tensor<16x4x5x5xf16>} : tensor<16x4x5x5xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 5, 5>, pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x4x128x128xf16>, tensor<16x4x5x5xf16>, none) -> tensor<1x16x128x128xf16>
  return %0 : tensor<1x16x128x128xf16>
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

// Its result is read by a max pool that a layer group runs on it in LMEM:
// unfolding happens on the way to DDR, so the folded conv's group would
// store it and the pool's load it back. The group search around the chain
// says that costs more than 48 lanes instead of 24 save.
// CHECK-LABEL: func.func @round_trip
// CHECK-NOT: tpu.unfold_rows
func.func @round_trip(%x: tensor<1x64x32x32xf16>) -> tensor<1x24x16x16xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<24x64x3x3xf16>} : tensor<24x64x3x3xf16>
  %n = top.none
  %0 = tpu.conv2d %x, %w, %n {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x64x32x32xf16>, tensor<24x64x3x3xf16>, none) -> tensor<1x24x32x32xf16>
  %1 = tpu.pool2d %0 {kind = 0 : i32, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, count_include_pad = false, do_relu = false} : (tensor<1x24x32x32xf16>) -> tensor<1x24x16x16xf16>
  return %1 : tensor<1x24x16x16xf16>
}

// -----

// A DB head's last ConvTranspose (2 x 2, stride 2) writes input row i to
// output rows 2i and 2i + 1, one kernel row each: folded by its stride it is
// a deconv in W only whose two kernel rows are two blocks of output
// channels: W'[r*O + o, c, 0, kx] = W[o, c, r, kx] (1.0, 2.0 in row 0 and
// 3.0, 4.0 in row 1). Half the passes.
// CHECK-LABEL: func.func @db_head_deconv
// CHECK: %[[W:.*]] = top.weight {tpu.model_bytes = {{[0-9]+}} : i64, value = dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00{{\]\]}}, {{\[\[}}1.000000e+00
// CHECK-SAME: {{\[\[}}3.000000e+00, 4.000000e+00{{\]\]\]\]}}> : tensor<2x24x1x2xf16>}
// CHECK: %[[D:.*]] = tpu.deconv2d %arg0, %[[W]], %{{.*}} {dilations = array<i64: 1, 1>, do_relu = false, group = 1 : i64, kernel_shape = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>, tpu.folded_rows = 2 : i64, tpu.model_macs = {{[0-9]+}} : i64}
// CHECK-SAME: -> tensor<1x2x32x64xf16>
// CHECK: tpu.unfold_rows %[[D]] {rows = 2 : i64} : (tensor<1x2x32x64xf16>) -> tensor<1x1x64x64xf16>
func.func @db_head_deconv(%x: tensor<1x24x32x32xf16>) -> tensor<1x1x64x64xf16> {
  %w = top.weight {value = dense<[[[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x24x2x2xf16>} : tensor<1x24x2x2xf16>
  %n = top.none
  %0 = tpu.deconv2d %x, %w, %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x24x32x32xf16>, tensor<1x24x2x2xf16>, none) -> tensor<1x1x64x64xf16>
  return %0 : tensor<1x1x64x64xf16>
}

// -----

// Without output padding a 3 x 3, stride 2, pad 1 ConvTranspose writes
// 2H - 1 rows: the last folded row would be half a row block.
// CHECK-LABEL: func.func @odd_rows_deconv
// CHECK-NOT: tpu.unfold_rows
func.func @odd_rows_deconv(%x: tensor<1x24x32x32xf16>) -> tensor<1x16x63x63xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<16x24x3x3xf16>} : tensor<16x24x3x3xf16>
  %n = top.none
  %0 = tpu.deconv2d %x, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x24x32x32xf16>, tensor<16x24x3x3xf16>, none) -> tensor<1x16x63x63xf16>
  return %0 : tensor<1x16x63x63xf16>
}

// -----

// A DB head's two ConvTransposes: the first computes 2 rows per pass; the
// second reads those 2 folded rows and computes 4 (2 per input block), a
// deconv in W over the 48 folded channels: its filter holds block b's
// kernel rows at input channels [24b, 24b + 24). One unfold_rows by 4.
// CHECK-LABEL: func.func @db_head_deconvs
// CHECK: %[[D0:.*]] = tpu.deconv2d %arg0, {{.*}}kernel_shape = array<i64: 1, 2>{{.*}}strides = array<i64: 1, 2>, tpu.folded_rows = 2 : i64, tpu.model_macs = {{[0-9]+}} : i64}
// CHECK-SAME: (tensor<1x24x80x80xf16>, tensor<48x24x1x2xf16>, tensor<48xf32>) -> tensor<1x48x80x160xf16>
// CHECK: %[[D1:.*]] = tpu.deconv2d %[[D0]], {{.*}}kernel_shape = array<i64: 1, 2>{{.*}}strides = array<i64: 1, 2>, tpu.folded_rows = 4 : i64, tpu.model_macs = {{[0-9]+}} : i64}
// CHECK-SAME: (tensor<1x48x80x160xf16>, tensor<4x48x1x2xf16>, none) -> tensor<1x4x80x320xf16>
// CHECK: tpu.unfold_rows %[[D1]] {rows = 4 : i64} : (tensor<1x4x80x320xf16>) -> tensor<1x1x320x320xf16>
func.func @db_head_deconvs(%x: tensor<1x24x80x80xf16>) -> tensor<1x1x320x320xf16> {
  %w0 = top.weight {value = dense<5.000000e-01> : tensor<24x24x2x2xf16>} : tensor<24x24x2x2xf16>
  %b0 = top.weight {value = dense<1.000000e-01> : tensor<24xf32>} : tensor<24xf32>
  %w1 = top.weight {value = dense<2.500000e-01> : tensor<1x24x2x2xf16>} : tensor<1x24x2x2xf16>
  %n = top.none
  %0 = tpu.deconv2d %x, %w0, %b0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (tensor<1x24x80x80xf16>, tensor<24x24x2x2xf16>, tensor<24xf32>) -> tensor<1x24x160x160xf16>
  %1 = tpu.deconv2d %0, %w1, %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x24x160x160xf16>, tensor<1x24x2x2xf16>, none) -> tensor<1x1x320x320xf16>
  return %1 : tensor<1x1x320x320xf16>
}

// -----

// U-Net's last up-sampling ConvTranspose (3 x 3, stride 2, pad 1, output
// padding 1): output row 2i takes kernel row 1 of input row i, row 2i + 1
// kernel row 2 of row i and kernel row 0 of row i + 1. Folded by 2 it is a
// deconv with H stride 1 and a 2-row kernel (offsets 0 and +1, pad 1 on
// top): 6 taps per input pixel instead of 9 on twice the lanes.
// CHECK-LABEL: func.func @unet_up_deconv
// CHECK: %[[D:.*]] = tpu.deconv2d %arg0, {{.*}}kernel_shape = array<i64: 2, 3>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 1, 2>, tpu.folded_rows = 2 : i64, tpu.model_macs = {{[0-9]+}} : i64}
// CHECK-SAME: (tensor<1x32x64x64xf16>, tensor<32x32x2x3xf16>, none) -> tensor<1x32x64x128xf16>
// CHECK: tpu.unfold_rows %[[D]] {rows = 2 : i64} : (tensor<1x32x64x128xf16>) -> tensor<1x16x128x128xf16>
func.func @unet_up_deconv(%x: tensor<1x32x64x64xf16>) -> tensor<1x16x128x128xf16> {
  %w = top.weight {value = dense<5.000000e-01> : tensor<16x32x3x3xf16>} : tensor<16x32x3x3xf16>
  %n = top.none
  %0 = tpu.deconv2d %x, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x32x64x64xf16>, tensor<16x32x3x3xf16>, none) -> tensor<1x16x128x128xf16>
  return %0 : tensor<1x16x128x128xf16>
}

// -----

// A U-Net stem in F16, as tpu-fold-stem-rows leaves it: 3 kernel rows of
// RGB in 9 channels, 16 output channels on 16 lanes. Four output rows per
// pass read 6 input rows: the fold takes kernel 6 and stride 4 (18
// channels, half the rows the 3-row fold loads for the same output), and
// block r's filter reads kernel rows r to r + 2 (f16 1.0 = 0x3C00, 2.0 =
// 0x4000, 3.0 = 0x4200). The stride-2 conv reading the stem's result runs
// on the folded rows: its output rows 2i and 2i + 1 read input blocks
// (3 of row i - 1, 0, 1) and (1, 2, 3) through a 2-row kernel (f16 0.25 =
// 0x3400). The stem's result is also a result of the function: it is
// unfolded for that reader.
// CHECK-LABEL: func.func @stem_rows
// CHECK: %[[ROWS:.*]] = tpu.fold_rows %arg0 {dilation_h = 1 : i64, kernel_h = 6 : i64, pad_top = 1 : i64, stride_h = 4 : i64} : (tensor<1x3x128x128xf32>) -> tensor<1x18x32x128xf32>
// CHECK: %[[H:.*]] = tpu.cast %[[ROWS]] : (tensor<1x18x32x128xf32>) -> tensor<1x18x32x128xf16>
// CHECK: %[[W0:.*]] = top.weight {tpu.model_bytes = 864 : i64, value = dense<"0x{{(003C003C003C003C003C003C003C003C003C004000400040004000400040004000400040004200420042004200420042004200420042000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000)+(000000000000000000000000000000000000003C003C003C003C003C003C003C003C003C004000400040004000400040004000400040004200420042004200420042004200420042000000000000000000000000000000000000000000000000000000000000000000000000)+(000000000000000000000000000000000000000000000000000000000000000000000000003C003C003C003C003C003C003C003C003C004000400040004000400040004000400040004200420042004200420042004200420042000000000000000000000000000000000000)+(000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000003C003C003C003C003C003C003C003C003C004000400040004000400040004000400040004200420042004200420042004200420042)+}}"> : tensor<64x18x1x3xf16>}
// CHECK: %[[STEM:.*]] = tpu.conv2d %[[H]], %[[W0]], %{{.*}} {{{.*}}kernel_shape = array<i64: 1, 3>, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 1>, tpu.folded_rows = 4 : i64
// CHECK-SAME: -> tensor<1x64x32x128xf16>
// CHECK: %[[W1:.*]] = top.weight {tpu.model_bytes = 9216 : i64, value = dense<"0x{{((000000000000003400340034){32}(000000000000000000000000){16}(003400340034000000000000){16})+((000000000000000000000000){16}(000000000000003400340034){48})+}}"> : tensor<64x64x2x3xf16>}
// CHECK: %[[DOWN:.*]] = tpu.conv2d %[[STEM]], %[[W1]], %{{.*}} {{{.*}}kernel_shape = array<i64: 2, 3>, pads = array<i64: 1, 1, 0, 1>, strides = array<i64: 1, 2>, tpu.folded_rows = 2 : i64
// CHECK-SAME: -> tensor<1x64x32x64xf16>
// CHECK: %[[OUT0:.*]] = tpu.unfold_rows %[[STEM]] {rows = 4 : i64} : (tensor<1x64x32x128xf16>) -> tensor<1x16x128x128xf16>
// CHECK: %[[OUT1:.*]] = tpu.unfold_rows %[[DOWN]] {rows = 2 : i64} : (tensor<1x64x32x64xf16>) -> tensor<1x32x64x64xf16>
// CHECK: return %[[OUT0]], %[[OUT1]]
func.func @stem_rows(%x: tensor<1x3x128x128xf32>) -> (tensor<1x16x128x128xf16>, tensor<1x32x64x64xf16>) {
  %rows = tpu.fold_rows %x {dilation_h = 1 : i64, kernel_h = 3 : i64, pad_top = 1 : i64, stride_h = 1 : i64} : (tensor<1x3x128x128xf32>) -> tensor<1x9x128x128xf32>
  %h = tpu.cast %rows : (tensor<1x9x128x128xf32>) -> tensor<1x9x128x128xf16>
  %w0 = top.weight {value = dense<[[[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]], [[[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]], [[3.0, 3.0, 3.0]]]]> : tensor<16x9x1x3xf16>} : tensor<16x9x1x3xf16>
  %w1 = top.weight {value = dense<2.500000e-01> : tensor<32x16x3x3xf16>} : tensor<32x16x3x3xf16>
  %n = top.none
  %0 = tpu.conv2d %h, %w0, %n {dilations = array<i64: 1, 1>, do_relu = true, group = 1 : i64, kernel_shape = array<i64: 1, 3>, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 1>} : (tensor<1x9x128x128xf16>, tensor<16x9x1x3xf16>, none) -> tensor<1x16x128x128xf16>
  %1 = tpu.conv2d %0, %w1, %n {dilations = array<i64: 1, 1>, do_relu = true, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x128x128xf16>, tensor<32x16x3x3xf16>, none) -> tensor<1x32x64x64xf16>
  return %0, %1 : tensor<1x16x128x128xf16>, tensor<1x32x64x64xf16>
}
