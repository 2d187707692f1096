//===- BmodelWriter.cpp - Serialize a net into a bmodel file --------------===//

#include "kiln/Target/Bmodel/BmodelWriter.h"

#include "kiln/abi/bmodel.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/version.h"
#include "kiln/bmodel_generated.h"

#include <cstring>
#include <zlib.h>

using namespace kiln;
namespace fb = kiln::bmodel;

namespace {

struct Blob {
  std::vector<uint8_t> bytes;
  fb::BlobRange append(const void *data, size_t size) {
    size_t at = (bytes.size() + KILN_BMODEL_BLOB_ALIGN - 1) /
                KILN_BMODEL_BLOB_ALIGN * KILN_BMODEL_BLOB_ALIGN;
    bytes.resize(at + size);
    if (size)
      std::memcpy(bytes.data() + at, data, size);
    return fb::BlobRange(at, size);
  }
};

flatbuffers::Offset<fb::Tensor> tensor(flatbuffers::FlatBufferBuilder &b,
                                       const codegen::TensorDesc &t) {
  return fb::CreateTensorDirect(b, t.name.c_str(), (fb::DType)t.dtype, &t.shape,
                                t.ddrOffset, t.size, t.scale, t.zeroPoint, t.buffer,
                                t.firstGroup, t.lastGroup);
}

std::vector<flatbuffers::Offset<fb::Tensor>>
tensors(flatbuffers::FlatBufferBuilder &b,
        const std::vector<codegen::TensorDesc> &ts) {
  std::vector<flatbuffers::Offset<fb::Tensor>> out;
  for (const auto &t : ts)
    out.push_back(tensor(b, t));
  return out;
}

std::vector<flatbuffers::Offset<flatbuffers::String>>
strings(flatbuffers::FlatBufferBuilder &b, const std::vector<std::string> &s) {
  std::vector<flatbuffers::Offset<flatbuffers::String>> out;
  for (const auto &x : s)
    out.push_back(b.CreateString(x));
  return out;
}

flatbuffers::Offset<fb::LayerGroup> group(flatbuffers::FlatBufferBuilder &b,
                                          const codegen::GroupCode &g, Blob &blob) {
  std::vector<flatbuffers::Offset<fb::TensorSlices>> slices;
  for (const auto &s : g.slices)
    slices.push_back(fb::CreateTensorSlicesDirect(
        b, s.tensor.c_str(), &s.nIdx, &s.nLen, &s.cIdx, &s.cLen, &s.hIdx,
        &s.hLen, &s.wIdx, &s.wLen));
  std::vector<flatbuffers::Offset<fb::Timestep>> steps;
  for (const auto &t : g.timesteps)
    steps.push_back(fb::CreateTimestep(b, t.slice, t.tiuBegin, t.tiuEnd,
                                       t.gdmaBegin, t.gdmaEnd));
  std::vector<flatbuffers::Offset<fb::LmemAlloc>> lmem;
  for (const auto &a : g.lmem)
    lmem.push_back(fb::CreateLmemAllocDirect(b, a.tensor.c_str(), a.addr, a.size,
                                             a.buffer, a.firstStep, a.lastStep,
                                             a.held));
  auto ops = strings(b, g.ops);
  fb::BlobRange tiu = blob.append(g.tiu.data(), g.tiu.size() * sizeof(kiln_tiu_cmd));
  fb::BlobRange gdma =
      blob.append(g.gdma.data(), g.gdma.size() * sizeof(kiln_gdma_cmd));
  fb::BlobRange bmTiu = blob.append(g.bmTiu.data(), g.bmTiu.size());
  fb::BlobRange bmGdma = blob.append(g.bmGdma.data(), g.bmGdma.size());
  return fb::CreateLayerGroupDirect(b, g.id, &ops, g.nSlices, g.hSlices, &slices,
                                    &steps, &lmem, &tiu, g.tiu.size(), &gdma,
                                    g.gdma.size(), g.cycles, g.cSlices,
                                    g.tiuOps.empty() ? nullptr : &g.tiuOps,
                                    g.gdmaTensors.empty() ? nullptr : &g.gdmaTensors,
                                    g.bmTiu.empty() ? nullptr : &bmTiu, g.bmTiuCount,
                                    g.bmGdma.empty() ? nullptr : &bmGdma, g.bmGdmaCount);
}

flatbuffers::Offset<fb::Net> net(flatbuffers::FlatBufferBuilder &b,
                                 const codegen::NetCode &n, Blob &blob) {
  auto inputs = tensors(b, n.inputs);
  auto outputs = tensors(b, n.outputs);
  auto all = tensors(b, n.tensors);
  fb::BlobRange coeff = blob.append(n.coeff.data(), n.coeff.size());
  std::vector<flatbuffers::Offset<fb::LayerGroup>> groups;
  for (const auto &g : n.groups)
    groups.push_back(group(b, g, blob));
  std::vector<flatbuffers::Offset<fb::DynamicWeight>> dynamic;
  std::vector<flatbuffers::Offset<fb::Residency>> residency;
  for (const auto &r : n.residents) {
    fb::ResidencyKind kind = r.formedOnChip ? fb::ResidencyKind::FormedOnChip
                             : r.dynamic    ? fb::ResidencyKind::DynamicWeight
                                            : fb::ResidencyKind::Coefficient;
    if (r.overSlices)
      residency.push_back(fb::CreateResidencyDirect(b, r.tensor.c_str(), kind, r.group,
                                                    r.lmemAddr, r.lmemSize, r.firstStep,
                                                    r.lastStep));
    if (!r.dynamic)
      continue;
    auto consumers = strings(b, r.consumers);
    auto producers = strings(b, r.producers);
    dynamic.push_back(fb::CreateDynamicWeightDirect(
        b, r.tensor.c_str(), r.producer.c_str(), &consumers, &r.shape, (fb::DType)r.dtype,
        r.formedOnChip ? fb::Layout::LMEM_NCHW : fb::Layout::OIHW, fb::Layout::LMEM_NCHW,
        r.ddrOffset, r.lmemAddr, r.lmemSize, r.group, r.firstStep, r.lastStep, r.formedOnChip,
        &producers));
  }
  std::vector<flatbuffers::Offset<fb::DdrBuffer>> buffers;
  for (const auto &d : n.buffers)
    buffers.push_back(fb::CreateDdrBuffer(b, d.ddrOffset, d.size, d.firstGroup, d.lastGroup));
  std::vector<flatbuffers::Offset<flatbuffers::String>> decisions;
  for (const std::string &line : n.decisions)
    decisions.push_back(b.CreateString(line));
  return fb::CreateNetDirect(b, n.name.c_str(), &inputs, &outputs, &all,
                             n.coeffSize, n.neuronSize, &coeff, &groups, &dynamic,
                             &residency, n.macs, n.minDdrBytes, &buffers, &decisions);
}
} // namespace

