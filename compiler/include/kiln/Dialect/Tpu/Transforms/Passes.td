#ifndef KILN_TPU_PASSES
#define KILN_TPU_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTopToTpu : Pass<"convert-top-to-tpu", "mlir::ModuleOp"> {
  let summary = "Lower Top ops to chip ops (F32)";
  let description = [{
    Conv, pooling, elementwise ops map one to one; a matmul with a weight right
    operand becomes a 1x1 conv between reshapes; global average pooling becomes
    a pool whose kernel covers H and W. Batch norms must have been fused.
    A dialect conversion: a Top op no pattern lowers (top.weight and top.none
    stay) fails legalization, named at its node.
  }];
  let constructor = "kiln::tpu::createConvertTopToTpuPass()";
  let dependentDialects = ["kiln::tpu::TpuDialect"];
}

def TpuApplyPrecision : Pass<"tpu-apply-precision", "mlir::func::FuncOp"> {
  let summary = "Give Tpu ops the types of their kiln.dtype";
  let description = [{
    F16/BF16 ops take narrow operands and results (conv biases stay F32),
    INT8 ops quantized ones (per-channel filters with a requantization table,
    multipliers for pools and eltwise, lookup tables for active functions);
    data movement follows its input; tpu.cast goes where types meet and net
    outputs return to F32. An op INT8 cannot express runs in F16 and is
    reported in the module's kiln.precision_report. docs/precision.md.
  }];
  let options = [
    Option<"asymmetric", "asymmetric", "bool", /*default=*/"false",
           "Quantize activations with a zero point (min/max) instead of symmetric">,
    Option<"biasCorrection", "bias-correction", "bool", /*default=*/"true",
           "Correct an INT8 conv's bias for its filter's rounding by the mean of its input "
           "(kiln.channel_mean)">,
  ];
  let dependentDialects = ["kiln::tpu::TpuDialect", "kiln::top::TopDialect",
                           "mlir::quant::QuantizationDialect"];
}

def TpuFuseCasts : Pass<"tpu-fuse-casts", "mlir::func::FuncOp"> {
  let summary = "Remove redundant casts";
  let description = [{
    A cast to its input's type goes; a cast of an exact widening cast
    (f16/bf16 to f32) reads the narrow value directly; a quantize of a
    dequantize becomes one requantization (or nothing with equal parameters);
    equal casts of one value merge.
  }];
}

def TpuFormViews : Pass<"tpu-form-views", "mlir::func::FuncOp"> {
  let summary = "Turn copies of one contiguous range into views";
  let description = [{
    A tpu.dma that copies one contiguous range of its first input onto its
    whole result (a slice or split along the outermost dimension that is not
    1) becomes a tpu.view of that range: its consumers read the input's
    memory and no command runs.
  }];
}

def TpuFoldTransposes : Pass<"tpu-fold-transposes", "mlir::func::FuncOp"> {
  let summary = "Transposes read by layer groups become strides of their loads";
  let description = [{
    A tpu.dma that permutes its input (one strided copy onto its whole
    result) and whose result reaches only TIU ops, through reshapes, views
    and strided views, becomes a tpu.strided_view per value those ops read:
    their layer groups' loads read the input through the permuted strides
    and the DDR-to-DDR copy goes. Kept where the cost model (cost.h) says
    the copy plus contiguous loads are faster than the strided loads (a
    permute of the innermost dimension reads single elements, each a burst).
    Where a TIU op's result reaches only the copy, its layer group may
    instead store it through the inverse strides into the copy's result
    (the dma marked in_place, no command), when that costs less: once for
    every reader. Not with keep-tensors, where every value keeps its bytes.
  }];
  let options = [
    Option<"keepTensors", "keep-tensors", "bool", /*default=*/"false",
           "Keep every value's own bytes (no in-place transposes)">,
  ];
}

def TpuFoldStemRows : Pass<"tpu-fold-stem-rows", "mlir::func::FuncOp"> {
  let summary = "Fold the kernel rows of narrow convs into channels";
  let description = [{
    A conv whose input channels fill few of the MAC array's channel slots (an
    RGB stem) reads a tpu.fold_rows that gathers, for every kernel row, the input
    rows it reads into channels of their own, and a conv with a one-row
    kernel over KH times the channels (the filter only reshaped). Kept where
    the chip's cost model says the gather plus the new conv are faster.
  }];
  let dependentDialects = ["kiln::top::TopDialect"];
}

def TpuHoistShrinkingOps : Pass<"tpu-hoist-shrinking-ops", "mlir::func::FuncOp"> {
  let summary = "Ops that read large maps into smaller results move next to them";
  let description = [{
    An op that is the last reader of operands larger than its result moves
    right after the latest of its operands when that lets operands whose
    readers were more than `max-group-ops` ops apart stay in one layer group,
    and the bytes kept on chip outweigh those of a result whose readers were
    close and now are not. Program order only: every op computes what it did.
  }];
  let options = [
    Option<"maxGroupOps", "max-group-ops", "unsigned", /*default=*/"16",
           "Most ops in a layer group (as tpu-layer-group)">
  ];
}

