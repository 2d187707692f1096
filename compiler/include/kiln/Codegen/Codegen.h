//===- Codegen.h - Tpu IR to firmware-abi command records -------*- C++ -*-===//
//
// Turns an address-assigned module into what the bmodel stores: per layer
// group its slice table, timesteps, LMEM allocations and TIU/GDMA command
// queues with sync ids, plus the net's tensors and coefficient bytes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CODEGEN_H
#define KILN_CODEGEN_CODEGEN_H

#include "kiln/abi/commands.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace kiln::codegen {

struct TensorDesc {
  std::string name;
  uint8_t dtype = 0; // kiln_dtype
  std::vector<int64_t> shape;
  uint64_t ddrOffset = 0, size = 0; // size in bytes of its dtype
  float scale = 1.f;                // INT8: per-tensor quantization
  int32_t zeroPoint = 0;
  int32_t buffer = -1;              // index in NetCode::buffers, -1 in the coefficients
  int32_t firstGroup = -1, lastGroup = -1; // holds its value after firstGroup up to lastGroup
};

/// A buffer of the activation plan (kiln/Dialect/Tpu/Analysis/DdrLiveness.h).
struct DdrBufferDesc {
  uint64_t ddrOffset = 0, size = 0;
  int32_t firstGroup = -1, lastGroup = -1; // live groups, inclusive; -1 before the run
};

struct SliceTable {
  std::string tensor;
  std::vector<int32_t> nIdx, nLen, cIdx, cLen, hIdx, hLen, wIdx, wLen;
};

struct Timestep {
  int32_t slice = -1; // -1: the prologue that loads held tensors
  uint32_t tiuBegin = 0, tiuEnd = 0, gdmaBegin = 0, gdmaEnd = 0;
};

struct LmemAlloc {
  std::string tensor;
  uint32_t addr = 0, size = 0;
  uint8_t buffer = 0;
  uint32_t firstStep = 0, lastStep = 0;
  bool held = false;
};

/// A tensor held in LMEM over a group's slices (coefficient or dynamic weight).
struct Resident {
  std::string tensor;
  bool dynamic = false; // computed by the graph, not a coefficient
  bool formedOnChip = false; // computed in LMEM by its own group, no DDR copy
  bool overSlices = true;    // kept for every slice (a Residency record); a
                             // filter formed per channel slice is not
  std::string producer;
  std::vector<std::string> producers; // formedOnChip: the ops that form it
  std::vector<std::string> consumers;
  std::vector<int64_t> shape;
  uint8_t dtype = 0; // kiln_dtype
  uint64_t ddrOffset = 0;
  uint32_t lmemAddr = 0, lmemSize = 0;
  uint32_t group = 0, firstStep = 0, lastStep = 0;
};

struct GroupCode {
  uint32_t id = 0;
  std::vector<std::string> ops;
  uint32_t nSlices = 1, cSlices = 1, hSlices = 1;
  uint32_t wSlices = 1; ///< not in the bmodel: its slice tables give the columns
  std::vector<SliceTable> slices;
  std::vector<Timestep> timesteps;
  std::vector<LmemAlloc> lmem;
  std::vector<kiln_tiu_cmd> tiu;
  std::vector<kiln_gdma_cmd> gdma;
  std::vector<uint16_t> tiuOps;      // per TIU command: index into ops
  std::vector<uint16_t> gdmaTensors; // per GDMA command: index into slices, or kNoTensor
  /// Per GDMA command: for the load of a conv filter the chip reads in its
  /// IC-parallel layout (lg::chipFilterIcAlign), that block; else 1. Not in
  /// the bmodel: lowerToBm1684x reorders such loads. Empty: all 1.
  std::vector<uint32_t> gdmaIcAlign;
  static constexpr uint16_t kNoTensor = 0xffff;
  uint64_t cycles = 0; // modelled by the shared cost model
  /// isa: bm1684x: the group as BM1684X's own command streams (lowerToBm1684x),
  /// padded to 128 bytes; counts include the end commands. Empty otherwise.
  std::vector<uint8_t> bmTiu, bmGdma;
  uint32_t bmTiuCount = 0, bmGdmaCount = 0;
};

/// isa: bm1684x: a conv filter's second copy in the chip's IC-parallel
/// layout (lg::kChipFilterAttr), which the lowering loads instead of
/// reordering kiln's copy on the way.
struct ChipFilterCopy {
  uint64_t kilnOffset = 0, chipOffset = 0; // DDR offsets: [oc][ic][taps], [oc][ic'][taps]
  uint32_t oc = 0, ic = 0, taps = 0, block = 0, bytes = 0;
};

struct NetCode {
  std::string name;
  std::vector<TensorDesc> inputs, outputs, tensors;
  uint64_t coeffSize = 0, neuronSize = 0;
  uint64_t activationPeak = 0; // bytes of the largest set of buffers live at once
  std::vector<DdrBufferDesc> buffers;
  std::vector<uint8_t> coeff;
  std::vector<ChipFilterCopy> chipFilters;
  std::vector<GroupCode> groups;
  std::vector<Resident> residents;
  uint64_t macs = 0, minDdrBytes = 0;
  /// What the compiler decided and why: the module's rewrite report, then
  /// its precision report (kiln/Support/Precision.h).
  std::vector<std::string> decisions;

  uint64_t modelledCycles() const;
};

/// Generates the net from a module that went through tpu-layer-group and
/// tpu-address-assign. Emits diagnostics and fails on anything it cannot encode.
mlir::FailureOr<NetCode> generateNet(mlir::ModuleOp module, llvm::StringRef name);

/// Lowers every group's command records to BM1684X's own TIU and GDMA
/// streams (GroupCode::bmTiu/bmGdma; docs/DESIGN.md section 4.1). Returns an
/// empty string, or what cannot be lowered yet (naming the group and op).
std::string lowerToBm1684x(NetCode &net);

} // namespace kiln::codegen

#endif
