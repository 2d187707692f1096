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

/// A later group's coefficient that a group loads for it (prefetch_groups).
struct Prefetched {
  std::string tensor;
  kiln_gdma_cmd load;
  uint32_t laneBytes = 0;
  uint32_t icAlign = 1; ///< a conv filter in the chip's IC-parallel layout
};

/// Per layer group (in order), the prefetches it issues; generateNet has
/// checked that every tpu.load's prefetch_groups names an earlier group.
std::vector<std::vector<Prefetched>> prefetchesByHost(llvm::ArrayRef<tpu::GroupOp> groups);

mlir::FailureOr<GroupCode> generateGroup(tpu::GroupOp group, uint32_t id,
                                         llvm::ArrayRef<Prefetched> prefetch,
                                         std::vector<Resident> &residents);
GroupCode generateConcat(tpu::ConcatOp concat, uint32_t id);
GroupCode generateDma(tpu::DmaOp dma, uint32_t id);
/// Modelled cycles of a group's queues (the cost model of firmware-abi).
uint64_t modelCycles(const GroupCode &code);
} // namespace kiln::codegen

#endif
