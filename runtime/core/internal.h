// Runtime core internals: the objects behind kiln_runtime and kiln_net, and
// small freestanding helpers.
#ifndef KILN_RT_CORE_INTERNAL_H
#define KILN_RT_CORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "bmodel_fb.h"
#include "kiln/rt/kiln_rt.h"
#include "residency.h"

namespace kiln::rt {

// Tags that catch a handle that was never initialised or was unloaded.
constexpr uint32_t kRuntimeTag = 0x4b52544du; // "KRTM"
constexpr uint32_t kNetTag = 0x4b4e4554u;     // "KNET"

// Device memory: each net's sections start on a DDR tensor boundary; command
// queues inside its queue section start on a GDMA burst.
constexpr uint64_t kSectionAlign = KILN_DDR_ALIGN;
constexpr uint64_t kQueueAlign = KILN_GDMA_BURST_BYTES;

// Size arithmetic that reports overflow instead of wrapping.
inline bool addChecked(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
inline bool mulChecked(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
inline bool alignUpChecked(uint64_t value, uint64_t align, uint64_t *out) {
  if (!addChecked(value, align - 1, out))
    return false;
  *out -= *out % align;
  return true;
}
inline uint64_t alignUp(uint64_t value, uint64_t align) {
  return (value + align - 1) / align * align;
}

// Is [offset, offset + size) inside [0, limit)?
inline bool rangeWithin(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

// The compiler may lower these to inline code or to a plain mem* call.
inline void copyBytes(void *dst, const void *src, size_t size) {
  __builtin_memcpy(dst, src, size);
}

// Bytes of a net's queue section: each group's TIU and GDMA queue and, when
// the group has a warm plan, its warm TIU and GDMA queues, each on a GDMA
// burst (net.cpp packs them so). False if the size overflows.
bool queueSectionBytes(const kiln::bmodel::Net &net, const uint8_t *blob, uint64_t *out);

} // namespace kiln::rt

struct kiln_runtime {
  uint32_t tag;
  kiln_hal hal;
  uint64_t top; // first free device address: nets stack upward from mem_base
  kiln::rt::ResidencyTracker residency; // what LMEM holds, across nets and runs
};

// A loaded net: [queues][coefficient region][neuron region] in device memory.
struct kiln_net {
  uint32_t tag;
  kiln_runtime *rt;
  const kiln::bmodel::Net *net;
  const uint8_t *blob;
  uint64_t mem_begin;   // the runtime's top before this net was loaded
  uint64_t mem_end;
  uint64_t queues_addr; // every group's TIU then GDMA queue, in group order
  uint64_t window_addr; // DDR base of the net's commands: its coefficient region
  uint64_t window_size; // coeff_size + neuron_size
  uint32_t load_id;     // names this load in the residency tracker
};

#endif
