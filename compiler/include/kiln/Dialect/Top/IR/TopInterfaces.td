#ifndef KILN_TOP_INTERFACES
#define KILN_TOP_INTERFACES

include "mlir/IR/OpBase.td"

def ShapeInferenceInterface : OpInterface<"ShapeInference"> {
  let description = [{
    Computes an op's result shapes from its operand shapes and attributes, so
    shapes stay right when inputs are overridden or ops are rewritten.
  }];
  let cppNamespace = "::kiln::top";
  let methods = [
    InterfaceMethod<"Sets the result types from the operands; fails with a "
                    "diagnostic when the shapes are inconsistent.",
                    "::mlir::LogicalResult", "inferShapes">,
  ];
}

#endif
