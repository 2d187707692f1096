// RUN: kiln-opt %s -split-input-file -convert-top-to-tpu -tpu-layer-group | FileCheck %s

// A conv whose filter is computed by the graph (a modulated filter, as in
// StyleGAN2): the filter is never sliced. The group that runs the conv
// loads it whole, once (held), and keeps it for every H slice, while the
// activation is loaded slice by slice.
// CHECK-LABEL: func.func @modulated
// CHECK: %[[F:.*]] = tpu.group {plan = #tpu.group_plan<slices = [1,
// CHECK: tpu.eltwise
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, {{[2-9]|[1-9][0-9]+}}, 1], buffers = {{[12]}},
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 16, 224, 224], lmem
// CHECK-SAME: #tpu.value_plan<shape = [1, 16, 16, 9], invariant,
// CHECK-DAG: tpu.load %arg0 :
// CHECK-DAG: tpu.load %[[F]] :
// CHECK: tpu.conv2d
func.func @modulated(%x: tensor<1x16x224x224xf32>, %style: tensor<1x16x1x1xf32>) -> tensor<1x16x224x224xf32> {
  %w = top.weight {value = dense<0.1> : tensor<16x16x3x3xf32>} : tensor<16x16x3x3xf32>
  %s = top.reshape %style {shape = array<i64: 1, 16, 1, 1>} : (tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32>
  %f = top.mul %w, %s : (tensor<16x16x3x3xf32>, tensor<1x16x1x1xf32>) -> tensor<16x16x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %f, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x16x224x224xf32>, tensor<16x16x3x3xf32>, none) -> tensor<1x16x224x224xf32>
  return %0 : tensor<1x16x224x224xf32>
}

// -----

