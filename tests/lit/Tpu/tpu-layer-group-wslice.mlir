// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-layer-group | FileCheck %s

// Two rows of 6000 columns: H slices could only be the two rows, each
// reading both input rows through the 3x3 window. W slices read two halo
// columns each and pipeline loads, convs and stores: the cost model picks
// many of them. The filter is held; the input is loaded per slice, a part of
// its columns with the whole tensor's row stride: the plan shows the conv's
// columns, 63 or 64 per slice, and the input's, one halo column each side.
// CHECK-LABEL: func.func @few_wide_rows
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, {{[1-9][0-9]+}}], buffers = 2,
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 64, 2, 6000], lmem = [{{[0-9]+}}, {{[0-9]+}}], bytes = {{[0-9]+}}, live = [0, 1], banks = [{{[0-9, ]+}}], hold = [(0+1, 0+64, 0+2, 0+64), (0+1, 0+64, 0+2, 62+66),
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 64, 9], invariant,
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 2, 6000], lmem = [{{[0-9]+}}, {{[0-9]+}}], bytes = {{[0-9]+}}, live = [1, 2], banks = [{{[0-9, ]+}}], hold = [(0+1, 0+64, 0+2, 0+63), (0+1, 0+64, 0+2, 63+64),
// CHECK: tpu.load %arg0 :
// CHECK: tpu.load %{{.*}} :
// CHECK: tpu.conv2d
// CHECK: tpu.relu
func.func @few_wide_rows(%x: tensor<1x64x2x6000xf32>) -> tensor<1x64x2x6000xf32> {
  %w = top.weight {value = dense<0.01> : tensor<64x64x3x3xf32>} : tensor<64x64x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x64x2x6000xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x2x6000xf32>
  %1 = top.relu %0 : (tensor<1x64x2x6000xf32>) -> tensor<1x64x2x6000xf32>
  return %1 : tensor<1x64x2x6000xf32>
}

// -----

// Four rows of 64 columns: W slices are tried (a wide map of few rows),
// but parts of a few dozen columns make short DMA runs (whole 64-byte bursts
// each), and the four H slices model fewer cycles: no W slices.
// CHECK-LABEL: func.func @rows_cheaper
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, {{[2-4]}}, 1], buffers = 2,
func.func @rows_cheaper(%x: tensor<1x64x4x64xf32>) -> tensor<1x64x4x64xf32> {
  %w = top.weight {value = dense<0.01> : tensor<64x64x3x3xf32>} : tensor<64x64x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x64x4x64xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x4x64xf32>
  %1 = top.relu %0 : (tensor<1x64x4x64xf32>) -> tensor<1x64x4x64xf32>
  return %1 : tensor<1x64x4x64xf32>
}

// -----

// The skip connection reads the input at the conv's halo columns and the add
// at its own: a TIU operand has no row stride of its own to read a part of
// the columns held, so the group keeps W whole and slices H.
// CHECK-LABEL: func.func @skip_keeps_width
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 2, 1], buffers = 2,
func.func @skip_keeps_width(%x: tensor<1x64x2x6000xf32>) -> tensor<1x64x2x6000xf32> {
  %w = top.weight {value = dense<0.01> : tensor<64x64x3x3xf32>} : tensor<64x64x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x64x2x6000xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x2x6000xf32>
  %1 = top.add %0, %x : (tensor<1x64x2x6000xf32>, tensor<1x64x2x6000xf32>) -> tensor<1x64x2x6000xf32>
  return %1 : tensor<1x64x2x6000xf32>
}
