// Error details: filling them, the board's hook and the names of object kinds.
#include "internal.h"

namespace kiln::rt {

kiln_status fail(Detail *d, kiln_status st, kiln_object_kind kind, uint32_t index,
                 uint32_t sub_index, const char *reason) {
  *d = Detail{st, static_cast<uint32_t>(kind), kNoIndex, index, sub_index, reason, 0};
  return st;
}

kiln_status finishFailure(kiln_status st, Detail *d, Detail *out) {
  if (d->status != st || !d->reason) // a status passed up from a HAL call or the like
    fail(d, st, KILN_OBJ_NONE, kNoIndex, kNoIndex, "no detail recorded");
  if (out)
    *out = *d;
  kiln_pal_error_hook(d);
  return st;
}

} // namespace kiln::rt

extern "C" {

// Weak, so that a board's own definition replaces it. Kept in this file,
// away from its callers, so that nothing inlines the empty body.
__attribute__((weak)) void kiln_pal_error_hook(const kiln_error_detail *) {}

const char *kiln_object_kind_str(uint32_t kind) {
  switch (kind) {
  case KILN_OBJ_ARGUMENT: return "argument";
  case KILN_OBJ_HEADER: return "header";
  case KILN_OBJ_FLATBUFFER: return "FlatBuffer";
  case KILN_OBJ_CHIP: return "chip";
  case KILN_OBJ_NET: return "net";
  case KILN_OBJ_INPUT: return "input";
  case KILN_OBJ_OUTPUT: return "output";
  case KILN_OBJ_TENSOR: return "tensor";
  case KILN_OBJ_DYNAMIC_WEIGHT: return "dynamic weight";
  case KILN_OBJ_RESIDENCY: return "residency record";
  case KILN_OBJ_BUFFER: return "DDR buffer";
  case KILN_OBJ_GROUP: return "group";
  case KILN_OBJ_TIU_CMD: return "TIU command";
  case KILN_OBJ_GDMA_CMD: return "GDMA command";
  case KILN_OBJ_TIMESTEP: return "timestep";
  case KILN_OBJ_LMEM_ALLOC: return "LMEM allocation";
  case KILN_OBJ_DEVICE_MEMORY: return "device memory";
  case KILN_OBJ_HAL: return "HAL";
  default: return "none";
  }
}

} // extern "C"
