// What a net needs before it is loaded: the device memory kiln_net_load
// reserves and the host storage of the runtime objects.
//
// Rather than restate net.cpp's memory plan (queue packing, section
// alignment, whatever the residency manager adds), this loads the net once
// against a HAL that accepts any address and stores nothing, and measures
// what the plan reserved. board_driver_test and the smoke tests hold the
// figure against real loads: a window of exactly device_bytes is enough,
// 4 KiB less is not.
#include <stdint.h>

#include "internal.h"

namespace {

kiln_status discardWrite(void *, uint64_t, const void *, uint64_t) { return KILN_OK; }
kiln_status refuseRead(void *, uint64_t, void *, uint64_t) { return KILN_ERR_HAL; }
kiln_status refuseSubmit(void *, const kiln_submit_desc *) { return KILN_ERR_HAL; }
kiln_status refuseWait(void *, uint32_t) { return KILN_ERR_HAL; }
kiln_status refuseReset(void *) { return KILN_ERR_HAL; }

} // namespace

// The probe's runtime and net objects live on the stack for the call.
extern "C" kiln_status kiln_bmodel_query_memory(const void *bmodel, size_t size,
                                                uint32_t net_index,
                                                kiln_memory_requirements *out_req) {
  return kiln_bmodel_query_memory_ex(bmodel, size, net_index, out_req, nullptr);
}

namespace {

kiln_status queryMemory(const void *bmodel, size_t size, uint32_t net_index,
                        kiln_memory_requirements *out_req, kiln::rt::Detail *d) {
  if (!out_req)
    KILN_FAIL(d, INVALID_ARGUMENT, ARGUMENT, kiln::rt::kNoIndex, kiln::rt::kNoIndex,
              "out_req is null");
  kiln_hal probe{};
  probe.mem_base = 0; // kiln_net_load starts the first net here, 4 KiB aligned
  probe.mem_size = UINT64_MAX;
  probe.write_mem = discardWrite;
  probe.read_mem = refuseRead;
  probe.submit = refuseSubmit;
  probe.wait = refuseWait;
  probe.reset = refuseReset;

  alignas(16) unsigned char rt_storage[sizeof(kiln_runtime)];
  alignas(16) unsigned char net_storage[sizeof(kiln_net)];
  kiln_runtime *rt;
  kiln_net *net;
  // The probe HAL is always usable, so init cannot fail.
  kiln_runtime_init(rt_storage, sizeof rt_storage, &probe, &rt);
  kiln_status st =
      kiln::rt::loadNet(rt, bmodel, size, net_index, net_storage, sizeof net_storage, &net, d);
  if (st != KILN_OK)
    return st;

  kiln_memory_requirements req{};
  req.command_bytes = net->window_addr - net->queues_base;
  req.coeff_bytes = net->net->coeff_size();
  req.neuron_bytes = net->window_size - req.coeff_bytes; // the largest stage's
  // The next net starts on a section boundary: count the padding up to it.
  if (!kiln::rt::alignUpChecked(net->mem_end - net->mem_begin, kiln::rt::kSectionAlign,
                                &req.device_bytes))
    st = kiln::rt::fail(d, KILN_ERR_NO_DEVICE_MEMORY, KILN_OBJ_DEVICE_MEMORY, kiln::rt::kNoIndex,
                        kiln::rt::kNoIndex, "net larger than any address space");
  req.runtime_storage_bytes = kiln_runtime_storage_size();
  req.net_storage_bytes = kiln_net_storage_size();
  kiln_net_unload(net);
  if (st == KILN_OK)
    *out_req = req;
  return st;
}

} // namespace

extern "C" kiln_status kiln_bmodel_query_memory_ex(const void *bmodel, size_t size,
                                                   uint32_t net_index,
                                                   kiln_memory_requirements *out_req,
                                                   kiln_error_detail *out_detail) {
  kiln::rt::Detail d{};
  kiln_status st = queryMemory(bmodel, size, net_index, out_req, &d);
  return st == KILN_OK ? st : kiln::rt::finishFailure(st, &d, out_detail);
}
