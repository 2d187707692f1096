#ifndef KILN_TOP_OPS
#define KILN_TOP_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "kiln/Dialect/Top/IR/TopInterfaces.td"

include "kiln/Dialect/Top/IR/TopAttrs.td"

class Top_Op<string mnemonic, list<Trait> traits = []>
    : Op<Top_Dialect, mnemonic,
         !listconcat(traits, [Pure, Top_TypedRunDtype,
                              DeclareOpInterfaceMethods<ShapeInferenceInterface>])> {
  // Every op checks its operands and attributes: at least that they give a
  // result shape (resultShape()), plus what its semantics need.
  let hasVerifier = 1;
}

def AnyTensorOrNone : AnyTypeOf<[AnyRankedTensor, NoneType]>;

def Top_WeightOp : Op<Top_Dialect, "weight", [Pure, ConstantLike]> {
  let summary = "A constant tensor (initializer or Constant node)";
  let description = [{
    Holds its data in `value`, normally a dense resource attribute so large
    weights are not printed as literals.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "attr-dict `:` type($output)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Top_NoneOp : Op<Top_Dialect, "none", [Pure]> {
  let summary = "Absent optional operand";
  let results = (outs NoneType:$output);
  let assemblyFormat = "attr-dict";
}

def Top_ConvOp : Top_Op<"conv"> {
  let summary = "2-D convolution";
  let description = [{
    ONNX Conv on NCHW. `filter` is [oc, ic/group, kh, kw] and may be a weight or
    a value computed by the graph (a dynamic filter). `pads` is
    [top, left, bottom, right]. `do_relu` fuses a following ReLU.
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$filter,
                   AnyTensorOrNone:$bias,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$group,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Top_BatchNormOp : Top_Op<"batchnorm"> {
  let summary = "Inference-mode batch normalization";
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$scale,
                   AnyRankedTensor:$bias, AnyRankedTensor:$mean,
                   AnyRankedTensor:$variance,
                   DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Top_ReluOp : Top_Op<"relu"> {
  let summary = "Rectified linear unit";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

class Top_BinaryOp<string mnemonic> : Top_Op<mnemonic> {
  let description = [{ Elementwise with multidirectional (numpy) broadcasting. }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Top_AddOp : Top_BinaryOp<"add"> { let summary = "Elementwise addition"; }
def Top_MulOp : Top_BinaryOp<"mul"> { let summary = "Elementwise multiplication"; }
def Top_SubOp : Top_BinaryOp<"sub"> { let summary = "Elementwise subtraction"; }
def Top_DivOp : Top_BinaryOp<"div"> { let summary = "Elementwise division"; }
def Top_PowOp : Top_BinaryOp<"pow"> { let summary = "Elementwise power"; }
def Top_MaxOp : Top_BinaryOp<"max"> { let summary = "Elementwise maximum"; }
def Top_MinOp : Top_BinaryOp<"min"> { let summary = "Elementwise minimum"; }
def Top_PReluOp : Top_BinaryOp<"prelu"> {
  let summary = "lhs >= 0 ? lhs : lhs * rhs (rhs: slope, broadcast)";
}

def Top_ActiveOp : Top_Op<"active"> {
  let summary = "Unary elementwise function";
  let description = [{
    The function `mode` with parameters `alpha` and `beta` where it has them
    (values match firmware-abi's kiln_active_kind): leaky_relu(alpha),
    elu(alpha), selu(alpha, gamma = beta), hard_sigmoid(alpha, beta),
    clip(min = alpha, max = beta), scale (alpha * x + beta).
  }];
  let arguments = (ins AnyRankedTensor:$input, Top_ActiveMode:$mode,
                   DefaultValuedAttr<F64Attr, "0.0">:$alpha,
                   DefaultValuedAttr<F64Attr, "0.0">:$beta);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_SoftmaxOp : Top_Op<"softmax"> {
  let summary = "Softmax (or log-softmax) along an axis";
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$log);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_ReduceMode : I32EnumAttr<"ReduceMode", "reduction", [
    I32EnumAttrCase<"Sum", 0, "sum">, I32EnumAttrCase<"Mean", 1, "mean">,
    I32EnumAttrCase<"Max", 2, "max">, I32EnumAttrCase<"Min", 3, "min">,
    I32EnumAttrCase<"L2", 4, "l2">, I32EnumAttrCase<"SumSquare", 5, "sum_square">]> {
  let cppNamespace = "::kiln::top";
}

def Top_ReduceOp : Top_Op<"reduce"> {
  let summary = "Reduction over axes (non-negative, sorted)";
  let arguments = (ins AnyRankedTensor:$input, Top_ReduceMode:$mode,
                   DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_TransposeOp : Top_Op<"transpose"> {
  let summary = "Permute dimensions: output dim i is input dim perm[i]";
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_SliceOp : Top_Op<"slice"> {
  let summary = "Strided slice with one (start, end, step) per dimension";
  let description = [{
    Normalized: every dimension has an entry, starts are clamped and
    non-negative, steps non-zero; a negative step walks backwards from start
    (exclusive end may be -1 meaning "before index 0").
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_GatherOp : Top_Op<"gather"> {
  let summary = "Gather along an axis with constant indices";
  let description = [{
    `indices` (non-negative, normalized) are flattened; `indices_shape`
    gives their shape, which replaces dimension `axis` in the output (an
    empty indices_shape means a scalar index: the axis is removed).
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis,
                   DenseI64ArrayAttr:$indices, DenseI64ArrayAttr:$indices_shape);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_ExpandOp : Top_Op<"expand"> {
  let summary = "Broadcast to a shape (ONNX Expand), also used for Tile";
  let description = [{
    output = input broadcast to `shape` (numpy rules, so the result may be
    larger than `shape`). With `repeats` non-empty it is Tile instead: each
    dimension is repeated that many times and `shape` is ignored.
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$shape,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$repeats);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_PadMode : I32EnumAttr<"PadMode", "padding mode", [
    I32EnumAttrCase<"Constant", 0, "constant">, I32EnumAttrCase<"Reflect", 1, "reflect">,
    I32EnumAttrCase<"Edge", 2, "edge">]> {
  let cppNamespace = "::kiln::top";
}

def Top_PadOp : Top_Op<"pad"> {
  let summary = "Pad: pads = [begin_0, .., begin_r-1, end_0, .., end_r-1] (non-negative)";
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$pads,
                   Top_PadMode:$mode, DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_ResizeOp : Top_Op<"resize"> {
  let summary = "ONNX Resize/Upsample over H and W of an NCHW tensor";
  let description = [{
    The output's H and W are `out_hw`; `scales` are the H and W scales the
    model gives (out / in; when the model gives sizes, out / in). As in ONNX,
    align_corners maps output o to o * (in - 1) / (in * scale - 1): the
    resized length is in * scale, not the (floored) output extent. Linear
    clamps the source coordinate into the input; nearest clamps the index.
  }];
  let arguments = (ins AnyRankedTensor:$input, Top_ResizeMode:$mode,
                   DenseI64ArrayAttr:$out_hw, DenseF64ArrayAttr:$scales,
                   Top_ResizeCoordMode:$coord_mode, Top_ResizeNearestMode:$nearest_mode);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_DeconvOp : Top_Op<"deconv"> {
  let summary = "2-D transposed convolution (ONNX ConvTranspose)";
  let description = [{
    The filter is [ic, oc/group, kh, kw] as ONNX stores it, or, once
    `filter_reordered` is set by top-reorder-deconv-filter, [oc, ic/group, kh,
    kw] as the chip reads it. It may be a weight or a computed value. pads are
    [top, left, bottom, right]; output_padding adds rows/columns at the end.
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$filter,
                   AnyTensorOrNone:$bias,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$output_padding,
                   DefaultValuedAttr<I64Attr, "1">:$group,
                   DefaultValuedAttr<BoolAttr, "false">:$filter_reordered,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Top_GlobalMaxPoolOp : Top_Op<"global_maxpool"> {
  let summary = "Maximum over H and W";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

class Top_PoolOp<string mnemonic> : Top_Op<mnemonic> {
  let arguments = (ins AnyRankedTensor:$input,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Top_MaxPoolOp : Top_PoolOp<"maxpool"> { let summary = "2-D max pooling"; }
def Top_AvgPoolOp : Top_PoolOp<"avgpool"> { let summary = "2-D average pooling"; }

def Top_GlobalAvgPoolOp : Top_Op<"global_avgpool"> {
  let summary = "Average over H and W";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_MatMulOp : Top_Op<"matmul"> {
  let summary = "Matrix product with optional bias (ONNX MatMul and Gemm)";
  let description = [{
    output = input x right (+ bias). With `right_transpose`, right is [n, k]
    as in Gemm's transB. Gemm's alpha/beta are folded by the importer.
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$right,
                   AnyTensorOrNone:$bias,
                   DefaultValuedAttr<BoolAttr, "false">:$right_transpose,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Top_ReshapeOp : Top_Op<"reshape"> {
  let summary = "Reshape to the result type's static shape";
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_ConcatOp : Top_Op<"concat"> {
  let summary = "Concatenation along an axis";
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def Top_QuantizeLinearOp : Top_Op<"quantize_linear"> {
  let summary = "ONNX QuantizeLinear: saturate(round_half_to_even(x / scale) + zp)";
  let description = [{
    `scale` and `zero_point` have one entry (per-tensor) or one per slice of
    dimension `axis` (per-axis; `axis` is non-negative). The result is an
    integer tensor: i8, or ui8 for uint8 zero points (the Top interpreter
    holds the integer values as floats).
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseF64ArrayAttr:$scale,
                   DenseI64ArrayAttr:$zero_point,
                   DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Top_DequantizeLinearOp : Top_Op<"dequantize_linear"> {
  let summary = "ONNX DequantizeLinear: (q - zp) * scale, an f32 result";
  let description = [{
    `input` is an i8/ui8 tensor (a top.weight with integer data or a
    top.quantize_linear result). `scale`/`zero_point`/`axis` as in
    top.quantize_linear.
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseF64ArrayAttr:$scale,
                   DenseI64ArrayAttr:$zero_point,
                   DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

#endif
