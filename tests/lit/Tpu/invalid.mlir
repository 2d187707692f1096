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
  // expected-error @+1 {{failed to legalize operation 'top.deconv'}}
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

// The plan describes every value the body defines: the load and the relu.
func.func @plan_misses_a_value(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'tpu.group' op plan describes 1 values, the body defines 2}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// A range within the value: rows 2..6 of 4 are not.
func.func @plan_range_outside_the_shape(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{slice range 2+4 of dimension 2 lies outside the value's shape [1, 8, 4, 4]}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 2+4, 0+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// One range per slice: two H slices need two.
func.func @plan_slice_count(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{value 0 holds 1 slices, the plan has 2}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 2, 1], buffers = 1, order = [0, 1], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// A stored value stores a range in every slice it holds one in.
func.func @plan_store_count(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{a value plan stores 2 slices but holds 1}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4), (0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// Buffers lie in a lane's 256 KiB.
func.func @plan_past_the_lane(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{LMEM buffer [262080, 262208) passes a lane's 262144 bytes}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [262080, 262080], bytes = 128, live = [0, 2], banks = [15], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// The load (invariant, so live throughout) and the relu live together: their
// bytes must not meet.
func.func @plan_overlap(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'tpu.group' op plan's values 0 and 1 share LMEM bytes [32, 64) while both are live}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [32, 32], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// Two sliced values whose lifetimes meet (the relu reads the input at
// position 1) must not share bytes either.
func.func @plan_overlap_sliced(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'tpu.group' op plan's values 0 and 1 share LMEM bytes [0, 64) while both are live}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], lmem = [0, 0], bytes = 64, live = [0, 1], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [0, 0], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// The banks are those the buffers touch.
func.func @plan_banks(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{a value plan's banks differ from those its LMEM buffers touch}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [1], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// Only a value loaded once (invariant) can be loaded by an earlier group.
func.func @plan_prefetch_sliced(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'tpu.group' op plan's value 0 is prefetched but not invariant}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], lmem = [0, 0], bytes = 64, live = [0, 1], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 {prefetch_groups = 1 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// The plan's shape has as many elements as the value.
func.func @plan_shape_elements(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'tpu.group' op plan's value 0 has 64 elements, 'tensor<1x8x4x4xf32>' has 128}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 2], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+2)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// Slices run once each.
func.func @plan_order(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{a group plan's order must list slices of [0, 1) once each, ascending}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0, 0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// One buffer, one offset.
func.func @plan_pong_without_buffers(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{value 1 has a pong buffer in a plan with one buffer}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 128], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// Column parts lie within the value too.
func.func @plan_w_range(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{slice range 2+4 of dimension 3 lies outside the value's shape [1, 8, 4, 4]}}
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 2+4)], store = []>, #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 64, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.relu %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.store %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %3 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @prefetch_from_nowhere(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = []>} : tensor<1x8x4x4xf32> {
    // expected-error @+1 {{'tpu.load' op attribute 'prefetch_groups' failed to satisfy constraint}}
    %1 = tpu.load %arg0 {prefetch_groups = 0 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
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

// -----

func.func @unfold_rows_shape(%arg0: tensor<1x32x8x8xf16>) -> tensor<1x16x8x8xf16> {
  // expected-error @+1 {{'tpu.unfold_rows' op input must be [N, C * rows, H / rows, W] of the result's [N, C, H, W]}}
  %0 = tpu.unfold_rows %arg0 {rows = 2 : i64} : (tensor<1x32x8x8xf16>) -> tensor<1x16x8x8xf16>
  return %0 : tensor<1x16x8x8xf16>
}

// -----

func.func @unfold_rows_lanes(%arg0: tensor<1x96x4x8xf16>) -> tensor<1x48x8x8xf16> {
  // expected-error @+1 {{'tpu.unfold_rows' op unfolds 96 channels; its stores take at most 64 (one lane each)}}
  %0 = tpu.unfold_rows %arg0 {rows = 2 : i64} : (tensor<1x96x4x8xf16>) -> tensor<1x48x8x8xf16>
  return %0 : tensor<1x48x8x8xf16>
}

// -----

func.func @unfold_rows_one(%arg0: tensor<1x16x8x8xf16>) -> tensor<1x16x8x8xf16> {
  // expected-error @+1 {{'tpu.unfold_rows' op attribute 'rows' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 2}}
  %0 = tpu.unfold_rows %arg0 {rows = 1 : i64} : (tensor<1x16x8x8xf16>) -> tensor<1x16x8x8xf16>
  return %0 : tensor<1x16x8x8xf16>
}

// -----

func.func @folded_rows_blocks(%arg0: tensor<1x6x8x8xf16>) -> tensor<1x6x8x8xf32> {
  // expected-error @+1 {{'tpu.folded_rows' needs one 4-D result whose channels are whole row blocks}}
  %0 = tpu.cast %arg0 {tpu.folded_rows = 4 : i64} : (tensor<1x6x8x8xf16>) -> tensor<1x6x8x8xf32>
  return %0 : tensor<1x6x8x8xf32>
}

// -----

func.func @model_macs_on_cast(%arg0: tensor<1x8x8x8xf16>) -> tensor<1x8x8x8xf32> {
  // expected-error @+1 {{'tpu.model_macs' must be a positive integer on a conv or deconv}}
  %0 = tpu.cast %arg0 {tpu.model_macs = 64 : i64} : (tensor<1x8x8x8xf16>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// -----

func.func @model_bytes_on_cast(%arg0: tensor<1x8x8x8xf16>) -> tensor<1x8x8x8xf32> {
  // expected-error @+1 {{'tpu.model_bytes' must be a positive integer on a top.weight}}
  %0 = tpu.cast %arg0 {tpu.model_bytes = 64 : i64} : (tensor<1x8x8x8xf16>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// -----

func.func @conv_rank(%arg0: tensor<1x8x8x8xf32>, %arg1: tensor<8x72xf32>, %arg2: none) {
  // expected-error @+1 {{'tpu.conv2d' op expects a 4-D input, filter and result, got ranks 4, 2, 4}}
  %0 = tpu.conv2d %arg0, %arg1, %arg2 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x8x8x8xf32>, tensor<8x72xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_strides(%arg0: tensor<1x8x8x8xf32>, %arg1: tensor<8x8x3x3xf32>, %arg2: none) {
  // expected-error @+1 {{'tpu.conv2d' op strides must have 2 positive entries}}
  %0 = tpu.conv2d %arg0, %arg1, %arg2 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 0, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_kernel(%arg0: tensor<1x8x8x8xf32>, %arg1: tensor<8x8x1x1xf32>, %arg2: none) {
  // expected-error @+1 {{'tpu.conv2d' op kernel_shape [3, 3] does not match the filter's [1, 1]}}
  %0 = tpu.conv2d %arg0, %arg1, %arg2 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x8x8x8xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_channels(%arg0: tensor<1x8x8x8xf32>, %arg1: tensor<8x4x3x3xf32>, %arg2: none) {
  // expected-error @+1 {{'tpu.conv2d' op input channels 8 do not match filter [8, 4, 3, 3] with group 1}}
  %0 = tpu.conv2d %arg0, %arg1, %arg2 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x8x8x8xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_result_channels(%arg0: tensor<1x8x8x8xf32>, %arg1: tensor<8x8x3x3xf32>, %arg2: none) {
  // expected-error @+1 {{'tpu.conv2d' op result [1, 4, 8, 8] must have the input's batch 1 and the filter's 8 channels}}
  %0 = tpu.conv2d %arg0, %arg1, %arg2 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv_bias(%arg0: tensor<1x8x8x8xf32>, %arg1: tensor<8x8x3x3xf32>, %arg2: tensor<5xf32>) {
  // expected-error @+1 {{'tpu.conv2d' op bias has 5 elements for 8 output channels (expects oc, or oc x 3 for an INT8 table)}}
  %0 = tpu.conv2d %arg0, %arg1, %arg2 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<5xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_result_height(%arg0: tensor<1x8x8x8xf32>, %arg1: tensor<8x8x3x3xf32>, %arg2: none) {
  // expected-error @+1 {{'tpu.conv2d' op result height 7 differs from the window arithmetic's 8}}
  %0 = tpu.conv2d %arg0, %arg1, %arg2 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x7x8xf32>
  return
}

// -----

func.func @deconv_result_width(%arg0: tensor<1x8x8x8xf32>, %arg1: tensor<8x8x3x3xf32>, %arg2: none) {
  // expected-error @+1 {{'tpu.deconv2d' op result width 14 is below the window arithmetic's 15}}
  %0 = tpu.deconv2d %arg0, %arg1, %arg2 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x15x14xf32>
  return
}

// -----

func.func @pool_rank(%arg0: tensor<8x8x8xf32>) {
  // expected-error @+1 {{'tpu.pool2d' op expects a 4-D input and result, got ranks 3 and 4}}
  %0 = tpu.pool2d %arg0 {kind = 0 : i32, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, count_include_pad = false, do_relu = false} : (tensor<8x8x8xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @pool_pads(%arg0: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'tpu.pool2d' op pads must have 4 non-negative entries [top, left, bottom, right]}}
  %0 = tpu.pool2d %arg0 {kind = 0 : i32, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0>, count_include_pad = false, do_relu = false} : (tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @pool_quant(%arg0: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'tpu.pool2d' op attribute 'quant' failed to satisfy constraint: INT8 requantization}}
  %0 = tpu.pool2d %arg0 {kind = 0 : i32, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, count_include_pad = false, do_relu = false, quant = array<i64: 1, 0>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @pool_channels(%arg0: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'tpu.pool2d' op result [1, 4, 4, 4] must keep the input's batch and channels [1, 8]}}
  %0 = tpu.pool2d %arg0 {kind = 0 : i32, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, count_include_pad = false, do_relu = false} : (tensor<1x8x8x8xf32>) -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @pool_result_width(%arg0: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'tpu.pool2d' op result width 5 differs from the window arithmetic's 4}}
  %0 = tpu.pool2d %arg0 {kind = 0 : i32, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, count_include_pad = false, do_relu = false} : (tensor<1x8x8x8xf32>) -> tensor<1x8x4x5xf32>
  return
}

// -----

func.func @eltwise_broadcast(%arg0: tensor<1x8x4x4xf32>, %arg1: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{'tpu.eltwise' op operands [1, 8, 4, 4] and [1, 4, 4, 4] do not broadcast in dimension 1}}
  %0 = tpu.eltwise %arg0, %arg1 {kind = 0 : i32, do_relu = false} : (tensor<1x8x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @eltwise_result(%arg0: tensor<1x8x4x4xf32>, %arg1: tensor<1x8x1x1xf32>) {
  // expected-error @+1 {{'tpu.eltwise' op result [1, 8, 1, 1] is not the operands' broadcast [1, 8, 4, 4]}}
  %0 = tpu.eltwise %arg0, %arg1 {kind = 2 : i32, do_relu = false} : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  return
}

// -----

func.func @eltwise_quant(%arg0: tensor<1x8x4x4xf32>, %arg1: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{requant rshift 64 is not in [0, 63]}}
  %0 = tpu.eltwise %arg0, %arg1 {kind = 0 : i32, do_relu = false, quant = #tpu.requant<m0 = 1, m1 = 1, rshift = 64>} : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @relu_shape(%arg0: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'tpu.relu' op result shape [1, 8, 4, 2] differs from the input's [1, 8, 4, 4]}}
  %0 = tpu.relu %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x2xf32>
  return
}

// -----

func.func @active_mode(%arg0: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'tpu.active' op attribute 'mode' failed to satisfy constraint: unary function}}
  %0 = tpu.active %arg0 {mode = 23 : i32, alpha = 0.0 : f64, beta = 0.0 : f64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @active_table(%arg0: tensor<1x8x4x4xi8>, %arg1: tensor<128xi8>) {
  // expected-error @+1 {{'tpu.active' op table must have 256 entries, got type 'tensor<128xi8>'}}
  %0 = tpu.active %arg0, %arg1 {mode = 2 : i32, alpha = 0.0 : f64, beta = 0.0 : f64} : (tensor<1x8x4x4xi8>, tensor<128xi8>) -> tensor<1x8x4x4xi8>
  return
}

// -----

func.func @cast_shape(%arg0: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'tpu.cast' op result shape [1, 8, 16] differs from the input's [1, 8, 4, 4]}}
  %0 = tpu.cast %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x16xf16>
  return
}

// -----

func.func @cast_quant(%arg0: tensor<1x8x4x4xi8>) {
  // expected-error @+2 {{integer value too large}}
  // expected-error @+1 {{failed to parse Tpu_RequantAttr parameter 'm0'}}
  %0 = tpu.cast %arg0 {quant = #tpu.requant<m0 = 2147483648, m1 = 0, rshift = 1>} : (tensor<1x8x4x4xi8>) -> tensor<1x8x4x4xi8>
  return
}

// -----

func.func @resize_rank(%arg0: tensor<8x4x4xf32>) {
  // expected-error @+1 {{'tpu.resize' op expects a 4-D input and result, got ranks 3 and 4}}
  %0 = tpu.resize %arg0 {mode = 0 : i32, coord_mode = 1 : i32, nearest_mode = 0 : i32, scales = array<f64: 2.0, 2.0>} : (tensor<8x4x4xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @resize_channels(%arg0: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'tpu.resize' op result [1, 4, 8, 8] must keep the input's batch and channels [1, 8]}}
  %0 = tpu.resize %arg0 {mode = 0 : i32, coord_mode = 1 : i32, nearest_mode = 0 : i32, scales = array<f64: 2.0, 2.0>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @resize_mode(%arg0: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'tpu.resize' op attribute 'mode' failed to satisfy constraint: interpolation}}
  %0 = tpu.resize %arg0 {mode = 2 : i32, coord_mode = 1 : i32, nearest_mode = 0 : i32, scales = array<f64: 2.0, 2.0>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @resize_coord_mode(%arg0: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'tpu.resize' op attribute 'coord_mode' failed to satisfy constraint: resize coordinate transform}}
  %0 = tpu.resize %arg0 {mode = 0 : i32, coord_mode = 4 : i32, nearest_mode = 0 : i32, scales = array<f64: 2.0, 2.0>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @resize_nearest_mode(%arg0: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'tpu.resize' op attribute 'nearest_mode' failed to satisfy constraint: nearest resize rounding}}
  %0 = tpu.resize %arg0 {mode = 0 : i32, coord_mode = 1 : i32, nearest_mode = 4 : i32, scales = array<f64: 2.0, 2.0>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @resize_scales(%arg0: tensor<1x8x4x4xf32>) {
  // expected-error @+1 {{'tpu.resize' op expects 2 positive scales}}
  %0 = tpu.resize %arg0 {mode = 0 : i32, coord_mode = 1 : i32, nearest_mode = 0 : i32, scales = array<f64: 2.0>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @dma_length(%arg0: tensor<4x4xf32>) {
  // expected-error @+1 {{'tpu.dma' op attribute 'program' failed to satisfy constraint: list of #tpu.copy}}
  %0 = tpu.dma %arg0 {program = array<i64: 0, 0, 0, 1, 1, 4, 4>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @dma_source(%arg0: tensor<4x4xf32>) {
  // expected-error @+1 {{'tpu.dma' op copy 0 reads source 1; there are 1 inputs}}
  %0 = tpu.dma %arg0 {program = [#tpu.copy<src = 1, src_offset = 0, dst_offset = 0, shape = [1, 1, 4, 4], src_strides = [0, 0, 4, 1], dst_strides = [0, 0, 4, 1]>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @dma_copy_source(%arg0: tensor<4x4xf32>) {
  // expected-error @+1 {{copy source -3 is not an operand, fill or self}}
  %0 = tpu.dma %arg0 {program = [#tpu.copy<src = -3, src_offset = 0, dst_offset = 0, shape = [1, 1, 4, 4], src_strides = [0, 0, 4, 1], dst_strides = [0, 0, 4, 1]>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @dma_copy_rank(%arg0: tensor<4x4xf32>) {
  // expected-error @+1 {{copy needs 4 dimensions and 4 strides on each side}}
  %0 = tpu.dma %arg0 {program = [#tpu.copy<src = 0, src_offset = 0, dst_offset = 0, shape = [4, 4], src_strides = [4, 1], dst_strides = [4, 1]>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @dma_copy_shape(%arg0: tensor<4x4xf32>) {
  // expected-error @+1 {{copy shape [1, 0, 4, 4] must be positive}}
  %0 = tpu.dma %arg0 {program = [#tpu.copy<src = 0, src_offset = 0, dst_offset = 0, shape = [1, 0, 4, 4], src_strides = [0, 0, 4, 1], dst_strides = [0, 0, 4, 1]>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @dma_copy_stride(%arg0: tensor<4x4xf32>) {
  // expected-error @+1 {{copy offsets and strides must not be negative}}
  %0 = tpu.dma %arg0 {program = [#tpu.copy<src = self, src_offset = 0, dst_offset = 4, shape = [1, 1, 1, 4], src_strides = [0, 0, 0, -1], dst_strides = [0, 0, 0, 1]>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @dma_copy_bits(%arg0: tensor<4x4xf32>) {
  // expected-error @+1 {{expected '>'}}
  %0 = tpu.dma %arg0 {program = [#tpu.copy<src = 0, src_offset = 0, dst_offset = 0, shape = [1, 1, 4, 4], src_strides = [0, 0, 4, 1], dst_strides = [0, 0, 4, 1], bits = 0x1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @reshape_count(%arg0: tensor<4x4xf32>) {
  // expected-error @+1 {{'tpu.reshape' op cannot reshape 16 elements to 8}}
  %0 = tpu.reshape %arg0 : (tensor<4x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{'tpu.concat' op expects at least one input}}
  %0 = tpu.concat {axis = 0 : i64} : () -> tensor<4x4xf32>
  return
}

// -----

func.func @concat_axis(%arg0: tensor<2x4xf32>) {
  // expected-error @+1 {{'tpu.concat' op axis 2 is out of range for rank 2}}
  %0 = tpu.concat %arg0 {axis = 2 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @concat_rank(%arg0: tensor<2x4xf32>, %arg1: tensor<8xf32>) {
  // expected-error @+1 {{'tpu.concat' op input 1 has rank 1, the result 2}}
  %0 = tpu.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<2x4xf32>, tensor<8xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @concat_dims(%arg0: tensor<2x4xf32>, %arg1: tensor<2x3xf32>) {
  // expected-error @+1 {{'tpu.concat' op input 1 dimension 1 is 3, the result's 4}}
  %0 = tpu.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @concat_sum(%arg0: tensor<2x4xf32>, %arg1: tensor<2x4xf32>) {
  // expected-error @+1 {{'tpu.concat' op inputs give 4 along axis 0, the result has 5}}
  %0 = tpu.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<5x4xf32>
  return
}

// -----

func.func @load_shape(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = []>} : tensor<1x8x4x4xf32> {
    // expected-error @+1 {{'tpu.load' op result shape [1, 8, 2, 4] differs from the input's [1, 8, 4, 4]}}
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x4xf32>
    %2 = tpu.store %1 : (tensor<1x8x2x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %2 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @store_shape(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = []>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    // expected-error @+1 {{'tpu.store' op result shape [1, 8, 16] differs from the input's [1, 8, 4, 4]}}
    %2 = tpu.store %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x16xf32>
    tpu.yield %1 : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @yield_types(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = []>} : tensor<1x8x4x4xf32> {
    %1 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %2 = tpu.store %1 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    // expected-error @+1 {{'tpu.yield' op yields 2 values of types 'tensor<1x8x4x4xf32>', 'tensor<1x8x4x4xf32>' for the group's results 'tensor<1x8x4x4xf32>'}}
    tpu.yield %2, %2 : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @string_run_dtype(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'tpu.relu' op 'kiln.dtype' must be a #top.dtype, not "f16"}}
  %0 = tpu.relu %x {kiln.dtype = "f16"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @dma_in_place_two_copies(%arg0: tensor<4x4xf32>) {
  // expected-error @+1 {{'tpu.dma' op in place needs one copy of every element of one input}}
  %0 = tpu.dma %arg0 {in_place, program = [#tpu.copy<src = 0, src_offset = 0, dst_offset = 0, shape = [1, 1, 2, 4], src_strides = [0, 0, 4, 1], dst_strides = [0, 0, 4, 1]>, #tpu.copy<src = 0, src_offset = 8, dst_offset = 8, shape = [1, 1, 2, 4], src_strides = [0, 0, 4, 1], dst_strides = [0, 0, 4, 1]>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @strided_view_sizes(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tpu.strided_view' op sizes hold 12 elements, the result 16}}
  %0 = tpu.strided_view %arg0 {offset = 0 : i64, sizes = array<i64: 4, 3>, strides = array<i64: 1, 4>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @strided_view_strides(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tpu.strided_view' op needs as many strides as sizes, at least one}}
  %0 = tpu.strided_view %arg0 {offset = 0 : i64, sizes = array<i64: 4, 4>, strides = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @strided_view_outside(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tpu.strided_view' op reads element 16, outside the input's 16}}
  %0 = tpu.strided_view %arg0 {offset = 1 : i64, sizes = array<i64: 4, 4>, strides = array<i64: 1, 4>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @strided_view_dtype(%arg0: tensor<4x4xf32>) -> tensor<4x4xf16> {
  // expected-error @+1 {{'tpu.strided_view' op reads its input's elements: element types 'f32' and 'f16' differ}}
  %0 = tpu.strided_view %arg0 {offset = 0 : i64, sizes = array<i64: 4, 4>, strides = array<i64: 1, 4>} : (tensor<4x4xf32>) -> tensor<4x4xf16>
  return %0 : tensor<4x4xf16>
}

// -----

func.func @strided_view_negative(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tpu.strided_view' op needs sizes >= 1 and strides >= 0}}
  %0 = tpu.strided_view %arg0 {offset = 12 : i64, sizes = array<i64: 4, 4>, strides = array<i64: 1, -4>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
