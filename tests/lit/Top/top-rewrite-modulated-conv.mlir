// RUN: kiln-opt %s -split-input-file -top-rewrite-modulated-conv="mode=rewrite" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -top-rewrite-modulated-conv="mode=keep" | FileCheck %s --check-prefix=KEEP
// RUN: kiln-opt %s -split-input-file -top-rewrite-modulated-conv="mode=rewrite" -top-fold-constants | FileCheck %s --check-prefix=FOLD
// RUN: kiln-opt %s -split-input-file -top-rewrite-modulated-conv="mode=auto precision=f16" | FileCheck %s --check-prefix=AUTO

// StyleGAN2's fused modulated conv (batch 1): w = W * s, d = rsqrt(sum(w^2)
// + eps), conv(x, reshape(w * d)).
// CHECK: kiln.rewrite_report = ["top.conv: modulated conv rewritten to a static filter (saves about {{-?[0-9]+}} cycles)"]
// CHECK-LABEL: func.func @fused
// CHECK: %[[W:.*]] = top.weight {{.*}} : tensor<1x8x4x3x3xf32>
// The demodulation's sum of squares: (s * s) x Q, Q = sum over kh, kw of W^2.
// CHECK: %[[W2:.*]] = top.mul %[[W]], %[[W]]
// CHECK: %[[Q:.*]] = top.reduce %[[W2]] {axes = array<i64: 0, 3, 4>, keepdims = false, mode = 0 : i32} {{.*}} -> tensor<8x4xf32>
// CHECK: %[[SQ:.*]] = top.mul %arg1, %arg1
// CHECK: %[[SUM:.*]] = top.matmul %[[SQ]], %[[Q]], %{{.*}} {right_transpose = true} : (tensor<1x4xf32>, tensor<8x4xf32>, none) -> tensor<1x8xf32>
// CHECK: %[[EPS:.*]] = top.add %[[SUM]]
// CHECK: %[[D:.*]] = top.div %{{.*}}, %{{.*}}
// The conv: input scaled by s, the static filter, output scaled by d; the
// scales' reshapes come first, so the muls and the conv are adjacent.
// CHECK: %[[SIN:.*]] = top.reshape %arg1 {shape = array<i64: 1, 4, 1, 1>}
// CHECK: %[[DOUT:.*]] = top.reshape %[[D]] {shape = array<i64: 1, 8, 1, 1>}
// CHECK: %[[F:.*]] = top.reshape %[[W]] {shape = array<i64: 8, 4, 3, 3>} : (tensor<1x8x4x3x3xf32>) -> tensor<8x4x3x3xf32>
// CHECK-NEXT: %[[X:.*]] = top.mul %arg0, %[[SIN]]
// CHECK-NEXT: %[[Y:.*]] = top.conv %[[X]], %[[F]], %{{.*}} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x6x6xf32>
// CHECK-NEXT: %[[OUT:.*]] = top.mul %[[Y]], %[[DOUT]]
// CHECK: return %[[OUT]]
// The per-sample filter is gone.
// CHECK-NOT: tensor<1x8x4x3x3xf32>) -> tensor<1x8x4x3x3xf32>
// KEEP-LABEL: func.func @fused
// KEEP: top.reduce
// KEEP: top.conv %arg0
// FOLD-LABEL: func.func @fused
// FOLD-DAG: top.weight {value = dense_resource<{{.*}}> : tensor<8x4xf32>}
// FOLD-DAG: %[[F:.*]] = top.weight {value = dense_resource<{{.*}}> : tensor<8x4x3x3xf32>}
// FOLD: top.conv %{{.*}}, %[[F]]
func.func @fused(%x: tensor<1x4x6x6xf32>, %style: tensor<1x4xf32>) -> tensor<1x8x6x6xf32> {
  %w = top.weight {value = dense<0.5> : tensor<1x8x4x3x3xf32>} : tensor<1x8x4x3x3xf32>
  %eps = top.weight {value = dense<1.0e-8> : tensor<f32>} : tensor<f32>
  %one = top.weight {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %none = top.none
  %s = top.reshape %style {shape = array<i64: 1, 1, -1, 1, 1>} : (tensor<1x4xf32>) -> tensor<1x1x4x1x1xf32>
  %m = top.mul %w, %s : (tensor<1x8x4x3x3xf32>, tensor<1x1x4x1x1xf32>) -> tensor<1x8x4x3x3xf32>
  %sq = top.mul %m, %m : (tensor<1x8x4x3x3xf32>, tensor<1x8x4x3x3xf32>) -> tensor<1x8x4x3x3xf32>
  %sum = top.reduce %sq {axes = array<i64: 2, 3, 4>, keepdims = false, mode = 0 : i32} : (tensor<1x8x4x3x3xf32>) -> tensor<1x8xf32>
  %e = top.add %sum, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %r = top.active %e {mode = 6 : i32} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %dc = top.div %one, %r : (tensor<f32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %d = top.reshape %dc {shape = array<i64: 1, -1, 1, 1, 1>} : (tensor<1x8xf32>) -> tensor<1x8x1x1x1xf32>
  %wd = top.mul %m, %d : (tensor<1x8x4x3x3xf32>, tensor<1x8x1x1x1xf32>) -> tensor<1x8x4x3x3xf32>
  %f = top.reshape %wd {shape = array<i64: -1, 4, 3, 3>} : (tensor<1x8x4x3x3xf32>) -> tensor<8x4x3x3xf32>
  %y = top.conv %x, %f, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x6x6xf32>
  return %y : tensor<1x8x6x6xf32>
}

// -----

// The up-sampling layer: ConvTranspose with the filter through a 4-D
// Transpose {1, 0, 2, 3} ([O, I] -> ONNX's [I, O]): the static filter goes
// through the same transpose.
// CHECK-LABEL: func.func @transposed
// CHECK: %[[W:.*]] = top.weight {{.*}} : tensor<1x8x4x3x3xf32>
// CHECK: %[[R:.*]] = top.reshape %[[W]] {{.*}} -> tensor<8x4x3x3xf32>
// CHECK: %[[T:.*]] = top.transpose %[[R]] {perm = array<i64: 1, 0, 2, 3>} : (tensor<8x4x3x3xf32>) -> tensor<4x8x3x3xf32>
// CHECK: %[[X:.*]] = top.mul %arg0, %{{.*}} : (tensor<1x4x5x5xf32>, tensor<1x4x1x1xf32>)
// CHECK: %[[Y:.*]] = top.deconv %[[X]], %[[T]], %{{.*}} -> tensor<1x8x11x11xf32>
// CHECK: top.mul %[[Y]], %{{.*}} : (tensor<1x8x11x11xf32>, tensor<1x8x1x1xf32>)
func.func @transposed(%x: tensor<1x4x5x5xf32>, %style: tensor<1x4xf32>, %dc: tensor<1x8xf32>) -> tensor<1x8x11x11xf32> {
  %w = top.weight {value = dense<0.5> : tensor<1x8x4x3x3xf32>} : tensor<1x8x4x3x3xf32>
  %none = top.none
  %s = top.reshape %style {shape = array<i64: 1, 1, -1, 1, 1>} : (tensor<1x4xf32>) -> tensor<1x1x4x1x1xf32>
  %m = top.mul %w, %s : (tensor<1x8x4x3x3xf32>, tensor<1x1x4x1x1xf32>) -> tensor<1x8x4x3x3xf32>
  %d = top.reshape %dc {shape = array<i64: 1, -1, 1, 1, 1>} : (tensor<1x8xf32>) -> tensor<1x8x1x1x1xf32>
  %wd = top.mul %m, %d : (tensor<1x8x4x3x3xf32>, tensor<1x8x1x1x1xf32>) -> tensor<1x8x4x3x3xf32>
  %f = top.reshape %wd {shape = array<i64: -1, 4, 3, 3>} : (tensor<1x8x4x3x3xf32>) -> tensor<8x4x3x3xf32>
  %t = top.transpose %f {perm = array<i64: 1, 0, 2, 3>} : (tensor<8x4x3x3xf32>) -> tensor<4x8x3x3xf32>
  %y = top.deconv %x, %t, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x8x3x3xf32>, none) -> tensor<1x8x11x11xf32>
  return %y : tensor<1x8x11x11xf32>
}

// -----

// conv2d_resample's grouped form: reshape [1, O, I, k, k], 5-D transpose
// {0, 2, 1, 3, 4}, reshape [I, O, k, k].
// CHECK-LABEL: func.func @grouped_transpose
// CHECK: top.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3, 4>}
// CHECK: %[[X:.*]] = top.mul %arg0
// CHECK: %[[Y:.*]] = top.deconv %[[X]]
// CHECK: top.mul %[[Y]]
func.func @grouped_transpose(%x: tensor<1x4x5x5xf32>, %style: tensor<1x4xf32>, %dc: tensor<1x8xf32>) -> tensor<1x8x11x11xf32> {
  %w = top.weight {value = dense<0.5> : tensor<1x8x4x3x3xf32>} : tensor<1x8x4x3x3xf32>
  %none = top.none
  %s = top.reshape %style {shape = array<i64: 1, 1, -1, 1, 1>} : (tensor<1x4xf32>) -> tensor<1x1x4x1x1xf32>
  %m = top.mul %w, %s : (tensor<1x8x4x3x3xf32>, tensor<1x1x4x1x1xf32>) -> tensor<1x8x4x3x3xf32>
  %d = top.reshape %dc {shape = array<i64: 1, -1, 1, 1, 1>} : (tensor<1x8xf32>) -> tensor<1x8x1x1x1xf32>
  %wd = top.mul %m, %d : (tensor<1x8x4x3x3xf32>, tensor<1x8x1x1x1xf32>) -> tensor<1x8x4x3x3xf32>
  %f = top.reshape %wd {shape = array<i64: 1, 8, 4, 3, 3>} : (tensor<1x8x4x3x3xf32>) -> tensor<1x8x4x3x3xf32>
  %t = top.transpose %f {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x8x4x3x3xf32>) -> tensor<1x4x8x3x3xf32>
  %g = top.reshape %t {shape = array<i64: 4, 8, 3, 3>} : (tensor<1x4x8x3x3xf32>) -> tensor<4x8x3x3xf32>
  %y = top.deconv %x, %g, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x8x3x3xf32>, none) -> tensor<1x8x11x11xf32>
  return %y : tensor<1x8x11x11xf32>
}

