// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-layer-group | FileCheck %s
// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu "-tpu-layer-group=max-prefetch-groups=0" | FileCheck %s --check-prefix=NOPF

// A ResNet basic block on a 14x14 map fits LMEM whole: one group across the
// skip connection, whose input is loaded once and read by the first conv and
// by the residual add.
// CHECK-LABEL: func.func @block14
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0],
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 64, 14, 14], invariant,
// CHECK: %[[X:.*]] = tpu.load %arg0 :
// CHECK: %[[C1:.*]] = tpu.conv2d %[[X]]
// CHECK: %[[C2:.*]] = tpu.conv2d %[[C1]]
// CHECK: tpu.eltwise %[[C2]], %[[X]]
// CHECK: tpu.relu
// CHECK-NOT: tpu.group
func.func @block14(%x: tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32> {
  %w1 = top.weight {value = dense<0.01> : tensor<64x64x3x3xf32>} : tensor<64x64x3x3xf32>
  %w2 = top.weight {value = dense<0.02> : tensor<64x64x3x3xf32>} : tensor<64x64x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %w1, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (tensor<1x64x14x14xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x14x14xf32>
  %1 = top.conv %0, %w2, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x64x14x14xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x14x14xf32>
  %2 = top.add %1, %x : (tensor<1x64x14x14xf32>, tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %3 = top.relu %2 : (tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  return %3 : tensor<1x64x14x14xf32>
}

// -----

// The same block on a 56x56 map must be sliced along H; in one group every
// slice would recompute the first conv's halo rows, so the cost model splits
// it after the first conv, and the first group loads the second conv's
// filter while it computes (at the top of LMEM, which neither group uses
// otherwise).
// CHECK-LABEL: func.func @block56
// CHECK: %[[G1:.*]] = tpu.group {plan = #tpu.group_plan<slices = [1, 1, {{[0-9]+}}, 1], buffers = 2,
// CHECK: tpu.conv2d
// CHECK-NOT: tpu.conv2d
// The moved filter is the second value of the second group's plan.
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, {{[0-9]+}}, 1], buffers = 2,
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 64, 56, 56], {{[^>]*}}>, #tpu.value_plan<shape = [1, 64, 64, 9], invariant, lmem = [259840, 259840], bytes = 2304, {{.*}} banks = [15],
// CHECK: tpu.load %[[G1]] :
// CHECK: tpu.load %{{.*}} {prefetch_groups = 1 : i64}
// CHECK: tpu.conv2d
// CHECK: tpu.eltwise
// CHECK: tpu.relu
// Without prefetching the filter stays with the group that reads it.
// NOPF-LABEL: func.func @block56
// NOPF-NOT: prefetch_groups
// NOPF: return
func.func @block56(%x: tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
  %w1 = top.weight {value = dense<0.01> : tensor<64x64x3x3xf32>} : tensor<64x64x3x3xf32>
  %w2 = top.weight {value = dense<0.02> : tensor<64x64x3x3xf32>} : tensor<64x64x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %w1, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x56x56xf32>
  %1 = top.conv %0, %w2, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x56x56xf32>
  %2 = top.add %1, %x : (tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %3 = top.relu %2 : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  return %3 : tensor<1x64x56x56xf32>
}

// -----

// Two 512-channel 3x3 convs in F32: each filter takes 144 KiB of every lane,
// too much to hold whole, so each conv is sliced along C in lane groups (the
// filter's output channels with it, loaded slice by slice behind the compute
// of the previous one) and reads its whole input, held. Together they would
// recompute the first conv in every C slice: two groups. The two filter
// buffers start on banks of their own (16 KiB each), so loading the next
// filter slice shares no bank with the conv reading the current one.
// CHECK-LABEL: func.func @wide_chain
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, {{[2-8]}}, 1, 1], buffers = 2,
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 512, 7, 7], invariant,
// CHECK-SAME: #tpu.value_plan<shape = [1, 512, 512, 9], lmem = [16384, {{49152|65536}}],
// CHECK: tpu.load %arg0 :
// CHECK: tpu.load %{{.*}} :
// CHECK: tpu.conv2d
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, {{[2-8]}}, 1, 1], buffers = 2,
// CHECK: tpu.conv2d
func.func @wide_chain(%x: tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32> {
  %w1 = top.weight {value = dense<0.01> : tensor<512x512x3x3xf32>} : tensor<512x512x3x3xf32>
  %w2 = top.weight {value = dense<0.02> : tensor<512x512x3x3xf32>} : tensor<512x512x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %w1, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>, none) -> tensor<1x512x7x7xf32>
  %1 = top.conv %0, %w2, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>, none) -> tensor<1x512x7x7xf32>
  return %1 : tensor<1x512x7x7xf32>
}

// -----

