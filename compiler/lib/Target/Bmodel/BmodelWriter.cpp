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

// One stage of a net; its coefficients are already in the blob at `coeff`.
flatbuffers::Offset<fb::Net> net(flatbuffers::FlatBufferBuilder &b, const codegen::NetCode &n,
                                 fb::BlobRange coeff, Blob &blob,
                                 const std::vector<flatbuffers::Offset<fb::Net>> *stages) {
  auto inputs = tensors(b, n.inputs);
  auto outputs = tensors(b, n.outputs);
  auto all = tensors(b, n.tensors);
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
                             &residency, n.macs, n.minDdrBytes, &buffers, &decisions,
                             stages);
}

// Stages 1.. first (FlatBuffers builds children before their parent), then
// stage 0 holding them; every stage names the one copy of the coefficients.
flatbuffers::Offset<fb::Net> stagedNet(flatbuffers::FlatBufferBuilder &b,
                                       const bmodel::StagedNet &stages, Blob &blob) {
  const codegen::NetCode &first = stages.front();
  fb::BlobRange coeff = blob.append(first.coeff.data(), first.coeff.size());
  std::vector<flatbuffers::Offset<fb::Net>> later;
  for (size_t i = 1; i < stages.size(); ++i)
    later.push_back(net(b, stages[i], coeff, blob, nullptr));
  return net(b, first, coeff, blob, later.empty() ? nullptr : &later);
}
} // namespace

const char kiln::bmodel::kCompilerVersion[] = "kiln " KILN_VERSION;

std::string kiln::bmodel::checkStages(const StagedNet &stages) {
  if (stages.empty())
    return "a net needs at least one stage";
  const codegen::NetCode &first = stages.front();
  auto shapes = [](const codegen::NetCode &n) {
    std::vector<std::vector<int64_t>> out;
    for (const codegen::TensorDesc &t : n.inputs)
      out.push_back(t.shape);
    return out;
  };
  auto sameIo = [](const std::vector<codegen::TensorDesc> &a,
                   const std::vector<codegen::TensorDesc> &b) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].name != b[i].name || a[i].dtype != b[i].dtype ||
          a[i].shape.size() != b[i].shape.size())
        return false;
    return true;
  };
  for (size_t i = 1; i < stages.size(); ++i) {
    const codegen::NetCode &s = stages[i];
    std::string which = "stage " + std::to_string(i) + " of net '" + first.name + "'";
    if (s.name != first.name)
      return which + " is named '" + s.name + "'";
    if (!sameIo(s.inputs, first.inputs) || !sameIo(s.outputs, first.outputs))
      return which + " has other inputs or outputs (names, dtypes, ranks) than stage 0";
    if (s.coeffSize != first.coeffSize || s.coeff != first.coeff)
      return which + " needs other coefficients than stage 0 (" +
             std::to_string(s.coeffSize) + " bytes vs " + std::to_string(first.coeffSize) +
             "); stages share one coefficient region";
    for (size_t j = 0; j < i; ++j)
      if (shapes(stages[j]) == shapes(s))
        return which + " has the input shapes of stage " + std::to_string(j);
  }
  return "";
}

std::vector<uint8_t> kiln::bmodel::serialize(const std::vector<StagedNet> &nets) {
  flatbuffers::FlatBufferBuilder b;
  Blob blob;
  std::vector<flatbuffers::Offset<fb::Net>> netOffsets;
  for (const auto &n : nets)
    netOffsets.push_back(stagedNet(b, n, blob));
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
