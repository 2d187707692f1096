#ifndef KILN_TOP_DIALECT
#define KILN_TOP_DIALECT

include "mlir/IR/OpBase.td"

def Top_Dialect : Dialect {
  let name = "top";
  let summary = "Framework-neutral float tensor ops";
  let description = [{
    The importer's target: NCHW float ops with ONNX semantics, each with shape
    inference and a reference implementation in the Top interpreter.
  }];
  let cppNamespace = "::kiln::top";
  let useDefaultAttributePrinterParser = 1;
}

#endif
