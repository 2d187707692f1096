//===- SophgoWriter.cpp - Sophgo's bmodel container -----------------------===//
//
// Writes the container libbmrt loads (FACTS.md section 6). libbmrt reads a
// GDMA DDR address below ctx_addr as a coefficient and one at or above it as
// an activation, and relocates each by where it placed that region. kiln's
// compiled addresses are KILN_BM_DDR_BASE + the offset in the net's DDR
// image, coefficients first, so coeff_mem.address = KILN_BM_DDR_BASE and
// ctx_addr = KILN_BM_DDR_BASE + coeffSize hold without rewriting a command.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Bmodel/BmodelWriter.h"

#include "kiln/abi/bm1684x.h"
#include "kiln/abi/bmodel.h"
#include "kiln/abi/chip.h"
#include "kiln/bmodel_generated.h"
#include "kiln/sophgo_bmodel_generated.h"

#include "llvm/Support/ErrorHandling.h"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <openssl/sha.h>

using namespace kiln;
namespace sg = kiln::sophgo;

namespace {

/// bm_data_type_t of a kiln_dtype.
uint32_t bmDataType(uint8_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32: return 0;
  case KILN_DTYPE_F16: return 1;
  case KILN_DTYPE_INT8: return 2;
  case KILN_DTYPE_UINT8: return 3;
  case KILN_DTYPE_INT16: return 4;
  case KILN_DTYPE_INT32: return 6;
  case KILN_DTYPE_BF16: return 8;
  }
  llvm_unreachable("bmDataType: unknown kiln_dtype");
}

/// A range of the inner kiln container's blob, as a range of Sophgo's blob
/// (which starts with that container).
sg::Binary binary(const bmodel::BlobRange *r, uint64_t kilnBlobOffset) {
  return r ? sg::Binary(kilnBlobOffset + r->offset(), r->size()) : sg::Binary(0, 0);
}

/// Model.time: SOURCE_DATE_EPOCH when set, so that builds can be reproduced.
std::string buildTime() {
  std::time_t t = std::time(nullptr);
  if (const char *epoch = std::getenv("SOURCE_DATE_EPOCH"))
    t = static_cast<std::time_t>(std::strtoll(epoch, nullptr, 10));
  char text[32] = {};
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(text, sizeof text, "%a %b %e %H:%M:%S %Y", &tm);
  return text;
}

std::vector<flatbuffers::Offset<sg::Tensor>>
ioTensors(flatbuffers::FlatBufferBuilder &b, const std::vector<codegen::TensorDesc> &ts,
          int32_t hidden) {
  std::vector<flatbuffers::Offset<sg::Tensor>> out;
  for (size_t i = 0; i < ts.size(); ++i) {
    const codegen::TensorDesc &t = ts[i];
    std::vector<uint64_t> dims(t.shape.begin(), t.shape.end());
    std::vector<flatbuffers::Offset<sg::Shape>> shapes{sg::CreateShapeDirect(b, &dims)};
    out.push_back(sg::CreateTensorDirect(
        b, t.name.c_str(), bmDataType(t.dtype), /*gmem_stmode=*/0,
        KILN_BM_DDR_BASE + t.ddrOffset, t.size, &shapes, /*mem_type=*/1, t.scale,
        /*cpu_addr=*/0, /*pad_h=*/0, t.zeroPoint, hidden, static_cast<int32_t>(i)));
  }
  return out;
}

// One stage: a NetParameter with its command groups over the net's one
// coefficient region (every stage's CoeffMem names the same bytes). ctxSize
// is the largest stage's activation region: libbmrt 1.30 sizes the neuron
// buffer stage by stage and, when a later stage needs more, reallocates it
// after the earlier stages were given addresses in the old one (their
// outputs then read as zeros); with one size for all there is nothing to grow.
flatbuffers::Offset<sg::NetParameter> stage(flatbuffers::FlatBufferBuilder &b,
                                            const codegen::NetCode &n,
                                            const bmodel::Net &index,
                                            const std::vector<uint8_t> &inner,
                                            uint64_t kilnBlobOffset, uint64_t ctxSize) {
  std::vector<flatbuffers::Offset<sg::CmdGroup>> groups;
  for (size_t i = 0; i < n.groups.size(); ++i) {
    const codegen::GroupCode &g = n.groups[i];
    const bmodel::LayerGroup *ig = index.groups()->Get(i);
    sg::Binary tiu = binary(ig->bm1684x_tiu(), kilnBlobOffset),
               gdma = binary(ig->bm1684x_gdma(), kilnBlobOffset);
    groups.push_back(sg::CreateCmdGroup(b, g.bmTiuCount, g.bmGdmaCount, &tiu, &gdma,
                                        static_cast<uint32_t>(g.bmTiu.size()),
                                        static_cast<uint32_t>(g.bmGdma.size())));
  }
  flatbuffers::Offset<sg::CoeffMem> coeff = 0;
  if (!n.coeff.empty()) {
    sg::Binary bytes = binary(index.coeff(), kilnBlobOffset);
    std::vector<uint8_t> sha(SHA256_DIGEST_LENGTH);
    SHA256(inner.data() + bytes.start(), bytes.size(), sha.data());
    coeff = sg::CreateCoeffMemDirect(b, KILN_BM_DDR_BASE, &sha, &bytes);
  }
  auto inputs = ioTensors(b, n.inputs, 1), outputs = ioTensors(b, n.outputs, 2);
  // libbmrt runs a static net through its sub_net list: one TPU subnet with
  // the same groups, inputs and outputs, and no successor.
  std::vector<int32_t> last{-1};
  std::vector<flatbuffers::Offset<sg::SubNet>> subnets{sg::CreateSubNetDirect(
      b, /*subnet_mode=*/0, &groups, nullptr, &inputs, &outputs, /*is_dynamic=*/0, 0, 0, 0,
      0, /*id=*/0, &last)};
  return sg::CreateNetParameterDirect(b, &inputs, &outputs, KILN_BM_DDR_BASE + n.coeffSize,
                                      ctxSize, coeff, /*is_dynamic=*/0, 0, 0, &groups,
                                      nullptr, nullptr, nullptr, &subnets);
}

