//===- BmodelWriter.h - Serialize a net into a bmodel file ------*- C++ -*-===//
#ifndef KILN_TARGET_BMODEL_BMODELWRITER_H
#define KILN_TARGET_BMODEL_BMODELWRITER_H

#include "kiln/Codegen/Codegen.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::bmodel {
/// The compiler every bmodel names: "kiln " and the project's version.
extern const char kCompilerVersion[];

/// A net as its stages: the same model compiled for each set of input shapes
/// (stage 0 first). Stages share one coefficient region, so each must have
/// the same coefficient bytes, and the same inputs and outputs by name,
/// dtype and rank at different shapes.
using StagedNet = std::vector<codegen::NetCode>;

/// Why `stages` cannot be one net, or "" if it can.
std::string checkStages(const StagedNet &stages);

/// Header | FlatBuffer (schemas/bmodel.fbs) | blob (coefficients, commands).
/// Each net's stages must pass checkStages.
std::vector<uint8_t> serialize(const std::vector<StagedNet> &nets);

/// The nets of a bmodel in either container, as serialize() takes them:
/// serializing what this returns writes the file's kiln container again,
/// byte for byte. The FlatBuffer is verified; the caller verifies the rest.
llvm::Expected<std::vector<StagedNet>> readNets(llvm::ArrayRef<uint8_t> file);

/// Sophgo's container, the one libbmrt loads (schemas/sophgo_bmodel.fbs):
/// header | FlatBuffer | blob, one Net per net with a NetParameter per stage, a command
/// group per layer group holding its BM1684X streams, coefficients below
/// ctx_addr and activations at or above it. kiln's own index of the same
/// nets travels in the blob (Model.kiln_index) and shares its bytes. Every
/// group must carry BM1684X streams (codegen::lowerToBm1684x).
llvm::Expected<std::vector<uint8_t>> serializeSophgo(const std::vector<StagedNet> &nets);
} // namespace kiln::bmodel

#endif
