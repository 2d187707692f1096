// RUN: kiln-opt %s -convert-top-to-tpu -split-input-file | FileCheck %s

// Gemm of one row becomes a 1x1 conv with the filter transposed at compile
// time (columns on lanes: the classifier joins the pool's layer group); global
// average pooling becomes a pool over H x W. The reshape to [1, 8] and back
// to [1, 8, 1, 1] folds away.
// CHECK-LABEL: func.func @head
// CHECK: %[[P:.*]] = tpu.pool2d %arg0 {{.*}}kernel_shape = array<i64: 7, 7>{{.*}}kind = 1
// CHECK: %[[C:.*]] = tpu.conv2d %[[P]], {{.*}} -> tensor<1x10x1x1xf32>
// CHECK: tpu.reshape %[[C]] {{.*}} -> tensor<1x10xf32>
// CHECK-NOT: top.matmul
func.func @head(%arg0: tensor<1x8x7x7xf32>) -> tensor<1x10xf32> {
  %0 = top.global_avgpool %arg0 : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
  %1 = top.reshape %0 {shape = array<i64: 1, 8>} : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
  %w = top.weight {value = dense<1.0> : tensor<10x8xf32>} : tensor<10x8xf32>
  %b = top.weight {value = dense<0.5> : tensor<10xf32>} : tensor<10xf32>
  %2 = top.matmul %1, %w, %b {right_transpose = true} : (tensor<1x8xf32>, tensor<10x8xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  return %2 : tensor<1x10xf32>
}

// -----

// A Linear over a sequence (40 rows): rows on lanes. The activation is the
// filter [40, 120, 1, 1], the weight the conv's input [1, 120, 1, 6625]
// (its transpose at compile time), the result [1, 40, 1, 6625] row-major as
// in DDR; the bias adds over [1, 1, 1, 6625] and the Softmax's ops share the
// layout [1, 40, 1, 6625] with no reshape between them.
// CHECK-LABEL: func.func @sequence_fc
// CHECK-DAG: %[[W:.*]] = top.weight {{.*}} : tensor<1x120x1x6625xf32>
// CHECK-DAG: %[[F:.*]] = tpu.reshape %arg0 {{.*}} -> tensor<40x120x1x1xf32>
// CHECK: %[[C:.*]] = tpu.conv2d %[[W]], %[[F]], {{.*}} -> tensor<1x40x1x6625xf32>
// CHECK: %[[A:.*]] = tpu.eltwise %[[C]], {{.*}} : (tensor<1x40x1x6625xf32>, tensor<1x1x1x6625xf32>) -> tensor<1x40x1x6625xf32>
// CHECK: %[[E:.*]] = tpu.active %[[A]] {{.*}} -> tensor<1x40x1x6625xf32>
// CHECK: tpu.reshape %[[E]] {{.*}} -> tensor<1x40x6625xf32>
func.func @sequence_fc(%arg0: tensor<1x40x120xf32>) -> tensor<1x40x6625xf32> {
  %w = top.weight {value = dense<0.25> : tensor<120x6625xf32>} : tensor<120x6625xf32>
  %none = top.none
  %0 = top.matmul %arg0, %w, %none : (tensor<1x40x120xf32>, tensor<120x6625xf32>, none) -> tensor<1x40x6625xf32>
  %b = top.weight {value = dense<0.5> : tensor<6625xf32>} : tensor<6625xf32>
  %1 = top.add %0, %b : (tensor<1x40x6625xf32>, tensor<6625xf32>) -> tensor<1x40x6625xf32>
  %2 = top.active %1 {mode = 6 : i32} : (tensor<1x40x6625xf32>) -> tensor<1x40x6625xf32>
  return %2 : tensor<1x40x6625xf32>
}

// -----

// Attention's attn x v ([8, 40, 40] x [8, 40, 15]): rows on lanes with the
// heads as conv groups; every operand keeps its row-major layout, so no
// tpu.dma transposes anything.
// CHECK-LABEL: func.func @attention_values
// CHECK-NOT: tpu.dma
// CHECK: tpu.conv2d {{.*}}group = 8 : i64{{.*}} : (tensor<1x320x1x15xf32>, tensor<320x40x1x1xf32>, none) -> tensor<1x320x1x15xf32>
// CHECK-NOT: tpu.dma
func.func @attention_values(%attn: tensor<1x8x40x40xf32>, %v: tensor<1x8x40x15xf32>) -> tensor<1x8x40x15xf32> {
  %none = top.none
  %0 = top.matmul %attn, %v, %none : (tensor<1x8x40x40xf32>, tensor<1x8x40x15xf32>, none) -> tensor<1x8x40x15xf32>
  return %0 : tensor<1x8x40x15xf32>
}

// -----

// Elementwise ops work on 4-D tensors padded with leading 1s, which keeps
// numpy broadcasting; a ReLU fused into the add stays fused.
// CHECK-LABEL: func.func @add_bcast
// CHECK: tpu.reshape %arg1 {{.*}} -> tensor<1x1x1x4xf32>
// CHECK: tpu.eltwise {{.*}} {do_relu = true, kind = 0 : i32}
func.func @add_bcast(%arg0: tensor<1x2x3x4xf32>, %arg1: tensor<4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = top.add %arg0, %arg1 {do_relu = true} : (tensor<1x2x3x4xf32>, tensor<4xf32>) -> tensor<1x2x3x4xf32>
  return %0 : tensor<1x2x3x4xf32>
}

// -----

// ceil_mode pooling becomes extra bottom/right padding.
// CHECK-LABEL: func.func @ceil
// CHECK: tpu.pool2d {{.*}}pads = array<i64: 0, 0, 1, 1>
func.func @ceil(%arg0: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  %0 = top.maxpool %arg0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// A global average pool over 160 x 160: two pools, 10 x 160 windows to a
// [16, 1] column per channel (an EU row of f32 outputs at a time), then its
// mean; a small map keeps one pool.
// CHECK-LABEL: func.func @global_avgpool
// CHECK: %[[P:.*]] = tpu.pool2d %arg0 {{.*}}kernel_shape = array<i64: 10, 160>{{.*}}strides = array<i64: 10, 160>{{.*}} -> tensor<1x96x16x1xf32>
// CHECK: tpu.pool2d %[[P]] {{.*}}kernel_shape = array<i64: 16, 1>{{.*}} -> tensor<1x96x1x1xf32>
// CHECK: tpu.pool2d %arg1 {{.*}}kernel_shape = array<i64: 7, 7>{{.*}} -> tensor<1x8x1x1xf32>
func.func @global_avgpool(%x: tensor<1x96x160x160xf32>, %y: tensor<1x8x7x7xf32>) -> (tensor<1x96x1x1xf32>, tensor<1x8x1x1xf32>) {
  %0 = top.global_avgpool %x : (tensor<1x96x160x160xf32>) -> tensor<1x96x1x1xf32>
  %1 = top.global_avgpool %y : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
  return %0, %1 : tensor<1x96x1x1xf32>, tensor<1x8x1x1xf32>
}

// -----

// A Softmax over the last axis of [1, heads, T, T]: the max and sum broadcast
// one value per row, so the sub, exp and div run on rows [1, heads*T, 1, T]
// (the layout of the reductions and of the matmul before them), and the exp
// on the sub's rows stays there.
// CHECK-LABEL: func.func @softmax_rows
// CHECK: tpu.pool2d {{.*}} : (tensor<1x16x1x16xf32>) -> tensor<1x16x1x1xf32>
// CHECK: tpu.eltwise {{.*}} : (tensor<1x16x1x16xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x1x16xf32>
// CHECK: tpu.active {{.*}} : (tensor<1x16x1x16xf32>) -> tensor<1x16x1x16xf32>
// CHECK: tpu.eltwise {{.*}} : (tensor<1x16x1x16xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x1x16xf32>
func.func @softmax_rows(%arg0: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %m = top.reduce %arg0 {mode = 2 : i32, axes = array<i64: 3>, keepdims = true} : (tensor<1x2x8x16xf32>) -> tensor<1x2x8x1xf32>
  %s = top.sub %arg0, %m : (tensor<1x2x8x16xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x16xf32>
  %e = top.active %s {mode = 4 : i32} : (tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %d = top.div %e, %m : (tensor<1x2x8x16xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x16xf32>
  return %d : tensor<1x2x8x16xf32>
}

// -----

// An operand that is neither whole rows nor one value keeps NCHW: [2, 1, 10, 3]
// minus a mean per sample [2, 1, 1, 1] (an instance norm over one channel).
// CHECK-LABEL: func.func @per_sample
// CHECK: tpu.eltwise {{.*}} : (tensor<2x1x10x3xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x10x3xf32>
func.func @per_sample(%arg0: tensor<2x1x10x3xf32>, %arg1: tensor<2x1x1x1xf32>) -> tensor<2x1x10x3xf32> {
  %0 = top.sub %arg0, %arg1 : (tensor<2x1x10x3xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x10x3xf32>
  return %0 : tensor<2x1x10x3xf32>
}
