#include "verify.h"

#include "crc32.h"
#include "internal.h"
#include "kiln/abi/bm1684x_stream.h"
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
kiln_status checkLayout(const kiln_bmodel_header &h, size_t size, Detail *d) {
  uint64_t fb_end, blob_end;
  if (!addChecked(h.flatbuffer_offset, h.flatbuffer_size, &fb_end) ||
      !addChecked(h.blob_offset, h.blob_size, &blob_end))
    KILN_FAIL(d, OUT_OF_RANGE, HEADER, kNoIndex, kNoIndex, "part offset plus size overflows");
  if (h.flatbuffer_offset < h.header_size || h.blob_offset < fb_end)
    KILN_FAIL(d, OUT_OF_RANGE, HEADER, kNoIndex, kNoIndex, "header, FlatBuffer and blob overlap");
  // Aligned parts make every FlatBuffer scalar and command record aligned.
  if (h.flatbuffer_offset % 8 != 0 || h.blob_offset % KILN_BMODEL_BLOB_ALIGN != 0)
    KILN_FAIL(d, OUT_OF_RANGE, HEADER, kNoIndex, kNoIndex, "FlatBuffer or blob misaligned");
  if (blob_end > size)
    KILN_FAIL(d, TRUNCATED, HEADER, kNoIndex, kNoIndex, "blob ends past the end of the file");
  return KILN_OK;
}

kiln_status checkHeader(const uint8_t *file, size_t size, kiln_bmodel_header *h, Detail *d) {
  if (size < sizeof h->magic)
    KILN_FAIL(d, TRUNCATED, HEADER, kNoIndex, kNoIndex, "file shorter than the magic");
  if (__builtin_memcmp(file, KILN_BMODEL_MAGIC, sizeof h->magic) != 0)
    KILN_FAIL(d, BAD_MAGIC, HEADER, kNoIndex, kNoIndex, "magic is not a kiln bmodel's");
  if (size < sizeof *h)
    KILN_FAIL(d, TRUNCATED, HEADER, kNoIndex, kNoIndex, "file shorter than the header");
  copyBytes(h, file, sizeof *h);
  // A header shorter than ours cannot come from any version we know.
  if (h->format_major != KILN_BMODEL_FORMAT_MAJOR || h->format_minor > KILN_BMODEL_FORMAT_MINOR)
    KILN_FAIL(d, BAD_VERSION, HEADER, kNoIndex, kNoIndex, "format version unknown to the runtime");
  if (h->header_size < sizeof *h)
    KILN_FAIL(d, BAD_VERSION, HEADER, kNoIndex, kNoIndex, "header size below this version's");
  // This format version defines no flags; the reserved word must stay zero.
  if (h->flags != 0 || h->reserved != 0)
    KILN_FAIL(d, UNSUPPORTED, HEADER, kNoIndex, kNoIndex, "header flags or reserved word set");
  kiln_status st = checkLayout(*h, size, d);
  if (st != KILN_OK)
    return st;
  // The checksum covers everything after the header up to the blob's end.
  uint64_t end = h->blob_offset + h->blob_size;
  if (crc32(file + h->header_size, end - h->header_size) != h->checksum)
    KILN_FAIL(d, BAD_CHECKSUM, HEADER, kNoIndex, kNoIndex, "checksum does not match the file");
  return KILN_OK;
}

// ---- FlatBuffer ------------------------------------------------------------------

// The file identifier follows the root offset. FlatBuffers compares it with
// strncmp, which a freestanding image would have to provide: compare the
// bytes here and verify the buffer without an identifier.
kiln_status checkIdentifier(const uint8_t *fb_bytes, uint64_t fb_size, Detail *d) {
  constexpr size_t kAt = sizeof(flatbuffers::uoffset_t);
  constexpr size_t kLength = flatbuffers::kFileIdentifierLength;
  if (fb_size < kAt + kLength || __builtin_memcmp(fb_bytes + kAt, fb::ModelIdentifier(), kLength))
    KILN_FAIL(d, BAD_FLATBUFFER, FLATBUFFER, kNoIndex, kNoIndex, "file identifier is not KILN's");
  return KILN_OK;
}

// ---- model and chip ------------------------------------------------------------

