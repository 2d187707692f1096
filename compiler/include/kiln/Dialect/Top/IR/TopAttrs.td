#ifndef KILN_TOP_ATTRS
#define KILN_TOP_ATTRS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "kiln/Dialect/Top/IR/TopDialect.td"

// Modes that Top and Tpu ops share. Their values are firmware-abi's
// (commands.h): codegen puts them into TIU records as they are.

// kiln_active_kind.
def Top_ActiveMode : I32EnumAttr<"ActiveMode", "unary function", [
    I32EnumAttrCase<"Relu", 0, "relu">,
    I32EnumAttrCase<"LeakyRelu", 1, "leaky_relu">, I32EnumAttrCase<"Sigmoid", 2, "sigmoid">,
    I32EnumAttrCase<"Tanh", 3, "tanh">, I32EnumAttrCase<"Exp", 4, "exp">,
    I32EnumAttrCase<"Log", 5, "log">, I32EnumAttrCase<"Sqrt", 6, "sqrt">,
    I32EnumAttrCase<"Rsqrt", 7, "rsqrt">, I32EnumAttrCase<"Reciprocal", 8, "reciprocal">,
    I32EnumAttrCase<"Abs", 9, "abs">, I32EnumAttrCase<"Neg", 10, "neg">,
    I32EnumAttrCase<"Erf", 11, "erf">, I32EnumAttrCase<"Elu", 12, "elu">,
    I32EnumAttrCase<"Selu", 13, "selu">, I32EnumAttrCase<"Softplus", 14, "softplus">,
    I32EnumAttrCase<"HardSigmoid", 15, "hard_sigmoid">,
    I32EnumAttrCase<"HardSwish", 16, "hard_swish">, I32EnumAttrCase<"Clip", 17, "clip">,
    I32EnumAttrCase<"Square", 18, "square">, I32EnumAttrCase<"Gelu", 19, "gelu">,
    I32EnumAttrCase<"Scale", 20, "scale">, I32EnumAttrCase<"Silu", 21, "silu">,
    I32EnumAttrCase<"Mish", 22, "mish">]> {
  let cppNamespace = "::kiln::top";
}

// kiln_resize_mode, kiln_resize_coord and kiln_resize_nearest.
def Top_ResizeMode : I32EnumAttr<"ResizeMode", "interpolation", [
    I32EnumAttrCase<"Nearest", 0, "nearest">, I32EnumAttrCase<"Linear", 1, "linear">]> {
  let cppNamespace = "::kiln::top";
}

def Top_ResizeCoordMode : I32EnumAttr<"ResizeCoordMode", "resize coordinate transform", [
    I32EnumAttrCase<"HalfPixel", 0, "half_pixel">,
    I32EnumAttrCase<"Asymmetric", 1, "asymmetric">,
    I32EnumAttrCase<"AlignCorners", 2, "align_corners">,
    I32EnumAttrCase<"PytorchHalfPixel", 3, "pytorch_half_pixel">]> {
  let cppNamespace = "::kiln::top";
}

def Top_ResizeNearestMode : I32EnumAttr<"ResizeNearestMode", "nearest resize rounding", [
    I32EnumAttrCase<"RoundPreferFloor", 0, "round_prefer_floor">,
    I32EnumAttrCase<"RoundPreferCeil", 1, "round_prefer_ceil">,
    I32EnumAttrCase<"Floor", 2, "floor">, I32EnumAttrCase<"Ceil", 3, "ceil">]> {
  let cppNamespace = "::kiln::top";
}

// The dtype an op runs in (firmware-abi's kiln_dtype values): the
// discardable attribute `kiln.dtype` that top-assign-precision sets,
// lowering carries to Tpu ops and tpu-apply-precision turns into types.
def Top_DType : I32EnumAttr<"DType", "dtype an op runs in", [
    I32EnumAttrCase<"F32", 0, "f32">, I32EnumAttrCase<"F16", 1, "f16">,
    I32EnumAttrCase<"BF16", 2, "bf16">, I32EnumAttrCase<"INT8", 3, "int8">]> {
  let cppNamespace = "::kiln::top";
  let genSpecializedAttr = 0;
}

def Top_DTypeAttr : EnumAttr<Top_Dialect, Top_DType, "dtype"> {
  let assemblyFormat = "`<` $value `>`";
}

// Checks an op's `kiln.dtype` (TopAttrs.h): Top and Tpu ops carry it.
def Top_TypedRunDtype : NativeOpTrait<"TypedRunDtype"> {
  let cppNamespace = "::kiln::top";
}

#endif
