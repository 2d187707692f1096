// Full verification of a bmodel before anything is uploaded: header, checksum,
// FlatBuffer, chip and ABI, then every net's regions, tensors, command records
// and sync ids. Afterwards the reader may trust every offset in the file.
#ifndef KILN_RT_CORE_VERIFY_H
#define KILN_RT_CORE_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "bmodel_fb.h"
#include "kiln/abi/commands.h"
#include "kiln/abi/cost.h"
#include "kiln/abi/status.h"
#include "kiln/rt/kiln_rt.h"

namespace kiln::rt {

struct VerifiedBmodel {
  const kiln::bmodel::Model *model;
  const uint8_t *blob;
  uint64_t blob_size;
};

// file must be 8-byte aligned, so records and FlatBuffer scalars are too.
// On failure *detail names the refused object (see kiln_error_detail).
kiln_status verifyBmodel(const uint8_t *file, size_t size, VerifiedBmodel *out,
                         kiln_error_detail *detail);

// The core's one instance of cost.h's scheduler (it is large): runs a
// group's queues in sync-id order, calling `cb` at each start.
kiln_status scheduleSource(const kiln_queue_source &q, kiln_schedule_cb cb, void *user);

// A group's command records in the blob of a verified bmodel.
const kiln_tiu_cmd *tiuRecords(const uint8_t *blob, const kiln::bmodel::LayerGroup &group);
const kiln_gdma_cmd *gdmaRecords(const uint8_t *blob, const kiln::bmodel::LayerGroup &group);

} // namespace kiln::rt

#endif