// StyleGAN2's modulated conv kept dynamic: the filter W * s * d, with
// d = 1 / sqrt(sum((W * s)^2) + eps) per output channel, is formed in LMEM in
// the conv's own layer group. Its ops run on [1, O, I, kh*kw], the layout the
// conv reads its filter in, and a tpu.reshape inside the group views the
// result as the conv's [O, I, kh, kw] filter: no filter goes through DDR.
// CHECK-LABEL: func.func @formed_in_lmem
// The plan's last values: the formed filter (invariant: formed by the first
// slice and kept), the input and the conv's result (sliced along H).
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, 1, {{[0-9]+}}, 1],
// CHECK-SAME: #tpu.value_plan<shape = [1, 8, 4, 9], invariant, {{[^>]*}}>, #tpu.value_plan<shape = [1, 4, 32, 32], lmem = {{[^>]*}}>, #tpu.value_plan<shape = [1, 8, 32, 32], lmem = {{[^>]*}}>]>}
// CHECK: tpu.eltwise {{.*}} -> tensor<1x8x4x9xf32>
// CHECK: tpu.pool2d {{.*}}kernel_shape = array<i64: 4, 9>
// CHECK: tpu.active
// CHECK: %[[F:.*]] = tpu.eltwise {{.*}} -> tensor<1x8x4x9xf32>
// CHECK: %[[V:.*]] = tpu.reshape %[[F]] : (tensor<1x8x4x9xf32>) -> tensor<8x4x3x3xf32>
// CHECK: tpu.conv2d %{{.*}}, %[[V]]
// CHECK: tpu.yield
// CHECK-NOT: tpu.group
func.func @formed_in_lmem(%x: tensor<1x4x32x32xf32>, %s: tensor<1x1x4x1x1xf32>) -> tensor<1x8x32x32xf32> {
  %w = top.weight {value = dense<0.1> : tensor<1x8x4x3x3xf32>} : tensor<1x8x4x3x3xf32>
  %eps = top.weight {value = dense<1.0e-8> : tensor<f32>} : tensor<f32>
  %one = top.weight {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %ws = top.mul %w, %s : (tensor<1x8x4x3x3xf32>, tensor<1x1x4x1x1xf32>) -> tensor<1x8x4x3x3xf32>
  %sq = top.mul %ws, %ws : (tensor<1x8x4x3x3xf32>, tensor<1x8x4x3x3xf32>) -> tensor<1x8x4x3x3xf32>
  %sum = top.reduce %sq {axes = array<i64: 2, 3, 4>, keepdims = true, mode = 0 : i32} : (tensor<1x8x4x3x3xf32>) -> tensor<1x8x1x1x1xf32>
  %a = top.add %sum, %eps : (tensor<1x8x1x1x1xf32>, tensor<f32>) -> tensor<1x8x1x1x1xf32>
  %r = top.active %a {mode = 6 : i32} : (tensor<1x8x1x1x1xf32>) -> tensor<1x8x1x1x1xf32>
  %d = top.div %one, %r : (tensor<f32>, tensor<1x8x1x1x1xf32>) -> tensor<1x8x1x1x1xf32>
  %f = top.mul %ws, %d : (tensor<1x8x4x3x3xf32>, tensor<1x8x1x1x1xf32>) -> tensor<1x8x4x3x3xf32>
  %filt = top.reshape %f {shape = array<i64: 8, 4, 3, 3>} : (tensor<1x8x4x3x3xf32>) -> tensor<8x4x3x3xf32>
  %n = top.none
  %0 = top.conv %x, %filt, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x4x32x32xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x32x32xf32>
  return %0 : tensor<1x8x32x32xf32>
}

// -----

// A wide modulated ConvTranspose (StyleGAN2's up-sampling conv at 512
// channels): the static weight and W * s take 144 KiB of every lane each in
// F32, too much to form whole. The group slices the deconv's output channels
// in lane groups, as a conv's, and forms each slice's filter rows in LMEM
// beside the deconv that reads them: still no filter through DDR.
// CHECK-LABEL: func.func @wide_deconv_formed_in_lmem
// The static weight and the filter formed from it are sliced with the
// output channels (not invariant); the style vector is held.
// CHECK: tpu.group {plan = #tpu.group_plan<slices = [1, {{[2-8]}}, 1, 1], buffers = 2,
// CHECK-SAME: values = [#tpu.value_plan<shape = [1, 512, 512, 9], lmem = {{[^>]*}}>, #tpu.value_plan<shape = [1, 1, 512, 1], invariant, {{[^>]*}}>, #tpu.value_plan<shape = [1, 512, 512, 9], lmem =
// CHECK: %[[F:.*]] = tpu.eltwise {{.*}} -> tensor<1x512x512x9xf32>
// CHECK: %[[V:.*]] = tpu.reshape %[[F]] : (tensor<1x512x512x9xf32>) -> tensor<512x512x3x3xf32>
// CHECK: tpu.deconv2d %{{.*}}, %[[V]]
// CHECK: tpu.yield
// CHECK-NOT: tpu.group
func.func @wide_deconv_formed_in_lmem(%x: tensor<1x512x4x4xf32>, %s: tensor<1x1x512x1x1xf32>) -> tensor<1x512x9x9xf32> {
  %w = top.weight {value = dense<0.01> : tensor<1x512x512x3x3xf32>} : tensor<1x512x512x3x3xf32>
  %ws = top.mul %w, %s : (tensor<1x512x512x3x3xf32>, tensor<1x1x512x1x1xf32>) -> tensor<1x512x512x3x3xf32>
  %filt = top.reshape %ws {shape = array<i64: 512, 512, 3, 3>} : (tensor<1x512x512x3x3xf32>) -> tensor<512x512x3x3xf32>
  %n = top.none
  %0 = top.deconv %x, %filt, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, filter_reordered = true} : (tensor<1x512x4x4xf32>, tensor<512x512x3x3xf32>, none) -> tensor<1x512x9x9xf32>
  return %0 : tensor<1x512x9x9xf32>
}