def TpuFoldOutputRows : Pass<"tpu-fold-output-rows", "mlir::func::FuncOp"> {
  let summary = "Convs with few output channels compute several rows per pass";
  let description = [{
    A chain of convs (one group) with few output channels and the pointwise
    ops between them computes R output rows per pass as R blocks of
    channels: the first conv (unit H stride) gets a kernel R - 1 rows taller
    and stride R, or, for a stem on tpu.fold_rows, a fold of the rows R
    passes read; the next ones read the folded rows through rearranged taps
    (R / S rows per pass for H stride S). Readers outside the chain read a
    tpu.unfold_rows (stored in place by the producing layer group), as do
    the readers of the chain's end. R is chosen by the modelled cycles of
    the layer groups the group search forms around the chain; none if
    folding is not faster.
    Not run when every op is its own layer group or every activation is
    kept (the folded intermediates are no model tensors).
  }];
  let options = [
    Option<"maxGroupOps", "max-group-ops", "unsigned", /*default=*/"16",
           "Most ops in a layer group (as tpu-layer-group)">
  ];
  let dependentDialects = ["kiln::top::TopDialect"];
}

def TpuSpreadLanes : Pass<"tpu-spread-lanes", "mlir::func::FuncOp"> {
  let summary = "Chains of unary elementwise ops on few channels run over all lanes";
  let description = [{
    A chain of activations, ReLUs and casts over a [N, C, H, W] tensor with
    C < 64 runs on the view [N, C*k, H/k, W] (k the largest divisor of H
    with C*k <= 64): the same elements in the same DDR layout, C*k lanes
    busy instead of C. tpu.reshape ops before and after the chain end the
    layer groups around it; kept only where the EU passes saved exceed the
    DDR trips that costs its input and output.
  }];
}

def TpuLayerGroup : Pass<"tpu-layer-group", "mlir::func::FuncOp"> {
  let summary = "Group chains of ops into LMEM-resident layer groups and slice them";
  let description = [{
    Splits each run of TIU ops into groups by dynamic programming over the
    modelled cycles (kiln/LayerGroup/GroupSearch.h); each group gets the
    fastest N x C x H slicing whose working set (held coefficients plus, per
    buffer, every sliced tensor) fits 64 lanes x 256 KiB, costed by the chip's
    scheduler over the queues it would run (kiln/LayerGroup/Schedule.h). Each
    group becomes a tpu.group whose body loads its external inputs (weights
    held for every slice), computes, and stores what escapes. Every value in
    the body gets an LMEM address; with two buffers the loads of slice i+1
    overlap the compute of slice i. Then held coefficients move to earlier
    groups that load them while they compute, where the cost model says so
    (kiln/LayerGroup/Prefetch.h).
  }];
  let constructor = "kiln::tpu::createLayerGroupPass()";
  let options = [
    Option<"maxGroupOps", "max-group-ops", "unsigned", /*default=*/"16",
           "Most compute ops in one group">,
    Option<"enabled", "enabled", "bool", /*default=*/"true",
           "When false every op forms its own group">,
    Option<"maxPrefetchGroups", "max-prefetch-groups", "unsigned", /*default=*/"4",
           "How many groups ahead a group may load coefficients (0: none)">,
  ];
}

def TpuAddressAssign : Pass<"tpu-address-assign", "mlir::ModuleOp"> {
  let summary = "Plan DDR: coefficients, then activations shared by liveness";
  let description = [{
    Coefficients go to the coefficient region. The neuron region after it
    holds the net's inputs and outputs, each its own for the whole run, then
    the other activation buffers (kiln/Dialect/Tpu/Analysis/DdrLiveness.h)
    placed greedily by size (largest first, at the lowest 4 KiB-aligned
    offset free during its lifetime), so buffers never live at the same time
    share bytes. Reshapes and views alias their input; a concat whose inputs'
    producers can write into its result is marked `in_place`; a group of
    elementwise ops writes its result over an input of the same bytes that
    dies there. Sets
    `ddr_addr` on ops (one per result) and `tpu.ddr_addr` on arguments, and
    `tpu.coeff_size` / `tpu.neuron_size` / `tpu.activation_peak` (the bytes
    of the largest set of buffers live at once) on the module, and
    `tpu.keep_tensors` with keep-tensors.
  }];
  let constructor = "kiln::tpu::createAddressAssignPass()";
  let options = [
    Option<"keepTensors", "keep-tensors", "bool", /*default=*/"false",
           "Give every activation its own bytes, so all of them stay readable after a run">,
  ];
}

#endif
