#ifndef KILN_TOP_PASSES
#define KILN_TOP_PASSES

include "mlir/Pass/PassBase.td"

def TopShapeInfer : Pass<"top-shape-infer", "mlir::func::FuncOp"> {
  let summary = "Recompute every Top op's result shape from its operands";
  let description = [{
    Walks the function in order and calls each op's ShapeInference method, then
    updates the function signature. Run after input shapes are overridden.
  }];
  let constructor = "kiln::top::createShapeInferPass()";
}

def TopFoldConstants : Pass<"top-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate every op whose operands are all weights";
  let description = [{
    A Top op whose operands are all top.weight (or top.none) is evaluated
    with the Top interpreter, so the folded value is exactly the reference's,
    and replaced by a top.weight at its location holding the result. Ops are
    visited in program order, so whole constant chains fold; weights left
    without users are erased. An op whose operands do not fit fails the pass
    with the interpreter's diagnostic.
  }];
  let constructor = "kiln::top::createFoldConstantsPass()";
  let dependentDialects = ["kiln::top::TopDialect"];
}

def TopMergeTransposes : Pass<"top-merge-transposes", "mlir::func::FuncOp"> {
  let summary = "Compose consecutive transposes; drop those that move no data";
  let description = [{
    transpose(transpose(x, p), q) becomes one transpose of x by p[q[i]] (an
    NCHW -> NHWC -> NCHW pair cancels); a transpose whose permutation keeps
    the order of the dimensions larger than 1 becomes a reshape (an alias of
    its input's DDR after lowering), or nothing if it is the identity.
  }];
}

def TopRewriteModulatedConv
    : Pass<"top-rewrite-modulated-conv", "mlir::func::FuncOp"> {
  let summary = "conv(x, W * s * d) -> d * conv(x * s, W): static filters";
  let description = [{
    A conv or deconv (one group, no bias, no fused ReLU) whose filter is a
    product of a weight W, runtime factors s varying only along the filter's
    input-channel axis and runtime factors d varying only along its
    output-channel axis (StyleGAN2's modulation and demodulation), reached
    through reshapes that add or drop unit dimensions and transposes,
    becomes conv(x * s, W') * d, W' being W through the same reshapes and
    transposes (folded by top-fold-constants). A sum over every axis but the
    output channel of (W * s)^2 (the demodulation's sum of squares, as
    reduce sum of mul(a, a) or reduce sum_square) becomes (s * s) x Q, with
    Q = sum of W^2 over the other axes, a constant. `mode`: `rewrite` applies
    both wherever they match; `auto` rewrites a conv only if the estimated
    cycles of scaling its input and output (an EU pass each) are fewer than
    those of forming its filter (an EU pass per factor over the filter, and
    the filter's way through DDR in runs of kh*kw elements) for `precision`;
    `keep` changes nothing. Every decision is a line of the module's
    `kiln.rewrite_report`.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"auto\"",
           "auto | rewrite | keep">,
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "f32 | f16 | bf16 | int8: the element size the cost assumes">,
  ];
  let dependentDialects = ["kiln::top::TopDialect"];
}

def TopFuseActivations : Pass<"top-fuse-activations", "mlir::func::FuncOp"> {
  let summary = "Spelled-out activations become one top.active";
  let description = [{
    Matches the arithmetic exporters write for activations ONNX (at their
    opset) or Paddle2ONNX have no op for, over a product of muls and
    divisions by constants in any order: x * clip(x + 3, 0, 6) / 6 and
    x * hard_sigmoid(x) become hard_swish(x); clip(x + 3, 0, 6) / 6 becomes
    hard_sigmoid(x) with alpha 1/6, beta 1/2, and clip(a * x + b, 0, 1)
    hard_sigmoid(x) with alpha a, beta b; 0.5 * x * (1 + erf(x /
    sqrt(2))) becomes gelu(x); x * sigmoid(x) silu(x) (PyTorch's SiLU and
    Swish); x * tanh(softplus(x)) mish(x). The active op takes the location (the ONNX
    name) of the last op of the form; the others disappear.
  }];
}

def TopSinkReshapeIntoReduce : Pass<"top-sink-reshape-into-reduce", "mlir::func::FuncOp"> {
  let summary = "A reshape restoring a reduction's axes moves up to the reduction";
  let description = [{
    reduce(keepdims = false), then elementwise ops whose other operands are
    scalars, then a reshape to the reduction's keepdims shape: the reduction
    keeps its axes and the ops run on that shape (StyleGAN2's demodulation,
    [1, O] reshaped to [1, O, 1, 1, 1], stays on the filter's lanes). Every
    value in the chain has one use.
  }];
}

def TopFoldPadIntoConv : Pass<"top-fold-pad-into-conv", "mlir::func::FuncOp"> {
  let summary = "Zero pads of H and W in front of a conv become its padding";
  let description = [{
    conv(pad(x)) where the pad is constant zero and pads only the two
    spatial dimensions of a 4-D tensor becomes conv(x) with the pad's
    amounts added to the conv's `pads` (the same zeros, read by the window
    instead of copied through DDR). A pad with other users stays for them.
  }];
}

def TopPoolBeforePointwiseConv : Pass<"top-pool-before-pointwise-conv", "mlir::func::FuncOp"> {
  let summary = "The global average of a 1 x 1 conv's output averages its input instead";
  let description = [{
    global_avgpool(conv(x, W, b)) with a 1 x 1, unit-stride, unpadded conv
    without a fused ReLU becomes conv(global_avgpool(x), W, b): equal in
    exact arithmetic, it pools the conv's (often narrower) input, runs the
    conv on one pixel, and leaves the wide output with no reader that needs
    all of it before any of it can be used. The conv stays for its other
    readers.
  }];
}

def TopFoldAffineIntoConv : Pass<"top-fold-affine-into-conv", "mlir::func::FuncOp"> {
  let summary = "Constant scales and shifts of a conv's output or input fold into the conv";
  let description = [{
    conv(x, W, b) followed by a mul, add, sub or div with a constant that is
    one value or one per output channel ([C, 1, 1] or [1, C, 1, 1]), when
    the conv is its only user and has no fused ReLU, becomes the conv with
    W * s and b * s + t (the conv takes the folded op's name). The same
    affine of the input of a conv that pads nothing, per input channel,
    when the conv is its only user, becomes W * s and b + sum(W * t).
    Repeats while it applies: x * a + b folds whole. The input side is left
    alone when `precision` is int8.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "the net's precision (f32, f16, bf16, int8)">
  ];
}

def TopFuseBatchNorm : Pass<"top-fuse-batchnorm", "mlir::func::FuncOp"> {
  let summary = "Fold inference batch norms into the preceding conv";
  let description = [{
    conv(x, W, b) -> batchnorm becomes conv(x, W * s, (b - mean) * s + beta)
    with s = gamma / sqrt(var + eps), when the conv's filter and bias are
    weights and the batch norm is the conv's only user. Any other batch norm
    with weight parameters becomes a per-channel mul and add; one with
    computed parameters computes s and the shift with Top ops
    (var + eps, rsqrt, mul, sub) before the same mul and add.
  }];
  let constructor = "kiln::top::createFuseBatchNormPass()";
  let dependentDialects = ["kiln::top::TopDialect"];
}

def TopFuseRelu : Pass<"top-fuse-relu", "mlir::func::FuncOp"> {
  let summary = "Fuse ReLU into the op that produces its input";
  let description = [{
    A relu whose input comes from a conv, deconv, matmul or binary
    elementwise op (add, sub, mul, div, pow, max, min, prelu) with no other
    user sets that op's do_relu and disappears, saving a pass over the
    tensor.
  }];
  let constructor = "kiln::top::createFuseReluPass()";
}

def TopDecompose : Pass<"top-decompose", "mlir::func::FuncOp"> {
  let summary = "Rewrite composite Top ops into simpler ones the chip has";
  let description = [{
    softmax(x) along axis a becomes e / sum(e) with e = exp(x - max(x)),
    max and sum reduced along a with keepdims; log-softmax becomes
    (x - max) - log(sum(exp(x - max))). The last op keeps the softmax's
    location, the helper ops get "<name>_max", "_shifted", "_exp", "_sum"
    and "_log_sum". An average pool with count_include_pad whose ceil_mode
    windows hang past the end padding (the chip would count that part):
    without pads it becomes count_include_pad = false; with pads, a zero
    top.pad "<name>_pad" in front of a pool without pads that does not
    count pads.
  }];
  let constructor = "kiln::top::createDecomposePass()";
  let dependentDialects = ["kiln::top::TopDialect"];
}

def TopReorderDeconvFilter
    : Pass<"top-reorder-deconv-filter", "mlir::func::FuncOp"> {
  let summary = "Reorder computed deconv filters into the chip's layout";
  let description = [{
    A top.deconv whose filter is computed (not a top.weight) reads it as
    ONNX stores it, [ic, oc/group, kh, kw]; the chip reads [oc, ic/group, kh,
    kw]. With group 1 this inserts one top.transpose {1, 0, 2, 3} of the
    filter, or, when the filter already is such a transpose, reads that
    transpose's input instead (erasing the transpose if nothing else uses
    it), so there are never two. With group g > 1 the reorder is a
    transpose per group: reshape [g, ic/g, oc/g, kh, kw], transpose
    {0, 2, 1, 3, 4}, reshape [oc, ic/g, kh, kw]. Either way the deconv gets
    filter_reordered. Weight filters are left alone (the lowering reorders
    them at compile time) and reordered deconvs are skipped, so running the
    pass twice changes nothing.
  }];
  let constructor = "kiln::top::createReorderDeconvFilterPass()";
  let dependentDialects = ["kiln::top::TopDialect"];
}

def TopAssignPrecision : Pass<"top-assign-precision", "mlir::func::FuncOp"> {
  let summary = "Choose the dtype each op runs in (kiln.dtype)";
  let description = [{
    Every computing op gets `kiln.dtype`: the `mode`, unless `qtable` names it
    (ONNX name=dtype), or, in f16, its calibrated range (`kiln.calib`)
    exceeds `f16-limit` in magnitude: then it stays f32. Each decision other
    than the mode is recorded as `kiln.reason` on the op and appended to the
    module's `kiln.precision_report`.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"f32\"",
           "f32 | f16 | bf16 | int8">,
    ListOption<"qtable", "qtable", "std::string", "ONNX name=dtype overrides">,
    Option<"f16Limit", "f16-limit", "double", /*default=*/"32752.0",
           "Largest magnitude an op may reach in f16 (half of 65504: headroom)">,
  ];
  let dependentDialects = ["kiln::top::TopDialect"];
}

def TopFoldQuantizeConstants
    : Pass<"top-fold-quantize-constants", "mlir::func::FuncOp"> {
  let summary = "Quantize weights of QDQ models at compile time";
  let description = [{
    quantize_linear(top.weight f32) becomes a top.weight of i8 (ui8 for
    uint8 zero points) values, round half to even and saturated, per-tensor
    or per-axis, at the quantize's location. The dequantize_linear that
    reads it stays, so INT8 lowering sees the integers and their scales;
    F32 lowering materializes the float weight.
  }];
  let constructor = "kiln::top::createFoldQuantizeConstantsPass()";
  let dependentDialects = ["kiln::top::TopDialect"];
}

def TopAbsorbQdq : Pass<"top-absorb-qdq", "mlir::func::FuncOp"> {
  let summary = "Turn QDQ pairs on activations into kiln.qparams (INT8 only)";
  let description = [{
    dequantize_linear(quantize_linear(x)) with per-tensor parameters, where x
    is computed (not a weight), is replaced by x, and x's producer gets
    `kiln.qparams` = [scale, zero_point] (a function argument gets it as an
    argument attribute). A uint8 pair becomes int8 with zero_point - 128.
    When a producer already has different parameters (two pairs on one
    tensor) the first is kept and a warning names both. Drops the fake
    quantization's rounding from the float semantics: run it only when
    compiling to INT8, after the fusions (so the parameters land on the op
    that finally produces the tensor).
  }];
  let constructor = "kiln::top::createAbsorbQdqPass()";
  let dependentDialects = ["kiln::top::TopDialect"];
}

#endif
