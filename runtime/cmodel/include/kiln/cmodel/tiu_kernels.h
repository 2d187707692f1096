// kiln cmodel: the TIU's arithmetic on its own, without the device.
//
// The device runs every TIU record through runTiuRecord on its LMEM; the
// compiler's Tpu interpreter runs the same records on an LMEM of its own whose
// lanes are big enough for a whole unsliced op, so both compute bit for bit
// alike (docs/precision.md). Needs only the ABI headers and the C++ standard
// library.
#ifndef KILN_CMODEL_TIU_KERNELS_H
#define KILN_CMODEL_TIU_KERNELS_H

#include <stdint.h>

#include "kiln/abi/commands.h"

namespace kiln::cmodel {

// Runs one TIU record on an LMEM of KILN_NPU_NUM lanes of lane_bytes bytes
// each, lane-major (lane i at lmem + i * lane_bytes). Every operand must lie
// within a lane of lane_bytes (the record checks of kiln/abi/cmd_check.h,
// with that lane size). Returns nullptr, or why the record faults (then
// nothing has been written).
const char *runTiuRecord(const kiln_tiu_cmd &cmd, uint8_t *lmem, uint64_t lane_bytes);

} // namespace kiln::cmodel

#endif
