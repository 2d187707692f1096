// RUN: kiln-opt %s -top-decompose -split-input-file -verify-diagnostics -mlir-print-debuginfo | FileCheck %s

// softmax = exp(x - max) / sum(exp(x - max)) along the axis; the last op
// keeps the softmax's name. exp and sum (and log-sum) carry kiln.norm: under
// int8 they run in F16 (top-assign-precision).
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.*]] = top.reduce %arg0 {axes = array<i64: 1>, mode = 2 : i32} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32> loc(#[[LMAX:[a-z0-9]+]])
// CHECK: %[[SH:.*]] = top.sub %arg0, %[[MAX]] : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32> loc(#[[LSH:[a-z0-9]+]])
// CHECK: %[[EXP:.*]] = top.active %[[SH]] {{{.*}}kiln.norm = ["prob", "int8 rounds small exponentials to 0"], mode = 4 : i32} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc(#[[LEXP:[a-z0-9]+]])
// CHECK: %[[SUM:.*]] = top.reduce %[[EXP]] {axes = array<i64: 1>, kiln.norm = ["prob", "int8 rounds small exponentials to 0"], mode = 0 : i32} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32> loc(#[[LSUM:[a-z0-9]+]])
// CHECK: %[[DIV:.*]] = top.div %[[EXP]], %[[SUM]] : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32> loc(#[[LOUT:[a-z0-9]+]])
// CHECK-NOT: top.softmax
// CHECK: return %[[DIV]]
// CHECK-DAG: #[[LMAX]] = loc("prob_max")
// CHECK-DAG: #[[LSH]] = loc("prob_shifted")
// CHECK-DAG: #[[LEXP]] = loc("prob_exp")
// CHECK-DAG: #[[LSUM]] = loc("prob_sum")
// CHECK-DAG: #[[LOUT]] = loc("prob")
func.func @softmax(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = top.softmax %arg0 {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("prob")
  return %0 : tensor<2x3x4xf32>
}

// -----

// log-softmax = (x - max) - log(sum(exp(x - max))); a negative axis counts
// from the end.
// CHECK-LABEL: func.func @log_softmax
// CHECK: %[[MAX:.*]] = top.reduce %arg0 {axes = array<i64: 1>, mode = 2 : i32} : (tensor<5x10xf32>) -> tensor<5x1xf32>
// CHECK: %[[SH:.*]] = top.sub %arg0, %[[MAX]]
// CHECK: %[[EXP:.*]] = top.active %[[SH]] {{{.*}}mode = 4 : i32}
// CHECK: %[[SUM:.*]] = top.reduce %[[EXP]] {axes = array<i64: 1>, kiln.norm = {{.*}}, mode = 0 : i32}
// CHECK: %[[LOG:.*]] = top.active %[[SUM]] {{{.*}}kiln.norm = {{.*}}mode = 5 : i32} : (tensor<5x1xf32>) -> tensor<5x1xf32>
// CHECK: %[[OUT:.*]] = top.sub %[[SH]], %[[LOG]] : (tensor<5x10xf32>, tensor<5x1xf32>) -> tensor<5x10xf32>
// CHECK: return %[[OUT]]
func.func @log_softmax(%arg0: tensor<5x10xf32>) -> tensor<5x10xf32> {
  %0 = top.softmax %arg0 {axis = -1 : i64, log = true} : (tensor<5x10xf32>) -> tensor<5x10xf32>
  return %0 : tensor<5x10xf32>
}

// -----

func.func @bad_axis(%arg0: tensor<5x10xf32>) -> tensor<5x10xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = top.softmax %arg0 {axis = 2 : i64} : (tensor<5x10xf32>) -> tensor<5x10xf32>
  return %0 : tensor<5x10xf32>
}

// -----

// Average pooling with count_include_pad and ceil_mode whose last window
// hangs past the end (compiler fuzzer finding: the chip counted the part
// past the end). Without pads, counting pads changes nothing.
// CHECK-LABEL: func.func @ceil_avgpool_no_pads
// CHECK: top.avgpool %arg0 {ceil_mode = true, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
func.func @ceil_avgpool_no_pads(%arg0: tensor<1x1x15x2xf32>) -> tensor<1x1x8x1xf32> {
  %0 = top.avgpool %arg0 {ceil_mode = true, count_include_pad = true, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x15x2xf32>) -> tensor<1x1x8x1xf32> loc("pool")
  return %0 : tensor<1x1x8x1xf32>
}

// -----

// With pads, they become zeros in front of a pool that counts only what it
// reads; a pool whose windows stay inside the pads is left alone.
// CHECK-LABEL: func.func @ceil_avgpool_pads
// CHECK: %[[P:.*]] = top.pad %arg0 {mode = 0 : i32, pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : (tensor<1x3x15x16xf32>) -> tensor<1x3x17x18xf32> loc(#[[LPAD:[a-z0-9]+]])
// CHECK: top.avgpool %[[P]] {ceil_mode = true, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x17x18xf32>) -> tensor<1x3x8x9xf32>
// CHECK: top.avgpool %arg0 {ceil_mode = true, count_include_pad = true
// CHECK: #[[LPAD]] = loc("pool_pad")
func.func @ceil_avgpool_pads(%arg0: tensor<1x3x15x16xf32>) -> (tensor<1x3x8x9xf32>, tensor<1x3x8x8xf32>) {
  %0 = top.avgpool %arg0 {ceil_mode = true, count_include_pad = true, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x15x16xf32>) -> tensor<1x3x8x9xf32> loc("pool")
  %1 = top.avgpool %arg0 {ceil_mode = true, count_include_pad = true, kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x15x16xf32>) -> tensor<1x3x8x8xf32> loc("pool2")
  return %0, %1 : tensor<1x3x8x9xf32>, tensor<1x3x8x8xf32>
}
