// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Every Top op verifies its operands and attributes (TopOps.cpp, "Verifiers"):
// one case per check. Result shapes are not checked: top-shape-infer sets them.

func.func @weight_type() {
  // expected-error @+1 {{'top.weight' op value of shape [4] does not match the result's [2, 2]}}
  %r = top.weight {value = dense<1.0> : tensor<4xf32>} : tensor<2x2xf32>
  return
}

// -----

func.func @conv_filter_rank(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x72xf32>} : tensor<8x72xf32>
  %n = top.none
  // expected-error @+1 {{'top.conv' op expects a 4-D filter [oc, ic/group, kh, kw]}}
  %r = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x72xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_group(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.conv' op output channels must divide into groups}}
  %r = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_channels(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x4x3x3xf32>} : tensor<8x4x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.conv' op input channels 8 do not match filter 4 x group 1}}
  %r = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_kernel(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x8x5x5xf32>} : tensor<8x8x5x5xf32>
  %n = top.none
  // expected-error @+1 {{'top.conv' op kernel_shape [3, 3] does not match the filter's [5, 5]}}
  %r = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x8x5x5xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_bias(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
  %b = top.weight {value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  // expected-error @+1 {{'top.conv' op bias has 4 elements, expects 8}}
  %r = top.conv %arg0, %w, %b {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<4xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_input_rank(%arg0: tensor<8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.conv' op expects a 4-D NCHW input, got rank 3}}
  %r = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_strides(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.conv' op strides must have 2 positive entries}}
  %r = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 0>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_pads(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.conv' op pads must have 4 non-negative entries [top, left, bottom, right]}}
  %r = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, -1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_dilations(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.conv' op dilations must have 2 positive entries}}
  %r = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1>} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_kernel_positive(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x8x0x3xf32>} : tensor<8x8x0x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.conv' op kernel_shape must have 2 positive entries}}
  %r = top.conv %arg0, %w, %n {kernel_shape = array<i64: 0, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x8x0x3xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_window(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x8x3x3xf32>} : tensor<8x8x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.conv' op window is larger than the padded input}}
  %r = top.conv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 4, 4>} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @maxpool_strides(%arg0: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'top.maxpool' op strides must have 2 positive entries}}
  %r = top.maxpool %arg0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @avgpool_window(%arg0: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'top.avgpool' op window is larger than the padded input}}
  %r = top.avgpool %arg0 {kernel_shape = array<i64: 9, 9>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @avgpool_rank(%arg0: tensor<8x8xf32>) {
  // expected-error @+1 {{'top.avgpool' op expects a 4-D NCHW input, got rank 2}}
  %r = top.avgpool %arg0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @global_avgpool_rank(%arg0: tensor<8x8xf32>) {
  // expected-error @+1 {{'top.global_avgpool' op expects a 4-D NCHW input, got rank 2}}
  %r = top.global_avgpool %arg0 : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @global_maxpool_rank(%arg0: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'top.global_maxpool' op expects a 4-D NCHW input, got rank 3}}
  %r = top.global_maxpool %arg0 : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  return
}

// -----

func.func @batchnorm_scale(%arg0: tensor<1x8x8x8xf32>) {
  %s = top.weight {value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %c = top.weight {value = dense<1.0> : tensor<8xf32>} : tensor<8xf32>
  // expected-error @+1 {{'top.batchnorm' op scale has 4 elements for 8 channels}}
  %r = top.batchnorm %arg0, %s, %c, %c, %c : (tensor<1x8x8x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @batchnorm_rank(%arg0: tensor<8xf32>) {
  %s = top.weight {value = dense<1.0> : tensor<8xf32>} : tensor<8xf32>
  %c = top.weight {value = dense<1.0> : tensor<8xf32>} : tensor<8xf32>
  // expected-error @+1 {{'top.batchnorm' op expects an [N, C, ..] input, got rank 1}}
  %r = top.batchnorm %arg0, %s, %c, %c, %c : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @add_broadcast(%arg0: tensor<2x3xf32>, %arg1: tensor<4xf32>) {
  // expected-error @+1 {{'top.add' op operands do not broadcast: dimension 1 is 3 and 4}}
  %r = top.add %arg0, %arg1 : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @mul_element_types(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf16>) {
  // expected-error @+1 {{'top.mul' op operands must have one element type: 'f32' and 'f16'}}
  %r = top.mul %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  return
}

// -----

func.func @softmax_axis(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.softmax' op axis 2 is out of range for rank 2}}
  %r = top.softmax %arg0 {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @reduce_axis(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.reduce' op axis 2 is out of range for rank 2}}
  %r = top.reduce %arg0 {mode = 0 : i32, axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  return
}

// -----

func.func @reduce_unsorted(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.reduce' op axes must be sorted and unique}}
  %r = top.reduce %arg0 {mode = 0 : i32, axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  return
}

// -----

func.func @reduce_no_axes(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.reduce' op expects at least one axis}}
  %r = top.reduce %arg0 {mode = 0 : i32, axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_length(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.transpose' op perm has 3 entries for rank 2}}
  %r = top.transpose %arg0 {perm = array<i64: 1, 0, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @transpose_perm(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.transpose' op perm is not a permutation}}
  %r = top.transpose %arg0 {perm = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @slice_count(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.slice' op expects one start, end and step per dimension}}
  %r = top.slice %arg0 {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  return
}

// -----

func.func @slice_normalized(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.slice' op dimension 1: start 0, end 4, step 1 are not normalized for extent 3}}
  %r = top.slice %arg0 {starts = array<i64: 0, 0>, ends = array<i64: 2, 4>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_empty(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.slice' op dimension 1 of the result is empty}}
  %r = top.slice %arg0 {starts = array<i64: 0, 2>, ends = array<i64: 2, 2>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gather_axis(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.gather' op axis 2 is out of range for rank 2}}
  %r = top.gather %arg0 {axis = 2 : i64, indices = array<i64: 0>, indices_shape = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gather_count(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.gather' op expects 2 indices for indices_shape, got 1}}
  %r = top.gather %arg0 {axis = 1 : i64, indices = array<i64: 0>, indices_shape = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gather_index(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.gather' op index 3 is out of range for extent 3}}
  %r = top.gather %arg0 {axis = 1 : i64, indices = array<i64: 3>, indices_shape = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @expand_repeats(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.expand' op expects one repeat per dimension}}
  %r = top.expand %arg0 {shape = array<i64>, repeats = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @expand_repeat_positive(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.expand' op repeats must be positive}}
  %r = top.expand %arg0 {shape = array<i64>, repeats = array<i64: 2, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @expand_broadcast(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.expand' op cannot broadcast dimension 1 of extent 3 to 4}}
  %r = top.expand %arg0 {shape = array<i64: 2, 4>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @pad_count(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.pad' op expects 4 pads, got 2}}
  %r = top.pad %arg0 {pads = array<i64: 1, 1>, mode = 0 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @pad_negative(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.pad' op pads must be non-negative}}
  %r = top.pad %arg0 {pads = array<i64: 1, 1, -1, 1>, mode = 0 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @pad_reflect(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.pad' op reflect pads of dimension 1 must be smaller than its extent 3}}
  %r = top.pad %arg0 {pads = array<i64: 0, 3, 0, 0>, mode = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @resize_rank(%arg0: tensor<8x8xf32>) {
  // expected-error @+1 {{'top.resize' op expects a 4-D NCHW input}}
  %r = top.resize %arg0 {mode = 0 : i32, coord_mode = 1 : i32, nearest_mode = 0 : i32, out_hw = array<i64: 16, 16>, scales = array<f64: 2.0, 2.0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @resize_out_hw(%arg0: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'top.resize' op expects a positive out_hw of 2 entries}}
  %r = top.resize %arg0 {mode = 0 : i32, coord_mode = 1 : i32, nearest_mode = 0 : i32, out_hw = array<i64: 16>, scales = array<f64: 2.0, 2.0>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @resize_scales(%arg0: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'top.resize' op expects 2 positive scales}}
  %r = top.resize %arg0 {mode = 0 : i32, coord_mode = 1 : i32, nearest_mode = 0 : i32, out_hw = array<i64: 16, 16>, scales = array<f64: 2.0, 0.0>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @resize_coord_mode(%arg0: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'top.resize' op attribute 'coord_mode' failed to satisfy constraint: resize coordinate transform}}
  %r = top.resize %arg0 {mode = 0 : i32, coord_mode = 4 : i32, nearest_mode = 0 : i32, out_hw = array<i64: 16, 16>, scales = array<f64: 2.0, 2.0>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @resize_nearest_mode(%arg0: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'top.resize' op attribute 'nearest_mode' failed to satisfy constraint: nearest resize rounding}}
  %r = top.resize %arg0 {mode = 0 : i32, coord_mode = 1 : i32, nearest_mode = 4 : i32, out_hw = array<i64: 16, 16>, scales = array<f64: 2.0, 2.0>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @deconv_rank(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x36xf32>} : tensor<8x36xf32>
  %n = top.none
  // expected-error @+1 {{'top.deconv' op expects a 4-D NCHW input and a 4-D filter}}
  %r = top.deconv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x36xf32>, none) -> tensor<1x4x15x15xf32>
  return
}

// -----

func.func @deconv_kernel(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x4x2x2xf32>} : tensor<8x4x2x2xf32>
  %n = top.none
  // expected-error @+1 {{'top.deconv' op kernel_shape [3, 3] does not match the filter's [2, 2]}}
  %r = top.deconv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x4x2x2xf32>, none) -> tensor<1x4x15x15xf32>
  return
}

// -----

func.func @deconv_output_padding(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x4x3x3xf32>} : tensor<8x4x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.deconv' op output_padding must have 2 non-negative entries}}
  %r = top.deconv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: -1, 0>} : (tensor<1x8x8x8xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x4x15x15xf32>
  return
}

// -----

func.func @deconv_group(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x4x3x3xf32>} : tensor<8x4x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.deconv' op group must be positive}}
  %r = top.deconv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 0 : i64} : (tensor<1x8x8x8xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x4x15x15xf32>
  return
}

// -----

func.func @deconv_channels(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<4x4x3x3xf32>} : tensor<4x4x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.deconv' op input channels 8 do not match filter [4, 4, 3, 3] with group 1}}
  %r = top.deconv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x15x15xf32>
  return
}

// -----

func.func @deconv_strides(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x4x3x3xf32>} : tensor<8x4x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.deconv' op strides must have 2 positive entries}}
  %r = top.deconv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 0, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x4x15x15xf32>
  return
}

// -----

func.func @deconv_no_output(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x4x3x3xf32>} : tensor<8x4x3x3xf32>
  %n = top.none
  // expected-error @+1 {{'top.deconv' op window attributes give no output}}
  %r = top.deconv %arg0, %w, %n {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 9, 9, 9, 9>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x4x15x15xf32>
  return
}

// -----

func.func @deconv_bias(%arg0: tensor<1x8x8x8xf32>) {
  %w = top.weight {value = dense<1.0> : tensor<8x4x3x3xf32>} : tensor<8x4x3x3xf32>
  %n = top.none
  %b = top.weight {value = dense<1.0> : tensor<8xf32>} : tensor<8xf32>
  // expected-error @+1 {{'top.deconv' op bias has 8 elements, expects 4}}
  %r = top.deconv %arg0, %w, %b {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x4x15x15xf32>
  return
}

// -----

func.func @matmul_rank(%arg0: tensor<4xf32>, %arg1: tensor<4x5xf32>) {
  %n = top.none
  // expected-error @+1 {{'top.matmul' op expects operands [.., m, k] and [.., k, n]}}
  %r = top.matmul %arg0, %arg1, %n : (tensor<4xf32>, tensor<4x5xf32>, none) -> tensor<1xf32>
  return
}

// -----

func.func @matmul_inner(%arg0: tensor<3x4xf32>, %arg1: tensor<5x6xf32>) {
  %n = top.none
  // expected-error @+1 {{'top.matmul' op inner dimensions differ: 4 vs 5}}
  %r = top.matmul %arg0, %arg1, %n : (tensor<3x4xf32>, tensor<5x6xf32>, none) -> tensor<1xf32>
  return
}

// -----

func.func @matmul_transpose_rank(%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x5x4xf32>) {
  %n = top.none
  // expected-error @+1 {{'top.matmul' op right_transpose needs a 2-D right operand}}
  %r = top.matmul %arg0, %arg1, %n {right_transpose = true} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, none) -> tensor<1xf32>
  return
}

// -----

func.func @matmul_batch(%arg0: tensor<2x3x4xf32>, %arg1: tensor<3x4x5xf32>) {
  %n = top.none
  // expected-error @+1 {{'top.matmul' op batch dimension 0 does not broadcast}}
  %r = top.matmul %arg0, %arg1, %n : (tensor<2x3x4xf32>, tensor<3x4x5xf32>, none) -> tensor<1xf32>
  return
}

// -----

func.func @matmul_bias(%arg0: tensor<3x4xf32>, %arg1: tensor<4x5xf32>) {
  %n = top.weight {value = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
  // expected-error @+1 {{'top.matmul' op bias has 3 elements, expects 5}}
  %r = top.matmul %arg0, %arg1, %n : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<3xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @reshape_count(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.reshape' op cannot reshape 6 elements to 8}}
  %r = top.reshape %arg0 {shape = array<i64: 4, 2>} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @reshape_two_inferred(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.reshape' op at most one dimension may be -1}}
  %r = top.reshape %arg0 {shape = array<i64: -1, -1>} : (tensor<2x3xf32>) -> tensor<6xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{'top.concat' op expects at least one input}}
  %r = top.concat  {axis = 0 : i64} : () -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_axis(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.concat' op axis 2 is out of range for rank 2}}
  %r = top.concat %arg0, %arg1 {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_rank(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>) {
  // expected-error @+1 {{'top.concat' op inputs differ in rank: 1 and 2}}
  %r = top.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_dims(%arg0: tensor<2x3xf32>, %arg1: tensor<2x4xf32>) {
  // expected-error @+1 {{'top.concat' op inputs differ in dimension 1: 4 and 3}}
  %r = top.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_element_types(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf16>) {
  // expected-error @+1 {{'top.concat' op operands must have one element type: 'f32' and 'f16'}}
  %r = top.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<4x3xf32>
  return
}

// -----

func.func @quantize_zero_points(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.quantize_linear' op expects as many zero points as scales (1 scales, 2 zero points)}}
  %r = top.quantize_linear %arg0 {scale = array<f64: 0.5>, zero_point = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xi8>
  return
}

// -----

func.func @quantize_scale(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.quantize_linear' op scales must be positive and finite}}
  %r = top.quantize_linear %arg0 {scale = array<f64: 0.0>, zero_point = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<2x3xi8>
  return
}

// -----

func.func @quantize_axis_count(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.quantize_linear' op expects 3 per-axis scales, got 2}}
  %r = top.quantize_linear %arg0 {scale = array<f64: 0.5, 0.5>, zero_point = array<i64: 0, 0>, axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi8>
  return
}

// -----

func.func @quantize_type(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.quantize_linear' op expects an 8-bit integer quantized type, got 'f32'}}
  %r = top.quantize_linear %arg0 {scale = array<f64: 0.5>, zero_point = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dequantize_zero_point(%arg0: tensor<2x3xui8>) {
  // expected-error @+1 {{'top.dequantize_linear' op zero point -1 is out of range for 'ui8'}}
  %r = top.dequantize_linear %arg0 {scale = array<f64: 0.5>, zero_point = array<i64: -1>} : (tensor<2x3xui8>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dtype_name(%arg0: tensor<2x3xf32>) {
  // expected-error @+2 {{expected ::kiln::top::DType to be one of: f32, f16, bf16, int8}}
  // expected-error @+1 {{failed to parse Top_DTypeAttr parameter 'value'}}
  %r = top.relu %arg0 {kiln.dtype = #top.dtype<f64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dtype_string(%arg0: tensor<2x3xf32>) {
  // expected-error @+1 {{'top.relu' op 'kiln.dtype' must be a #top.dtype, not "f16"}}
  %r = top.relu %arg0 {kiln.dtype = "f16"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}