const char kiln::bmodel::kCompilerVersion[] = "kiln " KILN_VERSION;

std::vector<uint8_t> kiln::bmodel::serialize(const std::vector<codegen::NetCode> &nets) {
  flatbuffers::FlatBufferBuilder b;
  Blob blob;
  std::vector<flatbuffers::Offset<fb::Net>> netOffsets;
  for (const auto &n : nets)
    netOffsets.push_back(net(b, n, blob));
  auto chip = fb::CreateChipDirect(b, KILN_CHIP_NAME, KILN_CHIP_ID_BM1684X,
                                   KILN_NPU_NUM, KILN_LMEM_BYTES_PER_LANE,
                                   KILN_LMEM_BANKS, KILN_EU_BYTES,
                                   KILN_ABI_VERSION_MAJOR, KILN_ABI_VERSION_MINOR);
  auto model = fb::CreateModelDirect(b, KILN_BMODEL_FORMAT_MAJOR,
                                     KILN_BMODEL_FORMAT_MINOR, kCompilerVersion, chip,
                                     &netOffsets);
  b.Finish(model, fb::ModelIdentifier());

  kiln_bmodel_header header{};
  std::memcpy(header.magic, KILN_BMODEL_MAGIC, sizeof(header.magic));
  header.header_size = sizeof(header);
  header.format_major = KILN_BMODEL_FORMAT_MAJOR;
  header.format_minor = KILN_BMODEL_FORMAT_MINOR;
  header.flatbuffer_offset = sizeof(header);
  header.flatbuffer_size = b.GetSize();
  uint64_t fbEnd = header.flatbuffer_offset + header.flatbuffer_size;
  header.blob_offset = (fbEnd + KILN_BMODEL_BLOB_ALIGN - 1) /
                       KILN_BMODEL_BLOB_ALIGN * KILN_BMODEL_BLOB_ALIGN;
  header.blob_size = blob.bytes.size();

  std::vector<uint8_t> file(header.blob_offset + header.blob_size, 0);
  std::memcpy(file.data() + header.flatbuffer_offset, b.GetBufferPointer(), b.GetSize());
  if (!blob.bytes.empty())
    std::memcpy(file.data() + header.blob_offset, blob.bytes.data(), blob.bytes.size());
  header.checksum = crc32(0L, file.data() + sizeof(header), file.size() - sizeof(header));
  std::memcpy(file.data(), &header, sizeof(header));
  return file;
}
