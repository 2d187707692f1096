//===- TpuInterpreter.h - Runs typed Tpu IR on the chip's kernels -*- C++ -*-===//
//
// Runs a function of Tpu ops (after convert-top-to-tpu, before layer
// grouping) on the host. Every TIU op becomes the record codegen would emit
// for the whole unsliced op (codegen::fillTiuRecord), run by the cmodel's TIU
// kernels (kiln::chip::runTiuRecord, chip/) on an LMEM of its own; tpu.dma,
// tpu.concat and tpu.reshape move bytes on the host. So its numerics are the
// cmodel's by construction: a compiled net can only differ from it through
// slicing, codegen or synchronization.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_INTERPRETER_TPUINTERPRETER_H
#define KILN_INTERPRETER_TPUINTERPRETER_H

#include "kiln/Interpreter/TopInterpreter.h"

#include "mlir/IR/BuiltinTypes.h"

namespace kiln::interp {

/// A tensor as Tpu IR holds it: the little-endian bytes of its dtype
/// (kiln::tpu::dtypeOf), row-major.
struct RawTensor {
  mlir::RankedTensorType type;
  std::vector<uint8_t> bytes;
};

/// The values as f32: f16/bf16 exactly, INT8 quant types dequantized as
/// (q - zp) * scale (per-axis types per channel), plain integers as values.
Tensor toF32(const RawTensor &t);
/// `t` in `type`'s dtype: f16/bf16 rounded to nearest even, quant types
/// quantized (round half to even, saturated), integers rounded and
/// saturated. Fails (no diagnostic) when the shapes disagree or the type has
/// no chip dtype.
mlir::FailureOr<RawTensor> fromF32(const Tensor &t, mlir::RankedTensorType type);

/// Runs `func` (tpu compute ops, tpu.dma, tpu.concat, tpu.reshape,
/// top.weight, top.none, func.return) on `inputs`, f32 tensors keyed by each
/// argument's `kiln.name` (fallback "arg<i>") and converted to the argument's
/// dtype. Fills `outputs`, keyed by each result's `kiln.name` (fallback
/// "out<i>"), and if `allValues` is non-null the result of every op but
/// weights keyed by its NameLoc name, all as f32 (toF32). Emits a diagnostic
/// at the offending op and fails on a missing input, an op it cannot run or a
/// record the cmodel rejects.
///
/// With `reference` (the Top interpreter's values of the same input), the
/// last op of each name hands its consumers the reference value of that name
/// (converted to its dtype, fromF32) instead of its own result: every layer
/// then computes from exact inputs, and allValues holds each layer's own
/// error rather than the error it inherits. A name whose reference is missing
/// or shaped differently keeps its own result.
mlir::LogicalResult runTpu(mlir::func::FuncOp func, const TensorMap &inputs,
                           TensorMap &outputs, TensorMap *allValues = nullptr,
                           const TensorMap *reference = nullptr);

/// As runTpu, with the results in their own dtypes (no conversion).
mlir::LogicalResult runTpuRaw(mlir::func::FuncOp func, const TensorMap &inputs,
                              std::map<std::string, RawTensor> &outputs,
                              std::map<std::string, RawTensor> *allValues = nullptr,
                              const TensorMap *reference = nullptr);

} // namespace kiln::interp

#endif // KILN_INTERPRETER_TPUINTERPRETER_H
