//===- GroupRecords.h - A layer group's command records from a bmodel -*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_GROUPRECORDS_H
#define KILN_TOOLS_KILN_GROUPRECORDS_H

#include "kiln/abi/bmodel.h"
#include "kiln/abi/commands.h"
#include "kiln/abi/cost.h"
#include "kiln/bmodel_generated.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstring>
#include <vector>

namespace kiln::cli {

/// Copies group g's TIU and GDMA records out of the bmodel file's blob;
/// false if they lie outside it.
inline bool groupRecords(llvm::ArrayRef<uint8_t> file, const kiln_bmodel_header &h,
                         const kiln::bmodel::LayerGroup &g, std::vector<kiln_tiu_cmd> &tiu,
                         std::vector<kiln_gdma_cmd> &gdma) {
  auto copy = [&](const kiln::bmodel::BlobRange *range, uint32_t count, auto &out) {
    uint64_t bytes = uint64_t{count} * sizeof(out[0]);
    uint64_t offset = range ? range->offset() : 0;
    if (h.blob_offset > file.size() || h.blob_size > file.size() - h.blob_offset ||
        offset > h.blob_size || bytes > h.blob_size - offset)
      return false;
    out.resize(count);
    if (bytes)
      std::memcpy(out.data(), file.data() + h.blob_offset + offset, bytes);
    return true;
  };
  return copy(g.tiu_cmds(), g.tiu_count(), tiu) && copy(g.gdma_cmds(), g.gdma_count(), gdma);
}

/// Bytes a GDMA command moves over DDR (0 for LMEM to LMEM).
inline uint64_t ddrBusBytes(const kiln_gdma_cmd &c) {
  return kiln_gdma_src_is_lmem(c.dir) && kiln_gdma_dst_is_lmem(c.dir) ? 0
                                                                      : kiln_gdma_bus_bytes(&c);
}

} // namespace kiln::cli

#endif
