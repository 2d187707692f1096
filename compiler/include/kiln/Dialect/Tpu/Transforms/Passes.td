#ifndef KILN_TPU_PASSES
#define KILN_TPU_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTopToTpu : Pass<"convert-top-to-tpu", "mlir::ModuleOp"> {
  let summary = "Lower Top ops to chip ops (F32)";
  let description = [{
    Conv, pooling, elementwise ops map one to one; a matmul with a weight right
    operand becomes a 1x1 conv between reshapes; global average pooling becomes
    a pool whose kernel covers H and W. Batch norms must have been fused.
  }];
  let constructor = "kiln::tpu::createConvertTopToTpuPass()";
  let dependentDialects = ["kiln::tpu::TpuDialect"];
}

def TpuLayerGroup : Pass<"tpu-layer-group", "mlir::func::FuncOp"> {
  let summary = "Group chains of ops into LMEM-resident layer groups and slice them";
  let description = [{
    Greedily grows groups of TIU ops in program order, choosing for each the
    fewest N x H slices whose working set (held coefficients plus, per buffer,
    every sliced tensor) fits 64 lanes x 256 KiB, with halo rows for convs and
    pools. Each group becomes a tpu.group whose body loads its external inputs
    (weights held for every slice), computes, and stores what escapes. Every
    value in the body gets an LMEM address; with two buffers the loads of slice
    i+1 overlap the compute of slice i.
  }];
  let constructor = "kiln::tpu::createLayerGroupPass()";
  let options = [
    Option<"maxGroupOps", "max-group-ops", "unsigned", /*default=*/"8",
           "Most compute ops in one group">,
    Option<"enabled", "enabled", "bool", /*default=*/"true",
           "When false every op forms its own group">,
  ];
}

def TpuAddressAssign : Pass<"tpu-address-assign", "mlir::ModuleOp"> {
  let summary = "Assign DDR offsets to every tensor";
  let description = [{
    Coefficients go to the coefficient region, activations and I/O to the
    neuron region after it, each aligned to 4 KiB; reshapes alias their input.
    Sets `ddr_addr` on ops (one per result) and `tpu.ddr_addr` on arguments,
    and `tpu.coeff_size` / `tpu.neuron_size` on the module.
  }];
  let constructor = "kiln::tpu::createAddressAssignPass()";
}

#endif
