#ifndef KILN_TPU_OPS
#define KILN_TPU_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "kiln/Dialect/Tpu/IR/TpuInterfaces.td"

include "kiln/Dialect/Top/IR/TopAttrs.td"
include "kiln/Dialect/Tpu/IR/TpuAttrs.td"

class Tpu_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tpu_Dialect, mnemonic, !listconcat(traits, [Top_TypedRunDtype])>;

def AnyTensorOrNone : AnyTypeOf<[AnyRankedTensor, NoneType]>;

def Tpu_Conv2DOp : Tpu_Op<"conv2d", [Pure, Tpu_RunsOnTiu, Tpu_HasFilter,
    DeclareOpInterfaceMethods<Tpu_SliceableOpInterface, ["getHWindow", "getWWindow",
                                                         "readsWholeOperand",
                                                         "mixesChannels", "isChannelSliceable"]>]> {
  let summary = "2-D convolution on the TIU";
  let description = [{
    filter [oc, ic/group, kh, kw]; pads [top, left, bottom, right]. The filter
    may be a weight or a dynamic value; either way a layer group loads it whole.
    In INT8 `bias` is the requantization table tensor<oc x 3 x i32> (bias at
    input scale * filter scale, multiplier, right shift) and is always present.
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$filter,
                   AnyTensorOrNone:$bias,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   I64Attr:$group, BoolAttr:$do_relu);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_Pool2DOp : Tpu_Op<"pool2d", [Pure, Tpu_RunsOnTiu,
    DeclareOpInterfaceMethods<Tpu_SliceableOpInterface, ["getHWindow", "getWWindow"]>]> {
  let summary = "2-D max or average pooling on the TIU";
  let description = [{
    INT8 avg and sum carry `quant` (#tpu.requant with m1 = 0); max and min
    keep their input's quantization.
  }];
  let arguments = (ins AnyRankedTensor:$input, Tpu_PoolKind:$kind,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, BoolAttr:$count_include_pad,
                   BoolAttr:$do_relu, OptionalAttr<Tpu_RequantAttr>:$quant);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_EltwiseOp : Tpu_Op<"eltwise", [Pure, Tpu_RunsOnTiu, Tpu_Pointwise,
                                        Tpu_SliceableOpInterface]> {
  let summary = "Binary elementwise op with broadcasting on the TIU";
  let description = [{
    INT8 (add, sub, mul, max, min) carries `quant` (#tpu.requant).
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                   Tpu_EltwiseKind:$kind, BoolAttr:$do_relu,
                   OptionalAttr<Tpu_RequantAttr>:$quant);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_ReluOp : Tpu_Op<"relu", [Pure, Tpu_RunsOnTiu, Tpu_Pointwise, Tpu_SliceableOpInterface]> {
  let summary = "ReLU on the TIU";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_ActiveOp : Tpu_Op<"active", [Pure, Tpu_RunsOnTiu, Tpu_Pointwise,
    DeclareOpInterfaceMethods<Tpu_SliceableOpInterface, ["readsWholeOperand"]>]> {
  let summary = "Unary function on the TIU";
  let description = [{
    The function `mode` (top.active's, or relu) with parameters alpha and beta.
    In INT8 `table` is the 256-entry lookup table (tensor<256x!quant...> or
    i8, indexed by the input's bits as uint8) that computes the function from
    the input's quantization to the output's.
  }];
  let arguments = (ins AnyRankedTensor:$input, Optional<AnyRankedTensor>:$table,
                   Top_ActiveMode:$mode, F64Attr:$alpha, F64Attr:$beta);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_CastOp : Tpu_Op<"cast", [Pure, Tpu_RunsOnTiu, Tpu_Pointwise, Tpu_SliceableOpInterface]> {
  let summary = "Dtype conversion on the TIU";
  let description = [{
    Converts between the input's and the result's element types: float to
    float (round to nearest even when narrowing), float to INT8 (quantize:
    round half to even of x / scale, plus zero point, saturated), INT8 to
    float (dequantize) and INT8 to INT8 (requantize with `quant`,
    a #tpu.requant with m1 = 0).
  }];
  let arguments = (ins AnyRankedTensor:$input, OptionalAttr<Tpu_RequantAttr>:$quant);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_Deconv2DOp : Tpu_Op<"deconv2d", [Pure, Tpu_RunsOnTiu, Tpu_HasFilter,
    DeclareOpInterfaceMethods<Tpu_SliceableOpInterface, ["getHWindow", "readsWholeOperand",
                                                         "mixesChannels", "isChannelSliceable",
                                                         "isWidthSliceable"]>]> {
  let summary = "2-D transposed convolution on the TIU";
  let description = [{
    filter [oc, ic/group, kh, kw] (chip order); pads [top, left, bottom,
    right] crop the full transposed-conv output; the result type includes
    ONNX's output_padding. INT8 as tpu.conv2d.
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$filter,
                   AnyTensorOrNone:$bias,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   I64Attr:$group, BoolAttr:$do_relu);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_ResizeOp : Tpu_Op<"resize", [Pure, Tpu_RunsOnTiu,
    DeclareOpInterfaceMethods<Tpu_SliceableOpInterface, ["isWidthSliceable"]>]> {
  let summary = "Nearest or linear resize of H and W on the TIU";
  let description = [{
    mode, coord_mode, nearest_mode as top.resize's; scales are out / in for H
    and W as the model gives them.
  }];
  let arguments = (ins AnyRankedTensor:$input, Top_ResizeMode:$mode,
                   Top_ResizeCoordMode:$coord_mode, Top_ResizeNearestMode:$nearest_mode,
                   DenseF64ArrayAttr:$scales);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_DmaOp : Tpu_Op<"dma", [Pure]> {
  let summary = "Data movement by DDR-to-DDR GDMA copies";
  let description = [{
    Transpose, slice, gather, expand, tile, pad: the result is written by
    `program`, a list of strided copies (#tpu.copy) that run in order.
    With `in_place` (set by tpu-fold-transposes on one copy of every input
    element) the layer group that computes the input stores it through the
    copy's strides straight into the result's memory, and the dma runs no
    command.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, Tpu_DmaProgramAttr:$program,
                   UnitAttr:$in_place);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    auto getCopies() { return getProgram().getAsRange<DmaCopyAttr>(); }
  }];
  let hasVerifier = 1;
}

def Tpu_ReshapeOp : Tpu_Op<"reshape", [Pure, Tpu_DdrView]> {
  let summary = "Reshape: aliases its input's DDR memory, no commands";
  let description = [{
    Folds a reshape of a reshape into one (lowering reshapes each op's result
    back to its Top shape and the next op's operand to its own 4-D shape: the
    pair cancels, and the two TIU ops can share a layer group).
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Tpu_ViewOp : Tpu_Op<"view", [Pure, Tpu_DdrView]> {
  let summary = "A contiguous part of its input's DDR memory, no commands";
  let description = [{
    The result's elements are the input's elements [offset, offset + size) in
    row-major order, with the input's element type: a slice or split along
    the outermost dimension that is not 1. tpu-form-views makes them from
    tpu.dma copies that move one contiguous range.
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$offset);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_FoldRowsOp : Tpu_Op<"fold_rows", [Pure, Tpu_DdrView]> {
  let summary = "A conv input with its kernel rows as channels, read by loads";
  let description = [{
    out[n, ky * C + c, y, x] = in[n, c, y * stride + ky * dilation - pad_top, x],
    0 where that row lies outside the input: the input of a conv whose KH
    kernel rows became channels (tpu-fold-stem-rows). No commands of its
    own: the layer group that reads it loads each kernel row's channels
    straight from the input's DDR memory into lanes [ky * C, ky * C + C)
    (GDMA lane-offset loads), so KH * C is at most 64.
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$kernel_h, I64Attr:$stride_h,
                   I64Attr:$dilation_h, I64Attr:$pad_top);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Input row that output row `y` reads for kernel row `ky` (may lie
    /// outside [0, H): then the element is 0).
    int64_t sourceRow(int64_t y, int64_t ky) {
      return y * int64_t(getStrideH()) + ky * int64_t(getDilationH()) - int64_t(getPadTop());
    }
  }];
}

def Tpu_UnfoldRowsOp : Tpu_Op<"unfold_rows", [Pure]> {
  let summary = "Row-folded channels back to rows, written by the producer's stores";
  let description = [{
    out[n, c, y * rows + r, x] = in[n, r * C + c, y, x]: the inverse of a
    tpu.fold_rows with kernel_h = stride_h = `rows`. A narrow conv computes R
    output rows per pass on R times the lanes (tpu-fold-output-rows); its
    folded result ends here. No commands of its own: the layer group that
    computes the input stores lanes [r * C, r * C + C) straight into rows
    r, r + R, ... of this result's DDR memory (lane-offset stores, runs of
    W elements), so the input lives in this result's memory.
  }];
  let arguments = (ins AnyRankedTensor:$input, ConfinedAttr<I64Attr, [IntMinValue<2>]>:$rows);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_StridedViewOp : Tpu_Op<"strided_view", [Pure, Tpu_DdrView]> {
  let summary = "A strided reading of its input's DDR memory, gathered by loads";
  let description = [{
    Result element f (row-major) is the input's element
    offset + sum_k digit_k(f) * strides[k], the digits of f in the mixed
    radix `sizes` (outermost first): a transpose or permute whose consumers'
    layer-group loads read it with these strides (tpu-fold-transposes). No
    commands of its own; its users are TIU ops, which read it through loads.
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$offset,
                   DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_ConcatOp : Tpu_Op<"concat", [Pure]> {
  let summary = "Concatenation by DDR-to-DDR GDMA copies";
  let description = [{
    With `in_place` (set by tpu-address-assign) the producers of the inputs
    write them into the result's memory and the concat runs no command.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$axis,
                   UnitAttr:$in_place);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_GroupOp : Tpu_Op<"group", [SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A layer group: ops that run slice by slice in LMEM";
  let description = [{
    The body loads external inputs (tpu.load), computes, and stores escaping
    values (tpu.store, yielded as the group's results). `plan` records how
    the work is sliced, the order the slices run in, and every value's part
    per slice and LMEM buffers (#tpu.group_plan); code generation reads it.
    With 2 buffers the sliced values alternate between their ping and pong
    buffers, so GDMA and TIU overlap. H slices may be tapered (the first and
    last half the others, so less of the pipeline's fill and drain is
    exposed): the ranges say so.
  }];
  let arguments = (ins Tpu_GroupPlanAttr:$plan);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict `:` type($outputs) $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The values the plan describes, in its order: walking the body's
    /// compute ops in order, each op's operands (a filter view read through
    /// to the value it views, none operands skipped) not seen before, then
    /// its result.
    llvm::SmallVector<mlir::Value> getPlannedValues();
  }];
}

def Tpu_YieldOp : Tpu_Op<"yield", [Pure, Terminator, HasParent<"GroupOp">]> {
  let summary = "Ends a layer group's body";
  let arguments = (ins Variadic<AnyRankedTensor>:$operands);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, mlir::ValueRange()); }]>];
  let assemblyFormat = "($operands^ `:` type($operands))? attr-dict";
  let hasVerifier = 1;
}

def Tpu_LoadOp : Tpu_Op<"load", [Pure]> {
  let summary = "GDMA load of a DDR tensor into LMEM";
  let description = [{
    The group's plan says which parts it loads per slice; a value invariant
    there is loaded whole once and kept for every slice. Such a coefficient
    with `prefetch_groups` = k is loaded by the k-th layer group before this
    one, while that group computes, into LMEM no group between them touches;
    this group then starts with it in place.
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$prefetch_groups);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tpu_StoreOp : Tpu_Op<"store", [Pure]> {
  let summary = "GDMA store of an LMEM tensor to DDR";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif
