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

// ---- failure detail (kiln_error_detail) ------------------------------------------
//
// Inside the core the detail pointer is never null: each entry point passes
// a zeroed local and, if the call fails, copies it out and calls the board's
// hook once (finishFailure). A failure site fills it and returns its status
// in one statement, KILN_FAIL.
using Detail = kiln_error_detail;
constexpr uint32_t kNoIndex = KILN_NO_INDEX;

// Fills *d (net: KILN_NO_INDEX; the caller that knows the net sets it) and
// returns st.
kiln_status fail(Detail *d, kiln_status st, kiln_object_kind kind, uint32_t index,
                 uint32_t sub_index, const char *reason);

// On failure: completes *d (a status with no detail yet gets a generic
// one), copies it to out (may be null) and calls kiln_pal_error_hook.
kiln_status finishFailure(kiln_status st, Detail *d, Detail *out);

} // namespace kiln::rt

// `KILN_FAIL(d, OUT_OF_RANGE, GDMA_CMD, group, i, "...")` returns
// KILN_ERR_OUT_OF_RANGE after recording a GDMA command's detail in d.
#define KILN_FAIL(d, status, kind, index, sub_index, reason)                                \
  return ::kiln::rt::fail(d, KILN_ERR_##status, KILN_OBJ_##kind, index, sub_index, reason)

namespace kiln::rt {

// Bytes of a net's queue section: each group's TIU and GDMA queue and, when
// the group has a warm plan, its warm TIU and GDMA queues, each on a GDMA
// burst (net.cpp packs them so); a group's queue takes the room of its
// records or of its BM1684X stream, whichever is larger, so that one figure
// serves a HAL of either command set. False if the size overflows.
bool queueSectionBytes(const kiln::bmodel::Net &net, const uint8_t *blob, uint64_t *out);

// A file's net has 1 + stages() stages; stage 0 is the net itself.
inline uint32_t stageCount(const kiln::bmodel::Net &root) {
  return 1 + (root.stages() ? root.stages()->size() : 0);
}
inline const kiln::bmodel::Net &stageOf(const kiln::bmodel::Net &root, uint32_t stage) {
  return stage ? *root.stages()->Get(stage - 1) : root;
}

// kiln_net_load_ex without its epilogue: on failure *d holds the detail
// and nobody has been told yet (kiln_bmodel_query_memory_ex loads through it).
kiln_status loadNet(kiln_runtime *rt, const void *bmodel, size_t size, uint32_t net_index,
                    void *storage, size_t storage_size, kiln_net **out_net, Detail *d);

} // namespace kiln::rt

struct kiln_runtime {
  uint32_t tag;
  kiln_hal hal;
  uint64_t top; // first free device address: nets stack upward from mem_base
  kiln::rt::ResidencyTracker residency; // what LMEM holds, across nets and runs
};

// A loaded net: [queues of every stage][coefficient region][neuron region]
// in device memory. The stages share the coefficients and, one run at a
// time, the neuron region (the largest stage's size).
struct kiln_net {
  uint32_t tag;
  kiln_runtime *rt;
  const kiln::bmodel::Net *root; // the file's net: stage 0, holding the others
  const kiln::bmodel::Net *net;  // the selected stage
  const uint8_t *blob;
  uint64_t mem_begin;   // the runtime's top before this net was loaded
  uint64_t mem_end;
  uint64_t queues_base; // stage 0's queues, then stage 1's, ...
  uint64_t queues_addr; // the selected stage's: each group's TIU then GDMA queue
  uint64_t window_addr; // DDR base of the net's commands: its coefficient region
  uint64_t window_size; // coeff_size + the largest stage's neuron_size
  uint32_t load_id;     // names this load in the residency tracker
  uint32_t net_index;   // of the net in its file, for error details
  uint32_t stage;       // the selected stage
};

#endif
