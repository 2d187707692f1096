#ifndef KILN_TPU_ATTRS
#define KILN_TPU_ATTRS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "kiln/Dialect/Tpu/IR/TpuDialect.td"

def Tpu_ValuePlanAttr : AttrDef<Tpu_Dialect, "ValuePlan"> {
  let mnemonic = "value_plan";
  let summary = "How a layer group slices one value and where it keeps it in LMEM";
  let description = [{
    One value of a tpu.group's plan (#tpu.group_plan):
     - `shape`: its [n, c, h, w] layout in LMEM (a filter [1, oc, ic/groups,
       kh * kw], a bias [1, oc, 1, 1]; anything else its shape right-aligned
       to 4-D), as many elements as its tensor type;
     - `invariant`: the same in every slice (a load of the same part in
       each, or a value computed from such values only): one buffer, filled
       once and kept;
     - `lmem`: the per-lane byte offsets of its ping and pong buffers (slice
       k of the run order uses buffer k % buffers; equal when it has one),
       `bytes` per lane of each;
     - `live`: the first and last position its ping buffer is live at, on the
       layout's cycle of (ops + 2) * buffers positions (per slice: its loads,
       each op in order, its stores); the pong buffer one slice (ops + 2
       positions) later. An invariant value is live at every position;
     - `banks`: the 16 KiB LMEM banks its buffers touch;
     - `hold`: per slice, the part it holds in LMEM, and `store`: per slice,
       the part stored to DDR (empty unless the value escapes the group).
       Each part is (n, c, h, w), each dimension `offset+size`; all 0 when
       the slice does not touch the value.
    Printed as #tpu.value_plan<shape = [1, 8, 4, 4], invariant, lmem = [0, 0],
    bytes = 64, live = [0, 3], banks = [0], hold = [(0+1, 0+8, 0+4, 0+4)],
    store = []>.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "bool":$invariant,
                        "uint32_t":$ping, "uint32_t":$pong, "uint32_t":$bytes,
                        "int64_t":$liveFirst, "int64_t":$liveLast, "uint32_t":$banks,
                        ArrayRefParameter<"::kiln::tpu::SliceRange">:$hold,
                        ArrayRefParameter<"::kiln::tpu::SliceRange">:$store);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The banks of `bytes` at ping and at pong (kiln_lmem_bank_mask).
    static uint32_t banksOf(uint32_t ping, uint32_t pong, uint32_t bytes);
  }];
}

def Tpu_GroupPlanAttr : AttrDef<Tpu_Dialect, "GroupPlan"> {
  let mnemonic = "group_plan";
  let summary = "A layer group's slicing, schedule order and LMEM layout";
  let description = [{
    The layer-group pass's decision for one tpu.group, which code generation
    reads as it is (it never slices again):
     - `slices`: how many parts [n, c, h, w] are split into (C in whole lane
       groups of 64 channels; W in column parts with halo columns); slice
       (((n * C) + c) * H + h) * W + w;
     - `buffers`: 1, or 2 for ping-pong buffers of the sliced values;
     - `order`: the slices the schedule runs, in order (the slices no value is
       stored in are left out): its timesteps after the prologue;
     - `values`: a #tpu.value_plan per value of the body, in the order
       GroupOp::getPlannedValues gives (the order the ops first use them).
    An operand's rows a windowed op reads in a slice follow from the op's
    window and the rows its result holds there (lg::readsOf).
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$slices, "int64_t":$buffers,
                        ArrayRefParameter<"int64_t">:$order,
                        ArrayRefParameter<"ValuePlanAttr">:$values);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The number of slices: the product of `slices`.
    int64_t getSliceCount() const;
  }];
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