kiln_status checkChip(const fb::Model &model, const kiln_bmodel_header &h, Detail *d) {
  if (model.format_major() != h.format_major || model.format_minor() != h.format_minor)
    KILN_FAIL(d, BAD_VERSION, FLATBUFFER, kNoIndex, kNoIndex, "model and header versions differ");
  const fb::Chip *chip = model.chip();
  if (!chip || chip->chip_id() != KILN_CHIP_ID_BM1684X || chip->lanes() != KILN_NPU_NUM ||
      chip->lmem_bytes_per_lane() != KILN_LMEM_BYTES_PER_LANE ||
      chip->lmem_banks() != KILN_LMEM_BANKS || chip->eu_bytes() != KILN_EU_BYTES)
    KILN_FAIL(d, CHIP_MISMATCH, CHIP, kNoIndex, kNoIndex, "not built for BM1684X's geometry");
  if (chip->abi_major() != KILN_ABI_VERSION_MAJOR)
    KILN_FAIL(d, ABI_MISMATCH, CHIP, kNoIndex, kNoIndex, "firmware ABI major version differs");
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

// Inputs and outputs (kind INPUT, OUTPUT) live in the neuron region, which
// the host may write; any other tensor (TENSOR) anywhere in the window.
kiln_status checkTensor(const fb::Tensor &t, const NetRegions &r, kiln_object_kind kind,
                        uint32_t i, Detail *d) {
  uint64_t bytes;
  if (!elementsAligned(t.shape()))
    return fail(d, KILN_ERR_BAD_FLATBUFFER, kind, i, kNoIndex, "tensor shape misaligned");
  if (!t.name())
    return fail(d, KILN_ERR_BAD_TENSOR, kind, i, kNoIndex, "tensor has no name");
  if (!denseBytes(static_cast<uint32_t>(t.dtype()), t.shape(), &bytes))
    return fail(d, KILN_ERR_BAD_TENSOR, kind, i, kNoIndex, "tensor dtype, rank or dims invalid");
  if (bytes != t.size())
    return fail(d, KILN_ERR_BAD_TENSOR, kind, i, kNoIndex, "tensor size is not shape x dtype");
  if (!rangeWithin(t.ddr_offset(), t.size(), r.window))
    return fail(d, KILN_ERR_OUT_OF_RANGE, kind, i, kNoIndex, "tensor outside the net's DDR window");
  if (kind != KILN_OBJ_TENSOR && t.ddr_offset() < r.coeff_size)
    return fail(d, KILN_ERR_OUT_OF_RANGE, kind, i, kNoIndex, "tensor outside the neuron region");
  return KILN_OK;
}

kiln_status checkTensors(const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>> *tensors,
                         const NetRegions &r, kiln_object_kind kind, Detail *d) {
  if (!tensors)
    return KILN_OK;
  for (uint32_t i = 0; i < tensors->size(); ++i) {
    kiln_status st = checkTensor(*tensors->Get(i), r, kind, i, d);
    if (st != KILN_OK)
      return st;
  }
  return KILN_OK;
}

bool lmemRangeOk(uint64_t addr, uint64_t size) { return rangeWithin(addr, size, kLaneBytes); }

kiln_status checkDynamicWeights(const fb::Net &net, const NetRegions &r, Detail *d) {
  if (!net.dynamic_weights())
    return KILN_OK;
  for (uint32_t i = 0; i < net.dynamic_weights()->size(); ++i) {
    const fb::DynamicWeight *dw = net.dynamic_weights()->Get(i);
    uint64_t bytes;
    if (!elementsAligned(dw->shape()))
      KILN_FAIL(d, BAD_FLATBUFFER, DYNAMIC_WEIGHT, i, kNoIndex, "shape misaligned");
    if (!denseBytes(static_cast<uint32_t>(dw->dtype()), dw->shape(), &bytes))
      KILN_FAIL(d, BAD_TENSOR, DYNAMIC_WEIGHT, i, kNoIndex, "dtype, rank or dims invalid");
    // A filter formed in LMEM has no DDR copy.
    if (!dw->formed_on_chip() && !rangeWithin(dw->ddr_offset(), bytes, r.window))
      KILN_FAIL(d, OUT_OF_RANGE, DYNAMIC_WEIGHT, i, kNoIndex, "outside the net's DDR window");
    if (!lmemRangeOk(dw->lmem_addr(), dw->lmem_size()))
      KILN_FAIL(d, OUT_OF_RANGE, DYNAMIC_WEIGHT, i, kNoIndex, "LMEM range outside the lane");
  }
  return KILN_OK;
}

kiln_status checkResidency(const fb::Net &net, Detail *d) {
  if (!net.residency())
    return KILN_OK;
  for (uint32_t i = 0; i < net.residency()->size(); ++i) {
    const fb::Residency *res = net.residency()->Get(i);
    if (!lmemRangeOk(res->lmem_addr(), res->lmem_size()))
      KILN_FAIL(d, OUT_OF_RANGE, RESIDENCY, i, kNoIndex, "LMEM range outside the lane");
  }
  return KILN_OK;
}

// ---- activation plan --------------------------------------------------------

bool intersects(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return a0 <= b1 && b0 <= a1; }

// Format 1.1 nets plan their neuron region (DdrBuffer). Each buffer lies in
// the neuron region with a live range inside [-1, group count]; buffers live
// at the same time never share bytes; every neuron-region tensor lies inside
// its buffer, bytes and lifetime. Quadratic in the buffers, without a heap.
kiln_status checkMemoryPlan(const fb::Net &net, const NetRegions &r, Detail *d) {
  const auto *buffers = net.buffers();
  if (!buffers || buffers->size() == 0)
    return KILN_OK; // format 1.0: no plan, every tensor has its own bytes
  const int64_t end = net.groups() ? net.groups()->size() : 0;
  for (uint32_t i = 0; i < buffers->size(); ++i) {
    const fb::DdrBuffer *b = buffers->Get(i);
    if (b->ddr_offset() < r.coeff_size || !rangeWithin(b->ddr_offset(), b->size(), r.window))
      KILN_FAIL(d, OUT_OF_RANGE, BUFFER, i, kNoIndex, "buffer outside the neuron region");
    if (b->first_group() < -1 || b->first_group() > b->last_group() || b->last_group() > end)
      KILN_FAIL(d, BAD_MEMORY_PLAN, BUFFER, i, kNoIndex, "live range outside the run");
  }
  for (uint32_t i = 0; i < buffers->size(); ++i) {
    const fb::DdrBuffer &a = *buffers->Get(i);
    for (uint32_t j = i + 1; j < buffers->size(); ++j) {
      const fb::DdrBuffer &b = *buffers->Get(j);
      if (intersects(a.first_group(), a.last_group(), b.first_group(), b.last_group()) &&
          a.ddr_offset() < b.ddr_offset() + b.size() && b.ddr_offset() < a.ddr_offset() + a.size())
        KILN_FAIL(d, BAD_MEMORY_PLAN, BUFFER, i, j, "shares bytes with a buffer live at once");
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
  const kiln_object_kind kinds[] = {KILN_OBJ_INPUT, KILN_OBJ_OUTPUT, KILN_OBJ_TENSOR};
  for (uint32_t k = 0; k < 3; ++k)
    for (uint32_t i = 0; lists[k] && i < lists[k]->size(); ++i)
      if (!inBuffer(*lists[k]->Get(i)))
        return fail(d, KILN_ERR_BAD_MEMORY_PLAN, kinds[k], i, kNoIndex,
                    "tensor outside its buffer's bytes or lifetime");
  return KILN_OK;
}

// ---- groups and commands ---------------------------------------------------------

// A queue's records: inside the blob, exactly count records, 8-byte aligned.
kiln_status checkQueueRange(const fb::BlobRange *range, uint32_t count, uint64_t record_bytes,
                            uint64_t blob_size, uint32_t group, Detail *d) {
  const bool tiu = record_bytes == sizeof(kiln_tiu_cmd);
  uint64_t offset = range ? range->offset() : 0;
  uint64_t size = range ? range->size() : 0;
  if (!rangeWithin(offset, size, blob_size))
    KILN_FAIL(d, OUT_OF_RANGE, GROUP, group, kNoIndex,
              tiu ? "TIU queue outside the blob" : "GDMA queue outside the blob");
  if (size != count * record_bytes || offset % 8 != 0)
    KILN_FAIL(d, BAD_COMMAND, GROUP, group, kNoIndex,
              tiu ? "TIU queue size or alignment wrong" : "GDMA queue size or alignment wrong");
  return KILN_OK;
}

// Why kiln_tiu_cmd_check refused a record (st): its checks again, in order.
__attribute__((cold)) const char *tiuReason(const kiln_tiu_cmd &c, kiln_status st) {
  if (c.op < KILN_TIU_CONV || c.op >= KILN_TIU_OP_END)
    return "unknown TIU op";
  if (c.flags & ~KILN_TIU_KNOWN_FLAGS)
    return "unknown TIU flags";
  if (st == KILN_ERR_OUT_OF_RANGE)
    return kiln_tiu_operand_check(&c.out, 0, kLaneBytes) == KILN_ERR_OUT_OF_RANGE
               ? "TIU command writes LMEM outside the lane"
               : "TIU command reads LMEM outside the lane";
  const bool in1 = kiln_tiu_uses_in1(&c), in2 = kiln_tiu_uses_in2(&c);
  const bool elt = c.op == KILN_TIU_ELTWISE;
  if (kiln_tiu_operand_check(&c.out, 0, kLaneBytes) != KILN_OK ||
      kiln_tiu_operand_check(&c.in0, elt, kLaneBytes) != KILN_OK ||
      (in1 && kiln_tiu_operand_check(&c.in1, elt, kLaneBytes) != KILN_OK) ||
      (in2 && kiln_tiu_operand_check(&c.in2, 0, kLaneBytes) != KILN_OK))
    return "TIU operand flags, dtype or dims invalid";
  if ((!in1 && (c.in1.flags & KILN_OPND_USED)) || (!in2 && (c.in2.flags & KILN_OPND_USED)))
    return "TIU operand set that its op does not use";
  if (!kiln_tiu_dtypes_ok(&c, in1, in2))
    return "TIU dtypes not allowed for its op";
  if (!kiln_tiu_quant_fields_ok(&c))
    return "TIU INT8 quantization fields invalid";
  return "TIU shapes or parameters inconsistent";
}

// Why kiln_gdma_cmd_check refused a record: its checks again, in order.
__attribute__((cold)) const char *gdmaReason(const kiln_gdma_cmd &c, uint64_t window) {
  const bool fill = (c.flags & KILN_GDMA_FLAG_FILL) != 0;
  if (c.dir >= KILN_GDMA_DIR_END)
    return "unknown GDMA direction";
  if (kiln_dtype_bytes(c.dtype) == 0u)
    return "unknown GDMA dtype";
  if ((c.flags & ~KILN_GDMA_FLAG_FILL) || (fill && (c.src_addr >> 32)))
    return "unknown GDMA flags or fill pattern";
  if (!c.n || !c.c || !c.h || !c.w || (c.lmem_plane_h && c.lmem_plane_h < c.h))
    return "GDMA dims zero or row window short";
  if (!kiln_gdma_lane_ok(&c))
    return "GDMA lane offset past the lanes or on a side that is not LMEM";
  const bool src_lmem = kiln_gdma_src_is_lmem(c.dir), dst_lmem = kiln_gdma_dst_is_lmem(c.dir);
  if (!fill && kiln_gdma_side_check(&c, src_lmem, c.src_addr, c.src_stride, window) != KILN_OK)
    return src_lmem ? "source outside LMEM" : "source outside the net's DDR window";
  if (kiln_gdma_side_check(&c, dst_lmem, c.dst_addr, c.dst_stride, window) != KILN_OK)
    return dst_lmem ? "destination outside LMEM" : "destination outside the net's DDR window";
  return "copy larger than the net's DDR window";
}

// Beyond the shared record checks: commands never write coefficients.
kiln_status checkGdmaRecord(const kiln_gdma_cmd &cmd, const NetRegions &r, uint32_t group,
                            uint32_t i, Detail *d) {
  kiln_status st = kiln_gdma_cmd_check(&cmd, r.window);
  if (st != KILN_OK)
    return fail(d, st, KILN_OBJ_GDMA_CMD, group, i, gdmaReason(cmd, r.window));
  if (!kiln_gdma_dst_is_lmem(cmd.dir) && cmd.dst_addr < r.coeff_size)
    KILN_FAIL(d, OUT_OF_RANGE, GDMA_CMD, group, i, "destination in the coefficient region");
  return KILN_OK;
}

// Counts the commands the scheduler starts: at a deadlock, the first ones
// that never start are the blocked ones.
kiln_status countStart(void *user, kiln_engine engine, uint32_t) {
  ++static_cast<uint32_t *>(user)[engine];
  return KILN_OK;
}

// Every id in order and every wait satisfiable, then no wait cycle.
kiln_status checkSync(const kiln_tiu_cmd *tiu, const kiln_gdma_cmd *gdma,
                      const fb::LayerGroup &g, uint32_t group, Detail *d) {
  const uint32_t n_tiu = g.tiu_count(), n_gdma = g.gdma_count();
  for (uint32_t i = 0; i < n_tiu; ++i) {
    if (tiu[i].cmd_id != i + 1)
      KILN_FAIL(d, BAD_SYNC, TIU_CMD, group, i, "command id is not its queue position");
    if (tiu[i].wait_gdma_id > n_gdma)
      KILN_FAIL(d, BAD_SYNC, TIU_CMD, group, i, "waits for a GDMA id past the queue");
  }
  for (uint32_t i = 0; i < n_gdma; ++i) {
    if (gdma[i].cmd_id != i + 1)
      KILN_FAIL(d, BAD_SYNC, GDMA_CMD, group, i, "command id is not its queue position");
    if (gdma[i].wait_tiu_id > n_tiu)
      KILN_FAIL(d, BAD_SYNC, GDMA_CMD, group, i, "waits for a TIU id past the queue");
  }
  uint32_t started[2] = {0, 0}; // by kiln_engine
  kiln_queue_arrays arrays{tiu, gdma};
  const kiln_queue_source q{&arrays, n_tiu, n_gdma, kiln_array_tiu_at, kiln_array_gdma_at};
  kiln_status st = scheduleSource(q, countStart, started);
  if (st == KILN_OK)
    return KILN_OK;
  if (started[KILN_ENGINE_TIU] < n_tiu)
    return fail(d, st, KILN_OBJ_TIU_CMD, group, started[KILN_ENGINE_TIU],
                "waits in a cycle: the queues deadlock");
  return fail(d, st, KILN_OBJ_GDMA_CMD, group, started[KILN_ENGINE_GDMA],
              "waits in a cycle: the queues deadlock");
}

kiln_status checkGroupTables(const fb::LayerGroup &g, uint32_t group, Detail *d) {
  if (g.timesteps())
    for (uint32_t i = 0; i < g.timesteps()->size(); ++i) {
      const fb::Timestep *ts = g.timesteps()->Get(i);
      if (ts->tiu_begin() > ts->tiu_end() || ts->tiu_end() > g.tiu_count() ||
          ts->gdma_begin() > ts->gdma_end() || ts->gdma_end() > g.gdma_count())
        KILN_FAIL(d, BAD_COMMAND, TIMESTEP, group, i, "command range outside the queues");
    }
  if (g.lmem())
    for (uint32_t i = 0; i < g.lmem()->size(); ++i) {
      const fb::LmemAlloc *alloc = g.lmem()->Get(i);
      if (!lmemRangeOk(alloc->addr(), alloc->size()))
        KILN_FAIL(d, OUT_OF_RANGE, LMEM_ALLOC, group, i, "allocation outside the lane");
    }
  return KILN_OK;
}

// The group's BM1684X streams (format 1.5), if it has any: inside the blob,
// well formed, their copies inside LMEM and the net's window (compiled
// addresses: KILN_BM_DDR_BASE + offset), never writing coefficients.
kiln_status checkStreams(const fb::LayerGroup &g, uint32_t group, const uint8_t *blob,
                         uint64_t blob_size, const NetRegions &r, Detail *d) {
  const fb::BlobRange *tiu = g.bm1684x_tiu(), *gdma = g.bm1684x_gdma();
  if (!tiu && !gdma && !g.bm1684x_tiu_count() && !g.bm1684x_gdma_count())
    return KILN_OK;
  kiln_bm_stream_fault fault;
  uint64_t hi;
  if (!tiu || !gdma || !rangeWithin(tiu->offset(), tiu->size(), blob_size) ||
      !rangeWithin(gdma->offset(), gdma->size(), blob_size) ||
      !addChecked(KILN_BM_DDR_BASE, r.window, &hi))
    KILN_FAIL(d, OUT_OF_RANGE, GROUP, group, kNoIndex, "BM1684X streams outside the blob");
  if (kiln_bm_check_streams(blob + tiu->offset(), tiu->size(), g.bm1684x_tiu_count(),
                            blob + gdma->offset(), gdma->size(), g.bm1684x_gdma_count(),
                            KILN_BM_DDR_BASE, KILN_BM_DDR_BASE + r.coeff_size, hi, &fault))
    return KILN_OK;
  return fail(d, KILN_ERR_BAD_COMMAND,
              fault.engine == KILN_BM_ENGINE_TIU ? KILN_OBJ_TIU_CMD : KILN_OBJ_GDMA_CMD, group,
              fault.index, fault.why);
}

kiln_status checkGroup(const fb::LayerGroup &g, uint32_t group, const uint8_t *blob,
                       uint64_t blob_size, const NetRegions &r, Detail *d) {
  kiln_status st =
      checkQueueRange(g.tiu_cmds(), g.tiu_count(), sizeof(kiln_tiu_cmd), blob_size, group, d);
  if (st == KILN_OK)
    st = checkQueueRange(g.gdma_cmds(), g.gdma_count(), sizeof(kiln_gdma_cmd), blob_size, group,
                         d);
  if (st != KILN_OK)
    return st;
  const kiln_tiu_cmd *tiu = tiuRecords(blob, g);
  const kiln_gdma_cmd *gdma = gdmaRecords(blob, g);
  for (uint32_t i = 0; i < g.tiu_count(); ++i)
    if ((st = kiln_tiu_cmd_check(&tiu[i])) != KILN_OK)
      return fail(d, st, KILN_OBJ_TIU_CMD, group, i, tiuReason(tiu[i], st));
  for (uint32_t i = 0; i < g.gdma_count(); ++i)
    if ((st = checkGdmaRecord(gdma[i], r, group, i, d)) != KILN_OK)
      return st;
  if ((st = checkSync(tiu, gdma, g, group, d)) != KILN_OK ||
      (st = checkStreams(g, group, blob, blob_size, r, d)) != KILN_OK)
    return st;
  return checkGroupTables(g, group, d);
}

kiln_status checkNet(const fb::Net &net, const uint8_t *blob, uint64_t blob_size, Detail *d) {
  NetRegions r{net.coeff_size(), 0};
  if (!addChecked(net.coeff_size(), net.neuron_size(), &r.window))
    KILN_FAIL(d, OUT_OF_RANGE, NET, kNoIndex, kNoIndex, "coefficient + neuron size overflows");
  const fb::BlobRange *coeff = net.coeff();
  if (coeff && !rangeWithin(coeff->offset(), coeff->size(), blob_size))
    KILN_FAIL(d, OUT_OF_RANGE, NET, kNoIndex, kNoIndex, "coefficients outside the blob");
  if (coeff && coeff->size() > net.coeff_size())
    KILN_FAIL(d, OUT_OF_RANGE, NET, kNoIndex, kNoIndex, "coefficients overflow their region");
  kiln_status st;
  if ((st = checkTensors(net.inputs(), r, KILN_OBJ_INPUT, d)) != KILN_OK ||
      (st = checkTensors(net.outputs(), r, KILN_OBJ_OUTPUT, d)) != KILN_OK ||
      (st = checkTensors(net.tensors(), r, KILN_OBJ_TENSOR, d)) != KILN_OK ||
      (st = checkDynamicWeights(net, r, d)) != KILN_OK || (st = checkResidency(net, d)) != KILN_OK ||
      (st = checkMemoryPlan(net, r, d)) != KILN_OK)
    return st;
  if (net.groups())
    for (uint32_t i = 0; i < net.groups()->size(); ++i)
      if ((st = checkGroup(*net.groups()->Get(i), i, blob, blob_size, r, d)) != KILN_OK)
        return st;
  return KILN_OK;
}

uint32_t count(const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>> *v) {
  return v ? v->size() : 0;
}

// Stage s of `root` (checked as a net by checkNet) runs over root's
// coefficients, which are the ones loaded, and has root's input and output
// counts. (Each stage's commands are checked against its own window, which
// the loaded window contains, so nothing else here guards memory; the
// compiler keeps names and dtypes the same across stages.)
kiln_status checkStage(const fb::Net &root, const fb::Net &stage, Detail *d) {
  const fb::BlobRange *a = root.coeff(), *b = stage.coeff();
  if (stage.coeff_size() != root.coeff_size() || !a != !b ||
      (a && (a->offset() != b->offset() || a->size() != b->size())))
    KILN_FAIL(d, BAD_TENSOR, NET, kNoIndex, kNoIndex, "stage has other coefficients than stage 0");
  if (count(root.inputs()) != count(stage.inputs()) ||
      count(root.outputs()) != count(stage.outputs()))
    KILN_FAIL(d, BAD_TENSOR, NET, kNoIndex, kNoIndex, "stage has other inputs or outputs than stage 0");
  return KILN_OK;
}

// Every stage of a file's net.
kiln_status checkStages(const fb::Net &root, const uint8_t *blob, uint64_t blob_size,
                        Detail *d) {
  kiln_status st = KILN_OK;
  for (uint32_t s = 0; st == KILN_OK && s < stageCount(root); ++s) {
    const fb::Net &stage = stageOf(root, s);
    if ((st = checkNet(stage, blob, blob_size, d)) == KILN_OK && s)
      st = checkStage(root, stage, d);
    d->stage = s;
  }
  return st;
}

} // namespace

kiln_status scheduleSource(const kiln_queue_source &q, kiln_schedule_cb cb, void *user) {
  return kiln_schedule_source(&q, cb, user, nullptr);
}

const kiln_tiu_cmd *tiuRecords(const uint8_t *blob, const fb::LayerGroup &group) {
  const fb::BlobRange *range = group.tiu_cmds();
  return reinterpret_cast<const kiln_tiu_cmd *>(blob + (range ? range->offset() : 0));
}

const kiln_gdma_cmd *gdmaRecords(const uint8_t *blob, const fb::LayerGroup &group) {
  const fb::BlobRange *range = group.gdma_cmds();
  return reinterpret_cast<const kiln_gdma_cmd *>(blob + (range ? range->offset() : 0));
}

kiln_status verifyBmodel(const uint8_t *file, size_t size, VerifiedBmodel *out, Detail *d) {
  // Sophgo's container, as kiln writes it: kiln's own container is its blob.
  if (kiln_is_sophgo(file, size)) {
    uint64_t at, inner;
    if (!kiln_sophgo_blob(file, size, &at, &inner))
      KILN_FAIL(d, TRUNCATED, HEADER, kNoIndex, kNoIndex, "Sophgo container's parts overrun the file");
    if (at % KILN_SOPHGO_BLOB_ALIGN != 0)
      KILN_FAIL(d, BAD_MAGIC, HEADER, kNoIndex, kNoIndex, "Sophgo container not written by kiln");
    file += at;
    size = inner;
  }
  kiln_bmodel_header h;
  kiln_status st = checkHeader(file, size, &h, d);
  if (st != KILN_OK)
    return st;

  const uint8_t *fb_bytes = file + h.flatbuffer_offset;
  if (h.flatbuffer_size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    KILN_FAIL(d, BAD_FLATBUFFER, FLATBUFFER, kNoIndex, kNoIndex, "FlatBuffer of 2 GiB or more");
  if ((st = checkIdentifier(fb_bytes, h.flatbuffer_size, d)) != KILN_OK)
    return st;
  flatbuffers::Verifier verifier(fb_bytes, h.flatbuffer_size);
  if (!verifier.VerifyBuffer<fb::Model>(nullptr)) // identifier checked above
    KILN_FAIL(d, BAD_FLATBUFFER, FLATBUFFER, kNoIndex, kNoIndex, "FlatBuffer fails verification");
  const fb::Model *model = fb::GetModel(fb_bytes);
  if ((st = checkChip(*model, h, d)) != KILN_OK)
    return st;

  const uint8_t *blob = file + h.blob_offset;
  if (model->nets())
    for (uint32_t i = 0; i < model->nets()->size(); ++i)
      if ((st = checkStages(*model->nets()->Get(i), blob, h.blob_size, d)) != KILN_OK) {
        d->net = i;
        return st;
      }
  *out = VerifiedBmodel{model, blob, h.blob_size};
  return KILN_OK;
}

} // namespace kiln::rt
