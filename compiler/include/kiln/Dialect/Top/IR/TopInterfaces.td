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
    InterfaceMethod<"The result shape the operands and attributes give; fails "
                    "with a diagnostic when they are inconsistent. The op's "
                    "verifier runs it too (the result type itself is not "
                    "checked: it is only right once inferShapes has run).",
                    "::mlir::FailureOr<::llvm::SmallVector<int64_t>>", "resultShape">,
    InterfaceMethod<"Sets the result type's shape to resultShape(), keeping "
                    "its element type.",
                    "::mlir::LogicalResult", "inferShapes", (ins), [{}], [{
      auto shape = $_op.resultShape();
      if (::mlir::failed(shape))
        return ::mlir::failure();
      ::mlir::Value out = $_op->getResult(0);
      auto type = ::llvm::cast<::mlir::RankedTensorType>(out.getType());
      out.setType(::mlir::RankedTensorType::get(*shape, type.getElementType()));
      return ::mlir::success();
    }]>,
  ];
}

#endif
