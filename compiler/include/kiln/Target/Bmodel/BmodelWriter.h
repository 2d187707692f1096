//===- BmodelWriter.h - Serialize a net into a bmodel file ------*- C++ -*-===//
#ifndef KILN_TARGET_BMODEL_BMODELWRITER_H
#define KILN_TARGET_BMODEL_BMODELWRITER_H

#include "kiln/Codegen/Codegen.h"

#include <cstdint>
#include <vector>

namespace kiln::bmodel {
/// The compiler every bmodel names: "kiln " and the project's version.
extern const char kCompilerVersion[];

/// Header | FlatBuffer (schemas/bmodel.fbs) | blob (coefficients, commands).
std::vector<uint8_t> serialize(const std::vector<codegen::NetCode> &nets);
} // namespace kiln::bmodel

#endif
