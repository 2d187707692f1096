// RUN: kiln-opt %s -convert-top-to-tpu -tpu-layer-group -split-input-file -verify-diagnostics

// A conv whose filter alone exceeds a lane's 256 KiB cannot be placed.
func.func @too_big(%arg0: tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> {
  %w = top.weight {value = dense<1.0> : tensor<64x64x33x33xf32>} : tensor<64x64x33x33xf32>
  %n = top.none
  // expected-error @+1 {{does not fit local memory}}
  %0 = top.conv %arg0, %w, %n {kernel_shape = array<i64: 33, 33>, strides = array<i64: 1, 1>, pads = array<i64: 16, 16, 16, 16>, dilations = array<i64: 1, 1>} : (tensor<1x64x8x8xf32>, tensor<64x64x33x33xf32>, none) -> tensor<1x64x8x8xf32>
  return %0 : tensor<1x64x8x8xf32>
}

// -----

// A dynamic ConvTranspose filter must be reordered on the device first
// (top-reorder-deconv-filter); lowering does not guess its layout.
func.func @unreordered_deconv(%arg0: tensor<1x2x5x5xf32>, %arg1: tensor<2x4x3x3xf32>) -> tensor<1x4x9x9xf32> {
  %n = top.none
  // expected-error @+1 {{cannot lower 'top.deconv' with these operands to the chip}}
  %0 = top.deconv %arg0, %arg1, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>, tensor<2x4x3x3xf32>, none) -> tensor<1x4x9x9xf32>
  return %0 : tensor<1x4x9x9xf32>
}

// -----

func.func @view_outside(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{'tpu.view' op elements [80, 144) lie outside the input's 128}}
  %0 = tpu.view %arg0 {offset = 80 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @view_dtype(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x4x4x4xf16> {
  // expected-error @+1 {{'tpu.view' op views its input's elements: element types 'f32' and 'f16' differ}}
  %0 = tpu.view %arg0 {offset = 0 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x4xf16>
  return %0 : tensor<1x4x4x4xf16>
}

// -----

func.func @group_without_placement(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %0 = tpu.group {buffers = 1 : i64, h_slices = 1 : i64, n_slices = 1 : i64} : tensor<1x8x4x4xf32> {
    // expected-error @+1 {{'tpu.load' op in a tpu.group needs its LMEM placement ('tpu.lmem')}}
    %1 = tpu.load %arg0 {held = true} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.store %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %2 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @placement_outside_a_lane(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %0 = tpu.group {buffers = 1 : i64, h_slices = 1 : i64, n_slices = 1 : i64} : tensor<1x8x4x4xf32> {
    // expected-error @+1 {{'tpu.lmem' offsets must lie in a lane's 262144 bytes}}
    %1 = tpu.load %arg0 {held = true, tpu.lmem = #tpu.lmem<262144, 262144>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.store %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %2 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @placement_outside_a_group(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'tpu.lmem' places the one result of an op in a tpu.group}}
  %0 = tpu.relu %arg0 {tpu.lmem = #tpu.lmem<0, 0>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @prefetch_from_nowhere(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %0 = tpu.group {buffers = 1 : i64, h_slices = 1 : i64, n_slices = 1 : i64} : tensor<1x8x4x4xf32> {
    // expected-error @+1 {{'tpu.load' op attribute 'prefetch_groups' failed to satisfy constraint}}
    %1 = tpu.load %arg0 {held = true, prefetch_groups = 0 : i64, tpu.lmem = #tpu.lmem<0, 0>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.store %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %2 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @fold_rows_channels(%arg0: tensor<1x3x8x8xf16>) -> tensor<1x6x8x8xf16> {
  // expected-error @+1 {{'tpu.fold_rows' op result must be [N, C * kernel_h, rows, W] of the input's N, C, W}}
  %0 = tpu.fold_rows %arg0 {dilation_h = 1 : i64, kernel_h = 3 : i64, pad_top = 1 : i64, stride_h = 1 : i64} : (tensor<1x3x8x8xf16>) -> tensor<1x6x8x8xf16>
  return %0 : tensor<1x6x8x8xf16>
}

// -----

func.func @fold_rows_lanes(%arg0: tensor<1x16x8x8xf16>) -> tensor<1x80x8x8xf16> {
  // expected-error @+1 {{'tpu.fold_rows' op folds 80 channels; its loads place at most 64 (one lane each)}}
  %0 = tpu.fold_rows %arg0 {dilation_h = 1 : i64, kernel_h = 5 : i64, pad_top = 2 : i64, stride_h = 1 : i64} : (tensor<1x16x8x8xf16>) -> tensor<1x80x8x8xf16>
  return %0 : tensor<1x80x8x8xf16>
}

// -----

func.func @fold_rows_stride(%arg0: tensor<1x3x8x8xf16>) -> tensor<1x9x8x8xf16> {
  // expected-error @+1 {{'tpu.fold_rows' op needs kernel_h, stride_h and dilation_h >= 1 and pad_top >= 0}}
  %0 = tpu.fold_rows %arg0 {dilation_h = 1 : i64, kernel_h = 3 : i64, pad_top = 1 : i64, stride_h = 0 : i64} : (tensor<1x3x8x8xf16>) -> tensor<1x9x8x8xf16>
  return %0 : tensor<1x9x8x8xf16>
}
