#ifndef KILN_TPU_INTERFACES
#define KILN_TPU_INTERFACES

include "mlir/IR/OpBase.td"

// Traits: what an op is to code generation and the layer-group planner. Each
// list of ops lives here, in the ops' definitions; C++ asks the trait.

def Tpu_RunsOnTiu : NativeOpTrait<"RunsOnTiu"> {
  let cppNamespace = "::kiln::tpu";
  // One TIU record per op (codegen::fillTiuRecord); layer groups are runs of
  // these ops.
}

def Tpu_Pointwise : NativeOpTrait<"Pointwise"> {
  let cppNamespace = "::kiln::tpu";
  // Each output element reads the operand elements at its own position
  // (broadcast dimensions of size 1 aside; a lookup table is read whole):
  // an output slice reads the same slice of its operands.
}

def Tpu_HasFilter : NativeOpTrait<"HasFilter"> {
  let cppNamespace = "::kiln::tpu";
  // Operand 1 is a filter [oc, ic/group, kh, kw] and operand 2 a bias (INT8:
  // a requantization table) or none; in LMEM both are laid out by output
  // channel (output channel o on lane o % 64).
}

def Tpu_DdrView : NativeOpTrait<"DdrView"> {
  let cppNamespace = "::kiln::tpu";
  // No device work and no memory of its own: the result's bytes are operand
  // 0's DDR bytes, seen with another shape (reshape), in part (view) or
  // gathered by the loads of the layer group that reads it (fold_rows).
}

def Tpu_SliceableOpInterface : OpInterface<"SliceableOp"> {
  let description = [{
    How a layer group splits a TIU op into slices of its output (along N, C,
    H and W): which input rows, columns and channels an output slice reads
    and which operands it reads whole. The defaults describe a pointwise op.
  }];
  let cppNamespace = "::kiln::tpu";
  let methods = [
    InterfaceMethod<"The window of input 0's rows that each output row reads "
                    "(a halo along H), or nullopt if output row y reads input "
                    "row y (or, for a resize, rows the op maps it to).",
                    "std::optional<::kiln::tpu::HWindow>", "getHWindow", (ins), [{}],
                    [{ return std::nullopt; }]>,
    InterfaceMethod<"The window of input 0's columns that each output column "
                    "reads (a halo along W), or nullopt if output column x reads "
                    "input column x.",
                    "std::optional<::kiln::tpu::HWindow>", "getWWindow", (ins), [{}],
                    [{ return std::nullopt; }]>,
    InterfaceMethod<"Whether the output may be split along W (its columns).",
                    "bool", "isWidthSliceable", (ins), [{}], [{ return true; }]>,
    InterfaceMethod<"Whether an output slice reads operand `operandNumber` "
                    "whole (filters, biases, lookup tables).",
                    "bool", "readsWholeOperand", (ins "unsigned":$operandNumber), [{}],
                    [{ return false; }]>,
    InterfaceMethod<"Whether an output channel reads input channels other than "
                    "its own (so every slice reads all of input 0's channels).",
                    "bool", "mixesChannels", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<"Whether the output may be split along C into lane groups.",
                    "bool", "isChannelSliceable", (ins), [{}], [{ return true; }]>,
  ];
}

#endif
