// Loading a verified net into device memory, running it, and moving tensors.
#include <new>

#include "internal.h"
#include "kiln/abi/bm1684x_stream.h"
#include "kiln/rt/runtime.hpp"
#include "verify.h"

namespace fb = kiln::bmodel;

static_assert(sizeof(kiln_net) <= kiln::rt::kNetStorageBytes, "grow kNetStorageBytes");

namespace kiln::rt {
namespace {

// Queues are packed in group order, each group's TIU queue then its GDMA
// queue, then (for a group with a warm plan) its warm TIU and GDMA queues;
// load and run walk the groups the same way to find them.
class QueueCursor {
public:
  explicit QueueCursor(uint64_t start) : next_(start) {}
  uint64_t place(uint64_t bytes) {
    uint64_t at = next_;
    next_ += alignUp(bytes, kQueueAlign);
    return at;
  }

private:
  uint64_t next_;
};

uint64_t tiuQueueBytes(const fb::LayerGroup &g) { return g.tiu_count() * sizeof(kiln_tiu_cmd); }
uint64_t gdmaQueueBytes(const fb::LayerGroup &g) { return g.gdma_count() * sizeof(kiln_gdma_cmd); }

// A HAL whose device runs BM1684X's own streams gets those instead of the
// records, always cold (warm queues are kiln records).
bool runsStreams(const kiln_runtime &rt) { return rt.hal.isa == KILN_ISA_BM1684X; }
uint64_t rangeBytes(const fb::BlobRange *r) { return r ? r->size() : 0; }
uint64_t larger(uint64_t a, uint64_t b) { return a > b ? a : b; }

// Device addresses of one group's queues (warm ones only with a warm plan).
struct GroupQueues {
  uint64_t tiu, gdma, warm_tiu, warm_gdma;
};

GroupQueues placeQueues(QueueCursor &cursor, const fb::LayerGroup &g, const WarmPlan &plan,
                        bool streams) {
  GroupQueues q{};
  if (streams) {
    q.tiu = cursor.place(rangeBytes(g.bm1684x_tiu()));
    q.gdma = cursor.place(rangeBytes(g.bm1684x_gdma()));
    return q;
  }
  q.tiu = cursor.place(tiuQueueBytes(g));
  q.gdma = cursor.place(gdmaQueueBytes(g));
  q.warm_tiu = cursor.place(warmTiuBytes(g, plan));
  q.warm_gdma = cursor.place(warmGdmaBytes(g, plan));
  return q;
}

// Where a stage's queues start: after those of the stages before it (their
// sum was checked for overflow at load).
uint64_t stageQueues(const kiln_net &n, uint32_t stage) {
  uint64_t at = n.queues_base, bytes;
  for (uint32_t s = 0; s < stage; ++s) {
    queueSectionBytes(stageOf(*n.root, s), n.blob, &bytes);
    at += bytes;
  }
  return at;
}

// Reserves [queues of every stage][coeff][neuron] on top of the runtime's
// stack.
kiln_status planDeviceMemory(const kiln_runtime &rt, const fb::Net &root, const uint8_t *blob,
                             kiln_net *n, Detail *d) {
  uint64_t queues = 0, mem_limit = rt.hal.mem_base + rt.hal.mem_size;
  bool fits = true;
  n->window_size = 0;
  for (uint32_t s = 0; s < stageCount(root); ++s) {
    const fb::Net &stage = stageOf(root, s);
    uint64_t bytes;
    fits = fits && queueSectionBytes(stage, blob, &bytes) && addChecked(queues, bytes, &queues);
    // verified not to overflow; every stage has root's coeff_size
    n->window_size = larger(n->window_size, stage.coeff_size() + stage.neuron_size());
  }
  if (!fits || !alignUpChecked(rt.top, kSectionAlign, &n->queues_base) ||
      !addChecked(n->queues_base, queues, &n->window_addr) ||
      !alignUpChecked(n->window_addr, kSectionAlign, &n->window_addr) ||
      !addChecked(n->window_addr, n->window_size, &n->mem_end) || n->mem_end > mem_limit)
    KILN_FAIL(d, NO_DEVICE_MEMORY, DEVICE_MEMORY, kNoIndex, kNoIndex,
              "net does not fit above the loaded nets");
  n->mem_begin = rt.top;
  return KILN_OK;
}

kiln_status writeDevice(const kiln_hal &hal, uint64_t addr, const void *src, uint64_t size) {
  return size ? hal.write_mem(hal.ctx, addr, src, size) : KILN_OK;
}

// The coefficient region beyond the file's coefficients reads as zeros.
kiln_status zeroDevice(const kiln_hal &hal, uint64_t addr, uint64_t size) {
  static constexpr uint8_t kZeros[64] = {};
  while (size) {
    uint64_t chunk = size < sizeof kZeros ? size : sizeof kZeros;
    kiln_status st = hal.write_mem(hal.ctx, addr, kZeros, chunk);
    if (st != KILN_OK)
      return st;
    addr += chunk;
    size -= chunk;
  }
  return KILN_OK;
}

// A GDMA stream, its compiled DDR addresses moved to the net's window
// (verified: whole commands, copies inside the window).
kiln_status uploadGdmaStream(const kiln_net &n, const fb::LayerGroup &g, const uint8_t *blob,
                             uint64_t addr) {
  const uint8_t *s = blob + g.bm1684x_gdma()->offset();
  const uint64_t size = g.bm1684x_gdma()->size(), delta = n.window_addr - KILN_BM_DDR_BASE;
  // Verified: every command before the end is a tensor copy.
  const uint32_t bytes = KILN_BM_DMA_TENSOR_BYTES;
  uint64_t at = 0;
  kiln_status st;
  for (uint32_t i = 0; i + 1 < g.bm1684x_gdma_count(); ++i, at += bytes) {
    uint8_t cmd[KILN_BM_DMA_TENSOR_BYTES];
    for (uint32_t b = 0; b < bytes; ++b)
      cmd[b] = s[at + b];
    if (!kiln_bm_dma_tensor_relocate(cmd, delta))
      return KILN_ERR_NO_DEVICE_MEMORY; // the window lies past the GDMA's 40 bits
    if ((st = writeDevice(n.rt->hal, addr + at, cmd, bytes)) != KILN_OK)
      return st;
  }
  return writeDevice(n.rt->hal, addr + at, s + at, size - at); // the end and its padding
}

kiln_status uploadQueues(const kiln_net &n, const fb::Net &net, const uint8_t *blob,
                         uint64_t at, Detail *d) {
  const kiln_hal &hal = n.rt->hal;
  const bool streams = runsStreams(*n.rt);
  kiln_status st;
  QueueCursor cursor(at);
  if (net.groups())
    for (uint32_t i = 0; i < net.groups()->size(); ++i) {
      const fb::LayerGroup &g = *net.groups()->Get(i);
      WarmPlan plan;
      planWarm(net, i, blob, &plan);
      GroupQueues q = placeQueues(cursor, g, plan, streams);
      if (streams) {
        st = writeDevice(hal, q.tiu, blob + g.bm1684x_tiu()->offset(), g.bm1684x_tiu()->size());
        if (st == KILN_OK)
          st = uploadGdmaStream(n, g, blob, q.gdma);
      } else if ((st = writeDevice(hal, q.tiu, tiuRecords(blob, g), tiuQueueBytes(g))) == KILN_OK) {
        st = writeDevice(hal, q.gdma, gdmaRecords(blob, g), gdmaQueueBytes(g));
      }
      if (st != KILN_OK)
        return fail(d, st, KILN_OBJ_HAL, i, kNoIndex, "writing the queues failed");
      if (streams)
        continue;
      if (plan.count &&
          (st = uploadWarmQueues(hal, g, i, blob, plan, q.warm_tiu, q.warm_gdma, d)) != KILN_OK)
        return st;
    }
  return KILN_OK;
}

// Every stage's queues, then the one copy of the coefficients.
kiln_status upload(const kiln_net &n, const fb::Net &net, const uint8_t *blob, Detail *d) {
  const kiln_hal &hal = n.rt->hal;
  kiln_status st;
  for (uint32_t s = 0; s < stageCount(net); ++s)
    if ((st = uploadQueues(n, stageOf(net, s), blob, stageQueues(n, s), d)) != KILN_OK) {
      d->stage = s;
      return st;
    }
  uint64_t coeff_bytes = net.coeff() ? net.coeff()->size() : 0;
  if (coeff_bytes &&
      (st = writeDevice(hal, n.window_addr, blob + net.coeff()->offset(), coeff_bytes)) != KILN_OK)
    return fail(d, st, KILN_OBJ_HAL, kNoIndex, kNoIndex, "writing the coefficients failed");
  st = zeroDevice(hal, n.window_addr + coeff_bytes, net.coeff_size() - coeff_bytes);
  if (st != KILN_OK)
    return fail(d, st, KILN_OBJ_HAL, kNoIndex, kNoIndex, "zeroing the coefficients failed");
  return KILN_OK;
}

bool isLoaded(const kiln_net *net) { return net && net->tag == kNetTag; }

bool isAligned(const void *p, uintptr_t align) {
  return reinterpret_cast<uintptr_t>(p) % align == 0;
}

enum class TensorList { Inputs, Outputs, All };

const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>> *tensorList(const kiln_net &net,
                                                                       TensorList which) {
  switch (which) {
  case TensorList::Inputs:
    return net.net->inputs();
  case TensorList::Outputs:
    return net.net->outputs();
  default:
    return net.net->tensors();
  }
}

uint32_t tensorCount(const kiln_net *net, TensorList which) {
  if (!isLoaded(net))
    return 0;
  auto list = tensorList(*net, which);
  return list ? list->size() : 0;
}

kiln_status findTensor(const kiln_net *net, TensorList which, uint32_t index,
                       const fb::Tensor **out) {
  if (!isLoaded(net))
    return KILN_ERR_INVALID_ARGUMENT;
  if (index >= tensorCount(net, which))
    return KILN_ERR_NOT_FOUND;
  *out = tensorList(*net, which)->Get(index);
  return KILN_OK;
}

kiln_status tensorInfo(const kiln_net *net, TensorList which, uint32_t index,
                       kiln_tensor_info *out) {
  const fb::Tensor *t;
  if (!out)
    return KILN_ERR_INVALID_ARGUMENT;
  kiln_status st = findTensor(net, which, index, &t);
  if (st != KILN_OK)
    return st;
  kiln_tensor_info info{};
  info.name = t->name()->c_str();
  info.dtype = static_cast<uint32_t>(t->dtype());
  info.ndim = t->shape() ? t->shape()->size() : 0;
  for (uint32_t i = 0; i < info.ndim; ++i)
    info.shape[i] = t->shape()->Get(i);
  info.bytes = t->size();
  info.ddr_offset = t->ddr_offset();
  info.scale = t->scale();
  info.zero_point = t->zero_point();
  const bool planned = net->net->buffers() && net->net->buffers()->size() > 0;
  info.first_group = planned ? t->first_group() : -1;
  info.last_group = planned ? t->last_group()
                            : static_cast<int32_t>(net->net->groups() ? net->net->groups()->size() : 0);
  *out = info;
  return KILN_OK;
}

kiln_status readTensor(const kiln_net *net, TensorList which, uint32_t index, void *dst,
                       size_t bytes) {
  const fb::Tensor *t;
  kiln_status st = findTensor(net, which, index, &t);
  if (st != KILN_OK)
    return st;
  if (bytes < t->size())
    return KILN_ERR_BUFFER_TOO_SMALL;
  if (!dst && t->size())
    return KILN_ERR_INVALID_ARGUMENT;
  const kiln_hal &hal = net->rt->hal;
  return t->size() ? hal.read_mem(hal.ctx, net->window_addr + t->ddr_offset(), dst, t->size())
                   : KILN_OK;
}

// A failed wait leaves the device mid-submission or faulted: reset it.
kiln_status runGroup(const kiln_hal &hal, const kiln_submit_desc &desc, uint32_t timeout_us,
                     uint32_t group, Detail *d) {
  kiln_status st = hal.submit(hal.ctx, &desc);
  if (st != KILN_OK)
    return fail(d, st, KILN_OBJ_GROUP, group, kNoIndex, "the HAL refused the submission");
  st = hal.wait(hal.ctx, timeout_us);
  if (st != KILN_OK) {
    hal.reset(hal.ctx);
    return fail(d, st, KILN_OBJ_GROUP, group, kNoIndex, "the group did not complete");
  }
  return KILN_OK;
}

// What a stage needs of the runtime beyond verification: the command set
// the HAL runs and a residency plan it can keep.
kiln_status checkStageRuns(const kiln_runtime &rt, const fb::Net &stage, const uint8_t *blob,
                           Detail *d) {
  if (runsStreams(rt) && stage.groups())
    for (uint32_t i = 0; i < stage.groups()->size(); ++i)
      if (!stage.groups()->Get(i)->bm1684x_tiu_count())
        KILN_FAIL(d, UNSUPPORTED, GROUP, i, kNoIndex,
                  "no BM1684X streams (compile with isa: bm1684x)");
  return checkResidencyPlan(stage, blob, d);
}

} // namespace

kiln_status loadNet(kiln_runtime *rt, const void *bmodel, size_t size, uint32_t net_index,
                    void *storage, size_t storage_size, kiln_net **out_net, Detail *d) {
  if (!rt || rt->tag != kRuntimeTag)
    KILN_FAIL(d, INVALID_ARGUMENT, ARGUMENT, kNoIndex, kNoIndex, "runtime not initialised");
  if (!bmodel || !storage || !out_net || !isAligned(storage, 16) || !isAligned(bmodel, 8))
    KILN_FAIL(d, INVALID_ARGUMENT, ARGUMENT, kNoIndex, kNoIndex,
              "bmodel, storage or out_net null or misaligned");
  if (storage_size < sizeof(kiln_net))
    KILN_FAIL(d, BUFFER_TOO_SMALL, ARGUMENT, kNoIndex, kNoIndex, "net storage too small");

  VerifiedBmodel bm;
  kiln_status st = verifyBmodel(static_cast<const uint8_t *>(bmodel), size, &bm, d);
  if (st != KILN_OK)
    return st;
  if (!bm.model->nets() || net_index >= bm.model->nets()->size())
    KILN_FAIL(d, NOT_FOUND, ARGUMENT, kNoIndex, kNoIndex, "the file has no net of that index");

  kiln_net n{};
  n.tag = kNetTag;
  n.rt = rt;
  n.root = n.net = bm.model->nets()->Get(net_index);
  n.blob = bm.blob;
  n.net_index = net_index;
  for (uint32_t s = 0; s < stageCount(*n.root); ++s)
    if ((st = checkStageRuns(*rt, stageOf(*n.root, s), bm.blob, d)) != KILN_OK) {
      d->net = net_index, d->stage = s;
      return st;
    }
  if ((st = planDeviceMemory(*rt, *n.root, bm.blob, &n, d)) != KILN_OK ||
      (st = upload(n, *n.root, bm.blob, d)) != KILN_OK) { // upload names the stage
    d->net = net_index;
    return st;
  }
  n.queues_addr = n.queues_base;
  rt->top = n.mem_end;
  n.load_id = trackerNewLoad(&rt->residency);
  *out_net = ::new (storage) kiln_net(n);
  return KILN_OK;
}

bool queueSectionBytes(const fb::Net &net, const uint8_t *blob, uint64_t *out) {
  uint64_t total = 0;
  if (net.groups())
    for (uint32_t i = 0; i < net.groups()->size(); ++i) {
      const fb::LayerGroup &g = *net.groups()->Get(i);
      WarmPlan plan;
      planWarm(net, i, blob, &plan);
      // Room for the records or the streams, whichever a HAL takes.
      const uint64_t parts[] = {larger(tiuQueueBytes(g), rangeBytes(g.bm1684x_tiu())),
                                larger(gdmaQueueBytes(g), rangeBytes(g.bm1684x_gdma())),
                                warmTiuBytes(g, plan), warmGdmaBytes(g, plan)};
      for (uint64_t bytes : parts)
        if (!alignUpChecked(bytes, kQueueAlign, &bytes) || !addChecked(total, bytes, &total))
          return false;
    }
  *out = total;
  return true;
}

} // namespace kiln::rt

