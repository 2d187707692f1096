// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-form-views -tpu-fold-transposes | FileCheck %s
// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-form-views "-tpu-fold-transposes=keep-tensors=true" | FileCheck %s --check-prefix=KEEP
// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-form-views -tpu-fold-transposes -tpu-layer-group -tpu-address-assign | FileCheck %s --check-prefix=PLAN

// A permute of outer dimensions keeps rows of 64 elements: its reader loads
// the input through the permuted strides at no extra cost, the copy goes.
// CHECK-LABEL: func.func @outer_dims
// CHECK-NOT: tpu.dma
// CHECK: %[[V:.*]] = tpu.strided_view %arg0 {offset = 0 : i64, sizes = array<i64: 8, 4, 64>, strides = array<i64: 64, 512, 1>} : (tensor<1x4x8x64xf32>) -> tensor<1x8x4x64xf32>
// CHECK: tpu.relu %[[V]]
func.func @outer_dims(%arg0: tensor<1x4x8x64xf32>) -> tensor<1x8x4x64xf32> {
  %0 = top.transpose %arg0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x8x64xf32>) -> tensor<1x8x4x64xf32>
  %1 = top.relu %0 : (tensor<1x8x4x64xf32>) -> tensor<1x8x4x64xf32>
  return %1 : tensor<1x8x4x64xf32>
}

// -----

