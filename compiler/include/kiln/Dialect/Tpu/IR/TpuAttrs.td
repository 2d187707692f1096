#ifndef KILN_TPU_ATTRS
#define KILN_TPU_ATTRS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "kiln/Dialect/Tpu/IR/TpuDialect.td"

def Tpu_LmemAttr : AttrDef<Tpu_Dialect, "Lmem"> {
  let mnemonic = "lmem";
  let summary = "Where a layer group keeps a value in LMEM";
  let description = [{
    Per-lane byte offsets of the value's two buffers: a value held for every
    slice, or one with a single buffer, has ping == pong; slices alternate
    between them otherwise. The layer-group pass sets it on every op in a
    tpu.group's body that defines a value (tpu.load and compute ops); code
    generation reads it.
  }];
  let parameters = (ins "uint32_t":$ping, "uint32_t":$pong);
  let assemblyFormat = "`<` $ping `,` $pong `>`";
}

def Tpu_PoolKind : I32EnumAttr<"PoolKind", "pooling kind", [
    I32EnumAttrCase<"Max", 0, "max">, I32EnumAttrCase<"Avg", 1, "avg">,
    I32EnumAttrCase<"Sum", 2, "sum">, I32EnumAttrCase<"Min", 3, "min">]> {
  let cppNamespace = "::kiln::tpu";
}

def Tpu_EltwiseKind : I32EnumAttr<"EltwiseKind", "elementwise kind", [
    I32EnumAttrCase<"Add", 0, "add">, I32EnumAttrCase<"Sub", 1, "sub">,
    I32EnumAttrCase<"Mul", 2, "mul">, I32EnumAttrCase<"Max", 3, "max">,
    I32EnumAttrCase<"Min", 4, "min">, I32EnumAttrCase<"Div", 5, "div">,
    I32EnumAttrCase<"Pow", 6, "pow">, I32EnumAttrCase<"PRelu", 7, "prelu">]> {
  let cppNamespace = "::kiln::tpu";
}

def Tpu_RequantAttr : AttrDef<Tpu_Dialect, "Requant"> {
  let mnemonic = "requant";
  let summary = "INT8 requantization: multipliers and right shift";
  let description = [{
    out = sat8(rshift_round(x0 * m0 + x1 * m1, rshift) + zp_out) with x0, x1
    the inputs less their zero points (docs/precision.md); m1 is 0 for ops
    with one input and for mul. The TIU record takes rshift in [0, 63].
  }];
  let parameters = (ins "int32_t":$m0, "int32_t":$m1, "int32_t":$rshift);
  let builders = [
    // One requantized input: m1 = 0.
    AttrBuilder<(ins "int32_t":$m0, "int32_t":$rshift), [{
      return $_get($_ctxt, m0, 0, rshift);
    }]>
  ];
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Tpu_DmaCopyAttr : AttrDef<Tpu_Dialect, "DmaCopy"> {
  let mnemonic = "copy";
  let summary = "One strided DDR-to-DDR GDMA copy of a tpu.dma program";
  let description = [{
    Copies shape [n, c, h, w] elements: element i goes from src_offset +
    Σ i_k * src_strides[k] of the source to dst_offset + Σ i_k *
    dst_strides[k] of the result (offsets and strides in elements). The
    source is an operand index, `self` (the result: pads copy its borders)
    or `fill`: then every addressed element is set to `bits`, the fill value
    encoded in the result's dtype. Printed as
    #tpu.copy<src = 0, src_offset = 0, dst_offset = 0, shape = [1, 1, 2, 3],
    src_strides = [0, 0, 3, 1], dst_strides = [0, 0, 3, 1]> and
    #tpu.copy<src = fill, dst_offset = 0, shape = [...], dst_strides = [...],
    bits = 0x3F800000>.
  }];
  let parameters = (ins "int64_t":$src, "int64_t":$srcOffset, "int64_t":$dstOffset,
                        ArrayRefParameter<"int64_t">:$shape,
                        ArrayRefParameter<"int64_t">:$srcStrides,
                        ArrayRefParameter<"int64_t">:$dstStrides, "uint32_t":$bits);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Sources other than an operand index.
    static constexpr int64_t kFill = -1;
    static constexpr int64_t kSelf = -2;
    bool isFill() const { return getSrc() == kFill; }
  }];
}

def Tpu_DmaProgramAttr : TypedArrayAttrBase<Tpu_DmaCopyAttr, "list of #tpu.copy">;

#endif
