#ifndef KILN_TOP_PASSES
#define KILN_TOP_PASSES

include "mlir/Pass/PassBase.td"

def TopShapeInfer : Pass<"top-shape-infer", "mlir::func::FuncOp"> {
  let summary = "Recompute every Top op's result shape from its operands";
  let description = [{
    Walks the function in order and calls each op's ShapeInference method, then
    updates the function signature. Run after input shapes are overridden.
  }];
  let constructor = "kiln::top::createShapeInferPass()";
}

def TopFuseBatchNorm : Pass<"top-fuse-batchnorm", "mlir::func::FuncOp"> {
  let summary = "Fold inference batch norms into the preceding conv";
  let description = [{
    conv(x, W, b) -> batchnorm becomes conv(x, W * s, (b - mean) * s + beta)
    with s = gamma / sqrt(var + eps), when the conv's filter and bias are
    weights and the batch norm is the conv's only user. Any other batch norm
    becomes a per-channel mul and add.
  }];
  let constructor = "kiln::top::createFuseBatchNormPass()";
  let dependentDialects = ["kiln::top::TopDialect"];
}

def TopFuseRelu : Pass<"top-fuse-relu", "mlir::func::FuncOp"> {
  let summary = "Fuse ReLU into the op that produces its input";
  let description = [{
    A relu whose input comes from a conv, add, mul or matmul with no other user
    sets that op's do_relu and disappears, saving a pass over the tensor.
  }];
  let constructor = "kiln::top::createFuseReluPass()";
}

#endif