// -----

// Not a per-channel scale: a factor varying along kh (and one varying per
// element) leave the conv and its computed filter alone.
// CHECK-LABEL: func.func @not_per_channel
// CHECK: %[[M:.*]] = top.mul %{{.*}}, %arg1
// CHECK: %[[F:.*]] = top.reshape %[[M]]
// CHECK: top.conv %arg0, %[[F]]
// CHECK-LABEL: func.func @elementwise_factor
// CHECK: %[[M:.*]] = top.mul %{{.*}}, %arg1
// CHECK: top.conv %arg0, %[[M]]
func.func @not_per_channel(%x: tensor<1x4x6x6xf32>, %k: tensor<1x1x1x3x1xf32>) -> tensor<1x8x6x6xf32> {
  %w = top.weight {value = dense<0.5> : tensor<1x8x4x3x3xf32>} : tensor<1x8x4x3x3xf32>
  %none = top.none
  %m = top.mul %w, %k : (tensor<1x8x4x3x3xf32>, tensor<1x1x1x3x1xf32>) -> tensor<1x8x4x3x3xf32>
  %f = top.reshape %m {shape = array<i64: -1, 4, 3, 3>} : (tensor<1x8x4x3x3xf32>) -> tensor<8x4x3x3xf32>
  %y = top.conv %x, %f, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x6x6xf32>
  return %y : tensor<1x8x6x6xf32>
}
func.func @elementwise_factor(%x: tensor<1x4x6x6xf32>, %k: tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %w = top.weight {value = dense<0.5> : tensor<8x4x3x3xf32>} : tensor<8x4x3x3xf32>
  %none = top.none
  %m = top.mul %w, %k : (tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>) -> tensor<8x4x3x3xf32>
  %y = top.conv %x, %m, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x6x6xf32>
  return %y : tensor<1x8x6x6xf32>
}

