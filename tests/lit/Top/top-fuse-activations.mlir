// RUN: kiln-opt %s -split-input-file -top-fuse-activations | FileCheck %s
// RUN: kiln-opt %s -split-input-file -top-fuse-activations -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Paddle2ONNX's HardSwish: Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6).
// CHECK-LABEL: func.func @hardswish_div
// CHECK-NEXT: %[[Y:.*]] = top.active %arg0 {mode = 16 : i32} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
// CHECK-NEXT: return %[[Y]]
// The fused op keeps the name of the form's last op (its ONNX output).
// LOC-LABEL: func.func @hardswish_div
// LOC: top.active %arg0 {mode = 16 : i32} {{.*}} loc(#[[L:.*]])
// LOC: #[[L]] = loc("hs")
func.func @hardswish_div(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %three = top.weight {value = dense<3.0> : tensor<f32>} : tensor<f32>
  %six = top.weight {value = dense<6.0> : tensor<f32>} : tensor<f32>
  %a = top.add %x, %three : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %c = top.active %a {mode = 17 : i32, alpha = 0.0 : f64, beta = 6.0 : f64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %m = top.mul %x, %c : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %y = top.div %m, %six : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32> loc("hs")
  return %y : tensor<1x8x4x4xf32>
}

// -----

// The other orders: x * (clip(3 + x, 0, 6) * (1/6)), and x * hard_sigmoid(x)
// (PyTorch's export before opset 14).
// CHECK-LABEL: func.func @hardswish_orders
// CHECK-NEXT: %[[A:.*]] = top.active %arg0 {{.*}}mode = 16
// CHECK-NEXT: %[[B:.*]] = top.active %arg0 {{.*}}mode = 16
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @hardswish_orders(%x: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %three = top.weight {value = dense<3.0> : tensor<1xf32>} : tensor<1xf32>
  %sixth = top.weight {value = dense<0.16666667> : tensor<f32>} : tensor<f32>
  %a = top.add %three, %x : (tensor<1xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = top.active %a {mode = 17 : i32, alpha = 0.0 : f64, beta = 6.0 : f64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %s = top.mul %c, %sixth : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %y = top.mul %x, %s : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %h = top.active %x {mode = 15 : i32, alpha = 0.16666666666666666 : f64, beta = 0.5 : f64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %z = top.mul %h, %x : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %y, %z : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// -----

// HardSigmoid as Paddle2ONNX writes it: Div(Clip(Add(x, 3), 0, 6), 6).
// CHECK-LABEL: func.func @hardsigmoid
// CHECK-NEXT: %[[Y:.*]] = top.active %arg0 {alpha = 0.16666666666666666 : f64, beta = 5.000000e-01 : f64, mode = 15 : i32}
// CHECK-NEXT: return %[[Y]]
func.func @hardsigmoid(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %three = top.weight {value = dense<3.0> : tensor<f32>} : tensor<f32>
  %six = top.weight {value = dense<6.0> : tensor<f32>} : tensor<f32>
  %a = top.add %x, %three : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %c = top.active %a {mode = 17 : i32, alpha = 0.0 : f64, beta = 6.0 : f64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %y = top.div %c, %six : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  return %y : tensor<1x8x4x4xf32>
}

// -----

// HardSigmoid as Paddle2ONNX writes it in PP-LCNet's SE blocks:
// Clip(Add(Mul(x, 0.1666667), 0.5), 0, 1).
// CHECK-LABEL: func.func @hardsigmoid_slope
// CHECK-NEXT: %[[Y:.*]] = top.active %arg0 {alpha = 0.16666670143604279 : f64, beta = 5.000000e-01 : f64, mode = 15 : i32}
// CHECK-NEXT: return %[[Y]]
func.func @hardsigmoid_slope(%x: tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32> {
  %slope = top.weight {value = dense<0.1666667> : tensor<f32>} : tensor<f32>
  %half = top.weight {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %m = top.mul %x, %slope : (tensor<1x16x1x1xf32>, tensor<f32>) -> tensor<1x16x1x1xf32>
  %a = top.add %m, %half : (tensor<1x16x1x1xf32>, tensor<f32>) -> tensor<1x16x1x1xf32>
  %y = top.active %a {mode = 17 : i32, alpha = 0.0 : f64, beta = 1.0 : f64} : (tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32>
  return %y : tensor<1x16x1x1xf32>
}

// -----

// GELU's erf form as PyTorch (opset < 20) exports it:
// Mul(Mul(x, Add(Erf(Div(x, 1.4142135)), 1)), 0.5).
// CHECK-LABEL: func.func @gelu
// CHECK-NEXT: %[[Y:.*]] = top.active %arg0 {{.*}}mode = 19
// CHECK-NEXT: return %[[Y]]
func.func @gelu(%x: tensor<1x16x64xf32>) -> tensor<1x16x64xf32> {
  %sqrt2 = top.weight {value = dense<1.41421354> : tensor<f32>} : tensor<f32>
  %one = top.weight {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %half = top.weight {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %d = top.div %x, %sqrt2 : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16x64xf32>
  %e = top.active %d {mode = 11 : i32} : (tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
  %p = top.add %e, %one : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16x64xf32>
  %m = top.mul %x, %p : (tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
  %y = top.mul %m, %half : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// SiLU as PyTorch exports it (Sigmoid, Mul) and Mish before opset 18
// (Softplus, Tanh, Mul).
// CHECK-LABEL: func.func @silu_mish
// CHECK-NEXT: %[[S:.*]] = top.active %arg0 {mode = 21 : i32}
// CHECK-NEXT: %[[M:.*]] = top.active %arg0 {mode = 22 : i32}
// CHECK-NEXT: return %[[S]], %[[M]]
func.func @silu_mish(%x: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %s = top.active %x {mode = 2 : i32} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %y = top.mul %x, %s : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %p = top.active %x {mode = 14 : i32} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %t = top.active %p {mode = 3 : i32} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %z = top.mul %t, %x : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %y, %z : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// -----

// A sigmoid whose value is also used elsewhere stays for that user.
// CHECK-LABEL: func.func @silu_shared
// CHECK-NEXT: %[[S:.*]] = top.active %arg0 {mode = 2 : i32}
// CHECK-NEXT: %[[Y:.*]] = top.active %arg0 {mode = 21 : i32}
// CHECK-NEXT: return %[[Y]], %[[S]]
func.func @silu_shared(%x: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %s = top.active %x {mode = 2 : i32} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %y = top.mul %x, %s : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %y, %s : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// -----

// GELU's other order, (x * 0.5) * (1 + erf(x * (1 / sqrt(2)))).
// CHECK-LABEL: func.func @gelu_half_first
// CHECK-NEXT: %[[Y:.*]] = top.active %arg0 {{.*}}mode = 19
// CHECK-NEXT: return %[[Y]]
func.func @gelu_half_first(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %rsqrt2 = top.weight {value = dense<0.707106769> : tensor<f32>} : tensor<f32>
  %one = top.weight {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %half = top.weight {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %d = top.mul %x, %rsqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = top.active %d {mode = 11 : i32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %p = top.add %one, %e : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h = top.mul %x, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = top.mul %h, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Not these activations: a different constant, another input to the clip,
// and a clip whose value is also used elsewhere (it stays; the fused op
// still replaces the product).
// CHECK-LABEL: func.func @not_hardswish
// CHECK: top.add
// CHECK: top.active %{{.*}} {{.*}}mode = 17
// CHECK: top.div
// CHECK-LABEL: func.func @other_input
// CHECK: top.mul %arg1
// CHECK-NOT: mode = 16
func.func @not_hardswish(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %three = top.weight {value = dense<3.0> : tensor<f32>} : tensor<f32>
  %five = top.weight {value = dense<5.0> : tensor<f32>} : tensor<f32>
  %a = top.add %x, %three : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %c = top.active %a {mode = 17 : i32, alpha = 0.0 : f64, beta = 6.0 : f64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %m = top.mul %x, %c : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %y = top.div %m, %five : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  return %y : tensor<1x8x4x4xf32>
}
func.func @other_input(%x: tensor<1x8x4x4xf32>, %z: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %three = top.weight {value = dense<3.0> : tensor<f32>} : tensor<f32>
  %six = top.weight {value = dense<6.0> : tensor<f32>} : tensor<f32>
  %a = top.add %x, %three : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %c = top.active %a {mode = 17 : i32, alpha = 0.0 : f64, beta = 6.0 : f64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %m = top.mul %z, %c : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %y = top.div %m, %six : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  return %y : tensor<1x8x4x4xf32>
}
