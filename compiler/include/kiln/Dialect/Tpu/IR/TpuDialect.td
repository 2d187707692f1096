#ifndef KILN_TPU_DIALECT
#define KILN_TPU_DIALECT

include "mlir/IR/OpBase.td"

def Tpu_Dialect : Dialect {
  let name = "tpu";
  let summary = "BM1684X chip ops";
  let description = [{
    Ops the TIU and GDMA engines run, with dtypes in their tensor types: f32,
    f16, bf16, i32 (requantization tables) and, for INT8,
    !quant.uniform<i8:f32, scale:zero_point> (per-tensor activations) or
    !quant.uniform<i8:f32:0, {scales}> (per-channel weights). A tpu.group
    carries its slicing and LMEM placement as its `plan`
    (#tpu.group_plan). An op computing R
    output rows per pass as R channel blocks (tpu-fold-output-rows) carries
    `tpu.folded_rows` = R: its result is not a model tensor's layout; a
    folded conv or deconv also carries `tpu.model_macs`, the unfolded op's
    multiply-accumulates (the roofline's count, zero taps excluded), and
    its weights `tpu.model_bytes`, the bytes of the weight they replace (the
    roofline's minimum DDR bytes).
    docs/precision.md has the INT8 conventions.
  }];
  let cppNamespace = "::kiln::tpu";
  let dependentDialects = ["::mlir::quant::QuantizationDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The name of the row-folding factor of an op's result.
    static llvm::StringRef foldedRowsAttrName() { return "tpu.folded_rows"; }
    /// The name of a folded conv's or deconv's model MAC count.
    static llvm::StringRef modelMacsAttrName() { return "tpu.model_macs"; }
    /// The name of a folded weight's model size in bytes.
    static llvm::StringRef modelBytesAttrName() { return "tpu.model_bytes"; }
  }];
}

#endif
