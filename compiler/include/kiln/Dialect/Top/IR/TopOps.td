#ifndef KILN_TOP_OPS
#define KILN_TOP_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "kiln/Dialect/Top/IR/TopInterfaces.td"

def Top_Dialect : Dialect {
  let name = "top";
  let summary = "Framework-neutral float tensor ops";
  let description = [{
    The importer's target: NCHW float ops with ONNX semantics, each with shape
    inference and a reference implementation in the Top interpreter.
  }];
  let cppNamespace = "::kiln::top";
}

class Top_Op<string mnemonic, list<Trait> traits = []>
    : Op<Top_Dialect, mnemonic,
         !listconcat(traits, [Pure, DeclareOpInterfaceMethods<ShapeInferenceInterface>])>;

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
  let hasVerifier = 1;
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

#endif
