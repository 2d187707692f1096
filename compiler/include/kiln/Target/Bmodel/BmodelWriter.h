//===- BmodelWriter.h - Serialize a net into a bmodel file ------*- C++ -*-===//
#ifndef KILN_TARGET_BMODEL_BMODELWRITER_H
#define KILN_TARGET_BMODEL_BMODELWRITER_H

#include "kiln/Codegen/Codegen.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace kiln::bmodel {
/// The compiler every bmodel names: "kiln " and the project's version.
extern const char kCompilerVersion[];

/// Header | FlatBuffer (schemas/bmodel.fbs) | blob (coefficients, commands).
std::vector<uint8_t> serialize(const std::vector<codegen::NetCode> &nets);

/// Sophgo's container, the one libbmrt loads (schemas/sophgo_bmodel.fbs):
/// header | FlatBuffer | blob, one Net per net with one stage, a command
/// group per layer group holding its BM1684X streams, coefficients below
/// ctx_addr and activations at or above it. kiln's own index of the same
/// nets travels in the blob (Model.kiln_index) and shares its bytes. Every
/// group must carry BM1684X streams (codegen::lowerToBm1684x).
llvm::Expected<std::vector<uint8_t>> serializeSophgo(const std::vector<codegen::NetCode> &nets);
} // namespace kiln::bmodel

#endif
