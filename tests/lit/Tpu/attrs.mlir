// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// Typed Tpu attributes print in the form they parse.

// CHECK-LABEL: func.func @requant
// CHECK: tpu.cast %arg0 {quant = #tpu.requant<m0 = 1073741824, m1 = 0, rshift = 31>}
// CHECK: tpu.eltwise %arg0, %arg0 {do_relu = false, kind = 0 : i32, quant = #tpu.requant<m0 = 1518500250, m1 = -7, rshift = 0>}
func.func @requant(%arg0: tensor<4xi8>) {
  %0 = tpu.cast %arg0 {quant = #tpu.requant<m0 = 1073741824, m1 = 0, rshift = 31>} : (tensor<4xi8>) -> tensor<4xi8>
  %1 = tpu.eltwise %arg0, %arg0 {kind = 0 : i32, do_relu = false, quant = #tpu.requant<rshift = 0, m1 = -7, m0 = 1518500250>} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return
}

// CHECK-LABEL: func.func @dma
// CHECK: tpu.dma %arg0 {program = [#tpu.copy<src = fill, dst_offset = 0, shape = [1, 1, 1, 20], dst_strides = [0, 0, 0, 1], bits = 0x3FC00000>,
// CHECK-SAME: #tpu.copy<src = 0, src_offset = 0, dst_offset = 6, shape = [1, 1, 2, 3], src_strides = [0, 0, 3, 1], dst_strides = [0, 0, 5, 1]>,
// CHECK-SAME: #tpu.copy<src = self, src_offset = 5, dst_offset = 0, shape = [1, 1, 1, 5], src_strides = [0, 0, 0, 1], dst_strides = [0, 0, 0, 1]>]}
func.func @dma(%arg0: tensor<2x3xf32>) -> tensor<4x5xf32> {
  %0 = tpu.dma %arg0 {program = [
    #tpu.copy<src = fill, dst_offset = 0, shape = [1, 1, 1, 20], dst_strides = [0, 0, 0, 1], bits = 1069547520>,
    #tpu.copy<src = 0, src_offset = 0, dst_offset = 6, shape = [1, 1, 2, 3], src_strides = [0, 0, 3, 1], dst_strides = [0, 0, 5, 1]>,
    #tpu.copy<src = self, src_offset = 5, dst_offset = 0, shape = [1, 1, 1, 5], src_strides = [0, 0, 0, 1], dst_strides = [0, 0, 0, 1]>]} : (tensor<2x3xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// A layer group's plan: two H slices, double-buffered. The first relu's
// ping and pong share bytes (each is dead before the other's slice writes
// it: live at positions 1-2 and 5-6 of the 8-position cycle).
// CHECK-LABEL: func.func @group_plan
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 2, 1], buffers = 2, order = [0, 1], values = [
// CHECK-SAME: #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [0, 32], bytes = 32, live = [0, 1], banks = [0], hold = [(0+1, 0+8, 0+2, 0+4), (0+1, 0+8, 2+2, 0+4)], store = []>,
// CHECK-SAME: #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 32, live = [1, 2], banks = [0], hold = [(0+1, 0+8, 0+2, 0+4), (0+1, 0+8, 2+2, 0+4)], store = []>,
// CHECK-SAME: #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [96, 128], bytes = 32, live = [2, 7], banks = [0], hold = [(0+1, 0+8, 0+2, 0+4), (0+1, 0+8, 2+2, 0+4)], store = [(0+1, 0+8, 0+2, 0+4), (0+1, 0+8, 2+2, 0+4)]>]>}
// A held value and its one buffer.
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [#tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)], store = []>,
func.func @group_plan(%arg0: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %0 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 2, 1], buffers = 2, order = [0, 1], values = [
    #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [0, 32], bytes = 32, live = [0, 1], banks = [0],
                    hold = [(0+1, 0+8, 0+2, 0+4), (0+1, 0+8, 2+2, 0+4)], store = []>,
    #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 32, live = [1, 2], banks = [0],
                    hold = [(0+1, 0+8, 0+2, 0+4), (0+1, 0+8, 2+2, 0+4)], store = []>,
    #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [96, 128], bytes = 32, live = [2, 7], banks = [0],
                    hold = [(0+1, 0+8, 0+2, 0+4), (0+1, 0+8, 2+2, 0+4)],
                    store = [(0+1, 0+8, 0+2, 0+4), (0+1, 0+8, 2+2, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %2 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.relu %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %4 = tpu.relu %3 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %5 = tpu.store %4 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %5 : tensor<1x8x4x4xf32>
  }
  %1 = tpu.group {plan = #tpu.group_plan<slices = [1, 1, 1, 1], buffers = 1, order = [0], values = [
    #tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0], bytes = 64, live = [0, 2], banks = [0],
                    hold = [(0+1, 0+8, 0+4, 0+4)], store = []>,
    #tpu.value_plan<shape = [1, 8, 4, 4], lmem = [64, 64], bytes = 64, live = [1, 2], banks = [0],
                    hold = [(0+1, 0+8, 0+4, 0+4)], store = [(0+1, 0+8, 0+4, 0+4)]>]>} : tensor<1x8x4x4xf32> {
    %2 = tpu.load %arg0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %3 = tpu.relu %2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %4 = tpu.store %3 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    tpu.yield %4 : tensor<1x8x4x4xf32>
  }
  return %0, %1 : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}
