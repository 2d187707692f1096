//===- Container.h - The kiln container inside a bmodel file ----*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_CONTAINER_H
#define KILN_TOOLS_KILN_CONTAINER_H

#include "kiln/abi/bmodel.h"
#include "kiln/bmodel_generated.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace kiln::cli {

/// The kiln container in a bmodel file: the file itself, or the one a Sophgo
/// container written by kiln carries as its blob (kiln_sophgo_blob). Empty
/// when a Sophgo header does not fit the file.
inline llvm::ArrayRef<uint8_t> kilnContainer(llvm::ArrayRef<uint8_t> file) {
  uint64_t at = 0, size = 0;
  if (!kiln_is_sophgo(file.data(), file.size()))
    return file;
  if (!kiln_sophgo_blob(file.data(), file.size(), &at, &size))
    return {};
  return file.slice(at, size);
}

/// A file's net has 1 + stages() stages (input shape sets); stage 0 is the
/// net itself (schemas/bmodel.fbs).
inline uint32_t stageCount(const kiln::bmodel::Net &root) {
  return 1 + (root.stages() ? root.stages()->size() : 0);
}
inline const kiln::bmodel::Net &stageOf(const kiln::bmodel::Net &root, uint32_t stage) {
  return stage ? *root.stages()->Get(stage - 1) : root;
}

/// Checks a verified Sophgo container's own index (what libbmrt reads)
/// against the kiln container it carries: the same nets, I/O, regions and
/// command groups. "" and a one-line *summary, or what disagrees.
std::string checkSophgoIndex(llvm::ArrayRef<uint8_t> file, std::string *summary);

} // namespace kiln::cli

#endif