// libbmrt picks the stage whose input shapes the application passes.
flatbuffers::Offset<sg::Net> net(flatbuffers::FlatBufferBuilder &b,
                                 const bmodel::StagedNet &n, const bmodel::Net &index,
                                 const std::vector<uint8_t> &inner, uint64_t kilnBlobOffset) {
  uint64_t ctxSize = 0;
  for (const codegen::NetCode &s : n)
    ctxSize = std::max(ctxSize, s.neuronSize);
  std::vector<flatbuffers::Offset<sg::NetParameter>> stages;
  for (size_t i = 0; i < n.size(); ++i)
    stages.push_back(stage(b, n[i], i ? *index.stages()->Get(i - 1) : index, inner,
                           kilnBlobOffset, ctxSize));
  return sg::CreateNetDirect(b, n.front().name.c_str(), nullptr, nullptr, &stages, 0,
                             /*addr_mode=*/0);
}
} // namespace

llvm::Expected<std::vector<uint8_t>>
kiln::bmodel::serializeSophgo(const std::vector<StagedNet> &nets) {
  for (const StagedNet &staged : nets)
    for (const codegen::NetCode &n : staged)
      for (const codegen::GroupCode &g : n.groups)
        if (g.bmTiu.empty() || g.bmGdma.empty())
          return llvm::createStringError(
              "container: sophgo: layer group " + std::to_string(g.id) + " of net '" +
              n.name + "' has no BM1684X command streams (Sophgo's container needs isa: "
              "bm1684x)");
  // The blob: kiln's own container of the same nets.
  std::vector<uint8_t> inner = serialize(nets);
  kiln_bmodel_header kilnHeader;
  std::memcpy(&kilnHeader, inner.data(), sizeof kilnHeader);
  const bmodel::Model *index = bmodel::GetModel(inner.data() + kilnHeader.flatbuffer_offset);

  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<sg::Net>> netOffsets;
  uint64_t neuronSize = 0;
  for (size_t i = 0; i < nets.size(); ++i) {
    netOffsets.push_back(
        net(b, nets[i], *index->nets()->Get(i), inner, kilnHeader.blob_offset));
    for (const codegen::NetCode &n : nets[i])
      neuronSize = std::max(neuronSize, n.neuronSize);
  }
  std::string version = std::string("2.2+") + kCompilerVersion;
  auto model = sg::CreateModelDirect(b, "B", version.c_str(), buildTime().c_str(), "BM1684X",
                                     &netOffsets, neuronSize, 0, /*device_num=*/1);
  b.Finish(model);

  // Zeros after the FlatBuffer (readers ignore them) align the blob.
  uint64_t blobOffset = (sizeof(kiln_sophgo_header) + b.GetSize() + KILN_SOPHGO_BLOB_ALIGN - 1) /
                        KILN_SOPHGO_BLOB_ALIGN * KILN_SOPHGO_BLOB_ALIGN;
  kiln_sophgo_header header{};
  header.magic = KILN_SOPHGO_MAGIC;
  header.header_size = sizeof(header);
  header.flatbuffers_size = static_cast<uint32_t>(blobOffset - sizeof(header));
  header.binary_size_lo = static_cast<uint32_t>(inner.size());
  header.binary_size_hi = static_cast<uint32_t>(uint64_t(inner.size()) >> 32);
  std::vector<uint8_t> file(blobOffset + inner.size(), 0);
  std::memcpy(file.data(), &header, sizeof(header));
  std::memcpy(file.data() + sizeof(header), b.GetBufferPointer(), b.GetSize());
  std::memcpy(file.data() + blobOffset, inner.data(), inner.size());
  return file;
}
