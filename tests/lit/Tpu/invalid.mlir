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
