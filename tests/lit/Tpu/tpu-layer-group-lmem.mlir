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
// CHECK: tpu.group {buffers = 2 : i64, h_slices = 8 : i64, n_slices = 1 : i64}
// CHECK: %[[X:.*]] = tpu.load %arg0 {held = false, tpu.lmem = #tpu.lmem<0, 32768>}
// CHECK: %[[R:.*]] = tpu.relu %[[X]] {tpu.lmem = #tpu.lmem<65536, 65536>}
// CHECK: %[[P:.*]] = tpu.eltwise %[[R]], %[[R]] {{.*}}tpu.lmem = #tpu.lmem<0, 32768>}
// CHECK: %[[S:.*]] = tpu.eltwise %[[P]], %[[R]] {{.*}}tpu.lmem = #tpu.lmem<98304, 98304>}
// CHECK: %[[R2:.*]] = tpu.relu %[[S]] {tpu.lmem = #tpu.lmem<0, 32768>}
// CHECK: %[[Y:.*]] = tpu.eltwise %[[R2]], %[[R2]] {{.*}}tpu.lmem = #tpu.lmem<131072, 163840>}
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
// CHECK: tpu.group {buffers = 2 : i64, h_slices = 5 : i64, n_slices = 1 : i64}
// CHECK: tpu.load %arg0 {held = false, tpu.lmem = #tpu.lmem<0, 32768>}
// CHECK: tpu.relu %{{.*}} {tpu.lmem = #tpu.lmem<65536, 65536>}
// CHECK: tpu.eltwise {{.*}}tpu.lmem = #tpu.lmem<0, 32768>}
// CHECK: tpu.eltwise {{.*}}tpu.lmem = #tpu.lmem<90112, 90112>}
// CHECK: tpu.relu %{{.*}} {tpu.lmem = #tpu.lmem<0, 32768>}
// CHECK: tpu.eltwise {{.*}}tpu.lmem = #tpu.lmem<114688, 147456>}
func.func @banks(%x: tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32> {
  %0 = top.relu %x : (tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %1 = top.mul %0, %0 : (tensor<1x64x8x3072xf32>, tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %2 = top.add %1, %0 : (tensor<1x64x8x3072xf32>, tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %3 = top.relu %2 : (tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  %4 = top.mul %3, %3 : (tensor<1x64x8x3072xf32>, tensor<1x64x8x3072xf32>) -> tensor<1x64x8x3072xf32>
  return %4 : tensor<1x64x8x3072xf32>
}
