// RUN: kiln-opt %s -top-assign-precision="mode=f16 qtable=keep=bf16" | FileCheck %s

// f16 by default; an op whose calibrated range or whose input's range
// exceeds the f16 limit stays f32 (the StyleGAN2 demodulation: ReduceSum of
// squares, then Sqrt); qtable overrides by ONNX name. Every decision other
// than the mode lands in the module's report.
// CHECK: kiln.precision_report = ["sum: f32 (result reaches |x| = 94655.90 > f16 limit 32752.00)", "root: f32 (input 0 reaches |x| = 94655.90 > f16 limit 32752.00)", "keep: bf16 (qtable)"]
// CHECK-LABEL: func.func @demod
// CHECK: top.active %arg0 {{.*}}kiln.dtype = #top.dtype<f16>, mode = 18
// CHECK: top.reduce {{.*}}kiln.dtype = #top.dtype<f32>, kiln.reason = "result reaches
// CHECK: top.active {{.*}}kiln.dtype = #top.dtype<f32>, kiln.reason = "input 0 reaches {{.*}}mode = 6
// CHECK: top.relu {{.*}}kiln.dtype = #top.dtype<bf16>, kiln.reason = "qtable"
module {
func.func @demod(%arg0: tensor<4x64xf32>) -> tensor<4x1xf32> {
  %sq = top.active %arg0 {mode = 18 : i32, kiln.calib = array<f64: 400.0, 0.0, 400.0>} : (tensor<4x64xf32>) -> tensor<4x64xf32> loc("square")
  %sum = top.reduce %sq {mode = 0 : i32, axes = array<i64: 1>, keepdims = true, kiln.calib = array<f64: 94655.9, 0.0, 94655.9>} : (tensor<4x64xf32>) -> tensor<4x1xf32> loc("sum")
  %root = top.active %sum {mode = 6 : i32, kiln.calib = array<f64: 307.7, 0.0, 307.7>} : (tensor<4x1xf32>) -> tensor<4x1xf32> loc("root")
  %keep = top.relu %root : (tensor<4x1xf32>) -> tensor<4x1xf32> loc("keep")
  return %keep : tensor<4x1xf32>
}
}
