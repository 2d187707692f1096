// RUN: kiln-opt %s -split-input-file -tpu-apply-precision | FileCheck %s

// F16: the filter becomes an f16 weight, the bias stays f32 (f32
// accumulation), casts meet the f32 net boundary on both sides.
// CHECK-LABEL: func.func @f16_conv
// CHECK: %[[IN:.*]] = tpu.cast %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf16>
// CHECK: %[[W:.*]] = top.weight {{.*}} : tensor<2x2x1x1xf16>
// CHECK: %[[C:.*]] = tpu.conv2d %[[IN]], %[[W]], %{{.*}} : (tensor<1x2x4x4xf16>, tensor<2x2x1x1xf16>, tensor<2xf32>) -> tensor<1x2x4x4xf16>
// CHECK: %[[OUT:.*]] = tpu.cast %[[C]] {{.*}}-> tensor<1x2x4x4xf32>
// CHECK: return %[[OUT]]
func.func @f16_conv(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = top.weight {value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>} : tensor<2x2x1x1xf32>
  %b = top.weight {value = dense<[0.5, -0.5]> : tensor<2xf32>} : tensor<2xf32>
  %c = tpu.conv2d %arg0, %w, %b {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false, kiln.dtype = #top.dtype<f16>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("conv")
  return %c : tensor<1x2x4x4xf32>
}

// -----

// INT8: the input is quantized with its calibrated threshold (1.27 / 127),
// the filter per output channel (max |w| / 127: 2/127 and 4/127), the bias
// joins the multiplier and shift in the requantization table, and the result
// takes the op's own range (2.54 / 127). A division has no INT8 arithmetic:
// it runs in F16 and the report says so.
// CHECK: kiln.precision_report = ["div: f16 (no INT8 div)"]
// CHECK-LABEL: func.func @int8_conv
// CHECK: %[[IN:.*]] = tpu.cast %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 1.000000e-02>>
// CHECK: %[[W:.*]] = top.weight {value = dense<{{\[\[\[\[}}64]], {{\[\[}}127]]], {{\[\[\[}}-127]], {{\[\[}}95]]]]> : tensor<2x2x1x1xi8>} : tensor<2x2x1x1x!quant.uniform<i8:f32:0, {0.015748031496062992,0.031496062992125984}>>
// CHECK: %[[T:.*]] = top.weight {value = dense<{{\[\[}}3175, 1082196484, 37], [-1588, 1082196484, 36]]> : tensor<2x3xi32>} : tensor<2x3xi32>
// CHECK: %[[C:.*]] = tpu.conv2d %[[IN]], %[[W]], %[[T]] {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 2.000000e-02>>
// CHECK: %[[D:.*]] = tpu.cast %[[C]] {{.*}}-> tensor<1x2x4x4xf16>
// CHECK: tpu.eltwise %[[D]], %[[D]] {{.*}}kind = 5 : i32} : (tensor<1x2x4x4xf16>, tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16>
module {
func.func @int8_conv(%arg0: tensor<1x2x4x4xf32> {kiln.calib = array<f64: 1.27, -1.27, 1.0>, kiln.name = "input"}) -> tensor<1x2x4x4xf32> {
  %w = top.weight {value = dense<[[[[1.0]], [[2.0]]], [[[-4.0]], [[3.0]]]]> : tensor<2x2x1x1xf32>} : tensor<2x2x1x1xf32>
  %b = top.weight {value = dense<[0.5, -0.5]> : tensor<2xf32>} : tensor<2xf32>
  %c = tpu.conv2d %arg0, %w, %b {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false, kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 2.54, -2.54, 2.54>, kiln.final} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("conv")
  %d = tpu.eltwise %c, %c {kind = 5 : i32, do_relu = false, kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 1.0, 0.0, 1.0>, kiln.final} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("div")
  return %d : tensor<1x2x4x4xf32>
}
}

// -----

// An INT8 active function (Paddle2ONNX's HardSwish: Clip after Add of a
// constant) whose input is not INT8 yet: the Add of a weight has no
// calibrated range for that operand and runs in F16, so the Clip's input
// needs a cast. The cast goes after the Add, the table before the new
// active, and the active after both (issue 15: it was built at the cast's
// insertion point, before its table).
// CHECK: kiln.precision_report = ["add: f16 (no calibrated range)"]
// CHECK-LABEL: func.func @int8_active_after_f16
// CHECK: %[[ADD:.*]] = tpu.eltwise {{.*}} -> tensor<1x2x4x4xf16>
// CHECK: %[[Q:.*]] = tpu.cast %[[ADD]] : (tensor<1x2x4x4xf16>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.033622047244094483>>
// CHECK: %[[T:.*]] = top.weight {{.*}} : tensor<256xi8>
// CHECK: %[[CL:.*]] = tpu.active %[[Q]], %[[T]] {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.047244094488188976>>
// CHECK: tpu.cast %[[CL]] {{.*}}-> tensor<1x2x4x4xf32>
module {
func.func @int8_active_after_f16(%arg0: tensor<1x2x4x4xf32> {kiln.calib = array<f64: 1.27, -1.27, 1.0>, kiln.name = "x"}) -> tensor<1x2x4x4xf32> {
  %three = top.weight {value = dense<3.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
  %a = tpu.eltwise %arg0, %three {kind = 0 : i32, do_relu = false, kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 4.27, 1.73, 4.27>, kiln.final} : (tensor<1x2x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x4x4xf32> loc("add")
  %cl = tpu.active %a {mode = 17 : i32, alpha = 0.0 : f64, beta = 6.0 : f64, kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 6.0, 0.0, 6.0>, kiln.final} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("cl")
  return %cl : tensor<1x2x4x4xf32>
}
}

// -----

// The same with a net input: its cast goes to the start of the block.
// CHECK-LABEL: func.func @int8_active_of_argument
// CHECK: %[[Q:.*]] = tpu.cast %arg0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 1.000000e-02>>
// CHECK: %[[T:.*]] = top.weight {{.*}} : tensor<256xi8>
// CHECK: %[[R:.*]] = tpu.active %[[Q]], %[[T]] {{.*}}
// CHECK: return
func.func @int8_active_of_argument(%arg0: tensor<1x2x4x4xf32> {kiln.calib = array<f64: 1.27, -1.27, 1.0>, kiln.name = "x"}) -> tensor<1x2x4x4xf32> {
  %r = tpu.relu %arg0 {kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 1.0, 0.0, 1.0>, kiln.final} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("relu")
  return %r : tensor<1x2x4x4xf32>
}

// -----

// INT8 subtraction whose result's calibrated range is (nearly) zero
// (Softmax's x - max(x) over an axis of size 1, found by the compiler
// fuzzer): the result scale is the 1e-12 floor, the ratio 0.01 / 1e-12 is
// beyond int32, so both multipliers saturate at INT32_MAX with shift 0 (it
// used to fail in codegen with "quant multiplier out of int32 range").
// CHECK-LABEL: func.func @int8_sub_tiny_range
// CHECK: tpu.eltwise {{.*}}kind = 1 : i32, quant = #tpu.requant<m0 = 2147483647, m1 = 2147483647, rshift = 0>}
func.func @int8_sub_tiny_range(%arg0: tensor<1x8x1x1xf32> {kiln.calib = array<f64: 1.27, -1.27, 1.27>, kiln.name = "x"}) -> tensor<1x8x1x1xf32> {
  %s = tpu.eltwise %arg0, %arg0 {kind = 1 : i32, do_relu = false, kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 1.0e-13, -1.0e-13, 1.0e-13>, kiln.final} : (tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32> loc("shifted")
  return %s : tensor<1x8x1x1xf32>
}

// -----

// A value that is exactly zero on every calibration sample (ReLU of a
// negative input) gets threshold 1 (scale 1/127), so the conv reading it
// keeps a bias and multiplier in range (fuzzer finding: with the 1e-12 scale
// the bias saturated and the multiplier underflowed, the output was zeros).
// CHECK-LABEL: func.func @int8_zero_range
// CHECK: tpu.active {{.*}} -> tensor<1x1x1x1x!quant.uniform<i8:f32, 0.0078740157480314959>>
func.func @int8_zero_range(%arg0: tensor<1x1x1x1xf32> {kiln.calib = array<f64: 0.64, -0.64, -0.45>, kiln.name = "x"}) -> tensor<1x1x1x1xf32> {
  %r = tpu.relu %arg0 {kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 0.0, 0.0, 0.0>, kiln.final} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> loc("relu")
  return %r : tensor<1x1x1x1xf32>
}

// -----

// A constant pad whose fill (1.0) lies outside its INT8 input's range
// (Clip(-0.5, 0.5)): the fill would saturate to 0.5 under the input's scale,
// so the pad takes its own calibrated range (scale 1/127) and its input is
// requantized to it (fuzzer finding pad_fill_outside_int8_range).
// CHECK-LABEL: func.func @int8_pad_fill_outside_range
// CHECK: %[[CL:.*]] = tpu.active {{.*}} -> tensor<1x1x1x2x!quant.uniform<i8:f32, 0.003937007874015748>>
// CHECK: %[[RQ:.*]] = tpu.cast %[[CL]] {{.*}} -> tensor<1x1x1x2x!quant.uniform<i8:f32, 0.0078740157480314959>>
// CHECK: tpu.dma %[[RQ]] {{.*}}program = [#tpu.copy<src = 0, src_offset = 0, dst_offset = 1, shape = [1, 1, 1, 2], src_strides = [2, 2, 2, 1], dst_strides = [4, 4, 4, 1]>, #tpu.copy<src = fill, dst_offset = 0, shape = [1, 1, 1, 1], dst_strides = [4, 4, 4, 1], bits = 0x0000007F>]}
// CHECK-SAME: -> tensor<1x1x1x4x!quant.uniform<i8:f32, 0.0078740157480314959>>
func.func @int8_pad_fill_outside_range(%arg0: tensor<1x1x1x2xf32> {kiln.calib = array<f64: 1.0, -1.0, 1.0>, kiln.name = "x"}) -> tensor<1x1x1x4xf32> {
  %cl = tpu.active %arg0 {mode = 17 : i32, alpha = -0.5 : f64, beta = 0.5 : f64, kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 0.5, -0.5, 0.5>, kiln.final} : (tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32> loc("cl")
  %p = tpu.dma %cl {program = [#tpu.copy<src = 0, src_offset = 0, dst_offset = 1, shape = [1, 1, 1, 2], src_strides = [2, 2, 2, 1], dst_strides = [4, 4, 4, 1]>, #tpu.copy<src = fill, dst_offset = 0, shape = [1, 1, 1, 1], dst_strides = [4, 4, 4, 1], bits = 0x3F800000>], kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 1.0, -0.5, 1.0>, kiln.final} : (tensor<1x1x1x2xf32>) -> tensor<1x1x1x4xf32> loc("pad")
  return %p : tensor<1x1x1x4xf32>
}

// -----

// The same pad without a calibrated range of its own runs in F16.
// CHECK: kiln.precision_report = ["pad: f16 (pad value outside its input's INT8 range, and no calibrated range of its own covers it)"]
// CHECK-LABEL: func.func @int8_pad_fill_no_range
// CHECK: tpu.dma {{.*}} -> tensor<1x1x1x4xf16>
module {
func.func @int8_pad_fill_no_range(%arg0: tensor<1x1x1x2xf32> {kiln.calib = array<f64: 1.0, -1.0, 1.0>, kiln.name = "x"}) -> tensor<1x1x1x4xf32> {
  %cl = tpu.active %arg0 {mode = 17 : i32, alpha = -0.5 : f64, beta = 0.5 : f64, kiln.dtype = #top.dtype<int8>, kiln.calib = array<f64: 0.5, -0.5, 0.5>, kiln.final} : (tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32> loc("cl")
  %p = tpu.dma %cl {program = [#tpu.copy<src = 0, src_offset = 0, dst_offset = 1, shape = [1, 1, 1, 2], src_strides = [2, 2, 2, 1], dst_strides = [4, 4, 4, 1]>, #tpu.copy<src = fill, dst_offset = 0, shape = [1, 1, 1, 1], dst_strides = [4, 4, 4, 1], bits = 0x3F800000>], kiln.dtype = #top.dtype<int8>} : (tensor<1x1x1x2xf32>) -> tensor<1x1x1x4xf32> loc("pad")
  return %p : tensor<1x1x1x4xf32>
}
}

// -----

// A computed filter read through a reshape (a matmul's row vector as a 1x1
// filter) is cast next to its conv on [1, O, I, kh*kw], the layout the conv
// reads its filter in, and only then viewed as the filter: the cast can join
// the conv's layer group and the filter is formed on chip. The old view,
// unused, goes.
// CHECK-LABEL: func.func @filter_view_cast
// CHECK-NOT: tensor<1x512x1x1xf32>
// CHECK: %[[L:.*]] = tpu.reshape %arg1 : (tensor<1x1x512xf32>) -> tensor<1x1x512x1xf32>
// CHECK-NEXT: %[[X:.*]] = tpu.cast %[[L]] : (tensor<1x1x512x1xf32>) -> tensor<1x1x512x1xf16>
// CHECK-NEXT: %[[V:.*]] = tpu.reshape %[[X]] : (tensor<1x1x512x1xf16>) -> tensor<1x512x1x1xf16>
// CHECK-NEXT: tpu.conv2d %{{.*}}, %[[V]], %{{.*}} : (tensor<1x512x1x4xf16>, tensor<1x512x1x1xf16>, none)
func.func @filter_view_cast(%rows: tensor<1x512x1x4xf32>, %vec: tensor<1x1x512xf32>) -> tensor<1x1x1x4xf32> {
  %n = top.none
  %f = tpu.reshape %vec : (tensor<1x1x512xf32>) -> tensor<1x512x1x1xf32>
  %c = tpu.conv2d %rows, %f, %n {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, do_relu = false, kiln.dtype = #top.dtype<f16>} : (tensor<1x512x1x4xf32>, tensor<1x512x1x1xf32>, none) -> tensor<1x1x1x4xf32>
  return %c : tensor<1x1x1x4xf32>
}
