// RUN: kiln-opt %s -top-decompose -split-input-file -verify-diagnostics -mlir-print-debuginfo | FileCheck %s

// softmax = exp(x - max) / sum(exp(x - max)) along the axis; the last op
// keeps the softmax's name.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.*]] = top.reduce %arg0 {axes = array<i64: 1>, mode = 2 : i32} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32> loc(#[[LMAX:[a-z0-9]+]])
// CHECK: %[[SH:.*]] = top.sub %arg0, %[[MAX]] : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32> loc(#[[LSH:[a-z0-9]+]])
// CHECK: %[[EXP:.*]] = top.active %[[SH]] {{{.*}}mode = 4 : i32} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc(#[[LEXP:[a-z0-9]+]])
// CHECK: %[[SUM:.*]] = top.reduce %[[EXP]] {axes = array<i64: 1>, mode = 0 : i32} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32> loc(#[[LSUM:[a-z0-9]+]])
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
// CHECK: %[[SUM:.*]] = top.reduce %[[EXP]] {axes = array<i64: 1>, mode = 0 : i32}
// CHECK: %[[LOG:.*]] = top.active %[[SUM]] {{{.*}}mode = 5 : i32} : (tensor<5x1xf32>) -> tensor<5x1xf32>
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
