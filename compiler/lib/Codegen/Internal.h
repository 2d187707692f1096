//===- Internal.h - Shared helpers of the code generator --------*- C++ -*-===//
#ifndef KILN_CODEGEN_INTERNAL_H
#define KILN_CODEGEN_INTERNAL_H

#include "kiln/Codegen/Codegen.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"

namespace kiln::codegen {
/// The ONNX name a value carries (its op's NameLoc or the argument's kiln.name).
std::string nameOf(mlir::Value v);
std::string nameOf(mlir::Operation *op);
/// Net-relative DDR offset assigned by tpu-address-assign.
uint64_t ddrAddrOf(mlir::Value v);
/// Product of the dimensions.
uint64_t elementsOf(mlir::Value v);

mlir::FailureOr<GroupCode> generateGroup(tpu::GroupOp group, uint32_t id,
                                         std::vector<Resident> &residents);
GroupCode generateConcat(tpu::ConcatOp concat, uint32_t id);
GroupCode generateDma(tpu::DmaOp dma, uint32_t id);
/// Modelled cycles of a group's queues (the cost model of firmware-abi).
uint64_t modelCycles(const GroupCode &code);
} // namespace kiln::codegen

#endif
