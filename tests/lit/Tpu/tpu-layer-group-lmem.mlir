// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-layer-group | FileCheck %s

// Six values of 32 KiB per lane (one row of 8192 f32) in one group. Without
// reuse, two buffers of each take 384 KiB: the group runs single-buffered.
// With reuse it is pipelined over 8 slices in 192 KiB:
//  - the loaded input keeps a ping and a pong buffer, so slice k + 1 loads
//    while slice k computes;
//  - the product and the second relu reuse the input's bytes once the first
//    relu has read them (and the next load into them waits for their readers);
//  - the first relu and the sum die within their slice: one buffer serves
//    both (ping = pong);
//  - the stored result keeps two, so slice k's store drains while slice k + 1
//    computes.
// CHECK-LABEL: func.func @reuse
// The plan's lifetimes are positions of a slice's step of 7 (its loads, the
// five ops, its stores) on a cycle of two steps: the input's load may run
// while the slice before computes, so its buffer is live from 6 positions
// before its slice; the result lives until its store a step later.
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 8, 1], buffers = 2,
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 64, 8, 8192], lmem = [0, 32768], bytes = 32768, live = [-6, 1], banks = [0, 1, 2, 3],
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 8192], lmem = [65536, 65536], bytes = 32768, live = [1, 3], banks = [4, 5],
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 8192], lmem = [0, 32768], bytes = 32768, live = [2, 3],
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 8192], lmem = [98304, 98304], bytes = 32768, live = [3, 4],
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 8192], lmem = [0, 32768], bytes = 32768, live = [4, 5],
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 8192], lmem = [131072, 163840], bytes = 32768, live = [5, 13], banks = [8, 9, 10, 11],
// CHECK-SAME: store = [(0+1, 0+64, 0+1, 0+8192), (0+1, 0+64, 1+1, 0+8192),
// CHECK: %[[X:.*]] = tpu.load %arg0 :
// CHECK: %[[R:.*]] = tpu.relu %[[X]]
// CHECK: %[[P:.*]] = tpu.eltwise %[[R]], %[[R]]
// CHECK: %[[S:.*]] = tpu.eltwise %[[P]], %[[R]]
// CHECK: %[[R2:.*]] = tpu.relu %[[S]]
// CHECK: %[[Y:.*]] = tpu.eltwise %[[R2]], %[[R2]]
// CHECK: tpu.store %[[Y]]
func.func @reuse(%x: tensor<1x64x8x8192xf32>) -> tensor<1x64x8x8192xf32> {
  %0 = top.relu %x : (tensor<1x64x8x8192xf32>) -> tensor<1x64x8x8192xf32>
  %1 = top.mul %0, %0 : (tensor<1x64x8x8192xf32>, tensor<1x64x8x8192xf32>) -> tensor<1x64x8x8192xf32>
  %2 = top.add %1, %0 : (tensor<1x64x8x8192xf32>, tensor<1x64x8x8192xf32>) -> tensor<1x64x8x8192xf32>
  %3 = top.relu %2 : (tensor<1x64x8x8192xf32>) -> tensor<1x64x8x8192xf32>
  %4 = top.mul %3, %3 : (tensor<1x64x8x8192xf32>, tensor<1x64x8x8192xf32>) -> tensor<1x64x8x8192xf32>
  return %4 : tensor<1x64x8x8192xf32>
}

// -----

// The same chain with 24 KiB values (two rows of 3072 f32) and 16 KiB banks.
// The input's pong buffer starts on a bank of its own (32768) rather than
// right after ping (24576): there it would share bank 1 with the ping buffer
// the TIU reads while the next slice loads. The stored result's buffers take
// banks 7-10, which no other value's bytes touch, so its store drains beside
// the TIU without a conflict (reused values may share banks: only the TIU
// touches them).
// CHECK-LABEL: func.func @banks
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 5, 1], buffers = 2,
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 64, 8, 3072], lmem = [0, 32768], bytes = 24576, live = [-6, 1], banks = [0, 1, 2, 3],
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 3072], lmem = [65536, 65536], bytes = 24576,
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 3072], lmem = [0, 32768], bytes = 24576,
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 3072], lmem = [90112, 90112], bytes = 24576,
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 3072], lmem = [0, 32768], bytes = 24576,
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 3072], lmem = [114688, 147456], bytes = 24576, live = [5, 13], banks = [7, 8, 9, 10],
// CHECK: tpu.load %arg0 :
// CHECK: tpu.relu
// CHECK: tpu.eltwise
// CHECK: tpu.eltwise
// CHECK: tpu.relu
// CHECK: tpu.eltwise
func.func @banks(%x: tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32> {
  %0 = top.relu %x : (tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %1 = top.mul %0, %0 : (tensor<1x64x8x3072xf32>, tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %2 = top.add %1, %0 : (tensor<1x64x8x3072xf32>, tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %3 = top.relu %2 : (tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %4 = top.mul %3, %3 : (tensor<1x64x8x3072xf32>, tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  return %4 : tensor<1x64x8x3072xf32>
}

// -----

// The same chain with a 1x1 conv in the middle. The prologue loads its
// filter (held, bank 0) while the TIU runs the slice's first ops, so no
// buffer the TIU writes shares its bank: the product and the conv's result
// (reused bytes) start on bank 1 rather than right after the filter, where
// they would meet its load.
// CHECK-LABEL: func.func @held_load_bank
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 4, 1], buffers = 2,
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 3072], lmem = [16384, 49152], bytes = 24576, live = [2, 3], banks = [1, 2, 3, 4],
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 64, 1], invariant, lmem = [0, 0], bytes = 256, live = [0, 13], banks = [0],
// CHECK-SAME: #tpu.value_plan<shape = [1, 64, 8, 3072], lmem = [16384, 49152], bytes = 24576, live = [4, 5], banks = [1, 2, 3, 4],
func.func @held_load_bank(%x: tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32> {
  %w = top.weight {value = dense<0.01> : tensor<64x64x1x1xf32>} : tensor<64x64x1x1xf32>
  %n = top.none
  %0 = top.relu %x : (tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %1 = top.mul %0, %0 : (tensor<1x64x8x3072xf32>, tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %2 = top.add %1, %0 : (tensor<1x64x8x3072xf32>, tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %3 = top.conv %2, %w, %n {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = true} : (tensor<1x64x8x3072xf32>, tensor<64x64x1x1xf32>, none) -> tensor<1x64x8x3072xf32>
  %4 = top.mul %3, %3 : (tensor<1x64x8x3072xf32>, tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  return %4 : tensor<1x64x8x3072xf32>
}