// Swapping H and W reads single elements, a 64-byte burst each. Two readers
// loading that way (2 x 15784 cycles more than contiguous loads) beat the
// copy (35005); three do not, and the copy stays.
// CHECK-LABEL: func.func @two_readers
// CHECK-NOT: tpu.dma
// CHECK: tpu.strided_view %arg0 {offset = 0 : i64, sizes = array<i64: 4, 64, 64>, strides = array<i64: 4096, 1, 64>}
func.func @two_readers(%arg0: tensor<1x4x64x64xf32>) -> (tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>) {
  %0 = top.transpose %arg0 {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %1 = top.relu %0 : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %2 = top.active %0 {mode = 6 : i32} : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  return %1, %2 : tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>
}

// -----

// CHECK-LABEL: func.func @three_readers
// CHECK: tpu.dma %arg0
// CHECK-NOT: tpu.strided_view
func.func @three_readers(%arg0: tensor<1x4x64x64xf32>) -> (tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>) {
  %0 = top.transpose %arg0 {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %1 = top.relu %0 : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %2 = top.active %0 {mode = 6 : i32} : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %3 = top.active %0 {mode = 4 : i32} : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  return %1, %2, %3 : tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>
}

// -----

// Computed by a TIU op that nothing else reads: its group stores it once
// through the inverse strides (2 x 15784 cycles to load it transposed twice,
// 20807 to store it so, 35005 to copy), straight into the dma's result,
// which runs nothing (in_place). Not with keep-tensors: the relu's result
// keeps bytes of its own.
// CHECK-LABEL: func.func @stored_transposed
// CHECK: %[[R:.*]] = tpu.relu
// CHECK: tpu.dma %[[R]] {in_place
// CHECK-NOT: tpu.strided_view
// KEEP-LABEL: func.func @stored_transposed
// KEEP-NOT: in_place
// KEEP: tpu.strided_view
// PLAN-LABEL: func.func @stored_transposed
// PLAN: tpu.group {{.*}}ddr_addr = {{\[}}[[ADDR:[0-9]+]]{{\]}}
// PLAN: tpu.dma {{.*}}ddr_addr = {{\[}}[[ADDR]]{{\]}}{{.*}}in_place
func.func @stored_transposed(%arg0: tensor<1x4x64x64xf32>) -> (tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>) {
  %r = top.relu %arg0 : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %0 = top.transpose %r {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %1 = top.relu %0 : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  %2 = top.active %0 {mode = 6 : i32} : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf32>
  return %1, %2 : tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>
}

// -----

// SVTR's attention: qkv [1, 40, 3*2*12] permuted to [3, 1, 2, 40, 12]; q and
// v read as rows of 12, k transposed (single elements) for q @ k^T. In f32
// the relu's group stores the permute once, in place (runs of 12 elements,
// 54 cycles more than its contiguous store), and k's transpose is a strided
// view of that. With keep-tensors the permute and k's transpose fold into
// one strided view per reader of the qkv result instead: v's heads are
// channel blocks of 40 rows, 72 elements apart.
// CHECK-LABEL: func.func @attention
// CHECK: %[[P:.*]] = tpu.dma {{.*}} {in_place
// CHECK: %[[K:.*]] = tpu.view %[[P]] {offset = 960 : i64}
// CHECK: %[[K4:.*]] = tpu.reshape %[[K]]
// CHECK: tpu.strided_view %[[K4]] {offset = 0 : i64, sizes = array<i64: 2, 12, 40>, strides = array<i64: 480, 1, 12>}
// CHECK-NOT: tpu.dma
// KEEP-LABEL: func.func @attention
// KEEP-NOT: tpu.dma
// KEEP-DAG: tpu.strided_view %{{.*}} {offset = 0 : i64, sizes = array<i64: 2, 40, 12>, strides = array<i64: 12, 72, 1>} : (tensor<1x40x3x2x12xf32>) -> tensor<80x12x1x1xf32>
// KEEP-DAG: tpu.strided_view %{{.*}} {offset = 24 : i64, sizes = array<i64: 24, 40>, strides = array<i64: 1, 72>} : (tensor<1x40x3x2x12xf32>) -> tensor<1x24x1x40xf32>
// KEEP-DAG: tpu.strided_view %{{.*}} {offset = 48 : i64, sizes = array<i64: 2, 40, 12>, strides = array<i64: 12, 72, 1>} : (tensor<1x40x3x2x12xf32>) -> tensor<1x80x1x12xf32>
func.func @attention(%arg0: tensor<1x40x72xf32>) -> tensor<1x2x40x12xf32> {
  %none = top.none
  %x = top.relu %arg0 : (tensor<1x40x72xf32>) -> tensor<1x40x72xf32>
  %r = top.reshape %x {shape = array<i64: 1, 40, 3, 2, 12>} : (tensor<1x40x72xf32>) -> tensor<1x40x3x2x12xf32>
  %p = top.transpose %r {perm = array<i64: 2, 0, 3, 1, 4>} : (tensor<1x40x3x2x12xf32>) -> tensor<3x1x2x40x12xf32>
  %q5 = top.slice %p {starts = array<i64: 0, 0, 0, 0, 0>, ends = array<i64: 1, 1, 2, 40, 12>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<3x1x2x40x12xf32>) -> tensor<1x1x2x40x12xf32>
  %k5 = top.slice %p {starts = array<i64: 1, 0, 0, 0, 0>, ends = array<i64: 2, 1, 2, 40, 12>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<3x1x2x40x12xf32>) -> tensor<1x1x2x40x12xf32>
  %v5 = top.slice %p {starts = array<i64: 2, 0, 0, 0, 0>, ends = array<i64: 3, 1, 2, 40, 12>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<3x1x2x40x12xf32>) -> tensor<1x1x2x40x12xf32>
  %q = top.reshape %q5 {shape = array<i64: 1, 2, 40, 12>} : (tensor<1x1x2x40x12xf32>) -> tensor<1x2x40x12xf32>
  %k = top.reshape %k5 {shape = array<i64: 1, 2, 40, 12>} : (tensor<1x1x2x40x12xf32>) -> tensor<1x2x40x12xf32>
  %v = top.reshape %v5 {shape = array<i64: 1, 2, 40, 12>} : (tensor<1x1x2x40x12xf32>) -> tensor<1x2x40x12xf32>
  %kt = top.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x40x12xf32>) -> tensor<1x2x12x40xf32>
  %s = top.matmul %q, %kt, %none : (tensor<1x2x40x12xf32>, tensor<1x2x12x40xf32>, none) -> tensor<1x2x40x40xf32>
  %o = top.matmul %s, %v, %none : (tensor<1x2x40x40xf32>, tensor<1x2x40x12xf32>, none) -> tensor<1x2x40x12xf32>
  return %o : tensor<1x2x40x12xf32>
}
