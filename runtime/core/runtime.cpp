// The runtime object: a HAL and a stack allocator over its device memory.
#include <new>

#include "internal.h"
#include "kiln/rt/runtime.hpp"

static_assert(sizeof(kiln_runtime) <= kiln::rt::kRuntimeStorageBytes,
              "grow kRuntimeStorageBytes");

namespace {

bool halIsUsable(const kiln_hal *hal) {
  uint64_t end;
  return hal && hal->write_mem && hal->read_mem && hal->submit && hal->wait && hal->reset &&
         !__builtin_add_overflow(hal->mem_base, hal->mem_size, &end);
}

} // namespace

extern "C" {

size_t kiln_runtime_storage_size(void) { return sizeof(kiln_runtime); }

kiln_status kiln_runtime_init(void *storage, size_t storage_size, const kiln_hal *hal,
                              kiln_runtime **out_rt) {
  if (!storage || !out_rt || reinterpret_cast<uintptr_t>(storage) % 16 != 0 || !halIsUsable(hal))
    return KILN_ERR_INVALID_ARGUMENT;
  if (storage_size < sizeof(kiln_runtime))
    return KILN_ERR_BUFFER_TOO_SMALL;
  kiln_runtime rt{};
  rt.tag = kiln::rt::kRuntimeTag;
  rt.hal = *hal;
  rt.top = hal->mem_base;
  kiln::rt::trackerReset(&rt.residency);
  rt.residency.last_load = 0;
  *out_rt = ::new (storage) kiln_runtime(rt);
  return KILN_OK;
}

kiln_status kiln_runtime_flush_residency(kiln_runtime *rt) {
  if (!rt || rt->tag != kiln::rt::kRuntimeTag)
    return KILN_ERR_INVALID_ARGUMENT;
  kiln::rt::trackerReset(&rt->residency);
  return KILN_OK;
}

} // extern "C"
