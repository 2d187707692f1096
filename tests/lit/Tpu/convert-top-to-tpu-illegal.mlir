// RUN: not kiln-opt %s -convert-top-to-tpu 2>&1 | FileCheck %s

// A Top op no lowering takes (batch norms are fused into convs before
// lowering) fails legalization: the error names the op, at its ONNX node.
// CHECK: error: loc("bn0"): failed to legalize operation 'top.batchnorm'
func.func @unfused_batchnorm(%arg0: tensor<1x8x4x4xf32>, %arg1: tensor<8xf32>) -> tensor<1x8x4x4xf32> {
  %0 = top.batchnorm %arg0, %arg1, %arg1, %arg1, %arg1 : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32> loc("bn0")
  return %0 : tensor<1x8x4x4xf32>
}
