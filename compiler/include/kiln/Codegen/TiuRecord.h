//===- TiuRecord.h - The op-specific part of a TIU record -------*- C++ -*-===//
//
// One function turns a Tpu compute op into the fields of its kiln_tiu_cmd that
// do not depend on slicing. The layer-group code generator fills in operand
// addresses, slice rows and per-slice pads on top; the Tpu interpreter places
// the whole unsliced operands in an LMEM of its own and runs the record on the
// cmodel's TIU kernels, so both execute the very same encoding.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_TIURECORD_H
#define KILN_CODEGEN_TIURECORD_H

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/abi/commands.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::codegen {

/// Fills every field of `cmd` except cmd_id and wait_gdma_id for the whole,
/// unsliced op (one with the tpu::RunsOnTiu trait):
///  - op, subop, flags (RELU, HAS_BIAS, COUNT_INCLUDE_PAD), kh/kw, strides,
///    dilations, groups, the op's full pads (deconv: pad_bottom/right 0),
///    param[] and aux[] (resize: scales, aux 0; INT8: multipliers, zero
///    points, rshift from `quant` and the quant types; cast: the float side's
///    scale);
///  - out and in0/in1/in2: op operand i feeds in<i> (a top.none operand
///    leaves its slot unused), each with its LMEM shape (lg::lmemShapeOf),
///    dtype and KILN_OPND_USED; addr and plane_h 0.
/// Emits an error at the op and fails on an op or dtype it cannot encode.
mlir::LogicalResult fillTiuRecord(mlir::Operation *op, kiln_tiu_cmd &cmd);

/// fillTiuRecord for costing a plan: nullopt, and no diagnostic, if the op
/// cannot be encoded (code generation reports it later).
std::optional<kiln_tiu_cmd> tryTiuRecord(mlir::Operation *op);

/// tryTiuRecord of each op in order; nullopt if one cannot be encoded.
std::optional<std::vector<kiln_tiu_cmd>> tryTiuRecords(llvm::ArrayRef<mlir::Operation *> ops);

/// The bytes of a weight in its result type's dtype, row-major: the raw data
/// of a dense or dense-resource attribute of the same dtype (any of f32, f16,
/// bf16, i8, i32, ...), else its values converted (float data rounded to
/// nearest even, integer data truncated). Fails on data it cannot convert.
mlir::FailureOr<std::vector<uint8_t>> weightBytes(top::WeightOp w);

} // namespace kiln::codegen

#endif