// -----

// A conv with a bias is left alone (the bias is added after the filter's
// output-channel scale).
// CHECK-LABEL: func.func @with_bias
// CHECK: top.conv %arg0
func.func @with_bias(%x: tensor<1x4x6x6xf32>, %style: tensor<1x4xf32>) -> tensor<1x8x6x6xf32> {
  %w = top.weight {value = dense<0.5> : tensor<8x4x3x3xf32>} : tensor<8x4x3x3xf32>
  %b = top.weight {value = dense<0.5> : tensor<8xf32>} : tensor<8xf32>
  %s = top.reshape %style {shape = array<i64: 1, 4, 1, 1>} : (tensor<1x4xf32>) -> tensor<1x4x1x1xf32>
  %m = top.mul %w, %s : (tensor<8x4x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<8x4x3x3xf32>
  %y = top.conv %x, %m, %b {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  return %y : tensor<1x8x6x6xf32>
}

// -----

// auto weighs the passes over the activations against forming the filter,
// as the conv's layer group runs: a 512 x 512 x 3 x 3 filter on a 32 x 32
// map, where the conv's MACs outlast its weight's load, is rewritten (one
// pass over the input is cheaper than one over the filter); on a 4 x 4 map
// the weight's load bounds the group and the TIU forms the filter while it
// waits: kept, as is a 3 x 64 x 1 x 1 filter (StyleGAN2's toRGB) on a
// 256 x 256 map.
// AUTO: kiln.rewrite_report = ["/big: modulated conv rewritten to a static filter (saves about {{[0-9]+}} cycles)", "/small: modulated conv kept (forming its filter is about {{[0-9]+}} cycles cheaper)", "/rgb: modulated conv kept (forming its filter is about {{[0-9]+}} cycles cheaper)"]
// AUTO-LABEL: func.func @auto
// AUTO: top.conv %{{.*}}, %{{.*}}, %{{.*}} {{.*}} : (tensor<1x512x32x32xf32>, tensor<512x512x3x3xf32>, none)
// AUTO: %[[SMALL:.*]] = top.mul %{{.*}}, %{{.*}} : (tensor<512x512x3x3xf32>, tensor<1x512x1x1xf32>)
// AUTO: top.conv %arg4, %[[SMALL]]
// AUTO: %[[RGB:.*]] = top.mul %{{.*}}, %arg3 : (tensor<3x64x1x1xf32>, tensor<1x64x1x1xf32>)
// AUTO: top.conv %arg2, %[[RGB]]
func.func @auto(%x: tensor<1x512x32x32xf32>, %style: tensor<1x512xf32>, %big: tensor<1x64x256x256xf32>, %rgbStyle: tensor<1x64x1x1xf32>, %x4: tensor<1x512x4x4xf32>) -> (tensor<1x512x32x32xf32>, tensor<1x3x256x256xf32>, tensor<1x512x4x4xf32>) {
  %w = top.weight {value = dense<0.5> : tensor<512x512x3x3xf32>} : tensor<512x512x3x3xf32>
  %w2 = top.weight {value = dense<0.5> : tensor<3x64x1x1xf32>} : tensor<3x64x1x1xf32>
  %w3 = top.weight {value = dense<0.25> : tensor<512x512x3x3xf32>} : tensor<512x512x3x3xf32>
  %none = top.none
  %s = top.reshape %style {shape = array<i64: 1, 512, 1, 1>} : (tensor<1x512xf32>) -> tensor<1x512x1x1xf32>
  %m = top.mul %w, %s : (tensor<512x512x3x3xf32>, tensor<1x512x1x1xf32>) -> tensor<512x512x3x3xf32>
  %y = top.conv %x, %m, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x512x32x32xf32>, tensor<512x512x3x3xf32>, none) -> tensor<1x512x32x32xf32> loc("/big")
  %m3 = top.mul %w3, %s : (tensor<512x512x3x3xf32>, tensor<1x512x1x1xf32>) -> tensor<512x512x3x3xf32>
  %y3 = top.conv %x4, %m3, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x512x4x4xf32>, tensor<512x512x3x3xf32>, none) -> tensor<1x512x4x4xf32> loc("/small")
  %m2 = top.mul %w2, %rgbStyle : (tensor<3x64x1x1xf32>, tensor<1x64x1x1xf32>) -> tensor<3x64x1x1xf32>
  %rgb = top.conv %big, %m2, %none {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x64x256x256xf32>, tensor<3x64x1x1xf32>, none) -> tensor<1x3x256x256xf32> loc("/rgb")
  return %y, %rgb, %y3 : tensor<1x512x32x32xf32>, tensor<1x3x256x256xf32>, tensor<1x512x4x4xf32>
}
