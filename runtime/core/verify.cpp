#include "verify.h"

#include "crc32.h"
#include "internal.h"
#include "kiln/abi/bmodel.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cmd_check.h"
#include "kiln/abi/cost.h"
#include "kiln/abi/version.h"
#include "kiln/rt/kiln_rt.h"

namespace fb = kiln::bmodel;

namespace kiln::rt {
namespace {

constexpr uint64_t kLaneBytes = KILN_LMEM_BYTES_PER_LANE;

// The DDR window of a net, in offsets from its base.
struct NetRegions {
  uint64_t coeff_size; // [0, coeff_size) is read-only for commands
  uint64_t window;     // coeff_size + neuron_size
};

// ---- header ------------------------------------------------------------------

// The three parts follow one another in the file: header, FlatBuffer, blob.
kiln_status checkLayout(const kiln_bmodel_header &h, size_t size) {
  uint64_t fb_end, blob_end;
  if (!addChecked(h.flatbuffer_offset, h.flatbuffer_size, &fb_end) ||
      !addChecked(h.blob_offset, h.blob_size, &blob_end))
    return KILN_ERR_OUT_OF_RANGE;
  if (h.flatbuffer_offset < h.header_size || h.blob_offset < fb_end)
    return KILN_ERR_OUT_OF_RANGE;
  // Aligned parts make every FlatBuffer scalar and command record aligned.
  if (h.flatbuffer_offset % 8 != 0 || h.blob_offset % KILN_BMODEL_BLOB_ALIGN != 0)
    return KILN_ERR_OUT_OF_RANGE;
  return blob_end > size ? KILN_ERR_TRUNCATED : KILN_OK;
}

kiln_status checkHeader(const uint8_t *file, size_t size, kiln_bmodel_header *h) {
  if (size < sizeof h->magic)
    return KILN_ERR_TRUNCATED;
  if (__builtin_memcmp(file, KILN_BMODEL_MAGIC, sizeof h->magic) != 0)
    return KILN_ERR_BAD_MAGIC;
  if (size < sizeof *h)
    return KILN_ERR_TRUNCATED;
  copyBytes(h, file, sizeof *h);
  // A header shorter than ours cannot come from any version we know.
  if (h->format_major != KILN_BMODEL_FORMAT_MAJOR ||
      h->format_minor > KILN_BMODEL_FORMAT_MINOR || h->header_size < sizeof *h)
    return KILN_ERR_BAD_VERSION;
  // This format version defines no flags; the reserved word must stay zero.
  if (h->flags != 0 || h->reserved != 0)
    return KILN_ERR_UNSUPPORTED;
  kiln_status st = checkLayout(*h, size);
  if (st != KILN_OK)
    return st;
  // The checksum covers everything after the header up to the blob's end.
  uint64_t end = h->blob_offset + h->blob_size;
  if (crc32(file + h->header_size, end - h->header_size) != h->checksum)
    return KILN_ERR_BAD_CHECKSUM;
  return KILN_OK;
}

// ---- FlatBuffer ------------------------------------------------------------------

// The file identifier follows the root offset. FlatBuffers compares it with
// strncmp, which a freestanding image would have to provide: compare the
// bytes here and verify the buffer without an identifier.
kiln_status checkIdentifier(const uint8_t *fb_bytes, uint64_t fb_size) {
  constexpr size_t kAt = sizeof(flatbuffers::uoffset_t);
  constexpr size_t kLength = flatbuffers::kFileIdentifierLength;
  if (fb_size < kAt + kLength || __builtin_memcmp(fb_bytes + kAt, fb::ModelIdentifier(), kLength))
    return KILN_ERR_BAD_FLATBUFFER;
  return KILN_OK;
}

// ---- model and chip ------------------------------------------------------------

kiln_status checkChip(const fb::Model &model, const kiln_bmodel_header &h) {
  if (model.format_major() != h.format_major || model.format_minor() != h.format_minor)
    return KILN_ERR_BAD_VERSION;
  const fb::Chip *chip = model.chip();
  if (!chip || chip->chip_id() != KILN_CHIP_ID_BM1684X || chip->lanes() != KILN_NPU_NUM ||
      chip->lmem_bytes_per_lane() != KILN_LMEM_BYTES_PER_LANE ||
      chip->lmem_banks() != KILN_LMEM_BANKS || chip->eu_bytes() != KILN_EU_BYTES)
    return KILN_ERR_CHIP_MISMATCH;
  if (chip->abi_major() != KILN_ABI_VERSION_MAJOR)
    return KILN_ERR_ABI_MISMATCH;
  return KILN_OK;
}

// ---- tensors ---------------------------------------------------------------------

// FlatBuffers' verifier checks a vector's 4-byte length but not that 8-byte
// elements are aligned; a crafted file could otherwise cause misaligned reads
// (which fault on a core running without the MMU).
bool elementsAligned(const flatbuffers::Vector<int64_t> *v) {
  // An empty vector (a scalar's shape) has no elements to misread, and the
  // builder does not align its data.
  return !v || v->size() == 0 ||
         reinterpret_cast<uintptr_t>(v->Data()) % alignof(int64_t) == 0;
}

// Bytes of a dense tensor of the given dtype and shape; false if the dtype is
// unknown, the rank too high, a dimension negative or the size overflows.
bool denseBytes(uint32_t dtype, const flatbuffers::Vector<int64_t> *shape, uint64_t *out) {
  uint64_t bytes = kiln_dtype_bytes(dtype);
  uint32_t ndim = shape ? shape->size() : 0;
  if (bytes == 0 || ndim > KILN_MAX_DIMS)
    return false;
  for (uint32_t i = 0; i < ndim; ++i) {
    int64_t dim = shape->Get(i);
    if (dim < 0 || !mulChecked(bytes, static_cast<uint64_t>(dim), &bytes))
      return false;
  }
  *out = bytes;
  return true;
}

// Inputs and outputs live in the neuron region, which the host may write.
kiln_status checkTensor(const fb::Tensor &t, const NetRegions &r, bool io) {
  uint64_t bytes;
  if (!elementsAligned(t.shape()))
    return KILN_ERR_BAD_FLATBUFFER;
  if (!t.name() || !denseBytes(static_cast<uint32_t>(t.dtype()), t.shape(), &bytes) ||
      bytes != t.size())
    return KILN_ERR_BAD_TENSOR;
  if (!rangeWithin(t.ddr_offset(), t.size(), r.window) || (io && t.ddr_offset() < r.coeff_size))
    return KILN_ERR_OUT_OF_RANGE;
  return KILN_OK;
}

kiln_status checkTensors(const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>> *tensors,
                         const NetRegions &r, bool io) {
  if (!tensors)
    return KILN_OK;
  for (const fb::Tensor *t : *tensors) {
    kiln_status st = checkTensor(*t, r, io);
    if (st != KILN_OK)
      return st;
  }
  return KILN_OK;
}

bool lmemRangeOk(uint64_t addr, uint64_t size) { return rangeWithin(addr, size, kLaneBytes); }

kiln_status checkDynamicWeights(const fb::Net &net, const NetRegions &r) {
  if (!net.dynamic_weights())
    return KILN_OK;
  for (const fb::DynamicWeight *dw : *net.dynamic_weights()) {
    uint64_t bytes;
    if (!elementsAligned(dw->shape()))
      return KILN_ERR_BAD_FLATBUFFER;
    if (!denseBytes(static_cast<uint32_t>(dw->dtype()), dw->shape(), &bytes))
      return KILN_ERR_BAD_TENSOR;
    if (!rangeWithin(dw->ddr_offset(), bytes, r.window) ||
        !lmemRangeOk(dw->lmem_addr(), dw->lmem_size()))
      return KILN_ERR_OUT_OF_RANGE;
  }
  return KILN_OK;
}

kiln_status checkResidency(const fb::Net &net) {
  if (!net.residency())
    return KILN_OK;
  for (const fb::Residency *res : *net.residency())
    if (!lmemRangeOk(res->lmem_addr(), res->lmem_size()))
      return KILN_ERR_OUT_OF_RANGE;
  return KILN_OK;
}

// ---- activation plan --------------------------------------------------------

bool intersects(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return a0 <= b1 && b0 <= a1; }

// Format 1.1 nets plan their neuron region (DdrBuffer). Each buffer lies in
// the neuron region with a live range inside [-1, group count]; buffers live
// at the same time never share bytes; every neuron-region tensor lies inside
// its buffer, bytes and lifetime. Quadratic in the buffers, without a heap.
kiln_status checkMemoryPlan(const fb::Net &net, const NetRegions &r) {
  const auto *buffers = net.buffers();
  if (!buffers || buffers->size() == 0)
    return KILN_OK; // format 1.0: no plan, every tensor has its own bytes
  const int64_t end = net.groups() ? net.groups()->size() : 0;
  for (const fb::DdrBuffer *b : *buffers) {
    if (b->ddr_offset() < r.coeff_size || !rangeWithin(b->ddr_offset(), b->size(), r.window))
      return KILN_ERR_OUT_OF_RANGE;
    if (b->first_group() < -1 || b->first_group() > b->last_group() || b->last_group() > end)
      return KILN_ERR_BAD_MEMORY_PLAN;
  }
  for (uint32_t i = 0; i < buffers->size(); ++i) {
    const fb::DdrBuffer &a = *buffers->Get(i);
    for (uint32_t j = i + 1; j < buffers->size(); ++j) {
      const fb::DdrBuffer &b = *buffers->Get(j);
      if (intersects(a.first_group(), a.last_group(), b.first_group(), b.last_group()) &&
          a.ddr_offset() < b.ddr_offset() + b.size() && b.ddr_offset() < a.ddr_offset() + a.size())
        return KILN_ERR_BAD_MEMORY_PLAN;
    }
  }
  auto inBuffer = [&](const fb::Tensor &t) {
    if (t.ddr_offset() + t.size() <= r.coeff_size)
      return true; // a view of a coefficient: read-only, never planned
    if (t.buffer() < 0 || static_cast<uint32_t>(t.buffer()) >= buffers->size())
      return false;
    const fb::DdrBuffer &b = *buffers->Get(t.buffer());
    return t.ddr_offset() >= b.ddr_offset() &&
           t.ddr_offset() - b.ddr_offset() <= b.size() &&
           t.size() <= b.size() - (t.ddr_offset() - b.ddr_offset()) &&
           t.first_group() >= b.first_group() && t.last_group() <= b.last_group() &&
           t.first_group() <= t.last_group();
  };
  const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>> *lists[] = {
      net.inputs(), net.outputs(), net.tensors()};
  for (const auto *list : lists)
    if (list)
      for (const fb::Tensor *t : *list)
        if (!inBuffer(*t))
          return KILN_ERR_BAD_MEMORY_PLAN;
  return KILN_OK;
}

// ---- groups and commands ---------------------------------------------------------

// A queue's records: inside the blob, exactly count records, 8-byte aligned.
kiln_status checkQueueRange(const fb::BlobRange *range, uint32_t count, uint64_t record_bytes,
                            uint64_t blob_size) {
  uint64_t offset = range ? range->offset() : 0;
  uint64_t size = range ? range->size() : 0;
  if (!rangeWithin(offset, size, blob_size))
    return KILN_ERR_OUT_OF_RANGE;
  if (size != count * record_bytes || offset % 8 != 0)
    return KILN_ERR_BAD_COMMAND;
  return KILN_OK;
}

// Beyond the shared record checks: commands never write coefficients.
kiln_status checkGdmaRecord(const kiln_gdma_cmd &cmd, const NetRegions &r) {
  kiln_status st = kiln_gdma_cmd_check(&cmd, r.window);
  if (st != KILN_OK)
    return st;
  if (!kiln_gdma_dst_is_lmem(cmd.dir) && cmd.dst_addr < r.coeff_size)
    return KILN_ERR_OUT_OF_RANGE;
  return KILN_OK;
}

kiln_status checkGroupTables(const fb::LayerGroup &g) {
  if (g.timesteps())
    for (const fb::Timestep *ts : *g.timesteps())
      if (ts->tiu_begin() > ts->tiu_end() || ts->tiu_end() > g.tiu_count() ||
          ts->gdma_begin() > ts->gdma_end() || ts->gdma_end() > g.gdma_count())
        return KILN_ERR_BAD_COMMAND;
  if (g.lmem())
    for (const fb::LmemAlloc *alloc : *g.lmem())
      if (!lmemRangeOk(alloc->addr(), alloc->size()))
        return KILN_ERR_OUT_OF_RANGE;
  return KILN_OK;
}

kiln_status checkGroup(const fb::LayerGroup &g, const uint8_t *blob, uint64_t blob_size,
                       const NetRegions &r) {
  kiln_status st = checkQueueRange(g.tiu_cmds(), g.tiu_count(), sizeof(kiln_tiu_cmd), blob_size);
  if (st == KILN_OK)
    st = checkQueueRange(g.gdma_cmds(), g.gdma_count(), sizeof(kiln_gdma_cmd), blob_size);
  if (st != KILN_OK)
    return st;
  const kiln_tiu_cmd *tiu = tiuRecords(blob, g);
  const kiln_gdma_cmd *gdma = gdmaRecords(blob, g);
  for (uint32_t i = 0; i < g.tiu_count(); ++i)
    if ((st = kiln_tiu_cmd_check(&tiu[i])) != KILN_OK)
      return st;
  for (uint32_t i = 0; i < g.gdma_count(); ++i)
    if ((st = checkGdmaRecord(gdma[i], r)) != KILN_OK)
      return st;
  st = kiln_schedule_queues(tiu, g.tiu_count(), gdma, g.gdma_count(), nullptr, nullptr, nullptr);
  if (st != KILN_OK)
    return st;
  return checkGroupTables(g);
}

kiln_status checkNet(const fb::Net &net, const uint8_t *blob, uint64_t blob_size) {
  NetRegions r{net.coeff_size(), 0};
  if (!addChecked(net.coeff_size(), net.neuron_size(), &r.window))
    return KILN_ERR_OUT_OF_RANGE;
  const fb::BlobRange *coeff = net.coeff();
  if (coeff && (!rangeWithin(coeff->offset(), coeff->size(), blob_size) ||
                coeff->size() > net.coeff_size()))
    return KILN_ERR_OUT_OF_RANGE;
  kiln_status st;
  if ((st = checkTensors(net.inputs(), r, true)) != KILN_OK ||
      (st = checkTensors(net.outputs(), r, true)) != KILN_OK ||
      (st = checkTensors(net.tensors(), r, false)) != KILN_OK ||
      (st = checkDynamicWeights(net, r)) != KILN_OK || (st = checkResidency(net)) != KILN_OK ||
      (st = checkMemoryPlan(net, r)) != KILN_OK)
    return st;
  if (net.groups())
    for (const fb::LayerGroup *g : *net.groups())
      if ((st = checkGroup(*g, blob, blob_size, r)) != KILN_OK)
        return st;
  return KILN_OK;
}

} // namespace

const kiln_tiu_cmd *tiuRecords(const uint8_t *blob, const fb::LayerGroup &group) {
  const fb::BlobRange *range = group.tiu_cmds();
  return reinterpret_cast<const kiln_tiu_cmd *>(blob + (range ? range->offset() : 0));
}

const kiln_gdma_cmd *gdmaRecords(const uint8_t *blob, const fb::LayerGroup &group) {
  const fb::BlobRange *range = group.gdma_cmds();
  return reinterpret_cast<const kiln_gdma_cmd *>(blob + (range ? range->offset() : 0));
}

kiln_status verifyBmodel(const uint8_t *file, size_t size, VerifiedBmodel *out) {
  kiln_bmodel_header h;
  kiln_status st = checkHeader(file, size, &h);
  if (st != KILN_OK)
    return st;

  const uint8_t *fb_bytes = file + h.flatbuffer_offset;
  if (h.flatbuffer_size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return KILN_ERR_BAD_FLATBUFFER;
  if ((st = checkIdentifier(fb_bytes, h.flatbuffer_size)) != KILN_OK)
    return st;
  flatbuffers::Verifier verifier(fb_bytes, h.flatbuffer_size);
  if (!verifier.VerifyBuffer<fb::Model>(nullptr)) // identifier checked above
    return KILN_ERR_BAD_FLATBUFFER;
  const fb::Model *model = fb::GetModel(fb_bytes);
  if ((st = checkChip(*model, h)) != KILN_OK)
    return st;

  const uint8_t *blob = file + h.blob_offset;
  if (model->nets())
    for (const fb::Net *net : *model->nets())
      if ((st = checkNet(*net, blob, h.blob_size)) != KILN_OK)
        return st;
  *out = VerifiedBmodel{model, blob, h.blob_size};
  return KILN_OK;
}

} // namespace kiln::rt