// A wide depthwise and elementwise chain: each output channel reads only its
// own input channel, so C slices (whole lane groups) load a part of the
// input, filter and bias each, and the three ops run on that part; the
// second slice's loads run behind the first slice's compute.
// CHECK-LABEL: func.func @wide_depthwise_chain
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 2, 1, 1], buffers = 2,
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 2048, 7, 7], lmem = [{{[0-9]+}}, {{[0-9]+}}], bytes = {{[0-9]+}}, live = [{{[0-9]+}}, {{[0-9]+}}], banks = [{{[0-9, ]+}}], hold = [(0+1, 0+1024, 0+7, 0+7), (0+1, 1024+1024, 0+7, 0+7)]
// CHECK-SAME: #tpu.value_plan<shape = [1, 2048, 1, 9], lmem = [{{[0-9]+}}, {{[0-9]+}}], bytes = {{[0-9]+}}, live = [{{[0-9]+}}, {{[0-9]+}}], banks = [{{[0-9, ]+}}], hold = [(0+1, 0+1024, 0+1, 0+9), (0+1, 1024+1024, 0+1, 0+9)]
// CHECK-SAME: #tpu.value_plan<shape = [1, 2048, 1, 1], lmem = [{{[0-9]+}}, {{[0-9]+}}], bytes = {{[0-9]+}}, live = [{{[0-9]+}}, {{[0-9]+}}], banks = [{{[0-9, ]+}}], hold = [(0+1, 0+1024, 0+1, 0+1), (0+1, 1024+1024, 0+1, 0+1)]
// CHECK: tpu.load %arg0 :
// CHECK: tpu.load %{{.*}} :
// CHECK: tpu.load %{{.*}} :
// CHECK: tpu.conv2d {{.*}}group = 2048
// CHECK: tpu.relu
// CHECK: tpu.eltwise
func.func @wide_depthwise_chain(%x: tensor<1x2048x7x7xf32>) -> tensor<1x2048x7x7xf32> {
  %w = top.weight {value = dense<0.01> : tensor<2048x1x3x3xf32>} : tensor<2048x1x3x3xf32>
  %b = top.weight {value = dense<0.5> : tensor<2048xf32>} : tensor<2048xf32>
  %0 = top.conv %x, %w, %b {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2048 : i64, do_relu = false} : (tensor<1x2048x7x7xf32>, tensor<2048x1x3x3xf32>, tensor<2048xf32>) -> tensor<1x2048x7x7xf32>
  %1 = top.relu %0 : (tensor<1x2048x7x7xf32>) -> tensor<1x2048x7x7xf32>
  %2 = top.mul %1, %x : (tensor<1x2048x7x7xf32>, tensor<1x2048x7x7xf32>) -> tensor<1x2048x7x7xf32>
  return %2 : tensor<1x2048x7x7xf32>
}

// -----

// One conv over a 128 x 128 map in nine H slices. Nothing hides the first
// slice's load or the last one's store, so the first and last slices are
// half the others (tapered: 8 output rows, seven of 16, 8): the net models
// fewer cycles that way.
// CHECK-LABEL: func.func @tapered
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 9, 1]
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 128, 128], lmem = [{{[0-9]+}}, {{[0-9]+}}], bytes = {{[0-9]+}}, live = [1, {{[0-9]+}}], banks = [{{[0-9, ]+}}], hold = [(0+1, 0+64, 0+8, 0+128), (0+1, 0+64, 8+16, 0+128), (0+1, 0+64, 24+16, 0+128), (0+1, 0+64, 40+16, 0+128), (0+1, 0+64, 56+16, 0+128), (0+1, 0+64, 72+16, 0+128), (0+1, 0+64, 88+16, 0+128), (0+1, 0+64, 104+16, 0+128), (0+1, 0+64, 120+8, 0+128)]
// NOPF-LABEL: func.func @tapered
// NOPF: hold = [(0+1, 0+64, 0+8, 0+128), (0+1, 0+64, 8+16, 0+128)
func.func @tapered(%x: tensor<1x64x128x128xf32>) -> tensor<1x64x128x128xf32> {
  %w = top.weight {value = dense<0.01> : tensor<64x64x3x3xf32>} : tensor<64x64x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (tensor<1x64x128x128xf32>, tensor<64x64x3x3xf32>, none) -> tensor<1x64x128x128xf32>
  return %0 : tensor<1x64x128x128xf32>
}

// -----

// Two branches read the first conv's result: a 3x3 conv (listed first, as an
// exporter lists the main chain) and a 1x1 head whose result is as large. The
// second group runs the head first: its store then overlaps the 3x3 conv of
// the same slice, and the last slice leaves only the 3x3 conv's rows to store.
// The group's results keep their values (the return reads them swapped).
// CHECK-LABEL: func.func @side_branch_first
// CHECK: tpu.group
// CHECK: %[[G:.*]]:2 = tpu.group
// CHECK: %[[HEAD:.*]] = tpu.conv2d {{.*}}kernel_shape = array<i64: 1, 1>
// CHECK-NEXT: %[[MAIN:.*]] = tpu.conv2d {{.*}}kernel_shape = array<i64: 3, 3>
// CHECK-NEXT: tpu.store %[[HEAD]]
// CHECK-NEXT: tpu.store %[[MAIN]]
// CHECK: return %[[G]]#1, %[[G]]#0
func.func @side_branch_first(%x: tensor<1x32x96x96xf32>) -> (tensor<1x32x96x96xf32>, tensor<1x32x96x96xf32>) {
  %w1 = top.weight {value = dense<0.01> : tensor<32x32x3x3xf32>} : tensor<32x32x3x3xf32>
  %w2 = top.weight {value = dense<0.02> : tensor<32x32x3x3xf32>} : tensor<32x32x3x3xf32>
  %w3 = top.weight {value = dense<0.03> : tensor<32x32x1x1xf32>} : tensor<32x32x1x1xf32>
  %n = top.none
  %0 = top.conv %x, %w1, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (tensor<1x32x96x96xf32>, tensor<32x32x3x3xf32>, none) -> tensor<1x32x96x96xf32>
  %1 = top.conv %0, %w2, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (tensor<1x32x96x96xf32>, tensor<32x32x3x3xf32>, none) -> tensor<1x32x96x96xf32>
  %2 = top.conv %0, %w3, %n {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false} : (tensor<1x32x96x96xf32>, tensor<32x32x1x1xf32>, none) -> tensor<1x32x96x96xf32>
  return %1, %2 : tensor<1x32x96x96xf32>, tensor<1x32x96x96xf32>
}
