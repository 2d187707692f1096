//===- Blob.h - The binary part of a bmodel file ----------------*- C++ -*-===//
//
// Both containers (kiln's and Sophgo's) end with a blob of coefficients and
// command streams; kiln's index addresses it with BlobRanges.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_BMODEL_BLOB_H
#define KILN_TARGET_BMODEL_BLOB_H

#include "kiln/Codegen/Codegen.h"
#include "kiln/abi/bmodel.h"
#include "kiln/bmodel_generated.h"

#include <cstring>
#include <vector>

namespace kiln::bmodel {

/// Entries start KILN_BMODEL_BLOB_ALIGN-aligned: DMA-friendly wherever the
/// blob is copied to.
struct Blob {
  std::vector<uint8_t> bytes;
  kiln::bmodel::BlobRange append(const void *data, size_t size) {
    size_t at = (bytes.size() + KILN_BMODEL_BLOB_ALIGN - 1) / KILN_BMODEL_BLOB_ALIGN *
                KILN_BMODEL_BLOB_ALIGN;
    bytes.resize(at + size);
    if (size)
      std::memcpy(bytes.data() + at, data, size);
    return kiln::bmodel::BlobRange(at, size);
  }
};

/// kiln's index (schemas/bmodel.fbs) of `nets`, finished in `b`; coefficients
/// and command buffers are appended to `blob`.
void buildIndex(flatbuffers::FlatBufferBuilder &b,
                const std::vector<codegen::NetCode> &nets, Blob &blob);

} // namespace kiln::bmodel

#endif
