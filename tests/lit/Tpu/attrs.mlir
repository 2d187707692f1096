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
