#include "bmodel_builder.h"

#include <zlib.h>

#include <cstring>

#include "kiln/bmodel_generated.h"

namespace kiln::test {
namespace {

namespace fb = kiln::bmodel;

size_t alignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

uint64_t denseBytes(const TensorSpec &t) {
  uint64_t bytes = kiln_dtype_bytes(t.dtype);
  for (int64_t d : t.shape)
    bytes *= uint64_t(d);
  return bytes;
}

// Appends bytes to the blob on a 64-byte boundary and returns their range.
fb::BlobRange appendBlob(std::vector<uint8_t> &blob, const void *data, size_t size) {
  size_t offset = alignUp(blob.size(), KILN_BMODEL_BLOB_ALIGN);
  blob.resize(offset + size);
  if (size)
    std::memcpy(blob.data() + offset, data, size);
  return fb::BlobRange(offset, size);
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>>>
buildTensors(flatbuffers::FlatBufferBuilder &b, const std::vector<TensorSpec> &specs) {
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const TensorSpec &t : specs)
    tensors.push_back(fb::CreateTensorDirect(b, t.name.c_str(), fb::DType(t.dtype), &t.shape,
                                             t.ddr_offset, t.size.value_or(denseBytes(t)), 1.0f,
                                             0, t.buffer, t.first_group, t.last_group));
  return b.CreateVector(tensors);
}

flatbuffers::Offset<fb::Net> buildNet(flatbuffers::FlatBufferBuilder &b, const NetSpec &net,
                                      std::vector<uint8_t> &blob) {
  fb::BlobRange coeff = appendBlob(blob, net.coeff.data(), net.coeff.size());
  std::vector<flatbuffers::Offset<fb::LayerGroup>> groups;
  for (size_t i = 0; i < net.groups.size(); ++i) {
    const GroupSpec &g = net.groups[i];
    fb::BlobRange tiu = appendBlob(blob, g.tiu.data(), g.tiu.size() * sizeof(kiln_tiu_cmd));
    fb::BlobRange gdma = appendBlob(blob, g.gdma.data(), g.gdma.size() * sizeof(kiln_gdma_cmd));
    fb::BlobRange bm_tiu = appendBlob(blob, g.bm_tiu.data(), g.bm_tiu.size());
    fb::BlobRange bm_gdma = appendBlob(blob, g.bm_gdma.data(), g.bm_gdma.size());
    std::vector<flatbuffers::Offset<fb::Timestep>> steps;
    for (const TimestepSpec &t : g.timesteps)
      steps.push_back(fb::CreateTimestep(b, t.slice, t.tiu_begin, t.tiu_end, t.gdma_begin,
                                         t.gdma_end));
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Timestep>>> step_vec = 0;
    if (!steps.empty())
      step_vec = b.CreateVector(steps);
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::LmemAlloc>>> lmem_vec = 0;
    if (g.lmem) {
      std::vector<flatbuffers::Offset<fb::LmemAlloc>> allocs;
      for (const LmemSpec &a : *g.lmem)
        allocs.push_back(fb::CreateLmemAllocDirect(b, a.tensor.c_str(), a.addr, a.size, a.buffer,
                                                   a.first_step, a.last_step, a.held));
      lmem_vec = b.CreateVector(allocs);
    }
    std::vector<flatbuffers::Offset<fb::TensorSlices>> slices;
    for (const std::string &t : g.slices)
      slices.push_back(fb::CreateTensorSlicesDirect(b, t.c_str()));
    auto ops = b.CreateVectorOfStrings(g.ops);
    auto slice_vec = b.CreateVector(slices);
    auto tiu_ops = b.CreateVector(g.tiu_ops);
    auto gdma_tensors = b.CreateVector(g.gdma_tensors);
    fb::LayerGroupBuilder group(b);
    // Absent unless given, as in bmodels of earlier formats.
    if (!g.ops.empty())
      group.add_ops(ops);
    if (!g.slices.empty())
      group.add_slices(slice_vec);
    if (!g.tiu_ops.empty())
      group.add_tiu_ops(tiu_ops);
    if (!g.gdma_tensors.empty())
      group.add_gdma_tensors(gdma_tensors);
    if (!steps.empty())
      group.add_timesteps(step_vec);
    if (g.lmem)
      group.add_lmem(lmem_vec);
    group.add_id(uint32_t(i));
    group.add_tiu_cmds(&tiu);
    group.add_tiu_count(uint32_t(g.tiu.size()));
    group.add_gdma_cmds(&gdma);
    group.add_gdma_count(uint32_t(g.gdma.size()));
    if (g.bm_tiu_count) {
      group.add_bm1684x_tiu(&bm_tiu);
      group.add_bm1684x_tiu_count(g.bm_tiu_count);
      group.add_bm1684x_gdma(&bm_gdma);
      group.add_bm1684x_gdma_count(g.bm_gdma_count);
    }
    groups.push_back(group.Finish());
  }
  auto name = b.CreateString(net.name);
  auto inputs = buildTensors(b, net.inputs);
  auto outputs = buildTensors(b, net.outputs);
  auto tensors = buildTensors(b, net.tensors);
  auto group_vec = b.CreateVector(groups);
  std::vector<flatbuffers::Offset<fb::Residency>> residency;
  for (const ResidencySpec &r : net.residency)
    residency.push_back(fb::CreateResidencyDirect(
        b, r.tensor.c_str(),
        r.formed    ? fb::ResidencyKind::FormedOnChip
        : r.dynamic ? fb::ResidencyKind::DynamicWeight
                    : fb::ResidencyKind::Coefficient,
        r.group,
        r.lmem_addr, r.lmem_size, r.first_step, r.last_step));
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Residency>>> residency_vec = 0;
  if (!residency.empty())
    residency_vec = b.CreateVector(residency);
  std::vector<flatbuffers::Offset<fb::DdrBuffer>> buffers;
  for (const BufferSpec &d : net.buffers)
    buffers.push_back(fb::CreateDdrBuffer(b, d.ddr_offset, d.size, d.first_group, d.last_group));
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::DdrBuffer>>> buffer_vec = 0;
  if (!buffers.empty())
    buffer_vec = b.CreateVector(buffers);
  fb::NetBuilder nb(b);
  nb.add_name(name);
  nb.add_inputs(inputs);
  nb.add_outputs(outputs);
  nb.add_tensors(tensors);
  nb.add_coeff_size(net.coeff_size);
  nb.add_neuron_size(net.neuron_size);
  nb.add_coeff(&coeff);
  nb.add_groups(group_vec);
  if (!residency.empty())
    nb.add_residency(residency_vec);
  if (!buffers.empty())
    nb.add_buffers(buffer_vec);
  return nb.Finish();
}

} // namespace

uint32_t zlibCrc32(const uint8_t *data, size_t size) {
  return uint32_t(crc32(crc32(0L, Z_NULL, 0), data, uInt(size)));
}

kiln_bmodel_header readHeader(const std::vector<uint8_t> &file) {
  kiln_bmodel_header h;
  std::memcpy(&h, file.data(), sizeof h);
  return h;
}

void writeHeader(std::vector<uint8_t> &file, const kiln_bmodel_header &header) {
  std::memcpy(file.data(), &header, sizeof header);
}

void updateChecksum(std::vector<uint8_t> &file) {
  kiln_bmodel_header h = readHeader(file);
  h.checksum = zlibCrc32(file.data() + h.header_size, h.blob_offset + h.blob_size - h.header_size);
  writeHeader(file, h);
}

std::vector<uint8_t> buildBmodel(const ModelSpec &spec) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<uint8_t> blob;
  std::vector<flatbuffers::Offset<fb::Net>> nets;
  for (const NetSpec &net : spec.nets)
    nets.push_back(buildNet(b, net, blob));
  auto chip = fb::CreateChipDirect(b, KILN_CHIP_NAME, spec.chip_id, spec.lanes,
                                   spec.lmem_bytes_per_lane, KILN_LMEM_BANKS, KILN_EU_BYTES,
                                   spec.abi_major, spec.abi_minor);
  auto model = fb::CreateModelDirect(b, spec.format_major, spec.format_minor, "kiln-test", chip,
                                     &nets);
  fb::FinishModelBuffer(b, model);

  kiln_bmodel_header h{};
  std::memcpy(h.magic, KILN_BMODEL_MAGIC, sizeof h.magic);
  h.header_size = sizeof h;
  h.format_major = spec.format_major;
  h.format_minor = spec.format_minor;
  h.flatbuffer_offset = sizeof h;
  h.flatbuffer_size = b.GetSize();
  h.blob_offset = alignUp(h.flatbuffer_offset + h.flatbuffer_size, KILN_BMODEL_BLOB_ALIGN);
  h.blob_size = blob.size();

  std::vector<uint8_t> file(h.blob_offset + h.blob_size);
  std::memcpy(file.data() + h.flatbuffer_offset, b.GetBufferPointer(), b.GetSize());
  if (!blob.empty())
    std::memcpy(file.data() + h.blob_offset, blob.data(), blob.size());
  writeHeader(file, h);
  updateChecksum(file);
  return file;
}

} // namespace kiln::test