using namespace kiln::rt;

extern "C" {

size_t kiln_net_storage_size(void) { return sizeof(kiln_net); }

kiln_status kiln_net_load(kiln_runtime *rt, const void *bmodel, size_t size, uint32_t net_index,
                          void *storage, size_t storage_size, kiln_net **out_net) {
  return kiln_net_load_ex(rt, bmodel, size, net_index, storage, storage_size, out_net, nullptr);
}

kiln_status kiln_net_load_ex(kiln_runtime *rt, const void *bmodel, size_t size,
                             uint32_t net_index, void *storage, size_t storage_size,
                             kiln_net **out_net, kiln_error_detail *out_detail) {
  Detail d{};
  kiln_status st = loadNet(rt, bmodel, size, net_index, storage, storage_size, out_net, &d);
  return st == KILN_OK ? st : finishFailure(st, &d, out_detail);
}

kiln_status kiln_net_unload(kiln_net *net) {
  if (!isLoaded(net))
    return KILN_ERR_INVALID_ARGUMENT;
  if (net->rt->top != net->mem_end)
    return KILN_ERR_BAD_STATE; // a later net still sits on top of this one
  net->rt->top = net->mem_begin;
  trackerForgetLoad(&net->rt->residency, net->load_id);
  net->tag = 0;
  return KILN_OK;
}

uint32_t kiln_net_input_count(const kiln_net *net) { return tensorCount(net, TensorList::Inputs); }
uint32_t kiln_net_output_count(const kiln_net *net) { return tensorCount(net, TensorList::Outputs); }
uint32_t kiln_net_tensor_count(const kiln_net *net) { return tensorCount(net, TensorList::All); }

kiln_status kiln_net_input_info(const kiln_net *net, uint32_t index, kiln_tensor_info *out_info) {
  return tensorInfo(net, TensorList::Inputs, index, out_info);
}
kiln_status kiln_net_output_info(const kiln_net *net, uint32_t index, kiln_tensor_info *out_info) {
  return tensorInfo(net, TensorList::Outputs, index, out_info);
}
kiln_status kiln_net_tensor_info(const kiln_net *net, uint32_t index, kiln_tensor_info *out_info) {
  return tensorInfo(net, TensorList::All, index, out_info);
}

uint32_t kiln_net_stage_count(const kiln_net *net) {
  return isLoaded(net) ? stageCount(*net->root) : 0;
}
uint32_t kiln_net_stage(const kiln_net *net) { return isLoaded(net) ? net->stage : 0; }

kiln_status kiln_net_select_stage(kiln_net *net, uint32_t stage) {
  if (!isLoaded(net))
    return KILN_ERR_INVALID_ARGUMENT;
  if (stage >= stageCount(*net->root))
    return KILN_ERR_NOT_FOUND;
  if (stage != net->stage) // the tracker knows groups by index, not by stage
    trackerForgetLoad(&net->rt->residency, net->load_id);
  net->stage = stage;
  net->net = &stageOf(*net->root, stage);
  net->queues_addr = stageQueues(*net, stage);
  return KILN_OK;
}

kiln_status kiln_net_select_stage_for(kiln_net *net, const int64_t *const *shapes,
                                      uint32_t input_count) {
  if (!isLoaded(net) || (!shapes && input_count))
    return KILN_ERR_INVALID_ARGUMENT;
  for (uint32_t s = 0; s < stageCount(*net->root); ++s) {
    const auto *inputs = stageOf(*net->root, s).inputs();
    bool same = (inputs ? inputs->size() : 0) == input_count;
    for (uint32_t i = 0; same && i < input_count; ++i) {
      const auto *dims = inputs->Get(i)->shape(); // verified: aligned elements
      same = !dims || !dims->size() ||
             (shapes[i] && __builtin_memcmp(dims->data(), shapes[i],
                                            dims->size() * sizeof(int64_t)) == 0);
    }
    if (same)
      return kiln_net_select_stage(net, s);
  }
  return KILN_ERR_NOT_FOUND;
}

kiln_status kiln_net_set_input(kiln_net *net, uint32_t index, const void *data, size_t bytes) {
  const kiln::bmodel::Tensor *t;
  kiln_status st = findTensor(net, TensorList::Inputs, index, &t);
  if (st != KILN_OK)
    return st;
  if (bytes != t->size() || (!data && bytes))
    return KILN_ERR_INVALID_ARGUMENT;
  return writeDevice(net->rt->hal, net->window_addr + t->ddr_offset(), data, bytes);
}

kiln_status kiln_net_get_output(const kiln_net *net, uint32_t index, void *dst, size_t bytes) {
  return readTensor(net, TensorList::Outputs, index, dst, bytes);
}

kiln_status kiln_net_read_tensor(const kiln_net *net, uint32_t index, void *dst, size_t bytes) {
  return readTensor(net, TensorList::All, index, dst, bytes);
}

// Each group runs warm (without the loads of coefficients LMEM still holds)
// when the tracker says every one of them is there, cold otherwise.
kiln_status kiln_net_run(kiln_net *net, uint32_t timeout_us, kiln_run_stats *out_stats) {
  return kiln_net_run_ex(net, timeout_us, nullptr, nullptr, out_stats, nullptr);
}

kiln_status kiln_net_run_observed(kiln_net *net, uint32_t timeout_us, kiln_group_done_fn on_group,
                                  void *user, kiln_run_stats *out_stats) {
  return kiln_net_run_ex(net, timeout_us, on_group, user, out_stats, nullptr);
}

kiln_status kiln_net_run_ex(kiln_net *net, uint32_t timeout_us, kiln_group_done_fn on_group,
                            void *user, kiln_run_stats *out_stats, kiln_error_detail *out_detail) {
  Detail d{};
  if (!isLoaded(net)) {
    fail(&d, KILN_ERR_INVALID_ARGUMENT, KILN_OBJ_ARGUMENT, kNoIndex, kNoIndex, "net not loaded");
    return finishFailure(KILN_ERR_INVALID_ARGUMENT, &d, out_detail);
  }
  kiln_run_stats stats{};
  kiln_status st = KILN_OK;
  ResidencyTracker &tracker = net->rt->residency;
  QueueCursor cursor(net->queues_addr);
  const auto *groups = net->net->groups();
  const bool streams = runsStreams(*net->rt);
  for (uint32_t i = 0; groups && i < groups->size(); ++i) {
    const fb::LayerGroup &g = *groups->Get(i);
    WarmPlan plan;
    planWarm(*net->net, i, net->blob, &plan);
    GroupQueues q = placeQueues(cursor, g, plan, streams);
    const bool warm = !streams && plan.count && trackerHolds(tracker, net->load_id, i, plan);
    kiln_submit_desc desc{};
    desc.ddr_base = net->window_addr;
    desc.ddr_size = net->window_size;
    desc.tiu_queue_addr = warm ? q.warm_tiu : q.tiu;
    desc.gdma_queue_addr = warm ? q.warm_gdma : q.gdma;
    desc.tiu_count = g.tiu_count();
    desc.gdma_count = warm ? warmGdmaCount(g, plan) : g.gdma_count();
    if (streams) {
      desc.isa = KILN_ISA_BM1684X;
      desc.tiu_count = g.bm1684x_tiu_count();
      desc.gdma_count = g.bm1684x_gdma_count();
      desc.tiu_bytes = rangeBytes(g.bm1684x_tiu());
      desc.gdma_bytes = rangeBytes(g.bm1684x_gdma());
    }
    if ((st = runGroup(net->rt->hal, desc, timeout_us, i, &d)) != KILN_OK) {
      trackerReset(&tracker); // a failed submission leaves LMEM unknown
      d.net = net->net_index;
      break;
    }
    trackerRan(&tracker, net->load_id, i, g, plan);
    if (on_group)
      on_group(user, i);
    stats.groups_run++;
    stats.tiu_commands += desc.tiu_count;
    stats.gdma_commands += desc.gdma_count;
    if (warm) {
      stats.resident_loads_avoided += plan.count;
      stats.resident_bytes_saved += plan.bytes;
    }
  }
  if (out_stats)
    *out_stats = stats;
  return st == KILN_OK ? st : finishFailure(st, &d, out_detail);
}

} // extern "C"
